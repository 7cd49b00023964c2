/* gt_cupti_internal.h — shared between the files of the CUPTI module (never outside cupti/).
 *
 * gt_cupti.h is the module's public face (for the wrappers); this header is its inside.
 * Files: gt_cupti_load.c finds and dlopens libcupti and resolves its functions;
 * gt_cupti.c is the lifecycle (start, flush, exit, fork, external correlation, API auto-switch);
 * gt_cupti_records.c hands buffers to CUPTI and turns completed ones into GT_REC_GPU_* records;
 * gt_cupti_callbacks.c links GPU work to wrapped calls through CUPTI's launch/copy/set callbacks;
 * gt_cupti_other.c notices another profiler refused CUPTI's subscription while gputrace holds it;
 * gt_cupti_um.c switches the unified-memory counters on when managed memory is in use.
 */
#ifndef GT_CUPTI_INTERNAL_H
#define GT_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Every libcupti function we use, resolved once with dlsym. */
typedef struct gt_cupti_fns {
    __typeof__(cuptiGetResultString) *GetResultString;
    __typeof__(cuptiGetVersion) *GetVersion;
    __typeof__(cuptiGetTimestamp) *GetTimestamp;
    __typeof__(cuptiActivityEnable) *ActivityEnable;
    __typeof__(cuptiActivityDisable) *ActivityDisable;
    __typeof__(cuptiActivityRegisterCallbacks) *ActivityRegisterCallbacks;
    __typeof__(cuptiActivityFlushAll) *ActivityFlushAll;
    __typeof__(cuptiActivityGetNextRecord) *ActivityGetNextRecord;
    __typeof__(cuptiActivityGetNumDroppedRecords) *ActivityGetNumDroppedRecords;
    __typeof__(cuptiActivityPushExternalCorrelationId) *ActivityPushExternalCorrelationId;
    __typeof__(cuptiActivityPopExternalCorrelationId) *ActivityPopExternalCorrelationId;
    __typeof__(cuptiActivityEnableLatencyTimestamps)
        *ActivityEnableLatencyTimestamps;                          /* optional */
    __typeof__(cuptiActivityEnableHWTrace) *ActivityEnableHWTrace; /* optional (newer CUPTI) */
    __typeof__(cuptiActivityConfigureUnifiedMemoryCounter)
        *ActivityConfigureUnifiedMemoryCounter; /* optional */
    __typeof__(cuptiSubscribe) *Subscribe;      /* the callback API: optional */
    __typeof__(cuptiUnsubscribe) *Unsubscribe;
    __typeof__(cuptiFinalize) *Finalize;
    __typeof__(cuptiEnableCallback) *EnableCallback;
} gt_cupti_fns;

extern gt_cupti_fns gt_cupti;

/* Load libcupti (see gt_cupti_load.c for the search order) and fill gt_cupti. Returns false when
 * no library was found or a required function is missing; *path_out names what was loaded. */
bool gt_cupti_load(char *path_out, size_t path_cap);
/* True when a libcudart or libcupti is mapped in the process now (cheap enough for a poll). */
bool gt_cupti_cuda_libs_loaded(void);
/* True when the main executable carries CUDA fat binaries (nvcc-built, e.g. with static cudart). */
bool gt_cupti_exe_has_fatbin(void);
/* True when a shared libcudart is mapped now. */
bool gt_cupti_cudart_mapped(void);

/* The process's CUDA runtime is (also) a static one that no wrapper sees (issue 30): an nvcc-built
 * executable without a shared libcudart (known at load), or one found later: kernels ran while no
 * runtime wrapper fired, or a cuDNN/cuBLAS call found no shared cudart to anchor with. Then the
 * runtime launch callbacks are on: a launch inside a wrapped library call pairs with it, and a
 * launch outside any is recorded as a call of its own (gt_cupti.h, the unseen-launch hook). */
extern atomic_bool gt_cupti_static_runtime;

