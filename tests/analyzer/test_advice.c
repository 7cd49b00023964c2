/* test_advice.c — each advice rule fires on a synthetic trace with its pathology and stays quiet
 * on one without it (issue 29 item 9): among the silent ones the multi-stream copies that keep the
 * GPU busy while the CPU waits, benchmark mode already off, and a JAX process worded for XLA.
 * What every rule shares (severity from the share, minor folding, no double counting, ranks
 * merged) is test_advice_engine.c's. Usage: test_advice WORKDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "test_report_synth.h"
#include "../gt_check.h"

static const char *workdir;

static const gt_advice *find(const gt_advice_list *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, id))
            return &l->items[i];
    return NULL;
}

static void dump(const char *name, const gt_advice_list *l)
{
    fprintf(stderr, "  advice for %s:", name);
    for (size_t i = 0; i < l->n; i++)
        fprintf(stderr, " %s(%s)", l->items[i].id, gt_severity_name(l->items[i].severity));
    fprintf(stderr, "%s\n", l->n ? "" : " none");
}

/* Write sc as NAME/NAME.gtrace (with its DataLoader workers beside it), compute the folder's
 * advice, check that `rule` is (or is not) present. Returns the item copied into *out when
 * present. */
static int run_case(const char *name, const scenario *sc, const char *rule, int expect,
                    gt_advice *out)
{
    char dir[300], path[600];
    snprintf(dir, sizeof dir, "%.200s/%.60s", workdir, name);
    snprintf(path, sizeof path, "%s/%s.gtrace", dir, name);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0, "%s: %s", name, cmd);
    CHECK(scenario_write(path, sc) == 0, "%s: writing the trace failed", name);
    const char *paths[] = {dir};
    gt_advice_list l = {0};
    CHECK(gt_advice_compute(paths, 1, &l) == 0, "%s: trace not readable", name);
    const gt_advice *a = find(&l, rule);
    int ok = expect ? a != NULL : a == NULL;
    CHECK(ok, "%s: rule %s %s", name, rule, expect ? "did not fire" : "fired but must not");
    if (!ok)
        dump(name, &l);
    if (a && out)
        *out = *a;
    gt_advice_list_free(&l);
    return a != NULL;
}

static double evidence(const gt_advice *a, const char *key)
{
    for (int i = 0; i < a->n_evidence; i++)
        if (!strcmp(a->evidence[i].key, key))
            return a->evidence[i].value;
    return -1;
}

static void test_healthy_has_no_advice(void)
{
    scenario sc = scenario_healthy();
    char path[512];
    snprintf(path, sizeof path, "%s/healthy.gtrace", workdir);
    CHECK(scenario_write(path, &sc) == 0, "write healthy");
    const char *paths[] = {path};
    gt_advice_list l = {0};
    CHECK(gt_advice_compute(paths, 1, &l) == 0, "healthy readable");
    CHECK(l.n == 0, "healthy run got %zu advice items", l.n);
    if (l.n)
        dump("healthy", &l);
    gt_advice_list_free(&l);
}

