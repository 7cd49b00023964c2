/* report_out.c — text tables, colour and JSON shared by `report` and `diff`. */
#include "report_out.h"
#include "textfmt.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_reader.h"
#include "gtrace_api.h"
#include "peaks.h"

int gt_use_color(FILE *out)
{
    const char *no = getenv("NO_COLOR");
    if (no && no[0])
        return 0;
    return isatty(fileno(out));
}

const char *gt_sev_color(int severity, int color)
{
    if (!color)
        return "";
    return severity == GT_SEV_CRITICAL  ? "\033[1;31m"
           : severity == GT_SEV_WARNING ? "\033[33m"
                                        : "\033[36m";
}

const char *gt_color_reset(int color)
{
    return color ? "\033[0m" : "";
}

const char *gt_bold(int color)
{
    return color ? "\033[1m" : "";
}

/* Evidence as people write numbers: 14640, 0.35, 12.5 -- never 1.464e+04 (%g's choice). */
const char *gt_evidence_number(double v)
{
    double mag = fabs(v);
    if (!isfinite(v))
        return gt_fmt("%f", v);
    if (v == floor(v) && mag < 1e15)
        return gt_fmt("%.0f", v);
    char *text = (char *)gt_fmt(mag >= 100     ? "%.1f"
                                : mag >= 1     ? "%.2f"
                                : mag >= 0.001 ? "%.4f"
                                               : "%.6f",
                                v);
    size_t len = strlen(text);
    while (len > 1 && text[len - 1] == '0' && text[len - 2] != '.')
        text[--len] = 0; /* 0.1000 -> 0.1 */
    return text;
}

/* ------------------------------------------------------------------ tables */

void gt_table_init(gt_table *t, int ncols, const char *const *header)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    t->cap = 16;
    t->cells = gt_xcalloc(t->cap * (size_t)ncols, sizeof *t->cells);
    for (int c = 0; c < ncols; c++)
        t->cells[c] = gt_xstrdup(header[c]);
    t->nrows = 1;
}

void gt_table_row(gt_table *t, ...)
{
    if (t->nrows == t->cap) {
        t->cap *= 2;
        t->cells = gt_xrealloc(t->cells, t->cap * (size_t)t->ncols * sizeof *t->cells);
    }
    va_list ap;
    va_start(ap, t);
    for (int c = 0; c < t->ncols; c++)
        t->cells[t->nrows * (size_t)t->ncols + (size_t)c] = gt_xstrdup(va_arg(ap, const char *));
    va_end(ap);
    t->nrows++;
}

static size_t shown_rows(const gt_table *t)
{
    return t->limit && t->nrows - 1 > t->limit ? t->limit + 1 : t->nrows;
}

/* Column widths that fit the line: each column as wide as its widest cell (or max_width), then
 * the shrinkable ones narrowed, widest first, down to 16 columns. A column whose width is set to
 * 0 beforehand (printed under its row) takes no room. Returns the total width. */
static size_t fit_columns(const gt_table *t, size_t rows, size_t indent, int line, size_t *w,
                          int skip)
{
    size_t total = indent;
    for (int c = 0; c < t->ncols; c++) {
        w[c] = 0;
        if (c == skip)
            continue;
        for (size_t r = 0; r < rows; r++) {
            size_t len = gt_text_cols(t->cells[r * (size_t)t->ncols + (size_t)c]);
            w[c] = len > w[c] ? len : w[c];
        }
        if (t->max_width[c] > 0 && w[c] > (size_t)t->max_width[c])
            w[c] = (size_t)t->max_width[c];
        total += w[c] + (c ? 2 : 0);
    }
    while (total > (size_t)line) {
        int widest = -1;
        for (int c = 0; c < t->ncols; c++)
            if (t->shrink[c] && w[c] > 16 && (widest < 0 || w[c] > w[widest]))
                widest = c;
        if (widest < 0)
            break;
        size_t cut = total - (size_t)line < w[widest] - 16 ? total - (size_t)line : w[widest] - 16;
        w[widest] -= cut;
        total -= cut;
    }
    return total;
}

