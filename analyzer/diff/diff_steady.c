/* diff_steady.c — like-with-like comparison of two processes for `gputrace diff` (issue 21 item 7).
 *
 * Whole-run totals mix start-up, autotuning and the run's length into every figure: a batch-8
 * fp32 run against a batch-128 bf16 run with benchmark mode read "GPU busy % 5.65 -> 3.23, 0.57x"
 * because the second spent its first seconds autotuning. So the steady state comes first, per
 * step and per sample, with shares compared in percentage points, and the totals come last. */
#include "diff_steady.h"

#include <math.h>
#include <string.h>

#include "report_out.h"
#include "textfmt.h"
#include "util.h"

#define ALIGNED_STEPS_SHOWN 12 /* aligned steps listed; more: the first and last half of that */

static int has_steps(const gt_proc *p)
{
    return p->n_steps >= 2;
}

int64_t gt_proc_batch(const gt_proc *p)
{
    int64_t best = 0;
    uint64_t best_execs = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || op->batch <= 0)
            continue;
        uint64_t execs = 0; /* all ops of this batch size together */
        for (size_t j = 0; j < p->n_cudnn; j++)
            if (p->cudnn[j].batch == op->batch && !p->cudnn[j].inferred)
                for (int c = 0; c < p->cudnn[j].n_choices; c++)
                    execs += p->cudnn[j].choices[c].execs;
        if (execs > best_execs || (execs == best_execs && op->batch > best)) {
            best_execs = execs;
            best = op->batch;
        }
    }
    return best;
}

/* ------------------------------------------------------------------ the steady rows */

enum row_kind { ROW_MS, ROW_PCT, ROW_COUNT, ROW_RATE };

typedef struct row {
    const char *key, *name;
    int kind;
    int a_ok, b_ok;
    double a, b;
} row;

static double kernels_per_step(const gt_proc *p)
{
    return p->steady_steps > 0 ? (double)p->steady_kernels / p->steady_steps : 0;
}

/* The steady rows, in order; per-step rows exist only for a run with steps: without them the
 * steady "step" is the second half of the run, which is no unit to compare with a step. */
static const struct {
    const char *key, *name;
    int kind;
} steady_defs[] = {
    {"step_ms", "step ms (median)", ROW_MS},
    {"batch", "batch (cuDNN ops)", ROW_COUNT},
    {"ms_per_sample", "ms per sample", ROW_MS},
    {"samples_per_s", "samples/s", ROW_RATE},
    {"busy_pct", "GPU busy % (steady)", ROW_PCT},
    {"busy_ms_per_step", "GPU busy ms per step", ROW_MS},
    {"idle_ms_per_step", "GPU idle ms per step", ROW_MS},
    {"sync_ms_per_step", "sync ms per step", ROW_MS},
    {"copy_ms_per_step", "copy ms per step", ROW_MS},
    {"nccl_ms_per_step", "NCCL ms per step", ROW_MS},
    {"kernels_per_step", "kernels per step", ROW_COUNT},
    {"alloc_per_step", "allocations per step", ROW_COUNT},
};
#define N_STEADY (sizeof steady_defs / sizeof steady_defs[0])

static int steady_value(const gt_proc *p, size_t i, double *v)
{
    int64_t bs = i >= 1 && i <= 3 ? gt_proc_batch(p) : 0;
    double step = p->step_ms_median;
    int steps = has_steps(p);
    /* GPU sampling: the GPU rows come from the steady steps inside windows (the model's);
     * without any such step there is no per-step GPU figure to compare */
    int gpu_rows = i == 5 || i == 6 || i == 9 || i == 10;
    if (gpu_rows && p->gpu_sampled && (p->gpu_per_step_unavailable || !p->gpu_window_ns))
        steps = 0;
    if (i == 4 && p->gpu_sampled && !p->gpu_window_ns)
        return 0;
    switch (i) {
    case 0:
        *v = step;
        return steps;
    case 1:
        *v = (double)bs;
        return bs > 0;
    case 2:
        *v = bs > 0 ? step / (double)bs : 0;
        return steps && bs > 0;
    case 3:
        *v = step > 0 ? 1000.0 * (double)bs / step : 0;
        return steps && bs > 0 && step > 0;
    case 4:
        *v = p->steady_busy_pct;
        return p->steady_end_ns > p->steady_start_ns;
    case 5:
        *v = step * p->steady_busy_pct / 100;
        return steps;
    case 6:
        *v = step * (1 - p->steady_busy_pct / 100);
        return steps;
    case 7:
        *v = p->steady_sync_ms_per_step;
        return steps;
    case 8:
        *v = p->steady_copy_ms_per_step;
        return steps;
    case 9:
        *v = p->steady_nccl_ms_per_step;
        return steps;
    case 10:
        *v = kernels_per_step(p);
        return steps;
    default:
        *v = p->steady_alloc_per_step;
        return steps;
    }
}