static void test_sync_stall(void)
{
    scenario sc = scenario_healthy();
    sc.sync_every_step = 1;
    sc.data_load_ns = 2000000; /* CPU work after each sync leaves the GPU idle */
    gt_advice a;
    if (run_case("sync_stall", &sc, "sync-stall", 1, &a)) {
        CHECK(strstr(a.call_site, "train.py:57") != NULL, "sync-stall call site '%s'", a.call_site);
        CHECK(a.has_saving && a.basis == GT_BASIS_STEP && a.saving_ms > 1.5 && a.saving_ms < 2.5,
              "sync-stall saving %.3f ms per step (expected ~2 ms idle after each sync)",
              a.saving_ms);
        CHECK(evidence(&a, "sync_ms_per_step") > 5, "sync ms per step %.3f",
              evidence(&a, "sync_ms_per_step"));
        CHECK(strstr(a.message, "torch.cuda.synchronize()"), "PyTorch's words: %s", a.message);
    }
    /* the idle after a sync is the sync's cost, not data loading */
    run_case("sync_stall_not_idle", &sc, "gpu-idle", 0, NULL);
    scenario item = scenario_healthy();
    item.item_every_step = 1; /* loss.item(): a synchronous 4-byte D2H copy */
    run_case("item_every_step", &item, "sync-stall", 1, NULL);
    scenario ok = scenario_healthy();
    ok.data_load_ns = 2000000; /* same CPU work, no sync: it overlaps GPU work */
    run_case("no_sync", &ok, "sync-stall", 0, NULL);
    /* Copies on a second stream, waited for every step while the kernels queued on the first
     * keep the GPU busy: the waits cost nothing, and the advice says so instead of a stall. */
    scenario busy = scenario_healthy();
    busy.side_copy_bytes = 40u << 20; /* 2 ms at 20 GB/s a step */
    busy.nvtx = 1;
    if (run_case("sync_gpu_busy", &busy, "sync-stall", 1, &a))
        CHECK(a.minor && a.severity == GT_SEV_INFO && a.saving_ms < 0.1 &&
                  evidence(&a, "sync_ms_per_step") > 1 &&
                  strstr(a.message, "busy while the CPU waits") &&
                  strstr(a.message, "saves little"),
              "the GPU stayed busy: a minor item saying so (%.3f ms saved, %.2f ms waited): %s",
              a.saving_ms, evidence(&a, "sync_ms_per_step"), a.message);
}

/* Unified memory (issue 30): kernels stalling on page faults, by the faults' own times; quiet when
 * the program prefetches, when the counters are unknown, and one-time faults are only info. */
static void test_unified_memory(void)
{
    scenario sc = scenario_healthy();
    sc.um_buffers = 2;
    sc.um_bytes = 8u << 20; /* 2 x 0.84 ms at 10 GB/s, + 50 us of fault service, every step */
    sc.um_fault_ns = 50000;
    sc.um_cpu_touch = 1;
    gt_advice a;
    if (run_case("um_faults", &sc, "unified-memory", 1, &a)) {
        double stall = 0.05 + 2 * (double)sc.um_bytes / 10.0 / 1e6;
        CHECK(a.severity == GT_SEV_WARNING, "um severity %s", gt_severity_name(a.severity));
        CHECK(a.has_saving && a.basis == GT_BASIS_STEP && a.saving_ms > stall * 0.9 &&
                  a.saving_ms < stall * 1.1,
              "um saving %.3f ms per step (the stall: %.3f)", a.saving_ms, stall);
        CHECK(evidence(&a, "gpu_faults_per_step") > 0.9 &&
                  evidence(&a, "gpu_faults_per_step") < 1.1,
              "um faults per step %.2f", evidence(&a, "gpu_faults_per_step"));
        CHECK(evidence(&a, "on_demand_htod_mb") > 2 * 8.3 * 9, "um on-demand MB %.1f",
              evidence(&a, "on_demand_htod_mb"));
        CHECK(strstr(a.message, "CPU touches") != NULL, "um message misses the CPU: %s", a.message);
        CHECK(strstr(a.message, "PrefetchAsync") != NULL, "um remedy: %s", a.message);
        CHECK(strstr(a.call_site, "train.py:33") != NULL, "um call site '%s'", a.call_site);
    }
    scenario big = sc;
    big.um_bytes = 64u << 20; /* the stall is most of the step */
    if (run_case("um_faults_big", &big, "unified-memory", 1, &a))
        CHECK(a.severity == GT_SEV_CRITICAL, "um big severity %s", gt_severity_name(a.severity));
    scenario pre = sc;
    pre.um_prefetch = 1; /* the same bytes move, asked for: no fault, no stall */
    run_case("um_prefetch", &pre, "unified-memory", 0, NULL);
    scenario once = sc;
    once.um_cpu_touch = 0;
    once.um_bytes = 64u << 20; /* faulted over once, at the first kernel */
    if (run_case("um_once", &once, "unified-memory", 1, &a)) { /* severity by its run share */
        double run_share = evidence(&a, "stall_share_run");
        int want = run_share >= 25  ? GT_SEV_CRITICAL
                   : run_share >= 5 ? GT_SEV_WARNING
                                    : GT_SEV_INFO;
        CHECK(a.severity == want && a.basis == GT_BASIS_RUN &&
                  strstr(a.message, "outside the steady state") != NULL,
              "um once: %s (%.1f%% of the run) %s", gt_severity_name(a.severity), run_share,
              a.message);
    }
    scenario small = once;
    small.um_bytes = 1u << 20; /* 0.1 ms once in a second of work: nothing to say */
    run_case("um_small", &small, "unified-memory", 0, NULL);
    scenario refused = sc;
    refused.um_refused = 1; /* faults unknown: no advice on what was not measured */
    run_case("um_refused", &refused, "unified-memory", 0, NULL);
}

