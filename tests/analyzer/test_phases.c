/* test_phases.c — the phases of a timeline (issue 21 item 1) on synthetic run folders: a GPU idle
 * while a ptxas child compiles, while the process compiles and loads a module, while cuDNN
 * autotunes, is named by its phase and never blamed on data loading (no gpu-idle advice), and
 * the folded list of processes without CUDA activity comes from the .procs lines.
 * Usage: test_phases WORKDIR */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "advice.h"
#include "commands.h"
#include "model.h"
#include "test_advice_util.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

#define MS 1000000ull

static const char *workdir;

static int has_rule(const gt_run *run, const char *id)
{
    gt_advice_list l = {0};
    gt_advice_from_run(run, &l);
    int found = 0;
    for (size_t i = 0; i < l.n; i++)
        found |= !strcmp(l.items[i].id, id);
    gt_advice_list_free(&l);
    return found;
}

/* The scenario written as a run folder NAME (the .gtrace, and the .procs lines it writes). */
static int load_case(const char *name, scenario *sc, gt_run *run, char *dir, size_t cap)
{
    int rc = run_folder_load(workdir, name, sc, run, dir, cap);
    CHECK(rc == 0 && run->n == 1, "%s: run not readable", name);
    return rc == 0 && run->n == 1;
}

/* Spans disjoint, in time order, covering [t_min, t_max]; their sums are phase_ns. */
static void check_cover(const char *name, const gt_proc *p)
{
    uint64_t sum[GT_PHASE_COUNT] = {0};
    CHECK(p->n_phases && p->phases[0].start_ns == p->t_min &&
              p->phases[p->n_phases - 1].end_ns == p->t_max,
          "%s: %zu phases do not cover the run", name, p->n_phases);
    for (size_t i = 0; i < p->n_phases; i++) {
        const gt_phase_span *s = &p->phases[i];
        CHECK(s->end_ns > s->start_ns && (!i || p->phases[i - 1].end_ns == s->start_ns),
              "%s: phase %zu (%s) not contiguous", name, i, gt_phase_name(s->kind));
        sum[s->kind] += s->end_ns - s->start_ns;
    }
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        CHECK(sum[k] == p->phase_ns[k], "%s: phase_ns[%s] %llu, spans %llu", name, gt_phase_name(k),
              (unsigned long long)p->phase_ns[k], (unsigned long long)sum[k]);
}

static int gap_in_phase(const gt_proc *p, int kind, uint64_t min_ns)
{
    for (size_t i = 0; i < p->n_gaps; i++)
        if (p->gaps[i].phase == kind && p->gaps[i].end_ns - p->gaps[i].start_ns >= min_ns)
            return 1;
    return 0;
}

static scenario jit_scenario(int child)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 10;
    sc.jit_ns = 200 * MS;
    sc.jit_step = 5;
    sc.jit_child = child;
    return sc;
}

/* The text and JSON reports of dir: the phases line, the folded line, the JSON phases. */
static void check_report(const char *name, const char *dir)
{
    char out[700];
    snprintf(out, sizeof out, "%s/report.txt", dir);
    char *argv[] = {"report", (char *)dir, NULL};
    CHECK(run_captured(cmd_report, 2, argv, out) == 0, "%s: report failed", name);
    FILE *f = fopen(out, "r");
    char text[1 << 16] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
    CHECK(strstr(text, "phases    start-up") && strstr(text, ", JIT compilation 2"),
          "%s: no phases line naming JIT compilation: %s", name, text);
    CHECK(strstr(text, "2 other processes without CUDA activity: ") && strstr(text, "ptxas") &&
              (strstr(text, ", sh") || strstr(text, ": sh")),
          "%s: folded line: %s", name, text);
    CHECK(!strstr(text, "gpu-idle"), "%s: gpu-idle in the report", name);

    snprintf(out, sizeof out, "%s/report.json", dir);
    char *jargv[] = {"report", "--json", (char *)dir, NULL};
    CHECK(run_captured(cmd_report, 3, jargv, out) == 0, "%s: report --json failed", name);
    json_error_t err;
    json_t *root = json_load_file(out, 0, &err);
    json_t *proc = json_array_get(json_object_get(root, "processes"), 0);
    json_t *spans = json_object_get(proc, "phases");
    int jit_spans = 0;
    for (size_t i = 0; i < json_array_size(spans); i++) {
        json_t *s = json_array_get(spans, i);
        const char *kind = json_string_value(json_object_get(s, "kind"));
        if (kind && !strcmp(kind, "jit"))
            jit_spans++;
    }
    double jit_ms = json_real_value(
        json_object_get(json_object_get(json_object_get(proc, "phase_totals"), "jit"), "ms"));
    CHECK(jit_spans == 1 && jit_ms >= 190 && jit_ms < 260, "%s: JSON: %d JIT spans, %.1f ms", name,
          jit_spans, jit_ms);
    json_decref(root);
}

