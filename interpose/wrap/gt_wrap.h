/* gt_wrap.h — what every wrapper shares: the call bracket (times, correlation, stack, device),
 * the exported/dlsym entry-point macros and the pieces of the runtime state they need.
 *
 * A wrapped function has one implementation, `static R impl(gt_sym *s, uint16_t flags, args)`, and
 * up to three entry points that call it: the exported name (flags 0), its _ptds/_ptsz twin
 * (GT_RF_PTDS, its own gt_sym) and, for each of those, a twin handed out by the interposed dlsym
 * (GT_RF_VIA_DLSYM). The dlsym twins are listed in the "gt_wrap_tab" section so wrap_dlsym.c finds
 * them by name without a registry that must be kept in step by hand. */
#ifndef GT_WRAP_H
#define GT_WRAP_H

#include <stdint.h>

#include "gt_core.h"
#include "gt_core_fast.h"
#include "gt_cupti.h"
#include "gt_resolve.h"
#include "gt_stacks.h"

#define GT_WRAP_INLINE static inline __attribute__((always_inline))

/* The hot path reads these directly instead of calling into cupti/ and stacks.c on every call:
 * gt_cupti_push_allowed (gt_cupti.h), and GPUTRACE_STACKS read once at load (gt_stacks_mode;
 * wrap_init.c). */
extern int gt_wrap_stacks_mode;
/* Current device of this thread plus 1, 0 unknown (wrap_runtime.c). initial-exec: a preloaded
 * library's TLS is in the static block, so this is one %fs-relative load, not __tls_get_addr. */
extern __thread int gt_wrap_tls_device_plus1 __attribute__((tls_model("initial-exec")));

typedef struct gt_wrap_entry {
    const char *name; /* exported symbol name, e.g. "cudaMemcpyAsync_ptsz" */
    gt_sym *sym;      /* its real function */
    void *dl_twin;    /* the wrapper handed out by dlsym (records GT_RF_VIA_DLSYM) */
    uint8_t driver;   /* 1: a cu* driver entry point (handed out by cuGetProcAddress too) */
} gt_wrap_entry;

#define GT_WRAP_SECTION __attribute__((used, section("gt_wrap_tab"), aligned(sizeof(void *))))

/* Define an exported wrapper `name` for implementation impl, plus its dlsym twin.
 *   GT_ENTRY(ret, name, lib, impl, flags, (params), (args))
 * params is the parenthesised parameter list, args the parenthesised argument names. */
