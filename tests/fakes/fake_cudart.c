/* fake_cudart.c — a stand-in libcudart.so.13 with a simulated GPU (see fake_gpu.h).
 *
 * Memory is real host memory (copies really copy), tagged device/pinned/managed in a table that
 * cudaPointerGetAttributes answers from. Every operation gets GPU times on CLOCK_REALTIME: it
 * starts when its stream is free (or now) and lasts a fixed, size-derived time; synchronizations
 * really wait until the work is "done", so a sync stall is measurable. Every API call is announced
 * to the listener (the fake CUPTI) with a CUPTI-style correlation id and callback id, and so is the
 * GPU work it causes. FAKE_CUDA_FAIL=<function>[:<nth>] makes a call fail with a known code.
 * FAKE_CUDA_COPY_GATE=<dir>: the first copy that starts once <dir>/arm exists, inside the call and
 * before its GPU op, creates <dir>/in_copy and waits until <dir>/go exists (at most 120 s): the
 * test changes gputrace's state (an attach) while a call is in progress, when it says so rather
 * than after a guessed time. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"

#define EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------------ clock, listener, failures */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_until(uint64_t t)
{
    for (uint64_t n = now_ns(); n < t; n = now_ns()) {
        struct timespec ts = {0, (long)(t - n)};
        nanosleep(&ts, NULL);
    }
}

static _Atomic(fake_gpu_listener) listener;
static void *_Atomic listener_ctx;
static _Atomic uint32_t next_correlation = 1;
static __thread uint32_t current_correlation; /* of the API call in progress on this thread */

EXPORT void fake_gpu_set_listener(fake_gpu_listener fn, void *ctx)
{
    atomic_store(&listener_ctx, ctx);
    atomic_store(&listener, fn);
}

/* One counter for every API call, as CUPTI has: the fake CUPTI numbers the driver calls of the
 * libraries' own runtimes from it too. */
EXPORT uint32_t fake_gpu_next_correlation(void)
{
    return atomic_fetch_add(&next_correlation, 1);
}

EXPORT void fake_gpu_emit(const fake_gpu_op *op)
{
    fake_gpu_listener fn = atomic_load(&listener);
    if (fn)
        fn(op, atomic_load(&listener_ctx));
}

static char fail_name[128];
static long fail_nth; /* 0: every call */
static _Atomic long fail_seen;
static bool no_device;
static uint64_t kernel_ns =
    5000; /* FAKE_KERNEL_NS: shorter than a launch makes a launch-bound GPU */

__attribute__((constructor)) static void read_failure_env(void)
{
    const char *k = getenv("FAKE_KERNEL_NS");
    if (k && strtoull(k, NULL, 10) > 0)
        kernel_ns = strtoull(k, NULL, 10);
    const char *f = getenv("FAKE_CUDA_FAIL");
    if (f) {
        strncpy(fail_name, f, sizeof fail_name - 1);
        char *colon = strchr(fail_name, ':');
        if (colon)
            *colon = 0, fail_nth = strtol(colon + 1, NULL, 10);
    }
    const char *nd = getenv("FAKE_CUDA_NO_DEVICE");
    no_device = nd && nd[0] == '1';
}

static bool should_fail(const char *fn)
{
    if (!fail_name[0] || strcmp(fn, fail_name) != 0)
        return false;
    long n = atomic_fetch_add(&fail_seen, 1) + 1;
    return fail_nth == 0 || n == fail_nth;
}

/* An API call in progress: announced as FAKE_OP_API when it ends. */
typedef struct api_call {
    const char *name;
    uint32_t cbid;
    uint64_t t0;
    uint32_t corr;
} api_call;

static api_call api_begin(const char *name, uint32_t cbid)
{
    api_call c = {name, cbid, now_ns(), atomic_fetch_add(&next_correlation, 1)};
    current_correlation = c.corr;
    return c;
}

static cudaError_t api_end(api_call *c, cudaError_t r)
{
    fake_gpu_op op = {.kind = FAKE_OP_API,
                      .start_ns = c->t0,
                      .end_ns = now_ns(),
                      .correlation_id = c->corr,
                      .name = c->name,
                      .cbid = c->cbid};
    fake_gpu_emit(&op);
    current_correlation = 0;
    return r;
}

#define API(name, cbid) api_call call_ = api_begin(#name, cbid)
#define FAILS(name) should_fail(#name)
#define RETURN(r) return (cudaError_t)api_end(&call_, (r))

/* ------------------------------------------------------------------ streams, events, memory */

typedef struct fake_stream {
    uint32_t id;
    _Atomic uint64_t tail; /* when its last work ends */
} fake_stream;

static fake_stream default_stream = {.id = 7};
static _Atomic uint32_t next_stream_id = 13;
static __thread int current_device;

static fake_stream *stream_of(cudaStream_t s)
{
    uintptr_t v = (uintptr_t)s;
    return v <= 2 ? &default_stream : (fake_stream *)s; /* 0, legacy (1), per-thread (2) */
}