static const char *fitted_cell(const gt_table *t, size_t r, int c, size_t width)
{
    const char *cell = t->cells[r * (size_t)t->ncols + (size_t)c];
    if (gt_text_cols(cell) > width)
        cell = gt_short_name(cell, width, r ? t->name_flags[c] : 0);
    return cell;
}

void gt_table_print(const gt_table *t, FILE *out, const char *indent)
{
    size_t w[GT_TABLE_MAX_COLS], rows = shown_rows(t), in = gt_text_cols(indent);
    int line = gt_text_width(out), skip = -1;
    if (fit_columns(t, rows, in, line, w, -1) > (size_t)line && t->under > 0) {
        skip = t->under - 1; /* too narrow: that column goes under its row */
        fit_columns(t, rows, in, line, w, skip);
    }
    int last_col = t->ncols - 1 == skip ? t->ncols - 2 : t->ncols - 1;
    for (size_t r = 0; r < rows; r++) {
        fputs(indent, out);
        for (int c = 0; c < t->ncols; c++) {
            if (c == skip)
                continue;
            const char *cell = fitted_cell(t, r, c, w[c]);
            size_t pad = w[c] - gt_text_cols(cell);
            int last = c == last_col;
            if (t->right[c])
                fprintf(out, "%*s%s%s", (int)pad, "", cell, last ? "" : "  ");
            else if (last)
                fputs(cell, out);
            else
                fprintf(out, "%s%*s  ", cell, (int)pad, "");
        }
        fputc('\n', out);
        const char *under = r && skip >= 0 ? t->cells[r * (size_t)t->ncols + (size_t)skip] : "";
        if (*under)
            fprintf(out, "%s    %s\n", indent, fitted_cell(t, r, skip, (size_t)line - in - 4));
    }
    if (rows < t->nrows)
        fprintf(out, "%s\xe2\x80\xa6 %zu more%s\n", indent, t->nrows - rows,
                t->more ? t->more : "");
}

void gt_table_free(gt_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

const char *gt_proc_label(const gt_proc *p)
{
    static char buf[64];
    if (p->hdr.rank >= 0)
        snprintf(buf, sizeof buf, "rank %d (pid %d)", p->hdr.rank, p->hdr.pid);
    else
        snprintf(buf, sizeof buf, "pid %d", p->hdr.pid);
    return buf;
}

const char *gt_cudnn_mode(const gt_cudnn_opstat *op)
{
    if (op->inferred)
        return "inferred";
    if (op->autotuned)
        return "autotuned";
    if (op->heuristic)
        return "heuristic";
    return "unknown";
}

/* ------------------------------------------------------------------ process JSON */

static json_t *versions_json(const gt_runtime_info *rt)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "driver", rt->driver_version, "runtime",
                     rt->runtime_version, "cudnn", rt->cudnn_version, "cudnn_cudart",
                     rt->cudnn_cudart_version, "cublas", rt->cublas_version, "cupti",
                     rt->cupti_version);
}

static json_t *devices_json(const gt_runtime_info *rt)
{
    json_t *arr = json_array();
    for (int i = 0; i < rt->device_count && i < GT_MAX_DEVICES; i++) {
        const gt_device_info *d = &rt->devices[i];
        json_array_append_new(arr, json_pack("{s:i, s:s, s:s, s:i, s:I}", "ordinal", d->ordinal,
                                             "name", d->name, "compute_capability",
                                             gt_fmt("%d.%d", d->cc_major, d->cc_minor), "sm_count",
                                             d->sm_count, "memory_bytes",
                                             (json_int_t)d->total_mem_bytes));
    }
    return arr;
}

