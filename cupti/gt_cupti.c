/* gt_cupti.c — CUPTI lifecycle: when to start, which activity kinds, flushing, exit, fork, external
 * correlation and the automatic switch to CUPTI's runtime API records.
 *
 * When to start. CUPTI may be enabled before CUDA is initialised (it attaches when the context is
 * created), but the library must be the process's own copy: a Python process only maps libcudart
 * and libcupti when torch is imported, and loading a toolkit libcupti before that would hand torch
 * our copy under the same soname. So at load we start at once only when CUDA libraries are already
 * mapped, GPUTRACE_CUPTI_LIB names one, or the executable carries its own device code (static
 * cudart, where nothing will ever be mapped); otherwise we wait ("pending") for the first wrapped
 * call or for the writer's periodic poll to see libcudart, or for the driver to call
 * InitializeInjection (CUDA_INJECTION64_PATH).
 *
 * No lock of ours is held around any CUPTI call: FlushAll calls back into gt_cupti_records.c. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "gt_core.h"
#include "gt_cupti.h"
#include "gt_cupti_internal.h"

enum {
    ST_IDLE = GT_CUPTI_ST_IDLE,
    ST_PENDING = GT_CUPTI_ST_PENDING,
    ST_STARTING = GT_CUPTI_ST_STARTING,
    ST_ACTIVE = GT_CUPTI_ST_ACTIVE,
    ST_OFF = GT_CUPTI_ST_OFF,
};

/* Read inline by the wrappers (gt_wrap_cupti_due_unattached, gt_wrap.h). */
atomic_int gt_cupti_start_state = ST_IDLE;
#define state gt_cupti_start_state
/* The external-correlation fast path (gt_cupti.h). */
atomic_bool gt_cupti_push_allowed;
#define push_allowed gt_cupti_push_allowed
static atomic_bool wrapper_fired; /* some runtime wrapper saw a call */
atomic_bool gt_cupti_static_runtime;
static atomic_bool anchor_missing; /* a library call found no shared cudart to anchor with */
static atomic_bool api_records_on; /* RUNTIME/DRIVER kinds enabled */
static atomic_bool armed_by_request, armed_by_records;
static atomic_bool clock_written;
static uint64_t start_realtime_ns, start_cupti_ns;
/* initial-exec: libgputrace.so is preloaded (or linked), so its TLS is in the static block and
 * this is one %fs-relative access instead of a __tls_get_addr call per wrapped call. */
static _Thread_local uint32_t tl_push_depth __attribute__((tls_model("initial-exec")));

static bool is_no_device_error(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return true;
    default:
        return false;
    }
}

static void give_up(CUptiResult r)
{
    atomic_store(&state, ST_OFF);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        gt_warn("another CUPTI subscriber is active (nsys, ncu, torch.profiler...): recording API "
                "calls without GPU activity");
        gt_core_set_cupti_state(GT_CUPTI_OTHER_SUBSCRIBER);
    } else if (is_no_device_error(r)) {
        gt_debug("CUPTI reports no usable driver or GPU (%s): no GPU activity recorded",
                 gt_cupti_result_string(r));
        gt_core_set_cupti_state(GT_CUPTI_NO_DEVICE);
    } else {
        gt_warn("CUPTI unavailable (%s, %d): recording API calls without GPU activity",
                gt_cupti_result_string(r), (int)r);
        gt_core_set_cupti_state(GT_CUPTI_FAILED);
    }
}

/* CUPTI's API records, for programs whose calls no wrapper sees (GPUTRACE_API=full, or the
 * static-cudart switch). Synchronization records come with them: the wrappers record every
 * synchronization with its stall themselves, and on an H200 the SYNCHRONIZATION kind costs the
 * most of the cheap kinds, so it is only worth it where no wrapper sees the syncs. */
/* CUPTI writes EXTERNAL_CORRELATION records only for calls that get an API record, so the kind is
 * enabled with the API records and not by default, where the callbacks pair ids themselves. */
static void enable_ext_corr(void)
{
    if (GT_CUPTI_CALL(gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) ==
            CUPTI_SUCCESS &&
        gt_cupti.ActivityPushExternalCorrelationId)
        atomic_store(&push_allowed, true);
}

