/* launch_bound.cu — the `launch-bound` pathology: a tiny batch makes every kernel a few
 * microseconds long, so the GPU waits on the CPU issuing launches (busy % low, thousands of short
 * kernels).
 *   launch_bound             8000 tiny kernels (batch of 256 elements)
 *   launch_bound --batched   the same work as 40 kernels over a 200x larger batch (the fix)
 */
#include "sample_common.h"

#define TOTAL_ELEMENTS (256u * 8000u)

int main(int argc, char **argv)
{
    int batched = has_flag(argc, argv, "--batched");
    size_t batch = batched ? 256u * 200u : 256u;
    int launches = (int)(TOTAL_ELEMENTS / batch);
    float *x, *y;
    CUDA_CHECK(cudaMalloc(&x, batch * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&y, batch * sizeof(float)));
    CUDA_CHECK(cudaMemset(x, 0, batch * sizeof(float)));
    CUDA_CHECK(cudaMemset(y, 0, batch * sizeof(float)));
    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = wall_ms();
    for (int i = 0; i < launches; i++)
        launch_saxpy(y, x, batch, 8, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = wall_ms() - t0;
    printf("%d launches of batch %zu: %.1f ms (%.2f us/launch)\n", launches, batch, ms,
           ms * 1e3 / launches);
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    return 0;
}
