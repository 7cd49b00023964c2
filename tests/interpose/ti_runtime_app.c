/* ti_runtime_app.c — CUDA runtime calls with known arguments, for interpose_check "runtime".
 * Run with FAKE_CUDA_FAIL=cudaMalloc:2 (the second cudaMalloc fails): the app checks that the error
 * code reaches it unchanged. Exit 1 when anything the app sees differs from the fake's behaviour.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bdim, dim3 *gdim, int *wsize);
cudaError_t __cudaGetKernel(cudaKernel_t *k, const void *fn);
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **a, size_t smem,
                               cudaStream_t s);
cudaError_t cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
                                 cudaStream_t st);

#define CHECK(expr, want)                                                                          \
    do {                                                                                           \
        cudaError_t r_ = (expr);                                                                   \
        if (r_ != (want)) {                                                                        \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d\n", __FILE__, __LINE__, #expr,     \
                    (int)r_, (int)(want));                                                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void host_stub(float *p)
{
    (void)p;
}

int main(void)
{
    enum { MB = 1 << 20 };
    void *d = NULL, *d2 = NULL, *pinned = NULL;
    char *pageable = malloc(MB), *registered = aligned_alloc(4096, 65536);
    cudaStream_t st;
    CHECK(cudaStreamCreate(&st), cudaSuccess);
    CHECK(cudaMalloc(&d, MB), cudaSuccess);
    CHECK(cudaMalloc(&d2, MB), cudaErrorMemoryAllocation); /* FAKE_CUDA_FAIL=cudaMalloc:2 */
    CHECK(cudaMallocHost(&pinned, MB), cudaSuccess);
    memset(pageable, 1, MB);

    CHECK(cudaMemcpy(d, pageable, MB, cudaMemcpyHostToDevice), cudaSuccess);          /* 1 */
    CHECK(cudaMemcpyAsync(d, pinned, 4096, cudaMemcpyHostToDevice, st), cudaSuccess); /* 2 */
    CHECK(cudaMemcpyAsync(pinned, d, 4096, cudaMemcpyDeviceToHost, 0), cudaSuccess);  /* 3 */
    CHECK(cudaHostRegister(registered, 65536, 0), cudaSuccess);
    CHECK(cudaMemcpyAsync(d, registered + 100, 1000, cudaMemcpyHostToDevice, st),
          cudaSuccess); /* 4 */
    CHECK(cudaHostUnregister(registered), cudaSuccess);
    CHECK(cudaMemcpyAsync(d, registered + 100, 1000, cudaMemcpyHostToDevice, st),
          cudaSuccess);                                                                   /* 5 */
    CHECK(cudaMemcpyAsync_ptsz(d, pinned, 512, cudaMemcpyHostToDevice, st), cudaSuccess); /* 6 */
    CHECK(cudaMemcpy(pageable, d, 2048, cudaMemcpyDefault), cudaSuccess);                 /* 7 */
    CHECK(cudaMemset(d, 0, 100), cudaSuccess);
    CHECK(cudaMemsetAsync(d, 7, 200, st), cudaSuccess);

    void **fat = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(fat, (const char *)host_stub, (char *)"_Z6kernelPf", "_Z6kernelPf", -1,
                           NULL, NULL, NULL, NULL, NULL);
    void *args[1] = {&d};
    dim3 g = {4, 2, 1}, b = {128, 1, 1};
    for (int i = 0; i < 3; i++)
        CHECK(cudaLaunchKernel((const void *)host_stub, g, b, args, 256, st), cudaSuccess);
    cudaKernel_t k;
    CHECK(__cudaGetKernel(&k, (const void *)host_stub), cudaSuccess);
    for (int i = 0; i < 2; i++)
        CHECK(__cudaLaunchKernel(k, g, b, args, 0, 0), cudaSuccess);
    cudaLaunchConfig_t cfg = {
        .gridDim = {8, 1, 1}, .blockDim = {64, 1, 1}, .dynamicSmemBytes = 32, .stream = st};
    CHECK(cudaLaunchKernelExC(&cfg, (const void *)host_stub, args), cudaSuccess);

    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev), cudaSuccess);
    CHECK(cudaEventRecord(ev, st), cudaSuccess);
    CHECK(cudaEventSynchronize(ev), cudaSuccess);
    CHECK(cudaStreamSynchronize(st), cudaSuccess);
    CHECK(cudaStreamQuery(st), cudaSuccess);
    CHECK(cudaDeviceSynchronize(), cudaSuccess);

    CHECK(cudaFree(d), cudaSuccess);
    CHECK(cudaFreeHost(pinned), cudaSuccess);
    CHECK(cudaFree((void *)0x1234), cudaErrorInvalidValue); /* unknown pointer: error passed back */
    /* A wrapped function the runtime lacks (the fake has no cudaMemset2D): the wrapper, reached
     * through the global scope, must fail cleanly and record nothing. */
    typedef cudaError_t (*set2d_fn)(void *, size_t, int, size_t, size_t);
    set2d_fn set2d = (set2d_fn)dlsym(RTLD_DEFAULT, "cudaMemset2D");
    if (set2d) {
        CHECK(set2d(NULL, 0, 0, 0, 0), cudaErrorNotSupported);
        CHECK(set2d(NULL, 0, 0, 0, 0), cudaErrorNotSupported);
    } else if (getenv("LD_PRELOAD")) {
        fprintf(stderr, "cudaMemset2D wrapper not found in the global scope\n");
        return 1;
    }
    free(pageable);
    free(registered);
    return 0;
}