static json_t *steps_json(const gt_proc *p)
{
    if (p->n_steps < 2)
        return json_pack("{s:n, s:i, s:s, s:s}", "source", "count", 0, "step_source_kind",
                         gt_step_source_kind_name(GT_STEPSRC_NONE), "step_why", p->step_why);
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:f, s:f, s:f, s:f}", "source", p->step_source,
                  "step_source", p->step_source, "step_source_kind",
                  gt_step_source_kind_name(p->step_source_kind), "step_why", p->step_why, "count",
                  (json_int_t)p->n_steps, "warmup_steps", (json_int_t)p->warmup_steps, "warmup_ms",
                  p->warmup_ms_total, "median_ms", p->step_ms_median, "min_ms", p->step_ms_min,
                  "mean_ms", p->step_ms_mean_steady);
    if (o && p->step_iterations > 1) /* past GT_STEPS_MAX: steps of several iterations */
        json_object_set_new(o, "iterations_per_step", json_integer((json_int_t)p->step_iterations));
    return o;
}

/* Idle time by what the CPU was doing (model_idle.c): whole run, and the steady window per step
 * with each cause's share of the steady idle time; the steady figures as the verdict and the
 * advice take them (gt_adv_idle_cause_ms: NCCL kernels spinning for a late rank are busy GPU
 * time, given apart as nccl_spin_ms_per_step). */
static json_t *idle_by_cause_json(const gt_proc *p)
{
    json_t *o = json_object();
    double steady = 0;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        steady += gt_adv_idle_cause_ms(p, c);
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        json_object_set_new(
            o, gt_idle_cause_key(c),
            json_pack("{s:s, s:f, s:f, s:f}", "name", gt_idle_cause_name(c), "ms",
                      (double)p->idle_cause_ns[c] / 1e6, "steady_ms_per_step",
                      gt_adv_idle_cause_ms(p, c), "steady_pct",
                      steady > 0 ? 100.0 * gt_adv_idle_cause_ms(p, c) / steady : 0.0));
    return o;
}

/* Launch-bound's figures (model_time.c): the steady window's idle between kernels while the CPU
 * prepared the next launch, the kernels against the interval they start at, the launch path. */
static json_t *launch_json(const gt_proc *p)
{
    double steps = p->steady_steps > 0 ? p->steady_steps : 1;
    double kernels = (double)p->steady_kernels / steps;
    double step =
        p->n_steps >= 2 ? p->step_ms_median : (double)(p->steady_end_ns - p->steady_start_ns) / 1e6;
    return json_pack(
        "{s:f, s:f, s:f, s:o, s:o, s:I, s:o, s:o}", "idle_ms_per_step",
        p->steady_short_idle_ms_per_step, "gaps_per_step", p->steady_launch_gaps_per_step,
        "kernels_per_step", kernels, "kernel_us_mean",
        p->steady_kernels ? json_real((double)p->steady_kernel_ns / (double)p->steady_kernels / 1e3)
                          : json_null(),
        "kernel_interval_us", kernels > 0 ? json_real(1e3 * step / kernels) : json_null(),
        "launch_calls", (json_int_t)p->steady_launch_calls, "launch_call_us",
        p->steady_launch_calls
            ? json_real((double)p->steady_launch_call_ns / (double)p->steady_launch_calls / 1e3)
            : json_null(),
        "launch_function",
        p->launch_func ? json_string(gt_api_func_name(p->launch_func)) : json_null());
}

static json_t *frameworks_json(const gt_proc *p)
{
    json_t *a = json_array();
    for (int i = 0; i < GT_FW_COUNT; i++)
        if (p->frameworks & (1u << i))
            json_array_append_new(a, json_string(gt_framework_key(1u << i)));
    return a;
}

