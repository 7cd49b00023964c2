/* report_text.c — the full text report of `gputrace report` (and the file `record` writes): the
 * verdict, then per process its run, steps, phases, GPU time, kernels, API calls, copies, sync
 * stalls and cuDNN choices, the ranks, and the advice with its evidence.
 *
 * Composed in memory, then fitted to the terminal in one place (textfmt.h, issue 32): tables give
 * way in their name columns, prose wraps under its label, nothing is cut inside a name. Every long
 * table lists --top rows and says how many more there are. Figures go through textfmt's helpers
 * so a duration, a count or a share reads the same in every section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gtrace_api.h"
#include "peaks.h"
#include "report_out.h"
#include "report_text.h"
#include "report_verdict.h"
#include "textfmt.h"
#include "util.h"

#define MORE_HINT " (--top 0 lists all)"

static void section(FILE *out, int color, const char *title)
{
    fprintf(out, "\n%s== %s ==%s\n", gt_bold(color), title, gt_color_reset(color));
}

static const char *version_text(int v, int cudnn)
{
    if (v <= 0)
        return "-";
    if (cudnn)
        return gt_fmt("%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    return gt_fmt("%d.%d", v / 1000, (v % 1000) / 10);
}

/* A duration that is zero reads "none" ("NCCL none"), not "0.0 µs". */
static const char *dur_or_none(double ms)
{
    return ms > 0 ? gt_dur(ms) : "none";
}

static const char *ns_dur(uint64_t ns)
{
    return gt_dur((double)ns / 1e6);
}

/* The kernel launched most often by calls gputrace does not wrap: says which library's they are. */
static void print_top_unlinked(const gt_proc *p, FILE *out)
{
    const gt_kernel_agg *top = NULL;
    for (size_t i = 0; i < p->n_kernels; i++)
        if (p->kernels[i].unlinked && (!top || p->kernels[i].unlinked > top->unlinked))
            top = &p->kernels[i];
    if (top)
        fprintf(out, "            most often %s (%s)\n",
                gt_short_name(top->name ? top->name : "?", 70, GT_NAME_KERNEL),
                gt_counted((double)top->unlinked, "time", "times"));
}

static void print_links(const gt_proc *p, FILE *out)
{
    uint64_t linked = p->kernels_by_pair + p->kernels_by_order + p->kernels_by_time;
    fprintf(out, "  links     %llu of %llu kernels traced to the call that launched them",
            (unsigned long long)linked, (unsigned long long)p->kernel_count);
    if (p->kernels_by_order && p->kernels_by_stream)
        fprintf(out, " (%llu by the order of their launches, %llu told apart by stream)",
                (unsigned long long)p->kernels_by_order, (unsigned long long)p->kernels_by_stream);
    else if (p->kernels_by_order)
        fprintf(out, " (%llu by the order of their launches)",
                (unsigned long long)p->kernels_by_order);
    if (p->kernels_by_time)
        fprintf(out, " (%llu by the time they were queued)",
                (unsigned long long)p->kernels_by_time);
    /* Kernels inside the bounds of several threads' calls came from a wrapped call, one of them:
     * not from a call no wrapper sees. */
    uint64_t unlinked = p->kernel_count > linked ? p->kernel_count - linked : 0;
    uint64_t ambiguous = p->kernels_ambiguous < unlinked ? p->kernels_ambiguous : unlinked;
    if (ambiguous)
        fprintf(out, "; %llu from calls made at once on several threads, not told apart",
                (unsigned long long)ambiguous);
    if (unlinked > ambiguous)
        fprintf(out, "; %llu launched by calls gputrace does not wrap",
                (unsigned long long)(unlinked - ambiguous));
    /* inside library calls' anchors on a stream none of them used: not theirs (order_link.h);
     * a launch took them, or they are counted just above */
    if (p->kernels_other_stream)
        fprintf(out, "; %llu inside library calls on other streams, not theirs",
                (unsigned long long)p->kernels_other_stream);
    fputc('\n', out);
    print_top_unlinked(p, out);
}

