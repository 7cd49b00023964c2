/* model_idle.c — where the GPU's idle time went (issue 21 item 3): for each idle gap, what the CPU
 * was doing. The evidence: the wrapped calls of every thread (in_*_ns of the gap, model_time.c),
 * the waits of collective threads (gloo's run loops hand gradients over with a blocking call and
 * take the result back with a copy: in between the thread is inside the collective), a batch
 * copied to the GPU during the gap (a host-to-device copy asked for by a thread that runs no
 * collective), JIT and module-loading calls, the phase the gap falls in (gap->phase, set before
 * md_idle_finish by the phases' part), and DataLoader workers (other processes of the run:
 * model_ranks.c sets dataloader_workers and assigns again). */
#include "model_idle.h"

#include "model_phases.h"
#include "model_sample.h"

/* Threads whose name says they run collectives: PyTorch names gloo's "pt_gloo_runloop"; NCCL and
 * c10d helpers carry their library's name. */
static int collective_thread_name(const char *name)
{
    return name && (md_contains_ci(name, "gloo") || md_contains_ci(name, "nccl") ||
                    md_contains_ci(name, "c10d") || md_contains_ci(name, "processgroup"));
}

/* Pass 1: GT_REC_THREAD names a thread (strings precede their use, so the name is known). */
void md_idle_on_thread(pass_state *s, const gt_record *r)
{
    gt_rec_thread t;
    gt_body_copy(&t, sizeof t, r);
    if (!collective_thread_name(gt_reader_string(s->reader, t.name_id)))
        return;
    for (size_t i = 0; i < s->n_coll_tids; i++)
        if (s->coll_tid[i] == t.tid)
            return;
    if (s->n_coll_tids < MAX_COLL_TIDS)
        s->coll_tid[s->n_coll_tids++] = t.tid;
}

/* arrive 0: not known yet (a receiver's, from its handover: collectives_handovers) */
static void add_collective(gt_proc *p, pass_state *s, uint64_t arrive, uint64_t done, int kind,
                           uint64_t stream)
{
    if (done < arrive)
        return;
    if (p->n_collectives >= COLLECTIVES_MAX) {
        p->collectives_dropped++; /* shown by the summary: none lost silently */
        return;
    }
    gt_grow((void **)&p->collectives, &s->cap_collectives, p->n_collectives,
            sizeof *p->collectives);
    p->collectives[p->n_collectives++] = (gt_collective){arrive, done, kind, 0, stream, 0};
}

/* A call of a thread that runs no collective, on a stream other than the legacy default: it may
 * hand data to a collective on that stream (collectives_handovers keeps those that do). */
static void note_handover(pass_state *s, const gt_api_common *c)
{
    if (!s->n_coll_tids || !c->stream)
        return;
    gt_grow((void **)&s->handovers, &s->cap_handovers, s->n_handovers, sizeof *s->handovers);
    s->handovers[s->n_handovers][0] = c->t_end_ns;
    s->handovers[s->n_handovers++][1] = c->stream;
}

static int is_h2d(const gt_record *r)
{
    gt_rec_api_memcpy m;
    gt_body_copy(&m, sizeof m, r);
    return m.direction == GT_DIR_H2D ||
           (m.direction == GT_DIR_DEFAULT && m.dst_kind == GT_MEM_DEVICE &&
            m.src_kind != GT_MEM_DEVICE);
}

/* A batch copied to the GPU: a host-to-device copy call of a thread that runs no collective
 * (gloo's threads copy the reduced gradients back the same way) made during a gap. Marked on the
 * gap as pass 2 reads it (the gaps are made in pass 1): a list of every such call grew with the
 * run. */
static void note_h2d_call(gt_proc *p, const gt_record *r, const gt_api_common *c)
{
    gt_rec_api_memcpy m;
    if (r->kind != GT_REC_API_MEMCPY || !p->n_gaps)
        return;
    gt_body_copy(&m, sizeof m, r);
    if (m.direction != GT_DIR_H2D && !(m.direction == GT_DIR_DEFAULT &&
                                       m.dst_kind == GT_MEM_DEVICE && m.src_kind != GT_MEM_DEVICE))
        return;
    uint64_t t = c->t_begin_ns;
    for (size_t i = md_gap_lower(p, t ? t - 1 : 0); i < p->n_gaps && p->gaps[i].start_ns <= t; i++)
        p->gaps[i].ends_with_h2d = 1; /* a gap holding t: start <= t <= end */
}