/* The CUPTI stream id of a stream (fake_gpu.h): for the fake libraries' own kernels. */
EXPORT uint32_t fake_gpu_stream_id(void *s)
{
    return stream_of((cudaStream_t)s)->id;
}

/* Schedule duration ns of work on a stream; returns its [start, end). */
static void schedule(fake_stream *st, uint64_t duration, uint64_t *start, uint64_t *end)
{
    uint64_t now = now_ns(), tail = atomic_load(&st->tail);
    uint64_t s;
    do {
        s = tail > now ? tail : now;
    } while (!atomic_compare_exchange_weak(&st->tail, &tail, s + duration));
    *start = s, *end = s + duration;
}

typedef struct fake_event {
    _Atomic uint64_t t;
    fake_stream *stream;
} fake_event;

typedef struct alloc_entry {
    uintptr_t base;
    size_t size;
    enum cudaMemoryType type;
    bool on_device; /* managed memory: migrated to the GPU */
} alloc_entry;

#define MAX_ALLOCS 4096
static alloc_entry allocs[MAX_ALLOCS];
static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;

static void alloc_add(void *p, size_t n, enum cudaMemoryType t)
{
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!allocs[i].base) {
            allocs[i] = (alloc_entry){(uintptr_t)p, n, t, false};
            break;
        }
    pthread_mutex_unlock(&allocs_lock);
}

static bool alloc_remove(void *p, enum cudaMemoryType t)
{
    bool found = false;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base == (uintptr_t)p && allocs[i].type == t) {
            allocs[i].base = 0, found = true;
            break;
        }
    pthread_mutex_unlock(&allocs_lock);
    return found;
}

static enum cudaMemoryType alloc_type(const void *p)
{
    enum cudaMemoryType t = cudaMemoryTypeUnregistered;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base && (uintptr_t)p >= allocs[i].base &&
            (uintptr_t)p < allocs[i].base + allocs[i].size) {
            t = allocs[i].type;
            break;
        }
    pthread_mutex_unlock(&allocs_lock);
    return t;
}

static int cupti_mem_kind(enum cudaMemoryType t)
{
    switch (t) {
    case cudaMemoryTypeHost:
        return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case cudaMemoryTypeDevice:
        return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    case cudaMemoryTypeManaged:
        return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    default:
        return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    }
}

/* ------------------------------------------------------------------ GPU work */

/* ------------------------------------------------------------------ unified memory */

#define UM_FAULT_NS 20000    /* one GPU page fault's service */
#define UM_NS_PER_10_BYTES 1 /* migrations at 10 GB/s */

static void emit_um(int kind, uint64_t t0, uint64_t t1, uint64_t addr, uint64_t value, uint32_t src,
                    uint32_t dst, uint32_t flags)
{
    fake_gpu_op op = {.kind = FAKE_OP_UM,
                      .start_ns = t0,
                      .end_ns = t1,
                      .device = (uint32_t)current_device,
                      .um_kind = kind,
                      .address = addr,
                      .bytes = value,
                      .um_src = src,
                      .um_dst = dst,
                      .um_flags = flags};
    fake_gpu_emit(&op);
}

/* The bytes of managed memory on the host, which a kernel launched now would fault over. */
static uint64_t um_host_bytes(void)
{
    uint64_t n = 0;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (allocs[i].base && allocs[i].type == cudaMemoryTypeManaged && !allocs[i].on_device)
            n += allocs[i].size;
    pthread_mutex_unlock(&allocs_lock);
    return n;
}

/* A kernel that began at t faults the host's managed memory over: one fault, then a migration
 * per allocation, back to back. */
static void um_fault_in(uint64_t t)
{
    uint32_t dev = (uint32_t)current_device;
    emit_um(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, t, t + UM_FAULT_NS, 0, 1,
            dev, 0, CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ);
    t += UM_FAULT_NS;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        alloc_entry *a = &allocs[i];
        if (!a->base || a->type != cudaMemoryTypeManaged || a->on_device)
            continue;
        uint64_t d = a->size / 10 * UM_NS_PER_10_BYTES + 1000;
        emit_um(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, t, t + d, a->base,
                a->size, CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID, dev,
                CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE);
        a->on_device = true;
        t += d;
    }
    pthread_mutex_unlock(&allocs_lock);
}

/* Move the managed allocation holding p to the device or the host; the migration's bytes, 0 when
 * nothing moved. */
static uint64_t um_move(const void *p, bool to_device)
{
    uint64_t moved = 0;
    pthread_mutex_lock(&allocs_lock);
    for (int i = 0; i < MAX_ALLOCS; i++) {
        alloc_entry *a = &allocs[i];
        if (a->base && a->type == cudaMemoryTypeManaged && (uintptr_t)p >= a->base &&
            (uintptr_t)p < a->base + a->size && a->on_device != to_device) {
            a->on_device = to_device;
            moved = a->size;
            break;
        }
    }
    pthread_mutex_unlock(&allocs_lock);
    return moved;
}