static void print_run(const gt_proc *p, FILE *out)
{
    const gt_runtime_info *rt = &p->hdr.runtime;
    fprintf(out, "  file      %s\n", p->path);
    fprintf(out, "  command   %s\n", p->cmdline && p->cmdline[0] ? p->cmdline : p->exe);
    fprintf(out, "  process   %s on %s", gt_proc_label(p), p->host);
    if (p->hdr.world_size > 0)
        fprintf(out, ", world size %d", p->hdr.world_size);
    fputc('\n', out);
    for (int i = 0; i < rt->device_count && i < GT_MAX_DEVICES; i++)
        fprintf(out, "  GPU %-5d %s (cc %d.%d, %d SMs, %.0f GiB)\n", rt->devices[i].ordinal,
                rt->devices[i].name, rt->devices[i].cc_major, rt->devices[i].cc_minor,
                rt->devices[i].sm_count, (double)rt->devices[i].total_mem_bytes / (1 << 30));
    fprintf(out, "  versions  driver %s, runtime %s, cuDNN %s (built for CUDA %s), cuBLAS %s\n",
            version_text(rt->driver_version, 0), version_text(rt->runtime_version, 0),
            version_text(rt->cudnn_version, 1), version_text(rt->cudnn_cudart_version, 0),
            version_text(rt->cublas_version, 1)); /* cuBLAS counts as cuDNN: 130100 = 13.1.0 */
    uint64_t lost = p->records_lost + p->cupti_dropped;
    fprintf(out, "  duration  %s, %llu records, %s%s, CUPTI %s", gt_dur(gt_proc_duration_ms(p)),
            (unsigned long long)p->records,
            lost ? gt_fmt("%llu lost", (unsigned long long)lost) : "none lost",
            p->damaged ? " (file damaged)" : "", gt_cupti_state_name(rt->cupti_state));
    if (p->calls_before_cupti)
        fprintf(out, " (attached after %llu calls that gave the GPU work: theirs is not recorded)",
                (unsigned long long)p->calls_before_cupti);
    if (p->cupti_overhead_ns)
        fprintf(
            out, ", CUPTI's own overhead %s (%s)", ns_dur(p->cupti_overhead_ns),
            gt_pct(100.0 * (double)p->cupti_overhead_ns / 1e6 / (gt_proc_duration_ms(p) + 1e-9)));
    fputc('\n', out);
    if (p->kernel_count)
        print_links(p, out);
    gt_sample_print_run(p, out); /* GPUTRACE_SAMPLE: the windows the GPU figures come from */
    if (p->hdr.flags & GT_HDR_STATIC_CUDART)
        fprintf(out, "  note      the CUDA runtime is linked statically: no wrapper saw its calls; "
                     "CUPTI's callbacks recorded its kernel launches\n");
    if (p->hdr.flags & GT_HDR_OTHER_PROFILER)
        fprintf(out,
                "  note      another profiler (torch.profiler, nsys...) was refused CUPTI while "
                "gputrace held it: it recorded no GPU activity (docs/limits.md)\n");
}

static void print_steps(const gt_proc *p, FILE *out)
{
    if (p->n_steps < 2) {
        fprintf(out, "  no repeating steps found; the second half of the run stands for the "
                     "steady state\n");
        if (p->step_why[0])
            fprintf(out, "  why       %s\n", p->step_why);
        return;
    }
    fprintf(out, "  %zu steps from %s\n", p->n_steps, p->step_source);
    if (p->step_why[0])
        fprintf(out, "  why       %s\n", p->step_why);
    fprintf(out, "  warm-up   %s, %s\n", gt_counted((double)p->warmup_steps, "step", "steps"),
            gt_dur(p->warmup_ms_total));
    fprintf(out, "  steady    median %s, min %s, mean %s per step\n", gt_dur(p->step_ms_median),
            gt_dur(p->step_ms_min), gt_dur(p->step_ms_mean_steady));
    fprintf(out, "  per step  sync %s, copies %s, NCCL %s, %s allocation calls\n",
            dur_or_none(p->steady_sync_ms_per_step), dur_or_none(p->steady_copy_ms_per_step),
            p->gpu_per_step_unavailable ? "unavailable (GPU sampled)"
                                        : dur_or_none(p->steady_nccl_ms_per_step),
            gt_mean(p->steady_alloc_per_step));
}

