/* wrap_runtime.c — CUDA Runtime wrappers: memory, copies, sets, launches, synchronization and
 * version queries (gtrace_api.def categories MEMORY, COPY, SET, LAUNCH, SYNC, INFO).
 * Each records one GT_REC_API_* record and returns the real function's result unchanged. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "gt_wrap.h"

#define STREAM_ID(s) ((uint64_t)(uintptr_t)(s))
/* Resolve the real function or fail the call with missing_rc (warned once). */
#define GT_REAL(s, type, missing_rc)                                                               \
    __typeof__(type) real = (__typeof__(type))gt_sym_get(s);                                       \
    if (__builtin_expect(!real, 0)) {                                                              \
        gt_sym_warn_missing(s);                                                                    \
        return missing_rc;                                                                         \
    }
#define NOT_SUPPORTED cudaErrorNotSupported

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args, size_t smem,
                               cudaStream_t stream);

/* ------------------------------------------------------------------ state gathered once */

_Atomic int gt_wrap_runtime_seen;
static gt_sym sym_runtime_version = GT_SYM_INIT("cudaRuntimeGetVersion", GT_LIB_CUDART);
static gt_sym sym_driver_version = GT_SYM_INIT("cudaDriverGetVersion", GT_LIB_CUDART);
static gt_sym sym_device_count = GT_SYM_INIT("cudaGetDeviceCount", GT_LIB_CUDART);
static gt_sym sym_device_props = GT_SYM_INIT("cudaGetDeviceProperties", GT_LIB_CUDART);
static gt_sym sym_get_device = GT_SYM_INIT("cudaGetDevice", GT_LIB_CUDART);

static void collect_devices(void)
{
    typedef cudaError_t (*count_fn)(int *);
    typedef cudaError_t (*props_fn)(struct cudaDeviceProp *, int);
    count_fn count = (count_fn)gt_sym_get(&sym_device_count);
    props_fn props = (props_fn)gt_sym_get(&sym_device_props);
    int n = 0;
    if (!count || !props || count(&n) != cudaSuccess)
        return;
    for (int d = 0; d < n && d < GT_MAX_DEVICES; d++) {
        struct cudaDeviceProp p;
        memset(&p, 0, sizeof p);
        if (props(&p, d) != cudaSuccess)
            continue;
        gt_device_info info;
        memset(&info, 0, sizeof info);
        memcpy(info.name, p.name, sizeof info.name - 1);
        info.ordinal = d;
        info.cc_major = p.major;
        info.cc_minor = p.minor;
        info.sm_count = p.multiProcessorCount;
        info.total_mem_bytes = p.totalGlobalMem;
        gt_core_set_device(d, &info);
    }
}

void *gt_wrap_runtime_version_fn(void)
{
    static atomic_bool tried; /* a missing symbol is looked for once, not on every library call */
    void *p = atomic_load_explicit(&sym_runtime_version.real, memory_order_acquire);
    if (p || atomic_load_explicit(&tried, memory_order_acquire))
        return p;
    p = gt_sym_get(&sym_runtime_version);
    atomic_store_explicit(&tried, true, memory_order_release);
    return p;
}

/* Threads whose first call comes while another thread does the first use wait for it (bounded
 * by elapsed time: it may wait up to 2 s for CUPTI's start itself), so that no launch of theirs
 * comes before CUPTI is attached: its kernel would never be recorded. Calls are not nested here
 * (the guard keeps a real function's own calls out of gt_call_begin). Once a wait ran out, later
 * calls go on at once: a start stuck for good (a deadlock on the loader's lock) must not cost every
 * call the bound; what they launch meanwhile is counted (gt_wrap_note_call_unattached). */
#define FIRST_USE_WAIT_MS 3000
static atomic_bool first_use_wait_expired;
static void wait_for_first_use(void)
{
    if (atomic_load_explicit(&first_use_wait_expired, memory_order_relaxed))
        return;
    struct timespec t0, now, ms = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&gt_wrap_runtime_seen) != GT_WRAP_RUNTIME_DONE) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 >=
            FIRST_USE_WAIT_MS) {
            atomic_store(&first_use_wait_expired, true);
            return;
        }
        nanosleep(&ms, NULL);
    }
}

/* Whether a call's GPU work is what CUPTI records (kernels, copies, memsets): launches, copies,
 * memsets, and the cuBLAS/cuDNN calls that run kernels; not allocations, synchronizations, nor
 * cuDNN's algorithm queries and descriptor calls. */
static bool gives_gpu_work(uint32_t func)
{
    switch (gt_api_func_category(func)) {
    case GT_CAT_COPY:
    case GT_CAT_SET:
    case GT_CAT_LAUNCH:
    case GT_CAT_CUBLAS:
        return true;
    case GT_CAT_CUDNN:
        return func != GT_FN_cudnnGetConvolutionForwardAlgorithm_v7 &&
               func != GT_FN_cudnnGetConvolutionBackwardDataAlgorithm_v7 &&
               func != GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7 &&
               func != GT_FN_cudnnSetConvolutionMathType && func != GT_FN_cudnnBackendFinalize &&
               func != GT_FN_cudnnBackendDestroyDescriptor;
    case GT_CAT_DRIVER:
        return func == GT_FN_cuLaunchKernel || func == GT_FN_cuLaunchKernelEx ||
               (func >= GT_FN_cuMemcpyHtoD_v2 && func <= GT_FN_cuMemcpyAsync) ||
               (func >= GT_FN_cuMemcpyDtoDAsync_v2 && func <= GT_FN_cuMemsetD32Async);
    default:
        return false;
    }
}

/* A start that outlasted the bounded waits above (wait_for_first_use, and CUPTI's own
 * START_WAIT_MS) lets the call go on before CUPTI is attached: counted, never silently lost. */
void gt_wrap_note_call_unattached(uint32_t func)
{
    if (gives_gpu_work(func))
        gt_core_note_call_before_cupti();
}

void gt_wrap_begin_unpaired(const gt_call *c)
{
    gt_cupti_unpaired_begin(c->corr_id);
    if (gt_wrap_cupti_due_unattached())
        gt_wrap_note_call_unattached(c->func);
}

/* A fork while another thread did the first use: that thread is not in the child, which does it
 * again at its first call. */
void gt_wrap_runtime_fork_child(void)
{
    int under_way = 1;
    atomic_compare_exchange_strong(&gt_wrap_runtime_seen, &under_way, 0);
    atomic_store(&first_use_wait_expired, false);
}

