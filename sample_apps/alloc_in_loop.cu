/* alloc_in_loop.cu — the `alloc-in-loop` pathology: device buffers allocated and freed every
 * iteration (cudaFree synchronizes the device and cudaMalloc is a driver round trip).
 *   alloc_in_loop           cudaMalloc/cudaFree every iteration
 *   alloc_in_loop --reuse   allocate once, reuse (the fix)
 */
#include "sample_common.h"

#define ITERATIONS 200
#define N (2u << 20)

int main(int argc, char **argv)
{
    int reuse = has_flag(argc, argv, "--reuse");
    float *x = NULL, *y = NULL;
    if (reuse) {
        CUDA_CHECK(cudaMalloc(&x, N * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&y, N * sizeof(float)));
    }
    double t0 = wall_ms();
    for (int i = 0; i < ITERATIONS; i++) {
        if (!reuse) {
            CUDA_CHECK(cudaMalloc(&x, N * sizeof(float)));
            CUDA_CHECK(cudaMalloc(&y, N * sizeof(float)));
        }
        CUDA_CHECK(cudaMemsetAsync(x, 0, N * sizeof(float), 0));
        launch_saxpy(y, x, N, 8, 0);
        if (!reuse) {
            CUDA_CHECK(cudaFree(x));
            CUDA_CHECK(cudaFree(y));
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = wall_ms() - t0;
    printf("%d iterations, %s: %.1f ms\n", ITERATIONS, reuse ? "buffers reused" : "malloc/free each",
           ms);
    if (reuse) {
        CUDA_CHECK(cudaFree(x));
        CUDA_CHECK(cudaFree(y));
    }
    return 0;
}
