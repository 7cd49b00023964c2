/* test_sampled.c — GPU-sampled traces (GPUTRACE_SAMPLE, issue 18): the same steady loop written
 * in full and with CUPTI's records in windows covering a quarter of the run. The sampled trace
 * must read like the full one: the GPU busy ~90% (not ~22%: time between windows is no idle), no
 * gpu-idle or launch-bound advice from un-recorded time, whole-run totals extrapolated ×~4 and
 * marked, the verdict naming the windows; a trace with the flag and no window says it has no GPU
 * coverage; windows shorter than a step leave no per-step GPU figure. Usage: test_sampled WORKDIR
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "commands.h"
#include "model.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

static const char *workdir;

static const char *path_of(const char *name)
{
    static char bufs[8][600];
    static int slot;
    char *b = bufs[slot++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", workdir, name);
    return b;
}

static int run_cmd(int (*fn)(int, char **), const char *out, int n, ...)
{
    char *argv[8] = {fn == cmd_diff ? "diff" : "report"};
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 7; i++)
        argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    return run_captured(fn, n + 1, argv, out);
}

/* A steady loop, GPU ~90% busy: 100 us kernels launched every ~111 us (short gaps only, no gap
 * of 1 ms: neither gpu-idle nor launch-bound fires on the full trace), about 2.3 ms a step. */
static scenario busy_loop(void)
{
    scenario sc = scenario_healthy();
    sc.steps = 360;
    sc.kernels_per_step = 20;
    sc.kernel_ns = 100000;
    sc.launch_ns = 5000;
    sc.cpu_between_ns = 106000;
    sc.nvtx = 1;
    return sc;
}

static int has_advice(const gt_advice_list *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, id))
            return 1;
    return 0;
}

static const gt_proc *load_one(gt_run *run, const char *path)
{
    const char *paths[] = {path};
    if (gt_run_load(run, paths, 1, 0) != 0 || run->n != 1)
        return NULL;
    return &run->procs[0];
}

