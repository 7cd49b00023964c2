/* fake_cupti.c — a stand-in libcupti.so.13 for tests without a GPU.
 *
 * Built against the real cupti headers: the records it hands out are the real structs
 * (CUpti_ActivityKernel10, Memcpy6, Memset4, Synchronization2, ExternalCorrelation, API,
 * Overhead3), so the code that decodes them is the code that runs on a GPU. It hears the simulated
 * GPU of the fake libcudart through fake_gpu_set_listener (fake_gpu.h), in the thread of the API
 * call, and stores a record per op in buffers obtained from the client's request callback, exactly
 * one buffer at a time like CUPTI: a request answered with NULL drops the records and counts them.
 * Buffers are completed on cuptiActivityFlushAll (any flag), in the calling thread. Like CUPTI,
 * one delivery at a time: a FlushAll waits while another thread is inside the completion callback.
 * With FAKE_CUPTI_WORKER_MS=<n> a worker thread of the fake (CUPTI's own) also completes the
 * buffers every n ms, as the real CUPTI does while the application runs.
 *
 * Like the real CUPTI, an EXTERNAL_CORRELATION record is written only for an API call that gets an
 * API activity record of its own: a runtime call (FAKE_OP_API) while CUPTI_ACTIVITY_KIND_RUNTIME is
 * enabled, a driver call while CUPTI_ACTIVITY_KIND_DRIVER is. With both off (gputrace's default) no
 * pushed external id ever reaches the trace.
 *
 * Callback API: one subscriber (a second cuptiSubscribe gets MULTIPLE_SUBSCRIBERS);
 * cuptiEnableCallback / cuptiEnableDomain choose runtime and driver cbids; the subscriber is called
 * in the thread of the API call with CUPTI_API_ENTER then CUPTI_API_EXIT and the call's
 * correlationId (the one its GPU records carry). Runtime calls are the fake cudart's FAKE_OP_API
 * ops (announced at the end of the call, after its GPU ops: still inside the call). GPU ops without
 * a correlation id come from a library's own static runtime (fake cuDNN, cuBLAS): they become a
 * simulated driver call (cuLaunchKernel, cuMemcpyAsync, cuMemsetD8Async) with a correlation id from
 * 1<<30 up.
 *
 * Kernels get queued (the CLOCK_REALTIME time the fake heard the launch, inside the launching
 * call) and submitted (+100 ns) after cuptiActivityEnableLatencyTimestamps(1).
 *
 * Fixed values the tests rely on: kernels have registersPerThread 40, staticSharedMemory 1024,
 * dynamicSharedMemory 0, contextId 1 (unless FAKE_CUPTI_TWO_CONTEXTS); memsets have memoryKind
 * DEVICE; every completed buffer ends with one OVERHEAD record of 1000 ns (when that kind is
 * enabled).
 *
 * Environment: FAKE_CUPTI_NO_DRIVER=1, FAKE_CUPTI_OTHER_SUBSCRIBER=1, FAKE_CUPTI_NO_CALLBACKS=1
 * (cuptiSubscribe fails with CUPTI_ERROR_NOT_SUPPORTED), FAKE_CUPTI_DROP=<n> (added to
 * the first dropped-record query), FAKE_CUPTI_NO_LATENCY=1 (latency timestamps accepted but
 * never stamped, as when CUDA started before the client asked), FAKE_CUPTI_LOG=<file> (one "pid
 * function" line per call, to prove which process called what), FAKE_CUPTI_HW_TRACE=1 (the GPU
 * has hardware-event timestamps: cuptiActivityEnableHWTrace succeeds; unset or 0 refuses it with
 * NOT_SUPPORTED, as on Hopper; "late" answers NOT_INITIALIZED to the first call, as before the
 * driver is up, and succeeds after), FAKE_CUPTI_FINALIZE_ANYWHERE=1 (cuptiFinalize allowed outside
 * the callback at the return of a context-wide sync, where the fake otherwise aborts),
 * FAKE_CUPTI_TWO_CONTEXTS=1 (kernels alternate between contexts 1 and 2 by correlation id),
 * FAKE_CUPTI_REGISTER_DELAY_MS=<n> (cuptiActivityRegisterCallbacks takes n ms, as the start of
 * CUPTI does on a busy machine: the window where calls race the start is then wide open),
 * FAKE_CUPTI_START_GATE=<dir> (cuptiActivityRegisterCallbacks creates <dir>/waiting, then waits
 * until <dir>/open exists, at most 120 s: a start that outlasts every bounded wait of gputrace's,
 * released when the test says so, not after a guessed time),
 * FAKE_CUPTI_UM=refuse (cuptiActivityConfigureUnifiedMemoryCounter answers
 * UM_PROFILING_NOT_SUPPORTED), FAKE_CUPTI_UM=late (the first cuptiActivityEnable of
 * UNIFIED_MEMORY_COUNTER answers NOT_READY, as the H200's CUPTI 13 does before the driver is up).
 * Unified-memory events (FAKE_OP_UM) become CUpti_ActivityUnifiedMemoryCounter3 records for the
 * counter kinds configured, while UNIFIED_MEMORY_COUNTER is enabled. Driver calls hand the
 * callbacks their parameters and a CUDA_SUCCESS return at the exit. */
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fake_gpu.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_PENDING 256
#define MAX_NAMES 1024
#define REC_HDR 8u /* u32 size, u32 magic before each record */
#define REC_MAGIC 0x43505446u

