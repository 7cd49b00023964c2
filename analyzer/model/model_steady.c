/* model_steady.c — the steady window and its figures: where it lies (the warm-up steps before
 * it, from the steps' times), what pass 2 logs for it (steady_ev, in file order: the window is
 * known only after pass 1), what it counts per step (syncs, copies, allocations, kernels), and
 * the idle gaps' totals for the whole run and for the steady window (less what JIT compilation,
 * compilation or autotuning explain, model_phases.c; with GPU sampling, over its measured part,
 * model_sample.c; a small gap after a blocking call is the wait's, not launch overhead). */
#include "model_steady.h"

#include "model_phases.h"
#include "model_sample.h"
#include "model_um.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void md_analyse_steps(gt_proc *p)
{
    size_t n = p->n_steps;
    if (n < 2)
        return;
    double *d = gt_xrealloc(NULL, n * sizeof *d), *tail = gt_xrealloc(NULL, n * sizeof *tail);
    for (size_t i = 0; i < n; i++)
        d[i] = (double)(p->steps[i].end_ns - p->steps[i].start_ns) / 1e6;
    size_t h = n / 2;
    memcpy(tail, d + h, (n - h) * sizeof *d);
    double ref = median(tail, n - h);
    /* warm-up: leading steps clearly slower than the steady reference */
    size_t w = 0;
    while (w < n - 1 && d[w] > ref * 1.5 && w < n / 2 + 1)
        w++;
    p->warmup_steps = w;
    p->warmup_ms_total = 0;
    for (size_t i = 0; i < w; i++)
        p->warmup_ms_total += d[i];
    size_t ns = n - w;
    memcpy(tail, d + w, ns * sizeof *d);
    double sum = 0, mn = tail[0];
    for (size_t i = 0; i < ns; i++) {
        sum += tail[i];
        if (tail[i] < mn)
            mn = tail[i];
    }
    p->step_ms_mean_steady = sum / (double)ns;
    p->step_ms_min = mn;
    p->step_ms_median = median(tail, ns);
    p->steady_start_ns = p->steps[w].start_ns;
    p->steady_end_ns = p->steps[n - 1].end_ns;
    free(d);
    free(tail);
}

