/* fake_nvjitlink.c — libnvJitLink.so.13 for tests: the link (the versioned entry point the CUDA 13
 * header calls) takes 1 ms. */
#include <nvJitLink.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle handle)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
    return handle ? NVJITLINK_SUCCESS : NVJITLINK_ERROR_INVALID_INPUT;
}
