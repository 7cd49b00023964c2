/* model_sample.c — GPU sampling (GPUTRACE_SAMPLE, header flag GT_HDR_GPU_SAMPLED): the calls were
 * recorded all along, CUPTI's records only in windows that CAPTURE records of source 4 open and
 * close. Outside a window nothing says what the GPU did, so it must never count as idle: the busy
 * intervals are clipped to the windows, idle gaps are what the windows hold between them, and the
 * steady window's GPU figures come from the steady steps that lie wholly inside a window (scaled
 * to the whole steady window so per step and shares read as for a full trace). Whole-run totals
 * from GPU records (GPU time, kernels, bytes copied) are extrapolated where the report shows them,
 * and marked as estimates (gt_proc_gpu_total). The factor is the calls that give the GPU work
 * (launches, copies, sets, cuDNN and cuBLAS calls; recorded all along) over those made inside the
 * windows: a run's GPU work is not spread evenly over its time (the import, the model's build, the
 * data loading before the first step give none), and on the H200 a time-based factor put a
 * ResNet-18 run's kernels at 61% of the full run's. Without such calls, the run's time over the
 * windows' time. */
#include "model_sample.h"

/* Pass 1: a CAPTURE record of source GT_CAPTURE_SRC_SAMPLE switched CUPTI's records on or off. */
void md_sample_on_capture(pass_state *s, const gt_record *r)
{
    gt_rec_capture c;
    if (r->body_size < sizeof c)
        return;
    gt_body_copy(&c, sizeof c, r);
    if (c.source != GT_CAPTURE_SRC_SAMPLE)
        return;
    gt_grow((void **)&s->sample_sw, &s->cap_sample_sw, s->n_sample_sw, sizeof *s->sample_sw);
    s->sample_sw[s->n_sample_sw][0] = c.t_ns;
    s->sample_sw[s->n_sample_sw][1] = c.on != 0;
    s->n_sample_sw++;
}

/* Pass 1, GPU-sampled traces: a call that gives the GPU work, for the extrapolation factor. */
void md_sample_on_call(pass_state *s, uint16_t kind, const gt_api_common *c)
{
    if (kind != GT_REC_API_LAUNCH && kind != GT_REC_API_MEMCPY && kind != GT_REC_API_MEMSET &&
        kind != GT_REC_API_CUDNN && kind != GT_REC_API_CUBLAS)
        return;
    gt_u64_log_add(&s->submits, c->t_begin_ns);
}

typedef struct in_windows {
    const gt_proc *p;
    size_t inside;
} in_windows;

static void count_in_windows(void *ctx, uint64_t t)
{
    in_windows *w = ctx;
    size_t k = MD_FIRST_ENDING_AFTER(w->p->gpu_windows, w->p->n_gpu_windows, t);
    w->inside += k < w->p->n_gpu_windows && w->p->gpu_windows[k].start_ns <= t;
}

/* The calls that gave the GPU work, all of them over those inside the windows; 0: no such call
 * inside a window (the time-based factor is used). */
static double calls_factor(const gt_proc *p, pass_state *s)
{
    if (!s->submits.n)
        return 0;
    in_windows w = {p, 0}; /* the windows are sorted and disjoint: one search a call */
    gt_u64_log_each(&s->submits, count_in_windows, &w);
    return w.inside ? (double)s->submits.n / (double)w.inside : 0;
}

static void window_add(gt_proc *p, size_t *cap, uint64_t a, uint64_t b)
{
    a = a < p->t_min ? p->t_min : a; /* the run is [t_min, t_max]: coverage is a share of it */
    b = b > p->t_max ? p->t_max : b;
    if (b <= a)
        return;
    if (p->n_gpu_windows && p->gpu_windows[p->n_gpu_windows - 1].end_ns >= a) {
        gt_step *last = &p->gpu_windows[p->n_gpu_windows - 1];
        p->gpu_window_ns += b > last->end_ns ? b - last->end_ns : 0;
        last->end_ns = b > last->end_ns ? b : last->end_ns;
        return;
    }
    gt_grow((void **)&p->gpu_windows, cap, p->n_gpu_windows, sizeof *p->gpu_windows);
    p->gpu_windows[p->n_gpu_windows++] = (gt_step){a, b};
    p->gpu_window_ns += b - a;
}