static CUptiResult enable_api_kinds(void)
{
    CUptiResult r = GT_CUPTI_CALL(gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
    if (r == CUPTI_SUCCESS)
        GT_CUPTI_CALL(gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
    if (r == CUPTI_SUCCESS) {
        GT_CUPTI_CALL(gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
        enable_ext_corr();
        atomic_store(&api_records_on, true);
    }
    return r;
}

/* Kernels' queued and submitted timestamps (GPUTRACE_CUPTI_LINK=queued). The queued time falls
 * inside the API call that launched the kernel (every one of 16,714 kernels on an H200), so the
 * analyzer can link by time without a callback per launch; but CUPTI then adds ~1.3 us of GPU time
 * to every kernel (tools/bench/kernel_cost.py: +1.27 us on a 35 us kernel, against +0.08 us
 * without), which a GPU-bound step pays in full: no longer the default. CUPTI takes the setting
 * only before CUDA starts; kernels that still come without it switch the launch callbacks on
 * (on_periodic). */
static bool enable_latency_timestamps(void)
{
    if (!gt_core_config()->cupti_latency)
        return false;
    if (!gt_cupti.ActivityEnableLatencyTimestamps) {
        gt_debug("this CUPTI has no queued timestamps: kernel launches linked by callbacks");
        return false;
    }
    CUptiResult r = GT_CUPTI_CALL(gt_cupti.ActivityEnableLatencyTimestamps(1));
    gt_debug("kernel queued/submitted timestamps: %s", gt_cupti_result_string(r));
    return r == CUPTI_SUCCESS;
}

/* Kernel timestamps from the GPU's hardware events (HES: Blackwell and later) instead of CUPTI's
 * instrumentation of every kernel, which is what CUPTI's kernel records cost
 * (docs/evidence/performance-log.md). Detected by trying: an older libcupti lacks the function,
 * Hopper and older GPUs refuse it (NOT_SUPPORTED), and either way CUPTI's usual timestamps are
 * used, silently. The call needs an initialised driver: refused with NOT_INITIALIZED at start, it
 * is tried once more when the first records show CUDA is up (on_periodic). CUPTI documents it as
 * incompatible with the queued timestamps, so GPUTRACE_CUPTI_LINK=queued does without it. */
enum { HW_UNTRIED, HW_RETRY_LATER, HW_DECIDED };
static atomic_int hw_trace_state;

static void try_hw_trace(void)
{
    const gt_config *cfg = gt_core_config();
    atomic_store(&hw_trace_state, HW_DECIDED);
    if (!cfg->cupti_hw_trace || cfg->cupti_latency)
        return;
    if (!gt_cupti.ActivityEnableHWTrace) {
        gt_debug("kernel timestamps: this CUPTI has no hardware trace; CUPTI's own timestamps");
        return;
    }
    CUptiResult r = GT_CUPTI_CALL(gt_cupti.ActivityEnableHWTrace(1));
    if (r == CUPTI_ERROR_NOT_INITIALIZED) {
        atomic_store(&hw_trace_state, HW_RETRY_LATER);
        gt_debug("kernel timestamps: hardware trace needs the driver up; trying again later");
        return;
    }
    if (r == CUPTI_SUCCESS)
        gt_core_set_header_flag(GT_HDR_HW_TRACE);
    gt_debug("kernel timestamps: %s (hardware trace: %s)",
             r == CUPTI_SUCCESS ? "the GPU's hardware events" : "CUPTI's own",
             gt_cupti_result_string(r));
}

static void maybe_retry_hw_trace(void)
{
    if (atomic_load(&hw_trace_state) == HW_RETRY_LATER && atomic_load(&gt_cupti_records_seen))
        try_hw_trace();
}

/* The record kinds and the GPUTRACE_CUPTI_KINDS bit each needs. SYNCHRONIZATION and
 * EXTERNAL_CORRELATION come with the API kinds (enable_api_kinds). */
static const struct {
    CUpti_ActivityKind kind;
    uint32_t bit;
} RECORD_KINDS[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, GT_KIND_KERNEL},
    {CUPTI_ACTIVITY_KIND_MEMCPY, GT_KIND_MEMCPY},
    {CUPTI_ACTIVITY_KIND_MEMCPY2, GT_KIND_MEMCPY},
    {CUPTI_ACTIVITY_KIND_MEMSET, GT_KIND_MEMSET},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, GT_KIND_OVERHEAD},
};

/* The kernel kind decides whether CUPTI works at all; the others are best effort, except that a
 * second subscriber or a missing driver reported by any of them stops everything. */
static CUptiResult enable_kinds(void)
{
    uint32_t wanted = gt_core_config()->cupti_kinds;
    for (size_t i = 0; i < sizeof RECORD_KINDS / sizeof *RECORD_KINDS; i++) {
        if (!(wanted & RECORD_KINDS[i].bit))
            continue;
        CUptiResult r = GT_CUPTI_CALL(gt_cupti.ActivityEnable(RECORD_KINDS[i].kind));
        if (r != CUPTI_SUCCESS &&
            (RECORD_KINDS[i].bit == GT_KIND_KERNEL ||
             r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_UNKNOWN))
            return r;
    }
    /* A program known at load to carry its own static runtime (cupti_init): no wrapper sees its
     * runtime calls, CUPTI's API records are all there is of them, so from the start rather than
     * from the first periodic check after its kernels (maybe_switch_api_records): on the H100,
     * managed_gemv's static build lost 78 of its 120 stream syncs to that wait. */
    int mode = gt_core_config()->api_mode;
    if (mode == GT_API_FULL)
        return enable_api_kinds();
    if (mode == GT_API_AUTO && atomic_load(&gt_cupti_static_runtime))
        enable_api_kinds(); /* best effort, as the later switch: refused, the kernels still come */
    return CUPTI_SUCCESS;
}

/* Capture range (interpose/core/capture.c): the record kinds and callbacks are switched off while
 * the capture is paused. One lock orders a pause/resume against the end of start() (either may
 * come first); neither CUPTI call made under it calls back into gputrace. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;
static bool capture_off; /* kinds and callbacks are disabled now */

static void set_kinds(bool on)
{
    uint32_t wanted = gt_core_config()->cupti_kinds;
    for (size_t i = 0; i < sizeof RECORD_KINDS / sizeof *RECORD_KINDS; i++)
        if (wanted & RECORD_KINDS[i].bit && RECORD_KINDS[i].bit != GT_KIND_OVERHEAD)
            GT_CUPTI_CALL(on ? gt_cupti.ActivityEnable(RECORD_KINDS[i].kind)
                             : gt_cupti.ActivityDisable(RECORD_KINDS[i].kind));
    static const CUpti_ActivityKind api_kinds[] = {
        CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    };
    for (size_t i = 0; atomic_load(&api_records_on) && i < 3; i++)
        GT_CUPTI_CALL(on ? gt_cupti.ActivityEnable(api_kinds[i])
                         : gt_cupti.ActivityDisable(api_kinds[i]));
    if (gt_cupti_um_on())
        GT_CUPTI_CALL(on ? gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER)
                         : gt_cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
}

/* Attached: buffers registered, callbacks subscribed, kinds enabled. A capture that starts paused
 * attaches at its first window, so a process that never opens one never has CUPTI in its
 * contexts; with GPUTRACE_CUPTI_DETACH a pause also detaches (maybe_detach), because kinds
 * disabled after a context ran with them may leave CUPTI's per-launch work behind
 * (docs/evidence/performance-log.md). */
atomic_int gt_cupti_link = GT_LINK_DETACHED;

bool gt_cupti_is_attached(void)
{
    return atomic_load(&gt_cupti_link) == GT_LINK_ATTACHED;
}

_Atomic uint64_t gt_cupti_corr_base;

static CUptiResult attach(void)
{
    static bool attached_before;
    if (attached_before)
        atomic_fetch_add(&gt_cupti_corr_base, 1ull << 32);
    attached_before = true;
    CUptiResult r = gt_cupti_register_buffers();
    bool queued = r == CUPTI_SUCCESS && enable_latency_timestamps();
    atomic_store(&gt_cupti_queued_expected, queued);
    if (r == CUPTI_SUCCESS)
        r = gt_cupti_callbacks_start(queued); /* subscribing first: the sign of a second tool */
    if (r == CUPTI_SUCCESS)
        try_hw_trace(); /* before the kinds: a way of stamping, like the latency timestamps */
    if (r == CUPTI_SUCCESS)
        r = enable_kinds();
    if (r != CUPTI_SUCCESS) {
        atomic_store(&push_allowed, false);
        gt_cupti_callbacks_stop();
        return r;
    }
    if (atomic_load(&gt_cupti_cb_active)) {
        atomic_store(&push_allowed, true); /* wrappers set the id the callbacks read */
        if (gt_core_config()->cupti_anchors)
            gt_core_set_header_flag(GT_HDR_ORDER_LINKS);
    }
    atomic_store(&gt_cupti_link, GT_LINK_ATTACHED);
    gt_cupti_um_attached();
    return CUPTI_SUCCESS;
}

static bool push_before_detach; /* push_allowed when the detach was armed */

/* A window opens while the detach is armed and no application call has done it yet: CUPTI stays
 * attached (taking the armed state first, so no callback can start the detach). Under
 * capture_lock. Returns the link state from then on. */
static int cancel_armed_detach(void)
{
    int link = GT_LINK_DETACH_ARMED;
    if (!atomic_compare_exchange_strong(&gt_cupti_link, &link, GT_LINK_ATTACHED))
        return link;
    gt_cupti_callbacks_disarm_detach();
    atomic_store(&push_allowed, push_before_detach);
    gt_debug("CUPTI stays attached: a window opened before a sync returned to detach it");
    return GT_LINK_ATTACHED;
}

/* An application thread is in cuptiFinalize: wait for it (bounded) before attaching again. */
static bool wait_detached(void)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 5000 && atomic_load(&gt_cupti_link) == GT_LINK_DETACHING; i++)
        nanosleep(&ms, NULL);
    return atomic_load(&gt_cupti_link) == GT_LINK_DETACHED;
}

