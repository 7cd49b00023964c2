/* test_sampled.c — GPU-sampled traces (GPUTRACE_SAMPLE, issue 18): the same steady loop written
 * in full and with CUPTI's records in windows covering a quarter of the run. The sampled trace
 * must read like the full one: the GPU busy ~90% (not ~22%: time between windows is no idle), no
 * gpu-idle or launch-bound advice from un-recorded time, whole-run totals extrapolated ×~4 and
 * marked, the verdict naming the windows; a trace with the flag and no window says it has no GPU
 * coverage; windows shorter than a step leave no per-step GPU figure. Without NVTX the steps come
 * from the calls (recorded all along): all of them, whatever the windows cover, from the loop's
 * thread. Usage: test_sampled WORKDIR
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "commands.h"
#include "gt_test_writer.h"
#include "gtrace_api.h"
#include "model.h"
#include "test_advice_util.h"
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
    return advice_find(l, id, -1) != NULL;
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
    CHECK(!has_advice(&lf, "gpu-idle"), "the full loop has no long gaps");
    CHECK(!has_advice(&ls, "gpu-idle"), "no gpu-idle from un-recorded time");
    /* 111 us of CPU per launch for 100 us kernels: the GPU idles ~10% between them, launch-bound
     * by its definition, and the sampled trace says the same as the full one, no more */
    const gt_advice *lbf = advice_find(&lf, "launch-bound", -1),
                    *lbs = advice_find(&ls, "launch-bound", -1);
    CHECK(lbf && lbs && fabs(lbs->saving_ms - lbf->saving_ms) < 0.1 * lbf->saving_ms,
          "launch-bound alike: full %.4f ms, sampled %.4f ms per step", lbf ? lbf->saving_ms : -1,
          lbs ? lbs->saving_ms : -1);
    CHECK(lbf && lbf->saving_ms > 0.1 && lbf->saving_ms < 20 * (0.011 - 0.00042),
          "launch-bound saves at most the 20 gaps of ~11 us less a graph's own 0.42 us each: "
          "%.4f ms per step",
          lbf ? lbf->saving_ms : -1);
    gt_advice_list_free(&lf);
    gt_advice_list_free(&ls);
out:
    gt_run_free(&rf);
    gt_run_free(&rs);
}

/* The text report says where the figures come from and marks the estimates. */
static void test_report_text(void)
{
    int rc = run_args(cmd_report, "report", path_of("sampled.txt"), 1, path_of("sampled.gtrace"));
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
    const char *c1 = strstr(t, "1. "), *c2 = strstr(t, "2. ");
    CHECK(c1 && !strncmp(c1 + 3, "launch-bound", 12) && (!c2 || c2 > run),
          "only the loop's own cause (launch-bound), none from un-recorded time:\n%.600s", t);
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
    rc = run_args(cmd_report, "report", path_of("full.txt"), 1, path_of("full.gtrace"));
    t = slurp(path_of("full.txt"));
    CHECK(rc == 0 && !strstr(t, "  sampled ") && !strstr(t, "sampled window") && !strstr(t, "≈") &&
              !strstr(t, "extrapolated"),
          "a full trace's report says nothing of sampling");
    free(t);
}

static void test_report_json(void)
{
    int rc = run_args(cmd_report, "report", path_of("sampled.json"), 2, "--json",
                      path_of("sampled.gtrace"));
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
    rc = run_args(cmd_report, "report", path_of("full.json"), 2, "--json", path_of("full.gtrace"));
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
    int rc = run_args(cmd_report, "report", path_of("nowin.txt"), 1, path_of("nowin.gtrace"));
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
    int rc = run_args(cmd_report, "report", path_of("short.txt"), 1, path_of("short.gtrace"));
    char *t = slurp(path_of("short.txt"));
    CHECK(rc == 0 && strstr(t, "GPU per-step figures unavailable") &&
              strstr(t, "GPU idle     unavailable"),
          "the report says per-step GPU figures are unavailable:\n%.900s", t);
    free(t);
}

