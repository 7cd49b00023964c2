/* fake_version_lib.c — one source for the CUDA libraries whose versions doctor reads: compiled
 * with FAKE_KIND (1 cudart, 2 cudnn, 3 cupti, 4 crashes), FAKE_VERSION and FAKE_BUILT_FOR into each
 * folder of a test's library layout (a CUDA 13 stack, a cuDNN 9.14 built for CUDA 12.8...). */
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

#if FAKE_KIND == 1
EXPORT int cudaRuntimeGetVersion(int *v)
{
    *v = FAKE_VERSION;
    return 0;
}
#elif FAKE_KIND == 2
EXPORT size_t cudnnGetVersion(void)
{
    return FAKE_VERSION;
}
EXPORT size_t cudnnGetCudartVersion(void)
{
    return FAKE_BUILT_FOR;
}
#elif FAKE_KIND == 3
EXPORT int cuptiGetVersion(uint32_t *v)
{
    *v = FAKE_VERSION;
    return 0;
}
#elif FAKE_KIND == 4 /* a library that kills whoever loads it */
#include <stdlib.h>
__attribute__((constructor)) static void crash_on_load(void)
{
    abort();
}
EXPORT size_t cudnnGetVersion(void)
{
    return 1;
}
#else
#error "FAKE_KIND: 1 cudart, 2 cudnn, 3 cupti, 4 a cuDNN that crashes when loaded"
#endif
