/* test_launch.c — launch-bound by its definition (issue 30) on synthetic loops: the GPU idles
 * between short kernels while the CPU prepares the next launch. It must fire at any step length
 * (a step of one launch, a step of 100 launches and a sync), whatever the launch path (the
 * runtime's __cudaLaunchKernel, the driver's cuLaunchKernel/Ex, launches no wrapper sees), with
 * the remedy in the framework's terms and a saving that is the idle less the GPU's own gap
 * between queued kernels; and stay silent on a GPU-bound loop (the CPU runs ahead), on a short
 * loop in a long run, when the gaps follow a sync each step, and on gaps of data loading.
 * Usage: test_launch WORKDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "gtrace_api.h"
#include "model.h"
#include "test_advice_util.h"
#include "test_report_synth.h"
#include "../gt_check.h"

#define US 1000ull

static const char *workdir;

/* 3,000 launches of one 1 us kernel, 24 us of CPU each (the Triton loop), no sync. */
static scenario tiny_loop(void)
{
    scenario sc = scenario_healthy();
    sc.steps = 3000;
    sc.kernels_per_step = 1;
    sc.kernel_ns = 1 * US;
    sc.launch_ns = 5 * US;
    sc.cpu_between_ns = 19 * US;
    sc.pinned_h2d_bytes = 0;
    sc.cudnn_ops = 0;
    sc.module = NULL; /* no framework's library: the remedy is the CUDA runtime's */
    return sc;
}

typedef struct outcome {
    int fired, severity;
    double saving, idle, kernel_us, interval_us;
    char message[1024];
} outcome;

static outcome run_case(const char *name, const scenario *sc)
{
    outcome o = {0};
    char path[512];
    snprintf(path, sizeof path, "%s/%s.gtrace", workdir, name);
    CHECK(scenario_write(path, sc) == 0, "%s: write", name);
    const char *paths[] = {path};
    gt_advice_list l = {0};
    CHECK(gt_advice_compute(paths, 1, &l) == 0, "%s: load", name);
    for (size_t i = 0; i < l.n; i++)
        if (!strcmp(l.items[i].id, "launch-bound")) {
            const gt_advice *a = &l.items[i];
            o.fired = 1;
            o.severity = a->severity;
            o.saving = a->saving_ms;
            o.idle = advice_evidence(a, "launch_idle_ms_per_step");
            o.kernel_us = advice_evidence(a, "kernel_us_mean");
            o.interval_us = advice_evidence(a, "kernel_interval_us");
            snprintf(o.message, sizeof o.message, "%s", a->message);
        }
    gt_advice_list_free(&l);
    return o;
}

/* Fires with the idle the CPU leaves between kernels: interval less kernel, per kernel. */
static void fires(const char *name, const scenario *sc, int kernels, double kernel_us,
                  double interval_us, const char *words)
{
    outcome o = run_case(name, sc);
    CHECK(o.fired, "%s: launch-bound must fire", name);
    if (!o.fired)
        return;
    double want = kernels * (interval_us - kernel_us) / 1e3;
    CHECK(fabs(o.idle - want) <= 0.15 * want, "%s: idle %.4f ms per step, the loop leaves %.4f",
          name, o.idle, want);
    CHECK(fabs(o.kernel_us - kernel_us) < 0.1 * kernel_us &&
              fabs(o.interval_us - interval_us) < 0.15 * interval_us,
          "%s: kernels %.2f us every %.2f us, written %.2f every %.2f", name, o.kernel_us,
          o.interval_us, kernel_us, interval_us);
    /* the saving: the idle less 0.42 us per gap, what a graph's replay keeps */
    CHECK(o.saving < o.idle && o.saving > o.idle - kernels * 0.00042 - 1e-6,
          "%s: saving %.4f ms of %.4f idle", name, o.saving, o.idle);
    CHECK(o.severity ==
              (o.saving / (interval_us * kernels / 1e3) >= 0.25 ? GT_SEV_CRITICAL : GT_SEV_WARNING),
          "%s: severity %d from the saving's share", name, o.severity);
    CHECK(strstr(o.message, words) != NULL, "%s: remedy '%s' expected: %s", name, words, o.message);
}