/* The steady window's idle time by what the CPU was doing, largest first (model_idle.c). */
static void print_idle_by_cause(const gt_proc *p, FILE *out)
{
    uint64_t total = 0;
    int order[GT_IDLE_CAUSE_COUNT], n = 0;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++) {
        total += p->steady_idle_cause_ns[c];
        if (p->steady_idle_cause_ns[c])
            order[n++] = c;
    }
    if (!total)
        return;
    for (int i = 1; i < n; i++)
        for (int j = i;
             j > 0 && p->steady_idle_cause_ns[order[j]] > p->steady_idle_cause_ns[order[j - 1]];
             j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    int steps = p->n_steps >= 2;
    fprintf(out, "  by cause  %s:", steps ? "steady state, per step" : "steady state");
    for (int i = 0; i < n; i++)
        fprintf(
            out, "%s %s %s (%s)", i ? "," : "", gt_idle_cause_name(order[i]),
            gt_dur((double)p->steady_idle_cause_ns[order[i]] / 1e6 / (steps ? p->steady_steps : 1)),
            gt_pct(100.0 * (double)p->steady_idle_cause_ns[order[i]] / (double)total));
    fputc('\n', out);
}

static void print_gpu(const gt_proc *p, FILE *out)
{
    if (!p->gpu_busy_ns) {
        fprintf(out, "  no GPU activity recorded%s\n",
                p->gpu_sampled ? " in the sampled windows" : "");
        return;
    }
    if (p->gpu_sampled)
        gt_sample_print_busy(p, out);
    else
        fprintf(out, "  busy      %s of %s (steady state %s)\n", gt_pct(gt_proc_busy_pct(p)),
                ns_dur(p->gpu_last_ns - p->gpu_first_ns), gt_pct(p->steady_busy_pct));
    /* busy % over time: 40 columns from the 200 bins ('~': outside the sampled windows) */
    fprintf(out, "  timeline  |");
    for (int c = 0; c < 40; c++)
        fputs(gt_sample_column(p, c * 5, 5), out);
    fprintf(out, "|  (%s per column; ' ' idle .. '#' busy%s)\n", ns_dur(5 * p->bin_ns),
            p->gpu_sampled ? ", '~' not recorded" : "");
    uint64_t span = p->gpu_sampled ? p->gpu_span_ns : p->gpu_last_ns - p->gpu_first_ns;
    fprintf(out, "  idle      %s: %s of %s or more, %s in shorter gaps\n",
            ns_dur(span - p->gpu_busy_ns), gt_counted((double)p->n_gaps, "gap", "gaps"),
            gt_dur_ns(GT_GAP_MIN_NS), ns_dur(p->small_gap_ns));
    if (p->merged_idle_gaps)
        fprintf(out,
                "  note      a run this long has more GPU busy intervals than the analysis keeps "
                "(%zu): %s of up to %s (%s in all) were merged into them to bound memory, and are "
                "counted back as short idle gaps by where they fell, to within %s\n",
                (size_t)p->intervals_max,
                gt_counted((double)p->merged_idle_gaps, "idle gap", "idle gaps"),
                gt_dur_ns(p->merged_gap_max_ns), ns_dur(p->merged_idle_ns),
                ns_dur(p->merged_placed_ns));
    fprintf(out,
            "  in gaps   the CPU was blocked in a sync %s, copying %s, launching %s, allocating "
            "%s, in other CUDA calls %s, in no CUDA call %s (by cause below)\n",
            ns_dur(p->idle_sync_ns), ns_dur(p->idle_copy_ns), ns_dur(p->idle_launch_ns),
            ns_dur(p->idle_alloc_ns), ns_dur(p->idle_other_ns), ns_dur(p->idle_unexplained_ns));
    print_idle_by_cause(p, out);
}