/* The model: windows, busy share over them, steady figures from the steps inside them. */
static void test_model(void)
{
    scenario full = busy_loop(), sampled = busy_loop();
    sampled.sample_on_ns = 50000000; /* 50 ms of every 200 ms */
    sampled.sample_off_ns = 150000000;
    CHECK(scenario_write(path_of("full.gtrace"), &full) == 0, "write full");
    CHECK(scenario_write(path_of("sampled.gtrace"), &sampled) == 0, "write sampled");
    gt_run rf = {0}, rs = {0};
    const gt_proc *f = load_one(&rf, path_of("full.gtrace"));
    const gt_proc *s = load_one(&rs, path_of("sampled.gtrace"));
    CHECK(f && s, "load");
    if (!f || !s)
        goto out;
    CHECK(!f->gpu_sampled && f->gpu_extrapolation == 1, "the full trace is not sampled");
    CHECK(s->gpu_sampled, "the sampled trace is");
    CHECK(s->n_gpu_windows >= 4 && s->n_gpu_windows <= 5, "%zu windows (about 830 ms / 200 ms)",
          s->n_gpu_windows);
    double cov = gt_proc_gpu_coverage_pct(s);
    CHECK(cov > 22 && cov < 32, "windows cover %.1f%% of the run", cov);
    CHECK(gt_proc_busy_pct(f) > 85 && gt_proc_busy_pct(f) < 95, "full: busy %.1f%%",
          gt_proc_busy_pct(f));
    CHECK(fabs(gt_proc_busy_pct(s) - gt_proc_busy_pct(f)) < 3,
          "sampled: busy %.1f%% over the windows, full %.1f%% (un-recorded time is no idle)",
          gt_proc_busy_pct(s), gt_proc_busy_pct(f));
    CHECK(fabs(s->steady_busy_pct - f->steady_busy_pct) < 3, "steady busy %.1f%% vs %.1f%%",
          s->steady_busy_pct, f->steady_busy_pct);
    CHECK(s->steady_gpu_steps >= 60 && s->steady_gpu_steps < 0.4 * s->steady_steps,
          "%.0f of %.0f steady steps inside windows", s->steady_gpu_steps, s->steady_steps);
    CHECK(s->gpu_steps >= (size_t)s->steady_gpu_steps && s->gpu_steps < s->n_steps,
          "%zu of %zu steps inside windows", s->gpu_steps, s->n_steps);
    /* per-step GPU figures as in the full trace */
    double kf = (double)f->steady_kernels / f->steady_steps;
    double ks = (double)s->steady_kernels / s->steady_steps;
    CHECK(fabs(ks - kf) < 0.5, "kernels per steady step %.2f vs %.2f", ks, kf);
    CHECK(s->steady_idle_unexplained_ms_per_step < 0.05, "no unexplained idle per step (%.3f ms)",
          s->steady_idle_unexplained_ms_per_step);
    uint64_t gap_ns = 0;
    for (size_t i = 0; i < s->n_gaps; i++)
        gap_ns += s->gaps[i].end_ns - s->gaps[i].start_ns;
    CHECK(gap_ns < s->gpu_window_ns / 100, "no gap from un-recorded time: %zu gaps, %.1f ms",
          s->n_gaps, (double)gap_ns / 1e6);
    /* whole-run totals, extrapolated */
    CHECK(s->kernel_count < f->kernel_count / 2, "kernels recorded only in windows: %llu of %llu",
          (unsigned long long)s->kernel_count, (unsigned long long)f->kernel_count);
    double est = gt_proc_gpu_total(s, (double)s->kernel_count);
    CHECK(fabs(est - (double)f->kernel_count) < 0.1 * (double)f->kernel_count,
          "extrapolated kernels %.0f, written %llu", est, (unsigned long long)f->kernel_count);
    double est_ms = gt_proc_gpu_total(s, (double)s->gpu_busy_ns / 1e6);
    CHECK(fabs(est_ms - (double)f->gpu_busy_ns / 1e6) < 0.1 * (double)f->gpu_busy_ns / 1e6,
          "extrapolated GPU busy %.1f ms, full %.1f ms", est_ms, (double)f->gpu_busy_ns / 1e6);
    CHECK(s->gpu_extrapolation > 3 && s->gpu_extrapolation < 4.6, "×%.2f", s->gpu_extrapolation);
    gt_advice_list lf = {0}, ls = {0};
    gt_advice_from_run(&rf, &lf);
    gt_advice_from_run(&rs, &ls);
    CHECK(!has_advice(&lf, "gpu-idle") && !has_advice(&lf, "launch-bound"),
          "the full loop is healthy");
    CHECK(!has_advice(&ls, "gpu-idle"), "no gpu-idle from un-recorded time");
    CHECK(!has_advice(&ls, "launch-bound"), "no launch-bound from un-recorded time");
    gt_advice_list_free(&lf);
    gt_advice_list_free(&ls);
out:
    gt_run_free(&rf);
    gt_run_free(&rs);
}

