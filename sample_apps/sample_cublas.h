/* sample_cublas.h — what the samples that call cuBLAS share (gemm_share, managed_gemv): the status
 * check that names the call and its status, as CUDA_CHECK does for the runtime. */
#ifndef SAMPLE_CUBLAS_H
#define SAMPLE_CUBLAS_H

#include <cublas_v2.h>

#include "sample_common.h"

#define CUBLAS_CHECK(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t st_ = (call);                                                               \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call, (int)st_); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