static struct {
    int no_driver, other_subscriber, no_callbacks, worker_ms, no_latency, two_contexts;
    int register_delay_ms;
    const char *hw_trace; /* FAKE_CUPTI_HW_TRACE */
    unsigned long extra_drop;
    int log_fd;
} env = {.log_fd = -1};
static int latency_on; /* cuptiActivityEnableLatencyTimestamps(1) was called */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Held across completion callbacks (never with lock): deliveries are serialised, like CUPTI's. */
static pthread_mutex_t deliver_lock = PTHREAD_MUTEX_INITIALIZER;
static int worker_started;
static void start_worker(void);
static CUpti_BuffersCallbackRequestFunc request_cb;
static CUpti_BuffersCallbackCompleteFunc complete_cb;
static unsigned char enabled[64]; /* by CUpti_ActivityKind (only small kinds are used) */
static uint8_t *cur_buf;
static size_t cur_size, cur_used;
static struct {
    uint8_t *buf;
    size_t size, valid;
} pending[MAX_PENDING];
static int pending_count;
static size_t dropped;
static int drop_reported;
static pid_t owner_pid;
static uint64_t next_grid_id = 1;
static char *names[MAX_NAMES];
static int name_count;
static int attached;

/* The callback subscriber (read without the lock in the calling thread, as CUPTI does). */
static CUpti_CallbackFunc _Atomic sub_fn;
static void *_Atomic sub_userdata;
static unsigned char cb_runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static unsigned char cb_driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
static _Atomic uint32_t next_driver_corr = 1u << 30;
static uint32_t (*shared_corr)(void); /* the fake runtime's counter, when it has one */
#define SUBSCRIBER ((CUpti_SubscriberHandle)(uintptr_t)0x5eb)

#define STACK_DEPTH 64
static _Thread_local uint64_t ext_stack[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE][STACK_DEPTH];
static _Thread_local int ext_depth[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static _Thread_local uint32_t ext_last_corr[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];

static void log_call(const char *fn)
{
    if (env.log_fd < 0)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "%d %s\n", (int)getpid(), fn);
    if (n > 0 && write(env.log_fd, line, (size_t)n) < 0) {
        /* nothing to do: the log is best effort */
    }
}