EXPORT void fake_gpu_um_host_touch(const void *p)
{
    uint64_t n = um_move(p, false), t = now_ns();
    if (!n)
        return;
    emit_um(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT, t, 0, (uintptr_t)p,
            0x401000, CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID, 0,
            CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE);
    emit_um(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, t + 2000,
            t + 2000 + n / 10 * UM_NS_PER_10_BYTES + 1000, (uintptr_t)p, n,
            (uint32_t)current_device, CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID,
            CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE);
}

static void emit_kernel(fake_stream *st, const char *name, dim3 g, dim3 b)
{
    fake_gpu_op op = {.kind = FAKE_OP_KERNEL,
                      .correlation_id = current_correlation,
                      .device = (uint32_t)current_device,
                      .stream = st->id,
                      .name = name,
                      .grid = {g.x, g.y, g.z},
                      .block = {b.x, b.y, b.z}};
    uint64_t faulted = um_host_bytes(); /* the kernel stalls while its memory migrates */
    uint64_t stall = faulted ? UM_FAULT_NS + faulted / 10 * UM_NS_PER_10_BYTES + 1000 : 0;
    schedule(st, kernel_ns + stall, &op.start_ns, &op.end_ns); /* every kernel: 5 us (default) */
    if (faulted)
        um_fault_in(op.start_ns);
    fake_gpu_emit(&op);
}

static void emit_copy(fake_stream *st, void *dst, const void *src, size_t n, int is_async)
{
    enum cudaMemoryType ts = alloc_type(src), td = alloc_type(dst);
    bool sd = ts == cudaMemoryTypeDevice, dd = td == cudaMemoryTypeDevice;
    fake_gpu_op op = {.kind = FAKE_OP_MEMCPY,
                      .correlation_id = current_correlation,
                      .device = (uint32_t)current_device,
                      .stream = st->id,
                      .bytes = n,
                      .src_kind = cupti_mem_kind(ts),
                      .dst_kind = cupti_mem_kind(td),
                      .is_async = is_async};
    op.copy_kind = sd ? (dd ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH)
                      : (dd ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
    bool pageable = op.src_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE ||
                    op.dst_kind == CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    /* 1 ns per 20 bytes pinned (20 GB/s), 4x slower pageable, at least 1 us */
    uint64_t d = 1000 + n / 20 * (pageable && !(sd && dd) ? 4 : 1);
    schedule(st, d, &op.start_ns, &op.end_ns);
    if (dst && src && n)
        memmove(dst, src, n);
    fake_gpu_emit(&op);
    if (!is_async)
        wait_until(op.end_ns);
}

static void emit_set(fake_stream *st, void *p, int v, size_t n, int is_async)
{
    fake_gpu_op op = {.kind = FAKE_OP_MEMSET,
                      .correlation_id = current_correlation,
                      .device = (uint32_t)current_device,
                      .stream = st->id,
                      .bytes = n,
                      .dst_kind = cupti_mem_kind(alloc_type(p)),
                      .is_async = is_async};
    schedule(st, 1000 + n / 50, &op.start_ns, &op.end_ns);
    if (p && n)
        memset(p, v, n);
    fake_gpu_emit(&op);
    if (!is_async)
        wait_until(op.end_ns);
}

static void emit_sync(int type, fake_stream *st, uint64_t until)
{
    fake_gpu_op op = {.kind = FAKE_OP_SYNC,
                      .correlation_id = current_correlation,
                      .device = (uint32_t)current_device,
                      .stream = st ? st->id : 0,
                      .sync_type = type,
                      .start_ns = now_ns()};
    wait_until(until);
    op.end_ns = now_ns();
    fake_gpu_emit(&op);
}

/* ------------------------------------------------------------------ kernels */

typedef struct kernel_entry {
    const void *host_fun;
    const char *name;
} kernel_entry;
#define MAX_KERNELS 256
static kernel_entry kernels[MAX_KERNELS];
static _Atomic int kernel_count;

EXPORT void **__cudaRegisterFatBinary(void *fat)
{
    static void *handle = &handle;
    return &handle;
}
EXPORT void __cudaRegisterFatBinaryEnd(void **h) {}
EXPORT void __cudaUnregisterFatBinary(void **h) {}
EXPORT void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun,
                                   const char *device_name, int thread_limit, uint3 *tid,
                                   uint3 *bid, dim3 *bdim, dim3 *gdim, int *wsize)
{
    int i = atomic_fetch_add(&kernel_count, 1);
    if (i < MAX_KERNELS)
        kernels[i] = (kernel_entry){host_fun, device_name};
}

