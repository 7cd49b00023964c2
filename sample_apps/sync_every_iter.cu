/* sync_every_iter.cu — the `sync-stall` pathology: each iteration launches its work and then
 * waits for the GPU (cudaDeviceSynchronize, cudaStreamSynchronize, or a 4-byte device-to-host copy
 * of a scalar, which is what loss.item() does), so the CPU cannot queue the next step while the GPU
 * runs this one.
 *   sync_every_iter [device|stream|item]   the kind of wait every iteration (default: device)
 *   sync_every_iter --no-sync              one wait at the end (the fix)
 */
#include "sample_common.h"

#define ITERATIONS 200
#define N (4u << 20)

int main(int argc, char **argv)
{
    const char *mode = arg_or(argc, argv, 1, "device");
    int no_sync = has_flag(argc, argv, "--no-sync");
    float *x, *y, *loss_host;
    cudaStream_t s;
    CUDA_CHECK(cudaMalloc(&x, N * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&y, N * sizeof(float)));
    CUDA_CHECK(cudaMemset(x, 0, N * sizeof(float)));
    CUDA_CHECK(cudaMemset(y, 0, N * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(&loss_host, sizeof(float)));
    CUDA_CHECK(cudaStreamCreate(&s));

    double t0 = wall_ms();
    for (int i = 0; i < ITERATIONS; i++) {
        for (int k = 0; k < 4; k++) /* a "step": a few kernels of ~0.1 ms */
            launch_saxpy(y, x, N, 64, s);
        if (no_sync)
            continue;
        if (!strcmp(mode, "stream"))
            CUDA_CHECK(cudaStreamSynchronize(s));
        else if (!strcmp(mode, "item"))
            CUDA_CHECK(cudaMemcpy(loss_host, y, sizeof(float), cudaMemcpyDeviceToHost));
        else
            CUDA_CHECK(cudaDeviceSynchronize());
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    double ms = wall_ms() - t0;
    printf("%d iterations, wait=%s: %.1f ms (%.3f ms/iteration)\n", ITERATIONS,
           no_sync ? "once at end" : mode, ms, ms / ITERATIONS);
    CUDA_CHECK(cudaFreeHost(loss_host));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