static void test_pinned_memory(void)
{
    scenario sc = scenario_healthy();
    sc.pageable_h2d_bytes = 32u << 20;
    gt_advice a;
    if (run_case("pageable", &sc, "pinned-memory", 1, &a)) {
        double pinned = evidence(&a, "pinned_gbps_h2d"), page = evidence(&a, "pageable_gbps");
        CHECK(pinned > 19 && pinned < 21 && page > 4.5 && page < 5.5 &&
                  evidence(&a, "pinned_rate_from_this_run") == 1,
              "bandwidths pinned %.2f (this run's) pageable %.2f", pinned, page);
        double ms = evidence(&a, "pageable_ms_per_step"), bytes = 33.554432; /* MB */
        CHECK(
            a.has_saving && a.basis == GT_BASIS_STEP && a.saving_ms > ms - bytes / pinned - 0.05 &&
                a.saving_ms < ms - bytes / pinned + 0.05,
            "saving = pageable time - bytes at the pinned rate: %.3f of %.3f ms", a.saving_ms, ms);
        CHECK(strstr(a.call_site, "train.py:42") != NULL, "pinned call site '%s'", a.call_site);
        CHECK(strstr(a.message, "this run's pinned copies") && strstr(a.message, "pin_memory"),
              "the rate's source and PyTorch's remedy: %s", a.message);
    }
    scenario nominal = sc; /* no pinned copy to measure: the link's nominal rate, said so */
    nominal.pinned_h2d_bytes = 0;
    if (run_case("pageable_nominal", &nominal, "pinned-memory", 1, &a))
        CHECK(evidence(&a, "pinned_rate_nominal") == 1 && evidence(&a, "pinned_gbps_h2d") == 50 &&
                  strstr(a.message, "nominal") && strstr(a.message, "DataLoader(pin_memory=True)"),
              "nominal rate (Hopper: PCIe 5.0), pin_memory advised as none is seen: %s", a.message);
    /* this machine's own peaks (gputrace doctor --save) come first */
    char peaks[600];
    snprintf(peaks, sizeof peaks, "%s/peaks.json", workdir);
    FILE *f = fopen(peaks, "w");
    if (f) {
        fprintf(f, "{\"schema\": \"gputrace-peaks\", \"schema_version\": 1, \"host\": "
                   "\"testhost\", \"gpu_name\": \"NVIDIA H200\", \"measured_at\": "
                   "\"2026-12-01T00:00:00Z\", \"copies_gbps\": {\"h2d_pinned\": 50.0, "
                   "\"d2h_pinned\": 48.0}, \"gemm_tflops\": {\"fp32\": 50.0, \"tf32\": 400.0}}\n");
        fclose(f);
    }
    setenv("GPUTRACE_PEAKS", peaks, 1);
    if (run_case("pageable_doctor", &sc, "pinned-memory", 1, &a))
        CHECK(evidence(&a, "pinned_rate_from_doctor") == 1 &&
                  evidence(&a, "pinned_gbps_h2d") == 50 &&
                  evidence(&a, "pinned_ms_this_machine") > 0 &&
                  strstr(a.message, "On this machine pinned copies reach 50.0 GB/s H2D"),
              "doctor's peaks first: %s", a.message);
    setenv("GPUTRACE_PEAKS", "off", 1);
    scenario ok = scenario_healthy();
    ok.pinned_h2d_bytes = 32u << 20;
    run_case("pinned", &ok, "pinned-memory", 0, NULL);
}

