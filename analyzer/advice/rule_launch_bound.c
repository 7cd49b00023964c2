/* rule_launch_bound.c — launch-bound: short kernels with the GPU idle between them while the CPU
 * prepares the next launch. The saving is half the idle time in short gaps: CUDA graphs, fused
 * kernels or more work per launch recover about half of it (an assumption the message states,
 * not a measurement). Thresholds: docs/advice.md. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

#define LAUNCH_BUSY_PCT 70.0        /* steady GPU busy below this */
#define LAUNCH_SHORT_SHARE 0.5      /* short kernels (< 10 µs) among steady kernels */
#define LAUNCH_SHORT_IDLE_SHARE 0.5 /* idle in gaps < 1 ms / all steady idle */
#define LAUNCH_SAVING_FACTOR 0.5    /* graphs / bigger batches recover about half of it */
#define LAUNCH_RUN_SHARE 0.05       /* launch-bound idle over the whole run / run duration */

typedef struct launch_data {
    double busy_pct, short_pct, short_idle_ms, kernels, launch_us;
} launch_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    launch_data *d = data;
    if (!p->steady_kernels || p->steady_busy_pct >= LAUNCH_BUSY_PCT)
        return 0;
    double short_share = (double)p->steady_short_kernels / (double)p->steady_kernels;
    double idle = gt_adv_idle_ms(p);
    /* the launch-bound idle was measured over the time the GPU was recorded (sampled windows) */
    double run_ms = gt_proc_gpu_covered_ms(p), launch_idle_ms = (double)p->launch_idle_ns / 1e6;
    /* the launch-latency gaps after a wait are the wait's (sync-stall) */
    d->short_idle_ms = p->steady_short_idle_ms_per_step -
                       (double)p->steady_after_sync_small_ns / 1e6 / gt_adv_steps(p);
    if (d->short_idle_ms < 0)
        d->short_idle_ms = 0;
    if (short_share < LAUNCH_SHORT_SHARE || idle <= 0 ||
        d->short_idle_ms / idle < LAUNCH_SHORT_IDLE_SHARE || run_ms <= 0 ||
        launch_idle_ms / run_ms < LAUNCH_RUN_SHARE)
        return 0;
    d->busy_pct = p->steady_busy_pct;
    d->short_pct = 100 * short_share;
    d->kernels = (double)p->steady_kernels / gt_adv_steps(p);
    d->launch_us = p->launches ? (double)p->launch_ns / (double)p->launches / 1e3 : 0;
    gt_adv_ev(a, "gpu_busy", d->busy_pct, "%");
    gt_adv_ev(a, "short_kernel_share", d->short_pct, "%");
    gt_adv_ev(a, "short_gap_idle_ms_per_step", d->short_idle_ms, "ms");
    gt_adv_ev(a, "kernels_per_step", d->kernels, "count");
    gt_adv_ev(a, "launch_idle_run_share", 100 * launch_idle_ms / run_ms, "%");
    if (d->launch_us > 0)
        gt_adv_ev(a, "mean_launch_call_us", d->launch_us, "us");
    gt_adv_saving(a, d->short_idle_ms * LAUNCH_SAVING_FACTOR, gt_adv_basis(p), GT_POOL_IDLE,
                  "half the GPU's idle time in short gaps between launches (CUDA graphs and "
                  "fewer, larger launches recover about half: an assumption, not measured)");
    return 1;
}

static const char *remedy(int fw)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        return "Give the GPU more work per launch: a larger batch, CUDA graphs "
               "(torch.cuda.CUDAGraph, torch.compile(mode=\"reduce-overhead\")), or fused "
               "kernels (torch.compile).";
    case GT_FW_JAX:
        return "Give the GPU more work per dispatch: jit a larger function (fold the loop into "
               "lax.scan or lax.fori_loop), or a larger batch.";
    case GT_FW_TENSORFLOW:
        return "Give the GPU more work per launch: tf.function(jit_compile=True) to fuse "
               "kernels, or a larger batch.";
    case GT_FW_CUPY:
        return "Fuse the element-wise work (cupy.fuse, an ElementwiseKernel or RawKernel), or "
               "capture the loop in a CUDA graph (stream.begin_capture / end_capture).";
    case GT_FW_TRITON:
        return "Do more work per launch (a larger block, a loop inside the kernel), or capture "
               "the launches in a CUDA graph.";
    default:
        return "Capture the launches in a CUDA graph (cudaStreamBeginCapture, cudaGraphLaunch), "
               "fuse kernels, or give each launch more work.";
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const launch_data *d = data;
    const gt_proc *p = c->p;
    (void)a;
    GT_SEEN(w,
            "The GPU is busy only %.0f%% of the steady state and %.0f%% of its %.0f kernels %s "
            "run under 10 us: between them it idles %s %s in short gaps while the CPU launches "
            "the next one%s.",
            d->busy_pct, d->short_pct, d->kernels, gt_adv_per(p), gt_adv_ms(d->short_idle_ms),
            gt_adv_per(p),
            d->launch_us > 0 ? gt_fmt(" (%.1f us a launch call)", d->launch_us) : "");
    GT_REMEDY(w, "%s", remedy(c->fw));
}

const gt_rule gt_rule_launch_bound = {"launch-bound", "the GPU waits for kernel launches",
                                      GT_RULE_PROCESS, find, word};
