/* bench_wrap.c MODE N — N calls of one CUDA entry point on the fake runtime (tests/fakes), timed.
 * Run once plainly and once under LD_PRELOAD=libgputrace.so: the difference per call is what the
 * wrapper adds (run_wrap.sh does both, and the same with callgrind for instructions, counted only
 * inside the bench_loop_* functions, i.e. on the calling thread).
 * MODE: memcpy (cudaMemcpyAsync from pinned memory: the pinned-range lookup), launch
 * (cudaLaunchKernel), execute (cudnnBackendExecute of one plan, decoded at the first call). */
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun,
                            const char *device_name, int thread_limit, uint3 *tid, uint3 *bid,
                            dim3 *bdim, dim3 *gdim, int *wsize);

static void kernel_stub(void) {}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef cudnnBackendDescriptor_t bd;

static bd make_plan(void)
{
    bd op, g, eng, cfg, plan;
    int64_t idx = 38;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g);
    cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &op);
    cudnnBackendFinalize(g);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                             1, &g);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &idx);
    cudnnBackendFinalize(eng);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
    cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &eng);
    cudnnBackendFinalize(cfg);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    cudnnBackendFinalize(plan);
    return plan;
}

/* One function per measured loop, never inlined: callgrind counts only the calling thread inside
 * them (--toggle-collect=bench_loop_*), so the writer thread and the setup are left out. */
#define NOINLINE __attribute__((noinline, used))
static void *g_dev, *g_pinned, *g_args[1] = {&g_dev};
static cudnnHandle_t g_handle;
static bd g_plan, g_pack;

NOINLINE void bench_loop_memcpy(long n)
{
    for (long i = 0; i < n; i++)
        cudaMemcpyAsync(g_dev, g_pinned, 0, cudaMemcpyHostToDevice, 0);
}
NOINLINE void bench_loop_launch(long n)
{
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    for (long i = 0; i < n; i++)
        cudaLaunchKernel((const void *)kernel_stub, g, b, g_args, 0, 0);
}
NOINLINE void bench_loop_execute(long n)
{
    for (long i = 0; i < n; i++)
        cudnnBackendExecute(g_handle, g_plan, g_pack);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_wrap memcpy|launch|execute N\n");
        return 2;
    }
    long n = atol(argv[2]);
    const char *mode = argv[1];
    void (*loop)(long) = strcmp(mode, "memcpy") == 0    ? bench_loop_memcpy
                         : strcmp(mode, "launch") == 0  ? bench_loop_launch
                         : strcmp(mode, "execute") == 0 ? bench_loop_execute
                                                        : NULL;
    if (!loop)
        return 2;
    cudaMalloc(&g_dev, 4096);
    for (int i = 0; i < 8; i++) { /* a realistic pinned table: several ranges around ours */
        void *p;
        cudaMallocHost(&p, 4096);
    }
    cudaMallocHost(&g_pinned, 4096);
    for (int i = 0; i < 8; i++) {
        void *p;
        cudaMallocHost(&p, 4096);
    }
    void **fat = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(fat, (const char *)kernel_stub, (char *)"_Z4stubv", "_Z4stubv", -1, NULL,
                           NULL, NULL, NULL, NULL);
    cudnnCreate(&g_handle);
    g_plan = make_plan();
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &g_pack);
    loop(1); /* first calls (plan decode, name lookup, ring mapping) are not what is measured */
    /* Nor is the clock's calibration: the TSC clock reads CLOCK_REALTIME until the writer thread
     * has a first frequency estimate, and re-anchors at 2, 4, 8... ms before its steady period
     * (a real program spends longer than this initialising CUDA). */
    struct timespec settle = {0, 500000000};
    nanosleep(&settle, NULL);
    /* Wall time, and CPU time of this thread and of the process: on a shared machine a thread
     * that is descheduled still counts wall time, and the writer thread's work (the process
     * minus this thread) is not the application's. */
    double w0 = clock_s(CLOCK_MONOTONIC), t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    double p0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    loop(n);
    double w = clock_s(CLOCK_MONOTONIC) - w0, t = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    double p = clock_s(CLOCK_PROCESS_CPUTIME_ID) - p0;
    printf("%s %.1f ns/call wall, %.1f thread cpu, %.1f other threads cpu\n", mode,
           w * 1e9 / (double)n, t * 1e9 / (double)n, (p - t) * 1e9 / (double)n);
    return 0;
}