static int cmp_kernel(const void *a, const void *b)
{
    const gt_kernel_agg *x = *(const gt_kernel_agg *const *)a,
                        *y = *(const gt_kernel_agg *const *)b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static void print_kernels(const gt_proc *p, FILE *out, int top_n)
{
    if (!p->kernel_count) {
        fprintf(out, "  no kernels recorded\n");
        return;
    }
    if (p->gpu_sampled)
        gt_sample_print_kernels(p, out);
    else
        fprintf(out, "  %llu kernels (%zu distinct), %s; %s run under 10 \xc2\xb5s\n",
                (unsigned long long)p->kernel_count, p->n_kernels, ns_dur(p->kernel_ns),
                gt_pct(100.0 * (double)p->short_kernel_count / (double)p->kernel_count));
    const gt_kernel_agg **order = gt_xmalloc((p->n_kernels + 1) * sizeof *order);
    for (size_t i = 0; i < p->n_kernels; i++)
        order[i] = &p->kernels[i];
    qsort(order, p->n_kernels, sizeof *order, cmp_kernel);
    static const char *const hdr[] = {"total", "share", "count", "mean", "max", "kernel"};
    gt_table t;
    gt_table_init(&t, 6, hdr);
    for (int c = 0; c < 5; c++)
        t.right[c] = 1;
    t.shrink[5] = 1;
    t.max_width[5] = 90;
    t.name_flags[5] = GT_NAME_KERNEL;
    t.limit = top_n > 0 ? (size_t)top_n : 0;
    t.more = MORE_HINT;
    for (size_t i = 0; i < p->n_kernels; i++) {
        const gt_kernel_agg *k = order[i];
        gt_table_row(&t, ns_dur(k->total_ns),
                     gt_pct(100.0 * (double)k->total_ns / (double)p->kernel_ns),
                     gt_fmt("%llu", (unsigned long long)k->count),
                     gt_dur_ns((double)k->total_ns / (double)k->count), ns_dur(k->max_ns), k->name);
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(order);
}

static int cmp_api(const void *a, const void *b)
{
    const gt_api_agg *x = *(const gt_api_agg *const *)a, *y = *(const gt_api_agg *const *)b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static void print_api(const gt_proc *p, FILE *out, int top_n)
{
    static const char *const hdr[] = {"function", "calls", "total", "mean", "max", "errors"};
    const gt_api_agg *order[256];
    size_t n = 0;
    for (int f = 0; f < 256; f++)
        if (p->api[f].count)
            order[n++] = &p->api[f];
    qsort(order, n, sizeof *order, cmp_api);
    gt_table t;
    gt_table_init(&t, 6, hdr);
    for (int c = 1; c < 6; c++)
        t.right[c] = 1;
    t.limit = top_n > 0 ? (size_t)top_n : 0;
    t.more = MORE_HINT;
    for (size_t i = 0; i < n; i++) {
        const gt_api_agg *a = order[i];
        int f = (int)(a - p->api);
        const char *name = gt_api_func_name((uint32_t)f);
        gt_table_row(&t, name ? name : gt_fmt("func#%d", f),
                     gt_fmt("%llu", (unsigned long long)a->count), ns_dur(a->total_ns),
                     gt_dur_ns((double)a->total_ns / (double)a->count), ns_dur(a->max_ns),
                     a->errors
                         ? gt_fmt("%llu (first %d)", (unsigned long long)a->errors, a->first_error)
                         : "0");
    }
    if (t.nrows > 1)
        gt_table_print(&t, out, "  ");
    else if (p->gpu_api_records)
        fprintf(out, "  no wrapped calls; CUPTI recorded %llu runtime/driver API calls\n",
                (unsigned long long)p->gpu_api_records);
    else
        fprintf(out, "  no API calls recorded\n");
    gt_table_free(&t);
}

static void print_copies(const gt_proc *p, FILE *out, int top_n)
{
    static const char *const hdr[] = {"direction", "host memory", "count",    "MB",
                                      "time",      "GB/s",        "blocking", "call site"};
    gt_table t;
    gt_table_init(&t, 8, hdr);
    for (int c = 2; c < 7; c++)
        t.right[c] = 1;
    t.shrink[7] = 1;
    t.limit = top_n > 0 ? (size_t)top_n : 0;
    t.more = MORE_HINT;
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++) {
            const gt_copy_agg *c = &p->copies[d][k];
            if (!c->count && !c->cpu_count)
                continue;
            uint64_t ns = p->copies_from_gpu ? c->gpu_ns : c->cpu_ns;
            const char *site = gt_proc_call_site(p, c->top_stack);
            gt_table_row(&t, gt_memcpy_dir_name((uint8_t)d),
                         d == GT_DIR_D2D ? "-" : gt_mem_kind_name((uint8_t)k),
                         gt_fmt("%llu", (unsigned long long)c->count),
                         gt_fmt("%.2f", (double)c->bytes / 1e6), ns_dur(ns),
                         gt_fmt("%.2f", ns ? (double)c->bytes / (double)ns : 0.0),
                         gt_fmt("%llu", (unsigned long long)c->blocking_count), site ? site : "");
        }
    if (t.nrows > 1) {
        gt_table_print(&t, out, "  ");
        fprintf(out, "  (times from %s)\n",
                p->copies_from_gpu ? "the GPU (CUPTI)" : "the CPU calls (no CUPTI copy records)");
        gt_sample_print_copies(p, out);
        gt_peaks_print_copies(p, out);
    } else {
        fprintf(out, "  no copies recorded\n");
    }
    gt_table_free(&t);
}

static int cmp_site(const void *a, const void *b)
{
    const gt_site_agg *x = a, *y = b;
    return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : 0;
}

static void print_sync(const gt_proc *p, FILE *out, int top_n)
{
    fprintf(
        out, "  %s, %s in all (%s)\n",
        gt_counted((double)p->sync_count, "blocking synchronization", "blocking synchronizations"),
        ns_dur(p->sync_total_ns),
        !p->syncs_from_cupti ? "from the wrapped calls"
        : p->gpu_sampled     ? "from CUPTI, in the sampled windows only: no wrapper saw them"
                             : "from CUPTI: no wrapper saw them");
    if (!p->n_sync_sites)
        return;
    gt_site_agg *sites = gt_xmalloc(p->n_sync_sites * sizeof *sites);
    memcpy(sites, p->sync_sites, p->n_sync_sites * sizeof *sites);
    qsort(sites, p->n_sync_sites, sizeof *sites, cmp_site);
    static const char *const hdr[] = {"total", "count", "max", "function", "call site"};
    gt_table t;
    gt_table_init(&t, 5, hdr);
    t.right[0] = t.right[1] = t.right[2] = 1;
    t.shrink[4] = 1;
    t.limit = top_n > 0 ? (size_t)top_n : 0;
    t.more = MORE_HINT;
    for (size_t i = 0; i < p->n_sync_sites; i++) {
        const char *fn = gt_api_func_name(sites[i].func);
        const char *site = gt_proc_call_site(p, sites[i].stack_id);
        gt_table_row(&t, ns_dur(sites[i].total_ns),
                     gt_fmt("%llu", (unsigned long long)sites[i].count), ns_dur(sites[i].max_ns),
                     fn ? fn : "?",
                     site ? site
                          : (sites[i].stack_id ? gt_fmt("stack #%u", sites[i].stack_id)
                                               : "(no stack recorded)"));
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(sites);
}

typedef struct cudnn_row {
    const gt_cudnn_opstat *op;
    uint64_t execs, gpu_ns, tune_ns;
} cudnn_row;

static int cmp_cudnn_row(const void *a, const void *b)
{
    const cudnn_row *x = a, *y = b;
    uint64_t kx = x->gpu_ns + x->tune_ns, ky = y->gpu_ns + y->tune_ns;
    return kx < ky ? 1 : kx > ky ? -1 : 0;
}

static void print_gemms(const gt_proc *p, FILE *out, int top_n)
{
    static const char *const gh[] = {"function", "m", "n", "k", "batch", "calls", "GPU time"};
    gt_table g;
    gt_table_init(&g, 7, gh);
    for (int c = 1; c < 7; c++)
        g.right[c] = 1;
    g.limit = top_n > 0 ? (size_t)top_n : 0;
    g.more = MORE_HINT;
    for (size_t i = 0; i < p->n_gemms; i++) {
        const gt_gemm_agg *m = &p->gemms[i];
        const char *fn = gt_api_func_name(m->func);
        gt_table_row(&g, fn ? fn : "?", gt_fmt("%lld", (long long)m->m),
                     gt_fmt("%lld", (long long)m->n), gt_fmt("%lld", (long long)m->k),
                     gt_fmt("%lld", (long long)m->batch),
                     gt_fmt("%llu", (unsigned long long)m->count), ns_dur(m->gpu_ns));
    }
    fprintf(out, "  cuBLAS GEMMs:\n");
    gt_table_print(&g, out, "  ");
    gt_table_free(&g);
    gt_peaks_print_gemms(p, out);
}

static void print_cudnn(const gt_proc *p, FILE *out, int top_n)
{
    if (!p->n_cudnn) {
        fprintf(out, "  no cuDNN convolutions seen\n");
    } else {
        if (!p->cudnn_calls_seen)
            fprintf(out, "  no cuDNN call was seen: families INFERRED from kernel names\n");
        if (p->gpu_sampled)
            fprintf(out, "  (GPU time: the kernels of the sampled windows only; calls and "
                         "autotuning: the whole run)\n");
        cudnn_row *rows = gt_xcalloc(p->n_cudnn, sizeof *rows);
        for (size_t i = 0; i < p->n_cudnn; i++) {
            const gt_cudnn_opstat *op = &p->cudnn[i];
            rows[i] = (cudnn_row){op, 0, 0, op->find_ns};
            for (int c = 0; c < op->n_choices; c++) {
                rows[i].execs += op->choices[c].execs;
                rows[i].gpu_ns += op->choices[c].gpu_ns;
                rows[i].tune_ns += op->choices[c].autotune_ns;
            }
        }
        qsort(rows, p->n_cudnn, sizeof *rows, cmp_cudnn_row); /* the costliest first */
        static const char *const hdr[] = {"op signature", "mode",   "choice", "execs",
                                          "GPU time",     "tuning", "plans",  "notes"};
        gt_table t;
        gt_table_init(&t, 8, hdr);
        t.max_width[0] = 80;
        t.shrink[0] = 1;
        t.name_flags[0] = t.name_flags[7] = GT_NAME_TAIL; /* shapes first, layout and type last */
        t.under = 8; /* the engine's notes and knobs under their row when the line is narrow */
        for (int c = 3; c < 7; c++)
            t.right[c] = 1;
        t.limit = top_n > 0 ? (size_t)top_n : 0;
        t.more = MORE_HINT;
        for (size_t i = 0; i < p->n_cudnn; i++) {
            const gt_cudnn_opstat *op = rows[i].op;
            const gt_cudnn_choice *ch = op->chosen >= 0 ? &op->choices[op->chosen] : NULL;
            gt_table_row(&t, op->signature, gt_cudnn_mode(op), ch ? ch->text : "-",
                         gt_fmt("%llu", (unsigned long long)rows[i].execs), ns_dur(rows[i].gpu_ns),
                         rows[i].tune_ns ? ns_dur(rows[i].tune_ns) : "-",
                         gt_fmt("%llu", (unsigned long long)op->plans),
                         ch && ch->notes ? ch->notes : "");
        }
        gt_table_print(&t, out, "  ");
        gt_table_free(&t);
        free(rows);
        if (p->autotune_ns)
            fprintf(out, "  autotuning cost: %s of CPU time in Find calls and trial executions\n",
                    ns_dur(p->autotune_ns));
    }
    if (p->n_gemms)
        print_gemms(p, out, top_n);
}

static void print_ranks(const gt_run *run, FILE *out, int color)
{
    int ranked = 0;
    for (size_t i = 0; i < run->n; i++)
        ranked += run->procs[i].hdr.rank >= 0 && gt_proc_has_data(&run->procs[i]);
    if (ranked < 2)
        return;
    section(out, color, "ranks");
    static const char *const hdr[] = {"rank", "host", "step",     "NCCL", "sync",
                                      "copy", "idle", "GPU busy", "late", "waits"};
    gt_table t;
    gt_table_init(&t, 10, hdr);
    for (int c = 2; c < 10; c++)
        t.right[c] = 1;
    t.right[0] = 1;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->hdr.rank < 0 || !gt_proc_has_data(p))
            continue;
        /* 8 of textfmt's 16 buffers in one row */
        gt_table_row(&t, gt_fmt("%d", p->hdr.rank), p->host,
                     p->n_steps >= 2 ? gt_dur(p->step_ms_median) : "-",
                     gt_dur(p->steady_nccl_ms_per_step), gt_dur(p->steady_sync_ms_per_step),
                     gt_dur(p->steady_copy_ms_per_step), gt_dur(gt_adv_idle_ms(p)),
                     gt_pct(p->steady_busy_pct),
                     p->coll_matched ? gt_dur(p->coll_late_ms_per_step) : "-",
                     p->coll_matched ? gt_dur(p->coll_wait_ms_per_step) : "-");
    }
    gt_table_print(&t, out, "  ");
    fprintf(out, "  (per steady step; idle is the verdict's GPU idle, all causes; late: arriving "
                 "last at the collectives, by how much; waits: for a later rank in them)\n");
    gt_table_free(&t);
}

/* Processes without CUDA activity (run->notes: the .procs lines of the run folders, and trace
 * files without CUDA records from older recordings) take one line, "3 other processes without
 * CUDA activity: bash x2, ptxas", by executable, most frequent first: a JAX run leaves hundreds. */
static void print_quiet_processes(const gt_run *run, FILE *out)
{
    size_t n_quiet = 0, n_names = 0;
    const char **names = gt_xcalloc(run->n_notes + 1, sizeof *names);
    size_t *counts = gt_xcalloc(run->n_notes + 1, sizeof *counts);
    int any_cuda = 0;
    for (size_t i = 0; i < run->n; i++)
        any_cuda |= gt_proc_has_data(&run->procs[i]);
    for (size_t i = 0; i < run->n_notes; i++) {
        const gt_proc_note *p = &run->notes[i];
        if (!p->quiet)
            continue;
        n_quiet++;
        const char *exe = p->exe && *p->exe ? p->exe : "?";
        const char *slash = strrchr(exe, '/');
        const char *name = slash ? slash + 1 : exe;
        size_t k = 0;
        while (k < n_names && strcmp(names[k], name))
            k++;
        if (k == n_names)
            names[n_names++] = name;
        counts[k]++;
    }
    if (n_quiet) {
        fprintf(out, "\n%zu %sprocess%s without CUDA activity:", n_quiet, any_cuda ? "other " : "",
                n_quiet == 1 ? "" : "es");
        for (size_t shown = 0; shown < n_names && shown < 8; shown++) {
            size_t best = shown; /* selection by count: a few distinct names */
            for (size_t k = shown + 1; k < n_names; k++)
                if (counts[k] > counts[best])
                    best = k;
            const char *tn = names[shown];
            size_t tc = counts[shown];
            names[shown] = names[best], counts[shown] = counts[best];
            names[best] = tn, counts[best] = tc;
            fprintf(out, "%s %s", shown ? "," : "", names[shown]);
            if (counts[shown] > 1)
                fprintf(out, " x%zu", counts[shown]);
        }
        fprintf(out, "%s\n", n_names > 8 ? ", ..." : "");
    }
    free(names);
    free(counts);
}

/* The verdict first: the lines a user reads before anything else (report_verdict.c). */
static void print_verdict(const gt_run *run, const gt_advice_list *adv, FILE *out, int color)
{
    gt_verdict v;
    gt_verdict_build(run, adv, &v);
    if (gt_verdict_print(&v, out, color))
        fputc('\n', out);
}

static void print_process(const gt_proc *p, FILE *out, int top_n, int color)
{
    section(out, color, "run");
    print_run(p, out);
    section(out, color, "steps");
    print_steps(p, out);
    gt_phases_print(p, out);
    section(out, color, "GPU time");
    print_gpu(p, out);
    section(out, color, "kernels");
    print_kernels(p, out, top_n);
    section(out, color, "API calls");
    print_api(p, out, top_n);
    section(out, color, "copies");
    print_copies(p, out, top_n);
    if (gt_um_seen(p)) {
        section(out, color, "unified memory");
        gt_um_print(p, out);
    }
    section(out, color, "sync stalls");
    print_sync(p, out, top_n);
    section(out, color, "cuDNN");
    print_cudnn(p, out, top_n);
}

static int any_cuda(const gt_run *run)
{
    for (size_t i = 0; i < run->n; i++)
        if (gt_proc_has_data(&run->procs[i]))
            return 1;
    return 0;
}

static void compose_full(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n,
                         int color)
{
    print_verdict(run, adv, out, color);
    size_t shown = 0;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->open_status != 0 || !gt_proc_has_data(p))
            continue;
        fprintf(out, "%s%sgputrace report: %s%s\n", shown++ ? "\n" : "", gt_bold(color),
                gt_proc_label(p), gt_color_reset(color));
        print_process(p, out, top_n, color);
    }
    if (!shown) /* nothing but quiet processes: still say what each file is */
        for (size_t i = 0; i < run->n; i++)
            if (run->procs[i].open_status == 0) {
                fprintf(out, "%s%sgputrace report: %s%s\n", shown++ ? "\n" : "", gt_bold(color),
                        gt_proc_label(&run->procs[i]), gt_color_reset(color));
                section(out, color, "run");
                print_run(&run->procs[i], out);
            }
    print_quiet_processes(run, out);
    print_ranks(run, out, color);
    section(out, color, "advice");
    if (any_cuda(run))
        gt_advice_print(adv, out, color, "  ");
    else
        fprintf(out,
                "  No advice: no CUDA activity was recorded (did the program use the GPU?).\n");
}