static json_t *gpu_json(const gt_proc *p)
{
    json_t *timeline = json_array();
    if (p->bin_ns)
        for (int i = 0; i < GT_TIMELINE_BINS; i++) {
            uint64_t over = p->gpu_sampled ? p->bins[i].covered_ns : p->bin_ns;
            json_array_append_new(
                timeline, over ? json_real(100.0 * (double)p->bins[i].gpu_busy_ns / (double)over)
                               : json_null()); /* sampled: not recorded */
        }
    json_t *idle = json_pack(
        "{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}", "blocked_in_sync_ms",
        (double)p->idle_sync_ns / 1e6, "copying_ms", (double)p->idle_copy_ns / 1e6, "launching_ms",
        (double)p->idle_launch_ns / 1e6, "allocating_ms", (double)p->idle_alloc_ns / 1e6,
        "other_api_ms", (double)p->idle_other_ns / 1e6, "nothing_recorded_ms",
        (double)p->idle_unexplained_ns / 1e6, "after_sync_ms", (double)p->after_sync_idle_ns / 1e6,
        "short_gaps_ms", (double)p->small_gap_ns / 1e6, "gaps", (json_int_t)p->n_gaps);
    /* gaps merged into busy time to bound memory (a very long run): 0 when none */
    json_object_set_new(idle, "merged_into_busy_ms", json_real((double)p->merged_idle_ns / 1e6));
    json_object_set_new(idle, "merged_into_busy_gaps",
                        json_integer((json_int_t)p->merged_idle_gaps));
    json_object_set_new(idle, "merged_placed_ms", json_real((double)p->merged_placed_ns / 1e6));
    json_t *o =
        json_pack("{s:f, s:f, s:f, s:f, s:f, s:I, s:o, s:o, s:o, s:o}", "busy_pct",
                  gt_proc_busy_pct(p), "busy_ms", (double)p->gpu_busy_ns / 1e6, "active_ms",
                  (double)(p->gpu_last_ns - p->gpu_first_ns) / 1e6, "steady_busy_pct",
                  p->steady_busy_pct, "timeline_bin_ms", (double)p->bin_ns / 1e6,
                  "timeline_start_ns", (json_int_t)p->bin_origin, "timeline_busy_pct", timeline,
                  "idle", idle, "idle_by_cause", idle_by_cause_json(p), "launch", launch_json(p));
    /* what the steady per-step figures are a share of (the advice's base): the mean steady step,
     * or the steady window less JIT and autotuning when no steps were found */
    json_object_set_new(o, "steady_base_ms", json_real(gt_adv_step_ms(p)));
    json_object_set_new(o, "steady_idle_ms_per_step", json_real(gt_adv_idle_ms(p)));
    json_object_set_new(o, "nccl_spin_ms_per_step",
                        json_real((double)p->steady_nccl_wait_ns / 1e6 / gt_adv_steps(p)));
    return o;
}

static int cmp_kernel_total(const void *a, const void *b)
{
    const gt_kernel_agg *x = *(const gt_kernel_agg *const *)a,
                        *y = *(const gt_kernel_agg *const *)b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static json_t *kernels_json(const gt_proc *p, int top_n)
{
    const gt_kernel_agg **order = malloc((p->n_kernels + 1) * sizeof *order);
    for (size_t i = 0; i < p->n_kernels; i++)
        order[i] = &p->kernels[i];
    qsort(order, p->n_kernels, sizeof *order, cmp_kernel_total);
    json_t *top = json_array();
    for (size_t i = 0; i < p->n_kernels && (top_n <= 0 || i < (size_t)top_n); i++) {
        const gt_kernel_agg *k = order[i];
        json_array_append_new(
            top, json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:I, s:b, s:s}", "name", k->name,
                           "mangled", k->mangled, "count", (json_int_t)k->count, "total_ms",
                           (double)k->total_ns / 1e6, "mean_us",
                           (double)k->total_ns / (double)k->count / 1e3, "max_us",
                           (double)k->max_ns / 1e3, "share_pct",
                           p->kernel_ns ? 100.0 * (double)k->total_ns / (double)p->kernel_ns : 0,
                           "short_count", (json_int_t)k->short_count, "nccl", k->is_nccl, "family",
                           gt_kernel_family_name(k->family)));
    }
    free(order);
    json_t *o = json_pack(
        "{s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:f, s:o}", "count", (json_int_t)p->kernel_count,
        "linked_by_pair", (json_int_t)p->kernels_by_pair, "linked_by_order",
        (json_int_t)p->kernels_by_order, "linked_by_time", (json_int_t)p->kernels_by_time,
        "total_ms", (double)p->kernel_ns / 1e6, "short_share_pct",
        p->kernel_count ? 100.0 * (double)p->short_kernel_count / (double)p->kernel_count : 0,
        "distinct", (json_int_t)p->n_kernels, "nccl_ms", (double)p->nccl_ns / 1e6, "top", top);
    /* only where library calls of several threads overlapped (order_link.h): absent, 0 */
    if (o && p->kernels_by_stream)
        json_object_set_new(o, "linked_by_stream", json_integer((json_int_t)p->kernels_by_stream));
    if (o && p->kernels_other_stream)
        json_object_set_new(o, "other_stream", json_integer((json_int_t)p->kernels_other_stream));
    return o;
}

