/* cupti_local_app LIB — loads LIB (cupti_local_lib) RTLD_LOCAL, as Python loads torch, and starts
 * its profiler: prints "subscribe <CUptiResult>". Not linked with libcupti itself. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *p = NULL;
    cudaMalloc(&p, 256);
    cudaFree(p);
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*subscribe)(void) = h ? (int (*)(void))dlsym(h, "local_profiler_subscribe") : NULL;
    if (!subscribe) {
        printf("cannot load %s: %s\n", argc > 1 ? argv[1] : "(none)", dlerror());
        return 1;
    }
    printf("subscribe %d\n", subscribe());
    return 0;
}