void gt_wrap_runtime_first_use(void)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&gt_wrap_runtime_seen, &none, 1)) {
        wait_for_first_use();
        return;
    }
    typedef cudaError_t (*version_fn)(int *);
    version_fn rt = (version_fn)gt_sym_get(&sym_runtime_version);
    version_fn drv = (version_fn)gt_sym_get(&sym_driver_version);
    int runtime = 0, driver = 0;
    if (rt && rt(&runtime) != cudaSuccess)
        runtime = 0;
    if (drv && drv(&driver) != cudaSuccess)
        driver = 0;
    gt_core_set_versions(driver, runtime, 0, 0, 0, 0);
    collect_devices();
    gt_cupti_note_wrapper_fired();
    atomic_store(&gt_wrap_runtime_seen, GT_WRAP_RUNTIME_DONE);
}

__thread __attribute__((tls_model("initial-exec"))) int gt_wrap_tls_device_plus1;
#define tls_device_plus1 gt_wrap_tls_device_plus1

int gt_wrap_current_device_slow(void)
{
    typedef cudaError_t (*fn_t)(int *);
    fn_t real = (fn_t)gt_sym_get(&sym_get_device);
    int d = -1;
    if (!real || real(&d) != cudaSuccess)
        return -1;
    tls_device_plus1 = d + 1;
    return d;
}

/* cudaSetDevice is not recorded: wrapped only to keep the per-thread device cache right. */
static gt_sym sym_set_device = GT_SYM_INIT("cudaSetDevice", GT_LIB_CUDART);
GT_EXPORT cudaError_t cudaSetDevice(int device)
{
    typedef cudaError_t (*fn_t)(int);
    GT_REAL(&sym_set_device, fn_t, NOT_SUPPORTED)
    cudaError_t r = real(device);
    tls_device_plus1 = 0;
    return r;
}

/* ------------------------------------------------------------------ kernel names */

#define KN_SLOTS 8192
static struct {
    _Atomic uintptr_t fn;
    _Atomic uint32_t id;
} kernel_names[KN_SLOTS];
static gt_sym sym_func_get_name = GT_SYM_INIT("cudaFuncGetName", GT_LIB_CUDART);
static gt_sym sym_kernel_get_name = GT_SYM_INIT("cuKernelGetName", GT_LIB_CUDA);
static gt_sym sym_cufunc_get_name = GT_SYM_INIT("cuFuncGetName", GT_LIB_CUDA);

static uint32_t intern_pointer(uintptr_t p)
{
    char buf[2 + 16 + 1] = "0x";
    static const char hex[] = "0123456789abcdef";
    int n = 2;
    for (int shift = 60; shift >= 0; shift -= 4)
        if ((p >> shift) || n > 2 || shift == 0)
            buf[n++] = hex[(p >> shift) & 15];
    buf[n] = 0;
    return gt_intern(buf);
}

static uint32_t resolve_kernel_name(const void *fn, int kind)
{
    typedef int (*name_fn)(const char **, const void *);
    const char *name = NULL;
    gt_sym *order[2] = {&sym_func_get_name, NULL};
    if (kind == 1)
        order[0] = &sym_kernel_get_name, order[1] = &sym_func_get_name;
    if (kind == 2)
        order[0] = &sym_cufunc_get_name;
    for (int i = 0; i < 2 && order[i] && !name; i++) {
        name_fn f = (name_fn)gt_sym_get(order[i]);
        if (!f || f(&name, fn) != 0)
            name = NULL;
    }
    return name && name[0] ? gt_intern(name) : intern_pointer((uintptr_t)fn);
}

uint32_t gt_kernel_name_id(const void *fn, int kind)
{
    uintptr_t key = (uintptr_t)fn;
    if (!key)
        return 0;
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (KN_SLOTS - 1);
    for (int probe = 0; probe < 64; probe++, i = (i + 1) & (KN_SLOTS - 1)) {
        uintptr_t f = atomic_load_explicit(&kernel_names[i].fn, memory_order_acquire);
        if (f == key) {
            uint32_t id = atomic_load_explicit(&kernel_names[i].id, memory_order_acquire);
            return id ? id : resolve_kernel_name(fn, kind); /* being filled by another thread */
        }
        if (f == 0) {
            uintptr_t expected = 0;
            if (!atomic_compare_exchange_strong(&kernel_names[i].fn, &expected, key)) {
                if (expected != key)
                    continue;
                return resolve_kernel_name(fn, kind);
            }
            uint32_t id = resolve_kernel_name(fn, kind);
            atomic_store_explicit(&kernel_names[i].id, id, memory_order_release);
            return id;
        }
    }
    return resolve_kernel_name(fn, kind); /* table crowded: intern is idempotent, only slower */
}

/* ------------------------------------------------------------------ memory */

/* An allocation returning *out: one implementation for all the (void **, size_t, ...) shapes. */
#define ALLOC_BODY(fnid, kind, stream, call_real, out, bytes, pinned_kind)                         \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, true);                                                           \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    uint64_t got = (r == cudaSuccess && (out)) ? (uint64_t)(uintptr_t) * (out) : 0;                \
    if (got && (pinned_kind))                                                                      \
        gt_pinned_add(got, bytes, pinned_kind);                                                    \
    if (got && (pinned_kind) == GT_MEM_MANAGED) /* CUPTI's unified-memory counters, from now */    \
        gt_cupti_note_managed_memory();                                                            \
    gt_record_alloc(&c, t_end, flags, r, stream, got, bytes, kind, 0);                             \
    gt_fast_guard_leave();                                                                         \
    return r;

