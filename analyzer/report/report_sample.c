/* report_sample.c — what `gputrace report` says of a GPU-sampled trace (GPUTRACE_SAMPLE): which
 * windows the GPU figures come from and how much of the run and its steps they cover, whole-run
 * totals extrapolated from them and marked "≈ ... (extrapolated ×k ...)", or plainly that there
 * is no GPU figure at all (the flag without a window) or no per-step one (no whole step inside a
 * window). The model (model_sample.c) already measures the GPU over the windows only. */
#include "report_out.h"
#include "textfmt.h"
#include "util.h"

static const char *windows_text(const gt_proc *p)
{
    return gt_fmt("%zu sampled window%s", p->n_gpu_windows, p->n_gpu_windows == 1 ? "" : "s");
}

static const char *steps_text(const gt_proc *p)
{
    if (p->n_steps < 2)
        return "";
    return gt_fmt(", %zu of %zu steps", p->gpu_steps, p->n_steps);
}

void gt_sample_print_run(const gt_proc *p, FILE *out)
{
    if (!p->gpu_sampled)
        return;
    if (!p->gpu_window_ns) {
        fprintf(out, "  sampled   GPUTRACE_SAMPLE, but no window was recorded: CUPTI recorded "
                     "nothing, so this run has no GPU figure (busy, idle, kernels, copies)\n");
        return;
    }
    fprintf(out,
            "  sampled   GPU records from %s (GPUTRACE_SAMPLE): %s of %s (%s)%s. GPU "
            "figures are over the windows (time outside them is not idle); run totals are "
            "extrapolated ×%.1f (≈)\n",
            windows_text(p), gt_dur_ns((double)p->gpu_window_ns), gt_dur(gt_proc_duration_ms(p)),
            gt_pct(gt_proc_gpu_coverage_pct(p)), steps_text(p), p->gpu_extrapolation);
    if (p->gpu_per_step_unavailable)
        fprintf(out, "  sampled   no whole step lies inside a window: GPU per-step figures are "
                     "unavailable (the busy share is the windows')\n");
}

/* The verdict's line; returns the lines printed. */
int gt_sample_verdict_line(const gt_proc *p, FILE *out)
{
    if (!p->gpu_sampled)
        return 0;
    if (!p->gpu_window_ns) {
        fprintf(out, "  sampled      no GPU window was recorded (GPUTRACE_SAMPLE): no GPU figure "
                     "for this run, only its calls\n");
        return 1;
    }
    fprintf(out, "  sampled      GPU figures from %s covering %s of the run%s%s\n", windows_text(p),
            gt_pct(gt_proc_gpu_coverage_pct(p)), steps_text(p),
            p->gpu_per_step_unavailable
                ? "; GPU per-step figures unavailable (no whole step "
                  "inside a window)"
                : gt_fmt("; run totals extrapolated ×%.1f", p->gpu_extrapolation));
    return 1;
}

/* The GPU section's busy line (and the run's estimate). */
void gt_sample_print_busy(const gt_proc *p, FILE *out)
{
    fprintf(out, "  busy      %s of the %s inside %s ", gt_pct(gt_proc_busy_pct(p)),
            gt_dur_ns((double)p->gpu_span_ns), windows_text(p));
    if (p->gpu_per_step_unavailable)
        fprintf(out, "(steady state: no whole step inside a window)\n");
    else
        fprintf(out, "(steady state %s%s)\n", gt_pct(p->steady_busy_pct),
                p->n_steps >= 2
                    ? gt_fmt(", from the %.0f steady steps inside them", p->steady_gpu_steps)
                    : "");
    fprintf(out, "  run       ≈ %s GPU busy%s\n",
            gt_dur(gt_proc_gpu_total(p, (double)p->gpu_busy_ns / 1e6)),
            gt_proc_extrapolation_note(p));
}

/* A timeline column: its busy share of the time recorded in it; '~' when none was. */
const char *gt_sample_column(const gt_proc *p, int first_bin, int bins)
{
    static const char *const shades[] = {" ", ".", ":", "-", "=", "+", "*", "#"};
    uint64_t busy = 0, over = 0;
    for (int b = first_bin; b < first_bin + bins && b < GT_TIMELINE_BINS; b++) {
        busy += p->bins[b].gpu_busy_ns;
        over += p->gpu_sampled ? p->bins[b].covered_ns : p->bin_ns;
    }
    if (!over)
        return "~";
    int idx = (int)((double)busy / (double)over * 7.999);
    return shades[idx < 0 ? 0 : idx > 7 ? 7 : idx];
}

void gt_sample_print_kernels(const gt_proc *p, FILE *out)
{
    fprintf(out, "  ≈ %s kernels, %s in the run%s\n",
            gt_count(gt_proc_gpu_total(p, (double)p->kernel_count)),
            gt_dur(gt_proc_gpu_total(p, (double)p->kernel_ns / 1e6)),
            gt_proc_extrapolation_note(p));
    fprintf(out,
            "  in the windows: %llu kernels (%zu distinct), %s; %s run under 10 \xc2\xb5s "
            "(the table is the windows'; shares are not scaled)\n",
            (unsigned long long)p->kernel_count, p->n_kernels, gt_dur_ns((double)p->kernel_ns),
            gt_pct(100.0 * (double)p->short_kernel_count / (double)p->kernel_count));
}

void gt_sample_print_copies(const gt_proc *p, FILE *out)
{
    if (!p->gpu_sampled || !p->copies_from_gpu)
        return;
    uint64_t bytes = 0, count = 0;
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++) {
            bytes += p->copies[d][k].bytes;
            count += p->copies[d][k].count;
        }
    fprintf(out,
            "  ≈ %s copies, %.2f MB in the run%s; counts, MB and times above are the windows'\n",
            gt_count(gt_proc_gpu_total(p, (double)count)),
            gt_proc_gpu_total(p, (double)bytes / 1e6), gt_proc_extrapolation_note(p));
}

json_t *gt_sample_verdict_json(const gt_proc *p)
{
    return json_pack("{s:I, s:f, s:I, s:I, s:b, s:f}", "windows", (json_int_t)p->n_gpu_windows,
                     "coverage_pct", gt_proc_gpu_coverage_pct(p), "steps_in_windows",
                     (json_int_t)p->gpu_steps, "steps", (json_int_t)p->n_steps,
                     "per_step_available", !p->gpu_per_step_unavailable && p->gpu_window_ns,
                     "extrapolation", p->gpu_extrapolation);
}