/* After pass 1 (t_min and t_max known): the windows, in time order; one still open at the end of
 * the file runs to the end of the trace. A sampled trace without any window has no GPU coverage. */
void md_sample_windows(gt_proc *p, pass_state *s)
{
    p->gpu_extrapolation = 1;
    if (!(p->hdr.flags & GT_HDR_GPU_SAMPLED))
        return;
    p->gpu_sampled = 1;
    if (s->n_sample_sw) /* the writer writes them in order; sort anyway (stable for equal t) */
        qsort(s->sample_sw, s->n_sample_sw, sizeof *s->sample_sw, md_cmp_u64);
    size_t cap = 0;
    int open = 0;
    uint64_t since = 0;
    for (size_t i = 0; i < s->n_sample_sw; i++) {
        uint64_t t = s->sample_sw[i][0];
        if (s->sample_sw[i][1] && !open) {
            open = 1;
            since = t;
        } else if (!s->sample_sw[i][1] && open) {
            open = 0;
            window_add(p, &cap, since, t);
        }
    }
    if (open)
        window_add(p, &cap, since, p->t_max);
    uint64_t run = p->t_max > p->t_min ? p->t_max - p->t_min : 0;
    p->gpu_extrapolation = p->gpu_window_ns ? (double)run / (double)p->gpu_window_ns : 0;
    double by_calls = p->gpu_window_ns ? calls_factor(p, s) : 0;
    p->gpu_extrapolation_by_calls = by_calls > 0;
    if (by_calls > 0)
        p->gpu_extrapolation = by_calls;
}

/* The merged busy intervals cut to the windows (a kernel CUPTI flushed as a window closed may run
 * past it: the part outside is not measured time). */
void md_sample_clip(gt_proc *p, pass_state *s)
{
    uint64_t(*out)[2] = NULL;
    size_t n = 0, cap = 0, w = 0;
    for (size_t i = 0; i < s->n_iv; i++) {
        while (w < p->n_gpu_windows && p->gpu_windows[w].end_ns <= s->iv[i][0])
            w++;
        for (size_t k = w; k < p->n_gpu_windows && p->gpu_windows[k].start_ns < s->iv[i][1]; k++) {
            uint64_t a =
                s->iv[i][0] > p->gpu_windows[k].start_ns ? s->iv[i][0] : p->gpu_windows[k].start_ns;
            uint64_t b =
                s->iv[i][1] < p->gpu_windows[k].end_ns ? s->iv[i][1] : p->gpu_windows[k].end_ns;
            if (b <= a)
                continue;
            gt_grow((void **)&out, &cap, n, sizeof *out);
            out[n][0] = a;
            out[n++][1] = b;
        }
    }
    free(s->iv);
    s->iv = out;
    s->n_iv = n;
    s->cap_iv = cap;
}

/* The windows' part of [gpu_first, gpu_last]: of window w, [*a, *b]; 0 when it has none. */
static int window_in_span(const gt_proc *p, size_t w, uint64_t *a, uint64_t *b)
{
    const gt_step *win = &p->gpu_windows[w];
    *a = win->start_ns > p->gpu_first_ns ? win->start_ns : p->gpu_first_ns;
    *b = win->end_ns < p->gpu_last_ns ? win->end_ns : p->gpu_last_ns;
    return *b > *a;
}

uint64_t md_sample_span(const gt_proc *p)
{
    uint64_t span = 0, a, b;
    for (size_t w = 0; w < p->n_gpu_windows; w++)
        if (window_in_span(p, w, &a, &b))
            span += b - a;
    return span;
}

/* The idle gaps: the windows' part of [gpu_first, gpu_last] the busy intervals leave (each
 * interval lies inside one window after md_sample_clip). */
