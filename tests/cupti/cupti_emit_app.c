/* cupti_emit_app — drives the fake GPU directly through fake_gpu_emit, the way cuDNN, cuBLAS or a
 * statically linked cudart reach the GPU without any cuda* call a wrapper could see. Every op is
 * known here, so the tests can check each decoded field. Exits with status 3 to prove gputrace
 * passes the exit status through.
 *   decode      3 kernels, 2 copies, 1 set, 2 syncs, 2 runtime API ops, then exit at once
 *   many N      N kernels as fast as possible (buffer cap test)
 *   static api|kernels  a kernel and a runtime API op every 5 ms, at least 100 of each, until
 *               the trace shows CUPTI's API records (api) or 100 kernels (kernels), then 20 more
 *   launches MS a static runtime's cudaLaunchKernel every 5 ms for MS milliseconds: the launch's
 *               API op (with the kernel's name and configuration) and its kernel share a
 *               correlation id, as CUPTI sees a launch no wrapper could; then a managed
 *               allocation the same way (the driver's cuMemAllocManaged)
 *   allocs N [late]  N rounds of a static runtime's cudaMalloc (1 MiB, 300 us), a
 *               cudaMemsetAsync of it, a launch, a cudaFree (300 us) and 2 ms of host work:
 *               the calls as CUPTI's runtime callbacks see them, with their parameters, as in
 *               a program that allocates every step; late: until the trace shows launches
 *               recorded from the callbacks (the static runtime found at a flush), then N
 *               rounds more
 *   fork        a kernel, then a child that emits, waits and exits normally; the parent waits
 *   jit         a primary context retained, a module loaded (3 ms), a kernel: the driver calls
 *               CUPTI's callbacks see and gputrace records as JIT calls (issue 21 item 1) */
#include <cuda.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_cuda_runtime_api_meta.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"
#include "gtrace_format.h"
#include "own_trace.h"

static uint32_t next_corr = 1000;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static fake_gpu_op op_new(int kind, uint64_t dur_ns)
{
    fake_gpu_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.start_ns = now_ns();
    op.end_ns = op.start_ns + dur_ns;
    op.correlation_id = next_corr++;
    op.stream = 7;
    return op;
}

static void kernel(const char *name)
{
    fake_gpu_op op = op_new(FAKE_OP_KERNEL, 5000);
    op.name = name;
    op.grid[0] = 2, op.grid[1] = 3, op.grid[2] = 4;
    op.block[0] = 32, op.block[1] = 1, op.block[2] = 1;
    fake_gpu_emit(&op);
}

static void api(uint32_t cbid)
{
    fake_gpu_op op = op_new(FAKE_OP_API, 1000);
    op.name = "cudaLaunchKernel";
    op.cbid = cbid;
    fake_gpu_emit(&op);
}

/* The call of a static runtime that put `work` on the GPU, as CUPTI's runtime callbacks see it
 * after the work (its correlation id shared): a launch carries the kernel's name (symbol), other
 * calls their parameters. */
static void static_call_after(const fake_gpu_op *work, const char *name, uint32_t cbid,
                              const char *symbol, const void *params)
{
    fake_gpu_op a = *work;
    a.kind = FAKE_OP_API;
    a.start_ns = now_ns();
    a.end_ns = a.start_ns + 1000;
    a.name = name;
    a.symbol = symbol;
    a.cbid = cbid;
    a.params = params;
    fake_gpu_emit(&a);
}

static void static_launch(const char *name)
{
    fake_gpu_op k = op_new(FAKE_OP_KERNEL, 5000);
    k.name = name;
    k.grid[0] = 16, k.grid[1] = 1, k.grid[2] = 1;
    k.block[0] = 256, k.block[1] = 1, k.block[2] = 1;
    fake_gpu_emit(&k);
    static_call_after(&k, "cudaLaunchKernel", CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, name,
                      NULL);
}

/* A static runtime's cudaMallocManaged: what CUPTI's driver callback sees of it. */
static void static_managed_alloc(size_t n)
{
    static char memory[1 << 16];
    CUdeviceptr ptr = (CUdeviceptr)(uintptr_t)memory;
    struct {
        CUdeviceptr *dptr;
        size_t bytesize;
        unsigned int flags;
    } params = {&ptr, n, 1};
    fake_gpu_op op = op_new(FAKE_OP_DRIVER_CALL, 0);
    op.name = "cuMemAllocManaged";
    op.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged;
    op.params = &params;
    fake_gpu_emit(&op);
}

/* A static runtime's cudaMalloc and cudaFree: what CUPTI's runtime callbacks see of them. */
static void *static_malloc(size_t n)
{
    static char memory[1 << 16];
    void *ptr = memory;
    cudaMalloc_v3020_params params = {&ptr, n};
    fake_gpu_op op = op_new(FAKE_OP_API, 300000);
    op.name = "cudaMalloc";
    op.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020;
    op.params = &params;
    fake_gpu_emit(&op);
    return ptr;
}

/* A static runtime's cudaMemsetAsync: its GPU memset, then the call CUPTI's runtime callbacks see
 * with its parameters, sharing the memset's correlation id. */
