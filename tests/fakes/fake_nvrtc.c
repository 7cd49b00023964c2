/* fake_nvrtc.c — libnvrtc.so.13 for tests: nvrtcCompileProgram "compiles" for 2 ms (a program
 * whose first option is "--fail" fails to compile), so a test can see the JIT call's time. */
#include <nvrtc.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT nvrtcResult nvrtcVersion(int *major, int *minor)
{
    if (major)
        *major = 13;
    if (minor)
        *minor = 0;
    return NVRTC_SUCCESS;
}

EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int n, const char *const *options)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    return n > 0 && options && options[0] && !strcmp(options[0], "--fail") ? NVRTC_ERROR_COMPILATION
                                                                           : NVRTC_SUCCESS;
}
