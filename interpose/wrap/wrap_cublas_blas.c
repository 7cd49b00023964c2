/* wrap_cublas_blas.c — the cuBLAS entry points beyond wrap_cublas.c's GEMMs that PyTorch, CuPy and
 * JAX call (issue 30): matrix-vector products (PyTorch's addmv and linear on a vector, CuPy's dot),
 * complex GEMMs, batched GEMMs by pointer array or by stride (bmm, matmul on 3-D arrays), and the
 * typed cublasSgemmEx that CuPy's float32 and float16 matmul call. Their
 * kernels come from cuBLAS's own static runtime: without a wrapper they were "from calls no wrapper
 * sees". Each records one GT_REC_API_CUBLAS with the shape as a GEMM: a gemv computes y = op(A) x,
 * the GEMM m = rows of op(A), n = 1, k = columns of op(A) (2mnk flops as for any GEMM).
 *
 * One macro per shape family generates the implementation and its entry point for each element
 * type: the parameter lists are cuBLAS's, so the exported symbols keep the real signatures. */
#include <cuComplex.h>

#include "wrap_cublas.h"

/* y = op(A) x, A m x n */
#define GEMV_ENTRY(name, T, I, dt, comp)                                                           \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, I m, I n,          \
                                      const T *al, const T *A, I lda, const T *x, I incx,          \
                                      const T *be, T *y, I incy){                                  \
        GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, I, I, const T *, const T *, I, const T *, I,   \
                                          const T *, T *, I))                                      \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name, real(h, ta, m, n, al, A, lda, x, incx, be, y, incy),                 \
                GT_GEMM_ARGS(ta == CUBLAS_OP_N ? m : n, 1, ta == CUBLAS_OP_N ? n : m, 1, ta,       \
                             CUBLAS_OP_N, dt, dt, dt,                                              \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, I m, I n, const T *al, const T *A,   \
                                               I lda, const T *x, I incx, const T *be, T *y,       \
                                               I incy),                                            \
                                              (h, ta, m, n, al, A, lda, x, incx, be, y, incy))

/* C = op(A) op(B), one GEMM */
#define GEMM_ENTRY(name, T, I, dt, comp)                                                           \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, I m, I n, \
                                      I k, const T *al, const T *A, I lda, const T *B, I ldb,      \
                                      const T *be, T *C, I ldc){                                   \
        GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, I, I, I, const T *, const T *, I,        \
                                          const T *, I, const T *, T *, I))                        \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),            \
                GT_GEMM_ARGS(m, n, k, 1, ta, tb, dt, dt, dt,                                       \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, op_t tb, I m, I n, I k, const T *al, \
                                               const T *A, I lda, const T *B, I ldb, const T *be,  \
                                               T *C, I ldc),                                       \
                                              (h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C,      \
                                               ldc))

/* batch GEMMs whose matrices are given by arrays of pointers */
#define BATCHED_ENTRY(name, T, I, dt, comp)                                                        \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, I m, I n, \
                                      I k, const T *al, const T *const *A, I lda,                  \
                                      const T *const *B, I ldb, const T *be, T *const *C, I ldc,   \
                                      I batch){                                                    \
        GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, I, I, I, const T *, const T *const *, I, \
                                          const T *const *, I, const T *, T *const *, I, I))       \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc, batch),     \
                GT_GEMM_ARGS(m, n, k, batch, ta, tb, dt, dt, dt,                                   \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, op_t tb, I m, I n, I k, const T *al, \
                                               const T *const *A, I lda, const T *const *B, I ldb, \
                                               const T *be, T *const *C, I ldc, I batch),          \
                                              (h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc, \
                                               batch))