static void test_non_blocking_copy(void)
{
    scenario sc = scenario_healthy();
    sc.blocking_h2d_bytes = 16u << 20;
    gt_advice a;
    if (run_case("blocking_copy", &sc, "non-blocking-copy", 1, &a))
        CHECK(a.basis == GT_BASIS_RUN && strstr(a.message, "non_blocking=True"),
              "over the run, PyTorch's words: %s", a.message);
    scenario ok = scenario_healthy();
    ok.pinned_h2d_bytes = 16u << 20;
    run_case("async_copy", &ok, "non-blocking-copy", 0, NULL);
    /* pageable copies block whatever the call: pinned-memory's, not this rule's */
    scenario page = scenario_healthy();
    page.pageable_h2d_bytes = 16u << 20;
    run_case("pageable_not_nonblocking", &page, "non-blocking-copy", 0, NULL);
}

static scenario launch_bound_loop(void)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 200;
    sc.kernel_ns = 3000;
    sc.launch_ns = 4000;
    sc.cpu_between_ns = 6000;
    sc.pinned_h2d_bytes = 0;
    return sc;
}

static void test_launch_bound(void)
{
    scenario sc = launch_bound_loop();
    gt_advice a;
    if (run_case("launch_bound", &sc, "launch-bound", 1, &a))
        CHECK(evidence(&a, "gpu_busy") < 50 && strstr(a.message, "CUDA graph") &&
                  strstr(a.message, "torch.compile"),
              "launch-bound busy %.1f: %s", evidence(&a, "gpu_busy"), a.message);
    run_case("launch_bound_not_idle", &sc, "gpu-idle", 0, NULL);
    scenario ok = scenario_healthy();
    ok.kernels_per_step = 200;
    ok.kernel_ns = 50000;
    run_case("big_kernels", &ok, "launch-bound", 0, NULL);
    /* a CuPy loop gets CuPy's remedy, a C program the CUDA API's */
    scenario cupy = sc;
    cupy.module = "/usr/lib/python3/site-packages/cupy/_core/core.cpython-312.so";
    if (run_case("launch_bound_cupy", &cupy, "launch-bound", 1, &a))
        CHECK(strstr(a.message, "cupy.fuse") && !strstr(a.message, "torch"), "CuPy: %s", a.message);
    scenario c = sc;
    c.module = NULL;
    c.exe = "/opt/app/train_c";
    if (run_case("launch_bound_c", &c, "launch-bound", 1, &a))
        CHECK(strstr(a.message, "cudaStreamBeginCapture") && !strstr(a.message, "torch"),
              "CUDA C: %s", a.message);
}

static void test_gpu_idle(void)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 10;
    sc.kernel_ns = 100000;
    sc.data_load_ns = 5000000;
    gt_advice a;
    if (run_case("data_loading", &sc, "gpu-idle", 1, &a))
        CHECK(a.saving_ms > 3 && a.saving_ms < 5.5 && a.basis == GT_BASIS_STEP,
              "gpu-idle saving %.3f ms/step", a.saving_ms);
    scenario ok = scenario_healthy();
    ok.data_load_ns = 5000000; /* 10 ms of GPU work per step hides 5 ms of loading */
    run_case("data_loading_hidden", &ok, "gpu-idle", 0, NULL);
    /* DataLoader workers and pinned copies already there: neither is advised again */
    scenario workers = sc;
    workers.dataloader_workers = 2;
    workers.pageable_h2d_bytes = 1 << 20;
    if (run_case("data_loading_workers", &workers, "gpu-idle", 1, &a))
        CHECK(strstr(a.message, "2 DataLoader workers do not keep up") &&
                  !strstr(a.message, "pin_memory=True"),
              "settings in effect are not advised: %s", a.message);
}