static kernel_entry *kernel_of(const void *fn)
{
    int n = atomic_load(&kernel_count);
    for (int i = 0; i < n && i < MAX_KERNELS; i++)
        if (kernels[i].host_fun == fn || (const void *)&kernels[i] == fn)
            return &kernels[i];
    return NULL;
}

static const char *kernel_name(const void *fn)
{
    kernel_entry *k = kernel_of(fn);
    return k ? k->name : "fake_unregistered_kernel";
}

EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *fn)
{
    kernel_entry *k = kernel_of(fn);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *out = (cudaKernel_t)k;
    return cudaSuccess;
}

EXPORT cudaError_t cudaFuncGetName(const char **name, const void *fn)
{
    kernel_entry *k = kernel_of(fn);
    if (!k || !name)
        return cudaErrorInvalidDeviceFunction;
    *name = k->name;
    return cudaSuccess;
}

EXPORT cudaError_t cudaGetFuncBySymbol(cudaFunction_t *out, const void *fn)
{
    kernel_entry *k = kernel_of(fn);
    if (!k)
        return cudaErrorInvalidDeviceFunction;
    *out = (cudaFunction_t)k;
    return cudaSuccess;
}

static cudaError_t launch(const char *api, uint32_t cbid, const void *fn, dim3 g, dim3 b,
                          cudaStream_t s)
{
    api_call call_ = api_begin(api, cbid);
    if (should_fail(api))
        RETURN(cudaErrorLaunchFailure);
    if (!fn)
        RETURN(cudaErrorInvalidDeviceFunction);
    emit_kernel(stream_of(s), kernel_name(fn), g, b);
    RETURN(cudaSuccess);
}

