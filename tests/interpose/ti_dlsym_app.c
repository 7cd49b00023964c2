/* ti_dlsym_app.c — a program that loads the CUDA runtime itself (RTLD_LOCAL) and calls it only
 * through pointers from dlsym and cudaGetDriverEntryPoint, from a second thread: the JAX/XLA way.
 * It checks that lookups of names gputrace does not wrap, and RTLD_NEXT lookups, return what the C
 * library returns. For interpose_check "dlsym". */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;
#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond), failed = 1;                 \
    } while (0)

static const char *module_of(void *p)
{
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fname ? di.dli_fname : "";
}

static void *run(void *arg)
{
    void *rt = arg;
    typedef cudaError_t (*malloc_fn)(void **, size_t);
    typedef cudaError_t (*memcpy_fn)(void *, const void *, size_t, enum cudaMemcpyKind);
    typedef cudaError_t (*sync_fn)(void);
    typedef cudaError_t (*count_fn)(int *);
    typedef cudaError_t (*entry_fn)(const char *, void **, unsigned long long,
                                    enum cudaDriverEntryPointQueryResult *);
    malloc_fn m = (malloc_fn)dlsym(rt, "cudaMalloc");
    memcpy_fn cp = (memcpy_fn)dlsym(rt, "cudaMemcpy");
    sync_fn sy = (sync_fn)dlsym(rt, "cudaDeviceSynchronize");
    count_fn cnt = (count_fn)dlsym(rt, "cudaGetDeviceCount");
    entry_fn ep = (entry_fn)dlvsym(rt, "cudaGetDriverEntryPoint", "libcudart.so.13");
    EXPECT(m && cp && sy && cnt && ep);
    if (!m || !cp || !sy || !cnt || !ep)
        return NULL;
    /* Wrapped names come from gputrace, the others straight from the library. */
    EXPECT(strstr(module_of((void *)m), "libgputrace") != NULL);
    EXPECT(strstr(module_of((void *)cnt), "libcudart") != NULL);
    EXPECT(dlsym(rt, "fake_gpu_emit") == dlsym(rt, "fake_gpu_emit"));
    EXPECT(strstr(module_of(dlsym(rt, "fake_gpu_emit")), "libcudart") != NULL);
    EXPECT(dlsym(rt, "no_such_symbol") == NULL);
    EXPECT(strstr(module_of(dlsym(RTLD_NEXT, "malloc")), "libc") != NULL);

    void *d = NULL;
    char host[256] = {0};
    for (int i = 0; i < 3; i++)
        EXPECT(m(&d, 4096) == cudaSuccess);
    EXPECT(cp(d, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
    EXPECT(sy() == cudaSuccess);
    int n = 0;
    EXPECT(cnt(&n) == cudaSuccess && n == 1);

    typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void **, void **);
    typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
    launch_fn launch = NULL;
    htod_fn htod = NULL;
    enum cudaDriverEntryPointQueryResult st;
    EXPECT(ep("cuLaunchKernel", (void **)&launch, 0, &st) == cudaSuccess && launch);
    EXPECT(ep("cuMemcpyHtoD", (void **)&htod, 0, &st) == cudaSuccess && htod);
    if (launch) {
        EXPECT(strstr(module_of((void *)launch), "libgputrace") != NULL);
        EXPECT(launch((CUfunction)0x77, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS);
        EXPECT(launch((CUfunction)0x77, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS);
    }
    if (htod)
        EXPECT(htod((CUdeviceptr)d, host, 128) == CUDA_SUCCESS);
    void *nothing = (void *)1;
    EXPECT(ep("cuNoSuchFunction", &nothing, 0, &st) == cudaSuccess && nothing == NULL);
    return NULL;
}

int main(void)
{
    void *rt = dlopen("libcudart.so.13", RTLD_LOCAL | RTLD_NOW);
    if (!rt) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    pthread_t t;
    pthread_create(&t, NULL, run, rt);
    pthread_join(t, NULL);
    return failed;
}
