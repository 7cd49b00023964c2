/* model_time.c — the time builder: NVTX ranges (model_steps.c chooses the steps from them), GPU
 * busy time and idle gaps (cut to the sampled windows by model_sample.c), and what the CPU's calls
 * did in each gap (pass 2). The steady window's figures are model_steady.c's. */
#include "model_time.h"

#include "model_sample.h"

/* A range an autotuner marks itself with (XLA's GEMM and convolution algorithm pickers,
 * autotuning passes): autotuning evidence for the phases (model_phases.c), wherever it runs. */
static void nvtx_autotuner_range(pass_state *s, const char *name, uint64_t a, uint64_t b)
{
    if (!name || b < a || !gt_call_site_is_autotuner(name))
        return;
    gt_grow((void **)&s->phase_ev, &s->cap_phase_ev, s->n_phase_ev, sizeof *s->phase_ev);
    s->phase_ev[s->n_phase_ev++] = (gt_phase_span){GT_PHASE_AUTOTUNE, a, b};
}

static void nvtx_complete(pass_state *s, const nvtx_open *o, uint64_t b)
{
    uint32_t name_id = o->name_id, depth = o->depth;
    uint64_t a = o->t;
    if (!name_id || s->nvtx_total >= NVTX_RANGES_MAX || b < a)
        return;
    nvtx_autotuner_range(s, gt_reader_string(s->reader, name_id), a, b);
    /* the same text in two domains is two markers: a library's range is never the program's */
    uint64_t key = (uint64_t)name_id | (uint64_t)o->domain_id << 32;
    uint32_t i = gt_map_get(&s->nvtx_by_name, key);
    if (i == UINT32_MAX) {
        size_t cap = s->cap_names;
        gt_grow((void **)&s->names, &cap, s->n_names, sizeof *s->names);
        s->cap_names = cap;
        i = (uint32_t)s->n_names++;
        memset(&s->names[i], 0, sizeof s->names[i]);
        s->names[i].name_id = name_id;
        s->names[i].domain_id = o->domain_id;
        gt_map_put(&s->nvtx_by_name, key, i);
    }
    nvtx_name *n = &s->names[i];
    if (depth == 0)
        n->top_level = 1;
    gt_grow((void **)&n->ranges, &n->cap, n->n, sizeof *n->ranges);
    n->ranges[n->n].start_ns = a;
    n->ranges[n->n].end_ns = b;
    n->n++;
    s->nvtx_total++;
}

void md_on_nvtx(gt_proc *p, pass_state *s, const gt_rec_nvtx *v, uint32_t tid)
{
    md_note_time(p, v->t_ns, v->t_ns);
    tid_stack *t = md_tid_for(s, tid);
    switch (v->nvtx_kind) {
    case GT_NVTX_PUSH:
        if (t && t->depth < NVTX_DEPTH)
            t->open[t->depth] = (nvtx_open){v->name_id, t->depth, v->t_ns, v->domain_id};
        if (t)
            t->depth++;
        break;
    case GT_NVTX_POP:
        if (t && t->depth > 0) {
            t->depth--;
            if (t->depth < NVTX_DEPTH)
                nvtx_complete(s, &t->open[t->depth], v->t_ns);
        }
        break;
    case GT_NVTX_RANGE_START: {
        gt_grow((void **)&s->ranges_open, &s->cap_ranges_open, s->n_ranges_open,
                sizeof *s->ranges_open);
        s->ranges_open[s->n_ranges_open] = (nvtx_open){v->name_id, 0, v->t_ns, v->domain_id};
        gt_map_put(&s->range_open, v->range_id, (uint32_t)s->n_ranges_open++);
        break;
    }
    case GT_NVTX_RANGE_END: {
        uint32_t i = gt_map_get(&s->range_open, v->range_id);
        if (i != UINT32_MAX)
            nvtx_complete(s, &s->ranges_open[i], v->t_ns);
        break;
    }
    default:
        break;
    }
}

/* The part of [a, b) inside the GPU-sampled windows (the whole of it without sampling). */
static uint64_t measured_part(const gt_proc *p, uint64_t a, uint64_t b)
{
    if (!p->gpu_sampled)
        return b > a ? b - a : 0;
    uint64_t in = 0;
    for (size_t w = MD_FIRST_ENDING_AFTER(p->gpu_windows, p->n_gpu_windows, a);
         w < p->n_gpu_windows && p->gpu_windows[w].start_ns < b; w++) {
        uint64_t x = a > p->gpu_windows[w].start_ns ? a : p->gpu_windows[w].start_ns;
        uint64_t y = b < p->gpu_windows[w].end_ns ? b : p->gpu_windows[w].end_ns;
        in += y > x ? y - x : 0;
    }
    return in;
}

/* The merged idle that is measured time: all of it, or with GPU sampling the part in the windows
 * (the busy intervals were cut to them, a merged gap at a window's edge with them). */
static void merged_measured(const gt_proc *p, const md_merged *m, uint64_t *ns, uint64_t *gaps)
{
    if (!p->gpu_sampled)
        *ns = m->ns, *gaps = m->gaps;
    else
        md_merged_in(p, m, measured_part, ns, gaps);
}

/* Idle gaps merged into busy intervals to bound memory (md_iv_add) are idle: out of the busy
 * time, and out of the bins by where they fell (each bucket's spread over its width). */