static void test_amp(void)
{
    scenario sc = scenario_healthy();
    sc.cudnn = 2;
    sc.cudnn_dtype = 0;
    sc.cudnn_tensor_cores = 0;
    sc.conv_kernel_ns = 3000000;
    gt_advice a;
    if (run_case("fp32_conv", &sc, "amp", 1, &a)) {
        double per = evidence(&a, "fp32_ms_per_step");
        CHECK(a.basis == GT_BASIS_STEP && per > 0 && a.saving_ms > 0.49 * per &&
                  a.saving_ms < 0.51 * per && strstr(a.message, "cudnn.allow_tf32") &&
                  strstr(a.saving_source, "assumed"),
              "per step, half of the fp32 time without a measured rate (%.3f of %.3f): %s",
              a.saving_ms, per, a.message);
    }
    char peaks[600];
    snprintf(peaks, sizeof peaks, "%s/peaks.json", workdir); /* test_pinned_memory's: TF32 8x */
    setenv("GPUTRACE_PEAKS", peaks, 1);
    if (run_case("fp32_conv_doctor", &sc, "amp", 1, &a))
        CHECK(evidence(&a, "tensor_core_speedup") == 8 &&
                  a.saving_ms > 0.87 * evidence(&a, "fp32_ms_per_step"),
              "the measured TF32 rate (8x fp32): saving %.3f of %.3f ms", a.saving_ms,
              evidence(&a, "fp32_ms_per_step"));
    setenv("GPUTRACE_PEAKS", "off", 1);
    scenario tc = sc;
    tc.cudnn_tensor_cores = 1;
    run_case("fp32_conv_tensor_cores", &tc, "amp", 0, NULL);
    scenario old = sc;
    old.cc_major = 6;
    run_case("fp32_conv_pascal", &old, "amp", 0, NULL);
}

static void test_alloc_in_loop(void)
{
    scenario sc = scenario_healthy();
    sc.allocs_per_step = 2;
    gt_advice a;
    if (run_case("alloc_loop", &sc, "alloc-in-loop", 1, &a))
        CHECK(evidence(&a, "alloc_calls_per_step") > 3.5 &&
                  evidence(&a, "alloc_calls_per_step") < 4.5 && a.basis == GT_BASIS_STEP,
              "alloc calls per step %.2f", evidence(&a, "alloc_calls_per_step"));
    scenario ok = scenario_healthy();
    run_case("no_alloc", &ok, "alloc-in-loop", 0, NULL);
}

/* Autotuning's trials time the candidates: the advice weighs this run's cost against the
 * winners' gain per step over the heuristics' pick (the first candidate tried). */
static void test_cudnn_benchmark_weighed(void)
{
    scenario sc = scenario_healthy();
    sc.cudnn = 2;
    sc.nvtx = 1;          /* steps from NVTX ranges: exactly 10 */
    sc.cudnn_engine = 11; /* the second candidate wins: 0.2 ms faster than the first */
    sc.trial_kernel_ns[0] = 600000, sc.trial_kernel_ns[1] = 400000, sc.trial_kernel_ns[2] = 500000;
    gt_advice a;
    if (run_case("cudnn_bench_gain", &sc, "cudnn-benchmark", 1, &a)) {
        double gain = evidence(&a, "gain_ms_per_step"), cost = evidence(&a, "autotune_cost_ms");
        double even = evidence(&a, "break_even_steps");
        CHECK(gain > 0.79 && gain < 0.81, "4 ops x 0.2 ms per step: gain %.3f", gain);
        CHECK(cost > 24 && even > cost / gain - 1 && even < cost / gain + 1,
              "break-even = cost / gain: %.1f ms / %.3f ms = %.1f steps", cost, gain, even);
        CHECK(strstr(a.message, "pays back after") && strstr(a.message, "this run: 10 steps") &&
                  a.has_saving && a.basis == GT_BASIS_RUN && a.saving_ms > cost - 8.5 &&
                  a.saving_ms < cost - 7.5,
              "not paid back in 10 steps, saving = cost - 10 x gain: %.2f; %s", a.saving_ms,
              a.message);
    }
    scenario same = sc; /* the heuristics' pick wins its own trials: nothing gained */
    same.cudnn_engine = 10;
    same.autotune_ns = 5000000;
    if (run_case("cudnn_bench_no_gain", &same, "cudnn-benchmark", 1, &a))
        CHECK(evidence(&a, "gain_ms_per_step") == 0 && strstr(a.message, "never comes back") &&
                  strstr(a.message, "benchmark = False") && a.has_saving &&
                  a.saving_ms == evidence(&a, "autotune_cost_ms"),
              "no gain: the whole cost is the saving: %s", a.message);
    scenario pays = sc; /* a large gain, cheap trials: paid back within the run */
    pays.trial_kernel_ns[0] = 2000000;
    pays.autotune_ns = 10000;
    run_case("cudnn_bench_pays", &pays, "cudnn-benchmark", 0, NULL);
}