/* The part of a JIT call inside each gap (gaps are sorted and disjoint). */
static void jit_to_gaps(gt_proc *p, uint64_t a, uint64_t b)
{
    for (size_t i = md_gap_lower(p, a); i < p->n_gaps && p->gaps[i].start_ns < b; i++) {
        uint64_t x = a > p->gaps[i].start_ns ? a : p->gaps[i].start_ns;
        uint64_t y = b < p->gaps[i].end_ns ? b : p->gaps[i].end_ns;
        if (y > x)
            gt_gap_add(&p->gaps[i], GT_GAP_JIT, y - x);
    }
}

/* Pass 2, a wrapped call: on a collective thread, a blocking call (a stream sync, a synchronous
 * copy) followed by a copy brackets the collective; any other call in between means the wait was
 * something else. A host-to-device copy after neither a blocking call nor a copy on its stream
 * (a collective's stream is its own) takes back the result of a collective the rank only received
 * (nothing of its own to wait for): its arrival is the handover. Records of one thread come in
 * their order. */
void md_idle_on_api(gt_proc *p, pass_state *s, const gt_record *r, const gt_api_common *c,
                    int blocking)
{
    if (md_api_is_jit(c->func) && c->t_end_ns > c->t_begin_ns)
        jit_to_gaps(p, c->t_begin_ns, c->t_end_ns);
    size_t i = 0;
    while (i < s->n_coll_tids && s->coll_tid[i] != r->tid)
        i++;
    if (i == s->n_coll_tids) {
        note_h2d_call(p, r, c);
        note_handover(s, c);
        return;
    }
    int copy = r->kind == GT_REC_API_MEMCPY;
    int same = s->coll_copying[i] && s->coll_copy_stream[i] == c->stream; /* one result's pieces */
    if (copy && s->coll_pending[i])
        add_collective(p, s, s->coll_pending[i], c->t_begin_ns, GT_COLL_CPU, c->stream);
    else if (copy && !same && c->stream && is_h2d(r))
        add_collective(p, s, 0, c->t_begin_ns, GT_COLL_CPU, c->stream);
    s->coll_pending[i] = blocking ? c->t_end_ns : 0;
    s->coll_copying[i] = (uint8_t)copy;
    s->coll_copy_stream[i] = c->stream;
}

void md_idle_on_kernel(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k, int is_nccl)
{
    if (is_nccl)
        add_collective(p, s, k->start_ns, k->end_ns, GT_COLL_NCCL, 0);
}

static void staging_add(pass_state *s, uint64_t a, uint64_t b)
{
    gt_grow((void **)&s->staging, &s->cap_staging, s->n_staging, sizeof *s->staging);
    s->staging[s->n_staging][0] = a;
    s->staging[s->n_staging++][1] = b;
}

/* The copy in progress is over: after a device-to-host copy's last piece the CPU still copies
 * that piece out of the bounce buffer, about as long as between pieces. */
static void staging_close(pass_state *s)
{
    if (s->staging_pieces >= 2 && s->staging_d2h)
        staging_add(s, s->staging_end,
                    s->staging_end + s->staging_between / (s->staging_pieces - 1));
    s->staging_corr = 0;
    s->staging_pieces = 0;
    s->staging_between = 0;
}

/* A pageable copy is staged by the CPU through the driver's bounce buffer, a piece at a time:
 * between two GPU records of one copy (one correlation id) the CPU was copying that copy's data,
 * whether or not a wrapper saw the call. */
static void note_staging(pass_state *s, const gt_rec_gpu_memcpy *m)
{
    int pageable = m->src_kind == GT_MEM_PAGEABLE || m->dst_kind == GT_MEM_PAGEABLE;
    if (pageable && m->corr_id && m->corr_id == s->staging_corr && m->start_ns > s->staging_end) {
        staging_add(s, s->staging_end, m->start_ns);
        s->staging_between += m->start_ns - s->staging_end;
        s->staging_pieces++;
        s->staging_end = m->end_ns;
        return;
    }
    staging_close(s);
    if (!pageable || !m->corr_id)
        return;
    s->staging_corr = m->corr_id;
    s->staging_pieces = 1;
    s->staging_d2h = m->copy_kind == 2; /* CUPTI_ACTIVITY_MEMCPY_KIND_DTOH */
    s->staging_end = m->end_ns;
}

/* A gap ends with a batch when a host-to-device copy starts within this of its end. */
#define H2D_AT_END_NS 100000ull