static cudaError_t malloc_impl(gt_sym *s, uint16_t flags, void **p, size_t n)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t), NOT_SUPPORTED)
    ALLOC_BODY(GT_FN_cudaMalloc, GT_ALLOC_DEVICE, 0, real(p, n), p, n, 0)
}
static cudaError_t malloc_async_impl(gt_sym *s, uint16_t flags, void **p, size_t n, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t, cudaStream_t), NOT_SUPPORTED)
    ALLOC_BODY(GT_FN_cudaMallocAsync, GT_ALLOC_DEVICE_ASYNC, STREAM_ID(st), real(p, n, st), p, n, 0)
}
static cudaError_t malloc_managed_impl(gt_sym *s, uint16_t flags, void **p, size_t n, unsigned f)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t, unsigned), NOT_SUPPORTED)
    ALLOC_BODY(GT_FN_cudaMallocManaged, GT_ALLOC_MANAGED, 0, real(p, n, f), p, n, GT_MEM_MANAGED)
}
static cudaError_t malloc_host_impl(gt_sym *s, uint16_t flags, void **p, size_t n)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t), NOT_SUPPORTED)
    ALLOC_BODY(GT_FN_cudaMallocHost, GT_ALLOC_HOST_PINNED, 0, real(p, n), p, n, GT_MEM_PINNED)
}
static cudaError_t host_alloc_impl(gt_sym *s, uint16_t flags, void **p, size_t n, unsigned f)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t, unsigned), NOT_SUPPORTED)
    ALLOC_BODY(GT_FN_cudaHostAlloc, GT_ALLOC_HOST_PINNED, 0, real(p, n, f), p, n, GT_MEM_PINNED)
}
static cudaError_t malloc_pitch_impl(gt_sym *s, uint16_t flags, void **p, size_t *pitch, size_t w,
                                     size_t h)
{
    GT_REAL(s, cudaError_t(*)(void **, size_t *, size_t, size_t), NOT_SUPPORTED)
    if (!gt_fast_guard_enter())
        return real(p, pitch, w, h);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaMallocPitch, true, true);
    cudaError_t r = real(p, pitch, w, h);
    uint64_t t_end = gt_call_end(&c);
    bool ok = r == cudaSuccess && p && pitch;
    gt_record_alloc(&c, t_end, flags, r, 0, ok ? (uint64_t)(uintptr_t)*p : 0,
                    ok ? *pitch * h : w * h, GT_ALLOC_PITCH, 0);
    gt_fast_guard_leave();
    return r;
}
static cudaError_t host_register_impl(gt_sym *s, uint16_t flags, void *p, size_t n, unsigned f)
{
    GT_REAL(s, cudaError_t(*)(void *, size_t, unsigned), NOT_SUPPORTED)
    if (!gt_fast_guard_enter())
        return real(p, n, f);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaHostRegister, true, true);
    cudaError_t r = real(p, n, f);
    uint64_t t_end = gt_call_end(&c);
    if (r == cudaSuccess)
        gt_pinned_add((uint64_t)(uintptr_t)p, n, GT_MEM_PINNED);
    gt_record_alloc(&c, t_end, flags, r, 0, (uint64_t)(uintptr_t)p, n, GT_ALLOC_HOST_REGISTERED, 0);
    gt_fast_guard_leave();
    return r;
}

/* A free: the pinned table forgets the range before the real call (the memory may be reused by
 * another thread as soon as it returns). */
static cudaError_t free_common(gt_sym *s, uint16_t flags, uint32_t fnid, uint32_t kind, void *p,
                               cudaStream_t st, bool has_stream, bool pinned)
{
    typedef cudaError_t (*free_fn)(void *);
    typedef cudaError_t (*free_async_fn)(void *, cudaStream_t);
    void *realp = gt_sym_get(s);
    if (!realp) {
        gt_sym_warn_missing(s);
        return NOT_SUPPORTED;
    }
#define CALL_FREE() (has_stream ? ((free_async_fn)realp)(p, st) : ((free_fn)realp)(p))
    uint64_t bytes = 0;
    if (!gt_fast_guard_enter()) {
        if (pinned)
            gt_pinned_remove((uint64_t)(uintptr_t)p);
        return CALL_FREE();
    }
    gt_call c;
    gt_call_begin(&c, fnid, true, true);
    if (pinned)
        bytes = gt_pinned_remove((uint64_t)(uintptr_t)p);
    cudaError_t r = CALL_FREE();
    uint64_t t_end = gt_call_end(&c);
    gt_record_alloc(&c, t_end, flags, r, STREAM_ID(st), (uint64_t)(uintptr_t)p, bytes, kind, 1);
    gt_fast_guard_leave();
    return r;
#undef CALL_FREE
}
static cudaError_t free_impl(gt_sym *s, uint16_t flags, void *p)
{
    return free_common(s, flags, GT_FN_cudaFree, GT_ALLOC_DEVICE, p, 0, false, true /* managed */);
}
static cudaError_t free_async_impl(gt_sym *s, uint16_t flags, void *p, cudaStream_t st)
{
    return free_common(s, flags, GT_FN_cudaFreeAsync, GT_ALLOC_DEVICE_ASYNC, p, st, true, false);
}
static cudaError_t free_host_impl(gt_sym *s, uint16_t flags, void *p)
{
    return free_common(s, flags, GT_FN_cudaFreeHost, GT_ALLOC_HOST_PINNED, p, 0, false, true);
}
static cudaError_t host_unregister_impl(gt_sym *s, uint16_t flags, void *p)
{
    return free_common(s, flags, GT_FN_cudaHostUnregister, GT_ALLOC_HOST_REGISTERED, p, 0, false,
                       true);
}

GT_ENTRY(cudaError_t, cudaMalloc, GT_LIB_CUDART, malloc_impl, 0, (void **p, size_t n), (p, n))
GT_ENTRY(cudaError_t, cudaFree, GT_LIB_CUDART, free_impl, 0, (void *p), (p))
GT_ENTRY(cudaError_t, cudaMallocAsync, GT_LIB_CUDART, malloc_async_impl, 0,
         (void **p, size_t n, cudaStream_t s), (p, n, s))
GT_ENTRY(cudaError_t, cudaMallocAsync_ptsz, GT_LIB_CUDART, malloc_async_impl, GT_RF_PTDS,
         (void **p, size_t n, cudaStream_t s), (p, n, s))
GT_ENTRY(cudaError_t, cudaFreeAsync, GT_LIB_CUDART, free_async_impl, 0, (void *p, cudaStream_t s),
         (p, s))
GT_ENTRY(cudaError_t, cudaFreeAsync_ptsz, GT_LIB_CUDART, free_async_impl, GT_RF_PTDS,
         (void *p, cudaStream_t s), (p, s))
GT_ENTRY(cudaError_t, cudaMallocManaged, GT_LIB_CUDART, malloc_managed_impl, 0,
         (void **p, size_t n, unsigned int f), (p, n, f))
GT_ENTRY(cudaError_t, cudaMallocHost, GT_LIB_CUDART, malloc_host_impl, 0, (void **p, size_t n),
         (p, n))
GT_ENTRY(cudaError_t, cudaHostAlloc, GT_LIB_CUDART, host_alloc_impl, 0,
         (void **p, size_t n, unsigned int f), (p, n, f))