/* Benchmark mode with a new input shape every step: autotuning recurs, named with its counts. */
static void test_cudnn_benchmark_recurring(void)
{
    scenario dyn = scenario_healthy();
    dyn.cudnn = 3;
    dyn.steps = 10;
    dyn.cudnn_ops = 3;
    dyn.autotune_ns = 100000;
    dyn.nvtx = 1;
    gt_advice a;
    if (run_case("cudnn_dynamic", &dyn, "cudnn-benchmark", 1, &a))
        CHECK(a.severity >= GT_SEV_WARNING && a.basis == GT_BASIS_RUN &&
                  evidence(&a, "autotuned_signatures") == 30 &&
                  evidence(&a, "input_shapes") == 10 && evidence(&a, "late_signatures") >= 20 &&
                  strstr(a.message, "every new input shape autotunes again") &&
                  strstr(a.message, "benchmark = False") && strstr(a.message, "bucket"),
              "dynamic shapes: recurring, counted, remedy: %s", a.message);
    /* the trials' waits are autotuning's, never a sync stall (issue 29: a 1.9 s 'per step' stall
     * at cudnn_frontend::time_sorted_plan) */
    run_case("cudnn_dynamic_no_stall", &dyn, "sync-stall", 0, NULL);
    CHECK(gt_call_site_is_autotuner("cudnn_frontend::time_sorted_plan<cudnn_frontend::Plan>") &&
              gt_call_site_is_autotuner("xla::gpu::GemmAlgorithmPicker::Run") &&
              !gt_call_site_is_autotuner("train.py:57 (train)"),
          "an autotuner's call site is told from a program's");
    /* the same in a JAX process: XLA's flags and caches, no PyTorch setting */
    scenario jax = dyn;
    jax.module = "/usr/lib/python3/site-packages/jaxlib/_jax.so";
    if (run_case("cudnn_dynamic_jax", &jax, "cudnn-benchmark", 1, &a))
        CHECK(strstr(a.message, "XLA_FLAGS=--xla_gpu_autotune_level") &&
                  !strstr(a.message, "torch") && a.framework == GT_FW_JAX,
              "JAX is told about XLA, never torch.backends: %s", a.message);
}

