/* gt_cupti_other.c — another profiler in the same process (torch.profiler, nsys, ncu). CUPTI takes
 * one callback subscriber per process: while gputrace holds it, the other tool's cuptiSubscribe
 * fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and that tool then records no GPU
 * activity (torch.profiler shows 0 kernels and says nothing). The tool calls cuptiSubscribe
 * through libcupti's dynamic symbol, which this export of the preloaded libgputrace.so stands in
 * for: the call reaches libcupti unchanged and its result goes back unchanged; a refusal while
 * gputrace holds the subscription is said on stderr (once) and marked in the header
 * (GT_HDR_OTHER_PROFILER) for the report. docs/limits.md says how to run both. */
#include <dlfcn.h>
#include <stdatomic.h>

#include "gt_core.h"
#include "gt_cupti_internal.h"

typedef CUptiResult (*subscribe_fn)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);

static atomic_bool refused_once;

static void note_refused(void)
{
    if (atomic_exchange(&refused_once, true))
        return;
    gt_warn("another profiler (torch.profiler, nsys...) asked for CUPTI, which gputrace holds: it "
            "was refused and records no GPU activity. To run both, record with "
            "GPUTRACE_CUPTI=0, or use GPUTRACE_CAPTURE=profiler-api (docs/limits.md)");
    gt_core_set_header_flag(GT_HDR_OTHER_PROFILER);
}

GT_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                     CUpti_CallbackFunc callback, void *userdata)
{
    subscribe_fn real = gt_cupti.Subscribe;
    if (!real) /* CUPTI not started by gputrace: the process's own libcupti */
        *(void **)&real = dlsym(RTLD_NEXT, "cuptiSubscribe");
    if (!real) /* mapped RTLD_LOCAL (torch's): RTLD_NEXT does not see it, the loaded object does */
        *(void **)&real = gt_cupti_mapped_symbol("cuptiSubscribe");
    if (!real)
        return CUPTI_ERROR_NOT_INITIALIZED;
    CUptiResult r = real(subscriber, callback, userdata);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && gt_cupti_callbacks_held())
        note_refused();
    return r;
}