void md_idle_on_gpu_memcpy(gt_proc *p, pass_state *s, const gt_rec_gpu_memcpy *m)
{
    note_staging(s, m);
    /* without recorded calls, the GPU work ending the gap is a host-to-device copy */
    if (m->copy_kind != 1 /* CUPTI_ACTIVITY_MEMCPY_KIND_HTOD */ || p->cpu_api_records)
        return;
    uint64_t t = m->start_ns, lo = t > H2D_AT_END_NS ? t - H2D_AT_END_NS : 0;
    for (size_t i = md_gap_lower(p, lo ? lo - 1 : 0); i < p->n_gaps && p->gaps[i].end_ns <= t; i++)
        p->gaps[i].ends_with_h2d = 1; /* end <= t <= end + H2D_AT_END_NS */
}

static int cmp_collective(const void *a, const void *b)
{
    const gt_collective *x = a, *y = b;
    return x->done_ns < y->done_ns ? -1 : x->done_ns > y->done_ns;
}

/* The time of each gap that windows (sorted by start, possibly overlapping: one per bucket)
 * cover, each instant counted once, added to the field at `field` of every gap. */
static void gaps_cover(gt_proc *p, const uint64_t (*w)[2], size_t n, int part)
{
    size_t j = 0;
    for (size_t g = 0; g < p->n_gaps; g++) {
        gt_gap *gp = &p->gaps[g];
        uint64_t covered_to = gp->start_ns;
        while (j < n && w[j][1] <= gp->start_ns)
            j++;
        for (size_t k = j; k < n && w[k][0] < gp->end_ns; k++) {
            uint64_t lo = w[k][0] > covered_to ? w[k][0] : covered_to;
            uint64_t hi = w[k][1] < gp->end_ns ? w[k][1] : gp->end_ns;
            if (hi > lo) {
                gt_gap_add(gp, part, hi - lo);
                covered_to = hi;
            }
        }
    }
}

static int cmp_window(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The CPU collectives' windows, whole (waiting 0) or their part before the last rank arrived
 * (the whole of one not matched across ranks). */
static size_t collective_spans(const gt_proc *p, uint64_t (*w)[2], int waiting)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_collectives; i++) {
        const gt_collective *c = &p->collectives[i];
        if (c->kind != GT_COLL_CPU)
            continue;
        uint64_t to = c->done_ns;
        if (waiting && c->last_arrive_ns && c->last_arrive_ns < to)
            to = c->last_arrive_ns;
        if (to > c->arrive_ns) {
            w[n][0] = c->arrive_ns;
            w[n++][1] = to;
        }
    }
    qsort(w, n, sizeof *w, cmp_window);
    return n;
}

/* collective_ns and collective_transfer_ns of every gap, again from zero (model_ranks.c calls it
 * once the collectives are matched across ranks). An instant in which one collective thread
 * waits for a later rank while another moves an earlier collective's data is waiting: the
 * step cannot end before that rank arrives (a hook's sleep on one rank: the others reduce the
 * first bucket while they wait for the second). The transfer is the rest. */
void md_idle_collectives(gt_proc *p)
{
    for (size_t g = 0; g < p->n_gaps; g++)
        p->gaps[g].part[GT_GAP_COLLECTIVE] = p->gaps[g].part[GT_GAP_TRANSFER] = 0;
    uint64_t(*w)[2] = gt_xrealloc(NULL, (p->n_collectives + 1) * sizeof *w);
    size_t n = collective_spans(p, w, 0);
    gaps_cover(p, (const uint64_t(*)[2])w, n, GT_GAP_COLLECTIVE);
    n = collective_spans(p, w, 1);
    gaps_cover(p, (const uint64_t(*)[2])w, n, GT_GAP_TRANSFER);
    for (size_t g = 0; g < p->n_gaps; g++) { /* that part held the waiting part until here */
        gt_gap *gp = &p->gaps[g];
        uint64_t waiting = gt_gap_ns(gp, GT_GAP_TRANSFER), coll = gt_gap_ns(gp, GT_GAP_COLLECTIVE);
        gt_gap_set(gp, GT_GAP_TRANSFER, coll > waiting ? coll - waiting : 0);
    }
    free(w);
}

static void gaps_staging(gt_proc *p, pass_state *s)
{
    staging_close(s);
    if (!s->n_staging)
        return;
    qsort(s->staging, s->n_staging, sizeof *s->staging, cmp_window);
    gaps_cover(p, (const uint64_t(*)[2])s->staging, s->n_staging, GT_GAP_STAGING);
}

/* Launch-latency gaps (< GT_GAP_MIN_NS, not kept as gaps) inside the steady window, outside JIT
 * compilation and autotuning (a sweep of trial kernels leaves thousands of them). */
