/* model_um.c — unified memory (issue 30): managed allocations, prefetches and advice from the
 * calls; page faults, migrations, thrashing and throttling from CUPTI's counters (GT_REC_GPU_UM);
 * and the stall: a kernel that touches managed memory the host holds waits while the driver
 * services the GPU page fault and migrates the pages on demand. That wait is the union of the
 * faults' service and the on-demand host-to-device migrations (not the program's own prefetches),
 * counted where the GPU was busy (pass 1's busy intervals: kernels, copies, sets), over the whole
 * run and in the steady window. */
#include "model_um.h"

#define UM_IV_MAX (1u << 20) /* stall intervals kept before they are merged */

static void um_merge(pass_state *s)
{
    s->n_um_iv = md_merge_intervals(s->um_iv, s->n_um_iv, 0, NULL);
}

static void stall_add(pass_state *s, uint64_t a, uint64_t b)
{
    if (!a || b <= a)
        return;
    if (s->n_um_iv >= UM_IV_MAX) /* overlapping faults merge into few; memory stays bounded */
        um_merge(s);
    if (s->n_um_iv >= UM_IV_MAX)
        return;
    gt_grow((void **)&s->um_iv, &s->cap_um_iv, s->n_um_iv, sizeof s->um_iv[0]);
    s->um_iv[s->n_um_iv][0] = a;
    s->um_iv[s->n_um_iv][1] = b;
    s->n_um_iv++;
}

static void on_migration(gt_um_stats *u, pass_state *s, const gt_rec_gpu_um *m)
{
    int dir = m->um_kind == GT_UM_DTOH;
    u->migrations[dir]++;
    u->migration_bytes[dir] += m->value;
    if (m->end_ns > m->start_ns)
        u->migration_ns[dir] += m->end_ns - m->start_ns;
    if (m->flags == GT_UM_CAUSE_USER)
        u->user_bytes[dir] += m->value;
    else if (m->flags == GT_UM_CAUSE_EVICTION)
        u->evicted_bytes += m->value;
    else
        u->demand_bytes[dir] += m->value;
    /* a kernel waits for what it faulted over, not for a prefetch or an eviction */
    if (!dir && m->flags != GT_UM_CAUSE_USER && m->flags != GT_UM_CAUSE_EVICTION)
        stall_add(s, m->start_ns, m->end_ns);
}

void md_um_on_gpu(gt_proc *p, pass_state *s, const gt_record *r)
{
    gt_rec_gpu_um m;
    gt_body_copy(&m, sizeof m, r);
    gt_um_stats *u = &p->um;
    u->records++;
    md_note_time(p, m.start_ns, m.end_ns);
    switch (m.um_kind) {
    case GT_UM_HTOD:
    case GT_UM_DTOH:
        on_migration(u, s, &m);
        break;
    case GT_UM_CPU_FAULT:
        u->cpu_faults++;
        break;
    case GT_UM_GPU_FAULT:
        u->gpu_faults++;
        u->gpu_fault_groups += m.value;
        if (m.end_ns > m.start_ns)
            u->gpu_fault_ns += m.end_ns - m.start_ns;
        if (!u->first_fault_ns || m.start_ns < u->first_fault_ns)
            u->first_fault_ns = m.start_ns;
        stall_add(s, m.start_ns, m.end_ns);
        if (s->n_um_fault_t < UM_IV_MAX) {
            gt_grow((void **)&s->um_fault_t, &s->cap_um_fault_t, s->n_um_fault_t,
                    sizeof *s->um_fault_t);
            s->um_fault_t[s->n_um_fault_t++] = m.start_ns;
        }
        break;
    case GT_UM_THRASHING:
        u->thrashing++;
        break;
    case GT_UM_THROTTLING:
        u->throttling++;
        if (m.end_ns > m.start_ns)
            u->throttling_ns += m.end_ns - m.start_ns;
        break;
    case GT_UM_REMOTE_MAP:
        u->remote_maps++;
        break;
    case GT_UM_DTOD:
        u->dtod_bytes += m.value;
        break;
    default:
        break;
    }
}

int md_um_is_prefetch(uint32_t func)
{
    return func == GT_FN_cudaMemPrefetchAsync || func == GT_FN_cudaMemPrefetchBatchAsync;
}

/* cudaMallocManaged (a wrapper's, or a static runtime's seen by CUPTI), cudaMemPrefetchAsync
 * (recorded as a copy of managed memory), cudaMemAdvise. */
void md_um_on_api(gt_proc *p, const gt_record *r)
{
    gt_um_stats *u = &p->um;
    if (r->kind == GT_REC_API_ALLOC) {
        gt_rec_api_alloc a;
        gt_body_copy(&a, sizeof a, r);
        if (a.alloc_kind != GT_ALLOC_MANAGED || a.is_free || a.c.result)
            return;
        if (!u->managed_allocs)
            u->first_alloc_stack = a.c.stack_id;
        u->managed_allocs++;
        u->managed_bytes += a.bytes;
        return;
    }
    gt_api_common c;
    gt_body_copy(&c, sizeof c, r);
    if (c.func == GT_FN_cudaMemAdvise) {
        u->advise_calls++;
    } else if ((c.func == GT_FN_cudaMemPrefetchAsync ||
                c.func == GT_FN_cudaMemPrefetchBatchAsync) &&
               r->kind == GT_REC_API_MEMCPY) {
        gt_rec_api_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        u->prefetch_calls++;
        u->prefetch_bytes += m.bytes;
    }
}

/* The part of the stall intervals inside the busy intervals and [lo, hi] (both sorted and
 * disjoint): one walk over the two lists. */
static uint64_t overlap(const pass_state *s, uint64_t lo, uint64_t hi)
{
    uint64_t sum = 0;
    size_t j = 0;
    for (size_t i = 0; i < s->n_um_iv; i++) {
        uint64_t a = s->um_iv[i][0] > lo ? s->um_iv[i][0] : lo;
        uint64_t b = s->um_iv[i][1] < hi ? s->um_iv[i][1] : hi;
        while (j < s->n_iv && s->iv[j][1] <= a)
            j++;
        for (size_t k = j; k < s->n_iv && s->iv[k][0] < b; k++) {
            uint64_t x = a > s->iv[k][0] ? a : s->iv[k][0];
            uint64_t y = b < s->iv[k][1] ? b : s->iv[k][1];
            if (y > x)
                sum += y - x;
        }
    }
    return sum;
}

/* After pass 1's busy intervals and the steady window [lo, hi] are known. */
void md_um_finish(gt_proc *p, pass_state *s, uint64_t lo, uint64_t hi)
{
    gt_um_stats *u = &p->um;
    u->counters_on = (p->hdr.flags & GT_HDR_UM_COUNTERS) != 0;
    u->counters_refused = (p->hdr.flags & GT_HDR_UM_REFUSED) != 0;
    um_merge(s);
    u->stall_ns = overlap(s, 0, UINT64_MAX);
    u->steady_stall_ns = hi > lo ? overlap(s, lo, hi) : 0;
    for (size_t i = 0; i < s->n_um_fault_t; i++)
        u->steady_gpu_faults += s->um_fault_t[i] >= lo && s->um_fault_t[i] < hi;
}
