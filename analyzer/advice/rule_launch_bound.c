/* rule_launch_bound.c — launch-bound (issue 30): the GPU idles between short kernels while the
 * CPU prepares the next launch.
 *
 * By its definition, from the steady window's figures (model_time.c): the GPU's idle time in gaps
 * between GPU operations shorter than 1 ms that follow no blocking call, less the CPU's time in
 * calls other than launches (syncs, copies, allocations) and in collectives — the time the CPU
 * spent getting the next kernel out (Python, the framework's dispatcher, the launcher, the
 * launch call itself). It needs no launch call to be recorded: Triton's and CuPy's launches go
 * through the driver API, which a program may reach without any wrapper seeing it; the GPU's
 * gaps between its kernels show the same thing. It holds at any step length (a step of one
 * launch: a Triton loop, 0.015 ms) and any number of kernels per step.
 *
 * Saving: that idle time, less the gap the GPU keeps between kernels even when they are queued
 * ahead (replayed from a CUDA graph, or fused launches): GRAPH_KERNEL_GAP_NS per gap. Thresholds
 * in docs/advice.md. */
#include <stdio.h>

#include "advice_rule.h"
#include "gtrace_api.h"
#include "util.h"
#include "textfmt.h"

#define LAUNCH_IDLE_SHARE 0.05 /* launch idle per step / step: the rule fires from here ... */
/* ... when the steady state's saving in all is this share of the run (of its GPU-recorded time):
 * a loop of 40 launches in a run of 130 ms (launch_bound --batched: 0.3 ms) is launch-bound by
 * its definition, but not a cause of the run's time */
#define LAUNCH_RUN_SHARE 0.01
/* The GPU's own gap between consecutive kernels replayed from a CUDA graph: median 0.42 us over
 * 5,819 gaps of the compile_graphs corpus run on the H200 (docs/validation.md). */
#define GRAPH_KERNEL_GAP_NS 420.0

typedef struct launch_data {
    double idle_ms, step_ms, kernels, kernel_us, every_us, launch_call_us;
} launch_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    launch_data *d = data;
    double st = gt_adv_step_ms(p), idle = p->steady_short_idle_ms_per_step;
    double steps = gt_adv_steps(p);
    if (!p->steady_kernels || st <= 0 || idle <= 0 || idle / st < LAUNCH_IDLE_SHARE)
        return 0;
    double save = idle - p->steady_launch_gaps_per_step * GRAPH_KERNEL_GAP_NS / 1e6;
    double run_ms = gt_proc_gpu_covered_ms(p);
    if (save <= 0 || run_ms <= 0 || save * steps / run_ms < LAUNCH_RUN_SHARE)
        return 0;
    d->idle_ms = idle;
    d->step_ms = st;
    d->kernels = (double)p->steady_kernels / steps;
    d->kernel_us = (double)p->steady_kernel_ns / (double)p->steady_kernels / 1e3;
    d->every_us = 1e3 * st / d->kernels;
    d->launch_call_us =
        p->steady_launch_calls && p->launch_func
            ? (double)p->steady_launch_call_ns / (double)p->steady_launch_calls / 1e3
            : 0;
    gt_adv_ev(a, "launch_idle_ms_per_step", idle, "ms");
    gt_adv_ev(a, "launch_idle_share", 100 * idle / st, "%");
    gt_adv_ev(a, "step_ms", st, "ms");
    gt_adv_ev(a, "kernels_per_step", d->kernels, "count");
    gt_adv_ev(a, "kernel_us_mean", d->kernel_us, "us");
    gt_adv_ev(a, "kernel_interval_us", d->every_us, "us");
    gt_adv_ev(a, "launch_gaps_per_step", p->steady_launch_gaps_per_step, "count");
    gt_adv_ev(a, "gpu_busy", p->steady_busy_pct, "%");
    gt_adv_ev(a, "saving_run_share", 100 * save * steps / run_ms, "%");
    if (p->steady_launch_calls)
        gt_adv_ev(a, "launch_call_us",
                  (double)p->steady_launch_call_ns / (double)p->steady_launch_calls / 1e3, "us");
    gt_adv_saving(a, save, gt_adv_basis(p), GT_POOL_IDLE,
                  "the GPU's idle time between kernels while the CPU launched, less the gap "
                  "kernels keep when queued ahead (%.2f us each, measured on a CUDA graph)",
                  GRAPH_KERNEL_GAP_NS / 1e3);
    a->t_ns = p->steady_start_ns;
    return 1;
}

/* The remedy in the terms of the program's framework (model_framework.c). */
static const char *remedy(const gt_proc *p)
{
    switch (gt_proc_remedy_framework(p)) {
    case GT_FW_TORCH_COMPILE:
        return "Replay the whole step as CUDA graphs: torch.compile(mode=\"reduce-overhead\") "
               "over all of it (no graph breaks: TORCH_LOGS=graph_breaks), or give each kernel "
               "more work (a larger batch).";
    case GT_FW_JAX:
        return "Put more of the loop under one jax.jit (the step, or the loop with "
               "jax.lax.scan / fori_loop): XLA fuses it into fewer kernels.";
    case GT_FW_TENSORFLOW:
        return "Compile the step with tf.function(jit_compile=True) so that XLA fuses it into "
               "fewer kernels, or give each kernel more work (a larger batch).";
    case GT_FW_CUPY:
        return "Launch each kernel over more elements (a RawKernel doing what the loop does), "
               "fuse the loop (cupy.fuse), or replay it as a CUDA graph "
               "(stream.begin_capture() / end_capture(), graph.launch()).";
    case GT_FW_TRITON:
        return "Give each launch more work (a larger BLOCK, or a loop inside the kernel over what "
               "the Python loop repeats), fuse consecutive kernels, or replay the launches as a "
               "CUDA graph (torch.cuda.graphs).";
    case GT_FW_PYTORCH:
        return "Capture the step in a CUDA graph (torch.cuda.graphs, or "
               "torch.compile(mode=\"reduce-overhead\")), fuse small operations (torch.compile), "
               "or give each kernel more work (a larger batch).";
    default:
        return "Replay the launch sequence as a CUDA graph (cudaStreamBeginCapture, "
               "cudaGraphInstantiate, cudaGraphLaunch), fuse kernels, or launch fewer, larger "
               "grids.";
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const launch_data *d = data;
    const gt_proc *p = c->p;
    (void)a;
    GT_SEEN(w,
            "The GPU idles %s %s (%s of %s) between kernels while the CPU prepares the next "
            "launch: %s kernel%s %s of %s each, one every %s; %s.",
            gt_adv_ms(d->idle_ms), gt_adv_per(p), gt_pct(100 * d->idle_ms / d->step_ms),
            gt_adv_base_words(p), gt_mean(d->kernels), strcmp(gt_mean(d->kernels), "1") ? "s" : "",
            gt_adv_per(p), gt_dur(d->kernel_us / 1e3), gt_dur(d->every_us / 1e3),
            d->launch_call_us > 0
                ? gt_fmt("each launch call (%s) takes %s of it", gt_api_func_name(p->launch_func),
                         gt_dur(d->launch_call_us / 1e3))
                : "no launch call was recorded (a path no wrapper sees): the GPU's gaps show it");
    GT_REMEDY(w, "%s", remedy(p));
}

const gt_rule gt_rule_launch_bound = {"launch-bound", "the GPU waits for kernel launches",
                                      GT_RULE_PROCESS, find, word};