#define GT_ENTRY_COMMON(ret, name, str, lib, impl, flags, params, args, export_attr, drv)          \
    static gt_sym gt_sym_##name = GT_SYM_INIT(str, lib);                                           \
    export_attr ret name params;                                                                   \
    export_attr ret name params                                                                    \
    {                                                                                              \
        return impl(&gt_sym_##name, (uint16_t)(flags), GT_UNPAREN args);                           \
    }                                                                                              \
    static ret gt_dl_##name params                                                                 \
    {                                                                                              \
        return impl(&gt_sym_##name, (uint16_t)((flags) | GT_RF_VIA_DLSYM), GT_UNPAREN args);       \
    }                                                                                              \
    static const gt_wrap_entry gt_entry_##name GT_WRAP_SECTION = {str, &gt_sym_##name,             \
                                                                  (void *)gt_dl_##name, drv};
#define GT_UNPAREN(...) __VA_ARGS__
#define GT_ENTRY(ret, name, lib, impl, flags, params, args)                                        \
    GT_ENTRY_COMMON(ret, name, #name, lib, impl, flags, params, args, GT_EXPORT, 0)
/* The same for a function without parameters. */
#define GT_ENTRY0(ret, name, lib, impl)                                                            \
    static gt_sym gt_sym_##name = GT_SYM_INIT(#name, lib);                                         \
    GT_EXPORT ret name(void);                                                                      \
    GT_EXPORT ret name(void)                                                                       \
    {                                                                                              \
        return impl(&gt_sym_##name, 0);                                                            \
    }                                                                                              \
    static ret gt_dl_##name(void)                                                                  \
    {                                                                                              \
        return impl(&gt_sym_##name, GT_RF_VIA_DLSYM);                                              \
    }                                                                                              \
    static const gt_wrap_entry gt_entry_##name GT_WRAP_SECTION = {#name, &gt_sym_##name,           \
                                                                  (void *)gt_dl_##name, 0};
/* Driver entry points are never exported (the driver is reached through cuGetProcAddress or
 * dlsym): only the dlsym twin exists; `name` is a static stub that keeps the macro uniform. */
#define GT_DRIVER_ENTRY(ret, name, impl, flags, params, args)                                      \
    GT_ENTRY_COMMON(ret, gt_drv_##name, #name, GT_LIB_CUDA, impl, (flags) | GT_RF_DRIVER, params,  \
                    args, static __attribute__((unused)), 1)

/* Records the launches of a static runtime that CUPTI's callbacks hand over (wrap_unseen.c). */
void gt_wrap_unseen_init(void);

/* The loaded table (wrap_init.c). */
const gt_wrap_entry *gt_wrap_table_begin(void);
const gt_wrap_entry *gt_wrap_table_end(void);

/* One wrapped call in flight on this thread. */
typedef struct gt_call {
    uint64_t t_begin;
    uint64_t corr_id;
    uint32_t func;
    uint32_t stack_id;
    int32_t device;
    bool pushed;
    bool unpaired; /* launches work, yet CUPTI took no id when it began (gt_cupti_unpaired_begin) */
    bool anchored; /* GPUTRACE_CUPTI_LINK=order: a library call bracketed by correlation ids */
} gt_call;

/* Runtime state gathered once (versions, devices), at the first call that shows CUDA is in use;
 * CUPTI is attached by the time it is done. gt_wrap_runtime_seen: 0 not yet, 1 under way (calls
 * of other threads wait for it), GT_WRAP_RUNTIME_DONE done. */
void gt_wrap_runtime_first_use(void);
extern _Atomic int gt_wrap_runtime_seen;
#define GT_WRAP_RUNTIME_DONE 2
void gt_wrap_runtime_fork_child(void);
void gt_wrap_cudnn_first_use(void);
extern _Atomic int gt_wrap_cudnn_seen;

/* Current device of this thread (cached; invalidated by our cudaSetDevice wrapper), -1 unknown. */
int gt_wrap_current_device_slow(void);
static inline int gt_wrap_current_device(void)
{
    int d = gt_wrap_tls_device_plus1;
    return __builtin_expect(d != 0, 1) ? d - 1 : gt_wrap_current_device_slow();
}

static inline uint32_t gt_wrap_stack(int want)
{
    return (want && gt_wrap_stacks_mode >= GT_STACK_FOR_ADVICE)
               ? gt_stack_capture(GT_STACK_FOR_ADVICE)
               : 0;
}

/* CUPTI takes our correlation ids: one relaxed load, no call when it does not. */
static inline bool gt_wrap_cupti_correlating(void)
{
    return atomic_load_explicit(&gt_cupti_push_allowed, memory_order_relaxed);
}

/* CUPTI is due but not attached yet (pending or starting, gt_cupti.h): GPU work launched now is
 * never recorded. One relaxed load. */
static inline bool gt_wrap_cupti_due_unattached(void)
{
    int st = atomic_load_explicit(&gt_cupti_start_state, memory_order_relaxed);
    return st == GT_CUPTI_ST_PENDING || st == GT_CUPTI_ST_STARTING;
}

/* A call that would push its id found CUPTI not taking them: when CUPTI is due but not attached
 * yet, a call that gives the GPU work is counted (its GPU work is never recorded; wrap_runtime.c).
 * Off the common path: CUPTI attached takes the ids. */
void gt_wrap_note_call_unattached(uint32_t func);
/* A call that launches work began while CUPTI takes no ids: the attach may come while it runs
 * (gt_cupti_unpaired_begin), and a CUPTI not attached yet is counted. Off the common path. */
void gt_wrap_begin_unpaired(const gt_call *c);

/* Start the call: after gt_guard_enter succeeded, before the real call. launches_work: push the
 * correlation id to CUPTI. stack: capture the call site for advice. */
GT_WRAP_INLINE void gt_call_begin(gt_call *c, uint32_t func, bool launches_work, bool stack)
{
    if (__builtin_expect(atomic_load_explicit(&gt_wrap_runtime_seen, memory_order_relaxed) !=
                             GT_WRAP_RUNTIME_DONE,
                         0))
        gt_wrap_runtime_first_use();
    c->func = func;
    c->corr_id = gt_fast_next_corr_id();
    c->device = gt_wrap_current_device();
    c->stack_id = gt_wrap_stack(stack);
    c->pushed = launches_work && gt_wrap_cupti_correlating();
    c->unpaired = launches_work && !c->pushed;
    c->anchored = false;
    if (c->pushed)
        gt_cupti_push_correlation(c->corr_id);
    else if (c->unpaired)
        gt_wrap_begin_unpaired(c);
    c->t_begin = gt_fast_now_ns();
    gt_core_tls.guard = GT_GUARD_IN_REAL; /* a call arriving now is nested, not interrupting */
}

/* The real cudaRuntimeGetVersion, the anchors' call (wrap_runtime.c; NULL without a shared
 * cudart, looked for once). */
void *gt_wrap_runtime_version_fn(void);

/* A cuDNN/cuBLAS call (its kernels come from the library's own runtime): right after
 * gt_call_begin, the begin anchor; gt_call_end sets the end anchor. */
GT_WRAP_INLINE void gt_call_anchor(gt_call *c)
{
    if (c->pushed)
        c->anchored = gt_cupti_anchor(true, gt_wrap_runtime_version_fn());
}

/* End the call: right after the real call returned. Returns the end time. */
GT_WRAP_INLINE uint64_t gt_call_end(gt_call *c)
{
    uint64_t t = gt_fast_now_ns();
    gt_core_tls.guard = GT_GUARD_RECORDING;
    if (__builtin_expect(c->anchored, 0))
        gt_cupti_anchor(false, gt_wrap_runtime_version_fn());
    if (__builtin_expect(c->pushed, 0))
        gt_cupti_pop_correlation();
    else if (c->unpaired)
        gt_cupti_unpaired_end(c->corr_id);
    return t;
}

static inline void gt_call_fill(gt_api_common *rc, const gt_call *c, uint64_t t_end,
                                uint64_t stream, int32_t result)
{
    rc->t_begin_ns = c->t_begin;
    rc->t_end_ns = t_end;
    rc->corr_id = c->corr_id;
    rc->stream = stream;
    rc->func = c->func;
    rc->result = result;
    rc->device = c->device;
    rc->stack_id = c->stack_id;
}

/* Pinned/managed host ranges and pointer classification (wrap_pinned.c). */
void gt_pinned_add(uint64_t base, uint64_t bytes, uint8_t kind);
uint64_t gt_pinned_remove(uint64_t base); /* returns the bytes of the removed range, 0 if none */
uint8_t gt_classify_ptr(const void *p);   /* gt_mem_kind */
void gt_classify_forget(void);            /* drop the cudaPointerGetAttributes cache */

/* Kernel names (wrap_runtime.c). kind: 0 host function stub, 1 cudaKernel_t, 2 CUfunction. */
uint32_t gt_kernel_name_id(const void *fn, int kind);

/* Record writers shared by the runtime and driver wrappers (wrap_runtime.c). */
typedef struct copy_info {
    uint8_t dir, src_kind, dst_kind, is_async;
    int32_t peer_device;
} copy_info;
copy_info gt_classify_copy(int kind, const void *dst, const void *src, bool is_async);
bool gt_copy_wants_stack(const copy_info *ci);
void gt_record_set(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                   const void *p, uint64_t bytes, int value, bool is_async);
typedef struct gt_launch_dims {
    uint32_t grid[3], block[3];
} gt_launch_dims;
void gt_record_launch_dims(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                           uint64_t stream, const void *fn, int name_kind, gt_launch_dims d,
                           uint64_t smem);
/* Record writers shared by the runtime, driver and library wrappers: inline, so a wrapper's
 * record is reserved and filled in place without a call that passes a dozen arguments. */
GT_WRAP_INLINE void gt_record_alloc(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                                    uint64_t stream, uint64_t ptr, uint64_t bytes, uint32_t kind,
                                    int is_free)
{
    gt_rec_api_alloc *rec = gt_fast_record_begin(GT_REC_API_ALLOC, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->ptr = ptr;
    rec->bytes = bytes;
    rec->alloc_kind = kind;
    rec->is_free = (uint32_t)is_free;
    gt_fast_record_commit(rec);
}

GT_WRAP_INLINE void gt_record_copy(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                                   uint64_t stream, const copy_info *ci, const void *dst,
                                   const void *src, uint64_t bytes)
{
    gt_rec_api_memcpy *rec = gt_fast_record_begin(GT_REC_API_MEMCPY, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->bytes = bytes;
    rec->dst = (uint64_t)(uintptr_t)dst;
    rec->src = (uint64_t)(uintptr_t)src;
    rec->direction = ci->dir;
    rec->src_kind = ci->src_kind;
    rec->dst_kind = ci->dst_kind;
    rec->is_async = ci->is_async;
    rec->peer_device = ci->peer_device;
    gt_fast_record_commit(rec);
}

GT_WRAP_INLINE void gt_record_sync(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                                   uint64_t stream, const void *event, uint32_t kind)
{
    gt_rec_api_sync *rec = gt_fast_record_begin(GT_REC_API_SYNC, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    rec->event = (uint64_t)(uintptr_t)event;
    rec->sync_kind = kind;
    gt_fast_record_commit(rec);
}

GT_WRAP_INLINE void gt_record_plain(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r)
{
    gt_rec_api *rec = gt_fast_record_begin(GT_REC_API, flags, sizeof *rec);
    if (!rec)
        return;
    gt_call_fill(&rec->c, c, t_end, 0, r);
    gt_fast_record_commit(rec);
}

#endif