/* diff: a sampled side's GPU rows come from its windows, and it says so. */
static void test_diff(void)
{
    int rc = run_args(cmd_diff, "diff", path_of("diff.txt"), 2, path_of("full.gtrace"),
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

/* A loop of launches and a sync each step, without NVTX nor copies. */
static scenario launch_sync_loop(void)
{
    scenario sc = busy_loop();
    sc.nvtx = 0;
    sc.sync_every_step = 1;
    sc.pinned_h2d_bytes = 0;
    return sc;
}

/* Steps of a sampled trace without NVTX come from its calls (recorded all along), not from its
 * GPU records (only in the windows): every step, timed at the calls. */
static const gt_proc *load_call_steps(gt_run *run, const char *name, const scenario *sc)
{
    CHECK(scenario_write(path_of(name), sc) == 0, "write %s", name);
    const gt_proc *p = load_one(run, path_of(name));
    CHECK(p && p->gpu_sampled, "%s loads, sampled", name);
    if (!p)
        return NULL;
    CHECK(p->step_source_kind == GT_STEPSRC_CALL_PATTERN &&
              !strcmp(gt_step_source_kind_name(p->step_source_kind), "call_pattern"),
          "%s: steps from the calls' pattern (kind %d, %s)", name, p->step_source_kind,
          p->step_source);
    CHECK(strstr(p->step_source, "repeating launch (360\xc3\x97 ") &&
              strstr(p->step_source, "CPU side, GPU sampled"),
          "%s: the source says where the steps come from: %s", name, p->step_source);
    CHECK(strstr(p->step_why, "GPU sampled, so from the calls") &&
              strstr(p->step_why, "a pattern of 20 calls repeats"),
          "%s: why: %s", name, p->step_why);
    CHECK(p->n_steps >= 358 && p->n_steps <= 359, "%s: all %zu steps (360 iterations)", name,
          p->n_steps);
    return p;
}

/* A launch+sync loop without NVTX, sampled 50 ms of every 200: the calls' pattern gives all its
 * steps, as long as the full trace's GPU pattern gives them, and the steps wholly inside a
 * window give the per-step GPU figures. */
static void test_call_steps(void)
{
    scenario full = launch_sync_loop(), sampled = full;
    sampled.sample_on_ns = 50000000;
    sampled.sample_off_ns = 150000000;
    CHECK(scenario_write(path_of("calls_full.gtrace"), &full) == 0, "write full");
    gt_run rf = {0}, rs = {0};
    const gt_proc *f = load_one(&rf, path_of("calls_full.gtrace"));
    const gt_proc *s = load_call_steps(&rs, "calls_sampled.gtrace", &sampled);
    CHECK(f && !f->gpu_sampled && f->step_source_kind == GT_STEPSRC_KERNEL_PATTERN &&
              !strstr(f->step_source, "CPU side"),
          "the full trace keeps its GPU pattern: %s", f ? f->step_source : "?");
    if (f && s) {
        CHECK(fabs(s->step_ms_median - f->step_ms_median) < 0.02 * f->step_ms_median,
              "median step %.3f ms sampled, %.3f ms full", s->step_ms_median, f->step_ms_median);
        CHECK(s->gpu_steps >= 60 && s->gpu_steps < s->n_steps / 2 && !s->gpu_per_step_unavailable,
              "%zu of %zu steps inside windows give the GPU figures", s->gpu_steps, s->n_steps);
        double kf = (double)f->steady_kernels / f->steady_steps;
        double ks = (double)s->steady_kernels / s->steady_steps;
        CHECK(fabs(ks - kf) < 0.5 && fabs(kf - 20) < 0.5, "kernels per steady step %.2f vs %.2f",
              ks, kf);
        CHECK(fabs(s->steady_busy_pct - f->steady_busy_pct) < 5, "steady busy %.1f%% vs %.1f%%",
              s->steady_busy_pct, f->steady_busy_pct);
    }
    gt_run_free(&rf);
    gt_run_free(&rs);
    int rc =
        run_args(cmd_report, "report", path_of("calls.txt"), 1, path_of("calls_sampled.gtrace"));
    char *t = slurp(path_of("calls.txt"));
    CHECK(rc == 0 && strstr(t, "359 steps from repeating launch (360\xc3\x97 ") &&
              strstr(t, "GPU sampled, so from the calls"),
          "the report's steps section names the calls:\n%.1500s", t);
    free(t);
}

/* Windows over only a few steps, or none at all: the calls still give every step; per-step GPU
 * figures come from the few inside a window, or are unavailable. */
static void test_call_steps_partial(void)
{
    scenario sc = launch_sync_loop();
    sc.sample_on_ns = 20000000; /* 20 ms of every 420: 2 windows of ~9 steps */
    sc.sample_off_ns = 400000000;
    gt_run run = {0};
    const gt_proc *p = load_call_steps(&run, "calls_few.gtrace", &sc);
    if (p)
        CHECK(p->gpu_steps >= 8 && p->gpu_steps <= 30 && p->steady_gpu_steps > 0 &&
                  !p->gpu_per_step_unavailable,
              "%zu of %zu steps inside the windows", p->gpu_steps, p->n_steps);
    gt_run_free(&run);
    sc.sample_no_window = 1;
    gt_run none = {0};
    p = load_call_steps(&none, "calls_none.gtrace", &sc);
    if (p)
        CHECK(p->n_gpu_windows == 0 && p->gpu_steps == 0 && p->gpu_per_step_unavailable,
              "no window: steps, but no per-step GPU figure (%zu windows)", p->n_gpu_windows);
    gt_run_free(&none);
}

/* No marker and no repeating call (two iterations): no steps, and the verdict's line says why
 * without cutting the reason inside its parenthesis. */
static void test_no_markers(void)
{
    scenario sc = busy_loop();
    sc.nvtx = 0;
    sc.steps = 2;
    sc.sample_on_ns = 50000000;
    sc.sample_off_ns = 150000000;
    CHECK(scenario_write(path_of("nomark.gtrace"), &sc) == 0, "write");
    gt_run run = {0};
    const gt_proc *p = load_one(&run, path_of("nomark.gtrace"));
    CHECK(p != NULL, "load");
    if (p)
        CHECK(p->n_steps == 0 && strstr(p->step_why, "no repeating pattern of calls (GPU sampled"),
              "no steps, why: %s", p->step_why);
    gt_run_free(&run);
    int rc = run_args(cmd_report, "report", path_of("nomark.txt"), 1, path_of("nomark.gtrace"));
    char *t = slurp(path_of("nomark.txt"));
    CHECK(rc == 0 &&
              strstr(t, "steady state no steps found: no marker: no NVTX step range of the "
                        "program, no repeating pattern of calls...; the second half") &&
              !strstr(t, "recorded only;"),
          "the verdict's reason is cut outside its parenthesis:\n%.600s", t);
    free(t);
}

/* Calls of a two-thread program, sampled (one 10 ms window): the loop's thread launches (a graph
 * when graph, then kernel_a, kernel_b) and waits each 2 ms step; a helper thread (gloo's) copies
 * 1 to 3 times and waits, at its own times. */
static int write_two_threads(const char *path, int graph)
{
    enum { STEPS = 30, STR_A = 300, STR_B = 301 };
    const uint64_t t0 = 1700000000000000000ull, period = 2000000;
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = 78;
    h.rank = h.local_rank = h.world_size = -1;
    h.flags = GT_HDR_GPU_SAMPLED;
    h.runtime.cupti_state = GT_CUPTI_ACTIVE;
    snprintf(h.host, sizeof h.host, "testhost");
    static const char cmd[] = "python\0loop.py";
    gt_test_writer w;
    if (gt_test_writer_open(&w, path, &h, "/usr/bin/python3", cmd, sizeof cmd) != 0)
        return -1;
    gt_test_writer_set_tid(&w, 100);
    gt_test_writer_string(&w, STR_A, "kernel_a");
    gt_test_writer_string(&w, STR_B, "kernel_b");
    gt_rec_capture on = {t0, 1, GT_CAPTURE_SRC_SAMPLE},
                   off = {t0 + 10000000, 0, GT_CAPTURE_SRC_SAMPLE};
    gt_test_writer_add(&w, GT_REC_CAPTURE, 0, &on, sizeof on);
    gt_test_writer_add(&w, GT_REC_CAPTURE, 0, &off, sizeof off);
    uint64_t corr = 0;
    for (int i = 0; i < STEPS; i++) {
        uint64_t t = t0 + 100000 + (uint64_t)i * period;
        for (int k = graph ? -1 : 0; k < 2; k++, t += 20000) {
            gt_rec_api_launch l;
            memset(&l, 0, sizeof l);
            l.c = (gt_api_common){t, t + 5000, ++corr, 0, GT_FN___cudaLaunchKernel, 0, 0, 0};
            if (k < 0) {
                l.c.func = GT_FN_cudaGraphLaunch;
                l.graph_exec = 0x7f0000abc000ull;
            } else {
                l.function = 0x401000u + (uint64_t)k * 0x100;
                l.name_id = STR_A + (uint32_t)k;
            }
            gt_test_writer_add(&w, GT_REC_API_LAUNCH, 0, &l, sizeof l);
        }
        gt_rec_api_sync y = {{t + 1300000, t + 1800000, ++corr, 0, GT_FN_cudaStreamSynchronize},
                             0,
                             GT_SYNC_STREAM,
                             0};
        gt_test_writer_add(&w, GT_REC_API_SYNC, 0, &y, sizeof y);
    }
    gt_test_writer_set_tid(&w, 200);
    for (int i = 0; i < STEPS; i++) {
        uint64_t t = t0 + 130000 + (uint64_t)i * period;
        for (int c = 0; c <= i % 3; c++, t += 30000) {
            gt_rec_api_memcpy m;
            memset(&m, 0, sizeof m);
            m.c = (gt_api_common){t, t + 8000, ++corr, 0, GT_FN_cudaMemcpyAsync, 0, 0, 0};
            m.bytes = 64;
            m.direction = GT_DIR_D2H;
            gt_test_writer_add(&w, GT_REC_API_MEMCPY, 0, &m, sizeof m);
        }
        gt_rec_api_sync y = {
            {t + 200000, t + 250000, ++corr, 0, GT_FN_cudaStreamSynchronize}, 0, GT_SYNC_STREAM, 0};
        gt_test_writer_add(&w, GT_REC_API_SYNC, 0, &y, sizeof y);
    }
    return gt_test_writer_close(&w);
}

/* The loop's thread makes the pattern (the helper's calls, mixed in, would break it); a graph
 * launched every step makes the steps before the kernels do, as on the GPU side. */
static void test_call_steps_threads(void)
{
    for (int graph = 0; graph < 2; graph++) {
        const char *name = graph ? "threads_graph.gtrace" : "threads.gtrace";
        CHECK(write_two_threads(path_of(name), graph) == 0, "write %s", name);
        gt_run run = {0};
        const gt_proc *p = load_one(&run, path_of(name));
        CHECK(p && p->gpu_sampled, "%s: load", name);
        if (p) {
            CHECK(p->n_steps == 29 && fabs(p->step_ms_median - 2.0) < 0.01,
                  "%s: %zu steps of %.3f ms (%s; %s)", name, p->n_steps, p->step_ms_median,
                  p->step_source, p->step_why);
            CHECK(graph ? p->step_source_kind == GT_STEPSRC_GRAPH_LAUNCH &&
                              strstr(p->step_source, "CUDA graph launches (30 launches of one "
                                                     "graph) \xe2\x80\x94 CPU side, GPU sampled")
                        : p->step_source_kind == GT_STEPSRC_CALL_PATTERN &&
                              strstr(p->step_source, "repeating launch (30\xc3\x97 kernel_a)"),
                  "%s: source %s", name, p->step_source);
        }
        gt_run_free(&run);
    }
}

int main(int argc, char **argv)
{
    setenv("COLUMNS", "1000", 1); /* the phrases checked below stay on one line */
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
    test_call_steps();
    test_call_steps_partial();
    test_call_steps_threads();
    test_idle_start();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