typedef struct full_ctx {
    const gt_run *run;
    const gt_advice_list *adv;
    int top_n, color;
} full_ctx;

static void compose_full_cb(void *ctx, FILE *out)
{
    const full_ctx *f = ctx;
    compose_full(f->run, f->adv, out, f->top_n, f->color);
}

int gt_report_text(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n, int color)
{
    full_ctx f = {run, adv, top_n, color};
    return gt_print_fitted(out, compose_full_cb, &f);
}

/* ------------------------------------------------------------------ the short form (record) */

typedef struct brief_ctx {
    const gt_run *run;
    const gt_advice_list *adv;
    const gt_advice *item;
    int color;
    size_t from; /* the advice not shown, from this index on */
} brief_ctx;

static void brief_verdict(void *ctx, FILE *out)
{
    brief_ctx *b = ctx;
    gt_verdict v;
    gt_verdict_build(b->run, b->adv, &v);
    if (!gt_verdict_print(&v, out, b->color))
        fprintf(out, "No CUDA activity was recorded (did the program use the GPU?).\n");
}

static void brief_item(void *ctx, FILE *out)
{
    brief_ctx *b = ctx;
    gt_advice_print_one(b->item, out, b->color, "  ", 0);
}

static void brief_rest(void *ctx, FILE *out)
{
    brief_ctx *b = ctx;
    fprintf(out, "  also:");
    for (size_t i = b->from; i < b->adv->n; i++)
        fprintf(out, "%s %s (%s)", i > b->from ? "," : "", b->adv->items[i].id,
                gt_severity_name(b->adv->items[i].severity));
    fprintf(out, " \xe2\x80\x94 in the full report\n");
}

int gt_report_brief(const gt_run *run, const gt_advice_list *adv, FILE *out, int color,
                    int max_lines)
{
    int width = gt_text_width(out), lines = 0, n;
    brief_ctx b = {run, adv, NULL, color, 0};
    char *text = gt_fitted(brief_verdict, &b, width, &n);
    if (text) {
        fputs(text, out);
        lines += n;
    }
    free(text);
    if (adv->n && any_cuda(run)) {
        fprintf(out, "\n%sadvice%s\n", gt_bold(color), gt_color_reset(color));
        lines += 2;
        for (b.from = 0; b.from < adv->n; b.from++) {
            b.item = &adv->items[b.from];
            text = gt_fitted(brief_item, &b, width, &n);
            /* the first item always; the others while they and the "also" line fit */
            int room = b.from + 1 < adv->n ? 1 : 0;
            if (text && (b.from == 0 || lines + n + room <= max_lines)) {
                fputs(text, out);
                lines += n;
                free(text);
                continue;
            }
            free(text);
            break;
        }
        if (b.from < adv->n && (text = gt_fitted(brief_rest, &b, width, &n))) {
            fputs(text, out);
            lines += n;
            free(text);
        }
    }
    return lines;
}