static void steady_small_gaps(gt_proc *p, const pass_state *s)
{
    p->steady_small_gap_ns = 0;
    for (size_t i = 1; i < s->n_iv; i++)
        if (s->iv[i][0] - s->iv[i - 1][1] < GT_GAP_MIN_NS)
            p->steady_small_gap_ns +=
                md_steady_outside_phases(p, s->iv[i - 1][1], s->iv[i][0], NULL);
    uint64_t merged_ns, merged_gaps; /* merged into busy intervals: short gaps too */
    md_merged_in_steady(p, &s->merged, &merged_ns, &merged_gaps);
    p->steady_small_gap_ns += merged_ns;
    p->steady_small_gap_ns = md_steady_scaled(p, p->steady_small_gap_ns);
}

/* The last handover on `stream` in (after, by], 0 none (handovers sorted by time). */
static uint64_t last_handover(const pass_state *s, uint64_t stream, uint64_t after, uint64_t by)
{
    size_t lo = 0, hi = s->n_handovers;
    while (lo < hi) { /* the first one after `by` */
        size_t mid = (lo + hi) / 2;
        if (s->handovers[mid][0] <= by)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0 && s->handovers[i][0] > after;)
        if (s->handovers[i][1] == stream)
            return s->handovers[i][0];
    return 0;
}

/* Each CPU collective's handover: the program's last call on its stream before it was done and
 * after the previous collective on that stream was (a stream serves one collective at a time;
 * PyTorch's gloo takes them from a pool in turn). A receiver's collective arrives then; one
 * without a handover is left out (its arrival is unknown). Collectives sorted by their end. */
static void collectives_handovers(gt_proc *p, pass_state *s)
{
    if (s->n_handovers)
        qsort(s->handovers, s->n_handovers, sizeof *s->handovers, cmp_window);
    gt_u64map last = {0}; /* stream -> 1 + the index of the last collective on it */
    size_t kept = 0;
    for (size_t i = 0; i < p->n_collectives; i++) {
        gt_collective c = p->collectives[i];
        if (c.kind == GT_COLL_CPU && c.stream) {
            uint32_t j = gt_map_get(&last, c.stream);
            uint64_t after = j != UINT32_MAX ? p->collectives[j - 1].done_ns : 0;
            c.handover_ns = last_handover(s, c.stream, after, c.done_ns);
            if (!c.arrive_ns && c.handover_ns)
                c.arrive_ns = c.handover_ns;
        }
        if (!c.arrive_ns)
            continue;
        p->collectives[kept++] = c;
        if (c.kind == GT_COLL_CPU && c.stream)
            gt_map_put(&last, c.stream, (uint32_t)kept);
    }
    p->n_collectives = kept;
    gt_map_free(&last);
}

/* After pass 2 and the steady window: the evidence each gap needs, then the causes as if the
 * process had no DataLoader workers (gt_run_cross_process assigns again when it has). */
void md_idle_finish(gt_proc *p, pass_state *s)
{
    if (p->n_collectives)
        qsort(p->collectives, p->n_collectives, sizeof *p->collectives, cmp_collective);
    collectives_handovers(p, s);
    md_idle_collectives(p);
    gaps_staging(p, s);
    steady_small_gaps(p, s);
    md_idle_assign(p);
}

