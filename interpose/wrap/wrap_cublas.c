/* wrap_cublas.c — cuBLAS and cuBLASLt GEMMs: m, n, k, batch, transposes, data and compute types.
 * libcublas runs its GEMMs through cublasLtMatmul; the recursion guard records such a nested call
 * once, as the outer cublas* call. */
#include "wrap_cublas.h"

static gt_sym sym_get_stream = GT_SYM_INIT("cublasGetStream_v2", GT_LIB_CUBLAS);
static gt_sym sym_lt_version = GT_SYM_INIT("cublasLtGetVersion", GT_LIB_CUBLASLT);
static gt_sym sym_layout_get = GT_SYM_INIT("cublasLtMatrixLayoutGetAttribute", GT_LIB_CUBLASLT);
static gt_sym sym_desc_get = GT_SYM_INIT("cublasLtMatmulDescGetAttribute", GT_LIB_CUBLASLT);
_Atomic int gt_cublas_seen;

void gt_cublas_first_use(void)
{
    if (atomic_exchange(&gt_cublas_seen, 1))
        return;
    typedef size_t (*ver_fn)(void);
    ver_fn v = (ver_fn)gt_sym_get(&sym_lt_version);
    if (v)
        gt_core_set_versions(0, 0, 0, 0, (int32_t)v(), 0);
}

uint64_t gt_cublas_stream(cublasHandle_t h)
{
    typedef cublasStatus_t (*fn_t)(cublasHandle_t, cudaStream_t *);
    fn_t f = (fn_t)gt_sym_get(&sym_get_stream);
    cudaStream_t s = 0;
    return (f && h && f(h, &s) == CUBLAS_STATUS_SUCCESS) ? (uint64_t)(uintptr_t)s : 0;
}