/* The busy interval that starts first after t (s->iv is sorted and merged), or n_iv. */
static size_t iv_after(const pass_state *s, uint64_t t)
{
    size_t lo = 0, hi = s->n_iv;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->iv[mid][0] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A blocking call returned at b: the idle gap between the busy intervals around b began while
 * the CPU waited (the queue drained because it waited), so a short one is the wait's (sync-stall),
 * not launch overhead. One bit per busy interval, the gap before it: the busy intervals are final
 * after pass 1 and capped, so this does not grow with the run (16 bytes a blocking call before, a
 * program that syncs after every kernel made millions of them a GB). */
void md_note_blocking(pass_state *s, uint64_t a, uint64_t b)
{
    if (b <= a)
        return;
    size_t k = iv_after(s, b);
    if (k == 0 || k >= s->n_iv || s->iv[k - 1][1] > b)
        return; /* before the first busy interval, after the last, or inside one */
    if (!s->gap_after_wait)
        s->gap_after_wait = gt_xcalloc(s->n_iv / 64 + 1, sizeof *s->gap_after_wait);
    s->gap_after_wait[k / 64] |= 1ull << k % 64;
}

/* Whether the gap before busy interval i began while a blocking call waited (md_note_blocking). */
static int small_gap_after_wait(const pass_state *s, size_t i)
{
    return s->gap_after_wait && s->gap_after_wait[i / 64] >> i % 64 & 1;
}

static int se_set(steady_ev *e, int kind, uint64_t t, uint64_t d, uint32_t site)
{
    *e = (steady_ev){.t = t, .d = d, .site = site, .kind = (uint8_t)kind};
    return 1;
}

/* The call site of a blocking call (sites were made in pass 1). */
static uint32_t steady_site(const pass_state *s, const gt_api_common *c)
{
    return gt_map_get(&s->site_by_key, ((uint64_t)c->func << 32) | c->stack_id);
}

static uint32_t kib(uint64_t bytes)
{
    uint64_t k = (bytes + 1023) / 1024;
    return k < UINT32_MAX ? (uint32_t)k : UINT32_MAX;
}

/* What the steady window counts of a record (see md_steady_count): 1 and *e, or 0 for nothing. */
static int steady_event(const gt_proc *p, const pass_state *s, const gt_record *r, steady_ev *e)
{
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        union {
            gt_api_common c;
            gt_rec_api_memcpy m;
            gt_rec_api_sync sync;
        } u;
        gt_body_copy(&u, sizeof u, r);
        uint64_t d = u.c.t_end_ns < u.c.t_begin_ns ? 0 : u.c.t_end_ns - u.c.t_begin_ns;
        if (r->kind == GT_REC_API_ALLOC) {
            return se_set(e, SE_ALLOC, u.c.t_begin_ns, d, UINT32_MAX);
        } else if (r->kind == GT_REC_API_LAUNCH) {
            return se_set(e, SE_LAUNCH, u.c.t_begin_ns, d, UINT32_MAX);
        } else if (r->kind == GT_REC_API_SYNC && md_sync_blocks(u.sync.sync_kind)) {
            return se_set(e, SE_SYNC, u.c.t_begin_ns, d, steady_site(s, &u.c));
        } else if (r->kind == GT_REC_API_MEMCPY && !md_um_is_prefetch(u.c.func)) {
            uint8_t hk = md_host_kind_of(u.m.direction, u.m.src_kind, u.m.dst_kind);
            int item = md_copy_is_item_like(&u.m, hk);
            if (hk == GT_MEM_PAGEABLE && !item &&
                (u.m.direction == GT_DIR_H2D || u.m.direction == GT_DIR_D2H))
                return se_set(
                    e, u.m.direction == GT_DIR_H2D ? SE_COPY_PAGEABLE_H2D : SE_COPY_PAGEABLE_D2H,
                    u.c.t_begin_ns, d, kib(u.m.bytes));
            else
                return se_set(e, item ? SE_COPY_ITEM : SE_COPY, u.c.t_begin_ns, d,
                              steady_site(s, &u.c));
        }
    } else if (r->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        uint32_t ki = gt_map_get(&s->kern_by_name, k.name_id);
        return se_set(e, SE_KERNEL, k.start_ns, k.end_ns - k.start_ns,
                      ki < p->n_kernels && p->kernels[ki].is_nccl);
    } else if (r->kind == GT_REC_GPU_MEMCPY) { /* pageable copies as the GPU ran them */
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        int h2d = m.copy_kind == 1 && m.src_kind == GT_MEM_PAGEABLE;
        int d2h = m.copy_kind == 2 && m.dst_kind == GT_MEM_PAGEABLE &&
                  m.bytes > GT_ITEM_COPY_MAX_BYTES; /* not a result read back */
        if ((h2d || d2h) && m.end_ns > m.start_ns)
            return se_set(e, h2d ? SE_GPU_PAGEABLE_H2D : SE_GPU_PAGEABLE_D2H, m.start_ns,
                          m.end_ns - m.start_ns, kib(m.bytes));
    } else if (r->kind == GT_REC_GPU_SYNC && p->syncs_from_cupti) {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4)
            return se_set(e, SE_CUPTI_SYNC, g.start_ns, g.end_ns - g.start_ns, UINT32_MAX);
    }
    return 0;
}

/* A wait at an autotuner's call site: the phases' evidence of autotuning (model_phases.c). */
static int autotuner_wait(const gt_proc *p, const steady_ev *e)
{
    return (e->kind == SE_SYNC || e->kind == SE_COPY_ITEM) && e->site < p->n_sync_sites &&
           p->sync_sites[e->site].in_autotuner;
}

/* Pass 2 logs what the steady window will count; past the log's limit only what the phases read
 * of it (the steady figures then come from a third read: md_steady_reread). */
void md_steady_record(gt_proc *p, pass_state *s, const gt_record *r)
{
    steady_ev e;
    if (!steady_event(p, s, r, &e) || (s->steady_reread && !autotuner_wait(p, &e)))
        return;
    gt_grow((void **)&s->sev, &s->cap_sev, s->n_sev, sizeof *s->sev);
    s->sev[s->n_sev++] = e;
}

static void steady_on_site(gt_proc *p, uint32_t site, uint64_t d)
{
    if (site >= p->n_sync_sites)
        return;
    p->sync_sites[site].steady_count++;
    p->sync_sites[site].steady_ns += d;
}

/* GPU sampling: what the GPU records gave over the steady steps inside windows, for the whole
 * steady window (model_sample.c). */
static void steady_count_scale(gt_proc *p, double cupti_sync_ms)
{
    double f = p->steady_gpu_steps > 0 ? p->steady_steps / p->steady_gpu_steps : 0;
    p->steady_kernels = md_steady_scaled(p, p->steady_kernels);
    p->steady_kernel_ns = md_steady_scaled(p, p->steady_kernel_ns);
    p->steady_short_kernels = md_steady_scaled(p, p->steady_short_kernels);
    p->steady_nccl_ms_per_step *= f;
    p->steady_sync_ms_per_step += cupti_sync_ms * (f - 1);
    p->steady_cupti_sync_count = md_steady_scaled(p, p->steady_cupti_sync_count);
    p->steady_cupti_sync_ns = md_steady_scaled(p, p->steady_cupti_sync_ns);
}