/* The text report says where the figures come from and marks the estimates. */
static void test_report_text(void)
{
    int rc = run_cmd(cmd_report, path_of("sampled.txt"), 1, path_of("sampled.gtrace"));
    CHECK(rc == 0, "report exit %d", rc);
    char *t = slurp(path_of("sampled.txt"));
    const char *verdict = strstr(t, "== verdict");
    const char *run = strstr(t, "== run ==");
    CHECK(verdict && run, "verdict and run sections");
    const char *v_line = verdict ? strstr(verdict, "  sampled      GPU figures from ") : NULL;
    CHECK(v_line && v_line < run, "the verdict names the windows:\n%.600s", t);
    if (v_line) {
        int windows = 0, pct = 0;
        size_t in = 0, of = 0;
        CHECK(sscanf(v_line,
                     "  sampled      GPU figures from %d sampled windows covering %d%% of "
                     "the run, %zu of %zu steps",
                     &windows, &pct, &in, &of) == 4,
              "verdict line: %.200s", v_line);
        CHECK(windows >= 4 && pct >= 22 && pct <= 32 && of == 360 && in > 60 && in < 120,
              "%d windows, %d%%, %zu of %zu steps", windows, pct, in, of);
    }
    double busy = 0;
    const char *b = strstr(t, "GPU busy ");
    CHECK(b && sscanf(b, "GPU busy %lf%% in the sampled windows", &busy) == 1 && busy > 87 &&
              busy < 95,
          "the verdict's busy share is the windows' (~90%%, not ~22%%): %.80s", b ? b : "");
    CHECK(strstr(t, "causes       none found") != NULL, "no advice from un-recorded time");
    CHECK(strstr(t, "gpu-idle") == NULL, "no gpu-idle anywhere");
    const char *k = strstr(t, "== kernels ==");
    double est = 0, mult = 0;
    CHECK(k && sscanf(k, "== kernels ==\n  ≈ %lf kernels, %*f ms in the run (extrapolated ×%lf",
                      &est, &mult) == 2,
          "kernel totals marked as extrapolated: %.200s", k ? k : "");
    CHECK(fabs(est - 7200) < 720 && mult > 3 && mult < 4.6, "≈ %.0f kernels (7200 run), ×%.1f", est,
          mult);
    CHECK(strstr(t, "  run       ≈ ") != NULL, "the GPU busy total is an estimate");
    CHECK(strstr(t, "MB in the run (extrapolated ×") != NULL, "copied bytes extrapolated");
    CHECK(strstr(t, "'~' not recorded") != NULL, "the timeline marks un-recorded time");
    free(t);
    /* the full trace's report has none of it */
    rc = run_cmd(cmd_report, path_of("full.txt"), 1, path_of("full.gtrace"));
    t = slurp(path_of("full.txt"));
    CHECK(rc == 0 && !strstr(t, "  sampled ") && !strstr(t, "sampled window") && !strstr(t, "≈") &&
              !strstr(t, "extrapolated"),
          "a full trace's report says nothing of sampling");
    free(t);
}

static void test_report_json(void)
{
    int rc = run_cmd(cmd_report, path_of("sampled.json"), 2, "--json", path_of("sampled.gtrace"));
    CHECK(rc == 0, "report --json exit %d", rc);
    json_error_t err;
    json_t *root = json_load_file(path_of("sampled.json"), 0, &err);
    CHECK(root != NULL, "JSON parses: %s", err.text);
    if (!root)
        return;
    json_t *p = json_array_get(json_object_get(root, "processes"), 0);
    json_t *sm = json_object_get(p, "gpu_sampling");
    CHECK(json_is_object(sm), "processes[0].gpu_sampling");
    double cov = json_real_value(json_object_get(sm, "coverage_pct"));
    CHECK(cov > 22 && cov < 32, "coverage_pct %.1f", cov);
    json_t *est = json_object_get(sm, "estimated_run_totals");
    double kc = json_real_value(json_object_get(est, "kernel_count"));
    CHECK(fabs(kc - 7200) < 720, "estimated kernel_count %.0f", kc);
    CHECK(json_is_true(json_object_get(sm, "per_step_available")), "per-step figures available");
    double busy = json_real_value(json_object_get(json_object_get(p, "gpu"), "busy_pct"));
    CHECK(busy > 87 && busy < 95, "gpu.busy_pct %.1f over the windows", busy);
    json_t *v = json_object_get(json_object_get(root, "verdict"), "gpu_sampling");
    CHECK(json_integer_value(json_object_get(v, "windows")) >= 4, "verdict.gpu_sampling.windows");
    json_decref(root);
    rc = run_cmd(cmd_report, path_of("full.json"), 2, "--json", path_of("full.gtrace"));
    root = json_load_file(path_of("full.json"), 0, &err);
    CHECK(root && !json_object_get(json_array_get(json_object_get(root, "processes"), 0),
                                   "gpu_sampling"),
          "no gpu_sampling for a full trace");
    json_decref(root);
}

