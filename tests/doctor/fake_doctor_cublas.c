/* fake_doctor_cublas.c — a stand-in libcublas.so.13 for `gputrace doctor` tests: each
 * cublasGemmEx advances the fake driver's simulated clock by 2mnk FLOP at a known rate (fp32 50,
 * TF32 400, bf16 700 TFLOPS), so doctor's measured GEMM figures are known in advance. (The fake
 * cuBLAS in tests/fakes serves the recorder's tests and knows no driver clock.) */
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F_FAST_TF32 77

EXPORT int cublasCreate_v2(void **h)
{
    *h = malloc(16);
    return *h ? 0 : 3; /* CUBLAS_STATUS_ALLOC_FAILED */
}
EXPORT int cublasDestroy_v2(void *h)
{
    free(h);
    return 0;
}
EXPORT int cublasGetProperty(int type, int *v)
{
    *v = type == 0 ? 13 : type == 1 ? 1 : 0; /* 13.1.0 */
    return 0;
}
EXPORT size_t cublasGetCudartVersion(void)
{
    return 13000;
}

EXPORT int cublasGemmEx(void *h, int ta, int tb, int m, int n, int k, const void *alpha,
                        const void *A, int at, int lda, const void *B, int bt, int ldb,
                        const void *beta, void *C, int ct, int ldc, int comp, int algo)
{
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)bt, (void)ldb;
    (void)beta, (void)C, (void)ct, (void)ldc, (void)algo;
    if (!h || m <= 0 || n <= 0 || k <= 0)
        return 7; /* CUBLAS_STATUS_INVALID_VALUE */
    static void (*advance)(double);
    if (!advance) {
        void *cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
        if (cuda)
            advance = (void (*)(double))dlsym(cuda, "fake_cuda_advance_ns");
    }
    if (!advance)
        return 13; /* CUBLAS_STATUS_EXECUTION_FAILED: no fake driver loaded */
    double tflops = at == CUDA_R_16BF ? 700 : comp == CUBLAS_COMPUTE_32F_FAST_TF32 ? 400 : 50;
    advance(2.0 * m * n * (double)k / (tflops * 1e3)); /* FLOP / (FLOP per ns) */
    return 0;
}