static size_t steady_rows(const gt_proc *a, const gt_proc *b, row *r)
{
    for (size_t i = 0; i < N_STEADY; i++) {
        r[i] = (row){steady_defs[i].key, steady_defs[i].name, steady_defs[i].kind, 0, 0, 0, 0};
        r[i].a_ok = steady_value(a, i, &r[i].a);
        r[i].b_ok = steady_value(b, i, &r[i].b);
    }
    return N_STEADY;
}

static const char *value_text(const row *r, int ok, double v)
{
    if (!ok)
        return "-";
    switch (r->kind) {
    case ROW_PCT:
        return gt_fmt("%.1f", v);
    case ROW_COUNT:
        return v == floor(v) ? gt_fmt("%.0f", v) : gt_fmt("%.1f", v);
    case ROW_RATE:
        return gt_fmt("%.1f", v);
    default:
        return gt_fmt(fabs(v) >= 1 || v == 0 ? "%.3f" : "%.4f", v);
    }
}

/* Shares change in percentage points; everything else in percent of A. */
static const char *change_text(const row *r)
{
    if (!r->a_ok || !r->b_ok)
        return "-";
    if (r->kind == ROW_PCT)
        return gt_signed(r->b - r->a, 1, " pts");
    if (r->a == r->b)
        return "=";
    if (r->a == 0)
        return "new";
    if (r->b / r->a >= 10) /* +148166.7% reads worse than 1483x */
        return gt_fmt("%.0fx", r->b / r->a);
    return gt_signed(100 * (r->b / r->a - 1), 1, "%");
}

/* ------------------------------------------------------------------ warnings */

typedef struct warnings {
    char text[6][320];
    int n;
} warnings;

static void warn(warnings *w, const char *text)
{
    if (w->n < 6)
        snprintf(w->text[w->n++], sizeof w->text[0], "%s", text);
}

static void steps_warnings(const gt_proc *a, const gt_proc *b, warnings *w)
{
    const gt_proc *pp[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        if (has_steps(pp[s]))
            continue;
        char text[240]; /* gt_fmt's 128 bytes cut this sentence short */
        const char *why = pp[s]->step_why;
        snprintf(text, sizeof text,
                 "%s: no steps found%s%s%s; its steady figures cover the second half of its "
                 "GPU-active time, so its per-step rows are left out",
                 s ? "B" : "A", why[0] ? " (" : "", why[0] ? gt_step_why_summary(why, 100) : "",
                 why[0] ? ")" : "");
        warn(w, text);
    }
    if (!has_steps(a) || !has_steps(b))
        return;
    if (strcmp(a->step_source, b->step_source) != 0) {
        char text[sizeof((warnings *)0)->text[0]]; /* gt_fmt's 128 bytes would cut it */
        snprintf(text, sizeof text,
                 "step markers differ (A: %s; B: %s): a step may not be the same work",
                 gt_short_name(a->step_source, 80, 0), gt_short_name(b->step_source, 80, 0));
        warn(w, text);
    }
    if (a->n_steps != b->n_steps)
        warn(w, gt_fmt("A has %zu steps, B %zu: the whole-run totals compare runs of different "
                       "lengths; compare the per-step rows",
                       a->n_steps, b->n_steps));
    double ka = kernels_per_step(a), kb = kernels_per_step(b);
    if (ka > 0 && kb > 0 && (ka / kb >= GT_DIFF_WORK_RATIO || kb / ka >= GT_DIFF_WORK_RATIO))
        warn(w, gt_fmt("the work per step differs: %.0f kernels per step in A, %.0f in B", ka, kb));
}

