/* ti_load_app — a program with many threads on the fake libcudart, for load_check (a trace recorded
 * on an oversubscribed machine keeps what an idle one keeps).
 *
 *   ti_load_app WAVES THREADS ITERATIONS
 *
 * WAVES times, THREADS threads start together (a barrier), each named "load-W-T", and each makes
 * ITERATIONS rounds of cudaMemcpyAsync (4 KB to the device), cudaLaunchKernel and cudaStreamQuery,
 * then ends; the next wave starts when the last one is joined, so threads come and go as a
 * DataLoader's do. Every call must succeed. Prints "calls N kernels N copies N threads N" (what a
 * whole trace holds: 3 API records a round, a GPU kernel and a GPU copy a round).
 *
 * The CUDA runtime is loaded as PyTorch loads it (dlopen RTLD_LOCAL, calls through dlsym), so that
 * CUPTI is started by whichever comes first, the writer's periodic check or the first threads'
 * first calls: on a busy machine the race that lost interpose_dlsym's kernels. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    cudaError_t (*malloc)(void **, size_t);
    cudaError_t (*free)(void *);
    cudaError_t (*memcpy_async)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t);
    cudaError_t (*launch)(const void *, dim3, dim3, void **, size_t, cudaStream_t);
    cudaError_t (*query)(cudaStream_t);
    cudaError_t (*sync)(void);
} cuda;

static int load_cuda(void)
{
    void *rt = dlopen("libcudart.so.13", RTLD_LOCAL | RTLD_NOW);
    if (!rt) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    *(void **)&cuda.malloc = dlsym(rt, "cudaMalloc");
    *(void **)&cuda.free = dlsym(rt, "cudaFree");
    *(void **)&cuda.memcpy_async = dlsym(rt, "cudaMemcpyAsync");
    *(void **)&cuda.launch = dlsym(rt, "cudaLaunchKernel");
    *(void **)&cuda.query = dlsym(rt, "cudaStreamQuery");
    *(void **)&cuda.sync = dlsym(rt, "cudaDeviceSynchronize");
    return cuda.malloc && cuda.free && cuda.memcpy_async && cuda.launch && cuda.query && cuda.sync
               ? 0
               : -1;
}

static long g_iterations;
static pthread_barrier_t g_start;
static _Atomic long g_failures;

static void kernel_stub(void) {}

typedef struct worker {
    pthread_t thread;
    char name[16];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    pthread_setname_np(pthread_self(), w->name);
    static char host[4096];
    void *dev = NULL;
    pthread_barrier_wait(&g_start);
    if (cuda.malloc(&dev, sizeof host) != cudaSuccess) {
        g_failures++;
        return NULL;
    }
    for (long i = 0; i < g_iterations; i++) {
        void *args[] = {&dev};
        g_failures += cuda.memcpy_async(dev, host, sizeof host, cudaMemcpyHostToDevice, 0) != 0;
        g_failures += cuda.launch((const void *)kernel_stub, (dim3){4, 1, 1}, (dim3){64, 1, 1},
                                  args, 0, 0) != 0;
        cudaError_t q = cuda.query(0); /* the fake's GPU may still be busy: not ready */
        g_failures += q != cudaSuccess && q != cudaErrorNotReady;
    }
    g_failures += cuda.free(dev) != cudaSuccess;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: ti_load_app WAVES THREADS ITERATIONS\n");
        return 2;
    }
    int waves = atoi(argv[1]), threads = atoi(argv[2]);
    g_iterations = atol(argv[3]);
    if (waves < 1 || threads < 1 || threads > 256 || g_iterations < 1 || load_cuda() < 0)
        return 2;
    worker *w = calloc((size_t)threads, sizeof *w);
    for (int wave = 0; wave < waves; wave++) {
        pthread_barrier_init(&g_start, NULL, (unsigned)threads);
        for (int t = 0; t < threads; t++) {
            snprintf(w[t].name, sizeof w[t].name, "load-%d-%d", wave % 100, t % 1000);
            if (pthread_create(&w[t].thread, NULL, work, &w[t])) {
                perror("pthread_create");
                return 2;
            }
        }
        for (int t = 0; t < threads; t++)
            pthread_join(w[t].thread, NULL);
        pthread_barrier_destroy(&g_start);
    }
    free(w);
    if (cuda.sync() != cudaSuccess || g_failures) {
        fprintf(stderr, "%ld calls failed\n", (long)g_failures);
        return 1;
    }
    long rounds = (long)waves * threads * g_iterations, n = (long)waves * threads;
    /* each thread: its rounds, plus its cudaMalloc and cudaFree; main: the final sync */
    printf("calls %ld kernels %ld copies %ld threads %ld\n", 3 * rounds + 2 * n + 1, rounds, rounds,
           n);
    return 0;
}