void gt_cublas_record(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                      const void *h, const gt_gemm_args *g)
{
    gt_rec_api_cublas *rec = gt_fast_record_begin(GT_REC_API_CUBLAS, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->handle = (uint64_t)(uintptr_t)h;
    rec->m = g->m, rec->n = g->n, rec->k = g->k, rec->batch = g->batch;
    rec->transa = g->ta, rec->transb = g->tb;
    rec->atype = g->at, rec->btype = g->bt, rec->ctype = g->ct, rec->compute_type = g->comp;
    gt_fast_record_commit(rec);
}

#define ARGS(m, n, k, b, at, bt, ct, comp) GT_GEMM_ARGS(m, n, k, b, ta, tb, at, bt, ct, comp)

static cublasStatus_t gemm_ex_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int m, int n,
                                   int k, const void *al, const void *A, cudaDataType at, int lda,
                                   const void *B, cudaDataType bt, int ldb, const void *be, void *C,
                                   cudaDataType ct, int ldc, cublasComputeType_t comp,
                                   cublasGemmAlgo_t algo)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int, int, int, const void *, const void *,
                                      cudaDataType, int, const void *, cudaDataType, int,
                                      const void *, void *, cudaDataType, int, cublasComputeType_t,
                                      cublasGemmAlgo_t))
    GT_GEMM_BODY(GT_FN_cublasGemmEx,
                 real(h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, comp, algo),
                 ARGS(m, n, k, 1, at, bt, ct, comp))
}
static cublasStatus_t gemm_sb_ex_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int m,
                                      int n, int k, const void *al, const void *A, cudaDataType at,
                                      int lda, long long sa, const void *B, cudaDataType bt,
                                      int ldb, long long sb, const void *be, void *C,
                                      cudaDataType ct, int ldc, long long sc, int batch,
                                      cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int, int, int, const void *, const void *,
                                      cudaDataType, int, long long, const void *, cudaDataType, int,
                                      long long, const void *, void *, cudaDataType, int, long long,
                                      int, cublasComputeType_t, cublasGemmAlgo_t))
    GT_GEMM_BODY(GT_FN_cublasGemmStridedBatchedEx,
                 real(h, ta, tb, m, n, k, al, A, at, lda, sa, B, bt, ldb, sb, be, C, ct, ldc, sc,
                      batch, comp, algo),
                 ARGS(m, n, k, batch, at, bt, ct, comp))
}
static cublasStatus_t sgemm_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int m, int n,
                                 int k, const float *al, const float *A, int lda, const float *B,
                                 int ldb, const float *be, float *C, int ldc)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int, int, int, const float *, const float *,
                                      int, const float *, int, const float *, float *, int))
    GT_GEMM_BODY(GT_FN_cublasSgemm_v2, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F))
}
static cublasStatus_t dgemm_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int m, int n,
                                 int k, const double *al, const double *A, int lda, const double *B,
                                 int ldb, const double *be, double *C, int ldc)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int, int, int, const double *, const double *,
                                      int, const double *, int, const double *, double *, int))
    GT_GEMM_BODY(GT_FN_cublasDgemm_v2, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F))
}
static cublasStatus_t hgemm_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int m, int n,
                                 int k, const gt_half *al, const gt_half *A, int lda,
                                 const gt_half *B, int ldb, const gt_half *be, gt_half *C, int ldc)
{
    GT_BLAS_REAL(s,
                 cublasStatus_t(*)(bh, op_t, op_t, int, int, int, const gt_half *, const gt_half *,
                                   int, const gt_half *, int, const gt_half *, gt_half *, int))
    GT_GEMM_BODY(GT_FN_cublasHgemm, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F))
}
static cublasStatus_t sgemm64_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int64_t m,
                                   int64_t n, int64_t k, const float *al, const float *A,
                                   int64_t lda, const float *B, int64_t ldb, const float *be,
                                   float *C, int64_t ldc)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int64_t, int64_t, int64_t, const float *,
                                      const float *, int64_t, const float *, int64_t, const float *,
                                      float *, int64_t))
    GT_GEMM_BODY(GT_FN_cublasSgemm_v2_64, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F))
}
static cublasStatus_t dgemm64_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int64_t m,
                                   int64_t n, int64_t k, const double *al, const double *A,
                                   int64_t lda, const double *B, int64_t ldb, const double *be,
                                   double *C, int64_t ldc)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int64_t, int64_t, int64_t, const double *,
                                      const double *, int64_t, const double *, int64_t,
                                      const double *, double *, int64_t))
    GT_GEMM_BODY(GT_FN_cublasDgemm_v2_64, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F))
}
static cublasStatus_t hgemm64_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int64_t m,
                                   int64_t n, int64_t k, const gt_half *al, const gt_half *A,
                                   int64_t lda, const gt_half *B, int64_t ldb, const gt_half *be,
                                   gt_half *C, int64_t ldc)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int64_t, int64_t, int64_t, const gt_half *,
                                      const gt_half *, int64_t, const gt_half *, int64_t,
                                      const gt_half *, gt_half *, int64_t))
    GT_GEMM_BODY(GT_FN_cublasHgemm_64, real(h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc),
                 ARGS(m, n, k, 1, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F))
}
static cublasStatus_t gemm_ex64_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb, int64_t m,
                                     int64_t n, int64_t k, const void *al, const void *A,
                                     cudaDataType at, int64_t lda, const void *B, cudaDataType bt,
                                     int64_t ldb, const void *be, void *C, cudaDataType ct,
                                     int64_t ldc, cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int64_t, int64_t, int64_t, const void *,
                                      const void *, cudaDataType, int64_t, const void *,
                                      cudaDataType, int64_t, const void *, void *, cudaDataType,
                                      int64_t, cublasComputeType_t, cublasGemmAlgo_t))
    GT_GEMM_BODY(GT_FN_cublasGemmEx_64,
                 real(h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, comp, algo),
                 ARGS(m, n, k, 1, at, bt, ct, comp))
}
static cublasStatus_t gemm_sb_ex64_impl(gt_sym *s, uint16_t flags, bh h, op_t ta, op_t tb,
                                        int64_t m, int64_t n, int64_t k, const void *al,
                                        const void *A, cudaDataType at, int64_t lda, long long sa,
                                        const void *B, cudaDataType bt, int64_t ldb, long long sb,
                                        const void *be, void *C, cudaDataType ct, int64_t ldc,
                                        long long sc, int64_t batch, cublasComputeType_t comp,
                                        cublasGemmAlgo_t algo)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(bh, op_t, op_t, int64_t, int64_t, int64_t, const void *,
                                      const void *, cudaDataType, int64_t, long long, const void *,
                                      cudaDataType, int64_t, long long, const void *, void *,
                                      cudaDataType, int64_t, long long, int64_t,
                                      cublasComputeType_t, cublasGemmAlgo_t))
    GT_GEMM_BODY(GT_FN_cublasGemmStridedBatchedEx_64,
                 real(h, ta, tb, m, n, k, al, A, at, lda, sa, B, bt, ldb, sb, be, C, ct, ldc, sc,
                      batch, comp, algo),
                 ARGS(m, n, k, batch, at, bt, ct, comp))
}