/* A GPU-sampled side (GPUTRACE_SAMPLE): where its GPU rows come from. */
static void sampling_warnings(const gt_proc *a, const gt_proc *b, warnings *w)
{
    const gt_proc *pp[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        const gt_proc *p = pp[s];
        char text[240];
        if (!p->gpu_sampled)
            continue;
        if (!p->gpu_window_ns)
            snprintf(text, sizeof text,
                     "%s is GPU-sampled but no window was recorded: it has no GPU figure",
                     s ? "B" : "A");
        else
            snprintf(text, sizeof text,
                     "%s is GPU-sampled: its GPU rows come from %zu windows (%.0f%% of the run, "
                     "%zu of %zu steps%s); its run GPU totals are ≈ ×%.1f",
                     s ? "B" : "A", p->n_gpu_windows, gt_proc_gpu_coverage_pct(p), p->gpu_steps,
                     p->n_steps, p->gpu_per_step_unavailable ? ": no GPU per-step row" : "",
                     p->gpu_extrapolation);
        warn(w, text);
    }
}

static void all_warnings(const gt_proc *a, const gt_proc *b, warnings *w)
{
    memset(w, 0, sizeof *w);
    sampling_warnings(a, b, w);
    steps_warnings(a, b, w);
    int64_t ba = gt_proc_batch(a), bb = gt_proc_batch(b);
    if (ba > 0 && bb > 0 && ba != bb)
        warn(w, gt_fmt("the batch differs (A %lld, B %lld, from the cuDNN op signatures): compare "
                       "per sample",
                       (long long)ba, (long long)bb));
}

/* ------------------------------------------------------------------ phases */

static int phases_known(const gt_proc *p)
{
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        if (p->phase_ns[k])
            return 1;
    return 0;
}

/* Without the model's phases, what the timeline says anyway: before the GPU's first work, the
 * warm-up steps, the steady window, after the GPU's last work. */
enum { FB_BEFORE_GPU, FB_WARMUP, FB_STEADY, FB_AFTER_GPU, FB_COUNT };
static const char *const fallback_names[FB_COUNT] = {"before the first GPU work", "warm-up steps",
                                                     "steady window", "after the last GPU work"};

static double fallback_ms(const gt_proc *p, int k)
{
    switch (k) {
    case FB_BEFORE_GPU:
        return p->gpu_first_ns > p->t_min ? (double)(p->gpu_first_ns - p->t_min) / 1e6 : 0;
    case FB_WARMUP:
        return has_steps(p) ? p->warmup_ms_total : 0;
    case FB_STEADY:
        return p->steady_end_ns > p->steady_start_ns
                   ? (double)(p->steady_end_ns - p->steady_start_ns) / 1e6
                   : 0;
    default:
        return p->t_max > p->gpu_last_ns ? (double)(p->t_max - p->gpu_last_ns) / 1e6 : 0;
    }
}

static int phase_count(const gt_proc *a, const gt_proc *b)
{
    return phases_known(a) || phases_known(b) ? GT_PHASE_COUNT : FB_COUNT;
}

static const char *phase_label(const gt_proc *a, const gt_proc *b, int k)
{
    return phases_known(a) || phases_known(b) ? gt_phase_name(k) : fallback_names[k];
}

static double phase_ms(const gt_proc *a, const gt_proc *b, const gt_proc *p, int k)
{
    return phases_known(a) || phases_known(b) ? (double)p->phase_ns[k] / 1e6 : fallback_ms(p, k);
}

static const char *share_text(const gt_proc *p, double ms)
{
    double run = gt_proc_duration_ms(p);
    return gt_fmt("%.1f (%.0f%%)", ms, run > 0 ? 100 * ms / run : 0);
}

static void phases_text(const gt_proc *a, const gt_proc *b, FILE *out)
{
    int known = phases_known(a) || phases_known(b);
    fprintf(out, "\n  phases, ms (share of the run)%s\n",
            known ? "" : ": not computed; the timeline's parts instead");
    static const char *const h[] = {"phase", "A", "B"};
    gt_table t;
    gt_table_init(&t, 3, h);
    t.right[1] = t.right[2] = 1;
    for (int k = 0; k < phase_count(a, b); k++) {
        double x = phase_ms(a, b, a, k), y = phase_ms(a, b, b, k);
        if (x > 0 || y > 0)
            gt_table_row(&t, phase_label(a, b, k), share_text(a, x), share_text(b, y));
    }
    gt_table_row(&t, "run", share_text(a, gt_proc_duration_ms(a)),
                 share_text(b, gt_proc_duration_ms(b)));
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
}

/* ------------------------------------------------------------------ whole run */

typedef struct totals {
    double run_ms, copy_ms, sync_ms, idle_ms, busy_pct, gpu_busy_ms, autotune_ms;
} totals;