/* What the CPU did in the part of a gap where no thread was in a CUDA call or a collective. */
static int cause_without_calls(const gt_proc *p, const gt_gap *g)
{
    if (g->phase == GT_PHASE_COMPILE)
        return GT_IDLE_COMPILE;
    if (g->phase == GT_PHASE_JIT)
        return GT_IDLE_JIT;
    if (g->phase == GT_PHASE_AUTOTUNE) /* cuDNN building and timing candidates: a library call */
        return GT_IDLE_CUDA_CALL;
    if (g->ends_with_h2d || p->dataloader_workers > 0)
        return GT_IDLE_DATA_LOADING;
    if (p->cpu_api_records || p->gpu_api_records)
        return GT_IDLE_HOST_WORK;
    return GT_IDLE_UNKNOWN;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* One gap's time split by cause: collective first (a thread blocked while a collective thread
 * waits is waiting for the collective; after the last rank arrived it is the transfer), then
 * CUDA calls (copies — and a pageable copy's staging seen only between its GPU records — and
 * JIT and module loading calls apart: the time is theirs, never data loading's), the rest by
 * cause_without_calls. */
static void gap_split(const gt_proc *p, const gt_gap *g, uint64_t part[GT_IDLE_CAUSE_COUNT])
{
    uint64_t len = g->end_ns - g->start_ns;
    uint64_t copy = md_gap_copy_ns(g);
    uint64_t calls = gt_gap_ns(g, GT_GAP_SYNC) + copy + gt_gap_ns(g, GT_GAP_LAUNCH) +
                     gt_gap_ns(g, GT_GAP_ALLOC) + gt_gap_ns(g, GT_GAP_OTHER_API);
    uint64_t coll = min_u64(gt_gap_ns(g, GT_GAP_COLLECTIVE), len);
    uint64_t transfer = min_u64(gt_gap_ns(g, GT_GAP_TRANSFER), coll);
    calls = min_u64(calls, len - coll);
    uint64_t jit = min_u64(gt_gap_ns(g, GT_GAP_JIT), calls), rest = calls - jit;
    copy = min_u64(copy, rest); /* the calls' time was capped: copies first */
    memset(part, 0, GT_IDLE_CAUSE_COUNT * sizeof *part);
    part[GT_IDLE_COLLECTIVE] = coll - transfer;
    part[GT_IDLE_COLLECTIVE_TRANSFER] = transfer;
    part[GT_IDLE_COPY] = copy;
    part[GT_IDLE_CUDA_CALL] = rest - copy;
    part[g->phase == GT_PHASE_COMPILE ? GT_IDLE_COMPILE : GT_IDLE_JIT] = jit;
    part[cause_without_calls(p, g)] += len - coll - calls;
}

/* Fill gap->cause, idle_cause_ns and steady_idle_cause_ns from the gaps' evidence (again from
 * zero each time: the run-level pass calls it once the workers are known). */
void md_idle_assign(gt_proc *p)
{
    memset(p->idle_cause_ns, 0, sizeof p->idle_cause_ns);
    memset(p->steady_idle_cause_ns, 0, sizeof p->steady_idle_cause_ns);
    p->steady_after_sync_nocall_ns = 0;
    for (size_t i = 0; i < p->n_gaps; i++) {
        gt_gap *g = &p->gaps[i];
        uint64_t part[GT_IDLE_CAUSE_COUNT], len = g->end_ns - g->start_ns;
        gap_split(p, g, part);
        uint64_t ov = md_steady_outside_phases(p, g->start_ns, g->end_ns, NULL);
        g->cause = 0;
        for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++) {
            if (part[c] > part[g->cause])
                g->cause = c;
            p->idle_cause_ns[c] += part[c];
            if (ov && len)
                p->steady_idle_cause_ns[c] +=
                    (uint64_t)((double)part[c] * (double)ov / (double)len);
        }
        uint64_t nocall = len - part[GT_IDLE_COLLECTIVE] - part[GT_IDLE_COLLECTIVE_TRANSFER] -
                          part[GT_IDLE_CUDA_CALL] - part[GT_IDLE_COPY];
        /* compile and autotuning time is reported by phase, not as the steady state's idle */
        int named_phase = gt_phase_is_named_cost(g->phase);
        if (ov && g->after_sync && len >= GT_BIG_GAP_NS && !named_phase)
            p->steady_after_sync_nocall_ns += (uint64_t)((double)nocall * (double)ov / (double)len);
    }
    if (p->gpu_sampled) { /* measured in the steady steps inside windows: the whole window */
        for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
            p->steady_idle_cause_ns[c] = md_steady_scaled(p, p->steady_idle_cause_ns[c]);
        p->steady_after_sync_nocall_ns = md_steady_scaled(p, p->steady_after_sync_nocall_ns);
    }
    /* launch latency: the CPU was launching (or, with no CPU record, nobody can tell) */
    int small = p->cpu_api_records || p->gpu_api_records ? GT_IDLE_CUDA_CALL : GT_IDLE_UNKNOWN;
    p->idle_cause_ns[small] += p->small_gap_ns;
    p->steady_idle_cause_ns[small] += p->steady_small_gap_ns;
}

const char *gt_idle_cause_key(int cause)
{
    static const char *const keys[GT_IDLE_CAUSE_COUNT] = {
        "cuda_call",           "copy",         "jit",       "compile", "collective",
        "collective_transfer", "data_loading", "host_work", "unknown"};
    return cause >= 0 && cause < GT_IDLE_CAUSE_COUNT ? keys[cause] : "?";
}

const char *gt_idle_cause_name(int cause)
{
    static const char *const names[GT_IDLE_CAUSE_COUNT] = {"in a CUDA call",
                                                           "in a copy",
                                                           "JIT compilation or module loading",
                                                           "compilation in the process",
                                                           "waiting in a collective",
                                                           "in a collective, moving data",
                                                           "data loading",
                                                           "host work without CUDA calls",
                                                           "unknown"};
    return cause >= 0 && cause < GT_IDLE_CAUSE_COUNT ? names[cause] : "?";
}
