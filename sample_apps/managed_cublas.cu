/* managed_cublas.cu — unified memory in the style of the CUDA samples (issue 30): managed buffers
 * (cudaMallocManaged) that several OpenMP threads each use on a stream of their own, with cuBLAS
 * (cublasSgemv) and a kernel of the program's own, the CPU reading the result between rounds.
 *
 * Pathology: nothing is prefetched. Each thread's buffers start on the host (the CPU initializes
 * them), so its first kernel faults them over; every round the CPU reads y, which pulls y's pages
 * back, and the next round's kernels fault them over again: GPU page faults and on-demand
 * migrations both ways, kernels stalled meanwhile. Built with nvcc's default static cudart, no
 * wrapper sees its runtime calls (only its cuBLAS calls): its own kernels lead to a call only
 * through CUPTI's callbacks.
 *
 * Fix (--prefetch): A and x are prefetched to the GPU once, y to the GPU before each round and
 * back to the CPU before the CPU reads it (cudaMemPrefetchAsync on the thread's stream), and A is
 * advised to prefer the GPU: the same bytes move, asked for, and no kernel faults.
 *
 *   managed_cublas [--prefetch] [--threads T] [--n N] [--rounds R]
 * Prints its own timing last: SAMPLE name=managed_cublas[_prefetch] rounds= ms_per_round=. */
#include <cublas_v2.h>
#include <omp.h>

#include "sample_common.h"

#define CUBLAS_CHECK(call)                                                                         \
    do {                                                                                           \
        cublasStatus_t st_ = (call);                                                               \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                        \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, (int)st_);        \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* y = relu(y) + bias: the program's own kernel between the cuBLAS calls */
__global__ void bias_relu(float *y, float bias, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaxf(y[i], 0.0f) + bias;
}

/* Move [p, p + bytes) to the GPU (device >= 0) or the CPU (device < 0), on stream s: CUDA 13
 * takes a location and flags, CUDA 12 a device ordinal (cudaCpuDeviceId for the CPU). */
static void prefetch(const void *p, size_t bytes, int device, cudaStream_t s)
{
#if CUDART_VERSION >= 13000
    cudaMemLocation loc = {};
    loc.type = device >= 0 ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = device >= 0 ? device : 0;
    CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, s));
#else
    CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, device >= 0 ? device : cudaCpuDeviceId, s));
#endif
}

static void advise_gpu(const void *p, size_t bytes, int device)
{
#if CUDART_VERSION >= 13000
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = device;
    CUDA_CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, loc));
#else
    CUDA_CHECK(cudaMemAdvise(p, bytes, cudaMemAdviseSetPreferredLocation, device));
#endif
}

/* One thread's work: y = A x, then y = relu(y) + bias, R times, reading y[0] on the CPU after each
 * round (the managed buffers are this thread's own). Returns the checksum of what it read. */
static double worker(int n, int rounds, int use_prefetch, int device)
{
    float *A = NULL, *x = NULL, *y = NULL;
    size_t nn = (size_t)n * n;
    CUDA_CHECK(cudaMallocManaged(&A, nn * sizeof *A));
    CUDA_CHECK(cudaMallocManaged(&x, n * sizeof *x));
    CUDA_CHECK(cudaMallocManaged(&y, n * sizeof *y));
    for (size_t i = 0; i < nn; i++) /* first touch on the CPU: the pages start on the host */
        A[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < n; i++)
        x[i] = 1.0f / (float)(1 + i % 5), y[i] = 0.0f;
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    CUBLAS_CHECK(cublasSetStream(h, s));
    if (use_prefetch) {
        advise_gpu(A, nn * sizeof *A, device);
        prefetch(A, nn * sizeof *A, device, s);
        prefetch(x, n * sizeof *x, device, s);
    }
    const float one = 1.0f, zero = 0.0f;
    double sum = 0;
    for (int r = 0; r < rounds; r++) {
        if (use_prefetch)
            prefetch(y, n * sizeof *y, device, s);
        CUBLAS_CHECK(cublasSgemv(h, CUBLAS_OP_N, n, n, &one, A, n, x, 1, &zero, y, 1));
        bias_relu<<<(n + 255) / 256, 256, 0, s>>>(y, 0.01f * (float)r, n);
        CUDA_CHECK(cudaGetLastError());
        if (use_prefetch)
            prefetch(y, n * sizeof *y, -1, s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        sum += y[0] + y[n - 1]; /* the CPU reads the result: y's pages come back */
    }
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(y));
    return sum;
}

int main(int argc, char **argv)
{
    int use_prefetch = 0, threads = 4, n = 4096, rounds = 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--prefetch"))
            use_prefetch = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--prefetch] [--threads T] [--n N] [--rounds R]\n",
                    argv[0]);
            return 2;
        }
    }
    int device = 0;
    CUDA_CHECK(cudaSetDevice(device));
    CUDA_CHECK(cudaFree(0)); /* the context, before the timed part */
    double t0 = wall_ms(), total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        CUDA_CHECK(cudaSetDevice(device));
        total += worker(n, rounds, use_prefetch, device);
    }
    double ms = wall_ms() - t0;
    printf("checksum %.3f\n", total);
    printf("SAMPLE name=managed_cublas%s threads=%d n=%d rounds=%d ms=%.1f ms_per_round=%.3f\n",
           use_prefetch ? "_prefetch" : "", threads, n, rounds, ms, ms / rounds);
    return 0;
}