static void test_cudnn_benchmark(void)
{
    scenario sc = scenario_healthy();
    sc.cudnn = 1; /* heuristics, static shapes */
    sc.nvtx = 1;
    sc.sync_every_step = 1; /* the step holds its GPU work */
    gt_advice a;
    if (run_case("cudnn_heuristic", &sc, "cudnn-benchmark", 1, &a))
        CHECK(
            a.severity == GT_SEV_INFO && a.saving_bound && a.has_saving &&
                strstr(a.message, "(engine 38 x4)") && evidence(&a, "conv_gpu_ms_per_step") > 1.3 &&
                evidence(&a, "conv_gpu_ms_per_step") < 1.7 && strstr(a.message, "benchmark = True"),
            "heuristic: info, an upper bound (the convolutions' time, 4 x 0.4 ms a step), "
            "the heuristics' choice: %s",
            a.message);
    scenario cost = scenario_healthy();
    cost.cudnn = 2;
    cost.autotune_ns = 20000000; /* 3 × 4 × 20 ms of autotuning in a ~350 ms run */
    if (run_case("cudnn_autotune_cost", &cost, "cudnn-benchmark", 1, &a)) {
        CHECK(evidence(&a, "autotune_cost_ms") >= 240, "autotune cost %.1f ms",
              evidence(&a, "autotune_cost_ms"));
        /* the program ran engine 38, which no trial timed: no gain, and no canned figure */
        CHECK(evidence(&a, "gain_ms_per_step") < 0 && strstr(a.message, "did not time") &&
                  !strstr(a.message, "ResNet") && a.has_saving,
              "untimed winner: gain unknown, said why, the cost is the saving: %s", a.message);
    }
    scenario ok = scenario_healthy();
    ok.cudnn = 2;
    ok.autotune_ns = 10000;
    run_case("cudnn_autotuned_cheap", &ok, "cudnn-benchmark", 0, NULL);
    /* Benchmark mode never on (a DDP run records an event before its first convolution): the
     * slow first execution of one plan is first use, not autotuning; nobody is told to turn
     * benchmark mode off, and no autotuning phase is made of it. */
    scenario off = scenario_healthy();
    off.cudnn = 1;
    off.nvtx = 1;
    off.first_exec_flagged = 1;
    if (run_case("cudnn_first_use", &off, "cudnn-benchmark", 1, &a))
        CHECK(!strstr(a.message, "benchmark = False") && strstr(a.message, "benchmark = True"),
              "benchmark off: never told to turn it off: %s", a.message);
    if (run_case("cudnn_first_use_note", &off, "first-use", 1, &a))
        CHECK(a.impact == GT_IMPACT_NOTE && !a.has_saving && strstr(a.message, "not autotuning"),
              "first use is a note: %s", a.message);
    char dir[400];
    snprintf(dir, sizeof dir, "%.300s/cudnn_first_use", workdir);
    const char *in[] = {dir};
    gt_run run = {0};
    if (gt_run_load(&run, in, 1, 0) == 0 && run.n == 1)
        CHECK(run.procs[0].phase_ns[GT_PHASE_AUTOTUNE] == 0 && run.procs[0].autotune_ns == 0 &&
                  run.procs[0].cudnn[0].first_use_execs == 1 && !run.procs[0].cudnn[0].autotuned,
              "no autotuning phase made of a first execution (%.1f ms)",
              (double)run.procs[0].phase_ns[GT_PHASE_AUTOTUNE] / 1e6);
    gt_run_free(&run);
    run_case("cudnn_first_use_plain", &sc, "first-use", 0, NULL);
    /* XLA autotunes GEMMs without a cuDNN call: known from its own ranges, worded for XLA */
    scenario xla = scenario_healthy();
    xla.module = "/usr/lib/python3/site-packages/jaxlib/_jax.so";
    xla.nvtx = 1;
    xla.sync_every_step = 1;
    xla.tuner_ns = 60000000;
    xla.tuner_step = 1;
    if (run_case("xla_autotune", &xla, "cudnn-benchmark", 1, &a))
        CHECK(a.basis == GT_BASIS_RUN && a.saving_ms > 50 && a.saving_ms < 80 &&
                  strstr(a.message, "XLA's autotuning took") &&
                  strstr(a.message, "xla_gpu_autotune_level") && !strstr(a.message, "torch"),
              "an autotuner's range is autotuning, worded for XLA: %s", a.message);
    scenario no_tuner = xla;
    no_tuner.tuner_ns = 0;
    run_case("xla_no_autotune", &no_tuner, "cudnn-benchmark", 0, NULL);
    test_cudnn_benchmark_weighed();
    test_cudnn_benchmark_recurring();
}

static void test_compilation(void)
{
    scenario sc = scenario_healthy();
    sc.nvtx = 1;
    sc.sync_every_step = 1; /* steps as long as their GPU work: the compilations lie apart */
    sc.jit_ns = 80000000;   /* 80 ms of compiling before the second step's launches (the first
                               step's GPU work ended start-up) */
    sc.jit_step = 1;
    gt_advice a;
    if (run_case("compile_once", &sc, "compilation", 1, &a))
        CHECK(a.basis == GT_BASIS_RUN && a.saving_ms > 60 && a.saving_ms < 100 &&
                  !strstr(a.message, "recurs"),
              "one-time compilation, its phase's time: %.1f ms: %s", a.saving_ms, a.message);
    scenario late = sc; /* compiled again at step 8: recurring */
    late.jit_step2 = 8;
    if (run_case("compile_late", &late, "compilation", 1, &a))
        CHECK(evidence(&a, "recompiles") >= 1 && strstr(a.message, "It recurs"),
              "a compilation in the steady state recurs: %s", a.message);
    scenario ok = scenario_healthy();
    run_case("no_compile", &ok, "compilation", 0, NULL);
}

