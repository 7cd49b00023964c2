/* managed_gemv.cu — unified (managed) memory used from several host threads, with cuBLAS gemv
 * and kernels of the program's own (issue 30: unified memory made visible; kernels launched from
 * OpenMP threads and inside cuBLAS linked to their calls). After cuda-samples'
 * UnifiedMemoryStreams. managed_gemv [THREADS] [N] [ROUNDS] [--prefetch | --advise] default       4
 * 2048 30 Each of THREADS OpenMP threads owns a task: an N x N matrix and two vectors in
 * cudaMallocManaged memory, a stream and a cuBLAS handle. Each round (a step: the main thread's
 * clock, after the threads' barrier) every thread writes new data into its matrix and input vector
 * on the host (the pages come back to the CPU: CPU page faults), runs cublasSgemv and its own
 * kernel (scale_relu) on its stream (the pages migrate to the GPU on GPU page faults), waits for
 * its stream, and sums the result on the host (faults back).
 *   --prefetch  cudaMemPrefetchAsync of the task's memory to the GPU before the work, and of the
 *               result to the host before the sum: bulk migrations instead of faults;
 *   --advise    cudaMemAdvise: the matrix prefers the GPU and is accessed by the host (host
 *               writes go over the link, no migration), the result prefers the host.
 * What a correct diagnosis says: managed memory is a memory kind of its own; CPU and GPU page
 * faults and migrations (bytes each way) on the timeline; the plain variant's kernels stall on
 * GPU faults: advise prefetching (cudaMemPrefetchAsync) or explicit placement (cudaMemAdvise);
 * the gemv kernels lead to cublasSgemv calls, the scale_relu kernels to their launches, from
 * THREADS threads. Prints CORPUS name=managed_gemv ... mode=... concurrent_managed=... last. */
#include <omp.h>

#include "sample_cublas.h"

#define MAX_THREADS 64

enum placement { PLAIN, PREFETCH, ADVISE };

struct task {
    float *a, *x, *y; /* managed: n*n, n, n */
    int n;
    cudaStream_t stream;
    cublasHandle_t blas;
    double checksum;
};

__global__ void scale_relu(float *y, int n, float scale)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaxf(y[i] * scale, 0.0f);
}

static struct cudaMemLocation on_device(void)
{
    struct cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
    return loc;
}

static struct cudaMemLocation on_host(void)
{
    struct cudaMemLocation loc = {cudaMemLocationTypeHost, 0};
    return loc;
}

/* Advice is a hint: where the system refuses one, say so and run on without it. */
static void advise(const void *p, size_t bytes, enum cudaMemoryAdvise what,
                   struct cudaMemLocation loc)
{
    cudaError_t err = cudaMemAdvise(p, bytes, what, loc);
    if (err != cudaSuccess)
        fprintf(stderr, "cudaMemAdvise(%d) refused: %s (going on without it)\n", (int)what,
                cudaGetErrorString(err));
}

