/* fake_cublaslt.c — a stand-in libcublasLt.so.13: matrix layouts and matmul descriptors that keep
 * their attributes, and cublasLtMatmul "launching" one kernel on the fake GPU (through
 * fake_gpu_emit, like the real library's static runtime). FAKE_CUDA_FAIL=cublasLtMatmul fails it.
 */
#include <cublasLt.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_gpu.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct layout {
    int32_t type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t batch;
} layout;
typedef struct desc {
    int32_t compute_type, scale_type, transa, transb;
} desc;

static bool should_fail(const char *fn)
{
    const char *f = getenv("FAKE_CUDA_FAIL");
    return f && strncmp(f, fn, strlen(fn)) == 0 && (f[strlen(fn)] == 0 || f[strlen(fn)] == ':');
}

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    static int handle;
    *h = (cublasLtHandle_t)&handle;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT size_t cublasLtGetVersion(void)
{
    return 130100;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    layout *x = calloc(1, sizeof(cublasLtMatrixLayoutOpaque_t) > sizeof(layout)
                              ? sizeof(cublasLtMatrixLayoutOpaque_t)
                              : sizeof(layout));
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (layout){type, rows, cols, ld, 1};
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    free(l);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                       cublasLtMatrixLayoutAttribute_t a,
                                                       const void *buf, size_t n)
{
    layout *x = (layout *)l;
    if (a == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT && n == 4)
        memcpy(&x->batch, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                       cublasLtMatrixLayoutAttribute_t a, void *buf,
                                                       size_t n, size_t *written)
{
    layout *x = (layout *)l;
    const void *src = NULL;
    size_t len = 0;
    switch (a) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
        src = &x->type, len = 4;
        break;
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
        src = &x->rows, len = 8;
        break;
    case CUBLASLT_MATRIX_LAYOUT_COLS:
        src = &x->cols, len = 8;
        break;
    case CUBLASLT_MATRIX_LAYOUT_LD:
        src = &x->ld, len = 8;
        break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
        src = &x->batch, len = 4;
        break;
    default:
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (written)
        *written = len;
    if (n < len || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, src, len);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t ct,
                                               cudaDataType_t st)
{
    desc *x = calloc(1, sizeof(cublasLtMatmulDescOpaque_t));
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    *x = (desc){ct, st, CUBLAS_OP_N, CUBLAS_OP_N};
    *d = (cublasLtMatmulDesc_t)x;
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    free(d);
    return CUBLAS_STATUS_SUCCESS;
}
static int32_t *desc_field(desc *x, cublasLtMatmulDescAttributes_t a)
{
    switch (a) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
        return &x->compute_type;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
        return &x->scale_type;
    case CUBLASLT_MATMUL_DESC_TRANSA:
        return &x->transa;
    case CUBLASLT_MATMUL_DESC_TRANSB:
        return &x->transb;
    default:
        return NULL;
    }
}
EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                                     cublasLtMatmulDescAttributes_t a,
                                                     const void *buf, size_t n)
{
    int32_t *f = desc_field((desc *)d, a);
    if (f && n == 4)
        memcpy(f, buf, 4);
    return CUBLAS_STATUS_SUCCESS;
}
EXPORT cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                                     cublasLtMatmulDescAttributes_t a, void *buf,
                                                     size_t n, size_t *written)
{
    int32_t *f = desc_field((desc *)d, a);
    if (!f)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (written)
        *written = 4;
    if (n < 4 || !buf)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, f, 4);
    return CUBLAS_STATUS_SUCCESS;
}

/* Not a cuBLASLt function: the fake libcublas launches its own kernels (gemv) through it, as the
 * real one launches through its static runtime, on the handle's stream. Named cublasLt* to pass
 * the version script. */
EXPORT void cublasLtFakeEmit(const char *name, uint64_t m, uint64_t n, cudaStream_t stream);
EXPORT void cublasLtFakeEmit(const char *name, uint64_t m, uint64_t n, cudaStream_t stream)
{
    static void (*emit_fn)(const fake_gpu_op *);
    static uint32_t (*stream_id_fn)(void *);
    if (!emit_fn) {
        void *h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
        if (h) {
            stream_id_fn = (uint32_t(*)(void *))dlsym(h, "fake_gpu_stream_id");
            emit_fn = (void (*)(const fake_gpu_op *))dlsym(h, "fake_gpu_emit");
        }
    }
    if (!emit_fn)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    fake_gpu_op op = {.kind = FAKE_OP_KERNEL,
                      .start_ns = t,
                      .end_ns = t + 8000,
                      .stream = stream_id_fn ? stream_id_fn(stream) : 7,
                      .name = name,
                      .grid = {(uint32_t)(m / 128 + 1), (uint32_t)(n / 128 + 1), 1},
                      .block = {256, 1, 1}};
    emit_fn(&op);
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha,
                                     const void *A, cublasLtMatrixLayout_t Ad, const void *B,
                                     cublasLtMatrixLayout_t Bd, const void *beta, const void *C,
                                     cublasLtMatrixLayout_t Cd, void *D, cublasLtMatrixLayout_t Dd,
                                     const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_size,
                                     cudaStream_t stream)
{
    if (!h || !d || !Ad || !Bd || !Dd)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (should_fail("cublasLtMatmul"))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    layout *dl = (layout *)Dd;
    /* fp32 data and fp32 compute run on FFMA units, as the real library's default math mode
     * does; any other type or compute type on tensor cores */
    int ffma = ((const desc *)d)->compute_type == CUBLAS_COMPUTE_32F &&
               ((const layout *)Ad)->type == CUDA_R_32F;
    cublasLtFakeEmit(ffma ? "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_ffma_fake"
                          : "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_fake",
                     dl->rows, dl->cols, stream);
    return CUBLAS_STATUS_SUCCESS;
}
