/* multistream_copies.cu — a copy pipeline over several streams that keeps the GPU busy while the
 * host waits, and the same program draining the GPU at every wait (issue 29: a sync that leaves
 * the GPU busy saves nothing; one that drains it costs the host work that follows).
 *   multistream_copies [STREAMS] [MB] [HOST_MS] [ITERS] [ROUNDS] [--drain]
 *   default             4         16   0.3       1000    4000
 * Iteration i uses stream s = i % STREAMS, with its own pinned host buffers and device buffers of
 * MB megabytes: it waits for that stream's previous round (cudaEventSynchronize), spends HOST_MS of
 * CPU on the output that round returned (a checksum, as cuda-samples' simpleMultiCopy checks its
 * results), then queues a host-to-device copy, a kernel of ROUNDS dependent FMAs per element, a
 * device-to-host copy and the event. With STREAMS >= 2 the other streams' copies and kernels run
 * during the wait and the host work: the GPU stays busy (the kernels about back to back).
 * --drain waits for the whole device instead (cudaDeviceSynchronize): the GPU idles during the
 * host work of every iteration.
 * What a correct diagnosis says: steps are the iterations; pipelined, the syncs are waits on a
 * GPU that stays busy: no sync-stall saving (or one that says it saves nothing); --drain: a sync
 * stall worth about HOST_MS per iteration, with the remedy (wait on the stream's event, keep
 * other streams queued). Prints CORPUS name=multistream_copies ... kernel_ms=... copy_ms=... */
#include "sample_common.h"

#define MAX_STREAMS 16

__global__ void process_rounds(float *out, const float *in, size_t n, int rounds)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = in[i];
    for (int r = 0; r < rounds; r++)
        v = v * 0.9999f + 0.0001f;
    out[i] = v;
}

struct lane {
    cudaStream_t stream;
    cudaEvent_t done;
    float *host_in, *host_out, *dev_in, *dev_out;
};

static void lane_init(struct lane *l, size_t n)
{
    CUDA_CHECK(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&l->done, cudaEventDisableTiming));
    CUDA_CHECK(cudaMallocHost(&l->host_in, n * sizeof(float)));
    CUDA_CHECK(cudaMallocHost(&l->host_out, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&l->dev_in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&l->dev_out, n * sizeof(float)));
    for (size_t i = 0; i < n; i++)
        l->host_in[i] = (float)(i % 1000) * 1e-3f;
    memset(l->host_out, 0, n * sizeof(float));
}

static void lane_queue(struct lane *l, size_t n, int rounds)
{
    unsigned blocks = (unsigned)((n + 255) / 256);
    CUDA_CHECK(cudaMemcpyAsync(l->dev_in, l->host_in, n * sizeof(float), cudaMemcpyHostToDevice,
                               l->stream));
    process_rounds<<<blocks, 256, 0, l->stream>>>(l->dev_out, l->dev_in, n, rounds);
    CUDA_CHECK(cudaMemcpyAsync(l->host_out, l->dev_out, n * sizeof(float), cudaMemcpyDeviceToHost,
                               l->stream));
    CUDA_CHECK(cudaEventRecord(l->done, l->stream));
}

/* The host's work on a returned output: sum it until host_ms have passed. */
static double checksum_for(const float *out, size_t n, double host_ms)
{
    double end = wall_ms() + host_ms, sum = 0.0;
    size_t i = 0;
    do {
        for (int k = 0; k < 4096; k++, i = (i + 1) % n)
            sum += out[i];
    } while (wall_ms() < end);
    return sum;
}

/* GPU time (ms) of one kernel and of one host-to-device copy of the lane's buffers, measured
 * once before the loop: the program's own figures for how busy the pipeline keeps the GPU. */
static void measure_once(struct lane *l, size_t n, int rounds, float *kernel_ms, float *copy_ms)
{
    cudaEvent_t a, b, c;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventCreate(&c));
    CUDA_CHECK(cudaEventRecord(a, l->stream));
    CUDA_CHECK(cudaMemcpyAsync(l->dev_in, l->host_in, n * sizeof(float), cudaMemcpyHostToDevice,
                               l->stream));
    CUDA_CHECK(cudaEventRecord(b, l->stream));
    process_rounds<<<(unsigned)((n + 255) / 256), 256, 0, l->stream>>>(l->dev_out, l->dev_in, n,
                                                                       rounds);
    CUDA_CHECK(cudaEventRecord(c, l->stream));
    CUDA_CHECK(cudaEventSynchronize(c));
    CUDA_CHECK(cudaEventElapsedTime(copy_ms, a, b));
    CUDA_CHECK(cudaEventElapsedTime(kernel_ms, b, c));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    CUDA_CHECK(cudaEventDestroy(c));
}

int main(int argc, char **argv)
{
    double start_ms = wall_ms();
    int streams = atoi(arg_or(argc, argv, 1, "4"));
    size_t mb = (size_t)atoi(arg_or(argc, argv, 2, "16"));
    double host_ms = atof(arg_or(argc, argv, 3, "0.3"));
    int iters = atoi(arg_or(argc, argv, 4, "1000"));
    int rounds = atoi(arg_or(argc, argv, 5, "4000"));
    int drain = has_flag(argc, argv, "--drain");
    if (streams < 1 || streams > MAX_STREAMS || mb < 1 || host_ms < 0 || iters < 2 || rounds < 1) {
        fprintf(stderr, "usage: %s [STREAMS 1..%d] [MB] [HOST_MS] [ITERS] [ROUNDS] [--drain]\n",
                argv[0], MAX_STREAMS);
        return 2;
    }
    size_t n = mb * (1u << 20) / sizeof(float);
    struct lane lanes[MAX_STREAMS];
    for (int s = 0; s < streams; s++)
        lane_init(&lanes[s], n);
    float kernel_ms = 0, copy_ms = 0;
    measure_once(&lanes[0], n, rounds, &kernel_ms, &copy_ms);

    int warmup = iters / 50 > 2 ? iters / 50 : 2;
    struct step_clock clock;
    step_clock_init(&clock, iters, start_ms);
    double checksum = 0.0;
    for (int i = 0; i < iters; i++) {
        struct lane *l = &lanes[i % streams];
        if (drain)
            CUDA_CHECK(cudaDeviceSynchronize()); /* the whole device drains */
        else
            CUDA_CHECK(cudaEventSynchronize(l->done)); /* this stream's previous round only */
        checksum += checksum_for(l->host_out, n, host_ms);
        lane_queue(l, n, rounds);
        step_clock_tick(&clock);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    double end_ms = wall_ms();
    char extra[240];
    snprintf(extra, sizeof extra,
             " streams=%d mb=%zu host_ms=%.2f drain=%d kernel_ms=%.3f copy_ms=%.3f check=%.6g",
             streams, mb, host_ms, drain, kernel_ms, copy_ms, checksum);
    step_clock_report(&clock, "multistream_copies", warmup, end_ms, "step", extra);
    for (int s = 0; s < streams; s++) {
        CUDA_CHECK(cudaFreeHost(lanes[s].host_in));
        CUDA_CHECK(cudaFreeHost(lanes[s].host_out));
        CUDA_CHECK(cudaFree(lanes[s].dev_in));
        CUDA_CHECK(cudaFree(lanes[s].dev_out));
        CUDA_CHECK(cudaStreamDestroy(lanes[s].stream));
        CUDA_CHECK(cudaEventDestroy(lanes[s].done));
    }
    return 0;
}
