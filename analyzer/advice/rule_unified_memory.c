/* rule_unified_memory.c — unified-memory: kernels that stall on managed memory's page faults.
 *
 * Definition. A kernel that touches a managed page the GPU does not hold raises a GPU page fault;
 * the driver services it and migrates the pages over on demand while the kernel waits. The stall
 * is the union of the faults' service and the on-demand host-to-device migrations, where the GPU
 * was busy (model_um.c): CUPTI's own timestamps, nothing inferred from kernel names or shapes.
 *
 * Saving. A prefetch (cudaMemPrefetchAsync to the device, on a stream ahead of the kernels) or an
 * explicit placement moves the same bytes before the kernels need them, in large transfers, off
 * their critical path: the kernels' stall is what it saves at most, per steady step (out of the
 * step's GPU busy time), or over the run when the faults come only outside the steady state,
 * bounded by the step. The bytes still move; when nothing else runs meanwhile, part of it
 * reappears as copy time: the wording says "up to". Thresholds: docs/advice.md. */
#include <stdio.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"

#define UM_STALL_SHARE 0.05      /* steady stall per step / step time */
#define UM_RUN_SHARE 0.05        /* without a steady stall: whole-run stall / GPU busy time ... */
#define UM_RUN_MIN_MS 1.0        /* ... and at least this much: the once-only form */
#define UM_PINGPONG_MIN_FAULTS 2 /* CPU faults that bring data back between kernels */

typedef struct um_data {
    int in_steady;
    double faults_per_step, per_step_ms, run_ms, busy_share;
} um_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    const gt_um_stats *u = &p->um;
    um_data *d = data;
    if (!u->counters_on || !u->gpu_faults || !u->stall_ns)
        return 0;
    double step = gt_adv_step_ms(p), steps = gt_adv_steps(p);
    double per_step = (double)u->steady_stall_ns / 1e6 / steps;
    double share = step > 0 ? per_step / step : 0;
    double run_ms = (double)u->stall_ns / 1e6, busy_ms = (double)p->gpu_busy_ns / 1e6;
    d->in_steady = share >= UM_STALL_SHARE;
    if (!d->in_steady &&
        (run_ms < UM_RUN_MIN_MS || busy_ms <= 0 || run_ms / busy_ms < UM_RUN_SHARE))
        return 0;
    d->faults_per_step = (double)u->steady_gpu_faults / steps;
    d->per_step_ms = per_step;
    d->run_ms = run_ms;
    d->busy_share = busy_ms > 0 ? run_ms / busy_ms : 0;
    gt_adv_ev(a, "gpu_faults", (double)u->gpu_faults, "count");
    gt_adv_ev(a, "gpu_faults_per_step", d->faults_per_step, "count");
    gt_adv_ev(a, "on_demand_htod_mb", (double)u->demand_bytes[0] / 1e6, "MB");
    gt_adv_ev(a, "stall_ms_per_step", per_step, "ms");
    gt_adv_ev(a, "stall_share", 100 * share, "%");
    gt_adv_ev(a, "stall_ms_run", run_ms, "ms");
    gt_adv_ev(a, "stall_share_run", 100 * run_ms / (gt_proc_duration_ms(p) + 1e-9), "%");
    gt_adv_ev(a, "fault_service_ms", (double)u->gpu_fault_ns / 1e6, "ms");
    gt_adv_ev(a, "cpu_faults", (double)u->cpu_faults, "count");
    gt_adv_ev(a, "on_demand_dtoh_mb", (double)u->demand_bytes[1] / 1e6, "MB");
    gt_adv_ev(a, "prefetch_calls", (double)u->prefetch_calls, "count");
    if (d->in_steady) /* up to the kernels' stall, never more than a step */
        gt_adv_saving(a, per_step < step ? per_step : step, gt_adv_basis(p), GT_POOL_BUSY,
                      "the kernels' wait for fault service and migration");
    else
        gt_adv_saving(a, run_ms, GT_BASIS_RUN, GT_POOL_RUN,
                      "the kernels' wait for fault service and migration, once per buffer");
    gt_adv_site(a, p, u->first_alloc_stack);
    a->t_ns = u->first_fault_ns;
    return 1;
}

/* What to change, in the program's terms: it prefetches already (then not enough, or too late),
 * or not at all; CuPy reaches the same calls through its runtime module. */
static const char *remedy(const gt_proc *p, int fw)
{
    if (p->um.prefetch_calls)
        return "The program prefetches, yet kernels still fault: prefetch every managed buffer "
               "the kernels touch, to the device that runs them, early enough on a stream ahead "
               "of them, or set cudaMemAdviseSetPreferredLocation to that device.";
    if (fw == GT_FW_CUPY)
        return "Prefetch managed buffers to the GPU before the kernels that use them "
               "(cupy.cuda.runtime.memPrefetchAsync), advise their preferred location, or "
               "allocate device memory and copy explicitly.";
    return "Prefetch managed buffers to the GPU before the kernels that use them "
           "(cudaMemPrefetchAsync(ptr, bytes, device location, 0, stream) on a stream ahead of "
           "the work), advise their placement (cudaMemAdvise, cudaMemAdviseSetPreferredLocation / "
           "SetReadMostly), or allocate with cudaMalloc and copy explicitly.";
}

/* The CPU touching the same memory between kernels sends it back and forth. */
static void note_pingpong(const gt_um_stats *u, char *out, size_t cap)
{
    out[0] = 0;
    if (u->cpu_faults >= UM_PINGPONG_MIN_FAULTS && u->demand_bytes[1])
        snprintf(out, cap,
                 " The CPU touches the same memory between kernels (%llu CPU faults moved %.1f MB "
                 "back): keep host reads of managed buffers out of the loop.",
                 (unsigned long long)u->cpu_faults, (double)u->demand_bytes[1] / 1e6);
    else if (u->thrashing)
        snprintf(out, cap,
                 " The driver saw %llu thrashing region(s): cudaMemAdviseSetReadMostly for data "
                 "both sides read, a preferred location for the rest.",
                 (unsigned long long)u->thrashing);
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const um_data *d = data;
    const gt_proc *p = c->p;
    const gt_um_stats *u = &p->um;
    (void)a;
    if (d->in_steady)
        GT_SEEN(w,
                "Unified-memory page faults stall kernels: %.1f GPU faults %s moved %.1f MB to "
                "the GPU on demand, and kernels waited %s %s for fault service and migration.",
                d->faults_per_step, gt_adv_per(p), (double)u->demand_bytes[0] / 1e6,
                gt_adv_ms(d->per_step_ms), gt_adv_per(p));
    else
        GT_SEEN(w,
                "Unified-memory page faults stalled kernels outside the steady state: %llu GPU "
                "faults moved %.1f MB to the GPU on demand, and kernels waited %s in all (%.0f%% "
                "of the GPU's busy time), a cost paid once per buffer.",
                (unsigned long long)u->gpu_faults, (double)u->demand_bytes[0] / 1e6,
                gt_adv_ms(d->run_ms), 100 * d->busy_share);
    char pingpong[256];
    note_pingpong(u, pingpong, sizeof pingpong);
    GT_REMEDY(w, "%s%s", remedy(p, c->fw), pingpong);
}

const gt_rule gt_rule_unified_memory = {"unified-memory", "kernels stall on page faults",
                                        GT_RULE_PROCESS, find, word};
