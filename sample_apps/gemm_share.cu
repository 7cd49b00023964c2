/* gemm_share.cu — an fp32 cuBLAS GEMM that is a small or a large share of each step (issue 29:
 * advice to use tensor cores or a lower precision is worth the GEMM's share of the step: ~0% when
 * the GEMM is small, most of the step when it dominates; never advised when already in effect).
 *   gemm_share [GEMM_N] [ROUNDS] [STEPS] [--tf32]
 *   default     256      200      300
 * Each step: one cublasSgemm of GEMM_N^3 (fp32; CUBLAS_DEFAULT_MATH: no tensor cores), then 8
 * launches of saxpy_rounds over 16M floats with ROUNDS rounds each (fp32 element-wise work that
 * no GEMM setting changes), then cudaDeviceSynchronize (the step's end). CUDA events around the
 * GEMM and the element-wise kernels give the program's own GPU times. --tf32 sets
 * cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH): the GEMM runs on tensor cores (TF32).
 *   gemm_share 256 200 300           the GEMM ~1% of the step: AMP/TF32 advice worth ~0%, minor
 *   gemm_share 4096 20 200           the GEMM most of the step: worth advising, in cuBLAS terms
 *                                    (cublasSetMathMode TF32, or cublasGemmEx with 16-bit types)
 *   gemm_share 4096 20 200 --tf32    TF32 already on: not advised again
 * Prints CORPUS name=gemm_share ... gemm_ms=... other_ms=... gemm_share=... last. */
#include "sample_cublas.h"

#define OTHER_ELEMENTS (16u << 20)
#define OTHER_LAUNCHES 8

static float *device_filled(size_t n, float value)
{
    float *d, *h = (float *)malloc(n * sizeof(float));
    if (!h) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        h[i] = value * (float)(1 + i % 7);
    CUDA_CHECK(cudaMalloc(&d, n * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice));
    free(h);
    return d;
}

int main(int argc, char **argv)
{
    double start_ms = wall_ms();
    int n = atoi(arg_or(argc, argv, 1, "256"));
    int rounds = atoi(arg_or(argc, argv, 2, "200"));
    int steps = atoi(arg_or(argc, argv, 3, "300"));
    int tf32 = has_flag(argc, argv, "--tf32");
    if (n < 1 || rounds < 0 || steps < 2) {
        fprintf(stderr, "usage: %s [GEMM_N] [ROUNDS] [STEPS >= 2] [--tf32]\n", argv[0]);
        return 2;
    }
    size_t nn = (size_t)n * n;
    float *a = device_filled(nn, 1e-3f), *b = device_filled(nn, 2e-3f), *c = device_filled(nn, 0);
    float *x = device_filled(OTHER_ELEMENTS, 1e-2f), *y = device_filled(OTHER_ELEMENTS, 0);
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    if (tf32)
        CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH));
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)steps * 3, sizeof(cudaEvent_t));
    if (!ev) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int i = 0; i < steps * 3; i++)
        CUDA_CHECK(cudaEventCreate(&ev[i]));
    CUDA_CHECK(cudaDeviceSynchronize());

    const float alpha = 1.0f, beta = 0.0f;
    struct step_clock clock;
    step_clock_init(&clock, steps, start_ms);
    for (int s = 0; s < steps; s++) {
        CUDA_CHECK(cudaEventRecord(ev[3 * s], 0));
        CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n,
                                 &beta, c, n));
        CUDA_CHECK(cudaEventRecord(ev[3 * s + 1], 0));
        for (int k = 0; k < OTHER_LAUNCHES; k++)
            launch_saxpy(y, x, OTHER_ELEMENTS, rounds, 0);
        CUDA_CHECK(cudaEventRecord(ev[3 * s + 2], 0));
        CUDA_CHECK(cudaDeviceSynchronize()); /* the step's end */
        step_clock_tick(&clock);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    double end_ms = wall_ms();
    int warmup = steps / 20 > 2 ? steps / 20 : 2;
    double *gemm = (double *)calloc((size_t)steps, sizeof(double));
    double *other = (double *)calloc((size_t)steps, sizeof(double));
    if (!gemm || !other) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (int s = 0; s < steps; s++) {
        float g = 0, o = 0;
        CUDA_CHECK(cudaEventElapsedTime(&g, ev[3 * s], ev[3 * s + 1]));
        CUDA_CHECK(cudaEventElapsedTime(&o, ev[3 * s + 1], ev[3 * s + 2]));
        gemm[s] = g;
        other[s] = o;
    }
    double gemm_ms = median_of(gemm + warmup, steps - warmup);
    double other_ms = median_of(other + warmup, steps - warmup);
    double step_ms = median_of(clock.dur_ms + warmup, steps - warmup);
    char extra[240];
    snprintf(extra, sizeof extra,
             " gemm_n=%d rounds=%d tf32=%d gemm_ms=%.4f other_ms=%.4f gemm_share=%.4f "
             "gflops=%.1f",
             n, rounds, tf32, gemm_ms, other_ms, step_ms > 0 ? gemm_ms / step_ms : 0.0,
             gemm_ms > 0 ? 2.0 * n * nn / gemm_ms / 1e6 : 0.0);
    step_clock_report(&clock, "gemm_share", warmup, end_ms, "step", extra);
    CUBLAS_CHECK(cublasDestroy(handle));
    return 0;
}
