/* conv_legacy.cu — cuDNN's legacy convolution API, choosing the algorithm two ways (the
 * `cudnn-benchmark` pathology for plain C programs):
 *   conv_legacy get   cudnnGetConvolutionForwardAlgorithm_v7: heuristics, first usable entry
 *   conv_legacy find  cudnnFindConvolutionForwardAlgorithm: each algorithm timed, fastest used
 *   add "half" for fp16 data with tensor-op math (the `amp` fix); default fp32.
 * Three ResNet-50-like layers (1x1, 3x3, 3x3 stride 2), forward, 30 iterations each. The chosen
 * algorithm and the step time are printed, so runs against two cuDNN versions can be compared. */
#include <cudnn.h>

#include "sample_common.h"

#define CUDNN_CHECK(call)                                                                          \
    do {                                                                                           \
        cudnnStatus_t st_ = (call);                                                                \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                    cudnnGetErrorString(st_));                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct layer {
    int n, c, h, w, k, r, stride, pad;
} layer;

static const layer LAYERS[] = {
    {32, 256, 56, 56, 64, 1, 1, 0},
    {32, 64, 56, 56, 64, 3, 1, 1},
    {32, 128, 56, 56, 128, 3, 2, 1},
};
#define ITERATIONS 30

static void run_layer(cudnnHandle_t h, const layer *L, int use_find, int half)
{
    cudnnDataType_t dt = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    size_t elem = half ? 2 : 4;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&xd));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&yd));
    CUDNN_CHECK(cudnnCreateFilterDescriptor(&wd));
    CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, dt, L->n, L->c, L->h, L->w));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(wd, dt, CUDNN_TENSOR_NCHW, L->k, L->c, L->r, L->r));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(cd, L->pad, L->pad, L->stride, L->stride, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(cd, half ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH));
    int n, c, hh, ww;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &hh, &ww));
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, dt, n, c, hh, ww));

    void *x, *w, *y, *ws = NULL;
    CUDA_CHECK(cudaMalloc(&x, (size_t)L->n * L->c * L->h * L->w * elem));
    CUDA_CHECK(cudaMalloc(&w, (size_t)L->k * L->c * L->r * L->r * elem));
    CUDA_CHECK(cudaMalloc(&y, (size_t)n * c * hh * ww * elem));
    CUDA_CHECK(cudaMemset(x, 0, (size_t)L->n * L->c * L->h * L->w * elem));
    CUDA_CHECK(cudaMemset(w, 0, (size_t)L->k * L->c * L->r * L->r * elem));

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    double t_choose = wall_ms();
    if (use_find)
        CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(h, xd, wd, cd, yd,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                         &returned, perf));
    else
        CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd,
                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                           &returned, perf));
    t_choose = wall_ms() - t_choose;
    int pick = 0;
    while (pick < returned && perf[pick].status != CUDNN_STATUS_SUCCESS)
        pick++;
    if (pick == returned) {
        fprintf(stderr, "no usable algorithm\n");
        exit(1);
    }
    cudnnConvolutionFwdAlgo_t algo = perf[pick].algo;
    size_t ws_bytes = 0;
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws_bytes));
    if (ws_bytes)
        CUDA_CHECK(cudaMalloc(&ws, ws_bytes));

    float alpha = 1.0f, beta = 0.0f;
    CUDNN_CHECK(cudnnConvolutionForward(h, &alpha, xd, x, wd, w, cd, algo, ws, ws_bytes, &beta, yd,
                                        y)); /* warm-up */
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = wall_ms();
    for (int i = 0; i < ITERATIONS; i++)
        CUDNN_CHECK(cudnnConvolutionForward(h, &alpha, xd, x, wd, w, cd, algo, ws, ws_bytes,
                                            &beta, yd, y));
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = (wall_ms() - t0) / ITERATIONS;
    printf("layer %dx%dx%dx%d k%d r%d s%d: %s chose algo %d (math %d) in %.2f ms; %.3f ms/conv\n",
           L->n, L->c, L->h, L->w, L->k, L->r, L->stride, use_find ? "Find" : "Get_v7",
           (int)algo, (int)perf[pick].mathType, t_choose, ms);

    cudaFree(ws);
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyConvolutionDescriptor(cd);
}

int main(int argc, char **argv)
{
    const char *mode = arg_or(argc, argv, 1, "get");
    int use_find = !strcmp(mode, "find");
    int half = has_flag(argc, argv, "half");
    if (!use_find && strcmp(mode, "get")) {
        fprintf(stderr, "usage: conv_legacy [get|find] [half]\n");
        return 2;
    }
    cudnnHandle_t h;
    CUDNN_CHECK(cudnnCreate(&h));
    printf("cuDNN %zu (built with %d), cudart %zu\n", cudnnGetVersion(), CUDNN_VERSION,
           cudnnGetCudartVersion());
    for (size_t i = 0; i < sizeof LAYERS / sizeof LAYERS[0]; i++)
        run_layer(h, &LAYERS[i], use_find, half);
    CUDNN_CHECK(cudnnDestroy(h));
    return 0;
}
