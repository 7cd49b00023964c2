/* pageable_copies.cu — the `pinned-memory` pathology: a training loop that copies each batch
 * from pageable (malloc'd) host memory, so every copy is staged by the driver and blocks the CPU.
 * A second phase repeats the loop from pinned memory with cudaMemcpyAsync, so the same trace holds
 * the pinned bandwidth to compare with (the advice quotes both).
 *   pageable_copies            pageable phase, then pinned phase
 *   pageable_copies --pinned   pinned phase only (the fix: the advice disappears)
 */
#include "sample_common.h"

#define BATCH_BYTES (32u << 20) /* 32 MB per batch */
#define ITERATIONS 20

static double copy_loop(float *host, float *dev_in, float *dev_out, int pinned, cudaStream_t s)
{
    size_t n = BATCH_BYTES / sizeof(float);
    double t0 = wall_ms();
    for (int i = 0; i < ITERATIONS; i++) {
        if (pinned) {
            CUDA_CHECK(cudaMemcpyAsync(dev_in, host, BATCH_BYTES, cudaMemcpyHostToDevice, s));
            launch_saxpy(dev_out, dev_in, n, 4, s);
            CUDA_CHECK(cudaMemcpyAsync(host, dev_out, BATCH_BYTES, cudaMemcpyDeviceToHost, s));
        } else {
            CUDA_CHECK(cudaMemcpy(dev_in, host, BATCH_BYTES, cudaMemcpyHostToDevice));
            launch_saxpy(dev_out, dev_in, n, 4, s);
            CUDA_CHECK(cudaMemcpy(host, dev_out, BATCH_BYTES, cudaMemcpyDeviceToHost));
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(s));
    double ms = wall_ms() - t0;
    printf("%-8s copies: %d x 2 x %u MB in %.1f ms (%.1f GB/s)\n", pinned ? "pinned" : "pageable",
           ITERATIONS, BATCH_BYTES >> 20, ms, 2.0 * ITERATIONS * BATCH_BYTES / ms / 1e6);
    return ms;
}

int main(int argc, char **argv)
{
    int pinned_only = has_flag(argc, argv, "--pinned");
    float *dev_in, *dev_out;
    cudaStream_t s;
    CUDA_CHECK(cudaMalloc(&dev_in, BATCH_BYTES));
    CUDA_CHECK(cudaMalloc(&dev_out, BATCH_BYTES));
    CUDA_CHECK(cudaStreamCreate(&s));
    if (!pinned_only) {
        float *pageable = (float *)malloc(BATCH_BYTES);
        memset(pageable, 0, BATCH_BYTES);
        copy_loop(pageable, dev_in, dev_out, 0, s);
        free(pageable);
    }
    float *pinned;
    CUDA_CHECK(cudaMallocHost(&pinned, BATCH_BYTES));
    memset(pinned, 0, BATCH_BYTES);
    copy_loop(pinned, dev_in, dev_out, 1, s);
    CUDA_CHECK(cudaFreeHost(pinned));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(dev_in));
    CUDA_CHECK(cudaFree(dev_out));
    return 0;
}