/* Under capture_lock. */
static void resume_capture(void)
{
    int link = cancel_armed_detach();
    if (link == GT_LINK_DETACHING && !wait_detached()) {
        gt_debug("capture resumed while CUPTI is still detaching: it attaches at a later round");
        return;
    }
    if (link != GT_LINK_ATTACHED) {
        CUptiResult r = attach();
        if (r != CUPTI_SUCCESS)
            give_up(r);
        else
            gt_debug("CUPTI attached for a capture window");
        return;
    }
    /* Callbacks first: a call already past its entry is paired at its exit (gt_cupti_callbacks.c),
     * and no record can come from kinds on before the callbacks that pair it. */
    gt_cupti_callbacks_set(true);
    set_kinds(true);
}

static void apply_capture(bool on)
{
    pthread_mutex_lock(&capture_lock);
    if (atomic_load(&state) == ST_ACTIVE && capture_off == on) {
        if (on) {
            resume_capture();
        } else if (gt_cupti_is_attached()) { /* else detached: nothing to switch off */
            set_kinds(false);
            gt_cupti_callbacks_set(false);
        }
        capture_off = !on;
    }
    pthread_mutex_unlock(&capture_lock);
}

static void on_capture(bool on)
{
    if (!gt_core_is_forked_child())
        apply_capture(on);
}