/* batch GEMMs whose matrices lie at fixed strides */
#define STRIDED_ENTRY(name, T, I, dt, comp)                                                        \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, I m, I n, \
                                      I k, const T *al, const T *A, I lda, long long sa,           \
                                      const T *B, I ldb, long long sb, const T *be, T *C, I ldc,   \
                                      long long sc, I batch){                                      \
        GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, I, I, I, const T *, const T *, I,        \
                                          long long, const T *, I, long long, const T *, T *, I,   \
                                          long long, I))                                           \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name,                                                                      \
                real(h, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, C, ldc, sc, batch),       \
                GT_GEMM_ARGS(m, n, k, batch, ta, tb, dt, dt, dt,                                   \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, op_t tb, I m, I n, I k, const T *al, \
                                               const T *A, I lda, long long sa, const T *B, I ldb, \
                                               long long sb, const T *be, T *C, I ldc,             \
                                               long long sc, I batch),                             \
                                              (h, ta, tb, m, n, k, al, A, lda, sa, B, ldb, sb, be, \
                                               C, ldc, sc, batch))

/* cublasGemmBatchedEx: pointer arrays with the data and compute types as arguments */
#define BATCHED_EX_ENTRY(name, I)                                                                  \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, I m, I n, \
                                      I k, const void *al, const void *const *A, cudaDataType at,  \
                                      I lda, const void *const *B, cudaDataType bt, I ldb,         \
                                      const void *be, void *const *C, cudaDataType ct, I ldc,      \
                                      I batch, cublasComputeType_t comp, cublasGemmAlgo_t algo){   \
        GT_BLAS_REAL(s,                                                                            \
                     cublasStatus_t(*)(bh, op_t, op_t, I, I, I, const void *, const void *const *, \
                                       cudaDataType, I, const void *const *, cudaDataType, I,      \
                                       const void *, void *const *, cudaDataType, I, I,            \
                                       cublasComputeType_t, cublasGemmAlgo_t))                     \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name,                                                                      \
                real(h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, batch, comp,  \
                     algo),                                                                        \
                GT_GEMM_ARGS(m, n, k, batch, ta, tb, at, bt, ct,                                   \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, op_t tb, I m, I n, I k,              \
                                               const void *al, const void *const *A,               \
                                               cudaDataType at, I lda, const void *const *B,       \
                                               cudaDataType bt, I ldb, const void *be,             \
                                               void *const *C, cudaDataType ct, I ldc, I batch,    \
                                               cublasComputeType_t comp, cublasGemmAlgo_t algo),   \
                                              (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, \
                                               C, ct, ldc, batch, comp, algo))

/* cublasSgemmEx / CgemmEx: typed data, float (complex) scalars and compute */
#define GEMM_EX_ENTRY(name, T, I, comp)                                                            \
    static cublasStatus_t name##_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, I m, I n, \
                                      I k, const T *al, const void *A, cudaDataType at, I lda,     \
                                      const void *B, cudaDataType bt, I ldb, const T *be, void *C, \
                                      cudaDataType ct, I ldc){                                     \
        GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, I, I, I, const T *, const void *,        \
                                          cudaDataType, I, const void *, cudaDataType, I,          \
                                          const T *, void *, cudaDataType, I))                     \
            GT_GEMM_BODY(                                                                          \
                GT_FN_##name,                                                                      \
                real(h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc),              \
                GT_GEMM_ARGS(m, n, k, 1, ta, tb, at, bt, ct,                                       \
                             comp))} GT_ENTRY(cublasStatus_t, name, GT_LIB_CUBLAS, name##_impl, 0, \
                                              (bh h, op_t ta, op_t tb, I m, I n, I k, const T *al, \
                                               const void *A, cudaDataType at, I lda,              \
                                               const void *B, cudaDataType bt, I ldb, const T *be, \
                                               void *C, cudaDataType ct, I ldc),                   \
                                              (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, \
                                               C, ct, ldc))

#define R32 CUDA_R_32F, CUBLAS_COMPUTE_32F
#define R64 CUDA_R_64F, CUBLAS_COMPUTE_64F
#define R16 CUDA_R_16F, CUBLAS_COMPUTE_16F
#define C32 CUDA_C_32F, CUBLAS_COMPUTE_32F
#define C64 CUDA_C_64F, CUBLAS_COMPUTE_64F
/* the type pair as two macro arguments */
#define EXPAND(m, ...) m(__VA_ARGS__)