static void silent(const char *name, const scenario *sc)
{
    outcome o = run_case(name, sc);
    CHECK(!o.fired, "%s: launch-bound must stay silent: %s", name, o.message);
}

static void test_fires(void)
{
    /* the step is one launch, 0.024 ms: the Triton loop, through the runtime */
    scenario rt = tiny_loop();
    fires("runtime_one_launch", &rt, 1, 1, 24, "cudaStreamBeginCapture");
    /* the same through the driver API, as CuPy (cuLaunchKernel) */
    scenario cupy = tiny_loop();
    cupy.launch_func = GT_FN_cuLaunchKernel;
    cupy.modules[0] = "/usr/lib/python3/site-packages/cupy/_core/core.cpython-312.so";
    fires("cupy_driver", &cupy, 1, 1, 24, "RawKernel");
    /* Triton's launcher (cuLaunchKernelEx) in a PyTorch process */
    scenario triton = tiny_loop();
    triton.launch_func = GT_FN_cuLaunchKernelEx;
    triton.modules[0] = "/usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so";
    triton.modules[1] = "/root/.triton/cache/ab/__triton_launcher.cpython-312.so";
    fires("triton_driver", &triton, 1, 1, 24, "BLOCK");
    /* no wrapper sees the launches: CUPTI's kernels alone show the gaps */
    scenario blind = tiny_loop();
    blind.launch_unrecorded = 1;
    blind.allocs_per_step = 0;
    fires("unrecorded_launches", &blind, 1, 1, 24, "CUDA graph");
    /* 100 launches then a sync (loss.item()) each step: the gap after the sync is the sync's */
    scenario synced = tiny_loop();
    synced.steps = 30;
    synced.kernels_per_step = 100;
    synced.item_every_step = 1;
    synced.nvtx = 1;
    synced.modules[0] = "/usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so";
    fires("hundred_per_step_synced", &synced, 100, 1, 24, "torch.cuda.graphs");
    /* longer kernels, slower CPU: 50 us kernels launched every 80 us */
    scenario slow_cpu = tiny_loop();
    slow_cpu.steps = 400;
    slow_cpu.kernel_ns = 50 * US;
    slow_cpu.cpu_between_ns = 75 * US;
    fires("slow_cpu_long_kernels", &slow_cpu, 1, 50, 80, "CUDA graph");
}

static void test_silent(void)
{
    /* GPU-bound: 500 us kernels, the CPU 15 us a launch runs ahead; no gap to fill */
    scenario busy = scenario_healthy();
    busy.steps = 30;
    silent("gpu_bound_long_kernels", &busy);
    /* the same tiny kernels, but a loop of 40 in a run that lasts 130 ms: 1 ms in all */
    scenario short_loop = tiny_loop();
    short_loop.steps = 40;
    short_loop.startup_ns = 130000000; /* 130 ms of start-up before it */
    silent("short_loop_long_run", &short_loop);
    /* a sync after every kernel: every gap follows the wait (sync-stall's), none is launching */
    scenario each_sync = tiny_loop();
    each_sync.steps = 500;
    each_sync.kernel_ns = 20 * US;
    each_sync.sync_every_step = 1;
    silent("sync_every_kernel", &each_sync);
    /* 5 ms of data loading (no call) a step, the GPU's kernels back to back otherwise: gpu-idle */
    scenario data = scenario_healthy();
    data.steps = 30;
    data.kernels_per_step = 10;
    data.kernel_ns = 100 * US;
    data.data_load_ns = 5000 * US;
    data.pinned_h2d_bytes = 1 << 20;
    silent("data_loading_gaps", &data);
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    test_fires();
    test_silent();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_launch: all passed\n");
    return failures ? 1 : 0;
}