static int is_enabled(CUpti_ActivityKind k)
{
    return (unsigned)k < sizeof enabled && enabled[k];
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CUPTI keeps one string per kernel and shares it among records: do the same. */
static const char *stable_name(const char *s)
{
    if (!s)
        return NULL;
    for (int i = 0; i < name_count; i++)
        if (strcmp(names[i], s) == 0)
            return names[i];
    if (name_count == MAX_NAMES)
        return "fake_kernel_overflow";
    names[name_count] = strdup(s);
    return names[name_count] ? names[name_count++] : "fake_kernel_nomem";
}

static size_t rec_space(size_t size)
{
    return REC_HDR + ((size + 7u) & ~(size_t)7u);
}

static void append_raw(const void *rec, size_t size)
{
    unsigned char *p = cur_buf + cur_used;
    uint32_t hdr[2] = {(uint32_t)rec_space(size), REC_MAGIC};
    memcpy(p, hdr, sizeof hdr);
    memset(p + REC_HDR, 0, rec_space(size) - REC_HDR);
    memcpy(p + REC_HDR, rec, size);
    cur_used += rec_space(size);
}

/* Close the current buffer: one overhead record, then queue it for completion. Lock held. */
static void close_buffer(void)
{
    if (!cur_buf)
        return;
    if (is_enabled(CUPTI_ACTIVITY_KIND_OVERHEAD) &&
        cur_used + rec_space(sizeof(CUpti_ActivityOverhead3)) <= cur_size) {
        CUpti_ActivityOverhead3 o = {.kind = CUPTI_ACTIVITY_KIND_OVERHEAD,
                                     .overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
                                     .objectKind = CUPTI_ACTIVITY_OBJECT_THREAD};
        o.start = now_ns();
        o.end = o.start + 1000;
        append_raw(&o, sizeof o);
    }
    if (pending_count < MAX_PENDING) {
        pending[pending_count].buf = cur_buf;
        pending[pending_count].size = cur_size;
        pending[pending_count].valid = cur_used;
        pending_count++;
    }
    cur_buf = NULL;
    cur_size = cur_used = 0;
}

/* Store one record, asking the client for a buffer when needed. Lock held. */
static void store(const void *rec, size_t size)
{
    size_t need = rec_space(size) + rec_space(sizeof(CUpti_ActivityOverhead3));
    if (cur_buf && cur_used + need > cur_size)
        close_buffer();
    if (!cur_buf && request_cb) {
        uint8_t *buf = NULL;
        size_t bsize = 0, max_records = 0;
        request_cb(&buf, &bsize, &max_records);
        if (buf && bsize >= need) {
            cur_buf = buf;
            cur_size = bsize;
            cur_used = 0;
        }
    }
    if (!cur_buf) {
        dropped++;
        return;
    }
    append_raw(rec, size);
}

static void store_ext_correlation(uint32_t corr)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION))
        return;
    for (int k = 0; k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; k++) {
        if (ext_depth[k] == 0 || ext_last_corr[k] == corr)
            continue;
        ext_last_corr[k] = corr;
        CUpti_ActivityExternalCorrelation e = {.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                               .externalKind = (CUpti_ExternalCorrelationKind)k,
                                               .externalId = ext_stack[k][ext_depth[k] - 1],
                                               .correlationId = corr};
        store(&e, sizeof e);
    }
}

static void store_kernel(const fake_gpu_op *op)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
        !is_enabled(CUPTI_ACTIVITY_KIND_KERNEL))
        return;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = 40;
    k.start = op->start_ns;
    k.end = op->end_ns;
    k.completed = op->end_ns;
    k.deviceId = op->device;
    k.contextId = env.two_contexts ? 1 + (op->correlation_id & 1) : 1; /* FAKE_CUPTI_TWO_CONTEXTS */
    k.streamId = op->stream;
    k.gridX = (int32_t)op->grid[0], k.gridY = (int32_t)op->grid[1], k.gridZ = (int32_t)op->grid[2];
    k.blockX = (int32_t)op->block[0], k.blockY = (int32_t)op->block[1],
    k.blockZ = (int32_t)op->block[2];
    k.staticSharedMemory = 1024;
    k.correlationId = op->correlation_id;
    k.gridId = (int64_t)next_grid_id++;
    k.name = stable_name(op->name ? op->name : "fake_kernel");
    if (__atomic_load_n(&latency_on, __ATOMIC_RELAXED) && !env.no_latency) {
        /* heard in the thread of the launching call, inside it: "queued" as CUPTI means it */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        k.queued = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        k.submitted = k.queued + 100;
    }
    store(&k, sizeof k);
}

static void store_memcpy(const fake_gpu_op *op)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_MEMCPY))
        return;
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = (uint8_t)op->copy_kind;
    m.srcKind = (uint8_t)op->src_kind;
    m.dstKind = (uint8_t)op->dst_kind;
    m.flags = op->is_async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
    m.bytes = op->bytes;
    m.start = op->start_ns;
    m.end = op->end_ns;
    m.deviceId = op->device;
    m.contextId = 1;
    m.streamId = op->stream;
    m.correlationId = op->correlation_id;
    store(&m, sizeof m);
}

static void store_memset(const fake_gpu_op *op)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_MEMSET))
        return;
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.bytes = op->bytes;
    m.start = op->start_ns;
    m.end = op->end_ns;
    m.deviceId = op->device;
    m.contextId = 1;
    m.streamId = op->stream;
    m.correlationId = op->correlation_id;
    m.flags = op->is_async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    store(&m, sizeof m);
}

static void store_sync(const fake_gpu_op *op)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
        return;
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = (CUpti_ActivitySynchronizationType)op->sync_type;
    s.start = op->start_ns;
    s.end = op->end_ns;
    s.correlationId = op->correlation_id;
    s.contextId = 1;
    s.streamId = op->sync_type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE
                     ? CUPTI_SYNCHRONIZATION_INVALID_VALUE
                     : op->stream;
    s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    store(&s, sizeof s);
}