static void task_init(struct task *t, int n, enum placement mode)
{
    size_t nn = (size_t)n * n;
    t->n = n;
    t->checksum = 0.0;
    CUDA_CHECK(cudaMallocManaged(&t->a, nn * sizeof(float), cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocManaged(&t->x, (size_t)n * sizeof(float), cudaMemAttachGlobal));
    CUDA_CHECK(cudaMallocManaged(&t->y, (size_t)n * sizeof(float), cudaMemAttachGlobal));
    CUDA_CHECK(cudaStreamCreateWithFlags(&t->stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&t->blas));
    CUBLAS_CHECK(cublasSetStream(t->blas, t->stream));
    if (mode == ADVISE) {
        advise(t->a, nn * sizeof(float), cudaMemAdviseSetPreferredLocation, on_device());
        advise(t->a, nn * sizeof(float), cudaMemAdviseSetAccessedBy, on_host());
        advise(t->y, (size_t)n * sizeof(float), cudaMemAdviseSetPreferredLocation, on_host());
        advise(t->y, (size_t)n * sizeof(float), cudaMemAdviseSetAccessedBy, on_device());
    }
}

/* One round of a task, on the calling OpenMP thread. */
static void task_round(struct task *t, int round, enum placement mode)
{
    int n = t->n;
    size_t nn = (size_t)n * n;
    for (size_t i = 0; i < nn; i++) /* new data arrives on the host */
        t->a[i] = 1.0f / (float)(1 + (i + (size_t)round) % 17);
    for (int i = 0; i < n; i++)
        t->x[i] = 1.0f + (float)((i + round) % 5);
    if (mode == PREFETCH) {
        CUDA_CHECK(cudaMemPrefetchAsync(t->a, nn * sizeof(float), on_device(), 0, t->stream));
        CUDA_CHECK(
            cudaMemPrefetchAsync(t->x, (size_t)n * sizeof(float), on_device(), 0, t->stream));
        CUDA_CHECK(
            cudaMemPrefetchAsync(t->y, (size_t)n * sizeof(float), on_device(), 0, t->stream));
    }
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSgemv(t->blas, CUBLAS_OP_N, n, n, &one, t->a, n, t->x, 1, &zero, t->y, 1));
    scale_relu<<<(n + 255) / 256, 256, 0, t->stream>>>(t->y, n, 1.0f / (float)n);
    if (mode == PREFETCH)
        CUDA_CHECK(cudaMemPrefetchAsync(t->y, (size_t)n * sizeof(float), on_host(), 0, t->stream));
    CUDA_CHECK(cudaStreamSynchronize(t->stream));
    double sum = 0.0;
    for (int i = 0; i < n; i++) /* the result read on the host */
        sum += t->y[i];
    t->checksum += sum;
}

int main(int argc, char **argv)
{
    double start_ms = wall_ms();
    int threads = atoi(arg_or(argc, argv, 1, "4"));
    int n = atoi(arg_or(argc, argv, 2, "2048"));
    int rounds = atoi(arg_or(argc, argv, 3, "30"));
    enum placement mode = has_flag(argc, argv, "--prefetch") ? PREFETCH
                          : has_flag(argc, argv, "--advise") ? ADVISE
                                                             : PLAIN;
    if (threads < 1 || threads > MAX_THREADS || n < 1 || rounds < 2) {
        fprintf(stderr, "usage: %s [THREADS 1..%d] [N] [ROUNDS >= 2] [--prefetch | --advise]\n",
                argv[0], MAX_THREADS);
        return 2;
    }
    int concurrent = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, 0));
    static struct task tasks[MAX_THREADS];
    for (int t = 0; t < threads; t++)
        task_init(&tasks[t], n, mode);
    CUDA_CHECK(cudaDeviceSynchronize());

    struct step_clock clock;
    step_clock_init(&clock, rounds, start_ms);
    for (int r = 0; r < rounds; r++) {
#pragma omp parallel for num_threads(threads) schedule(static, 1)
        for (int t = 0; t < threads; t++)
            task_round(&tasks[t], r, mode);
        step_clock_tick(&clock); /* every thread's round is done */
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    double end_ms = wall_ms();
    double checksum = 0.0;
    for (int t = 0; t < threads; t++)
        checksum += tasks[t].checksum;
    static const char *const names[] = {"plain", "prefetch", "advise"};
    char extra[240];
    snprintf(extra, sizeof extra,
             " mode=%s threads=%d n=%d managed_mb_per_round=%.1f concurrent_managed=%d check=%.6g",
             names[mode], threads, n, threads * ((double)n * n + 2.0 * n) * 4 / (1 << 20),
             concurrent, checksum);
    step_clock_report(&clock, "managed_gemv", 2, end_ms, "step", extra);
    for (int t = 0; t < threads; t++) {
        CUBLAS_CHECK(cublasDestroy(tasks[t].blas));
        CUDA_CHECK(cudaStreamDestroy(tasks[t].stream));
        CUDA_CHECK(cudaFree(tasks[t].a));
        CUDA_CHECK(cudaFree(tasks[t].x));
        CUDA_CHECK(cudaFree(tasks[t].y));
    }
    return 0;
}