/* An event that belongs to JIT compilation or autotuning rather than the steady state: inside
 * those phases for most of its time, or a wait at an autotuner's call site. Its cost is the
 * phase's (the compilation and cudnn-benchmark advice), never a sync stall's as well. */
static int in_named_phase(const gt_proc *p, const steady_ev *e)
{
    if ((e->kind == SE_SYNC || e->kind == SE_COPY_ITEM || e->kind == SE_COPY) &&
        e->site < p->n_sync_sites && p->sync_sites[e->site].in_autotuner)
        return 1;
    if (!p->steady_named_phase_ns)
        return 0;
    uint64_t ov[GT_PHASE_COUNT], end = e->t + (e->d ? e->d : 1);
    md_phase_overlaps(p, e->t, end, ov);
    return 2 * (ov[GT_PHASE_JIT] + ov[GT_PHASE_COMPILE] + ov[GT_PHASE_AUTOTUNE]) > end - e->t;
}

/* Pageable copies: as the GPU ran them when CUPTI recorded copies (a static cudart's calls are
 * not seen), else as the calls took; a sampled trace's GPU records exist only in windows. */
static int pageable_from_gpu(const gt_proc *p)
{
    return p->copies_from_gpu && !p->gpu_sampled;
}

static void steady_pageable(gt_proc *p, int d2h, const steady_ev *e)
{
    p->steady_pageable_count[d2h]++;
    p->steady_pageable_ns[d2h] += e->d;
    p->steady_pageable_bytes[d2h] += (uint64_t)e->site * 1024;
}

/* One event of the steady window's figures, in file order. cupti_sync_ms: with GPU sampling,
 * CUPTI's syncs, scaled with the kernels after the last (steady_count_scale). */
static void steady_count_one(gt_proc *p, const steady_ev *e, uint64_t lo, uint64_t hi,
                             double *cupti_sync_ms)
{
    if (e->t < lo || e->t >= hi || in_named_phase(p, e))
        return;
    /* GPU records count only in the steady steps inside windows when sampled */
    if ((e->kind == SE_KERNEL || e->kind == SE_CUPTI_SYNC) && p->gpu_sampled &&
        !md_in_steady_gpu(p, e->t))
        return;
    double ms = (double)e->d / 1e6;
    switch (e->kind) {
    case SE_ALLOC:
        p->steady_alloc_calls++;
        p->steady_alloc_ns += (uint64_t)(ms * 1e6);
        break;
    case SE_SYNC:
        p->steady_sync_ms_per_step += ms;
        steady_on_site(p, e->site, e->d);
        break;
    case SE_COPY_PAGEABLE_H2D:
    case SE_COPY_PAGEABLE_D2H:
        p->steady_copy_ms_per_step += ms;
        if (!pageable_from_gpu(p))
            steady_pageable(p, e->kind == SE_COPY_PAGEABLE_D2H, e);
        break;
    case SE_GPU_PAGEABLE_H2D:
    case SE_GPU_PAGEABLE_D2H:
        if (pageable_from_gpu(p))
            steady_pageable(p, e->kind == SE_GPU_PAGEABLE_D2H, e);
        break;
    case SE_COPY:
    case SE_COPY_ITEM:
        p->steady_copy_ms_per_step += ms;
        if (e->kind == SE_COPY_ITEM) {
            p->steady_sync_ms_per_step += ms;
            steady_on_site(p, e->site, e->d);
        }
        break;
    case SE_LAUNCH:
        p->steady_launch_calls++;
        p->steady_launch_call_ns += e->d;
        break;
    case SE_KERNEL:
        p->steady_kernels++;
        p->steady_kernel_ns += (int64_t)e->d > 0 ? e->d : 0;
        if (e->d < GT_SHORT_KERNEL_NS)
            p->steady_short_kernels++;
        if (e->site && (int64_t)e->d > 0)
            p->steady_nccl_ms_per_step += ms;
        break;
    default: /* SE_CUPTI_SYNC */
        p->steady_sync_ms_per_step += ms;
        *cupti_sync_ms += ms;
        p->steady_cupti_sync_count++;
        p->steady_cupti_sync_ns += (int64_t)e->d > 0 ? e->d : 0;
        break;
    }
}