/* cuptiActivityConfigureUnifiedMemoryCounter's choice, by counter kind */
static unsigned char um_counter_on[CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT];

static void store_um(const fake_gpu_op *op)
{
    if (!is_enabled(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) || op->um_kind <= 0 ||
        op->um_kind >= CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT ||
        !um_counter_on[op->um_kind])
        return;
    CUpti_ActivityUnifiedMemoryCounter3 u;
    memset(&u, 0, sizeof u);
    u.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
    u.counterKind = (CUpti_ActivityUnifiedMemoryCounterKind)op->um_kind;
    u.value = op->bytes;
    u.start = op->start_ns;
    u.end = op->end_ns;
    u.address = op->address;
    u.srcId = op->um_src;
    u.dstId = op->um_dst;
    u.flags = op->um_flags;
    u.processId = (uint32_t)getpid();
    store(&u, sizeof u);
}

static void store_api(const fake_gpu_op *op, CUpti_ActivityKind kind)
{
    if (!is_enabled(kind))
        return;
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = kind;
    a.cbid = op->cbid;
    a.start = op->start_ns;
    a.end = op->end_ns;
    a.processId = (uint32_t)getpid();
    a.threadId = (uint32_t)gettid();
    a.correlationId = op->correlation_id;
    store(&a, sizeof a);
}

static int callback_enabled(CUpti_CallbackDomain domain, uint32_t cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE &&
               __atomic_load_n(&cb_runtime[cbid], __ATOMIC_RELAXED);
    return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE &&
           __atomic_load_n(&cb_driver[cbid], __ATOMIC_RELAXED);
}

/* Inside the subscriber's callback at the return of a context-wide sync, when no GPU work is in
 * flight: where cuptiFinalize is safe (cuptiFinalize below). */
static _Thread_local bool tl_in_sync_exit_callback;

static bool is_context_sync(CUpti_CallbackDomain domain, uint32_t cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        return cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020 ||
               cbid == CUPTI_RUNTIME_TRACE_CBID_cudaThreadSynchronize_v3020;
    return cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize ||
           cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2;
}

/* The subscriber's callback, in the calling thread, outside our lock (it may call CUPTI). */
static void invoke_callback(CUpti_CallbackDomain domain, uint32_t cbid, CUpti_ApiCallbackSite site,
                            const fake_gpu_op *op, const char *function)
{
    static _Thread_local uint64_t correlation_data;
    CUpti_CallbackFunc fn = atomic_load(&sub_fn);
    if (!fn || !callback_enabled(domain, cbid))
        return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionName = function;
    d.symbolName = op->kind == FAKE_OP_KERNEL ? op->name : NULL;
    static int32_t driver_success; /* CUDA_SUCCESS */
    if (op->kind == FAKE_OP_DRIVER_CALL) {
        d.functionParams = op->params;
        d.functionReturnValue = site == CUPTI_API_EXIT ? &driver_success : NULL;
    }
    cudaLaunchKernel_v7000_params launch;
    static int32_t success;                      /* cudaSuccess */
    if (op->kind == FAKE_OP_API && op->symbol) { /* a static runtime's launch */
        memset(&launch, 0, sizeof launch);
        launch.func = op->symbol;
        launch.gridDim = (dim3){op->grid[0], op->grid[1], op->grid[2]};
        launch.blockDim = (dim3){op->block[0], op->block[1], op->block[2]};
        launch.stream = (cudaStream_t)(uintptr_t)op->stream;
        d.symbolName = op->symbol;
        d.functionParams = &launch;
        d.functionReturnValue = site == CUPTI_API_EXIT ? &success : NULL;
    } else if (op->kind == FAKE_OP_API && op->params) { /* a static runtime's cudaMalloc... */
        d.functionParams = op->params;
        d.functionReturnValue = site == CUPTI_API_EXIT ? &success : NULL;
    }
    d.contextUid = 1;
    d.correlationData = &correlation_data;
    d.correlationId = op->correlation_id;
    tl_in_sync_exit_callback = site == CUPTI_API_EXIT && is_context_sync(domain, cbid);
    fn(atomic_load(&sub_userdata), domain, (CUpti_CallbackId)cbid, &d);
    tl_in_sync_exit_callback = false;
}

/* Like CUPTI after a cuptiFinalize: correlation ids start from 1 again at the next attach. */
static _Atomic uint32_t corr_max_seen, corr_restart;

