/* ti_cublas_app.c — cuBLAS GEMMs (which run through cublasLtMatmul in the fake, as in the real
 * library) and one direct cublasLtMatmul. For interpose_check "cublas"; with
 * FAKE_CUDA_FAIL=cublasLtMatmul every GEMM must return CUBLAS_STATUS_EXECUTION_FAILED. */
#include <cublasLt.h>
#include <cublas_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    return 0;
}
