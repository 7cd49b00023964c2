/* cmd_report.c — `gputrace report TRACE... [--json] [--fail-on=SEVERITY]`: a run summary and
 * advice. Exit status: 0; 3 with --fail-on when advice at that severity or above exists; 1 when an
 * input is damaged (the report is still printed); 2 when an input is not a trace or bad usage. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "cli_args.h"
#include "commands.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "outfile.h"
#include "peaks.h"
#include "report_out.h"
#include "report_verdict.h"
#include "util.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gputrace report [--json] [--fail-on=SEVERITY] [--top=N] [--step-range=NAME]\n"
            "                      TRACE|FOLDER...\n\n"
            "Summarize a recorded run and say why the GPU is underused: run and versions, steps\n"
            "(warm-up vs steady state), GPU busy time and idle gaps with what the CPU did, top\n"
            "kernels, API calls, copies, sync stalls with call sites, cuDNN choices per\n"
            "convolution, and advice with numbers (docs/advice.md).\n\n"
            "  --json             JSON output (schema: docs/report-schema.md)\n"
            "  --fail-on=SEV      exit 3 when advice of severity SEV or above exists\n"
            "                     (info, warning, critical) -- for CI\n"
            "  --top=N            kernels listed (default 15, 0 = all)\n"
            "  --step-range=NAME  the NVTX range that is one step (ProfilerStep#N for\n"
            "                     torch.profiler's), instead of the marker chosen\n"
            "  -h, --help         this help\n\n"
            "A FOLDER stands for the *.gtrace files in it (a run folder, one file per process).\n"
            "Exit status: 0 ok, 1 damaged input (still reported), 2 not a trace or bad usage,\n"
            "3 advice at the --fail-on level. Colour only on a terminal; NO_COLOR turns it off.\n");
}

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

/* The kernel with the most runs no wrapped call explains: says which library's calls those are. */
static void print_top_unlinked(const gt_proc *p, FILE *out)
{
    const gt_kernel_agg *top = NULL;
    for (size_t i = 0; i < p->n_kernels; i++)
        if (p->kernels[i].unlinked && (!top || p->kernels[i].unlinked > top->unlinked))
            top = &p->kernels[i];
    if (top)
        fprintf(out, "            the most runs: %.70s (%llu)\n", top->name ? top->name : "?",
                (unsigned long long)top->unlinked);
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
    fprintf(out, "  duration  %.1f ms, %llu records, %llu lost%s, CUPTI %s", gt_proc_duration_ms(p),
            (unsigned long long)p->records,
            (unsigned long long)(p->records_lost + p->cupti_dropped),
            p->damaged ? " (file damaged)" : "", gt_cupti_state_name(rt->cupti_state));
    if (p->cupti_overhead_ns)
        fprintf(out, ", CUPTI overhead %.2f ms (%.2f%%)", (double)p->cupti_overhead_ns / 1e6,
                100.0 * (double)p->cupti_overhead_ns / 1e6 / (gt_proc_duration_ms(p) + 1e-9));
    fputc('\n', out);
    if (p->kernel_count) {
        uint64_t linked = p->kernels_by_pair + p->kernels_by_order + p->kernels_by_time;
        fprintf(out, "  links     %llu of %llu kernels lead to the call that launched them",
                (unsigned long long)linked, (unsigned long long)p->kernel_count);
        if (p->kernels_by_order)
            fprintf(out, " (%llu by anchors and launch order)",
                    (unsigned long long)p->kernels_by_order);
        if (p->kernels_by_time)
            fprintf(out, " (%llu by queued time)", (unsigned long long)p->kernels_by_time);
        if (linked < p->kernel_count)
            fprintf(out, "; %llu come from calls no wrapper sees",
                    (unsigned long long)(p->kernel_count - linked));
        fputc('\n', out);
        print_top_unlinked(p, out);
    }
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
    fprintf(out, "  warm-up   %zu step(s), %.2f ms\n", p->warmup_steps, p->warmup_ms_total);
    fprintf(out, "  steady    median %.3f ms, min %.3f ms, mean %.3f ms per step\n",
            p->step_ms_median, p->step_ms_min, p->step_ms_mean_steady);
    fprintf(out, "  per step  sync %.3f ms, copies %.3f ms, NCCL %s, %.1f allocation calls\n",
            p->steady_sync_ms_per_step, p->steady_copy_ms_per_step,
            p->gpu_per_step_unavailable ? "unavailable (GPU sampled)"
                                        : gt_fmt("%.3f ms", p->steady_nccl_ms_per_step),
            p->steady_alloc_per_step);
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
        fprintf(out, "%s %s %.2f ms (%.0f%%)", i ? "," : "", gt_idle_cause_name(order[i]),
                (double)p->steady_idle_cause_ns[order[i]] / 1e6 / (steps ? p->steady_steps : 1),
                100.0 * (double)p->steady_idle_cause_ns[order[i]] / (double)total);
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
        fprintf(out, "  busy      %.1f%% of %.1f ms (steady state %.1f%%)\n", gt_proc_busy_pct(p),
                (double)(p->gpu_last_ns - p->gpu_first_ns) / 1e6, p->steady_busy_pct);
    /* busy % over time: 40 columns from the 200 bins ('~': outside the sampled windows) */
    fprintf(out, "  timeline  |");
    for (int c = 0; c < 40; c++)
        fputs(gt_sample_column(p, c * 5, 5), out);
    fprintf(out, "|  (%.1f ms per column; ' ' idle .. '#' busy%s)\n", 5.0 * (double)p->bin_ns / 1e6,
            p->gpu_sampled ? ", '~' not recorded" : "");
    uint64_t span = p->gpu_sampled ? p->gpu_span_ns : p->gpu_last_ns - p->gpu_first_ns;
    double idle = (double)(span - p->gpu_busy_ns) / 1e6;
    fprintf(out, "  idle      %.1f ms: %llu gaps >= %.0f us, %.1f ms in shorter gaps\n", idle,
            (unsigned long long)p->n_gaps, GT_GAP_MIN_NS / 1e3, (double)p->small_gap_ns / 1e6);
    fprintf(out,
            "  in gaps   CPU blocked in sync %.1f ms, copying %.1f ms, launching %.1f ms, "
            "allocating %.1f ms, other CUDA calls %.1f ms, no CUDA call %.1f ms (by cause "
            "below)\n",
            (double)p->idle_sync_ns / 1e6, (double)p->idle_copy_ns / 1e6,
            (double)p->idle_launch_ns / 1e6, (double)p->idle_alloc_ns / 1e6,
            (double)p->idle_other_ns / 1e6, (double)p->idle_unexplained_ns / 1e6);
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
        fprintf(out, "  %llu kernels (%zu distinct), %.1f ms; %.1f%% run under 10 us\n",
                (unsigned long long)p->kernel_count, p->n_kernels, (double)p->kernel_ns / 1e6,
                100.0 * (double)p->short_kernel_count / (double)p->kernel_count);
    const gt_kernel_agg **order = malloc(p->n_kernels * sizeof *order);
    for (size_t i = 0; i < p->n_kernels; i++)
        order[i] = &p->kernels[i];
    qsort(order, p->n_kernels, sizeof *order, cmp_kernel);
    static const char *const hdr[] = {"total ms", "share", "count", "mean us", "max us", "kernel"};
    gt_table t;
    gt_table_init(&t, 6, hdr);
    for (int c = 0; c < 5; c++)
        t.right[c] = 1;
    t.max_width[5] = 90;
    for (size_t i = 0; i < p->n_kernels && (top_n <= 0 || i < (size_t)top_n); i++) {
        const gt_kernel_agg *k = order[i];
        gt_table_row(&t, gt_fmt("%.3f", (double)k->total_ns / 1e6),
                     gt_fmt("%.1f%%", 100.0 * (double)k->total_ns / (double)p->kernel_ns),
                     gt_fmt("%llu", (unsigned long long)k->count),
                     gt_fmt("%.1f", (double)k->total_ns / (double)k->count / 1e3),
                     gt_fmt("%.1f", (double)k->max_ns / 1e3), k->name);
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(order);
}

static void print_api(const gt_proc *p, FILE *out)
{
    static const char *const hdr[] = {"function", "calls",  "total ms",
                                      "mean us",  "max us", "errors"};
    gt_table t;
    gt_table_init(&t, 6, hdr);
    for (int c = 1; c < 6; c++)
        t.right[c] = 1;
    for (int f = 0; f < 256; f++) {
        const gt_api_agg *a = &p->api[f];
        if (!a->count)
            continue;
        const char *name = gt_api_func_name((uint32_t)f);
        gt_table_row(
            &t, name ? name : gt_fmt("func#%d", f), gt_fmt("%llu", (unsigned long long)a->count),
            gt_fmt("%.3f", (double)a->total_ns / 1e6),
            gt_fmt("%.1f", (double)a->total_ns / (double)a->count / 1e3),
            gt_fmt("%.1f", (double)a->max_ns / 1e3),
            a->errors ? gt_fmt("%llu (first %d)", (unsigned long long)a->errors, a->first_error)
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

static void print_copies(const gt_proc *p, FILE *out)
{
    static const char *const hdr[] = {"direction", "host memory", "count",    "MB",
                                      "ms",        "GB/s",        "blocking", "call site"};
    gt_table t;
    gt_table_init(&t, 8, hdr);
    for (int c = 2; c < 7; c++)
        t.right[c] = 1;
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
                         gt_fmt("%.2f", (double)c->bytes / 1e6), gt_fmt("%.3f", (double)ns / 1e6),
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

static void print_sync(const gt_proc *p, FILE *out)
{
    fprintf(out, "  %llu blocking synchronizations, %.3f ms in all (%s)\n",
            (unsigned long long)p->sync_count, (double)p->sync_total_ns / 1e6,
            !p->syncs_from_cupti ? "from the wrapped calls"
            : p->gpu_sampled     ? "from CUPTI, in the sampled windows only: no wrapper saw them"
                                 : "from CUPTI: no wrapper saw them");
    if (!p->n_sync_sites)
        return;
    gt_site_agg *sites = malloc(p->n_sync_sites * sizeof *sites);
    memcpy(sites, p->sync_sites, p->n_sync_sites * sizeof *sites);
    qsort(sites, p->n_sync_sites, sizeof *sites, cmp_site);
    static const char *const hdr[] = {"total ms", "count", "max ms", "function", "call site"};
    gt_table t;
    gt_table_init(&t, 5, hdr);
    t.right[0] = t.right[1] = t.right[2] = 1;
    for (size_t i = 0; i < p->n_sync_sites && i < 10; i++) {
        const char *fn = gt_api_func_name(sites[i].func);
        const char *site = gt_proc_call_site(p, sites[i].stack_id);
        gt_table_row(&t, gt_fmt("%.3f", (double)sites[i].total_ns / 1e6),
                     gt_fmt("%llu", (unsigned long long)sites[i].count),
                     gt_fmt("%.3f", (double)sites[i].max_ns / 1e6), fn ? fn : "?",
                     site ? site
                          : (sites[i].stack_id ? gt_fmt("stack #%u", sites[i].stack_id)
                                               : "(no stack recorded)"));
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(sites);
}

static void print_cudnn(const gt_proc *p, FILE *out)
{
    if (!p->n_cudnn) {
        fprintf(out, "  no cuDNN convolutions seen\n");
        return;
    }
    if (!p->cudnn_calls_seen)
        fprintf(out, "  no cuDNN call was seen: families INFERRED from kernel names\n");
    if (p->gpu_sampled)
        fprintf(out, "  (GPU ms: the kernels of the sampled windows only; calls and autotuning: "
                     "the whole run)\n");
    static const char *const hdr[] = {"op signature", "mode",   "engine/algorithm", "notes",
                                      "execs",        "GPU ms", "autotune ms",      "plans"};
    gt_table t;
    gt_table_init(&t, 8, hdr);
    t.max_width[0] = 80;
    for (int c = 4; c < 8; c++)
        t.right[c] = 1;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        uint64_t execs = 0, gpu = 0, tune = op->find_ns;
        for (int c = 0; c < op->n_choices; c++) {
            execs += op->choices[c].execs;
            gpu += op->choices[c].gpu_ns;
            tune += op->choices[c].autotune_ns;
        }
        const gt_cudnn_choice *ch = op->chosen >= 0 ? &op->choices[op->chosen] : NULL;
        gt_table_row(&t, op->signature, gt_cudnn_mode(op), ch ? ch->text : "-",
                     ch && ch->notes ? ch->notes : "", gt_fmt("%llu", (unsigned long long)execs),
                     gt_fmt("%.3f", (double)gpu / 1e6), gt_fmt("%.3f", (double)tune / 1e6),
                     gt_fmt("%llu", (unsigned long long)op->plans));
    }
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    if (p->autotune_ns)
        fprintf(out, "  autotuning cost: %.1f ms of CPU time in Find calls and trial executions\n",
                (double)p->autotune_ns / 1e6);
    if (p->n_gemms) {
        static const char *const gh[] = {"function", "m", "n", "k", "batch", "calls", "GPU ms"};
        gt_table g;
        gt_table_init(&g, 7, gh);
        for (int c = 1; c < 7; c++)
            g.right[c] = 1;
        for (size_t i = 0; i < p->n_gemms && i < 15; i++) {
            const gt_gemm_agg *m = &p->gemms[i];
            const char *fn = gt_api_func_name(m->func);
            gt_table_row(&g, fn ? fn : "?", gt_fmt("%lld", (long long)m->m),
                         gt_fmt("%lld", (long long)m->n), gt_fmt("%lld", (long long)m->k),
                         gt_fmt("%lld", (long long)m->batch),
                         gt_fmt("%llu", (unsigned long long)m->count),
                         gt_fmt("%.3f", (double)m->gpu_ns / 1e6));
        }
        fprintf(out, "  cuBLAS GEMMs:\n");
        gt_table_print(&g, out, "  ");
        gt_table_free(&g);
        gt_peaks_print_gemms(p, out);
    }
}

static void print_ranks(const gt_run *run, FILE *out, int color)
{
    int ranked = 0;
    for (size_t i = 0; i < run->n; i++)
        ranked += run->procs[i].hdr.rank >= 0 && gt_proc_has_data(&run->procs[i]);
    if (ranked < 2)
        return;
    section(out, color, "ranks");
    static const char *const hdr[] = {"rank",    "host",    "step ms", "NCCL ms", "sync ms",
                                      "copy ms", "idle ms", "busy %",  "late ms", "waits ms"};
    gt_table t;
    gt_table_init(&t, 10, hdr);
    for (int c = 2; c < 10; c++)
        t.right[c] = 1;
    t.right[0] = 1;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->hdr.rank < 0 || !gt_proc_has_data(p))
            continue;
        char late[32] = "-", waits[32] = "-"; /* gt_fmt has 8 buffers: the row needs 9 */
        if (p->coll_matched) {
            snprintf(late, sizeof late, "%.3f", p->coll_late_ms_per_step);
            snprintf(waits, sizeof waits, "%.3f", p->coll_wait_ms_per_step);
        }
        gt_table_row(&t, gt_fmt("%d", p->hdr.rank), p->host,
                     p->n_steps >= 2 ? gt_fmt("%.3f", p->step_ms_median) : "-",
                     gt_fmt("%.3f", p->steady_nccl_ms_per_step),
                     gt_fmt("%.3f", p->steady_sync_ms_per_step),
                     gt_fmt("%.3f", p->steady_copy_ms_per_step), gt_fmt("%.3f", gt_adv_idle_ms(p)),
                     gt_fmt("%.1f", p->steady_busy_pct), late, waits);
    }
    gt_table_print(&t, out, "  ");
    fprintf(out,
            "  (per steady step; idle ms is the verdict's GPU idle, all causes; late: arriving "
            "last at the collectives, by how much; waits: for a later rank in them)\n");
    gt_table_free(&t);
}

/* Processes without CUDA activity (shells, compilers, launchers, DataLoader workers: a JAX run
 * leaves hundreds) take one line, "3 other processes without CUDA activity: bash x2, ptxas", not a
 * section each. Names are the executables' file names, most frequent first. */
/* Processes without CUDA activity (run->notes: the .procs lines of the run folders, and trace
 * files without CUDA records from older recordings), folded into one line by executable. */
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

static void print_text(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n)
{
    int color = gt_use_color(out);
    print_verdict(run, adv, out, color);
    size_t shown = 0;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->open_status != 0 || !gt_proc_has_data(p))
            continue;
        fprintf(out, "%s%sgputrace report: %s%s\n", shown++ ? "\n" : "", gt_bold(color),
                gt_proc_label(p), gt_color_reset(color));
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
        print_api(p, out);
        section(out, color, "copies");
        print_copies(p, out);
        if (gt_um_seen(p)) {
            section(out, color, "unified memory");
            gt_um_print(p, out);
        }
        section(out, color, "sync stalls");
        print_sync(p, out);
        section(out, color, "cuDNN");
        print_cudnn(p, out);
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
    int any_cuda = 0;
    for (size_t i = 0; i < run->n; i++)
        any_cuda |= gt_proc_has_data(&run->procs[i]);
    if (any_cuda)
        gt_advice_print(adv, out, color, "  ");
    else
        fprintf(out,
                "  No advice: no CUDA activity was recorded (did the program use the GPU?).\n");
}

static json_t *ranks_json(const gt_run *run)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->hdr.rank < 0 || !gt_proc_has_data(p))
            continue;
        json_array_append_new(
            arr,
            json_pack("{s:i, s:i, s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "rank",
                      p->hdr.rank, "pid", p->hdr.pid, "host", p->host ? p->host : "", "step_ms",
                      p->n_steps >= 2 ? json_real(p->step_ms_median) : json_null(),
                      "nccl_ms_per_step", p->steady_nccl_ms_per_step, "sync_ms_per_step",
                      p->steady_sync_ms_per_step, "copy_ms_per_step", p->steady_copy_ms_per_step,
                      "idle_ms_per_step", gt_adv_idle_ms(p), "busy_pct", p->steady_busy_pct,
                      "late_ms_per_step", p->coll_late_ms_per_step, "wait_ms_per_step",
                      p->coll_wait_ms_per_step, "last_at_collectives", (json_int_t)p->coll_last_at,
                      "collectives", (json_int_t)p->coll_matched));
    }
    return arr;
}