static atomic_int flushes_in_flight;

static void flush(uint32_t flag)
{
    atomic_fetch_add(&flushes_in_flight, 1);
    gt_cupti_tl_we_flush = true;
    GT_CUPTI_CALL(gt_cupti.ActivityFlushAll(flag));
    gt_cupti_tl_we_flush = false;
    atomic_fetch_sub(&flushes_in_flight, 1);
}

/* The writer, each round: a paused capture detaches CUPTI (GPUTRACE_CUPTI_DETACH). What CUPTI
 * still holds is flushed and the wrappers stop handing it ids; then the detach is armed, and the
 * application's next context-wide sync does it as it returns, when no GPU work is left in flight
 * to write into what cuptiFinalize frees (gt_cupti_internal.h). Under capture_lock so that a
 * window opening meanwhile waits; the flush calls back into gt_cupti_records.c, which never takes
 * it. A CUPTI without the callback API cannot be detached safely: it stays attached, kinds off. */
static void maybe_detach(void)
{
    static bool cannot_detach;
    if (!gt_core_config()->cupti_detach || !gt_cupti.Finalize || cannot_detach)
        return;
    pthread_mutex_lock(&capture_lock);
    if (atomic_load(&state) == ST_ACTIVE && capture_off && gt_cupti_is_attached()) {
        push_before_detach = atomic_exchange(&push_allowed, false);
        flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); /* first: its records may show another context */
        gt_cupti_write_stats(true);
        if (gt_cupti_records_many_contexts()) {
            cannot_detach = true;
            atomic_store(&push_allowed, push_before_detach);
            gt_debug("GPU work in several contexts: CUPTI is not detached while paused (kinds "
                     "off)");
        } else if (gt_cupti_callbacks_arm_detach()) {
            atomic_store(&gt_cupti_link, GT_LINK_DETACH_ARMED);
            gt_debug("capture paused: CUPTI detaches at the return of the program's next "
                     "cudaDeviceSynchronize/cuCtxSynchronize");
        } else {
            cannot_detach = true;
            atomic_store(&push_allowed, push_before_detach);
            gt_debug("capture paused: this CUPTI has no callback to detach from safely; it stays "
                     "attached with its kinds disabled");
        }
    }
    if (!capture_off && atomic_load(&state) == ST_ACTIVE &&
        atomic_load(&gt_cupti_link) == GT_LINK_DETACHED)
        resume_capture(); /* a window that opened while CUPTI was still detaching */
    pthread_mutex_unlock(&capture_lock);
}