GT_ENTRY(cudaError_t, cudaFreeHost, GT_LIB_CUDART, free_host_impl, 0, (void *p), (p))
GT_ENTRY(cudaError_t, cudaHostRegister, GT_LIB_CUDART, host_register_impl, 0,
         (void *p, size_t n, unsigned int f), (p, n, f))
GT_ENTRY(cudaError_t, cudaHostUnregister, GT_LIB_CUDART, host_unregister_impl, 0, (void *p), (p))
GT_ENTRY(cudaError_t, cudaMallocPitch, GT_LIB_CUDART, malloc_pitch_impl, 0,
         (void **p, size_t *pitch, size_t w, size_t h), (p, pitch, w, h))

/* ------------------------------------------------------------------ copies and sets */

static bool is_host_kind(uint8_t k)
{
    return k == GT_MEM_PAGEABLE || k == GT_MEM_PINNED;
}

GT_WRAP_INLINE copy_info classify_copy(int kind, const void *dst, const void *src, bool is_async)
{
    copy_info ci = {.dir = (uint8_t)kind, .is_async = is_async, .peer_device = -1};
    switch (kind) {
    case cudaMemcpyHostToDevice:
        ci.src_kind = gt_classify_ptr(src), ci.dst_kind = GT_MEM_DEVICE;
        break;
    case cudaMemcpyDeviceToHost:
        ci.src_kind = GT_MEM_DEVICE, ci.dst_kind = gt_classify_ptr(dst);
        break;
    case cudaMemcpyDeviceToDevice:
        ci.src_kind = ci.dst_kind = GT_MEM_DEVICE;
        break;
    default: /* HostToHost and Default: the pointers say */
        ci.src_kind = gt_classify_ptr(src), ci.dst_kind = gt_classify_ptr(dst);
        if (kind == cudaMemcpyDefault) {
            bool sh = is_host_kind(ci.src_kind), dh = is_host_kind(ci.dst_kind);
            ci.dir = sh ? (dh ? GT_DIR_H2H : GT_DIR_H2D) : (dh ? GT_DIR_D2H : GT_DIR_D2D);
        }
        break;
    }
    return ci;
}

copy_info gt_classify_copy(int kind, const void *dst, const void *src, bool is_async)
{
    return classify_copy(kind, dst, src, is_async);
}

bool gt_copy_wants_stack(const copy_info *ci)
{
    return !ci->is_async || ci->src_kind == GT_MEM_PAGEABLE || ci->dst_kind == GT_MEM_PAGEABLE;
}

/* The shared body of every copy wrapper: classify, call, record. */
#define COPY_BODY(fnid, call_real, kind, dst, src, bytes, is_async, stream)                        \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    copy_info ci = classify_copy(kind, dst, src, is_async);                                        \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, gt_copy_wants_stack(&ci));                                       \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    gt_record_copy(&c, t_end, flags, r, STREAM_ID(stream), &ci, dst, src, bytes);                  \
    gt_fast_guard_leave();                                                                         \
    return r;

typedef enum cudaMemcpyKind copy_kind_t;