/* The steady window's figures from the log (what a third pass over the file counts:
 * md_steady_reread). */
void md_steady_count(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi)
{
    double cupti_sync_ms = 0;
    for (size_t i = 0; i < s->n_sev; i++)
        steady_count_one(p, &s->sev[i], lo, hi, &cupti_sync_ms);
    if (p->gpu_sampled)
        steady_count_scale(p, cupti_sync_ms);
}

/* Launch-latency gaps (under GT_GAP_MIN_NS, not kept as gaps) in which a blocking call returned:
 * the queue had drained and the GPU waited for the CPU's next launch. Small each time, but a
 * loop that waits every step pays it every step (sync_every_iter: 13 us of an 89 us step, the
 * program's own clock 8% slower than without the waits). Each gap once, in the steady window
 * outside JIT and autotuning; the larger gaps after a wait are in steady_after_sync_idle. */
static void after_sync_one(gt_proc *p, const pass_state *s, const steady_ev *e, uint64_t lo,
                           uint64_t hi, size_t *last)
{
    if ((e->kind != SE_SYNC && e->kind != SE_COPY_ITEM && e->kind != SE_CUPTI_SYNC) || e->t < lo ||
        e->t >= hi || in_named_phase(p, e))
        return;
    uint64_t end = e->t + e->d;
    size_t k = iv_after(s, end);
    if (k == 0 || k >= s->n_iv || k == *last || end < s->iv[k - 1][1])
        return; /* before the first work, after the last, counted, or the GPU still busy */
    uint64_t len = s->iv[k][0] - s->iv[k - 1][1];
    if (len < GT_GAP_MIN_NS) {
        p->steady_after_sync_small_ns += len;
        *last = k;
    }
}

void md_after_sync_small_gaps(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi)
{
    p->steady_after_sync_small_ns = 0;
    if (p->gpu_sampled || s->n_iv < 2)
        return;
    size_t last = SIZE_MAX;
    for (size_t i = 0; i < s->n_sev; i++)
        after_sync_one(p, s, &s->sev[i], lo, hi, &last);
}

int md_steady_reread(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi)
{
    gt_reader *r = NULL;
    char err[256];
    if (!p->path || gt_reader_open(p->path, &r, err, sizeof err) != GT_OPEN_OK) {
        if (r)
            gt_reader_close(r);
        return -1;
    }
    double cupti_sync_ms = 0;
    size_t last = SIZE_MAX;
    int small = !p->gpu_sampled && s->n_iv >= 2; /* as md_after_sync_small_gaps */
    p->steady_after_sync_small_ns = 0;
    gt_record rec;
    steady_ev e;
    while (gt_reader_next(r, &rec)) {
        if (!steady_event(p, s, &rec, &e))
            continue;
        steady_count_one(p, &e, lo, hi, &cupti_sync_ms);
        if (small)
            after_sync_one(p, s, &e, lo, hi, &last);
    }
    gt_reader_close(r);
    if (p->gpu_sampled)
        steady_count_scale(p, cupti_sync_ms);
    return 0;
}

/* x * num / den without overflow (a 19 s gap squared is beyond 64 bits). */
static uint64_t part_of(uint64_t x, uint64_t num, uint64_t den)
{
    return den ? (uint64_t)((unsigned __int128)x * num / den) : 0;
}