static json_t *api_json(const gt_proc *p)
{
    json_t *arr = json_array();
    for (int f = 0; f < 256; f++) {
        const gt_api_agg *a = &p->api[f];
        if (!a->count)
            continue;
        const char *name = gt_api_func_name((uint32_t)f);
        json_array_append_new(
            arr, json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:I}", "function",
                           name ? name : gt_fmt("func#%d", f), "category",
                           gt_api_category_name(gt_api_func_category((uint32_t)f)), "calls",
                           (json_int_t)a->count, "total_ms", (double)a->total_ns / 1e6, "mean_us",
                           (double)a->total_ns / (double)a->count / 1e3, "max_us",
                           (double)a->max_ns / 1e3, "errors", (json_int_t)a->errors));
    }
    return arr;
}

static json_t *copies_json(const gt_proc *p)
{
    json_t *arr = json_array();
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++) {
            const gt_copy_agg *c = &p->copies[d][k];
            if (!c->count && !c->cpu_count)
                continue;
            uint64_t ns = p->copies_from_gpu ? c->gpu_ns : c->cpu_ns;
            const char *site = gt_proc_call_site(p, c->top_stack);
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:I, s:f, s:s, s:o}", "direction",
                               gt_memcpy_dir_name((uint8_t)d), "host_memory",
                               gt_mem_kind_name((uint8_t)k), "count", (json_int_t)c->count, "bytes",
                               (json_int_t)c->bytes, "ms", (double)ns / 1e6, "gbps",
                               ns ? (double)c->bytes / (double)ns : 0.0, "blocking_calls",
                               (json_int_t)c->blocking_count, "blocking_ms",
                               (double)c->blocking_ns / 1e6, "time_source",
                               p->copies_from_gpu ? "gpu" : "cpu", "top_call_site",
                               site ? json_string(site) : json_null()));
        }
    return arr;
}

static json_t *sync_json(const gt_proc *p)
{
    json_t *sites = json_array();
    for (size_t i = 0; i < p->n_sync_sites; i++) {
        const gt_site_agg *s = &p->sync_sites[i];
        const char *fn = gt_api_func_name(s->func);
        const char *site = gt_proc_call_site(p, s->stack_id);
        json_array_append_new(
            sites,
            json_pack("{s:s, s:o, s:I, s:f, s:f}", "function", fn ? fn : "?", "call_site",
                      site ? json_string(site) : json_null(), "count", (json_int_t)s->count,
                      "total_ms", (double)s->total_ns / 1e6, "max_ms", (double)s->max_ns / 1e6));
    }
    return json_pack("{s:f, s:I, s:f, s:s, s:o}", "total_ms", (double)p->sync_total_ns / 1e6,
                     "count", (json_int_t)p->sync_count, "ms_per_step", p->steady_sync_ms_per_step,
                     "source", p->syncs_from_cupti ? "cupti" : "wrappers", "sites", sites);
}