void gt_cupti_detach_in_callback(void)
{
    int armed = GT_LINK_DETACH_ARMED;
    if (!atomic_compare_exchange_strong(&gt_cupti_link, &armed, GT_LINK_DETACHING))
        return;
    /* Records CUPTI still delivers are converted in this thread, which stays the application's. */
    atomic_fetch_add(&flushes_in_flight, 1);
    gt_cupti_tl_we_flush = true;
    gt_cupti_callbacks_stop();
    CUptiResult r = GT_CUPTI_CALL(gt_cupti.Finalize());
    gt_cupti_tl_we_flush = false;
    atomic_fetch_sub(&flushes_in_flight, 1);
    atomic_store(&gt_cupti_link, GT_LINK_DETACHED);
    gt_debug("capture paused: CUPTI detached at the return of a context-wide sync (%s)",
             gt_cupti_result_string(r));
}

/* A capture that starts paused: CUPTI stays detached until the first window (resume_capture). */
static void start_detached(void)
{
    pthread_mutex_lock(&capture_lock);
    capture_off = true;
    atomic_store(&state, ST_ACTIVE);
    pthread_mutex_unlock(&capture_lock);
    gt_debug("capture paused at start: CUPTI attaches at the first window");
}

static void start_now(const char *why)
{
    int cur = atomic_load(&state);
    if ((cur != ST_IDLE && cur != ST_PENDING) ||
        !atomic_compare_exchange_strong(&state, &cur, ST_STARTING))
        return;
    if (gt_core_is_forked_child()) {
        atomic_store(&state, ST_OFF);
        return;
    }
    gt_core_start_on_activity(); /* CUDA is in the process: the trace file now */
    char path[PATH_MAX + 32];
    if (!gt_cupti_load(path, sizeof path)) {
        gt_debug("libcupti not found: no GPU activity recorded (set GPUTRACE_CUPTI_LIB)");
        gt_core_set_cupti_state(GT_CUPTI_NOT_FOUND);
        atomic_store(&state, ST_OFF);
        return;
    }
    gt_debug("CUPTI from %s, started at %s", path, why);
    uint32_t version = 0;
    if (gt_cupti.GetVersion && gt_cupti.GetVersion(&version) == CUPTI_SUCCESS)
        gt_core_set_versions(0, 0, 0, 0, 0, (int32_t)version);
    bool paused = gt_core_capture_paused();
    CUptiResult r = paused ? CUPTI_SUCCESS : attach();
    if (r != CUPTI_SUCCESS) {
        give_up(r);
        return;
    }
    /* CUPTI stamps records with CLOCK_REALTIME unless told otherwise: keep the pair to prove it. */
    start_realtime_ns = gt_now_ns();
    if (GT_CUPTI_CALL(gt_cupti.GetTimestamp(&start_cupti_ns)) != CUPTI_SUCCESS)
        start_cupti_ns = 0;
    int64_t skew = (int64_t)(start_cupti_ns - start_realtime_ns);
    if (start_cupti_ns && (skew > 1000000 || skew < -1000000))
        gt_warn("CUPTI's clock differs from CLOCK_REALTIME by %lld ns: GPU times may be shifted",
                (long long)skew);
    gt_core_set_cupti_state(GT_CUPTI_ACTIVE);
    if (paused) {
        start_detached();
        if (!gt_core_capture_paused())
            apply_capture(true); /* a window opened while starting */
        return;
    }
    atomic_store(&state, ST_ACTIVE);
    if (gt_core_capture_paused())
        apply_capture(false); /* paused while starting */
}