static totals totals_of(const gt_proc *p)
{
    totals t = {0};
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++)
            t.copy_ms +=
                (double)(p->copies_from_gpu ? p->copies[d][k].gpu_ns : p->copies[d][k].cpu_ns) /
                1e6;
    t.run_ms = gt_proc_duration_ms(p);
    t.sync_ms = (double)p->sync_total_ns / 1e6;
    uint64_t span = p->gpu_sampled ? p->gpu_span_ns : p->gpu_last_ns - p->gpu_first_ns;
    t.idle_ms = (double)(span - p->gpu_busy_ns) / 1e6;
    t.busy_pct = gt_proc_busy_pct(p);
    t.gpu_busy_ms = (double)p->gpu_busy_ns / 1e6;
    if (p->gpu_sampled) { /* run totals from GPU records: extrapolated from the windows */
        t.idle_ms = gt_proc_gpu_total(p, t.idle_ms);
        t.gpu_busy_ms = gt_proc_gpu_total(p, t.gpu_busy_ms);
        if (p->copies_from_gpu)
            t.copy_ms = gt_proc_gpu_total(p, t.copy_ms);
    }
    t.autotune_ms = (double)p->autotune_ns / 1e6;
    return t;
}

static size_t total_rows(const gt_proc *a, const gt_proc *b, row *r)
{
    totals x = totals_of(a), y = totals_of(b);
    size_t n = 0;
#define TOT(KEY, NAME, KIND, F) r[n++] = (row){KEY, NAME, KIND, 1, 1, x.F, y.F}
    TOT("run_ms", "run ms", ROW_MS, run_ms);
    TOT("gpu_busy_ms", "GPU busy ms", ROW_MS, gpu_busy_ms);
    TOT("busy_pct", "GPU busy %", ROW_PCT, busy_pct);
    TOT("idle_ms", "GPU idle ms", ROW_MS, idle_ms);
    TOT("copy_ms", "copy ms", ROW_MS, copy_ms);
    TOT("sync_ms", "sync stall ms", ROW_MS, sync_ms);
    TOT("autotune_ms", "autotuning ms", ROW_MS, autotune_ms);
#undef TOT
    return n;
}

static void rows_text(const row *r, size_t n, FILE *out)
{
    static const char *const h[] = {"", "A", "B", "change"};
    gt_table t;
    gt_table_init(&t, 4, h);
    t.right[1] = t.right[2] = t.right[3] = 1;
    for (size_t i = 0; i < n; i++) /* the first row always: "-" says there were no steps */
        if (i == 0 || r[i].a_ok || r[i].b_ok)
            gt_table_row(&t, r[i].name, value_text(&r[i], r[i].a_ok, r[i].a),
                         value_text(&r[i], r[i].b_ok, r[i].b), change_text(&r[i]));
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
}

/* ------------------------------------------------------------------ aligned steps */

static double step_ms_at(const gt_proc *p, size_t i)
{
    return (double)(p->steps[i].end_ns - p->steps[i].start_ns) / 1e6;
}