void md_sample_gaps(gt_proc *p, const pass_state *s, size_t *cap)
{
    size_t j = 0;
    uint64_t a, b;
    for (size_t w = 0; w < p->n_gpu_windows; w++) {
        if (!window_in_span(p, w, &a, &b))
            continue;
        uint64_t cur = a;
        while (j < s->n_iv && s->iv[j][1] <= a)
            j++;
        for (; j < s->n_iv && s->iv[j][0] < b; j++) {
            if (s->iv[j][0] > cur)
                md_gap_add(p, cap, cur, s->iv[j][0]);
            if (s->iv[j][1] > cur)
                cur = s->iv[j][1];
        }
        if (b > cur)
            md_gap_add(p, cap, cur, b);
    }
}

/* How much of each timeline bin lies in a window (the report shades a bin by its busy share of
 * that, and marks bins without any as not recorded). */
void md_sample_bins(gt_proc *p)
{
    for (size_t w = 0; w < p->n_gpu_windows; w++) {
        uint64_t a = p->gpu_windows[w].start_ns, b = p->gpu_windows[w].end_ns;
        md_bins_add(p, a < p->bin_origin ? p->bin_origin : a, b, 1);
    }
}

/* The window holding [a, b] wholly, or NULL. */
static const gt_step *window_holding(const gt_proc *p, uint64_t a, uint64_t b)
{
    size_t lo = MD_FIRST_ENDING_AFTER(p->gpu_windows, p->n_gpu_windows, a);
    if (lo < p->n_gpu_windows && p->gpu_windows[lo].start_ns <= a && b <= p->gpu_windows[lo].end_ns)
        return &p->gpu_windows[lo];
    return NULL;
}

static void steady_gpu_add(gt_proc *p, size_t *cap, uint64_t a, uint64_t b)
{
    if (b <= a)
        return;
    p->steady_gpu_ns += b - a;
    if (p->n_steady_gpu && p->steady_gpu[p->n_steady_gpu - 1].end_ns >= a) {
        p->steady_gpu[p->n_steady_gpu - 1].end_ns = b;
        return;
    }
    gt_grow((void **)&p->steady_gpu, cap, p->n_steady_gpu, sizeof *p->steady_gpu);
    p->steady_gpu[p->n_steady_gpu++] = (gt_step){a, b};
}

/* The steady steps wholly inside a window, each with the time to the next step's start (as the
 * unsampled steady window holds it), cut at its window's end. */
static void steady_from_steps(gt_proc *p)
{
    size_t cap = 0;
    for (size_t i = p->warmup_steps; i < p->n_steps; i++) {
        const gt_step *st = &p->steps[i];
        const gt_step *win = window_holding(p, st->start_ns, st->end_ns);
        if (!win)
            continue;
        uint64_t end = st->end_ns;
        if (i + 1 < p->n_steps && p->steps[i + 1].start_ns > end)
            end = p->steps[i + 1].start_ns;
        end = end < win->end_ns ? end : win->end_ns;
        uint64_t start = st->start_ns;
        if (p->n_steady_gpu && p->steady_gpu[p->n_steady_gpu - 1].end_ns > start)
            start = p->steady_gpu[p->n_steady_gpu - 1].end_ns; /* overlapping steps: once */
        steady_gpu_add(p, &cap, start, end > start ? end : start);
        p->steady_gpu_steps += 1;
    }
    p->gpu_per_step_unavailable = p->steady_gpu_steps == 0;
}