/* clang-format off: one line per entry point reads as the table it is */
EXPAND(GEMV_ENTRY, cublasSgemv_v2, float, int, R32)
EXPAND(GEMV_ENTRY, cublasDgemv_v2, double, int, R64)
EXPAND(GEMV_ENTRY, cublasCgemv_v2, cuComplex, int, C32)
EXPAND(GEMV_ENTRY, cublasZgemv_v2, cuDoubleComplex, int, C64)
EXPAND(GEMV_ENTRY, cublasSgemv_v2_64, float, int64_t, R32)
EXPAND(GEMV_ENTRY, cublasDgemv_v2_64, double, int64_t, R64)
EXPAND(GEMV_ENTRY, cublasCgemv_v2_64, cuComplex, int64_t, C32)
EXPAND(GEMV_ENTRY, cublasZgemv_v2_64, cuDoubleComplex, int64_t, C64)
EXPAND(GEMM_ENTRY, cublasCgemm_v2, cuComplex, int, C32)
EXPAND(GEMM_ENTRY, cublasZgemm_v2, cuDoubleComplex, int, C64)
EXPAND(GEMM_ENTRY, cublasCgemm_v2_64, cuComplex, int64_t, C32)
EXPAND(GEMM_ENTRY, cublasZgemm_v2_64, cuDoubleComplex, int64_t, C64)
EXPAND(BATCHED_ENTRY, cublasSgemmBatched, float, int, R32)
EXPAND(BATCHED_ENTRY, cublasDgemmBatched, double, int, R64)
EXPAND(BATCHED_ENTRY, cublasHgemmBatched, gt_half, int, R16)
EXPAND(BATCHED_ENTRY, cublasCgemmBatched, cuComplex, int, C32)
EXPAND(BATCHED_ENTRY, cublasZgemmBatched, cuDoubleComplex, int, C64)
EXPAND(BATCHED_ENTRY, cublasSgemmBatched_64, float, int64_t, R32)
EXPAND(BATCHED_ENTRY, cublasDgemmBatched_64, double, int64_t, R64)
EXPAND(BATCHED_ENTRY, cublasHgemmBatched_64, gt_half, int64_t, R16)
EXPAND(BATCHED_ENTRY, cublasCgemmBatched_64, cuComplex, int64_t, C32)
EXPAND(BATCHED_ENTRY, cublasZgemmBatched_64, cuDoubleComplex, int64_t, C64)
EXPAND(STRIDED_ENTRY, cublasSgemmStridedBatched, float, int, R32)
EXPAND(STRIDED_ENTRY, cublasDgemmStridedBatched, double, int, R64)
EXPAND(STRIDED_ENTRY, cublasHgemmStridedBatched, gt_half, int, R16)
EXPAND(STRIDED_ENTRY, cublasCgemmStridedBatched, cuComplex, int, C32)
EXPAND(STRIDED_ENTRY, cublasZgemmStridedBatched, cuDoubleComplex, int, C64)
EXPAND(STRIDED_ENTRY, cublasSgemmStridedBatched_64, float, int64_t, R32)
EXPAND(STRIDED_ENTRY, cublasDgemmStridedBatched_64, double, int64_t, R64)
EXPAND(STRIDED_ENTRY, cublasHgemmStridedBatched_64, gt_half, int64_t, R16)
EXPAND(STRIDED_ENTRY, cublasCgemmStridedBatched_64, cuComplex, int64_t, C32)
EXPAND(STRIDED_ENTRY, cublasZgemmStridedBatched_64, cuDoubleComplex, int64_t, C64)
GEMM_EX_ENTRY(cublasSgemmEx, float, int, CUBLAS_COMPUTE_32F)
GEMM_EX_ENTRY(cublasSgemmEx_64, float, int64_t, CUBLAS_COMPUTE_32F)
GEMM_EX_ENTRY(cublasCgemmEx, cuComplex, int, CUBLAS_COMPUTE_32F)
GEMM_EX_ENTRY(cublasCgemmEx_64, cuComplex, int64_t, CUBLAS_COMPUTE_32F)
BATCHED_EX_ENTRY(cublasGemmBatchedEx, int)
BATCHED_EX_ENTRY(cublasGemmBatchedEx_64, int64_t)
/* clang-format on */