static void aligned_text(const gt_proc *a, const gt_proc *b, FILE *out)
{
    if (!has_steps(a) || !has_steps(b))
        return;
    size_t n = a->n_steps < b->n_steps ? a->n_steps : b->n_steps;
    fprintf(out, "\n  steps aligned one by one ('w' = warm-up)%s\n",
            a->n_steps != b->n_steps
                ? gt_fmt(": the first %zu; %s has %zu more", n, a->n_steps > n ? "A" : "B",
                         (a->n_steps > n ? a->n_steps : b->n_steps) - n)
                : "");
    static const char *const h[] = {"step", "A ms", "B ms", "change"};
    gt_table t;
    gt_table_init(&t, 4, h);
    t.right[0] = t.right[1] = t.right[2] = t.right[3] = 1;
    for (size_t i = 0; i < n; i++) {
        if (n > ALIGNED_STEPS_SHOWN && i == ALIGNED_STEPS_SHOWN / 2) {
            gt_table_row(&t, "...", "", "", "");
            i = n - ALIGNED_STEPS_SHOWN / 2;
        }
        row r = {"", "", ROW_MS, 1, 1, step_ms_at(a, i), step_ms_at(b, i)};
        gt_table_row(&t, gt_fmt("%zu", i + 1),
                     gt_fmt("%s%.3f", i < a->warmup_steps ? "w " : "", r.a),
                     gt_fmt("%s%.3f", i < b->warmup_steps ? "w " : "", r.b), change_text(&r));
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
}

/* ------------------------------------------------------------------ entry points */

/* "360 steady steps"; sampled: "360 steady steps, GPU rows from 88 in windows" */
static const char *steady_steps_text(const gt_proc *p)
{
    if (!has_steps(p))
        return "no steps";
    if (!p->gpu_sampled)
        return gt_fmt("%.0f steady steps", p->steady_steps);
    return gt_fmt("%.0f steady steps, GPU rows from %.0f in windows", p->steady_steps,
                  p->steady_gpu_steps);
}

void gt_diff_steady_text(const gt_proc *a, const gt_proc *b, FILE *out, int top_n)
{
    (void)top_n;
    warnings w;
    all_warnings(a, b, &w);
    if (w.n)
        fputc('\n', out);
    for (int i = 0; i < w.n; i++)
        fprintf(out, "  warning: %s\n", w.text[i]);
    row r[16];
    size_t n = steady_rows(a, b, r);
    fprintf(out, "\n  steady state, per step (A: %s; B: %s)\n", steady_steps_text(a),
            steady_steps_text(b));
    rows_text(r, n, out);
    phases_text(a, b, out);
    fprintf(out, "\n  whole run (start-up, autotuning and the run's length are in these%s)\n",
            a->gpu_sampled || b->gpu_sampled
                ? "; a GPU-sampled side's GPU ms are ≈ extrapolated from its windows"
                : "");
    n = total_rows(a, b, r);
    rows_text(r, n, out);
    aligned_text(a, b, out);
}

static json_t *rows_json(const row *r, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; i < n; i++)
        json_object_set_new(o, r[i].key,
                            json_pack("{s:o, s:o}", "a",
                                      r[i].a_ok ? json_real(r[i].a) : json_null(), "b",
                                      r[i].b_ok ? json_real(r[i].b) : json_null()));
    return o;
}

static json_t *phases_json(const gt_proc *a, const gt_proc *b)
{
    json_t *arr = json_array();
    int known = phases_known(a) || phases_known(b);
    for (int k = 0; k < phase_count(a, b); k++) {
        double x = phase_ms(a, b, a, k), y = phase_ms(a, b, b, k);
        double ra = gt_proc_duration_ms(a), rb = gt_proc_duration_ms(b);
        json_array_append_new(arr, json_pack("{s:s, s:b, s:f, s:f, s:f, s:f}", "phase",
                                             phase_label(a, b, k), "computed", known, "a_ms", x,
                                             "b_ms", y, "a_share_pct", ra > 0 ? 100 * x / ra : 0.0,
                                             "b_share_pct", rb > 0 ? 100 * y / rb : 0.0));
    }
    return arr;
}

static json_t *aligned_json(const gt_proc *a, const gt_proc *b)
{
    json_t *arr = json_array();
    if (!has_steps(a) || !has_steps(b))
        return arr;
    size_t n = a->n_steps < b->n_steps ? a->n_steps : b->n_steps;
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:I, s:f, s:f, s:b, s:b}", "step", (json_int_t)i + 1,
                                             "a_ms", step_ms_at(a, i), "b_ms", step_ms_at(b, i),
                                             "a_warmup", i < a->warmup_steps, "b_warmup",
                                             i < b->warmup_steps));
    return arr;
}

void gt_diff_steady_json(const gt_proc *a, const gt_proc *b, json_t *pair)
{
    warnings w;
    all_warnings(a, b, &w);
    json_t *warr = json_array();
    for (int i = 0; i < w.n; i++)
        json_array_append_new(warr, json_string(w.text[i]));
    row r[16];
    size_t n = steady_rows(a, b, r);
    json_object_set_new(pair, "warnings", warr);
    json_object_set_new(pair, "steady", rows_json(r, n));
    json_object_set_new(pair, "phases", phases_json(a, b));
    n = total_rows(a, b, r);
    json_t *tot = rows_json(r, n); /* whole run; step_ms kept here for readers of schema 1 */
    json_object_set_new(tot, "step_ms",
                        json_pack("{s:f, s:f}", "a", has_steps(a) ? a->step_ms_median : 0.0, "b",
                                  has_steps(b) ? b->step_ms_median : 0.0));
    json_object_set_new(pair, "totals", tot);
    json_object_set_new(pair, "steps_aligned", aligned_json(a, b));
}