static void busy_give_back(gt_proc *p, const md_merged *m)
{
    uint64_t merged, gaps;
    merged_measured(p, m, &merged, &gaps);
    p->gpu_busy_ns -= merged < p->gpu_busy_ns ? merged : p->gpu_busy_ns;
    for (size_t i = 0; i < m->n && m->buckets && p->bin_ns; i++) {
        uint64_t x = m->origin + i * m->width, y = x + m->width;
        uint64_t ns =
            (uint64_t)((unsigned __int128)m->buckets[i].ns * measured_part(p, x, y) / m->width);
        for (uint64_t a = x > p->bin_origin ? x : p->bin_origin; ns && a < y;) {
            size_t bi = (a - p->bin_origin) / p->bin_ns;
            if (bi >= GT_TIMELINE_BINS)
                break;
            uint64_t bend = p->bin_origin + (bi + 1) * p->bin_ns, e = y < bend ? y : bend;
            uint64_t part = (uint64_t)((unsigned __int128)ns * (e - a) / m->width);
            gt_bin *b = &p->bins[bi];
            b->gpu_busy_ns -= part < b->gpu_busy_ns ? part : b->gpu_busy_ns;
            a = e;
        }
    }
}

void md_busy(gt_proc *p, pass_state *s)
{
    md_iv_merge(s, 0);
    p->merged_idle_ns = s->merged.ns;
    p->merged_idle_gaps = s->merged.gaps;
    p->merged_gap_max_ns = s->merged.gaps ? s->merge_gap : 0;
    p->merged_placed_ns = s->merged.gaps ? s->merged.width : 0;
    p->intervals_max = md_intervals_max();
    if (p->gpu_sampled) /* only the windows are measured time (model_sample.c) */
        md_sample_clip(p, s);
    if (!s->n_iv)
        return;
    p->gpu_first_ns = s->iv[0][0];
    p->gpu_last_ns = s->iv[s->n_iv - 1][1];
    for (size_t i = 0; i < s->n_iv; i++)
        p->gpu_busy_ns += s->iv[i][1] - s->iv[i][0];
    p->gpu_span_ns = p->gpu_sampled ? md_sample_span(p) : p->gpu_last_ns - p->gpu_first_ns;
    /* GPU busy % over time */
    uint64_t span = p->gpu_last_ns - p->gpu_first_ns;
    p->bin_origin = p->gpu_first_ns;
    p->bin_ns = span / GT_TIMELINE_BINS + 1;
    for (size_t i = 0; i < s->n_iv; i++)
        md_bins_add(p, s->iv[i][0], s->iv[i][1], 0);
    if (p->gpu_sampled)
        md_sample_bins(p);
    busy_give_back(p, &s->merged); /* sampled: every busy interval is inside a window */
}

void md_gaps(gt_proc *p, const pass_state *s)
{
    size_t cap = 0;
    if (!s->n_iv)
        return;
    if (p->gpu_sampled)
        md_sample_gaps(p, s, &cap);
    else
        for (size_t i = 1; i < s->n_iv; i++)
            md_gap_add(p, &cap, s->iv[i - 1][1], s->iv[i][0]);
    /* merged gaps are short ones (below GT_GAP_MIN_NS unless the run is extremely long) */
    uint64_t merged, gaps;
    merged_measured(p, &s->merged, &merged, &gaps);
    p->small_gap_ns += merged;
    p->small_gap_count += gaps;
}

/* Steps that end at the wait of their iteration may end after the GPU's last operation (the
 * staging of a last copy back to the host, the host's own work before that wait returns): the GPU
 * is idle from that operation to the end of the last step, a gap of that step like any other. */
void md_gap_to_last_step(gt_proc *p)
{
    if (p->gpu_sampled || !p->n_steps || !p->gpu_last_ns)
        return;
    uint64_t end = p->steps[p->n_steps - 1].end_ns;
    size_t cap = p->n_gaps; /* full: md_gap_add grows it */
    if (end > p->gpu_last_ns)
        md_gap_add(p, &cap, p->gpu_last_ns, end);
}

int md_api_category_for_gap(const gt_record *r, const gt_api_common *c, uint32_t sync_kind,
                            const gt_rec_api_memcpy *m)
{
    enum gt_api_category cat = gt_api_func_category(c->func);
    if (r->kind == GT_REC_API_SYNC)
        return md_sync_blocks(sync_kind) ? 0 : 4;
    if (r->kind == GT_REC_API_MEMCPY) {
        uint8_t hk = md_host_kind_of(m->direction, m->src_kind, m->dst_kind);
        return md_copy_is_item_like(m, hk) ? 0 : 1;
    }
    if (cat == GT_CAT_LAUNCH || r->kind == GT_REC_API_LAUNCH)
        return 2;
    if (cat == GT_CAT_MEMORY)
        return 3;
    return 4;
}

void md_attribute_to_gaps(gt_proc *p, int category, uint64_t a, uint64_t b)
{
    for (size_t i = md_gap_lower(p, a); i < p->n_gaps && p->gaps[i].start_ns < b; i++) {
        gt_gap *g = &p->gaps[i];
        uint64_t lo = a > g->start_ns ? a : g->start_ns, hi = b < g->end_ns ? b : g->end_ns;
        if (hi <= lo)
            continue;
        /* the categories are the first parts: sync, copy, launch, alloc, other */
        gt_gap_add(g, category, hi - lo);
        if (category == 0 && b < g->end_ns)
            g->after_sync = 1;
    }
}