/* This thread is inside start(): it never waits for a start, which would be its own. */
static _Thread_local bool tl_starting __attribute__((tls_model("initial-exec")));

static void start(const char *why)
{
    tl_starting = true;
    start_now(why);
    tl_starting = false;
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Another thread is starting CUPTI (the writer's periodic check, which often wins the race with
 * the first wrapped call): wait until it is attached. GPU work launched before that is never
 * recorded, and on a loaded machine the start stretches over the first calls of a short program
 * (and over its exit, whose flush then found nothing to flush). Bounded by elapsed time: the
 * starting thread may need what this one holds (the loader's lock, when the first call comes from
 * a library's constructor). Async-signal-safe (the exit hook may run in a signal handler). */
#define START_WAIT_MS 2000
static void wait_while_another_starts(void)
{
    if (tl_starting || atomic_load(&state) != ST_STARTING)
        return;
    uint64_t t0 = monotonic_ms();
    struct timespec ms = {0, 1000000};
    while (atomic_load(&state) == ST_STARTING && monotonic_ms() - t0 < START_WAIT_MS)
        nanosleep(&ms, NULL);
}

static void write_clock_sync(void)
{
    if (atomic_exchange(&clock_written, true))
        return;
    struct timespec mono, boot;
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    uint64_t realtime = gt_now_ns();
    uint64_t cupti_now = 0;
    if (gt_cupti.GetTimestamp(&cupti_now) != CUPTI_SUCCESS)
        cupti_now = start_cupti_ns ? start_cupti_ns + (realtime - start_realtime_ns) : 0;
    gt_rec_clock_sync sync = {
        .realtime_ns = realtime,
        .monotonic_ns = (uint64_t)mono.tv_sec * 1000000000ull + (uint64_t)mono.tv_nsec,
        .boottime_ns = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec,
        .cupti_ns = cupti_now,
    };
    gt_record_write(GT_REC_CLOCK_SYNC, 0, &sync, sizeof sync);
}

void gt_cupti_arm_exit_flush(void)
{
    if (!atomic_exchange(&armed_by_request, true))
        gt_core_register_late_atexit();
}

/* At exit, the writer's periodic flush may still be converting buffers that our own flush no
 * longer sees: give it a moment (bounded; nanosleep is async-signal-safe). */
static void wait_for_other_flushes(void)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 500 && atomic_load(&flushes_in_flight) > 0; i++)
        nanosleep(&ms, NULL);
}

static bool static_cudart_suspected(void)
{
    return atomic_load(&gt_cupti_kernels_seen) &&
           (!atomic_load(&wrapper_fired) || atomic_load(&gt_cupti_static_runtime));
}

/* A program whose calls no wrapper sees (static cudart, frameworks that dlsym their CUDA) still
 * gets API timing from CUPTI's runtime/driver records. Enabled here, on the writer thread, never
 * from inside a CUPTI callback. */
static void maybe_switch_api_records(void)
{
    if (gt_core_config()->api_mode != GT_API_AUTO || atomic_load(&api_records_on) ||
        !static_cudart_suspected())
        return;
    gt_core_set_header_flag(GT_HDR_STATIC_CUDART);
    if (enable_api_kinds() == CUPTI_SUCCESS)
        gt_debug("kernels ran but no wrapped CUDA call was seen (static cudart?): CUPTI runtime "
                 "and driver API records switched on");
}