/* After the steps and the steady window [lo, hi]: the part of it the GPU figures come from. */
void md_sample_steady(gt_proc *p, uint64_t lo, uint64_t hi)
{
    p->steady_gpu_steps = p->steady_steps;
    p->steady_gpu_ns = hi > lo ? hi - lo : 0;
    if (!p->gpu_sampled)
        return;
    p->steady_gpu_ns = 0;
    p->steady_gpu_steps = 0;
    for (size_t i = 0; i < p->n_steps; i++)
        p->gpu_steps += window_holding(p, p->steps[i].start_ns, p->steps[i].end_ns) != NULL;
    if (p->n_steps >= 2) {
        steady_from_steps(p);
        return;
    }
    size_t cap = 0; /* no steps: the windows' part of the steady window, as a share of one "step" */
    for (size_t w = 0; w < p->n_gpu_windows; w++) {
        uint64_t a = p->gpu_windows[w].start_ns > lo ? p->gpu_windows[w].start_ns : lo;
        uint64_t b = p->gpu_windows[w].end_ns < hi ? p->gpu_windows[w].end_ns : hi;
        steady_gpu_add(p, &cap, a, b);
    }
    p->steady_gpu_steps = hi > lo ? (double)p->steady_gpu_ns / (double)(hi - lo) : 0;
}

/* A steady-window GPU figure measured over steady_gpu, for the whole steady window. */
uint64_t md_steady_scaled(const gt_proc *p, uint64_t ns)
{
    if (!p->gpu_sampled)
        return ns;
    if (p->steady_gpu_steps <= 0)
        return 0;
    return (uint64_t)((double)ns * p->steady_steps / p->steady_gpu_steps);
}

/* The steps the steady GPU figures are per: all steady ones unsampled, else those in windows. */
double md_steady_gpu_steps(const gt_proc *p)
{
    return p->gpu_sampled ? p->steady_gpu_steps : p->steady_steps;
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
    uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
    return y > x ? y - x : 0;
}

uint64_t gt_proc_steady_gpu_overlap(const gt_proc *p, uint64_t a, uint64_t b)
{
    if (!p->gpu_sampled)
        return overlap(a, b, p->steady_start_ns, p->steady_end_ns);
    uint64_t sum = 0;
    for (size_t i = MD_FIRST_ENDING_AFTER(p->steady_gpu, p->n_steady_gpu, a);
         i < p->n_steady_gpu && p->steady_gpu[i].start_ns < b; i++)
        sum += overlap(a, b, p->steady_gpu[i].start_ns, p->steady_gpu[i].end_ns);
    return sum;
}

int md_in_steady_gpu(const gt_proc *p, uint64_t t)
{
    if (!p->gpu_sampled)
        return t >= p->steady_start_ns && t < p->steady_end_ns;
    return gt_proc_steady_gpu_overlap(p, t, t + 1) > 0;
}

double gt_proc_gpu_coverage_pct(const gt_proc *p)
{
    if (!p->gpu_sampled)
        return 100;
    return p->t_max > p->t_min ? 100.0 * (double)p->gpu_window_ns / (double)(p->t_max - p->t_min)
                               : 0;
}

double gt_proc_gpu_covered_ms(const gt_proc *p)
{
    return p->gpu_sampled ? (double)p->gpu_window_ns / 1e6 : gt_proc_duration_ms(p);
}

double gt_proc_gpu_total(const gt_proc *p, double in_windows)
{
    return p->gpu_sampled ? in_windows * p->gpu_extrapolation : in_windows;
}

const char *gt_proc_estimate_mark(const gt_proc *p)
{
    return p->gpu_sampled && p->gpu_window_ns ? "≈ " : "";
}

const char *gt_proc_extrapolation_note(const gt_proc *p)
{
    if (!p->gpu_sampled || !p->gpu_window_ns)
        return "";
    if (p->gpu_extrapolation_by_calls)
        return gt_fmt(" (extrapolated ×%.1f from %zu window%s holding %.0f%% of the calls that "
                      "gave the GPU work, %.0f%% of the run's time)",
                      p->gpu_extrapolation, p->n_gpu_windows, p->n_gpu_windows == 1 ? "" : "s",
                      100.0 / p->gpu_extrapolation, gt_proc_gpu_coverage_pct(p));
    return gt_fmt(" (extrapolated ×%.1f from %zu window%s covering %.0f%% of the run)",
                  p->gpu_extrapolation, p->n_gpu_windows, p->n_gpu_windows == 1 ? "" : "s",
                  gt_proc_gpu_coverage_pct(p));
}
