/* cupti_local_lib — a library that uses CUPTI and is loaded RTLD_LOCAL, as torch's libkineto is
 * inside Python: its libcupti is then out of the global scope, where dlsym(RTLD_NEXT) looks. */
#include <cupti.h>

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
                                 const void *data)
{
    (void)ud, (void)d, (void)id, (void)data;
}

__attribute__((visibility("default"))) int local_profiler_subscribe(void)
{
    CUpti_SubscriberHandle h;
    CUptiResult r = cuptiSubscribe(&h, on_callback, NULL);
    if (r == CUPTI_SUCCESS)
        cuptiUnsubscribe(h);
    return (int)r;
}
