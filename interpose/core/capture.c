/* capture.c — capture range: GPUTRACE_CAPTURE=profiler-api records only between
 * cudaProfilerStart and cudaProfilerStop, the convention of nsys --capture-range=cudaProfilerApi
 * (torch.cuda.profiler.start()/stop() call them). Pausing is a state of g_recording (PAUSED), so
 * the wrappers' fast path keeps its single load; the capture hooks tell CUPTI to stop producing
 * records, and what it produced before the pause is still accepted and written. */
#include <stdatomic.h>

#include "core_internal.h"

void gt_core_capture_set(bool on)
{
    if (g_cfg.capture_mode != GT_CAPTURE_PROFILER_API)
        return;
    int from = on ? GT_RECORDING_PAUSED : GT_RECORDING_ON;
    int to = on ? GT_RECORDING_ON : GT_RECORDING_PAUSED;
    /* Stopped (0: exit, full disk) stays stopped; a repeated start or stop changes nothing. */
    if (!atomic_compare_exchange_strong(&g_recording, &from, to))
        return;
    gt_debug("capture %s (cudaProfiler%s)", on ? "resumed" : "paused", on ? "Start" : "Stop");
    gt_run_hooks_capture(on); /* CUPTI stops or restarts its records */
}

bool gt_core_capture_paused(void)
{
    int st = atomic_load_explicit(&g_recording, memory_order_relaxed);
    return st == GT_RECORDING_PAUSED ||
           (st == GT_RECORDING_LAZY && g_cfg.capture_mode == GT_CAPTURE_PROFILER_API);
}