/* Checks a CUPTI result: on failure logs the call text and CUPTI's error string (verbose only:
 * a machine without a driver must stay silent). Returns the result unchanged. */
CUptiResult gt_cupti_check(CUptiResult r, const char *call_text);
#define GT_CUPTI_CALL(call) gt_cupti_check((call), #call)
const char *gt_cupti_result_string(CUptiResult r);

/* gt_cupti_um.c: the unified-memory counters. At each attach (they are asked again after a
 * detach, or first with GPUTRACE_UM=on), at each periodic round (a request the driver was not up
 * for), whether they are on (a paused capture switches their kind off and on with the others). */
void gt_cupti_um_attached(void);
void gt_cupti_um_periodic(void);
bool gt_cupti_um_on(void);
void gt_cupti_um_reset_after_fork(void);

/* gt_cupti_records.c */
CUptiResult gt_cupti_register_buffers(void);
void gt_cupti_records_reset_after_fork(void);
/* GPU records came from more than one context: a context-wide sync no longer says that nothing
 * is in flight, so CUPTI is not detached. */
bool gt_cupti_records_many_contexts(void);
void gt_cupti_callbacks_reset_after_fork(void);
/* Reads CUPTI's dropped-record count and writes GT_REC_LOST / GT_REC_CUPTI_STATS when anything
 * changed since the last call. */
void gt_cupti_write_stats(bool force);
/* CUPTI is in the process's contexts now (not before a paused capture's first window, nor while
 * a pause has it detached or is detaching it): only then may CUPTI be asked anything that would
 * attach it again. */
bool gt_cupti_is_attached(void);

/* Detaching CUPTI (GPUTRACE_CUPTI_DETACH). cuptiFinalize frees the buffers that GPU work still in
 * flight writes its timestamps into. Called from the writer thread, it crashed a DataLoader
 * process on an H200; called at the exit callsite of any API call (where CUPTI's documentation
 * puts it), JAX and torch.compile programs, which launch a CUDA graph each step with several
 * queued, still failed with "unspecified launch failure". So the writer only arms the detach,
 * and it is made at the return of the application's own context-wide sync (cudaDeviceSynchronize,
 * cuCtxSynchronize), when nothing launched before it is still running (one context only:
 * gt_cupti_records_many_contexts). A program that never makes one keeps CUPTI attached, kinds
 * off, as GPUTRACE_CUPTI_DETACH=0 does. */
enum gt_cupti_link {
    GT_LINK_DETACHED,     /* never attached, or detached */
    GT_LINK_ATTACHED,     /* buffers, subscriber and kinds as configured */
    GT_LINK_DETACH_ARMED, /* paused and flushed: the next API exit detaches */
    GT_LINK_DETACHING,    /* an application thread is in cuptiFinalize */
};
extern atomic_int gt_cupti_link;
/* In the application's thread, at the exit callsite of its CUDA call, while the detach is armed:
 * unsubscribes and finalizes (only the thread that takes the armed state does). */
void gt_cupti_detach_in_callback(void);

/* CUPTI numbers correlation ids from 1 again after each attach (seen on the H200 after a
 * cuptiFinalize): each attach after the first moves the ids it gives into the next 2^32, so ids
 * stay unique and ordered over the whole trace, as the analyzer's linking needs. 0 stays "none". */
extern _Atomic uint64_t gt_cupti_corr_base;
static inline uint64_t gt_cupti_corr(uint32_t cupti_id)
{
    return cupti_id ? atomic_load_explicit(&gt_cupti_corr_base, memory_order_relaxed) + cupti_id
                    : 0;
}

/* gt_cupti_callbacks.c — external correlation without CUPTI's costly API records.
 * CUPTI writes EXTERNAL_CORRELATION records only for calls that get a RUNTIME/DRIVER activity
 * record, and those kinds are off by default; so a wrapped call only sets a thread-local id, and a
 * CUPTI callback on the launch/copy/set entry points writes the (id, CUPTI correlation id) pair
 * itself.
 *
 * gt_cupti_callbacks_start subscribes and enables the callbacks: CUPTI_SUCCESS also when they
 * cannot be had (the old push/pop then carries the ids); MULTIPLE_SUBSCRIBERS is passed on. */
