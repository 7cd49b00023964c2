/* healthy.cu — what gputrace should find nothing to say about: pinned host buffers, async copies
 * on two streams overlapped with large kernels, buffers allocated once, one synchronization at the
 * end. The report for it must carry no advice. */
#include "sample_common.h"

#define STREAMS 2
#define CHUNKS 24
#define CHUNK_ELEMS (4u << 20) /* 16 MB of floats per chunk */

int main(void)
{
    cudaStream_t s[STREAMS];
    float *host[STREAMS], *dev_in[STREAMS], *dev_out[STREAMS];
    size_t bytes = CHUNK_ELEMS * sizeof(float);
    for (int i = 0; i < STREAMS; i++) {
        CUDA_CHECK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
        CUDA_CHECK(cudaMallocHost(&host[i], bytes));
        memset(host[i], 0, bytes);
        CUDA_CHECK(cudaMalloc(&dev_in[i], bytes));
        CUDA_CHECK(cudaMalloc(&dev_out[i], bytes));
        CUDA_CHECK(cudaMemsetAsync(dev_out[i], 0, bytes, s[i]));
    }
    double t0 = wall_ms();
    for (int c = 0; c < CHUNKS; c++) {
        int k = c % STREAMS;
        CUDA_CHECK(cudaMemcpyAsync(dev_in[k], host[k], bytes, cudaMemcpyHostToDevice, s[k]));
        launch_saxpy(dev_out[k], dev_in[k], CHUNK_ELEMS, 20000, s[k]); /* ~2.5 ms of compute */
        CUDA_CHECK(cudaMemcpyAsync(host[k], dev_out[k], bytes, cudaMemcpyDeviceToHost, s[k]));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = wall_ms() - t0;
    printf("%d chunks of %zu MB on %d streams: %.1f ms\n", CHUNKS, bytes >> 20, STREAMS, ms);
    for (int i = 0; i < STREAMS; i++) {
        CUDA_CHECK(cudaFreeHost(host[i]));
        CUDA_CHECK(cudaFree(dev_in[i]));
        CUDA_CHECK(cudaFree(dev_out[i]));
        CUDA_CHECK(cudaStreamDestroy(s[i]));
    }
    return 0;
}
