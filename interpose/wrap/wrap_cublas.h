/* wrap_cublas.h — what the cuBLAS wrappers share (wrap_cublas.c: GEMMs and cublasLtMatmul;
 * wrap_cublas_blas.c: gemv, complex and batched GEMMs): one record per outermost call with the
 * shapes as a GEMM (m, n, k, batch, transposes, types), and the call bracketed by the anchors
 * that link the kernels cuBLAS launches through its own static runtime (gt_call_anchor). */
#ifndef GT_WRAP_CUBLAS_H
#define GT_WRAP_CUBLAS_H

#include <cublasLt.h>
#include <cublas_api.h>

#include "gt_wrap.h"

/* The half-precision entry points are declared for C++ only (cuda_fp16.h has no C __half): their
 * pointers to 16-bit values are all a wrapper passes through. */
typedef struct gt_half {
    unsigned short bits;
} gt_half;

typedef cublasHandle_t bh;
typedef cublasOperation_t op_t;

typedef struct gt_gemm_args {
    int64_t m, n, k, batch;
    int32_t ta, tb, at, bt, ct, comp;
} gt_gemm_args;

#define GT_GEMM_ARGS(m, n, k, b, ta, tb, at, bt, ct, comp)                                         \
    {                                                                                              \
        (int64_t)(m), (int64_t)(n), (int64_t)(k), (int64_t)(b), (int32_t)(ta), (int32_t)(tb),      \
            (int32_t)(at), (int32_t)(bt), (int32_t)(ct), (int32_t)(comp)                           \
    }

extern _Atomic int gt_cublas_seen;
void gt_cublas_first_use(void); /* the cuBLASLt version into the header, once */
uint64_t gt_cublas_stream(cublasHandle_t h);
void gt_cublas_record(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                      const void *h, const gt_gemm_args *g);

#define GT_BLAS_REAL(s, type)                                                                      \
    __typeof__(type) real = (__typeof__(type))gt_sym_get(s);                                       \
    if (__builtin_expect(!real, 0)) {                                                              \
        gt_sym_warn_missing(s);                                                                    \
        return CUBLAS_STATUS_NOT_SUPPORTED;                                                        \
    }

/* The body of a wrapper whose handle is h: the real call, anchored, and its record. */
#define GT_GEMM_BODY(fnid, call_real, args_init)                                                   \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    if (!atomic_load_explicit(&gt_cublas_seen, memory_order_relaxed))                              \
        gt_cublas_first_use();                                                                     \
    gt_gemm_args g = args_init;                                                                    \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, true);                                                           \
    gt_call_anchor(&c);                                                                            \
    cublasStatus_t r = call_real;                                                                  \
    uint64_t t_end = gt_call_end(&c);                                                              \
    gt_cublas_record(&c, t_end, flags, r, gt_cublas_stream(h), h, &g);                             \
    gt_fast_guard_leave();                                                                         \
    return r;

#endif