static uint32_t renumbered(uint32_t corr)
{
    if (!corr)
        return 0;
    uint32_t seen = atomic_load(&corr_max_seen);
    while (corr > seen && !atomic_compare_exchange_weak(&corr_max_seen, &seen, corr)) {
    }
    uint32_t base = atomic_load(&corr_restart);
    return corr > base ? corr - base : corr;
}

static void store_gpu_op(const fake_gpu_op *op)
{
    switch (op->kind) {
    case FAKE_OP_KERNEL:
        store_kernel(op);
        break;
    case FAKE_OP_MEMCPY:
        store_memcpy(op);
        break;
    case FAKE_OP_MEMSET:
        store_memset(op);
        break;
    case FAKE_OP_SYNC:
        store_sync(op);
        break;
    case FAKE_OP_UM:
        store_um(op);
        break;
    default:
        break;
    }
}

/* A GPU op launched by a library's own runtime: what CUPTI sees is a driver call around it. */
static void on_library_op(const fake_gpu_op *in)
{
    fake_gpu_op op = *in;
    uint32_t (*next)(void) = __atomic_load_n(&shared_corr, __ATOMIC_ACQUIRE);
    op.correlation_id = renumbered(next ? next() : atomic_fetch_add(&next_driver_corr, 1));
    const char *fn = "cuLaunchKernel";
    op.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    if (op.kind == FAKE_OP_MEMCPY)
        fn = "cuMemcpyAsync", op.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync;
    else if (op.kind == FAKE_OP_MEMSET)
        fn = "cuMemsetD8Async", op.cbid = CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async;
    else if (op.kind == FAKE_OP_SYNC)
        fn = "cuStreamSynchronize", op.cbid = CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize;
    invoke_callback(CUPTI_CB_DOMAIN_DRIVER_API, op.cbid, CUPTI_API_ENTER, &op, fn);
    pthread_mutex_lock(&lock);
    if (is_enabled(CUPTI_ACTIVITY_KIND_DRIVER)) {
        store_ext_correlation(op.correlation_id);
        fake_gpu_op api = op;
        api.kind = FAKE_OP_API;
        api.name = fn;
        store_api(&api, CUPTI_ACTIVITY_KIND_DRIVER);
    }
    store_gpu_op(&op);
    pthread_mutex_unlock(&lock);
    invoke_callback(CUPTI_CB_DOMAIN_DRIVER_API, op.cbid, CUPTI_API_EXIT, &op, fn);
}

/* A runtime API call of the fake cudart, announced as it returns (its GPU ops came before). */
static void on_runtime_call(const fake_gpu_op *op)
{
    invoke_callback(CUPTI_CB_DOMAIN_RUNTIME_API, op->cbid, CUPTI_API_ENTER, op, op->name);
    if (op->params) { /* a static runtime's call with its parameters takes its time in here */
        uint64_t d = op->end_ns > op->start_ns ? op->end_ns - op->start_ns : 0;
        struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&lock);
    if (is_enabled(CUPTI_ACTIVITY_KIND_RUNTIME))
        store_ext_correlation(op->correlation_id);
    store_api(op, CUPTI_ACTIVITY_KIND_RUNTIME);
    pthread_mutex_unlock(&lock);
    invoke_callback(CUPTI_CB_DOMAIN_RUNTIME_API, op->cbid, CUPTI_API_EXIT, op, op->name);
}

/* A driver call with no GPU work (a module load): only the driver callbacks see it. */
static void on_driver_call(const fake_gpu_op *op)
{
    invoke_callback(CUPTI_CB_DOMAIN_DRIVER_API, op->cbid, CUPTI_API_ENTER, op, op->name);
    uint64_t d = op->end_ns > op->start_ns ? op->end_ns - op->start_ns : 0;
    struct timespec ts = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)};
    nanosleep(&ts, NULL);
    invoke_callback(CUPTI_CB_DOMAIN_DRIVER_API, op->cbid, CUPTI_API_EXIT, op, op->name);
}

static void on_gpu_op(const fake_gpu_op *in, void *ctx)
{
    (void)ctx;
    fake_gpu_op renumbered_op = *in;
    renumbered_op.correlation_id = renumbered(in->correlation_id);
    const fake_gpu_op *op = &renumbered_op;
    /* CUPTI does not follow a process into a forked child. */
    if (owner_pid == 0 || getpid() != owner_pid)
        return;
    if (op->kind == FAKE_OP_DRIVER_CALL) {
        on_driver_call(op);
    } else if (op->kind == FAKE_OP_UM) { /* the driver's, not a call's */
        pthread_mutex_lock(&lock);
        store_gpu_op(op);
        pthread_mutex_unlock(&lock);
    } else if (op->kind == FAKE_OP_API) {
        on_runtime_call(op);
    } else if (op->correlation_id == 0) {
        on_library_op(op);
    } else {
        pthread_mutex_lock(&lock);
        store_gpu_op(op);
        pthread_mutex_unlock(&lock);
    }
}