/* A Triton-style first call: ptxas runs 200 ms while the GPU waits. */
static void test_jit_child(void)
{
    scenario sc = jit_scenario(1);
    gt_run run;
    char dir[600], procs[700];
    snprintf(dir, sizeof dir, "%s/jit_child", workdir);
    mkdir(dir, 0700);
    snprintf(procs, sizeof procs, "%s/gputrace-testhost.procs", dir);
    FILE *f = fopen(procs, "w"); /* a shell of the run, not a compiler, not a child of ours */
    if (f) {
        fprintf(f, "999 1 1700000000000000000 1700000000500000000 /bin/sh\n");
        fclose(f);
    }
    if (!load_case("jit_child", &sc, &run, dir, sizeof dir))
        return;
    const gt_proc *p = &run.procs[0];
    check_cover("jit_child", p);
    CHECK(p->jit_children == 1 && p->phase_ns[GT_PHASE_JIT] >= 190 * MS &&
              p->phase_ns[GT_PHASE_JIT] < 260 * MS,
          "jit_child: %llu compiler children, JIT %.1f ms", (unsigned long long)p->jit_children,
          (double)p->phase_ns[GT_PHASE_JIT] / 1e6);
    CHECK(gap_in_phase(p, GT_PHASE_JIT, 150 * MS), "jit_child: the 200 ms gap is not in JIT");
    CHECK(p->phase_idle_ns[GT_PHASE_JIT] >= 150 * MS, "jit_child: GPU idle in JIT %.1f ms",
          (double)p->phase_idle_ns[GT_PHASE_JIT] / 1e6);
    CHECK(p->steady_idle_unexplained_ns < 5 * MS,
          "jit_child: %.1f ms of compilation left in the steady state's idle time",
          (double)p->steady_idle_unexplained_ns / 1e6);
    CHECK(!has_rule(&run, "gpu-idle"), "jit_child: gpu-idle blames the compilation");
    gt_run_free(&run);
    check_report("jit_child", dir);
}

/* Compiled in the process (NVRTC, Triton's front end), then cuModuleLoadData. */
static void test_jit_call(void)
{
    scenario sc = jit_scenario(0);
    gt_run run;
    char dir[600];
    if (!load_case("jit_call", &sc, &run, dir, sizeof dir))
        return;
    const gt_proc *p = &run.procs[0];
    check_cover("jit_call", p);
    CHECK(p->jit_calls == 1 && p->jit_children == 0, "jit_call: %llu calls, %llu children",
          (unsigned long long)p->jit_calls, (unsigned long long)p->jit_children);
    /* the GPU's idle gap (the CPU compiled 200 ms, the GPU drained its queue meanwhile) */
    CHECK(p->phase_ns[GT_PHASE_JIT] >= 150 * MS && p->phase_ns[GT_PHASE_JIT] < 260 * MS,
          "jit_call: JIT %.1f ms (the whole gap the module load ends)",
          (double)p->phase_ns[GT_PHASE_JIT] / 1e6);
    CHECK(!has_rule(&run, "gpu-idle"), "jit_call: gpu-idle blames the compilation");
    gt_run_free(&run);
}

/* cuDNN autotuning in every step (new shapes): the pauses between trials are autotuning. */
static void test_autotune(void)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 10;
    sc.cudnn = 3;
    sc.cudnn_ops = 2;
    sc.autotune_pause_ns = 30 * MS;
    gt_run run;
    char dir[600];
    if (!load_case("autotune", &sc, &run, dir, sizeof dir))
        return;
    const gt_proc *p = &run.procs[0];
    check_cover("autotune", p);
    /* 10 steps x 2 ops x 2 pauses of 30 ms, plus the trials themselves */
    CHECK(p->phase_ns[GT_PHASE_AUTOTUNE] >= 1200 * MS,
          "autotune: %.1f ms of autotuning, want >= 1200",
          (double)p->phase_ns[GT_PHASE_AUTOTUNE] / 1e6);
    CHECK(gap_in_phase(p, GT_PHASE_AUTOTUNE, 25 * MS), "autotune: no gap in autotuning");
    CHECK(!has_rule(&run, "gpu-idle"), "autotune: gpu-idle blames the autotuning");
    gt_run_free(&run);
}

/* The control: real data loading stays the steady state's idle time, blamed as before. */
static void test_data_loading_still_blamed(void)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 10;
    sc.kernel_ns = 100000;
    sc.data_load_ns = 5 * MS;
    gt_run run;
    char dir[600];
    if (!load_case("data_loading", &sc, &run, dir, sizeof dir))
        return;
    const gt_proc *p = &run.procs[0];
    check_cover("data_loading", p);
    CHECK(!p->phase_ns[GT_PHASE_JIT] && !p->phase_ns[GT_PHASE_AUTOTUNE] &&
              p->phase_ns[GT_PHASE_STEADY] > 0 && p->phase_ns[GT_PHASE_STARTUP] > 0,
          "data_loading: phases JIT %llu autotune %llu steady %llu",
          (unsigned long long)p->phase_ns[GT_PHASE_JIT],
          (unsigned long long)p->phase_ns[GT_PHASE_AUTOTUNE],
          (unsigned long long)p->phase_ns[GT_PHASE_STEADY]);
    CHECK(has_rule(&run, "gpu-idle"), "data_loading: gpu-idle did not fire");
    gt_run_free(&run);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_phases WORKDIR\n");
        return 2;
    }
    workdir = argv[1];
    test_jit_child();
    test_jit_call();
    test_autotune();
    test_data_loading_still_blamed();
    if (failures)
        fprintf(stderr, "test_phases: %d failures\n", failures);
    return failures ? 1 : 0;
}
