/* fake_cublas.c — a stand-in libcublas.so.13 whose GEMMs run through cublasLtMatmul of the fake
 * libcublasLt.so.13, as the real libcublas does: gputrace must record each GEMM once (the outer
 * cublas call), not twice. Each handle has its stream (cublasSetStream_v2/GetStream_v2), where its
 * kernels run.
 * FAKE_CUBLAS_GEMV_MEET=N: a gemv waits (up to 2 s) until N threads are inside gemv at once, and
 * returns once all N launched their kernels: each kernel's correlation id lies between the anchors
 * of all N calls, as when OpenMP threads call cublasSgemv at once on a real GPU (issue 30). */
#include <cublasLt.h>
#include <cublas_api.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct fake_handle {
    cublasLtHandle_t lt;
    cudaStream_t stream;
} fake_handle;

EXPORT cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    fake_handle *x = calloc(1, sizeof *x);
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    cublasLtCreate(&x->lt);
    *h = (cublasHandle_t)x;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    ((fake_handle *)h)->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s)
{
    if (!h || !s)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    *s = ((fake_handle *)h)->stream;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *v)
{
    *v = 130100;
    return CUBLAS_STATUS_SUCCESS;
}

/* One GEMM through cuBLASLt: C[m x n] = op(A)[m x k] * op(B)[k x n]. */
static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m,
                           int64_t n, int64_t k, cudaDataType at, cudaDataType bt, cudaDataType ct,
                           cublasComputeType_t comp, int64_t batch)
{
    if (!h || m < 0 || n < 0 || k < 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    fake_handle *x = (fake_handle *)h;
    cublasLtMatmulDesc_t d;
    cublasLtMatrixLayout_t A, B, C;
    cublasLtMatmulDescCreate(&d, comp, ct);
    int32_t t = ta;
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, 4);
    t = tb;
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &t, 4);
    cublasLtMatrixLayoutCreate(&A, at, ta == CUBLAS_OP_N ? m : k, ta == CUBLAS_OP_N ? k : m, m);
    cublasLtMatrixLayoutCreate(&B, bt, tb == CUBLAS_OP_N ? k : n, tb == CUBLAS_OP_N ? n : k, k);
    cublasLtMatrixLayoutCreate(&C, ct, m, n, m);
    int32_t b32 = (int32_t)batch;
    cublasLtMatrixLayoutSetAttribute(C, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b32, 4);
    float one = 1, zero = 0;
    cublasStatus_t r = cublasLtMatmul(x->lt, d, &one, NULL, A, NULL, B, &zero, NULL, C, NULL, C,
                                      NULL, NULL, 0, x->stream);
    cublasLtMatrixLayoutDestroy(A);
    cublasLtMatrixLayoutDestroy(B);
    cublasLtMatrixLayoutDestroy(C);
    cublasLtMatmulDescDestroy(d);
    return r;
}

EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void *alpha, const void *A,
                                   cudaDataType at, int lda, const void *B, cudaDataType bt,
                                   int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                                   cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    return gemm(h, ta, tb, m, n, k, at, bt, ct, comp, 1);
}
EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType at, int lda, long long sa, const void *B,
    cudaDataType bt, int ldb, long long sb, const void *beta, void *C, cudaDataType ct, int ldc,
    long long sc, int batch, cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
    return gemm(h, ta, tb, m, n, k, at, bt, ct, comp, batch);
}
EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const float *alpha, const float *A,
                                     int lda, const float *B, int ldb, const float *beta, float *C,
                                     int ldc)
{
    return gemm(h, ta, tb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1);
}
EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const double *alpha, const double *A,
                                     int lda, const double *B, int ldb, const double *beta,
                                     double *C, int ldc)
{
    return gemm(h, ta, tb, m, n, k, CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 1);
}
EXPORT cublasStatus_t cublasSgemm_v2_64(cublasHandle_t h, cublasOperation_t ta,
                                        cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
                                        const float *alpha, const float *A, int64_t lda,
                                        const float *B, int64_t ldb, const float *beta, float *C,
                                        int64_t ldc)
{
    return gemm(h, ta, tb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1);
}

/* ------------------------------------------------------------------ issue 30: more entry points */

/* fake_cublaslt.c */
void cublasLtFakeEmit(const char *name, uint64_t m, uint64_t n, cudaStream_t stream);

/* FAKE_CUBLAS_GEMV_MEET: the gemv calls of a round meet twice, all inside (before any kernel) and
 * all launched (before any returns). A thread that waits 2 s goes on alone (no hang when fewer
 * threads call). */
static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_cond = PTHREAD_COND_INITIALIZER;
static int meet_count[2];
static unsigned meet_round[2];