/* The fake runtime may be loaded after us: look for it whenever a client talks to us. */
static void attach_to_fake_gpu(void)
{
    if (__atomic_load_n(&attached, __ATOMIC_ACQUIRE))
        return;
    void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) /* the same fake GPU under the name of a program with a static cudart's tests */
        h = dlopen("libfake_gpu_static.so", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;
    void (*set)(fake_gpu_listener, void *) =
        (void (*)(fake_gpu_listener, void *))dlsym(h, "fake_gpu_set_listener");
    __atomic_store_n(&shared_corr, (uint32_t(*)(void))dlsym(h, "fake_gpu_next_correlation"),
                     __ATOMIC_RELEASE);
    if (set) {
        set(on_gpu_op, NULL);
        __atomic_store_n(&attached, 1, __ATOMIC_RELEASE);
    }
    dlclose(h);
}

__attribute__((constructor)) static void fake_cupti_load(void)
{
    env.no_driver = getenv("FAKE_CUPTI_NO_DRIVER") && atoi(getenv("FAKE_CUPTI_NO_DRIVER"));
    env.other_subscriber =
        getenv("FAKE_CUPTI_OTHER_SUBSCRIBER") && atoi(getenv("FAKE_CUPTI_OTHER_SUBSCRIBER"));
    env.no_callbacks = getenv("FAKE_CUPTI_NO_CALLBACKS") && atoi(getenv("FAKE_CUPTI_NO_CALLBACKS"));
    env.no_latency = getenv("FAKE_CUPTI_NO_LATENCY") && atoi(getenv("FAKE_CUPTI_NO_LATENCY"));
    env.worker_ms = getenv("FAKE_CUPTI_WORKER_MS") ? atoi(getenv("FAKE_CUPTI_WORKER_MS")) : 0;
    env.extra_drop = getenv("FAKE_CUPTI_DROP") ? strtoul(getenv("FAKE_CUPTI_DROP"), NULL, 10) : 0;
    env.hw_trace = getenv("FAKE_CUPTI_HW_TRACE") ? getenv("FAKE_CUPTI_HW_TRACE") : "0";
    env.two_contexts = getenv("FAKE_CUPTI_TWO_CONTEXTS") != NULL;
    env.register_delay_ms =
        getenv("FAKE_CUPTI_REGISTER_DELAY_MS") ? atoi(getenv("FAKE_CUPTI_REGISTER_DELAY_MS")) : 0;
    const char *log = getenv("FAKE_CUPTI_LOG");
    if (log && log[0])
        env.log_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    attach_to_fake_gpu();
}

/* FAKE_CUPTI_START_GATE: say the start is held, then hold it until the test opens the gate. */
static void wait_at_start_gate(void)
{
    const char *dir = getenv("FAKE_CUPTI_START_GATE");
    if (!dir || !dir[0])
        return;
    char waiting[4096], open_path[4096];
    snprintf(waiting, sizeof waiting, "%s/waiting", dir);
    snprintf(open_path, sizeof open_path, "%s/open", dir);
    int fd = open(waiting, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 120000 && access(open_path, F_OK) != 0; i++)
        nanosleep(&ms, NULL);
}