/* cublasLtMatmul: shapes from the layouts (m, n from D; k from A and its transpose). */
static int64_t layout_u64(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a)
{
    typedef cublasStatus_t (*fn_t)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void *,
                                   size_t, size_t *);
    fn_t f = (fn_t)gt_sym_get(&sym_layout_get);
    uint64_t v = 0;
    size_t w = 0;
    if (!f || !l)
        return -1;
    size_t size =
        (a == CUBLASLT_MATRIX_LAYOUT_TYPE || a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) ? 4 : 8;
    if (f(l, a, &v, size, &w) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return size == 4 ? (int64_t)(int32_t)v : (int64_t)v;
}
static int32_t desc_i32(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a)
{
    typedef cublasStatus_t (*fn_t)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void *,
                                   size_t, size_t *);
    fn_t f = (fn_t)gt_sym_get(&sym_desc_get);
    int32_t v = -1;
    size_t w = 0;
    if (!f || !d || f(d, a, &v, 4, &w) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return v;
}
static gt_gemm_args lt_args(cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t A,
                            cublasLtMatrixLayout_t B, cublasLtMatrixLayout_t D)
{
    gt_gemm_args g;
    g.ta = desc_i32(d, CUBLASLT_MATMUL_DESC_TRANSA);
    g.tb = desc_i32(d, CUBLASLT_MATMUL_DESC_TRANSB);
    g.comp = desc_i32(d, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
    g.m = layout_u64(D, CUBLASLT_MATRIX_LAYOUT_ROWS);
    g.n = layout_u64(D, CUBLASLT_MATRIX_LAYOUT_COLS);
    g.k = layout_u64(A, g.ta == CUBLAS_OP_N ? CUBLASLT_MATRIX_LAYOUT_COLS
                                            : CUBLASLT_MATRIX_LAYOUT_ROWS);
    g.batch = layout_u64(D, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
    if (g.batch < 1)
        g.batch = 1;
    g.at = (int32_t)layout_u64(A, CUBLASLT_MATRIX_LAYOUT_TYPE);
    g.bt = (int32_t)layout_u64(B, CUBLASLT_MATRIX_LAYOUT_TYPE);
    g.ct = (int32_t)layout_u64(D, CUBLASLT_MATRIX_LAYOUT_TYPE);
    return g;
}

static cublasStatus_t lt_matmul_impl(gt_sym *s, uint16_t flags, cublasLtHandle_t h,
                                     cublasLtMatmulDesc_t d, const void *al, const void *A,
                                     cublasLtMatrixLayout_t Ad, const void *B,
                                     cublasLtMatrixLayout_t Bd, const void *be, const void *C,
                                     cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                                     const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss,
                                     cudaStream_t st)
{
    GT_BLAS_REAL(s, cublasStatus_t(*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *,
                                      const void *, cublasLtMatrixLayout_t, const void *,
                                      cublasLtMatrixLayout_t, const void *, const void *,
                                      cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                                      const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t))
    if (!gt_fast_guard_enter())
        return real(h, d, al, A, Ad, B, Bd, be, C, Cd, D, Dd, algo, ws, wss, st);
    if (!atomic_load_explicit(&gt_cublas_seen, memory_order_relaxed))
        gt_cublas_first_use();
    gt_gemm_args g = lt_args(d, Ad, Bd, Dd);
    gt_call c;
    gt_call_begin(&c, GT_FN_cublasLtMatmul, true, true);
    gt_call_anchor(&c);
    cublasStatus_t r = real(h, d, al, A, Ad, B, Bd, be, C, Cd, D, Dd, algo, ws, wss, st);
    uint64_t t_end = gt_call_end(&c);
    gt_cublas_record(&c, t_end, flags, r, (uint64_t)(uintptr_t)st, h, &g);
    gt_fast_guard_leave();
    return r;
}

#define GEMM_ARGS (h, ta, tb, m, n, k, al, A, lda, B, ldb, be, C, ldc)
GT_ENTRY(cublasStatus_t, cublasGemmEx, GT_LIB_CUBLAS, gemm_ex_impl, 0,
         (bh h, op_t ta, op_t tb, int m, int n, int k, const void *al, const void *A,
          cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const void *be,
          void *C, cudaDataType ct, int ldc, cublasComputeType_t comp, cublasGemmAlgo_t algo),
         (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, comp, algo))
GT_ENTRY(cublasStatus_t, cublasGemmStridedBatchedEx, GT_LIB_CUBLAS, gemm_sb_ex_impl, 0,
         (bh h, op_t ta, op_t tb, int m, int n, int k, const void *al, const void *A,
          cudaDataType at, int lda, long long sa, const void *B, cudaDataType bt, int ldb,
          long long sb, const void *be, void *C, cudaDataType ct, int ldc, long long sc, int batch,
          cublasComputeType_t comp, cublasGemmAlgo_t algo),
         (h, ta, tb, m, n, k, al, A, at, lda, sa, B, bt, ldb, sb, be, C, ct, ldc, sc, batch, comp,
          algo))
GT_ENTRY(cublasStatus_t, cublasSgemm_v2, GT_LIB_CUBLAS, sgemm_impl, 0,
         (bh h, op_t ta, op_t tb, int m, int n, int k, const float *al, const float *A, int lda,
          const float *B, int ldb, const float *be, float *C, int ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasDgemm_v2, GT_LIB_CUBLAS, dgemm_impl, 0,
         (bh h, op_t ta, op_t tb, int m, int n, int k, const double *al, const double *A, int lda,
          const double *B, int ldb, const double *be, double *C, int ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasHgemm, GT_LIB_CUBLAS, hgemm_impl, 0,
         (bh h, op_t ta, op_t tb, int m, int n, int k, const gt_half *al, const gt_half *A, int lda,
          const gt_half *B, int ldb, const gt_half *be, gt_half *C, int ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasSgemm_v2_64, GT_LIB_CUBLAS, sgemm64_impl, 0,
         (bh h, op_t ta, op_t tb, int64_t m, int64_t n, int64_t k, const float *al, const float *A,
          int64_t lda, const float *B, int64_t ldb, const float *be, float *C, int64_t ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasDgemm_v2_64, GT_LIB_CUBLAS, dgemm64_impl, 0,
         (bh h, op_t ta, op_t tb, int64_t m, int64_t n, int64_t k, const double *al,
          const double *A, int64_t lda, const double *B, int64_t ldb, const double *be, double *C,
          int64_t ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasHgemm_64, GT_LIB_CUBLAS, hgemm64_impl, 0,
         (bh h, op_t ta, op_t tb, int64_t m, int64_t n, int64_t k, const gt_half *al,
          const gt_half *A, int64_t lda, const gt_half *B, int64_t ldb, const gt_half *be,
          gt_half *C, int64_t ldc),
         GEMM_ARGS)
GT_ENTRY(cublasStatus_t, cublasGemmEx_64, GT_LIB_CUBLAS, gemm_ex64_impl, 0,
         (bh h, op_t ta, op_t tb, int64_t m, int64_t n, int64_t k, const void *al, const void *A,
          cudaDataType at, int64_t lda, const void *B, cudaDataType bt, int64_t ldb, const void *be,
          void *C, cudaDataType ct, int64_t ldc, cublasComputeType_t comp, cublasGemmAlgo_t algo),
         (h, ta, tb, m, n, k, al, A, at, lda, B, bt, ldb, be, C, ct, ldc, comp, algo))
GT_ENTRY(cublasStatus_t, cublasGemmStridedBatchedEx_64, GT_LIB_CUBLAS, gemm_sb_ex64_impl, 0,
         (bh h, op_t ta, op_t tb, int64_t m, int64_t n, int64_t k, const void *al, const void *A,
          cudaDataType at, int64_t lda, long long sa, const void *B, cudaDataType bt, int64_t ldb,
          long long sb, const void *be, void *C, cudaDataType ct, int64_t ldc, long long sc,
          int64_t batch, cublasComputeType_t comp, cublasGemmAlgo_t algo),
         (h, ta, tb, m, n, k, al, A, at, lda, sa, B, bt, ldb, sb, be, C, ct, ldc, sc, batch, comp,
          algo))
GT_ENTRY(cublasStatus_t, cublasLtMatmul, GT_LIB_CUBLASLT, lt_matmul_impl, 0,
         (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *al, const void *A,
          cublasLtMatrixLayout_t Ad, const void *B, cublasLtMatrixLayout_t Bd, const void *be,
          const void *C, cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
          const cublasLtMatmulAlgo_t *algo, void *ws, size_t wss, cudaStream_t st),
         (h, d, al, A, Ad, B, Bd, be, C, Cd, D, Dd, algo, ws, wss, st))