static void static_memset_async(void *ptr, size_t n)
{
    fake_gpu_op set = op_new(FAKE_OP_MEMSET, 2000);
    set.bytes = n, set.is_async = 1;
    fake_gpu_emit(&set);
    cudaMemsetAsync_v3020_params params = {ptr, 0, n, (cudaStream_t)(uintptr_t)7};
    static_call_after(&set, "cudaMemsetAsync", CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, NULL,
                      &params);
}

static void static_free(void *ptr)
{
    cudaFree_v3020_params params = {ptr};
    fake_gpu_op op = op_new(FAKE_OP_API, 300000);
    op.name = "cudaFree";
    op.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020;
    op.params = &params;
    fake_gpu_emit(&op);
}

static void decode(void)
{
    kernel("_Z7kernelAv");
    kernel("_Z7kernelBv");
    kernel("_Z7kernelAv");
    fake_gpu_op op = op_new(FAKE_OP_MEMCPY, 2000);
    op.bytes = 4096, op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    op.src_kind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
    op.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    fake_gpu_emit(&op);
    op = op_new(FAKE_OP_MEMCPY, 2000);
    op.bytes = 8192, op.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, op.is_async = 1;
    op.src_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
    op.dst_kind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    fake_gpu_emit(&op);
    op = op_new(FAKE_OP_MEMSET, 1000);
    op.bytes = 256, op.is_async = 1;
    fake_gpu_emit(&op);
    op = op_new(FAKE_OP_SYNC, 3000);
    op.sync_type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    fake_gpu_emit(&op);
    op = op_new(FAKE_OP_SYNC, 3000);
    op.sync_type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    fake_gpu_emit(&op);
    api(211);
    api(131);
}

static void driver_call(uint32_t cbid, const char *name, uint64_t dur_ns)
{
    fake_gpu_op op = op_new(FAKE_OP_DRIVER_CALL, dur_ns);
    op.name = name;
    op.cbid = cbid;
    fake_gpu_emit(&op);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "decode";
    if (strcmp(mode, "decode") == 0) {
        decode();
    } else if (strcmp(mode, "jit") == 0) {
        driver_call(CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain",
                    100000);
        driver_call(CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData, "cuModuleLoadData", 3000000);
        kernel("_Z6jittedv");
    } else if (strcmp(mode, "many") == 0) {
        long n = argc > 2 ? atol(argv[2]) : 1000;
        for (long i = 0; i < n; i++)
            kernel("_Z4manyv");
    } else if (strcmp(mode, "static") == 0) {
        /* Until the trace shows what the writer's periodic flush did (CUPTI's runtime API records
         * switched on; or, for "kernels", 100 kernels converted, after which a switch would have
         * come), then 20 rounds more: how late a busy machine runs the writer changes nothing. */
        bool until_api = argc > 2 && !strcmp(argv[2], "api");
        uint16_t kind = until_api ? GT_REC_GPU_API : GT_REC_GPU_KERNEL;
        int want = until_api ? 1 : 100, after = 20;
        for (int i = 0; after > 0; i++) {
            kernel("_Z6staticv");
            api(211);
            sleep_ms(5);
            if (after < 20 || (i >= 100 && i % 10 == 0 && own_trace_count(kind, NULL) >= want))
                after--;
            if (i > 12000) { /* a minute at least: a ceiling, not an expected time */
                printf("the trace never showed the switch\n");
                return 4;
            }
        }
    } else if (strcmp(mode, "launches") == 0) {
        int ms = argc > 2 ? atoi(argv[2]) : 400;
        for (int t = 0; t < ms; t += 5) {
            static_launch("_Z7ownkernPf");
            sleep_ms(5);
        }
        static_managed_alloc(4096);
    } else if (strcmp(mode, "allocs") == 0) {
        int rounds = argc > 2 ? atoi(argv[2]) : 50;
        bool switched = !(argc > 3 && !strcmp(argv[3], "late"));
        int passes = 0;
        for (int i = 0; i < rounds; i++) {
            void *p = static_malloc(1 << 20);
            static_memset_async(p, 1 << 20);
            static_launch("_Z7ownkernPf");
            static_free(p);
            sleep_ms(2);
            if (!switched && own_trace_count(GT_REC_API_LAUNCH, NULL) > 0) {
                switched = true;
                i = -1; /* N rounds from the switch on */
            } else if (!switched && i == rounds - 1) {
                i = -1;
                if (++passes > 400) { /* 20 s at least: a ceiling, not an expected time */
                    printf("the trace never showed a launch\n");
                    return 4;
                }
            }
        }
    } else if (strcmp(mode, "fork") == 0) {
        kernel("_Z6parentv");
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 20; i++) {
                kernel("_Z5childv");
                sleep_ms(10);
            }
            printf("child done\n");
            return 0; /* exit(), so atexit and the before-exit hooks run in the child */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        kernel("_Z6parentv");
        printf("child pid %d status %d\n", (int)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("%s done\n", mode);
    return 3;
}