#define LAUNCH_PAIR(name, cbid, params, fnexpr, g, b, s)                                           \
    EXPORT cudaError_t name params                                                                 \
    {                                                                                              \
        return launch(#name, cbid, fnexpr, g, b, s);                                               \
    }                                                                                              \
    EXPORT cudaError_t name##_ptsz params                                                          \
    {                                                                                              \
        return launch(#name, cbid, fnexpr, g, b, s);                                               \
    }

LAUNCH_PAIR(__cudaLaunchKernel, CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
            (cudaKernel_t k, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t s),
            (const void *)k, g, b, s)
LAUNCH_PAIR(cudaLaunchKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
            (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t s), f, g, b, s)
LAUNCH_PAIR(cudaLaunchCooperativeKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
            (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t s), f, g, b, s)
LAUNCH_PAIR(cudaLaunchKernelExC, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
            (const cudaLaunchConfig_t *c, const void *f, void **a), f, c->gridDim, c->blockDim,
            c->stream)

static cudaError_t graph_launch(cudaGraphExec_t ge, cudaStream_t s)
{
    API(cudaGraphLaunch, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
    if (FAILS(cudaGraphLaunch) || !ge)
        RETURN(cudaErrorInvalidValue);
    dim3 one = {1, 1, 1};
    emit_kernel(stream_of(s), "fake_graph_kernel", one, one);
    emit_kernel(stream_of(s), "fake_graph_kernel", one, one);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t ge, cudaStream_t s)
{
    return graph_launch(ge, s);
}
EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t ge, cudaStream_t s)
{
    return graph_launch(ge, s);
}

/* ------------------------------------------------------------------ memory API */

static cudaError_t alloc_common(const char *name, uint32_t cbid, void **p, size_t n,
                                enum cudaMemoryType t)
{
    api_call call_ = api_begin(name, cbid);
    if (!p)
        RETURN(cudaErrorInvalidValue);
    if (should_fail(name))
        RETURN(cudaErrorMemoryAllocation);
    *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
    if (!*p)
        RETURN(cudaErrorMemoryAllocation);
    alloc_add(*p, n ? n : 1, t);
    RETURN(cudaSuccess);
}

static cudaError_t free_common(const char *name, uint32_t cbid, void *p, enum cudaMemoryType t)
{
    api_call call_ = api_begin(name, cbid);
    if (should_fail(name))
        RETURN(cudaErrorInvalidValue);
    if (!p)
        RETURN(cudaSuccess);
    if (!alloc_remove(p, t))
        RETURN(cudaErrorInvalidValue);
    free(p);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    return alloc_common("cudaMalloc", CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, p, n,
                        cudaMemoryTypeDevice);
}
EXPORT cudaError_t cudaFree(void *p)
{
    if (p && alloc_type(p) == cudaMemoryTypeManaged)
        return free_common("cudaFree", CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, p,
                           cudaMemoryTypeManaged);
    return free_common("cudaFree", CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020, p,
                       cudaMemoryTypeDevice);
}
EXPORT cudaError_t cudaMallocAsync(void **p, size_t n, cudaStream_t s)
{
    return alloc_common("cudaMallocAsync", CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, p, n,
                        cudaMemoryTypeDevice);
}
EXPORT cudaError_t cudaMallocAsync_ptsz(void **p, size_t n, cudaStream_t s)
{
    return alloc_common("cudaMallocAsync", CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, p, n,
                        cudaMemoryTypeDevice);
}
EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    return free_common("cudaFreeAsync", CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, p,
                       cudaMemoryTypeDevice);
}
EXPORT cudaError_t cudaFreeAsync_ptsz(void *p, cudaStream_t s)
{
    return free_common("cudaFreeAsync", CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, p,
                       cudaMemoryTypeDevice);
}
/* Under the runtime call, the driver's cuMemAllocManaged, which CUPTI's driver callbacks see. */
EXPORT cudaError_t cudaMallocManaged(void **p, size_t n, unsigned int f)
{
    cudaError_t r =
        alloc_common("cudaMallocManaged", CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000, p, n,
                     cudaMemoryTypeManaged);
    CUdeviceptr dptr = r == cudaSuccess ? (CUdeviceptr)(uintptr_t)*p : 0;
    struct { /* cuMemAllocManaged_params (generated_cuda_meta.h) */
        CUdeviceptr *dptr;
        size_t bytesize;
        unsigned int flags;
    } params = {&dptr, n, f};
    fake_gpu_op op = {.kind = FAKE_OP_DRIVER_CALL,
                      .start_ns = now_ns(),
                      .correlation_id = atomic_fetch_add(&next_correlation, 1),
                      .name = "cuMemAllocManaged",
                      .cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged,
                      .params = &params};
    op.end_ns = op.start_ns;
    if (r == cudaSuccess)
        fake_gpu_emit(&op);
    return r;
}

/* CUDA 13's form: a location and flags before the stream. */
static cudaError_t prefetch(const void *p, size_t n, struct cudaMemLocation loc, cudaStream_t s)
{
    API(cudaMemPrefetchAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMemPrefetchAsync_v12020);
    if (FAILS(cudaMemPrefetchAsync) || !p)
        RETURN(cudaErrorInvalidValue);
    bool to_device = loc.type == cudaMemLocationTypeDevice;
    uint64_t moved = um_move(p, to_device);
    if (moved) {
        uint64_t t0, t1;
        schedule(stream_of(s), moved / 10 * UM_NS_PER_10_BYTES + 1000, &t0, &t1);
        uint32_t dev = (uint32_t)current_device, cpu = CUPTI_UNIFIED_MEMORY_CPU_DEVICE_ID;
        emit_um(to_device ? CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD
                          : CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
                t0, t1, (uintptr_t)p, moved, to_device ? cpu : dev, to_device ? dev : cpu,
                CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER);
    }
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, struct cudaMemLocation loc,
                                        unsigned int flags, cudaStream_t s)
{
    return prefetch(p, n, loc, s);
}
EXPORT cudaError_t cudaMemPrefetchAsync_ptsz(const void *p, size_t n, struct cudaMemLocation loc,
                                             unsigned int flags, cudaStream_t s)
{
    return prefetch(p, n, loc, s);
}
EXPORT cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice,
                                 struct cudaMemLocation loc)
{
    API(cudaMemAdvise, CUPTI_RUNTIME_TRACE_CBID_cudaMemAdvise_v12020);
    if (FAILS(cudaMemAdvise) || !p)
        RETURN(cudaErrorInvalidValue);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaMallocHost(void **p, size_t n)
{
    return alloc_common("cudaMallocHost", CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020, p, n,
                        cudaMemoryTypeHost);
}
EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int f)
{
    return alloc_common("cudaHostAlloc", CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, p, n,
                        cudaMemoryTypeHost);
}
EXPORT cudaError_t cudaFreeHost(void *p)
{
    return free_common("cudaFreeHost", CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, p,
                       cudaMemoryTypeHost);
}
EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t w, size_t h)
{
    size_t pw = (w + 511) / 512 * 512;
    cudaError_t r = alloc_common("cudaMallocPitch", CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
                                 p, pw * h, cudaMemoryTypeDevice);
    if (r == cudaSuccess && pitch)
        *pitch = pw;
    return r;
}
EXPORT cudaError_t cudaHostRegister(void *p, size_t n, unsigned int f)
{
    API(cudaHostRegister, CUPTI_RUNTIME_TRACE_CBID_cudaHostRegister_v4000);
    if (FAILS(cudaHostRegister) || !p)
        RETURN(cudaErrorInvalidValue);
    alloc_add(p, n, cudaMemoryTypeHost);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaHostUnregister(void *p)
{
    API(cudaHostUnregister, CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000);
    if (FAILS(cudaHostUnregister) || !alloc_remove(p, cudaMemoryTypeHost))
        RETURN(cudaErrorHostMemoryNotRegistered);
    RETURN(cudaSuccess);
}

EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    if (!a)
        return cudaErrorInvalidValue;
    memset(a, 0, sizeof *a);
    a->type = alloc_type(p);
    a->device = current_device;
    a->hostPointer = a->type == cudaMemoryTypeDevice ? NULL : (void *)p;
    a->devicePointer = (void *)p;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ copies and sets */

/* FAKE_CUDA_COPY_GATE (above): once, in the first copy. */
static void wait_at_copy_gate(void)
{
    static atomic_bool passed;
    const char *dir = getenv("FAKE_CUDA_COPY_GATE");
    if (!dir || !dir[0] || atomic_load(&passed))
        return;
    char arm[4096], in_copy[4096], go[4096];
    snprintf(arm, sizeof arm, "%s/arm", dir);
    if (access(arm, F_OK) != 0 || atomic_exchange(&passed, true))
        return;
    snprintf(in_copy, sizeof in_copy, "%s/in_copy", dir);
    snprintf(go, sizeof go, "%s/go", dir);
    int fd = open(in_copy, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 120000 && access(go, F_OK) != 0; i++)
        nanosleep(&ms, NULL);
}

static cudaError_t copy(const char *name, uint32_t cbid, void *d, const void *s, size_t n,
                        cudaStream_t st, int is_async)
{
    api_call call_ = api_begin(name, cbid);
    wait_at_copy_gate();
    if (should_fail(name))
        RETURN(cudaErrorInvalidValue);
    if (n && (!d || !s))
        RETURN(cudaErrorInvalidValue);
    emit_copy(stream_of(st), d, s, n, is_async);
    RETURN(cudaSuccess);
}

#define COPY_CBID(f) CUPTI_RUNTIME_TRACE_CBID_##f##_v3020
EXPORT cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    return copy("cudaMemcpy", COPY_CBID(cudaMemcpy), d, s, n, 0, 0);
}
EXPORT cudaError_t cudaMemcpy_ptds(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    return copy("cudaMemcpy", COPY_CBID(cudaMemcpy), d, s, n, (cudaStream_t)2, 0);
}
EXPORT cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
                                   cudaStream_t st)
{
    return copy("cudaMemcpyAsync", COPY_CBID(cudaMemcpyAsync), d, s, n, st, 1);
}
EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
                                        cudaStream_t st)
{
    return copy("cudaMemcpyAsync", COPY_CBID(cudaMemcpyAsync), d, s, n, st, 1);
}
EXPORT cudaError_t cudaMemcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
                                enum cudaMemcpyKind k)
{
    return copy("cudaMemcpy2D", COPY_CBID(cudaMemcpy2D), d, s, w * h, 0, 0);
}
EXPORT cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w,
                                     size_t h, enum cudaMemcpyKind k, cudaStream_t st)
{
    return copy("cudaMemcpy2DAsync", COPY_CBID(cudaMemcpy2DAsync), d, s, w * h, st, 1);
}
EXPORT cudaError_t cudaMemcpyPeer(void *d, int dd, const void *s, int sd, size_t n)
{
    return copy("cudaMemcpyPeer", CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeer_v4000, d, s, n, 0, 0);
}
EXPORT cudaError_t cudaMemcpyPeerAsync(void *d, int dd, const void *s, int sd, size_t n,
                                       cudaStream_t st)
{
    return copy("cudaMemcpyPeerAsync", CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, d, s, n,
                st, 1);
}
EXPORT cudaError_t cudaMemcpyToSymbol(const void *sym, const void *s, size_t n, size_t off,
                                      enum cudaMemcpyKind k)
{
    return copy("cudaMemcpyToSymbol", COPY_CBID(cudaMemcpyToSymbol), (char *)sym + off, s, n, 0, 0);
}
EXPORT cudaError_t cudaMemcpyFromSymbol(void *d, const void *sym, size_t n, size_t off,
                                        enum cudaMemcpyKind k)
{
    return copy("cudaMemcpyFromSymbol", COPY_CBID(cudaMemcpyFromSymbol), d, (const char *)sym + off,
                n, 0, 0);
}

