/* test_compile.c — a framework's compiler in the process named compilation (issue 30), on
 * synthetic run folders: torch.compile's first compilation (Dynamo's silent tracing, then calls
 * from Inductor's frames, a module load, Inductor's compile workers beside it) is a compilation
 * phase as long as it lasted, never warm-up or the steady state's idle, with one-time-cost advice;
 * recompiles later in the run are counted apart with their own advice; the evidence is enough
 * without stacks (workers and module loads). Silent: a JIT compile without a framework compiler
 * (ptxas and a module load), cuDNN autotuning, a healthy loop, and calls made from the compiled
 * code's runtime wrappers (they run every step).
 * Usage: test_compile WORKDIR */
#include <jansson.h>
#include <math.h>
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

/* A training loop of 30 steps, 2 ms of GPU work each, a sync each step. */
static scenario loop(void)
{
    scenario sc = scenario_healthy();
    sc.steps = 30;
    sc.kernels_per_step = 10;
    sc.kernel_ns = 200000;
    sc.pinned_h2d_bytes = 1 << 20; /* the batch, copied before the compiled call */
    sc.cudnn_ops = 0;
    sc.item_every_step = 1;
    sc.nvtx = 1;
    return sc;
}

/* The scenario written as a run folder NAME (its trace, its workers' traces, .procs lines). */
static const gt_proc *load(const char *name, scenario *sc, gt_run *run, char *dir, size_t cap)
{
    CHECK(run_folder_load(workdir, name, sc, run, dir, cap) == 0, "%s: write and load", name);
    for (size_t i = 0; i < run->n; i++)
        if (run->procs[i].hdr.pid == sc->pid)
            return &run->procs[i];
    CHECK(0, "%s: the process", name);
    return NULL;
}

static double phase_ms(const gt_proc *p, int kind)
{
    return (double)p->phase_ns[kind] / 1e6;
}