/* The rank that reaches the collectives last (model_ranks.c), null when none were matched. */
static json_t *straggler_json(const gt_run *run)
{
    const gt_straggler *st = &run->straggler;
    if (!st->found)
        return json_null();
    json_t *instead = json_object();
    for (int w = 0; w < GT_LATE_COUNT; w++)
        json_object_set_new(instead, gt_late_what_key(w), json_real(st->instead_ms[w]));
    return json_pack("{s:i, s:i, s:s, s:b, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:o}", "rank",
                     st->rank, "pid", st->pid, "kind", st->kind == GT_COLL_NCCL ? "nccl" : "cpu",
                     "per_step", st->per_step, "steps", (json_int_t)st->rounds, "last_in_steps",
                     (json_int_t)st->last_in, "collectives", (json_int_t)st->collectives,
                     "last_at_collectives", (json_int_t)st->last_at, "lateness_ms", st->lateness_ms,
                     "period_ms", st->period_ms, "others_wait_ms", st->others_wait_ms, "instead_ms",
                     instead);
}

static int print_json(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n)
{
    json_t *procs = json_array(), *advice = json_array();
    for (size_t i = 0; i < run->n; i++)
        json_array_append_new(procs, gt_proc_to_json(&run->procs[i], top_n));
    for (size_t i = 0; i < adv->n; i++)
        json_array_append_new(advice, gt_advice_to_json(&adv->items[i]));
    gt_verdict v;
    gt_verdict_build(run, adv, &v);
    json_t *root =
        json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "schema", "gputrace-report",
                  "schema_version", GT_REPORT_SCHEMA_VERSION, "gputrace_version",
#ifdef GT_VERSION
                  GT_VERSION,
#else
                  "dev",
#endif
                  "verdict", gt_verdict_json(&v), "processes", procs, "ranks", ranks_json(run),
                  "straggler", straggler_json(run), "advice", advice);
    if (!root)
        return -1;
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
    fputc('\n', out);
    json_decref(root);
    return rc;
}