/* The flag and no window: CUPTI recorded nothing; the report says so, advises nothing of the GPU.
 */
static void test_no_window(void)
{
    scenario sc = busy_loop();
    sc.steps = 40;
    sc.sample_on_ns = 50000000;
    sc.sample_off_ns = 150000000;
    sc.sample_no_window = 1;
    CHECK(scenario_write(path_of("nowin.gtrace"), &sc) == 0, "write");
    gt_run run = {0};
    const gt_proc *p = load_one(&run, path_of("nowin.gtrace"));
    CHECK(p && p->gpu_sampled && !p->n_gpu_windows && !p->gpu_window_ns && !p->n_gaps,
          "sampled, no window, no gap");
    if (p)
        CHECK(gt_proc_gpu_coverage_pct(p) == 0, "coverage %.1f%%", gt_proc_gpu_coverage_pct(p));
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    CHECK(!has_advice(&l, "gpu-idle") && !has_advice(&l, "launch-bound"), "no GPU-idle advice");
    gt_advice_list_free(&l);
    gt_run_free(&run);
    int rc = run_cmd(cmd_report, path_of("nowin.txt"), 1, path_of("nowin.gtrace"));
    char *t = slurp(path_of("nowin.txt"));
    CHECK(rc == 0 && strstr(t, "no GPU window was recorded") && strstr(t, "GPU busy unknown"),
          "the report says plainly there is no GPU coverage:\n%.700s", t);
    free(t);
}

/* A few long windows fall unevenly on a run's phases: one falls wholly in 1.2 s of compilation
 * with the GPU idle, the other on 75% of the loop. The run's GPU totals are extrapolated by the
 * calls that give the GPU work (recorded all along), not by time, which would put them 25% over
 * (on the H200, 2 windows of 1 s on a 7 s ResNet-18 run put them 39% short). */
static void test_idle_start(void)
{
    scenario full = busy_loop(), sampled = busy_loop();
    full.jit_ns = sampled.jit_ns = 1200000000;
    sampled.sample_on_ns = sampled.sample_off_ns = 600000000;
    CHECK(scenario_write(path_of("idle_start_full.gtrace"), &full) == 0, "write full");
    CHECK(scenario_write(path_of("idle_start.gtrace"), &sampled) == 0, "write sampled");
    gt_run rf = {0}, rs = {0};
    const gt_proc *f = load_one(&rf, path_of("idle_start_full.gtrace"));
    const gt_proc *p = load_one(&rs, path_of("idle_start.gtrace"));
    CHECK(f && p && p->gpu_sampled && p->gpu_extrapolation_by_calls, "extrapolated by calls");
    if (f && p) {
        double est = gt_proc_gpu_total(p, (double)p->kernel_count);
        double by_time = (double)p->kernel_count * 100.0 / gt_proc_gpu_coverage_pct(p);
        CHECK(fabs(est - (double)f->kernel_count) < 0.1 * (double)f->kernel_count,
              "≈ %.0f kernels against %llu in full", est, (unsigned long long)f->kernel_count);
        CHECK(fabs(by_time - (double)f->kernel_count) > 0.2 * (double)f->kernel_count,
              "the scenario is one where time misleads (%.0f by time)", by_time);
    }
    gt_run_free(&rf);
    gt_run_free(&rs);
    /* info gives the run's length from its calls when the file has no END record (this one) */
    char *argv[] = {"info", (char *)path_of("idle_start.gtrace")};
    int rc = run_captured(cmd_info, 2, argv, path_of("idle_start.info"));
    char *t = slurp(path_of("idle_start.info"));
    CHECK(rc == 0 && strstr(t, "GPU sampled            2 windows, 1.200 s of 2.0"),
          "info: the windows against the run's length:\n%.900s", t);
    free(t);
}