/* The first compilation, with its evidence: stacks or only workers and the module load. */
static void first_compilation(const char *name, int stacks)
{
    scenario sc = loop();
    sc.compile_ns = 2000 * MS;
    sc.compile_workers = 3;
    sc.compile_no_stacks = !stacks;
    gt_run run;
    char dir[600];
    const gt_proc *p = load(name, &sc, &run, dir, sizeof dir);
    if (p) {
        double comp = phase_ms(p, GT_PHASE_COMPILE);
        CHECK(fabs(comp - 2000) < 100, "%s: compilation %.1f ms, 2000 written", name, comp);
        CHECK(p->n_compilations == 1 && p->recompile_ns == 0, "%s: %zu compilations", name,
              p->n_compilations);
        CHECK(p->compile_workers == 3, "%s: %u workers", name, p->compile_workers);
        CHECK(stacks ? p->compile_calls > 100 : p->compile_calls == 0, "%s: %llu compiler calls",
              name, (unsigned long long)p->compile_calls);
        CHECK(p->frameworks & GT_FW_TORCH_COMPILE, "%s: torch.compile seen", name);
        CHECK(phase_ms(p, GT_PHASE_WARMUP) < 100, "%s: warm-up %.1f ms, not the compilation", name,
              phase_ms(p, GT_PHASE_WARMUP));
        CHECK(p->steady_idle_unexplained_ms_per_step < 0.5,
              "%s: the compilation is not the steady state's idle (%.2f ms a step)", name,
              p->steady_idle_unexplained_ms_per_step);
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_advice *a = advice_find(&l, "compilation", -1);
    CHECK(a && strstr(a->message, "one-time") && strstr(a->message, "TORCHINDUCTOR_CACHE_DIR") &&
              strstr(a->message, "3 compile workers"),
          "%s: compilation advice: %s", name, a ? a->message : "none");
    if (a)
        CHECK(a->basis == GT_BASIS_RUN && fabs(a->saving_ms - 2000) < 100, "%s: saving %.1f ms",
              name, a->saving_ms);
    CHECK(!advice_find(&l, "recompilation", -1) && !advice_find(&l, "gpu-idle", -1),
          "%s: no recompile, no gpu-idle", name);
    gt_advice_list_free(&l);
    gt_run_free(&run);
}

static void recompiles(void)
{
    scenario sc = loop();
    sc.compile_ns = 2000 * MS;
    sc.compile_workers = 2;
    sc.recompile_every = 10; /* steps 10 and 20: 500 ms each */
    gt_run run;
    char dir[600];
    const gt_proc *p = load("recompiles", &sc, &run, dir, sizeof dir);
    if (p) {
        CHECK(p->n_compilations == 3, "recompiles: %zu compilations, 3 written", p->n_compilations);
        CHECK(fabs((double)p->compile_first_ns / 1e6 - 2000) < 100 &&
                  fabs((double)p->recompile_ns / 1e6 - 1000) < 100,
              "recompiles: first %.1f ms, later %.1f ms", (double)p->compile_first_ns / 1e6,
              (double)p->recompile_ns / 1e6);
        /* the recompiles lie in the steady window: named, not its idle */
        CHECK(p->steady_idle_unexplained_ms_per_step < 0.5, "recompiles: %.2f ms steady idle",
              p->steady_idle_unexplained_ms_per_step);
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_advice *a = advice_find(&l, "recompilation", -1);
    CHECK(a && strstr(a->message, "2 compilations after the first") &&
              strstr(a->message, "mark_dynamic"),
          "recompiles: advice %s", a ? a->message : "none");
    CHECK(advice_find(&l, "compilation", -1) != NULL, "recompiles: the first compilation too");
    gt_advice_list_free(&l);
    gt_run_free(&run);
    /* the report's JSON says it */
    char out[700];
    snprintf(out, sizeof out, "%s/recompiles.json", workdir);
    CHECK(run_args(cmd_report, "report", out, 2, "--json", dir) == 0, "recompiles: report");
    json_t *root = json_load_file(out, 0, NULL);
    json_t *procs = json_object_get(root, "processes");
    int seen = 0;
    for (size_t i = 0; i < json_array_size(procs); i++) {
        json_t *pe = json_object_get(json_object_get(json_array_get(procs, i), "phase_totals"),
                                     "compile_evidence");
        if (!pe || json_is_null(json_object_get(pe, "framework")))
            continue;
        seen = 1;
        CHECK(json_integer_value(json_object_get(pe, "recompiles")) == 2 &&
                  !strcmp(json_string_value(json_object_get(pe, "framework")), "torch_compile") &&
                  json_array_size(json_object_get(pe, "compilations")) == 3,
              "recompiles: JSON compile_evidence");
    }
    CHECK(seen, "recompiles: a process with compile_evidence in the JSON");
    json_decref(root);
}

/* No framework compiler: other costs keep their names. */
static void silent(void)
{
    gt_run run;
    char dir[600];
    /* Triton-style JIT: ptxas as a child, no compiler frame, no worker */
    scenario jit = loop();
    jit.jit_ns = 500 * MS;
    jit.jit_step = 3;
    jit.jit_child = 1;
    const gt_proc *p = load("jit_only", &jit, &run, dir, sizeof dir);
    if (p)
        CHECK(!p->phase_ns[GT_PHASE_COMPILE] && phase_ms(p, GT_PHASE_JIT) > 400,
              "jit_only: JIT %.1f ms, compilation %.1f ms", phase_ms(p, GT_PHASE_JIT),
              phase_ms(p, GT_PHASE_COMPILE));
    gt_run_free(&run);
    /* cuDNN autotuning in the first step */
    scenario tune = loop();
    tune.cudnn = 2;
    tune.cudnn_ops = 4;
    tune.autotune_ns = 20 * MS;
    p = load("autotune_only", &tune, &run, dir, sizeof dir);
    if (p)
        CHECK(!p->phase_ns[GT_PHASE_COMPILE] && p->phase_ns[GT_PHASE_AUTOTUNE],
              "autotune_only: compilation %.1f ms", phase_ms(p, GT_PHASE_COMPILE));
    gt_run_free(&run);
    /* a plain loop */
    scenario plain = loop();
    p = load("plain", &plain, &run, dir, sizeof dir);
    if (p)
        CHECK(!p->phase_ns[GT_PHASE_COMPILE] && !p->n_compilations &&
                  !(p->frameworks & (GT_FW_TORCH_COMPILE | GT_FW_JAX)),
              "plain: no compilation, no framework");
    gt_run_free(&run);
    /* the compiled code's runtime wrapper on the stacks (it runs at every step): no evidence */
    scenario runtime = loop();
    runtime.compile_ns = 400 * MS;
    runtime.compile_file = "/usr/lib/python3/site-packages/torch/_inductor/compile_fx.py";
    runtime.compile_func = "cudagraphify.<locals>.run";
    p = load("runtime_frames", &runtime, &run, dir, sizeof dir);
    if (p)
        CHECK(!p->phase_ns[GT_PHASE_COMPILE] && !p->compile_calls,
              "runtime_frames: compilation %.1f ms from %llu calls", phase_ms(p, GT_PHASE_COMPILE),
              (unsigned long long)p->compile_calls);
    gt_run_free(&run);
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    first_compilation("first_with_stacks", 1);
    first_compilation("first_without_stacks", 0);
    recompiles();
    silent();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_compile: all passed\n");
    return failures ? 1 : 0;
}
