/* wrap_managed.c — unified memory's calls (issue 30): cudaMemPrefetchAsync (and its CUDA 12 _v2
 * and CUDA 13 batch forms) and cudaMemAdvise (and _v2). The allocation itself is
 * cudaMallocManaged in wrap_runtime.c; the faults and migrations come from CUPTI
 * (cupti/gt_cupti_um.c).
 *
 * A prefetch is a migration of managed memory to one processor: it is recorded as a copy
 * (GT_REC_API_MEMCPY) from the range to itself, both sides GT_MEM_MANAGED, host to device when
 * the destination is a GPU (peer_device its ordinal), device to host when it is the CPU
 * (peer_device -1), asynchronous. An advice is a plain call (GT_REC_API): counted, timed, with its
 * call site.
 *
 * Two signatures under one name. CUDA 12's cudaMemPrefetchAsync takes (ptr, count, int device,
 * stream) and its cudaMemAdvise (ptr, count, advice, int device); CUDA 13 replaced the int with a
 * struct cudaMemLocation {type, id} and gave the prefetch a flags word before the stream (CUDA
 * 12's _v2 entry points already had that form). On x86-64 and aarch64 both the int and the
 * 8-byte struct travel in one integer register, so a wrapper that takes and passes on
 * register-sized words forwards either form unchanged; which one the program meant is read from
 * the runtime's major version. This file includes no CUDA header for that reason: its exported
 * names must not be declared with one of the two signatures. */
#include <string.h>

#include "gt_wrap.h"

typedef int rt_error;        /* cudaError_t */
typedef uint64_t word;       /* one integer argument register */
#define RT_NOT_SUPPORTED 801 /* cudaErrorNotSupported */
#define LOC_DEVICE 1         /* cudaMemLocationTypeDevice; the host types are 2 to 4 */
#define CPU_DEVICE_ID (-1)   /* cudaCpuDeviceId */

typedef struct mem_location { /* struct cudaMemLocation */
    int type, id;
} mem_location;

/* The runtime's major version (12, 13...), read once; 13 when unknown (the headers built
 * against). */
static int runtime_major(void)
{
    static _Atomic int major;
    int m = atomic_load_explicit(&major, memory_order_relaxed);
    if (m)
        return m;
    typedef int (*version_fn)(int *);
    version_fn f = (version_fn)gt_wrap_runtime_version_fn();
    int v = 0;
    m = f && f(&v) == 0 && v >= 1000 ? v / 1000 : 13;
    atomic_store_explicit(&major, m, memory_order_relaxed);
    return m;
}

/* The destination of a prefetch: a GPU's ordinal, or -1 for the CPU. */
static int32_t destination(bool location_form, word loc)
{
    if (!location_form)
        return (int32_t)(uint32_t)loc; /* an int device id, cudaCpuDeviceId for the CPU */
    mem_location l;
    memcpy(&l, &loc, sizeof l);
    return l.type == LOC_DEVICE ? l.id : CPU_DEVICE_ID;
}

static void record_prefetch(const gt_call *c, uint64_t t_end, uint16_t flags, rt_error r,
                            uint64_t stream, const void *p, uint64_t bytes, int32_t dest)
{
    copy_info ci = {.dir = dest == CPU_DEVICE_ID ? GT_DIR_D2H : GT_DIR_H2D,
                    .src_kind = GT_MEM_MANAGED,
                    .dst_kind = GT_MEM_MANAGED,
                    .is_async = 1,
                    .peer_device = dest};
    gt_record_copy(c, t_end, flags, r, stream, &ci, p, p, bytes);
}

#define REAL_OR_FAIL(s, type)                                                                      \
    __typeof__(type) real = (__typeof__(type))gt_sym_get(s);                                       \
    if (__builtin_expect(!real, 0)) {                                                              \
        gt_sym_warn_missing(s);                                                                    \
        return RT_NOT_SUPPORTED;                                                                   \
    }

/* cudaMemPrefetchAsync: (p, n, device, stream) in CUDA 12, (p, n, location, flags, stream) in CUDA
 * 13; the _v2 form always the second (location_form_always). */
static rt_error prefetch(gt_sym *s, uint16_t flags, bool location_form_always, const void *p,
                         size_t n, word a2, word a3, word a4)
{
    REAL_OR_FAIL(s, rt_error(*)(const void *, size_t, word, word, word))
    if (!gt_fast_guard_enter())
        return real(p, n, a2, a3, a4);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaMemPrefetchAsync, false, true); /* migrations: no op to pair */
    rt_error r = real(p, n, a2, a3, a4);
    uint64_t t_end = gt_call_end(&c);
    bool location_form = location_form_always || runtime_major() >= 13;
    record_prefetch(&c, t_end, flags, r, location_form ? a4 : a3, p, n,
                    destination(location_form, a2));
    gt_fast_guard_leave();
    return r;
}