/* Kernels without their queued time cannot be linked by it, nor a static runtime's launches by
 * anchors (gt_cupti_static_runtime): let the callbacks link the launches from now on (under the
 * capture lock: a paused capture keeps them off until it resumes). */
static void maybe_link_launches_by_callbacks(void)
{
    bool found_static = !atomic_load(&gt_cupti_static_runtime) &&
                        ((atomic_load(&gt_cupti_kernels_seen) && !atomic_load(&wrapper_fired)) ||
                         atomic_load(&anchor_missing));
    if (found_static)
        atomic_store(&gt_cupti_static_runtime, true);
    if (!atomic_load(&gt_cupti_queued_missing) && !atomic_load(&gt_cupti_static_runtime))
        return;
    pthread_mutex_lock(&capture_lock);
    bool switched = gt_cupti_callbacks_link_launches(!capture_off);
    pthread_mutex_unlock(&capture_lock);
    if (switched && found_static)
        gt_debug("a CUDA runtime no wrapper sees (static cudart): its kernel launches are now "
                 "recorded and linked by CUPTI callbacks; kernels before this point may have no "
                 "link");
    else if (switched)
        gt_warn("CUPTI gives kernels no queued time: kernel launches are now linked by CUPTI "
                "callbacks (slower); kernels before this point may have no link");
}

static void on_periodic(void)
{
    int st = atomic_load(&state);
    if (st == ST_PENDING && gt_cupti_cuda_libs_loaded())
        start("the periodic check (CUDA libraries mapped)");
    if (atomic_load(&state) != ST_ACTIVE || gt_core_is_forked_child())
        return;
    write_clock_sync();
    maybe_detach();
    if (!gt_cupti_is_attached()) {
        gt_cupti_write_stats(false);
        return;
    }
    flush(0);
    if (atomic_load(&gt_cupti_records_seen) && !atomic_exchange(&armed_by_records, true))
        gt_core_register_late_atexit(); /* CUDA is surely up now: get ahead of its teardown */
    maybe_switch_api_records();
    maybe_link_launches_by_callbacks();
    maybe_retry_hw_trace();
    gt_cupti_um_periodic();
    gt_cupti_write_stats(false);
}

static void on_before_exit(void)
{
    wait_while_another_starts(); /* then its records are flushed below, not after the end */
    if (atomic_load(&state) != ST_ACTIVE || gt_core_is_forked_child())
        return;
    write_clock_sync();
    /* trylock: this may run in a signal handler, in a thread that holds the lock (then an armed
     * detach stays armed, and what it had was flushed when it was armed) */
    if (pthread_mutex_trylock(&capture_lock) == 0) {
        if (cancel_armed_detach() == GT_LINK_DETACHING)
            wait_detached();
        pthread_mutex_unlock(&capture_lock);
    }
    if (gt_cupti_is_attached())
        flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    wait_for_other_flushes();
    if (static_cudart_suspected())
        gt_core_set_header_flag(GT_HDR_STATIC_CUDART);
    gt_cupti_write_stats(true);
}

/* The child of a fork shares nothing of CUPTI with its parent that it may touch. */
static void on_fork_child(void)
{
    atomic_store(&push_allowed, false);
    atomic_store(&state, ST_OFF);
    atomic_store(&gt_cupti_link, GT_LINK_DETACHED);
    tl_push_depth = 0;
    gt_cupti_records_reset_after_fork();
    gt_cupti_callbacks_reset_after_fork();
    gt_cupti_um_reset_after_fork();
}