typedef struct report_options {
    int json, fail_on, top_n;
    const char *step_range;
} report_options;

static int report_option(void *ctx, int c, const char *arg)
{
    report_options *o = ctx;
    long top;
    switch (c) {
    case 'j':
        o->json = 1;
        return GT_CLI_OK;
    case 'f':
        o->fail_on = gt_severity_parse(arg);
        if (o->fail_on >= 0)
            return GT_CLI_OK;
        gt_cli_usage_error("report", "--fail-on takes info, warning or critical, not '%s'", arg);
        return GT_CLI_USAGE;
    case 't':
        if (gt_cli_int("report", "--top", arg, 0, INT_MAX, &top) != 0)
            return GT_CLI_USAGE;
        o->top_n = (int)top;
        return GT_CLI_OK;
    case 'S':
        o->step_range = arg;
        return GT_CLI_OK;
    default: /* 'h' */
        usage(stdout);
        return GT_CLI_HELP;
    }
}

int cmd_report(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},      {"fail-on", required_argument, NULL, 'f'},
        {"top", required_argument, NULL, 't'}, {"step-range", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0}};
    report_options o = {.json = 0, .fail_on = -1, .top_n = 15};
    const gt_cli cli = {.command = "report",
                        .shortopts = "h",
                        .longopts = longopts,
                        .on_option = report_option,
                        .ctx = &o};
    char **inputs;
    int n_inputs;
    int parsed = gt_cli_parse(&cli, argc, argv, &inputs, &n_inputs);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n_inputs < 1) {
        gt_cli_usage_error("report", "no trace given");
        free(inputs);
        return 2;
    }
    int json = o.json, fail_on = o.fail_on, top_n = o.top_n;
    gt_run run = {0};
    run.opts.step_range = o.step_range;
    int loaded = gt_run_load(&run, (const char *const *)inputs, n_inputs, 1);
    free(inputs);
    if (loaded != 0 || !gt_run_step_range_check(&run)) {
        gt_run_free(&run);
        return 2;
    }
    gt_advice_list adv = {0};
    gt_advice_from_run(&run, &adv);
    if (json) {
        if (print_json(&run, &adv, stdout, top_n) != 0)
            fprintf(stderr, "gputrace report: could not write JSON\n");
    } else {
        print_text(&run, &adv, stdout, top_n);
    }
    int rc = 0;
    if (run.any_not_trace)
        rc = 2;
    else if (run.any_damaged)
        rc = 1;
    else if (fail_on >= 0)
        for (size_t i = 0; i < adv.n; i++)
            if (adv.items[i].severity >= fail_on)
                rc = 3;
    if (gt_stdout_finish("report") != 0)
        rc = 2;
    gt_advice_list_free(&adv);
    gt_run_free(&run);
    return rc;
}