static rt_error prefetch_impl(gt_sym *s, uint16_t flags, const void *p, size_t n, word a2, word a3,
                              word a4)
{
    return prefetch(s, flags, false, p, n, a2, a3, a4);
}
static rt_error prefetch_v2_impl(gt_sym *s, uint16_t flags, const void *p, size_t n, word a2,
                                 word a3, word a4)
{
    return prefetch(s, flags, true, p, n, a2, a3, a4);
}

/* CUDA 13's batch: several ranges, each to one of the locations. One record: the summed bytes,
 * the first range, the first location (read only when the call succeeded: the arrays are valid). */
static rt_error prefetch_batch_impl(gt_sym *s, uint16_t flags, void **ptrs, size_t *sizes,
                                    size_t count, mem_location *locs, size_t *loc_idx,
                                    size_t n_locs, unsigned long long f, void *stream)
{
    REAL_OR_FAIL(s, rt_error(*)(void **, size_t *, size_t, mem_location *, size_t *, size_t,
                                unsigned long long, void *))
    if (!gt_fast_guard_enter())
        return real(ptrs, sizes, count, locs, loc_idx, n_locs, f, stream);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaMemPrefetchBatchAsync, false, true);
    rt_error r = real(ptrs, sizes, count, locs, loc_idx, n_locs, f, stream);
    uint64_t t_end = gt_call_end(&c);
    uint64_t bytes = 0;
    for (size_t i = 0; r == 0 && sizes && i < count; i++)
        bytes += sizes[i];
    int32_t dest =
        r == 0 && locs && n_locs && locs[0].type == LOC_DEVICE ? locs[0].id : CPU_DEVICE_ID;
    record_prefetch(&c, t_end, flags, r, (uint64_t)(uintptr_t)stream,
                    r == 0 && ptrs && count ? ptrs[0] : NULL, bytes, dest);
    gt_fast_guard_leave();
    return r;
}

/* cudaMemAdvise: (p, n, advice, device) in CUDA 12, (p, n, advice, location) in CUDA 13 and _v2:
 * the same registers either way. */
static rt_error advise_impl(gt_sym *s, uint16_t flags, const void *p, size_t n, word advice,
                            word where)
{
    REAL_OR_FAIL(s, rt_error(*)(const void *, size_t, word, word))
    if (!gt_fast_guard_enter())
        return real(p, n, advice, where);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudaMemAdvise, false, true);
    rt_error r = real(p, n, advice, where);
    uint64_t t_end = gt_call_end(&c);
    gt_record_plain(&c, t_end, flags, r);
    gt_fast_guard_leave();
    return r;
}

#define PREFETCH_PARAMS (const void *p, size_t n, word a2, word a3, word a4)
#define PREFETCH_ARGS (p, n, a2, a3, a4)
GT_ENTRY(rt_error, cudaMemPrefetchAsync, GT_LIB_CUDART, prefetch_impl, 0, PREFETCH_PARAMS,
         PREFETCH_ARGS)
GT_ENTRY(rt_error, cudaMemPrefetchAsync_ptsz, GT_LIB_CUDART, prefetch_impl, GT_RF_PTDS,
         PREFETCH_PARAMS, PREFETCH_ARGS)
GT_ENTRY(rt_error, cudaMemPrefetchAsync_v2, GT_LIB_CUDART, prefetch_v2_impl, 0, PREFETCH_PARAMS,
         PREFETCH_ARGS)
GT_ENTRY(rt_error, cudaMemPrefetchAsync_v2_ptsz, GT_LIB_CUDART, prefetch_v2_impl, GT_RF_PTDS,
         PREFETCH_PARAMS, PREFETCH_ARGS)
#define BATCH_PARAMS                                                                               \
    (void **ptrs, size_t *sizes, size_t count, mem_location *locs, size_t *loc_idx, size_t n_locs, \
     unsigned long long f, void *stream)
#define BATCH_ARGS (ptrs, sizes, count, locs, loc_idx, n_locs, f, stream)
GT_ENTRY(rt_error, cudaMemPrefetchBatchAsync, GT_LIB_CUDART, prefetch_batch_impl, 0, BATCH_PARAMS,
         BATCH_ARGS)
GT_ENTRY(rt_error, cudaMemPrefetchBatchAsync_ptsz, GT_LIB_CUDART, prefetch_batch_impl, GT_RF_PTDS,
         BATCH_PARAMS, BATCH_ARGS)
GT_ENTRY(rt_error, cudaMemAdvise, GT_LIB_CUDART, advise_impl, 0,
         (const void *p, size_t n, word advice, word where), (p, n, advice, where))
GT_ENTRY(rt_error, cudaMemAdvise_v2, GT_LIB_CUDART, advise_impl, 0,
         (const void *p, size_t n, word advice, word where), (p, n, advice, where))