static void cupti_init(void)
{
    gt_core_on_fork_child(on_fork_child);
    gt_core_on_capture(on_capture);
    const gt_config *cfg = gt_core_config();
    if (cfg->disabled || !cfg->cupti) {
        gt_core_set_cupti_state(GT_CUPTI_DISABLED);
        atomic_store(&state, ST_OFF);
        return;
    }
    gt_core_on_periodic(on_periodic);
    gt_core_on_before_exit(on_before_exit);
    /* nvcc links cudart statically by default: such a program's calls reach no wrapper */
    if (gt_cupti_exe_has_fatbin() && !gt_cupti_cudart_mapped()) {
        atomic_store(&gt_cupti_static_runtime, true);
        gt_debug("the program carries device code and no shared libcudart (static cudart): its "
                 "kernel launches are recorded from CUPTI's callbacks");
    }
    if (cfg->cupti_lib[0])
        start("load (GPUTRACE_CUPTI_LIB)");
    else if (gt_cupti_cuda_libs_loaded())
        start("load (CUDA libraries mapped)");
    else if (gt_cupti_exe_has_fatbin())
        start("load (the program carries its own device code)");
    else
        atomic_store(&state, ST_PENDING);
}

/* After the wrappers' module: CUPTI may be started by the first wrapped call. */
GT_MODULE(cupti_module) = {"cupti", GT_MODULE_ORDER_CUPTI, cupti_init};

void gt_cupti_note_wrapper_fired(void)
{
    if (atomic_load_explicit(&wrapper_fired, memory_order_relaxed))
        return;
    atomic_store(&wrapper_fired, true);
    if (atomic_load(&state) == ST_PENDING)
        start("the first wrapped call");
    wait_while_another_starts(); /* this call's GPU work is recorded, as on an idle machine */
}

void gt_cupti_push_correlation(uint64_t corr_id)
{
    if (!atomic_load_explicit(&push_allowed, memory_order_relaxed))
        return;
    if (gt_cupti_cb_enter_call(corr_id,
                               atomic_load_explicit(&api_records_on, memory_order_relaxed)))
        return; /* the callbacks pair it with CUPTI's ids: no CUPTI call on this path */
    if (gt_cupti.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2,
                                                   corr_id) == CUPTI_SUCCESS)
        tl_push_depth++;
}

void gt_cupti_pop_correlation(void)
{
    gt_cupti_cb_leave_call();
    if (!tl_push_depth)
        return;
    tl_push_depth--;
    if (!atomic_load_explicit(&push_allowed, memory_order_relaxed))
        return;
    uint64_t last = 0;
    gt_cupti.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

/* GPUTRACE_CUPTI_LINK=order (the default): the application's own cudaRuntimeGetVersion (the real
 * one, resolved by the wrappers), a call that does nothing on the GPU, made inside the outermost
 * wrapped cuDNN/cuBLAS call: its CUPTI callback records the correlation id it got
 * (gt_cupti_callbacks.c). CUPTI numbers API calls from one counter, so the kernels the library
 * launches in between carry ids between the two anchors (on the H200 every one of 13,524 library
 * kernels did, agreeing with a callback pair per launch). The analyzer matches the runtime
 * launches to their kernels by order (analyzer/model/order_link.h). Without a shared cudart there
 * is no anchor: the process runs a static runtime, whose launches the callbacks pair instead
 * (gt_cupti_static_runtime; what ran before the next flush stays unlinked, counted). */
bool gt_cupti_anchor(bool begin, void *runtime_get_version)
{
    typedef int (*runtime_version_fn)(int *);
    runtime_version_fn f = (runtime_version_fn)runtime_get_version;
    if (!gt_core_config()->cupti_anchors ||
        !atomic_load_explicit(&push_allowed, memory_order_relaxed))
        return false;
    gt_cupti_tl_call *t = &gt_cupti_tl_call_state;
    if (t->depth != 1 || !t->by_callbacks)
        return false; /* nested calls belong to the outermost one */
    if (!f) {         /* a static runtime: the launch callbacks pair them from the next flush on */
        if (!atomic_load_explicit(&anchor_missing, memory_order_relaxed))
            atomic_store(&anchor_missing, true);
        return false;
    }
    int version = 0;
    t->anchor_site = begin ? 1 : 2;
    f(&version);
    t->anchor_site = 0;
    return true;
}

/* The CUDA driver calls this in a library named by CUDA_INJECTION64_PATH while it initialises:
 * the way into programs that carry their own static cudart. */
GT_EXPORT int InitializeInjection(void)
{
    start("InitializeInjection (CUDA_INJECTION64_PATH)");
    return 1;
}