/* Windows shorter than a step: no step inside one, so no per-step GPU figure (not zeros). */
static void test_no_whole_step(void)
{
    scenario sc = busy_loop();
    sc.steps = 100;
    sc.sample_on_ns = 1000000; /* 1 ms windows, steps of 2.2 ms */
    sc.sample_off_ns = 3000000;
    CHECK(scenario_write(path_of("short.gtrace"), &sc) == 0, "write");
    gt_run run = {0};
    const gt_proc *p = load_one(&run, path_of("short.gtrace"));
    CHECK(p && p->gpu_sampled && p->n_gpu_windows > 20, "sampled, many windows");
    if (p) {
        CHECK(p->gpu_per_step_unavailable && p->steady_gpu_steps == 0 && p->gpu_steps == 0,
              "no step inside a window: per-step figures unavailable (%.0f)", p->steady_gpu_steps);
        CHECK(gt_proc_busy_pct(p) > 80, "the windows' busy share still holds: %.1f%%",
              gt_proc_busy_pct(p));
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    CHECK(!has_advice(&l, "gpu-idle") && !has_advice(&l, "launch-bound"), "no GPU-idle advice");
    gt_advice_list_free(&l);
    gt_run_free(&run);
    int rc = run_cmd(cmd_report, path_of("short.txt"), 1, path_of("short.gtrace"));
    char *t = slurp(path_of("short.txt"));
    CHECK(rc == 0 && strstr(t, "GPU per-step figures unavailable") &&
              strstr(t, "GPU idle     unavailable"),
          "the report says per-step GPU figures are unavailable:\n%.900s", t);
    free(t);
}

/* diff: a sampled side's GPU rows come from its windows, and it says so. */
static void test_diff(void)
{
    int rc = run_cmd(cmd_diff, path_of("diff.txt"), 2, path_of("full.gtrace"),
                     path_of("sampled.gtrace"));
    CHECK(rc == 0, "diff exit %d", rc);
    char *t = slurp(path_of("diff.txt"));
    CHECK(strstr(t, "warning: B is GPU-sampled: its GPU rows come from ") != NULL,
          "diff names the sampled side:\n%.800s", t);
    CHECK(strstr(t, "A is GPU-sampled") == NULL, "A is not sampled");
    const char *row = strstr(t, "GPU busy % (steady)");
    double a = 0, b = 0;
    CHECK(row && sscanf(row, "GPU busy %% (steady) %lf %lf", &a, &b) == 2 && fabs(a - b) < 3,
          "steady busy compared from the windows: %.1f vs %.1f", a, b);
    row = strstr(t, "kernels per step");
    CHECK(row && sscanf(row, "kernels per step %lf %lf", &a, &b) == 2 && fabs(a - b) < 1,
          "kernels per step %.1f vs %.1f", a, b);
    row = strstr(t, "  GPU busy ms  ");
    CHECK(row && sscanf(row, "  GPU busy ms %lf %lf", &a, &b) == 2 && fabs(a - b) < 0.1 * a,
          "run GPU busy ms extrapolated: %.1f vs %.1f", a, b);
    free(t);
}

/* Time on the "GPU not recorded (sampling)" track of a Chrome JSON conversion, in ms (its
 * slices are B/E pairs on one track); *slices counts them. */
static double not_recorded_ms(const char *json_path, int *slices)
{
    json_error_t err;
    json_t *root = json_load_file(json_path, 0, &err);
    json_t *ev = json_is_object(root) ? json_object_get(root, "traceEvents") : root;
    double total = 0, open_ts = -1;
    json_int_t tid = -1;
    *slices = 0;
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *ph = json_string_value(json_object_get(e, "ph"));
        double ts = json_number_value(json_object_get(e, "ts"));
        if (ph && !strcmp(ph, "B") && name && !strcmp(name, "GPU not recorded (sampling)")) {
            open_ts = ts;
            tid = json_integer_value(json_object_get(e, "tid"));
            (*slices)++;
        } else if (ph && !strcmp(ph, "E") && open_ts >= 0 &&
                   json_integer_value(json_object_get(e, "tid")) == tid) {
            total += (ts - open_ts) / 1e3; /* us */
            open_ts = -1;
        }
    }
    json_decref(root);
    return total;
}

