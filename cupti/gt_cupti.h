/* gt_cupti.h — the CUPTI module's public face, for the wrappers (interpose/wrap). The module is
 * part of libgputrace.so in every build; the core never calls it: the module registers itself
 * (GT_MODULE in gt_cupti.c) and hangs its start, flush, exit, fork and capture-range work on the
 * core's hooks. Everything else of cupti/ stays in gt_cupti_internal.h. */
#ifndef GT_CUPTI_H
#define GT_CUPTI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* True while CUPTI takes our call ids (external correlation, or the callbacks that pair them): the
 * wrappers read it inline and skip the calls below while it is false. */
extern atomic_bool gt_cupti_push_allowed;

/* CUPTI's lifecycle (gt_cupti.c). Pending: CUDA is not in the process yet, the first wrapped call
 * or the writer's periodic check starts CUPTI. Starting: one thread is attaching it; the others'
 * first calls wait for it, bounded (a start that outlasts the bound, as on a loaded machine, lets
 * them go on). Active: attached, or detached on purpose by a paused capture. Off: disabled, not
 * found, refused, or a forked child. */
enum {
    GT_CUPTI_ST_IDLE,
    GT_CUPTI_ST_PENDING,
    GT_CUPTI_ST_STARTING,
    GT_CUPTI_ST_ACTIVE,
    GT_CUPTI_ST_OFF,
};
extern atomic_int gt_cupti_start_state; /* read by the wrappers (gt_wrap_cupti_due_unattached) */

/* Push our call id around a wrapped call that may launch GPU work; no-ops when CUPTI is not
 * active. */
void gt_cupti_push_correlation(uint64_t corr_id);
void gt_cupti_pop_correlation(void);
/* A wrapped call that may launch GPU work began while CUPTI took no ids (detached, paused, not yet
 * attached): should CUPTI attach while it runs, the callbacks pair its GPU work with call_id all
 * the same (the call straddles the attach). The outermost such call of the thread; end with the
 * same id. */
void gt_cupti_unpaired_begin(uint64_t call_id);
void gt_cupti_unpaired_end(uint64_t call_id);
/* GPUTRACE_CUPTI_LINK=order: brackets the outermost wrapped cuDNN/cuBLAS call in progress with two
 * correlation ids (begin before the real call, end after it) by calling runtime_get_version, the
 * real cudaRuntimeGetVersion (NULL: none). Returns whether it anchored. */
bool gt_cupti_anchor(bool begin, void *runtime_get_version);
/* Called the first time any runtime wrapper fires: CUPTI may start now, and its API records stay
 * off (the wrappers see the calls). */
void gt_cupti_note_wrapper_fired(void);

/* Managed memory was allocated (the cudaMallocManaged wrapper, CUPTI's callback on
 * cuMemAllocManaged): CUPTI's unified-memory counters come on now (GPUTRACE_UM=auto;
 * gt_cupti_um.c). Cheap after the first call. */
void gt_cupti_note_managed_memory(void);

/* A call of a static CUDA runtime, which no wrapper sees (issue 30), as CUPTI's callback tells it
 * at the call's exit: a kernel launch, a memset (is_memset), or an allocation or free
 * (is_alloc). */
typedef struct gt_cupti_unseen_call {
    uint64_t t_begin_ns, t_end_ns;
    uint32_t func;  /* GT_FN_* of the runtime entry point */
    uint16_t flags; /* GT_RF_PTDS for a _ptsz entry point */
    int32_t result;
    /* launches */
    const char *symbol;   /* the kernel's name as CUPTI gives it, NULL when unknown */
    const void *function; /* the host function or cudaKernel_t, NULL when unknown */
    uint32_t grid[3], block[3];
    uint64_t shared_mem, stream;
    /* memsets (cudaMemset, cudaMemsetAsync): ptr, bytes, value, stream */
    bool is_memset, is_async;
    int32_t value;
    /* allocations and frees (a free's bytes are 0: the runtime does not tell them) */
    bool is_alloc, is_free;
    uint32_t alloc_kind; /* enum gt_alloc_kind */
    uint64_t ptr, bytes;
} gt_cupti_unseen_call;
/* Records such a call (in the application's thread, inside CUPTI's callback) and returns its call
 * id, 0 when it was not recorded: the wrap module sets it at load. */
typedef uint64_t (*gt_cupti_unseen_call_fn)(const gt_cupti_unseen_call *call);
void gt_cupti_set_unseen_call_hook(gt_cupti_unseen_call_fn fn);

#endif
