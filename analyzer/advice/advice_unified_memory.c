/* advice_unified_memory.c — the unified-memory rule (docs/advice.md): kernels that stall on
 * managed memory's page faults.
 *
 * Definition. A kernel that touches a managed page the GPU does not hold raises a GPU page fault;
 * the driver services it and migrates the pages over on demand while the kernel waits. The stall
 * is the union of the faults' service and the on-demand host-to-device migrations, where the GPU
 * was busy (model_um.c): CUPTI's own timestamps, nothing inferred from kernel names or shapes.
 *
 * Saving. A prefetch (cudaMemPrefetchAsync to the device, on a stream ahead of the kernels) or an
 * explicit placement moves the same bytes before the kernels need them, in large transfers, off
 * their critical path: the kernels' stall is what it saves at most, per steady step (or over the
 * run when the faults come only outside the steady state), bounded by the step. The bytes still
 * move; when nothing else runs meanwhile, part of it reappears as copy time: say "up to".
 *
 * Every threshold here is listed in docs/advice.md; change both. */
#include "advice.h"
#include "advice_rules.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ thresholds (docs/advice.md) */
#define UM_STALL_SHARE 0.05      /* steady stall per step / step time (severity: its share) */
#define UM_RUN_SHARE 0.05        /* without a steady stall: whole-run stall / GPU busy time ... */
#define UM_RUN_MIN_MS 1.0        /* ... and at least this much: the once-only form */
#define UM_PINGPONG_MIN_FAULTS 2 /* CPU faults that bring data back between kernels */

static int is_python(const gt_proc *p)
{
    const char *e = p->exe ? strrchr(p->exe, '/') : NULL;
    e = e ? e + 1 : p->exe;
    return e && !strncmp(e, "python", 6);
}

/* What to change, in the program's terms: it prefetches already (then not enough, or too late),
 * or not at all; Python programs reach the same calls through CuPy's runtime module. */
static const char *remedy(const gt_proc *p)
{
    const gt_um_stats *u = &p->um;
    if (u->prefetch_calls)
        return "The program prefetches, yet kernels still fault: prefetch every managed buffer "
               "the kernels touch, to the device that runs them, early enough on a stream ahead "
               "of them, or set cudaMemAdviseSetPreferredLocation to that device.";
    if (is_python(p))
        return "Prefetch managed buffers to the GPU before the kernels that use them "
               "(cupy.cuda.runtime.memPrefetchAsync, cudaMemPrefetchAsync underneath), advise "
               "their preferred location, or allocate device memory and copy explicitly.";
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
                 " The driver saw %llu thrashing region(s): cudaMemAdviseSetReadMostly "
                 "for data both sides read, a preferred location for the rest.",
                 (unsigned long long)u->thrashing);
}

void gt_adv_rule_unified_memory(const gt_proc *p, gt_advice_list *l)
{
    const gt_um_stats *u = &p->um;
    if (!u->counters_on || !u->gpu_faults || !u->stall_ns)
        return;
    int steps = gt_adv_has_steps(p);
    double step = gt_adv_step_ms(p);
    double steady_steps = p->steady_steps > 0 ? p->steady_steps : 1;
    double per_step = (double)u->steady_stall_ns / 1e6 / steady_steps;
    double share = step > 0 ? per_step / step : 0;
    double run_ms = (double)u->stall_ns / 1e6;
    double busy_ms = (double)p->gpu_busy_ns / 1e6;
    int in_steady = share >= UM_STALL_SHARE;
    if (!in_steady && (run_ms < UM_RUN_MIN_MS || busy_ms <= 0 || run_ms / busy_ms < UM_RUN_SHARE))
        return;
    /* severity from the saving's share: of the step, or of the run for the once-only form */
    double run_share = run_ms / (gt_proc_duration_ms(p) + 1e-9);
    gt_advice *a = gt_adv_add(l, p, "unified-memory",
                              gt_adv_severity_for_share(in_steady ? share : run_share));
    char pingpong[256];
    note_pingpong(u, pingpong, sizeof pingpong);
    if (in_steady)
        gt_adv_msg(a,
                   "Unified-memory page faults stall kernels: %.1f GPU faults %s moved %.1f MB to "
                   "the GPU on demand, and kernels waited %.2f ms %s (%.0f%% of the %s) for fault "
                   "service and migration. %s%s",
                   (double)u->steady_gpu_faults / steady_steps,
                   steps ? "per step" : "in the second half of the run",
                   (double)u->demand_bytes[0] / 1e6, per_step,
                   steps ? "per step" : "in the second half of the run", 100 * share,
                   steps ? "step" : "window", remedy(p), pingpong);
    else
        gt_adv_msg(a,
                   "Unified-memory page faults stalled kernels outside the steady state: %llu GPU "
                   "faults moved %.1f MB to the GPU on demand, and kernels waited %.2f ms in all "
                   "(%.0f%% of the GPU's busy time), a cost paid once per buffer. %s%s",
                   (unsigned long long)u->gpu_faults, (double)u->demand_bytes[0] / 1e6, run_ms,
                   100 * run_ms / busy_ms, remedy(p), pingpong);
    gt_adv_ev(a, "gpu_faults", (double)u->gpu_faults, "count");
    gt_adv_ev(a, "gpu_faults_per_step", (double)u->steady_gpu_faults / steady_steps, "count");
    gt_adv_ev(a, "on_demand_htod_mb", (double)u->demand_bytes[0] / 1e6, "MB");
    gt_adv_ev(a, "stall_ms_per_step", per_step, "ms");
    gt_adv_ev(a, "stall_share", 100 * share, "%");
    gt_adv_ev(a, "stall_ms_run", run_ms, "ms");
    gt_adv_ev(a, "stall_share_run", 100 * run_share, "%");
    gt_adv_ev(a, "fault_service_ms", (double)u->gpu_fault_ns / 1e6, "ms");
    gt_adv_ev(a, "cpu_faults", (double)u->cpu_faults, "count");
    gt_adv_ev(a, "on_demand_dtoh_mb", (double)u->demand_bytes[1] / 1e6, "MB");
    gt_adv_ev(a, "prefetch_calls", (double)u->prefetch_calls, "count");
    /* up to the kernels' stall, never more than a step */
    gt_adv_saving(a, in_steady ? (per_step < step ? per_step : step) : run_ms, in_steady && steps);
    const char *s = gt_proc_call_site(p, u->first_alloc_stack);
    if (s)
        snprintf(a->call_site, sizeof a->call_site, "%s", s);
    a->t_ns = u->first_fault_ns;
}