/* convert: the stretches between windows are marked as not recorded, nothing else is. */
static void test_convert(void)
{
    char *argv[] = {"convert",
                    "--format=json",
                    "-q",
                    "-o",
                    (char *)path_of("sampled.trace.json"),
                    (char *)path_of("sampled.gtrace")};
    int rc = run_captured(cmd_convert, 6, argv, path_of("convert.out"));
    CHECK(rc == 0, "convert exit %d", rc);
    int n = 0;
    double ms = not_recorded_ms(path_of("sampled.trace.json"), &n);
    gt_run run = {0};
    const gt_proc *p = load_one(&run, path_of("sampled.gtrace"));
    if (p) {
        double off = gt_proc_duration_ms(p) - (double)p->gpu_window_ns / 1e6;
        CHECK(n >= (int)p->n_gpu_windows - 1 && n <= (int)p->n_gpu_windows,
              "%d not-recorded slices for %zu windows", n, p->n_gpu_windows);
        CHECK(fabs(ms - off) < 0.05 * off, "%.1f ms marked not recorded, %.1f ms between windows",
              ms, off);
    }
    gt_run_free(&run);
    char *argf[] = {"convert",
                    "--format=json",
                    "-q",
                    "-o",
                    (char *)path_of("full.trace.json"),
                    (char *)path_of("full.gtrace")};
    rc = run_captured(cmd_convert, 6, argf, path_of("convert.out"));
    ms = not_recorded_ms(path_of("full.trace.json"), &n);
    CHECK(rc == 0 && n == 0, "a full trace has no not-recorded slice (%d)", n);
}

/* Without markers: repeating GPU work, recorded only in the windows, makes no steps (it would
 * make one long step of each stretch between windows); the windows still give the busy share. */
static void test_no_markers(void)
{
    scenario sc = busy_loop();
    sc.nvtx = 0;
    sc.sample_on_ns = 50000000;
    sc.sample_off_ns = 150000000;
    CHECK(scenario_write(path_of("nomark.gtrace"), &sc) == 0, "write");
    gt_run run = {0};
    const gt_proc *p = load_one(&run, path_of("nomark.gtrace"));
    CHECK(p != NULL, "load");
    if (p) {
        CHECK(p->n_steps == 0 && strstr(p->step_why, "GPU sampling"), "no steps, why: %s",
              p->step_why);
        CHECK(gt_proc_busy_pct(p) > 87 && gt_proc_busy_pct(p) < 95 && p->steady_busy_pct > 87,
              "busy %.1f%%, steady %.1f%% over the windows", gt_proc_busy_pct(p),
              p->steady_busy_pct);
        CHECK(p->steady_gpu_steps > 0.15 && p->steady_gpu_steps < 0.35,
              "the windows hold %.2f of the steady window", p->steady_gpu_steps);
        CHECK(p->steady_idle_unexplained_ns < 1000000, "no idle from un-recorded time (%.1f ms)",
              (double)p->steady_idle_unexplained_ns / 1e6);
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    CHECK(!has_advice(&l, "gpu-idle") && !has_advice(&l, "launch-bound"), "no GPU-idle advice");
    gt_advice_list_free(&l);
    gt_run_free(&run);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_sampled WORKDIR\n");
        return 2;
    }
    workdir = argv[1];
    test_model();
    test_report_text();
    test_report_json();
    test_diff();
    test_convert();
    test_no_window();
    test_no_whole_step();
    test_no_markers();
    test_idle_start();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