static cudaError_t memcpy_impl(gt_sym *s, uint16_t flags, void *d, const void *src, size_t n,
                               copy_kind_t k)
{
    GT_REAL(s, cudaError_t(*)(void *, const void *, size_t, copy_kind_t), NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpy, real(d, src, n, k), k, d, src, n, false, 0)
}
static cudaError_t memcpy_async_impl(gt_sym *s, uint16_t flags, void *d, const void *src, size_t n,
                                     copy_kind_t k, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(void *, const void *, size_t, copy_kind_t, cudaStream_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpyAsync, real(d, src, n, k, st), k, d, src, n, true, st)
}
static cudaError_t memcpy2d_impl(gt_sym *s, uint16_t flags, void *d, size_t dp, const void *src,
                                 size_t sp, size_t w, size_t h, copy_kind_t k)
{
    GT_REAL(s, cudaError_t(*)(void *, size_t, const void *, size_t, size_t, size_t, copy_kind_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpy2D, real(d, dp, src, sp, w, h, k), k, d, src, (uint64_t)w * h, false,
              0)
}
static cudaError_t memcpy2d_async_impl(gt_sym *s, uint16_t flags, void *d, size_t dp,
                                       const void *src, size_t sp, size_t w, size_t h,
                                       copy_kind_t k, cudaStream_t st)
{
    GT_REAL(s,
            cudaError_t(*)(void *, size_t, const void *, size_t, size_t, size_t, copy_kind_t,
                           cudaStream_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpy2DAsync, real(d, dp, src, sp, w, h, k, st), k, d, src,
              (uint64_t)w * h, true, st)
}
static cudaError_t to_symbol_impl(gt_sym *s, uint16_t flags, const void *sym, const void *src,
                                  size_t n, size_t off, copy_kind_t k)
{
    GT_REAL(s, cudaError_t(*)(const void *, const void *, size_t, size_t, copy_kind_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpyToSymbol, real(sym, src, n, off, k), k, sym, src, n, false, 0)
}
static cudaError_t from_symbol_impl(gt_sym *s, uint16_t flags, void *d, const void *sym, size_t n,
                                    size_t off, copy_kind_t k)
{
    GT_REAL(s, cudaError_t(*)(void *, const void *, size_t, size_t, copy_kind_t), NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpyFromSymbol, real(d, sym, n, off, k), k, d, sym, n, false, 0)
}
static cudaError_t to_symbol_async_impl(gt_sym *s, uint16_t flags, const void *sym, const void *src,
                                        size_t n, size_t off, copy_kind_t k, cudaStream_t st)
{
    GT_REAL(s,
            cudaError_t(*)(const void *, const void *, size_t, size_t, copy_kind_t, cudaStream_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpyToSymbolAsync, real(sym, src, n, off, k, st), k, sym, src, n, true,
              st)
}
static cudaError_t from_symbol_async_impl(gt_sym *s, uint16_t flags, void *d, const void *sym,
                                          size_t n, size_t off, copy_kind_t k, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(void *, const void *, size_t, size_t, copy_kind_t, cudaStream_t),
            NOT_SUPPORTED)
    COPY_BODY(GT_FN_cudaMemcpyFromSymbolAsync, real(d, sym, n, off, k, st), k, d, sym, n, true, st)
}

static cudaError_t peer_common(gt_sym *s, uint16_t flags, uint32_t fnid, void *d, int dd,
                               const void *src, int sd, size_t n, cudaStream_t st, bool is_async)
{
    typedef cudaError_t (*sync_fn)(void *, int, const void *, int, size_t);
    typedef cudaError_t (*async_fn)(void *, int, const void *, int, size_t, cudaStream_t);
    void *realp = gt_sym_get(s);
    if (!realp) {
        gt_sym_warn_missing(s);
        return NOT_SUPPORTED;
    }
#define CALL_PEER()                                                                                \
    (is_async ? ((async_fn)realp)(d, dd, src, sd, n, st) : ((sync_fn)realp)(d, dd, src, sd, n))
    if (!gt_fast_guard_enter())
        return CALL_PEER();
    copy_info ci = {.dir = GT_DIR_D2D,
                    .src_kind = GT_MEM_DEVICE,
                    .dst_kind = GT_MEM_DEVICE,
                    .is_async = is_async,
                    .peer_device = dd};
    gt_call c;
    gt_call_begin(&c, fnid, true, !is_async);
    c.device = sd;
    cudaError_t r = CALL_PEER();
    uint64_t t_end = gt_call_end(&c);
    gt_record_copy(&c, t_end, flags, r, STREAM_ID(st), &ci, d, src, n);
    gt_fast_guard_leave();
    return r;
#undef CALL_PEER
}
static cudaError_t peer_impl(gt_sym *s, uint16_t flags, void *d, int dd, const void *src, int sd,
                             size_t n)
{
    return peer_common(s, flags, GT_FN_cudaMemcpyPeer, d, dd, src, sd, n, 0, false);
}
static cudaError_t peer_async_impl(gt_sym *s, uint16_t flags, void *d, int dd, const void *src,
                                   int sd, size_t n, cudaStream_t st)
{
    return peer_common(s, flags, GT_FN_cudaMemcpyPeerAsync, d, dd, src, sd, n, st, true);
}

GT_ENTRY(cudaError_t, cudaMemcpy, GT_LIB_CUDART, memcpy_impl, 0,
         (void *d, const void *s, size_t n, copy_kind_t k), (d, s, n, k))
GT_ENTRY(cudaError_t, cudaMemcpy_ptds, GT_LIB_CUDART, memcpy_impl, GT_RF_PTDS,
         (void *d, const void *s, size_t n, copy_kind_t k), (d, s, n, k))
GT_ENTRY(cudaError_t, cudaMemcpyAsync, GT_LIB_CUDART, memcpy_async_impl, 0,
         (void *d, const void *s, size_t n, copy_kind_t k, cudaStream_t st), (d, s, n, k, st))
GT_ENTRY(cudaError_t, cudaMemcpyAsync_ptsz, GT_LIB_CUDART, memcpy_async_impl, GT_RF_PTDS,
         (void *d, const void *s, size_t n, copy_kind_t k, cudaStream_t st), (d, s, n, k, st))
GT_ENTRY(cudaError_t, cudaMemcpy2D, GT_LIB_CUDART, memcpy2d_impl, 0,
         (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, copy_kind_t k),
         (d, dp, s, sp, w, h, k))
GT_ENTRY(cudaError_t, cudaMemcpy2D_ptds, GT_LIB_CUDART, memcpy2d_impl, GT_RF_PTDS,
         (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, copy_kind_t k),
         (d, dp, s, sp, w, h, k))
GT_ENTRY(cudaError_t, cudaMemcpy2DAsync, GT_LIB_CUDART, memcpy2d_async_impl, 0,
         (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, copy_kind_t k,
          cudaStream_t st),
         (d, dp, s, sp, w, h, k, st))
GT_ENTRY(cudaError_t, cudaMemcpy2DAsync_ptsz, GT_LIB_CUDART, memcpy2d_async_impl, GT_RF_PTDS,
         (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, copy_kind_t k,
          cudaStream_t st),
         (d, dp, s, sp, w, h, k, st))
GT_ENTRY(cudaError_t, cudaMemcpyPeer, GT_LIB_CUDART, peer_impl, 0,
         (void *d, int dd, const void *s, int sd, size_t n), (d, dd, s, sd, n))
GT_ENTRY(cudaError_t, cudaMemcpyPeerAsync, GT_LIB_CUDART, peer_async_impl, 0,
         (void *d, int dd, const void *s, int sd, size_t n, cudaStream_t st), (d, dd, s, sd, n, st))
GT_ENTRY(cudaError_t, cudaMemcpyToSymbol, GT_LIB_CUDART, to_symbol_impl, 0,
         (const void *sym, const void *s, size_t n, size_t off, copy_kind_t k), (sym, s, n, off, k))
GT_ENTRY(cudaError_t, cudaMemcpyToSymbol_ptds, GT_LIB_CUDART, to_symbol_impl, GT_RF_PTDS,
         (const void *sym, const void *s, size_t n, size_t off, copy_kind_t k), (sym, s, n, off, k))
GT_ENTRY(cudaError_t, cudaMemcpyFromSymbol, GT_LIB_CUDART, from_symbol_impl, 0,
         (void *d, const void *sym, size_t n, size_t off, copy_kind_t k), (d, sym, n, off, k))
GT_ENTRY(cudaError_t, cudaMemcpyFromSymbol_ptds, GT_LIB_CUDART, from_symbol_impl, GT_RF_PTDS,
         (void *d, const void *sym, size_t n, size_t off, copy_kind_t k), (d, sym, n, off, k))
GT_ENTRY(cudaError_t, cudaMemcpyToSymbolAsync, GT_LIB_CUDART, to_symbol_async_impl, 0,
         (const void *sym, const void *s, size_t n, size_t off, copy_kind_t k, cudaStream_t st),
         (sym, s, n, off, k, st))
GT_ENTRY(cudaError_t, cudaMemcpyToSymbolAsync_ptsz, GT_LIB_CUDART, to_symbol_async_impl, GT_RF_PTDS,
         (const void *sym, const void *s, size_t n, size_t off, copy_kind_t k, cudaStream_t st),
         (sym, s, n, off, k, st))
GT_ENTRY(cudaError_t, cudaMemcpyFromSymbolAsync, GT_LIB_CUDART, from_symbol_async_impl, 0,
         (void *d, const void *sym, size_t n, size_t off, copy_kind_t k, cudaStream_t st),
         (d, sym, n, off, k, st))
GT_ENTRY(cudaError_t, cudaMemcpyFromSymbolAsync_ptsz, GT_LIB_CUDART, from_symbol_async_impl,
         GT_RF_PTDS,
         (void *d, const void *sym, size_t n, size_t off, copy_kind_t k, cudaStream_t st),
         (d, sym, n, off, k, st))

void gt_record_set(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                   const void *p, uint64_t bytes, int value, bool is_async)
{
    gt_rec_api_memset *rec = gt_fast_record_begin(GT_REC_API_MEMSET, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->ptr = (uint64_t)(uintptr_t)p;
    rec->bytes = bytes;
    rec->value = value;
    rec->is_async = is_async;
    gt_fast_record_commit(rec);
}

#define SET_BODY(fnid, call_real, p, bytes, value, is_async, stream)                               \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, !(is_async));                                                    \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    gt_record_set(&c, t_end, flags, r, STREAM_ID(stream), p, bytes, value, is_async);              \
    gt_fast_guard_leave();                                                                         \
    return r;

static cudaError_t memset_impl(gt_sym *s, uint16_t flags, void *p, int v, size_t n)
{
    GT_REAL(s, cudaError_t(*)(void *, int, size_t), NOT_SUPPORTED)
    SET_BODY(GT_FN_cudaMemset, real(p, v, n), p, n, v, false, 0)
}
static cudaError_t memset_async_impl(gt_sym *s, uint16_t flags, void *p, int v, size_t n,
                                     cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(void *, int, size_t, cudaStream_t), NOT_SUPPORTED)
    SET_BODY(GT_FN_cudaMemsetAsync, real(p, v, n, st), p, n, v, true, st)
}
static cudaError_t memset2d_impl(gt_sym *s, uint16_t flags, void *p, size_t pitch, int v, size_t w,
                                 size_t h)
{
    GT_REAL(s, cudaError_t(*)(void *, size_t, int, size_t, size_t), NOT_SUPPORTED)
    SET_BODY(GT_FN_cudaMemset2D, real(p, pitch, v, w, h), p, (uint64_t)w * h, v, false, 0)
}
static cudaError_t memset2d_async_impl(gt_sym *s, uint16_t flags, void *p, size_t pitch, int v,
                                       size_t w, size_t h, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(void *, size_t, int, size_t, size_t, cudaStream_t), NOT_SUPPORTED)
    SET_BODY(GT_FN_cudaMemset2DAsync, real(p, pitch, v, w, h, st), p, (uint64_t)w * h, v, true, st)
}

GT_ENTRY(cudaError_t, cudaMemset, GT_LIB_CUDART, memset_impl, 0, (void *p, int v, size_t n),
         (p, v, n))
GT_ENTRY(cudaError_t, cudaMemset_ptds, GT_LIB_CUDART, memset_impl, GT_RF_PTDS,
         (void *p, int v, size_t n), (p, v, n))
GT_ENTRY(cudaError_t, cudaMemsetAsync, GT_LIB_CUDART, memset_async_impl, 0,
         (void *p, int v, size_t n, cudaStream_t st), (p, v, n, st))
GT_ENTRY(cudaError_t, cudaMemsetAsync_ptsz, GT_LIB_CUDART, memset_async_impl, GT_RF_PTDS,
         (void *p, int v, size_t n, cudaStream_t st), (p, v, n, st))
GT_ENTRY(cudaError_t, cudaMemset2D, GT_LIB_CUDART, memset2d_impl, 0,
         (void *p, size_t pitch, int v, size_t w, size_t h), (p, pitch, v, w, h))
GT_ENTRY(cudaError_t, cudaMemset2D_ptds, GT_LIB_CUDART, memset2d_impl, GT_RF_PTDS,
         (void *p, size_t pitch, int v, size_t w, size_t h), (p, pitch, v, w, h))
GT_ENTRY(cudaError_t, cudaMemset2DAsync, GT_LIB_CUDART, memset2d_async_impl, 0,
         (void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t st),
         (p, pitch, v, w, h, st))
GT_ENTRY(cudaError_t, cudaMemset2DAsync_ptsz, GT_LIB_CUDART, memset2d_async_impl, GT_RF_PTDS,
         (void *p, size_t pitch, int v, size_t w, size_t h, cudaStream_t st),
         (p, pitch, v, w, h, st))

/* ------------------------------------------------------------------ launches */

GT_WRAP_INLINE void record_launch(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                                  uint64_t stream, const void *fn, int name_kind, dim3 g, dim3 b,
                                  uint64_t smem, uint64_t graph_exec)
{
    gt_rec_api_launch *rec = gt_fast_record_begin(GT_REC_API_LAUNCH, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->function = (uint64_t)(uintptr_t)fn;
    rec->name_id = fn ? gt_kernel_name_id(fn, name_kind) : 0;
    rec->grid[0] = g.x, rec->grid[1] = g.y, rec->grid[2] = g.z;
    rec->block[0] = b.x, rec->block[1] = b.y, rec->block[2] = b.z;
    rec->shared_mem = (uint32_t)smem;
    rec->graph_exec = graph_exec;
    gt_fast_record_commit(rec);
}

/* Kernel names are resolved before the real call: a failing launch still gets its name, and the
 * record (opened after the call) never holds the intern lock. */
#define LAUNCH_BODY(fnid, call_real, fn, name_kind, g, b, smem, stream)                            \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, false);                                                          \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    record_launch(&c, t_end, flags, r, STREAM_ID(stream), fn, name_kind, g, b, smem, 0);           \
    gt_fast_guard_leave();                                                                         \
    return r;

static cudaError_t cuda_launch_kernel_internal_impl(gt_sym *s, uint16_t flags, cudaKernel_t k,
                                                    dim3 g, dim3 b, void **a, size_t smem,
                                                    cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t),
            NOT_SUPPORTED)
    LAUNCH_BODY(GT_FN___cudaLaunchKernel, real(k, g, b, a, smem, st), (const void *)k, 1, g, b,
                smem, st)
}
static cudaError_t launch_kernel_impl(gt_sym *s, uint16_t flags, const void *f, dim3 g, dim3 b,
                                      void **a, size_t smem, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(const void *, dim3, dim3, void **, size_t, cudaStream_t),
            NOT_SUPPORTED)
    LAUNCH_BODY(GT_FN_cudaLaunchKernel, real(f, g, b, a, smem, st), f, 0, g, b, smem, st)
}
static cudaError_t launch_coop_impl(gt_sym *s, uint16_t flags, const void *f, dim3 g, dim3 b,
                                    void **a, size_t smem, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(const void *, dim3, dim3, void **, size_t, cudaStream_t),
            NOT_SUPPORTED)
    LAUNCH_BODY(GT_FN_cudaLaunchCooperativeKernel, real(f, g, b, a, smem, st), f, 0, g, b, smem, st)
}
static cudaError_t launch_exc_impl(gt_sym *s, uint16_t flags, const cudaLaunchConfig_t *cfg,
                                   const void *f, void **a)
{
    GT_REAL(s, cudaError_t(*)(const cudaLaunchConfig_t *, const void *, void **), NOT_SUPPORTED)
    static const dim3 zero = {0, 0, 0};
    LAUNCH_BODY(GT_FN_cudaLaunchKernelExC, real(cfg, f, a), f, 0, cfg ? cfg->gridDim : zero,
                cfg ? cfg->blockDim : zero, cfg ? cfg->dynamicSmemBytes : 0, cfg ? cfg->stream : 0)
}
static cudaError_t graph_launch_impl(gt_sym *s, uint16_t flags, cudaGraphExec_t ge, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(cudaGraphExec_t, cudaStream_t), NOT_SUPPORTED)
    if (!gt_fast_guard_enter())
        return real(ge, st);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaGraphLaunch, true, false);
    cudaError_t r = real(ge, st);
    uint64_t t_end = gt_call_end(&c);
    static const dim3 zero = {0, 0, 0};
    record_launch(&c, t_end, flags, r, STREAM_ID(st), NULL, 0, zero, zero, 0,
                  (uint64_t)(uintptr_t)ge);
    gt_fast_guard_leave();
    return r;
}