static int meet_size(void)
{
    const char *v = getenv("FAKE_CUBLAS_GEMV_MEET");
    int n = v ? atoi(v) : 0;
    return n > 1 ? n : 0;
}

static void meet(int which, int n)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&meet_lock);
    unsigned round = meet_round[which];
    if (++meet_count[which] == n) {
        meet_count[which] = 0;
        meet_round[which]++;
        pthread_cond_broadcast(&meet_cond);
    }
    while (meet_round[which] == round)
        if (pthread_cond_timedwait(&meet_cond, &meet_lock, &until) == ETIMEDOUT) {
            if (meet_round[which] == round)
                meet_count[which]--; /* gone on alone */
            break;
        }
    pthread_mutex_unlock(&meet_lock);
}

/* A gemv launches a kernel of its own (the real library's gemv2N/gemv2T kernels), not a GEMM, on
 * the handle's stream. */
static cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n,
                           int64_t incx, const char *kernel)
{
    if (!h || m < 0 || n < 0 || incx == 0)
        return CUBLAS_STATUS_INVALID_VALUE;
    int together = meet_size();
    if (together)
        meet(0, together);
    cublasLtFakeEmit(kernel, t == CUBLAS_OP_N ? (uint64_t)m : (uint64_t)n, 1,
                     ((fake_handle *)h)->stream);
    if (together)
        meet(1, together);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasSgemv_v2(cublasHandle_t h, cublasOperation_t t, int m, int n,
                                     const float *alpha, const float *A, int lda, const float *x,
                                     int incx, const float *beta, float *y, int incy)
{
    return gemv(h, t, m, n, incx, "_Z15gemv2N_kernel_fakeIfLi128EEvv");
}
EXPORT cublasStatus_t cublasDgemv_v2(cublasHandle_t h, cublasOperation_t t, int m, int n,
                                     const double *alpha, const double *A, int lda, const double *x,
                                     int incx, const double *beta, double *y, int incy)
{
    return gemv(h, t, m, n, incx, "_Z15gemv2T_kernel_fakeIdLi128EEvv");
}
EXPORT cublasStatus_t cublasSgemv_v2_64(cublasHandle_t h, cublasOperation_t t, int64_t m, int64_t n,
                                        const float *alpha, const float *A, int64_t lda,
                                        const float *x, int64_t incx, const float *beta, float *y,
                                        int64_t incy)
{
    return gemv(h, t, m, n, incx, "_Z15gemv2N_kernel_fakeIfLi128EEvv");
}
EXPORT cublasStatus_t cublasCgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const cuComplex *alpha,
                                     const cuComplex *A, int lda, const cuComplex *B, int ldb,
                                     const cuComplex *beta, cuComplex *C, int ldc)
{
    return gemm(h, ta, tb, m, n, k, CUDA_C_32F, CUDA_C_32F, CUDA_C_32F, CUBLAS_COMPUTE_32F, 1);
}
EXPORT cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta,
                                         cublasOperation_t tb, int m, int n, int k,
                                         const float *alpha, const float *const A[], int lda,
                                         const float *const B[], int ldb, const float *beta,
                                         float *const C[], int ldc, int batch)
{
    return gemm(h, ta, tb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, batch);
}
EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta,
                                                cublasOperation_t tb, int m, int n, int k,
                                                const float *alpha, const float *A, int lda,
                                                long long sa, const float *B, int ldb, long long sb,
                                                const float *beta, float *C, int ldc, long long sc,
                                                int batch)
{
    if (sa != (long long)m * k || sc != (long long)m * n) /* the strides arrived intact */
        return CUBLAS_STATUS_INVALID_VALUE;
    return gemm(h, ta, tb, m, n, k, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, batch);
}
EXPORT cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta,
                                          cublasOperation_t tb, int m, int n, int k,
                                          const void *alpha, const void *const A[], cudaDataType at,
                                          int lda, const void *const B[], cudaDataType bt, int ldb,
                                          const void *beta, void *const C[], cudaDataType ct,
                                          int ldc, int batch, cublasComputeType_t comp,
                                          cublasGemmAlgo_t algo)
{
    return gemm(h, ta, tb, m, n, k, at, bt, ct, comp, batch);
}
EXPORT cublasStatus_t cublasSgemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                    int m, int n, int k, const float *alpha, const void *A,
                                    cudaDataType at, int lda, const void *B, cudaDataType bt,
                                    int ldb, const float *beta, void *C, cudaDataType ct, int ldc)
{
    return gemm(h, ta, tb, m, n, k, at, bt, ct, CUBLAS_COMPUTE_32F, 1);
}