CUptiResult gt_cupti_callbacks_start(bool queued_timestamps);
bool gt_cupti_callbacks_link_launches(bool callbacks_on_now);
/* The runtime entry point the anchors call (its callback writes the anchor records). */
#define GT_CUPTI_ANCHOR_CBID CUPTI_RUNTIME_TRACE_CBID_cudaRuntimeGetVersion_v3020
/* Unsubscribe after a failed start, so that another tool may have CUPTI. */
void gt_cupti_callbacks_stop(void);
/* A symbol of the libcupti already mapped in the process (gt_cupti_load.c), or NULL. */
void *gt_cupti_mapped_symbol(const char *name);
/* gputrace is CUPTI's callback subscriber now (another tool's cuptiSubscribe fails). */
bool gt_cupti_callbacks_held(void);
/* Capture range: disable (or re-enable) the callbacks while recording is paused. */
void gt_cupti_callbacks_set(bool on);
/* The detach: callbacks on the context-wide syncs (a subscriber made for them when there was
 * none), so that the application's next one returns through gt_cupti_detach_in_callback. False
 * when this CUPTI cannot (no callback API): CUPTI then stays attached with its kinds off.
 * Disarming (a window opened before such a sync came) takes those callbacks off again. */
bool gt_cupti_callbacks_arm_detach(void);
void gt_cupti_callbacks_disarm_detach(void);

typedef struct gt_cupti_tl_call {
    uint64_t id;         /* gputrace call id of the outermost wrapped call in progress, else 0 */
    uint32_t depth;      /* wrapped calls nested on this thread (only the outermost sets id) */
    uint32_t last_corr;  /* CUPTI correlation id last paired with id (one record per id) */
    bool by_callbacks;   /* the callbacks pair this call; else it was pushed to CUPTI */
    uint8_t anchor_site; /* GPUTRACE_CUPTI_LINK=order: 1 begin, 2 end while an anchor call runs */
} gt_cupti_tl_call;

extern atomic_bool gt_cupti_cb_active; /* callbacks enabled (never in a forked child) */
extern _Thread_local gt_cupti_tl_call gt_cupti_tl_call_state
    __attribute__((tls_model("initial-exec")));

/* A wrapped call that may launch GPU work begins. Returns true when the callbacks will pair its id
 * (nothing to push to CUPTI). When CUPTI's API records are on, CUPTI's own EXTERNAL_CORRELATION
 * records do it (pushed id) and the callbacks stay silent: no pair is written twice. */
static inline bool gt_cupti_cb_enter_call(uint64_t id, bool api_records_on)
{
    if (!atomic_load_explicit(&gt_cupti_cb_active, memory_order_relaxed))
        return false;
    gt_cupti_tl_call *t = &gt_cupti_tl_call_state;
    if (t->depth++ == 0) {
        t->id = id;
        t->last_corr = 0;
        t->by_callbacks = !api_records_on || !gt_cupti.ActivityPushExternalCorrelationId;
    }
    return t->by_callbacks;
}

static inline void gt_cupti_cb_leave_call(void)
{
    gt_cupti_tl_call *t = &gt_cupti_tl_call_state;
    if (t->depth && --t->depth == 0)
        t->id = 0;
}

/* What the records module tells the lifecycle module. */
extern atomic_bool gt_cupti_kernels_seen;       /* a kernel record arrived */
extern atomic_bool gt_cupti_queued_expected;    /* latency timestamps were switched on */
extern atomic_bool gt_cupti_queued_missing;     /* ... yet a kernel came without its queued time */
extern atomic_bool gt_cupti_records_seen;       /* any record arrived (CUDA is initialised) */
extern _Thread_local bool gt_cupti_tl_we_flush; /* this thread called FlushAll itself */

#endif