GT_ENTRY(cudaError_t, __cudaLaunchKernel, GT_LIB_CUDART, cuda_launch_kernel_internal_impl, 0,
         (cudaKernel_t k, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (k, g, b, a, smem, st))
GT_ENTRY(cudaError_t, __cudaLaunchKernel_ptsz, GT_LIB_CUDART, cuda_launch_kernel_internal_impl,
         GT_RF_PTDS, (cudaKernel_t k, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (k, g, b, a, smem, st))
GT_ENTRY(cudaError_t, cudaLaunchKernel, GT_LIB_CUDART, launch_kernel_impl, 0,
         (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (f, g, b, a, smem, st))
GT_ENTRY(cudaError_t, cudaLaunchKernel_ptsz, GT_LIB_CUDART, launch_kernel_impl, GT_RF_PTDS,
         (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (f, g, b, a, smem, st))
GT_ENTRY(cudaError_t, cudaLaunchCooperativeKernel, GT_LIB_CUDART, launch_coop_impl, 0,
         (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (f, g, b, a, smem, st))
GT_ENTRY(cudaError_t, cudaLaunchCooperativeKernel_ptsz, GT_LIB_CUDART, launch_coop_impl, GT_RF_PTDS,
         (const void *f, dim3 g, dim3 b, void **a, size_t smem, cudaStream_t st),
         (f, g, b, a, smem, st))
GT_ENTRY(cudaError_t, cudaLaunchKernelExC, GT_LIB_CUDART, launch_exc_impl, 0,
         (const cudaLaunchConfig_t *cfg, const void *f, void **a), (cfg, f, a))
GT_ENTRY(cudaError_t, cudaLaunchKernelExC_ptsz, GT_LIB_CUDART, launch_exc_impl, GT_RF_PTDS,
         (const cudaLaunchConfig_t *cfg, const void *f, void **a), (cfg, f, a))
GT_ENTRY(cudaError_t, cudaGraphLaunch, GT_LIB_CUDART, graph_launch_impl, 0,
         (cudaGraphExec_t ge, cudaStream_t st), (ge, st))
GT_ENTRY(cudaError_t, cudaGraphLaunch_ptsz, GT_LIB_CUDART, graph_launch_impl, GT_RF_PTDS,
         (cudaGraphExec_t ge, cudaStream_t st), (ge, st))

/* ------------------------------------------------------------------ synchronization */

/* Blocking kinds capture a stack (sync stalls are what advice points at); queries do not. */
#define SYNC_BODY(fnid, call_real, kind, stream, event, blocking)                                  \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, blocking);                                                       \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    gt_record_sync(&c, t_end, flags, r, STREAM_ID(stream), event, kind);                           \
    gt_fast_guard_leave();                                                                         \
    return r;

void gt_cudnn_note_synchronize(void);
static cudaError_t device_sync_impl(gt_sym *s, uint16_t flags)
{
    GT_REAL(s, cudaError_t(*)(void), NOT_SUPPORTED)
    gt_cudnn_note_synchronize();
    SYNC_BODY(GT_FN_cudaDeviceSynchronize, real(), GT_SYNC_DEVICE, 0, NULL, true)
}
static cudaError_t stream_sync_impl(gt_sym *s, uint16_t flags, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(cudaStream_t), NOT_SUPPORTED)
    SYNC_BODY(GT_FN_cudaStreamSynchronize, real(st), GT_SYNC_STREAM, st, NULL, true)
}
static cudaError_t event_sync_impl(gt_sym *s, uint16_t flags, cudaEvent_t e)
{
    GT_REAL(s, cudaError_t(*)(cudaEvent_t), NOT_SUPPORTED)
    gt_cudnn_note_synchronize();
    SYNC_BODY(GT_FN_cudaEventSynchronize, real(e), GT_SYNC_EVENT, 0, e, true)
}
static cudaError_t stream_wait_impl(gt_sym *s, uint16_t flags, cudaStream_t st, cudaEvent_t e,
                                    unsigned f)
{
    GT_REAL(s, cudaError_t(*)(cudaStream_t, cudaEvent_t, unsigned), NOT_SUPPORTED)
    SYNC_BODY(GT_FN_cudaStreamWaitEvent, real(st, e, f), GT_SYNC_STREAM_WAIT_EVENT, st, e, false)
}
static cudaError_t stream_query_impl(gt_sym *s, uint16_t flags, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(cudaStream_t), NOT_SUPPORTED)
    SYNC_BODY(GT_FN_cudaStreamQuery, real(st), GT_SYNC_STREAM_QUERY, st, NULL, false)
}
static cudaError_t event_query_impl(gt_sym *s, uint16_t flags, cudaEvent_t e)
{
    GT_REAL(s, cudaError_t(*)(cudaEvent_t), NOT_SUPPORTED)
    SYNC_BODY(GT_FN_cudaEventQuery, real(e), GT_SYNC_EVENT_QUERY, 0, e, false)
}
/* Event records also feed the cuDNN autotune detector (a benchmark sweep times each candidate). */
void gt_cudnn_note_event_record(void);
static cudaError_t event_record_impl(gt_sym *s, uint16_t flags, cudaEvent_t e, cudaStream_t st)
{
    GT_REAL(s, cudaError_t(*)(cudaEvent_t, cudaStream_t), NOT_SUPPORTED)
    gt_cudnn_note_event_record();
    SYNC_BODY(GT_FN_cudaEventRecord, real(e, st), GT_SYNC_EVENT_RECORD, st, e, false)
}

GT_ENTRY0(cudaError_t, cudaDeviceSynchronize, GT_LIB_CUDART, device_sync_impl)
GT_ENTRY(cudaError_t, cudaStreamSynchronize, GT_LIB_CUDART, stream_sync_impl, 0, (cudaStream_t s),
         (s))
GT_ENTRY(cudaError_t, cudaStreamSynchronize_ptsz, GT_LIB_CUDART, stream_sync_impl, GT_RF_PTDS,
         (cudaStream_t s), (s))
GT_ENTRY(cudaError_t, cudaEventSynchronize, GT_LIB_CUDART, event_sync_impl, 0, (cudaEvent_t e), (e))
GT_ENTRY(cudaError_t, cudaStreamWaitEvent, GT_LIB_CUDART, stream_wait_impl, 0,
         (cudaStream_t s, cudaEvent_t e, unsigned int f), (s, e, f))
GT_ENTRY(cudaError_t, cudaStreamWaitEvent_ptsz, GT_LIB_CUDART, stream_wait_impl, GT_RF_PTDS,
         (cudaStream_t s, cudaEvent_t e, unsigned int f), (s, e, f))
GT_ENTRY(cudaError_t, cudaStreamQuery, GT_LIB_CUDART, stream_query_impl, 0, (cudaStream_t s), (s))
GT_ENTRY(cudaError_t, cudaStreamQuery_ptsz, GT_LIB_CUDART, stream_query_impl, GT_RF_PTDS,
         (cudaStream_t s), (s))
GT_ENTRY(cudaError_t, cudaEventQuery, GT_LIB_CUDART, event_query_impl, 0, (cudaEvent_t e), (e))
GT_ENTRY(cudaError_t, cudaEventRecord, GT_LIB_CUDART, event_record_impl, 0,
         (cudaEvent_t e, cudaStream_t s), (e, s))
GT_ENTRY(cudaError_t, cudaEventRecord_ptsz, GT_LIB_CUDART, event_record_impl, GT_RF_PTDS,
         (cudaEvent_t e, cudaStream_t s), (e, s))

/* ------------------------------------------------------------------ capture range */

/* GPUTRACE_CAPTURE=profiler-api: the start resumes recording before its record is written and the
 * stop pauses it after, so both calls are in the trace and mark the captured range. */
static cudaError_t profiler_call(gt_sym *s, uint16_t flags, uint16_t fnid)
{
    GT_REAL(s, cudaError_t(*)(void), NOT_SUPPORTED)
    if (!gt_fast_guard_enter())
        return real();
    gt_call c;
    gt_call_begin(&c, fnid, false, false);
    cudaError_t r = real();
    uint64_t t_end = gt_call_end(&c);
    gt_record_plain(&c, t_end, flags, r);
    gt_fast_guard_leave();
    return r;
}
static cudaError_t profiler_start_impl(gt_sym *s, uint16_t flags)
{
    gt_core_capture_set(true);
    return profiler_call(s, flags, GT_FN_cudaProfilerStart);
}
static cudaError_t profiler_stop_impl(gt_sym *s, uint16_t flags)
{
    cudaError_t r = profiler_call(s, flags, GT_FN_cudaProfilerStop);
    gt_core_capture_set(false);
    return r;
}
GT_ENTRY0(cudaError_t, cudaProfilerStart, GT_LIB_CUDART, profiler_start_impl)
GT_ENTRY0(cudaError_t, cudaProfilerStop, GT_LIB_CUDART, profiler_stop_impl)

/* ------------------------------------------------------------------ version queries */

#define PLAIN_BODY(fnid, call_real)                                                                \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, false, false);                                                         \
    cudaError_t r = call_real;                                                                     \
    uint64_t t_end = gt_call_end(&c);                                                              \
    gt_record_plain(&c, t_end, flags, r);                                                          \
    gt_fast_guard_leave();                                                                         \
    return r;

static cudaError_t runtime_version_impl(gt_sym *s, uint16_t flags, int *v)
{
    GT_REAL(s, cudaError_t(*)(int *), NOT_SUPPORTED)
    PLAIN_BODY(GT_FN_cudaRuntimeGetVersion, real(v))
}
static cudaError_t driver_version_impl(gt_sym *s, uint16_t flags, int *v)
{
    GT_REAL(s, cudaError_t(*)(int *), NOT_SUPPORTED)
    PLAIN_BODY(GT_FN_cudaDriverGetVersion, real(v))
}
static cudaError_t device_props_impl(gt_sym *s, uint16_t flags, struct cudaDeviceProp *p, int d)
{
    GT_REAL(s, cudaError_t(*)(struct cudaDeviceProp *, int), NOT_SUPPORTED)
    PLAIN_BODY(GT_FN_cudaGetDeviceProperties, real(p, d))
}

GT_ENTRY(cudaError_t, cudaRuntimeGetVersion, GT_LIB_CUDART, runtime_version_impl, 0, (int *v), (v))
GT_ENTRY(cudaError_t, cudaDriverGetVersion, GT_LIB_CUDART, driver_version_impl, 0, (int *v), (v))
GT_ENTRY(cudaError_t, cudaGetDeviceProperties, GT_LIB_CUDART, device_props_impl, 0,
         (struct cudaDeviceProp * p, int d), (p, d))

void gt_record_launch_dims(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                           uint64_t stream, const void *fn, int name_kind, gt_launch_dims d,
                           uint64_t smem)
{
    dim3 g = {d.grid[0], d.grid[1], d.grid[2]}, b = {d.block[0], d.block[1], d.block[2]};
    record_launch(c, t_end, flags, r, stream, fn, name_kind, g, b, smem, 0);
}