static cudaError_t set(const char *name, uint32_t cbid, void *p, int v, size_t n, cudaStream_t st,
                       int is_async)
{
    api_call call_ = api_begin(name, cbid);
    if (should_fail(name))
        RETURN(cudaErrorInvalidValue);
    emit_set(stream_of(st), p, v, n, is_async);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaMemset(void *p, int v, size_t n)
{
    return set("cudaMemset", COPY_CBID(cudaMemset), p, v, n, 0, 0);
}
EXPORT cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st)
{
    return set("cudaMemsetAsync", COPY_CBID(cudaMemsetAsync), p, v, n, st, 1);
}
EXPORT cudaError_t cudaMemsetAsync_ptsz(void *p, int v, size_t n, cudaStream_t st)
{
    return set("cudaMemsetAsync", COPY_CBID(cudaMemsetAsync), p, v, n, st, 1);
}

/* ------------------------------------------------------------------ streams, events, syncs */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *s)
{
    fake_stream *st = calloc(1, sizeof *st);
    if (!st || !s)
        return cudaErrorMemoryAllocation;
    st->id = atomic_fetch_add(&next_stream_id, 1);
    *s = (cudaStream_t)st;
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if ((uintptr_t)s > 2)
        free(s);
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    fake_event *ev = calloc(1, sizeof *ev);
    if (!ev || !e)
        return cudaErrorMemoryAllocation;
    *e = (cudaEvent_t)ev;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int f)
{
    fake_event *ev = calloc(1, sizeof *ev);
    if (!ev || !e)
        return cudaErrorMemoryAllocation;
    *e = (cudaEvent_t)ev;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
static cudaError_t event_record(cudaEvent_t e, cudaStream_t s)
{
    API(cudaEventRecord, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020);
    if (FAILS(cudaEventRecord) || !e)
        RETURN(cudaErrorInvalidResourceHandle);
    fake_event *ev = (fake_event *)e;
    ev->stream = stream_of(s);
    uint64_t t = atomic_load(&ev->stream->tail), n = now_ns();
    atomic_store(&ev->t, t > n ? t : n);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    return event_record(e, s);
}
EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t e, cudaStream_t s)
{
    return event_record(e, s);
}
EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!ms || !a || !b)
        return cudaErrorInvalidValue;
    *ms =
        (float)((double)(atomic_load(&((fake_event *)b)->t) - atomic_load(&((fake_event *)a)->t)) /
                1e6);
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    API(cudaEventSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020);
    if (FAILS(cudaEventSynchronize) || !e)
        RETURN(cudaErrorInvalidResourceHandle);
    fake_event *ev = (fake_event *)e;
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, ev->stream,
              atomic_load(&ev->t));
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaEventQuery(cudaEvent_t e)
{
    API(cudaEventQuery, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    RETURN(now_ns() >= atomic_load(&((fake_event *)e)->t) ? cudaSuccess : cudaErrorNotReady);
}
static cudaError_t stream_sync(cudaStream_t s)
{
    API(cudaStreamSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020);
    if (FAILS(cudaStreamSynchronize))
        RETURN(cudaErrorIllegalAddress);
    fake_stream *st = stream_of(s);
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, st, atomic_load(&st->tail));
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    return stream_sync(s);
}
EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t s)
{
    return stream_sync(s);
}
static cudaError_t stream_query(cudaStream_t s)
{
    API(cudaStreamQuery, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020);
    /* FAKE_RAISE_IN_QUERY=SIG: a signal arrives while the real function runs (the tests of calls
     * made from signal handlers, ti_signal_app handler) */
    const char *raise_sig = getenv("FAKE_RAISE_IN_QUERY");
    if (raise_sig)
        raise(atoi(raise_sig));
    RETURN(now_ns() >= atomic_load(&stream_of(s)->tail) ? cudaSuccess : cudaErrorNotReady);
}
EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    return stream_query(s);
}
EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t s)
{
    return stream_query(s);
}
static cudaError_t stream_wait(cudaStream_t s, cudaEvent_t e, unsigned f)
{
    API(cudaStreamWaitEvent, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020);
    if (!e)
        RETURN(cudaErrorInvalidResourceHandle);
    fake_stream *st = stream_of(s);
    uint64_t t = atomic_load(&((fake_event *)e)->t), tail = atomic_load(&st->tail);
    while (tail < t && !atomic_compare_exchange_weak(&st->tail, &tail, t)) {
    }
    fake_gpu_op op = {.kind = FAKE_OP_SYNC,
                      .correlation_id = current_correlation,
                      .stream = st->id,
                      .start_ns = now_ns(),
                      .end_ns = now_ns(),
                      .sync_type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT};
    fake_gpu_emit(&op);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    return stream_wait(s, e, f);
}
EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    return stream_wait(s, e, f);
}
static cudaError_t device_sync(void)
{
    API(cudaDeviceSynchronize, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
    if (FAILS(cudaDeviceSynchronize))
        RETURN(cudaErrorIllegalAddress);
    /* All streams: the default one and, conservatively, "now + the longest queue" is not known
     * without a stream list; the default stream is where the tests queue work. */
    emit_sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, NULL,
              atomic_load(&default_stream.tail));
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaDeviceSynchronize(void)
{
    return device_sync();
}

/* A profiler range mark: no effect without a profiler attached, as in the real runtime. */
EXPORT cudaError_t cudaProfilerStart(void)
{
    API(cudaProfilerStart, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaProfilerStop(void)
{
    API(cudaProfilerStop, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    RETURN(cudaSuccess);
}

/* ------------------------------------------------------------------ devices and versions */

EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    if (!n)
        return cudaErrorInvalidValue;
    *n = no_device ? 0 : 1;
    return no_device ? cudaErrorNoDevice : cudaSuccess;
}
EXPORT cudaError_t cudaGetDevice(int *d)
{
    if (!d)
        return cudaErrorInvalidValue;
    *d = current_device;
    return cudaSuccess;
}
EXPORT cudaError_t cudaSetDevice(int d)
{
    if (d != 0 || no_device)
        return cudaErrorInvalidDevice;
    current_device = d;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int d)
{
    API(cudaGetDeviceProperties, CUPTI_RUNTIME_TRACE_CBID_cudaGetDeviceProperties_v12000);
    if (!p || d != 0 || no_device)
        RETURN(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    strcpy(p->name, "Fake H200");
    p->major = 9, p->minor = 0;
    p->multiProcessorCount = 132;
    p->totalGlobalMem = 150ull << 30;
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    API(cudaRuntimeGetVersion, CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020);
    if (!v)
        RETURN(cudaErrorInvalidValue);
    *v = 13000;
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    API(cudaDriverGetVersion, CUPTI_RUNTIME_TRACE_CBID_cudaDriverGetVersion_v3020);
    if (!v)
        RETURN(cudaErrorInvalidValue);
    *v = no_device ? 0 : 13000;
    RETURN(cudaSuccess);
}
EXPORT cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}
EXPORT cudaError_t cudaPeekAtLastError(void)
{
    return cudaSuccess;
}
EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : "fake error";
}

/* ------------------------------------------------------------------ driver entry points
 * There is no fake libcuda: the driver functions that gputrace records are simulated here and
 * handed out by cudaGetDriverEntryPoint[ByVersion], as the real runtime hands out libcuda's. */

static CUresult drv_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned smem, CUstream s, void **p, void **e)
{
    dim3 g = {gx, gy, gz}, b = {bx, by, bz};
    current_correlation = atomic_fetch_add(&next_correlation, 1);
    emit_kernel(stream_of((cudaStream_t)s), kernel_name((const void *)f), g, b);
    return CUDA_SUCCESS;
}
static CUresult drv_htod(CUdeviceptr d, const void *s, size_t n)
{
    current_correlation = atomic_fetch_add(&next_correlation, 1);
    emit_copy(&default_stream, (void *)d, s, n, 0);
    return CUDA_SUCCESS;
}
static CUresult drv_dtoh(void *d, CUdeviceptr s, size_t n)
{
    current_correlation = atomic_fetch_add(&next_correlation, 1);
    emit_copy(&default_stream, d, (const void *)s, n, 0);
    return CUDA_SUCCESS;
}
static CUresult drv_htod_async(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    current_correlation = atomic_fetch_add(&next_correlation, 1);
    emit_copy(stream_of((cudaStream_t)st), (void *)d, s, n, 1);
    return CUDA_SUCCESS;
}
static CUresult drv_stream_sync(CUstream s)
{
    return stream_sync((cudaStream_t)s) == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_ADDRESS;
}
static CUresult drv_ctx_sync(void)
{
    return device_sync() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_ADDRESS;
}
static CUresult drv_mem_alloc(CUdeviceptr *p, size_t n)
{
    void *q = NULL;
    cudaError_t r = alloc_common("cuMemAlloc_v2", 0, &q, n, cudaMemoryTypeDevice);
    *p = (CUdeviceptr)q;
    return r == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult drv_mem_free(CUdeviceptr p)
{
    return free_common("cuMemFree_v2", 0, (void *)p, cudaMemoryTypeDevice) == cudaSuccess
               ? CUDA_SUCCESS
               : CUDA_ERROR_INVALID_VALUE;
}

static const struct {
    const char *name;
    void *fn;
} driver_table[] = {
    {"cuLaunchKernel", (void *)drv_launch},
    {"cuMemcpyHtoD", (void *)drv_htod},
    {"cuMemcpyDtoH", (void *)drv_dtoh},
    {"cuMemcpyHtoDAsync", (void *)drv_htod_async},
    {"cuStreamSynchronize", (void *)drv_stream_sync},
    {"cuCtxSynchronize", (void *)drv_ctx_sync},
    {"cuMemAlloc", (void *)drv_mem_alloc},
    {"cuMemFree", (void *)drv_mem_free},
};

static cudaError_t entry_point(const char *sym, void **fn, enum cudaDriverEntryPointQueryResult *st)
{
    if (!sym || !fn)
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < sizeof driver_table / sizeof driver_table[0]; i++)
        if (strcmp(sym, driver_table[i].name) == 0) {
            *fn = driver_table[i].fn;
            if (st)
                *st = cudaDriverEntryPointSuccess;
            return cudaSuccess;
        }
    *fn = NULL;
    if (st)
        *st = cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess; /* like the real one: success, with the status saying "not found" */
}
EXPORT cudaError_t cudaGetDriverEntryPoint(const char *sym, void **fn, unsigned long long flags,
                                           enum cudaDriverEntryPointQueryResult *st)
{
    return entry_point(sym, fn, st);
}
EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned int v,
                                                    unsigned long long flags,
                                                    enum cudaDriverEntryPointQueryResult *st)
{
    return entry_point(sym, fn, st);
}