/* Idle-gap figures for the whole run and for the steady window. */
void md_gap_totals(gt_proc *p, pass_state *s, uint64_t lo, uint64_t hi)
{
    uint64_t steady_unexpl = 0, steady_after_sync = 0, steady_short = 0, steady_cpu = 0;
    uint64_t launch_gaps = 0; /* steady gaps holding launch idle */
    int cpu_seen = p->cpu_api_records || p->gpu_api_records;
    for (size_t i = 0; i < p->n_gaps; i++) {
        gt_gap *g = &p->gaps[i];
        uint64_t len = g->end_ns - g->start_ns;
        /* a pageable copy's staging between its GPU records is the copy's, call seen or not */
        uint64_t copy = md_gap_copy_ns(g);
        uint64_t sync = gt_gap_ns(g, GT_GAP_SYNC), launch = gt_gap_ns(g, GT_GAP_LAUNCH);
        uint64_t alloc = gt_gap_ns(g, GT_GAP_ALLOC), other_api = gt_gap_ns(g, GT_GAP_OTHER_API);
        uint64_t sum = sync + copy + launch + alloc + other_api;
        uint64_t unexpl = sum < len ? len - sum : 0;
        /* Launch-bound idle: a short gap not after a sync, less the time the CPU spent in calls
         * that are not launches. Without any CPU record only launch-latency gaps (< 20 us, below)
         * can be put down to launching. */
        uint64_t other = sync + copy + alloc + other_api + gt_gap_ns(g, GT_GAP_COLLECTIVE);
        uint64_t launch_part =
            (len < GT_BIG_GAP_NS && !g->after_sync && cpu_seen && other < len) ? len - other : 0;
        p->launch_idle_ns += launch_part;
        p->idle_sync_ns += sync;
        p->idle_copy_ns += gt_gap_ns(g, GT_GAP_COPY);
        p->idle_launch_ns += launch;
        p->idle_alloc_ns += alloc;
        p->idle_other_ns += other_api;
        p->idle_unexplained_ns += unexpl;
        if (g->after_sync)
            p->after_sync_idle_ns += len;
        /* the part of the gap in the steady window, less what lies in JIT compilation or
         * autotuning there (model_phases.c): that idle time is reported by its phase's name */
        uint64_t in_phase[GT_PHASE_COUNT], part[GT_PHASE_COUNT];
        md_phase_overlaps(p, g->start_ns, g->end_ns, in_phase);
        for (int k = 0; k < GT_PHASE_COUNT && len; k++)
            p->phase_idle_ns[k] += part_of(unexpl, in_phase[k], len);
        uint64_t ov = md_steady_outside_phases(p, g->start_ns, g->end_ns, part);
        uint64_t named = 0;
        for (int k = 0; k < GT_PHASE_COUNT; k++)
            named += gt_phase_is_named_cost(k) ? part[k] : 0;
        if (ov && len) {
            if (len >= GT_BIG_GAP_NS && !g->after_sync) {
                steady_unexpl += part_of(unexpl, ov, len);
                p->steady_big_gaps++;
                uint64_t shown = named ? part_of(unexpl, ov, len) : unexpl;
                if (shown > p->largest_gap_ns) {
                    p->largest_gap_ns = shown;
                    p->largest_gap_start_ns = g->start_ns;
                }
            }
            steady_short += part_of(launch_part, ov, len);
            launch_gaps += launch_part > 0;
            if (g->after_sync)
                steady_after_sync += ov;
            steady_cpu += part_of(unexpl, ov, len);
        }
    }
    p->steady_idle_unexplained_ns = md_steady_scaled(p, steady_unexpl);
    uint64_t busy = 0;
    for (size_t i = 0; i < s->n_iv; i++) {
        busy += md_steady_outside_phases(p, s->iv[i][0], s->iv[i][1], NULL);
        /* gaps below GT_GAP_MIN_NS are not kept: count them here */
        if (i && s->iv[i][0] - s->iv[i - 1][1] < GT_GAP_MIN_NS && !small_gap_after_wait(s, i)) {
            uint64_t small = md_steady_outside_phases(p, s->iv[i - 1][1], s->iv[i][0], NULL);
            steady_short += small;
            launch_gaps += small > 0;
        }
    }
    /* gaps merged into busy intervals to bound memory (md_iv_add): short ones, by where they
     * fell; after a wait or not is not known of them */
    uint64_t merged_ns, merged_gaps;
    md_merged_in_steady(p, &s->merged, &merged_ns, &merged_gaps);
    busy -= merged_ns < busy ? merged_ns : busy;
    steady_short += merged_ns;
    launch_gaps += merged_gaps;
    /* busy as a share of the same window: JIT compilation and autotuning inside it left out */
    uint64_t window = md_steady_outside_phases(p, lo, hi, NULL);
    p->launch_idle_ns += p->small_gap_ns;
    /* GPU figures per step: per steady step, or with sampling per steady step inside a window */
    double steps = md_steady_gpu_steps(p);
    if (steps <= 0) /* sampled, no steady step inside a window: no per-step GPU figure */
        steady_short = steady_cpu = steady_unexpl = steady_after_sync = launch_gaps = 0, steps = 1;
    p->steady_short_idle_ms_per_step = (double)steady_short / 1e6 / steps;
    p->steady_launch_gaps_per_step = (double)launch_gaps / steps;
    p->steady_cpu_elsewhere_ms_per_step = (double)steady_cpu / 1e6 / steps;
    p->steady_busy_pct = window ? 100.0 * (double)busy / (double)window : 0;
    if (p->gpu_per_step_unavailable) /* the windows' share instead: a share, not per step */
        p->steady_busy_pct = gt_proc_busy_pct(p);
    p->steady_idle_unexplained_ms_per_step = (double)steady_unexpl / 1e6 / steps;
    p->steady_after_sync_idle_ms_per_step = (double)steady_after_sync / 1e6 / steps;
}