/* ---------------------------------------------------------------- exported API */

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    log_call(__func__);
    switch (result) {
    case CUPTI_SUCCESS:
        *str = "CUPTI_SUCCESS";
        break;
    case CUPTI_ERROR_INVALID_PARAMETER:
        *str = "CUPTI_ERROR_INVALID_PARAMETER";
        break;
    case CUPTI_ERROR_INVALID_KIND:
        *str = "CUPTI_ERROR_INVALID_KIND";
        break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
        *str = "CUPTI_ERROR_MAX_LIMIT_REACHED";
        break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_UNKNOWN:
        *str = "CUPTI_ERROR_UNKNOWN";
        break;
    default:
        *str = "CUPTI_ERROR_FAKE_OTHER";
        break;
    }
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    log_call(__func__);
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    *timestamp = now_ns();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                  void *userdata)
{
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    if (env.other_subscriber)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (!subscriber || !callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (env.no_callbacks)
        return CUPTI_ERROR_NOT_SUPPORTED;
    CUpti_CallbackFunc none = NULL;
    atomic_store(&sub_userdata, userdata);
    if (!atomic_compare_exchange_strong(&sub_fn, &none, callback))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; /* one subscriber at a time */
    pthread_mutex_lock(&lock);
    owner_pid = getpid();
    pthread_mutex_unlock(&lock);
    attach_to_fake_gpu();
    *subscriber = SUBSCRIBER;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    log_call(__func__);
    if (subscriber != SUBSCRIBER || !atomic_load(&sub_fn))
        return CUPTI_ERROR_INVALID_PARAMETER;
    memset(cb_runtime, 0, sizeof cb_runtime);
    memset(cb_driver, 0, sizeof cb_driver);
    atomic_store(&sub_fn, NULL);
    return CUPTI_SUCCESS;
}

static CUptiResult set_callback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                CUpti_CallbackDomain domain, uint32_t first, uint32_t end)
{
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    if (subscriber != SUBSCRIBER || !atomic_load(&sub_fn))
        return CUPTI_ERROR_INVALID_PARAMETER;
    unsigned char *table = domain == CUPTI_CB_DOMAIN_RUNTIME_API  ? cb_runtime
                           : domain == CUPTI_CB_DOMAIN_DRIVER_API ? cb_driver
                                                                  : NULL;
    size_t size = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof cb_runtime : sizeof cb_driver;
    if (!table)
        return CUPTI_SUCCESS; /* other domains: accepted, never called here */
    if (end > size || first >= end)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (uint32_t i = first; i < end; i++)
        __atomic_store_n(&table[i], enable ? 1 : 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    log_call(__func__);
    return set_callback(enable, subscriber, domain, cbid, cbid + 1);
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain)
{
    log_call(__func__);
    return set_callback(enable, subscriber, domain, 1,
                        domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_RUNTIME_TRACE_CBID_SIZE
                                                              : CUPTI_DRIVER_TRACE_CBID_SIZE);
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    log_call(__func__);
    if (!request || !complete)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (env.register_delay_ms > 0) {
        struct timespec ts = {env.register_delay_ms / 1000,
                              (env.register_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    wait_at_start_gate();
    pthread_mutex_lock(&lock);
    request_cb = request;
    complete_cb = complete;
    pthread_mutex_unlock(&lock);
    attach_to_fake_gpu();
    start_worker();
    return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, unsigned char on)
{
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    if (env.other_subscriber)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if ((unsigned)kind >= sizeof enabled)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&lock);
    enabled[kind] = on;
    owner_pid = getpid();
    pthread_mutex_unlock(&lock);
    attach_to_fake_gpu();
    return CUPTI_SUCCESS;
}

/* The unified-memory counters to record (FAKE_CUPTI_UM=refuse: the platform has none). */
EXPORT CUptiResult cuptiActivityConfigureUnifiedMemoryCounter(
    CUpti_ActivityUnifiedMemoryCounterConfig *config, uint32_t count)
{
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    const char *um = getenv("FAKE_CUPTI_UM");
    if (um && !strcmp(um, "refuse"))
        return CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED;
    if (!config || !count)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (uint32_t i = 0; i < count; i++)
        if (config[i].kind <= 0 ||
            config[i].kind >= CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_COUNT)
            return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&lock);
    for (uint32_t i = 0; i < count; i++)
        um_counter_on[config[i].kind] = config[i].enable != 0;
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

/* Like CUPTI: only before CUDA starts; FAKE_CUPTI_NO_LATENCY=1 accepts it and stamps nothing. */
EXPORT CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t enable)
{
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    __atomic_store_n(&latency_on, enable != 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}

/* Blackwell's hardware-event timestamps; see FAKE_CUPTI_HW_TRACE in the file comment. */
EXPORT CUptiResult cuptiActivityEnableHWTrace(uint8_t enable)
{
    static int calls;
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    if (!strcmp(env.hw_trace, "late") && __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) == 0)
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (!enable || !strcmp(env.hw_trace, "1") || !strcmp(env.hw_trace, "late"))
        return CUPTI_SUCCESS;
    return CUPTI_ERROR_NOT_SUPPORTED;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    static int um_enables;
    log_call(__func__);
    const char *refuse = getenv("FAKE_CUPTI_REFUSE_KIND"); /* a CUPTI without that kind */
    if (refuse && atoi(refuse) == (int)kind)
        return CUPTI_ERROR_NOT_SUPPORTED;
    const char *um = getenv("FAKE_CUPTI_UM");
    if (kind == CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER && um && !strcmp(um, "late") &&
        __atomic_fetch_add(&um_enables, 1, __ATOMIC_RELAXED) == 0)
        return CUPTI_ERROR_NOT_READY;
    return set_kind(kind, 1);
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    log_call(__func__);
    return set_kind(kind, 0);
}

/* Close the current buffer and complete every pending one, outside lock, under deliver_lock. */
static void deliver_all(void)
{
    pthread_mutex_lock(&deliver_lock);
    pthread_mutex_lock(&lock);
    if (cur_buf && cur_used > 0)
        close_buffer();
    int n = pending_count;
    __typeof__(pending[0]) done[MAX_PENDING];
    memcpy(done, pending, sizeof done[0] * (size_t)n);
    pending_count = 0;
    CUpti_BuffersCallbackCompleteFunc cb = complete_cb;
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < n; i++) /* outside our lock: the client calls back into us */
        if (cb)
            cb(NULL, 0, done[i].buf, done[i].size, done[i].valid);
    pthread_mutex_unlock(&deliver_lock);
}

static void *worker_main(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = {env.worker_ms / 1000, (long)(env.worker_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        if (getpid() == owner_pid)
            deliver_all();
    }
    return NULL;
}

static void start_worker(void)
{
    if (env.worker_ms <= 0 || __atomic_exchange_n(&worker_started, 1, __ATOMIC_ACQ_REL))
        return;
    pthread_t t;
    if (pthread_create(&t, NULL, worker_main, NULL) == 0)
        pthread_detach(t);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    attach_to_fake_gpu();
    deliver_all();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    size_t off = 0;
    if (*record) {
        const unsigned char *cur = (const unsigned char *)*record - REC_HDR;
        uint32_t size;
        memcpy(&size, cur, sizeof size);
        off = (size_t)(cur - buffer) + size;
    }
    if (off + REC_HDR > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    uint32_t hdr[2];
    memcpy(hdr, buffer + off, sizeof hdr);
    if (hdr[1] != REC_MAGIC || hdr[0] < REC_HDR || off + hdr[0] > valid)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *record = (CUpti_Activity *)(buffer + off + REC_HDR);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId,
                                                     size_t *count)
{
    log_call(__func__);
    pthread_mutex_lock(&lock);
    *count = dropped;
    dropped = 0;
    if (!drop_reported) {
        drop_reported = 1;
        *count += env.extra_drop;
    }
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    log_call(__func__);
    if (env.no_driver)
        return CUPTI_ERROR_UNKNOWN;
    if ((int)kind <= 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE ||
        ext_depth[kind] == STACK_DEPTH)
        return CUPTI_ERROR_INVALID_PARAMETER;
    ext_stack[kind][ext_depth[kind]++] = id;
    ext_last_corr[kind] = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *lastId)
{
    log_call(__func__);
    if ((int)kind <= 0 || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE || ext_depth[kind] == 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t id = ext_stack[kind][--ext_depth[kind]];
    ext_last_corr[kind] = 0;
    if (lastId)
        *lastId = id;
    return CUPTI_SUCCESS;
}

/* Like CUPTI's detach: records still held are delivered, then the kinds, the callbacks, the buffer
 * callbacks and the subscriber are gone; a client that wants records again must attach anew
 * (kernels meanwhile are not recorded). */
EXPORT CUptiResult cuptiFinalize(void)
{
    log_call(__func__);
    /* The real CUPTI frees the buffers that GPU work in flight still writes its timestamps into:
     * called from another thread it crashed a process on an H200, and at the return of other
     * calls, with CUDA graphs queued, it failed kernels ("unspecified launch failure"). This fake
     * cannot know what is in flight, so it allows only the return of a context-wide sync
     * (FAKE_CUPTI_FINALIZE_ANYWHERE=1: anywhere). */
    if (!tl_in_sync_exit_callback && !getenv("FAKE_CUPTI_FINALIZE_ANYWHERE")) {
        static const char msg[] = "fake_cupti: cuptiFinalize outside the return of a context-wide "
                                  "sync, where GPU work in flight would fail\n";
        if (write(2, msg, sizeof msg - 1) < 0) {
        }
        abort();
    }
    deliver_all();
    pthread_mutex_lock(&lock);
    memset(enabled, 0, sizeof enabled);
    atomic_store(&corr_restart, atomic_load(&corr_max_seen));
    request_cb = NULL;
    complete_cb = NULL;
    pthread_mutex_unlock(&lock);
    memset(cb_runtime, 0, sizeof cb_runtime);
    memset(cb_driver, 0, sizeof cb_driver);
    atomic_store(&sub_fn, NULL);
    return CUPTI_SUCCESS;
}
