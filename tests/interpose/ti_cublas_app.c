/* ti_cublas_app.c — cuBLAS GEMMs (which run through cublasLtMatmul in the fake, as in the real
 * library), one direct cublasLtMatmul, then the entry points of issue 30: gemv (its own kernel,
 * not a GEMM), a complex GEMM and batched GEMMs. For interpose_check "cublas"; with
 * FAKE_CUDA_FAIL=cublasLtMatmul every GEMM must return CUBLAS_STATUS_EXECUTION_FAILED, the gemvs
 * still succeed. */
#include <cuComplex.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Issue 30's entry points; gemv returns 0 even when GEMMs fail. */
static int more(cublasHandle_t h, int want)
{
    float one = 1, zero = 0;
    double done = 1, dzero = 0;
    cuComplex cone = {1, 0}, czero = {0, 0};
    const float *const arr[1] = {NULL};
    float *const out[1] = {NULL};
    const void *const varr[1] = {NULL};
    void *const vout[1] = {NULL};
    int r[8], expect[8] = {0, 0, 0, want, want, want, want, want};
    r[0] = cublasSgemv_v2(h, CUBLAS_OP_N, 300, 200, &one, NULL, 300, NULL, 1, &zero, NULL, 1);
    r[1] = cublasDgemv_v2(h, CUBLAS_OP_T, 300, 200, &done, NULL, 300, NULL, 1, &dzero, NULL, 1);
    r[2] = cublasSgemv_v2_64(h, CUBLAS_OP_N, 1000, 10, &one, NULL, 1000, NULL, 1, &zero, NULL, 1);
    r[3] = cublasCgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16, &cone, NULL, 16, NULL, 16,
                          &czero, NULL, 16);
    r[4] = cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 32, 32, 32, &one, arr, 32, arr, 32,
                              &zero, out, 32, 8);
    r[5] = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 48, 32, &one, NULL, 64,
                                     64 * 32, NULL, 32, 32 * 48, &zero, NULL, 64, 64 * 48, 3);
    r[6] = cublasGemmBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 128, 64, 256, &one, varr, CUDA_R_16BF,
                               256, varr, CUDA_R_16BF, 256, &zero, vout, CUDA_R_32F, 128, 2,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    r[7] = cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 100, 50, 25, &one, NULL, CUDA_R_16F, 100,
                         NULL, CUDA_R_16F, 25, &zero, NULL, CUDA_R_32F, 100);
    for (int i = 0; i < 8; i++)
        if (r[i] != expect[i]) {
            fprintf(stderr, "call %d returned %d, expected %d\n", i, r[i], expect[i]);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    int want = argc > 1 && strcmp(argv[1], "fail") == 0 ? CUBLAS_STATUS_EXECUTION_FAILED : 0;
    cublasHandle_t h;
    if (cublasCreate_v2(&h))
        return 1;
    float one = 1, zero = 0;
    int r[4];
    r[0] = cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_T, 128, 256, 64, &one, NULL, 128, NULL, 256,
                          &zero, NULL, 128);
    r[1] = cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 512, 512, 1024, &one, NULL, CUDA_R_16F, 512,
                        NULL, CUDA_R_16F, 512, &zero, NULL, CUDA_R_16F, 512, CUBLAS_COMPUTE_32F,
                        CUBLAS_GEMM_DEFAULT);
    r[2] =
        cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, &one, NULL, CUDA_R_32F,
                                   64, 1024, NULL, CUDA_R_32F, 16, 512, &zero, NULL, CUDA_R_32F, 64,
                                   2048, 4, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t A, B, C;
    cublasLtCreate(&lt);
    cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayoutCreate(&A, CUDA_R_16BF, 32, 8, 32);
    cublasLtMatrixLayoutCreate(&B, CUDA_R_16BF, 8, 16, 8);
    cublasLtMatrixLayoutCreate(&C, CUDA_R_32F, 32, 16, 32);
    r[3] = cublasLtMatmul(lt, d, &one, NULL, A, NULL, B, &zero, NULL, C, NULL, C, NULL, NULL, 0, 0);
    for (int i = 0; i < 4; i++)
        if (r[i] != want) {
            fprintf(stderr, "GEMM %d returned %d, expected %d\n", i, r[i], want);
            return 1;
        }
    return more(h, want);
}