static json_t *choice_json(const gt_cudnn_choice *c)
{
    return json_pack("{s:s, s:s, s:b, s:I, s:f, s:f, s:I, s:f}", "engine", c->text, "notes",
                     c->notes ? c->notes : "", "tensor_cores", c->tensor_cores, "executions",
                     (json_int_t)c->execs, "gpu_ms", (double)c->gpu_ns / 1e6, "api_ms",
                     (double)c->api_ns / 1e6, "autotune_executions", (json_int_t)c->autotune_execs,
                     "autotune_ms", (double)c->autotune_ns / 1e6);
}

static json_t *ms_or_null(double ms)
{
    return ms >= 0 ? json_real(ms) : json_null();
}

/* What autotuning measured of the alternatives (issue 21 item 6), null when nothing was timed. */
static json_t *timing_json(const gt_cudnn_opstat *op)
{
    if (op->timed_source == GT_TIMED_NONE)
        return json_null();
    return json_pack("{s:s, s:i, s:s, s:o, s:o, s:o}", "source",
                     op->timed_source == GT_TIMED_FIND_TABLE ? "find_perf_table" : "trial_kernels",
                     "candidates", op->timed_candidates, "winner", op->timed_winner, "winner_ms",
                     ms_or_null(op->timed_winner_ms), "heuristic",
                     op->timed_heuristic[0] ? json_string(op->timed_heuristic) : json_null(),
                     "heuristic_ms", ms_or_null(op->timed_heuristic_ms));
}

json_t *gt_cudnn_op_json(const gt_proc *p, const gt_cudnn_opstat *op)
{
    json_t *choices = json_array();
    uint64_t execs = 0, gpu = 0, tune = 0;
    for (int c = 0; c < op->n_choices; c++) {
        json_array_append_new(choices, choice_json(&op->choices[c]));
        execs += op->choices[c].execs;
        gpu += op->choices[c].gpu_ns;
        tune += op->choices[c].autotune_ns;
    }
    const char *site = gt_proc_call_site(p, op->stack_id);
    return json_pack("{s:o, s:s, s:s, s:s, s:s, s:b, s:o, s:I, s:f, s:f, s:I, s:I, s:I, s:o, s:o}",
                     "autotune_timing", timing_json(op), "signature", op->signature, "op",
                     gt_cudnn_op_name(op->op_kind), "dtype", gt_cudnn_dtype_name(op->dtype), "mode",
                     gt_cudnn_mode(op), "inferred", op->inferred, "chosen",
                     op->chosen >= 0 ? choice_json(&op->choices[op->chosen]) : json_null(),
                     "executions", (json_int_t)execs, "gpu_ms", (double)gpu / 1e6, "autotune_ms",
                     (double)(tune + op->find_ns) / 1e6, "plans", (json_int_t)op->plans,
                     "find_calls", (json_int_t)op->find_calls, "get_calls",
                     (json_int_t)op->get_calls, "choices", choices, "call_site",
                     site ? json_string(site) : json_null());
}

static json_t *gemms_json(const gt_proc *p)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < p->n_gemms; i++) {
        const gt_gemm_agg *g = &p->gemms[i];
        const char *fn = gt_api_func_name(g->func);
        json_array_append_new(
            arr, json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:i, s:I, s:f, s:f}", "function",
                           fn ? fn : "?", "m", (json_int_t)g->m, "n", (json_int_t)g->n, "k",
                           (json_int_t)g->k, "batch", (json_int_t)g->batch, "atype", g->atype,
                           "compute_type", g->compute_type, "count", (json_int_t)g->count, "api_ms",
                           (double)g->api_ns / 1e6, "gpu_ms", (double)g->gpu_ns / 1e6));
    }
    return arr;
}

/* GPU sampling (GPUTRACE_SAMPLE): the windows, and the run totals the GPU records extrapolate
 * to; the other GPU figures of the process are over the windows (docs/report-schema.md). */