static void test_environment(void)
{
    scenario sc = scenario_healthy();
    sc.cudnn_cudart_version = 12090;
    gt_advice a;
    if (run_case("env_cudart_mismatch", &sc, "environment", 1, &a))
        CHECK(strstr(a.message, "CUDA 12") != NULL && a.impact == GT_IMPACT_RISK &&
                  a.severity == GT_SEV_WARNING,
              "mismatch, a risk: %s", a.message);
    scenario img = scenario_healthy();
    img.kernel_image_error = 1;
    if (run_case("env_no_kernel_image", &img, "environment", 1, &a))
        CHECK(a.severity == GT_SEV_CRITICAL && a.impact == GT_IMPACT_FAILURE,
              "kernel image error is a failure: critical");
    scenario lost = scenario_healthy();
    lost.lost_records = 1234;
    if (run_case("env_lost", &lost, "environment", 1, &a))
        CHECK(strstr(a.message, "GPUTRACE_BUFFER_KB") != NULL, "full buffers: %s", a.message);
    /* a full disk: a bigger buffer would not help (issue 22) */
    lost.lost_reason = GT_LOST_WRITE_FAILED;
    if (run_case("env_lost_write", &lost, "environment", 1, &a))
        CHECK(strstr(a.message, "could not be written") && !strstr(a.message, "BUFFER_KB"),
              "write failure: %s", a.message);
    scenario ok = scenario_healthy();
    run_case("env_ok", &ok, "environment", 0, NULL);
}

static void test_cudnn_inferred(void)
{
    scenario sc = scenario_healthy();
    sc.inferred_conv = 1;
    sc.cudnn_tensor_cores = 1;
    gt_advice a;
    if (run_case("inferred", &sc, "cudnn-inferred", 1, &a))
        CHECK(strstr(a.message, "tensor cores") != NULL && a.impact == GT_IMPACT_NOTE,
              "inferred family, a note: %s", a.message);
    scenario ok = scenario_healthy();
    ok.cudnn = 1;
    run_case("not_inferred", &ok, "cudnn-inferred", 0, NULL);
}

static void test_straggler(void)
{
    char p0[512], p1[512];
    snprintf(p0, sizeof p0, "%s/rank0.gtrace", workdir);
    snprintf(p1, sizeof p1, "%s/rank1.gtrace", workdir);
    scenario r0 = scenario_healthy();
    r0.rank = 0;
    r0.world_size = 2;
    r0.sync_every_step = 1;
    scenario r1 = r0;
    r1.rank = 1;
    r1.pid = 4243;
    r1.data_load_ns = 3000000; /* rank 1 loads data slowly */
    CHECK(scenario_write(p0, &r0) == 0 && scenario_write(p1, &r1) == 0, "write ranks");
    const char *paths[] = {p0, p1};
    gt_advice_list l = {0};
    CHECK(gt_advice_compute(paths, 2, &l) == 0, "ranks readable");
    const gt_advice *a = find(&l, "straggler");
    CHECK(a && a->rank == 1, "straggler is rank 1");
    if (a)
        CHECK(strstr(a->message, "data loading") != NULL && a->basis == GT_BASIS_STEP,
              "straggler reason: %s", a->message);
    gt_advice_list_free(&l);
    /* two equal ranks: no straggler */
    scenario r1ok = r0;
    r1ok.rank = 1;
    r1ok.pid = 4243;
    CHECK(scenario_write(p1, &r1ok) == 0, "write rank 1");
    CHECK(gt_advice_compute(paths, 2, &l) == 0, "ranks readable");
    CHECK(!find(&l, "straggler"), "no straggler among equal ranks");
    gt_advice_list_free(&l);
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    setenv("GPUTRACE_PEAKS", "off", 1); /* no peaks file of this machine changes a figure */
    test_healthy_has_no_advice();
    test_sync_stall();
    test_pinned_memory();
    test_unified_memory();
    test_non_blocking_copy();
    test_launch_bound();
    test_gpu_idle();
    test_amp();
    test_alloc_in_loop();
    test_cudnn_benchmark();
    test_compilation();
    test_environment();
    test_cudnn_inferred();
    test_straggler();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_advice: all passed\n");
    return failures ? 1 : 0;
}