static json_t *sampling_json(const gt_proc *p)
{
    uint64_t bytes = 0;
    for (int d = 0; d < 5 && p->copies_from_gpu; d++)
        for (int k = 0; k < 6; k++)
            bytes += p->copies[d][k].bytes;
    json_t *est = json_pack("{s:f, s:f, s:f, s:f}", "gpu_busy_ms",
                            gt_proc_gpu_total(p, (double)p->gpu_busy_ns / 1e6), "kernel_count",
                            gt_proc_gpu_total(p, (double)p->kernel_count), "kernel_ms",
                            gt_proc_gpu_total(p, (double)p->kernel_ns / 1e6), "gpu_copied_mb",
                            gt_proc_gpu_total(p, (double)bytes / 1e6));
    return json_pack("{s:I, s:f, s:f, s:f, s:I, s:I, s:f, s:b, s:o}", "windows",
                     (json_int_t)p->n_gpu_windows, "window_ms", (double)p->gpu_window_ns / 1e6,
                     "coverage_pct", gt_proc_gpu_coverage_pct(p), "extrapolation",
                     p->gpu_extrapolation, "steps_in_windows", (json_int_t)p->gpu_steps, "steps",
                     (json_int_t)p->n_steps, "steady_steps_in_windows", p->steady_gpu_steps,
                     "per_step_available", !p->gpu_per_step_unavailable && p->gpu_window_ns,
                     "estimated_run_totals", est);
}

json_t *gt_proc_to_json(const gt_proc *p, int top_n)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", json_string(p->path ? p->path : ""));
    if (p->open_status != 0) {
        json_object_set_new(o, "error", json_string(p->open_error));
        return o;
    }
    json_t *cudnn = json_array();
    for (size_t i = 0; i < p->n_cudnn; i++)
        json_array_append_new(cudnn, gt_cudnn_op_json(p, &p->cudnn[i]));
    json_object_update_new(
        o, json_pack("{s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:o, s:o, s:s, s:f, s:I, s:I, "
                     "s:b, s:I, s:f, s:b}",
                     "pid", p->hdr.pid, "ppid", p->hdr.ppid, "rank", p->hdr.rank, "local_rank",
                     p->hdr.local_rank, "world_size", p->hdr.world_size, "host",
                     p->host ? p->host : "", "exe", p->exe ? p->exe : "", "command",
                     p->cmdline ? p->cmdline : "", "devices", devices_json(&p->hdr.runtime),
                     "versions", versions_json(&p->hdr.runtime), "cupti_state",
                     gt_cupti_state_name(p->hdr.runtime.cupti_state), "duration_ms",
                     gt_proc_duration_ms(p), "records", (json_int_t)p->records, "records_lost",
                     (json_int_t)(p->records_lost + p->cupti_dropped), "damaged", p->damaged,
                     "chunks_damaged", (json_int_t)(p->chunks_damaged + p->chunk_seq_gaps),
                     "cupti_overhead_ms", (double)p->cupti_overhead_ns / 1e6, "static_cudart",
                     (p->hdr.flags & GT_HDR_STATIC_CUDART) != 0));
    json_object_set_new(o, "calls_before_cupti", json_integer((json_int_t)p->calls_before_cupti));
    json_object_set_new(o, "frameworks", frameworks_json(p));
    json_object_set_new(o, "steps", steps_json(p));
    gt_phases_json_add(o, p);
    json_object_set_new(o, "gpu", gpu_json(p));
    if (p->gpu_sampled) /* only then: a full trace's report stays as it was */
        json_object_set_new(o, "gpu_sampling", sampling_json(p));
    json_object_set_new(o, "kernels", kernels_json(p, top_n));
    json_object_set_new(o, "api", api_json(p));
    json_object_set_new(o, "copies", copies_json(p));
    json_object_set_new(o, "unified_memory", gt_um_json(p));
    json_object_set_new(o, "sync", sync_json(p));
    json_object_set_new(o, "cudnn", cudnn);
    json_object_set_new(o, "cudnn_calls_seen", json_boolean(p->cudnn_calls_seen > 0));
    json_object_set_new(o, "gemms", gemms_json(p));
    json_object_set_new(o, "machine_peaks", gt_peaks_json(p));
    return o;
}
