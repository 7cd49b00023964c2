/* gt_core.h — the recording core inside libgputrace.so: the small API every wrapper and the CUPTI
 * module use. Hot-path functions take no lock, call no malloc and no stdio.
 *
 * Typical wrapper:
 *     if (!gt_guard_enter()) return real(args);          // nested or not recording
 *     uint64_t t0 = gt_now_ns();
 *     r = real(args);
 *     gt_rec_api_sync *rec = gt_record_begin(GT_REC_API_SYNC, sizeof *rec);
 *     if (rec) { fill...; gt_record_commit(rec); }
 *     gt_guard_leave();
 *     return r;
 */
#ifndef GT_CORE_H
#define GT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gtrace_api.h"
#include "gtrace_format.h"

#define GT_EXPORT __attribute__((visibility("default")))

/* CLOCK_REALTIME in ns: the one clock of the trace (CUPTI's default clock too). */
uint64_t gt_now_ns(void);

/* True while recording (started, not stopped by an error, not in a forked child that was told to
 * stop). Cheap: one relaxed atomic load. */
bool gt_core_recording(void);

/* Recursion guard. gt_guard_enter returns true when the caller is the outermost gputrace wrapper on
 * this thread and recording is on; then the caller must call gt_guard_leave. Returns false (and the
 * caller must NOT call leave) inside another wrapper, inside gputrace's own threads or work, or
 * while not recording. */
bool gt_guard_enter(void);
void gt_guard_leave(void);
/* Marks the calling thread as gputrace's own (writer, CUPTI callbacks): its calls are never
 * recorded. */
void gt_guard_mark_internal_thread(void);

/* Reserve room for one record of kind with a body of body_size bytes in this thread's buffer.
 * Returns a pointer to the zeroed body (8-byte aligned), or NULL when not recording or the buffer
 * is full (the loss is counted and written later as a GT_REC_LOST record). gt_record_commit
 * publishes it. At most one record may be open per thread at a time. flags go into the record
 * header. */
void *gt_record_begin(uint16_t kind, uint16_t flags, uint32_t body_size);
void gt_record_commit(void *body);
/* Record a whole body in one call (copy). Returns false when dropped. */
bool gt_record_write(uint16_t kind, uint16_t flags, const void *body, uint32_t body_size);

/* For writers that are not on the application's hot path (the CUPTI buffer-completed callback):
 * like gt_record_begin, but when the buffer is full it writes the rings out itself, in the calling
 * thread (never waiting on the writer thread, which may be waiting on CUPTI), for up to timeout_ms
 * before counting a loss. Call it with no lock held. */
void *gt_record_begin_wait(uint16_t kind, uint16_t flags, uint32_t body_size, int timeout_ms);

/* Intern a string: returns its id (>= 1), 0 on failure. The first intern of a string writes a
 * GT_REC_STRING that reaches the file before any record that uses the id. Thread-safe; takes a
 * short lock, so call it once per distinct name and cache the id (e.g. per kernel function
 * pointer). */
uint32_t gt_intern(const char *s);
uint32_t gt_intern_n(const char *s, size_t len);

/* Process-wide unique id for a call, pushed to CUPTI as the external correlation id. */
uint64_t gt_next_corr_id(void);

/* Runtime facts for the header: the writer rewrites the header with them. Thread-safe, cold. */
void gt_core_set_versions(int32_t driver, int32_t runtime, int32_t cudnn, int32_t cudnn_cudart,
                          int32_t cublas, int32_t cupti); /* pass 0 to leave a value unchanged */
void gt_core_set_device(int ordinal, const gt_device_info *info);
void gt_core_set_cupti_state(uint32_t state);
void gt_core_set_header_flag(uint32_t flag);
/* A call that gives the GPU work was made while CUPTI was due but not attached: its kernels,
 * copies and memsets are never recorded. Counted in the end record (calls_before_cupti) and on the
 * exit line. One relaxed atomic add. */
void gt_core_note_call_before_cupti(void);

/* Hand this thread's records to the writer now and wait until they are written (cold; used at exit
 * and by the CUPTI module). Never call with a lock held. */
void gt_core_flush_self(void);
/* Write everything recorded so far by all threads (cold). */
void gt_core_flush_all(void);

/* The one way the core reaches the other modules of libgputrace.so (the wrappers in wrap/, CUPTI in
 * cupti/): they depend on the core, never the reverse. Each module defines one GT_MODULE entry;
 * the core's constructor finds the entries in the "gt_modules" section and calls their init in
 * order (lowest first) once recording started, so the core names no module and needs no weak
 * symbols (a binary without a module, such as tests/core's, just has no entry). An init hangs the
 * module's work on the hooks below. */
typedef struct gt_module {
    const char *name;
    int order; /* GT_MODULE_ORDER_*: init order */
    void (*init)(void);
} gt_module;
enum { GT_MODULE_ORDER_WRAP = 1, GT_MODULE_ORDER_CUPTI = 2, GT_MODULE_ORDER_MAX = 8 };
#define GT_MODULE(ident)                                                                           \
    static const gt_module ident                                                                   \
        __attribute__((used, section("gt_modules"), aligned(sizeof(void *))))

/* Hooks for the modules, called without gputrace locks held:
 *  - before_exit: at process exit before the CUDA runtime tears down, and on the fatal signals, to
 *    flush CUPTI. May be called from a signal handler: keep it to async-signal-safe work there.
 *  - fork_child: in the child right after fork (only the forking thread exists).
 *  - periodic: on the writer thread every flush period (GPUTRACE_FLUSH_MS).
 *  - capture: the capture range paused (false) or resumed (true) (GPUTRACE_CAPTURE). */
typedef void (*gt_core_hook)(void);
typedef void (*gt_core_capture_hook)(bool on);
void gt_core_on_before_exit(gt_core_hook fn);
void gt_core_on_fork_child(gt_core_hook fn);
void gt_core_on_periodic(gt_core_hook fn);
void gt_core_on_capture(gt_core_capture_hook fn);
/* Arrange for the before_exit hooks to run before atexit handlers registered so far (call it after
 * the CUDA runtime initialised: atexit runs handlers in reverse order of registration). */
void gt_core_register_late_atexit(void);

/* The process uses CUDA: the trace file is created and the writer started now if that has not
 * happened yet (gputrace loads without a file, so a process that never uses CUDA leaves none). The
 * core calls it at the first wrapped call and the first record; cupti/ when CUPTI starts (CUDA
 * libraries mapped, device code in the program). Cold; other threads arriving meanwhile wait. */
void gt_core_start_on_activity(void);

/* True in a child created by fork (without exec) of a traced process. */
bool gt_core_is_forked_child(void);

/* Configuration read once at load from GPUTRACE_* variables (bad values: a warning naming the
 * variable, then the default). */
/* GPUTRACE_CUPTI_CALLBACKS: which CUPTI callbacks pair GPU work with the wrapped calls. */
enum gt_cupti_cb_mode {
    GT_CUPTI_CB_OFF = 0,     /* none: GPU work is not linked to calls */
    GT_CUPTI_CB_ALL = 1,     /* every entry point that puts work on the GPU */
    GT_CUPTI_CB_RUNTIME = 2, /* the runtime domain only */
    GT_CUPTI_CB_PROBE = 3,   /* one entry point applications hardly call (cost measurements) */
    GT_CUPTI_CB_AUTO = 4,    /* default: copies, sets, graph launches (and the anchors); launches
                              * only with GPUTRACE_CUPTI_LINK=callbacks or queued times missing */
};

/* GPUTRACE_API: which calls get CUPTI's runtime/driver API records. */
enum gt_api_mode {
    GT_API_AUTO = 0, /* default: only when no wrapper sees the calls (static cudart) */
    GT_API_FULL = 1, /* always */
    GT_API_OFF = 2,  /* never */
};
/* GPUTRACE_UM: CUPTI's unified-memory counters (page faults, migrations). */
enum gt_um_mode {
    GT_UM_AUTO = 0, /* default: from the process's first managed allocation */
    GT_UM_ON = 1,   /* from the start, managed memory or not */
    GT_UM_OFF = 2,  /* never */
};
/* GPUTRACE_STACKS: 0 off, else the highest gt_stack_reason captured (gt_stacks.h). */
enum gt_stacks_mode { GT_STACKS_OFF = 0, GT_STACKS_ADVICE = 1, GT_STACKS_ALL = 2 };
/* GPUTRACE_CAPTURE: when recording runs. */
enum gt_capture_mode {
    GT_CAPTURE_ALL = 0,          /* default: from load to exit */
    GT_CAPTURE_PROFILER_API = 1, /* between cudaProfilerStart and cudaProfilerStop */
    GT_CAPTURE_SIGNAL = 2,       /* each capture signal (SIGUSR2) opens or closes a window */
    GT_CAPTURE_TRIGGER_FILE = 3, /* while the trigger file exists */
};

/* GPUTRACE_STACK_PYTHON: Python frames in stacks. */
enum gt_stack_python_mode {
    GT_STACK_PYTHON_OFF = 0,
    GT_STACK_PYTHON_ON = 1,  /* default: with or without the GIL */
    GT_STACK_PYTHON_GIL = 2, /* only while the thread holds the GIL */
};

typedef struct gt_config {
    char dir[512];        /* GPUTRACE_DIR, default "." */
    bool quiet;           /* GPUTRACE_QUIET=1 */
    bool verbose;         /* GPUTRACE_VERBOSE=1 */
    bool disabled;        /* GPUTRACE_DISABLE=1: load but record nothing */
    uint32_t buffer_kb;   /* GPUTRACE_BUFFER_KB per thread, default 4096 */
    uint32_t flush_ms;    /* GPUTRACE_FLUSH_MS, default 200 */
    uint32_t cupti_mb;    /* GPUTRACE_CUPTI_MB cap on CUPTI buffers, default 256 */
    bool cupti;           /* GPUTRACE_CUPTI=0 disables CUPTI, default on */
    int api_mode;         /* GPUTRACE_API: gt_api_mode */
    int stacks_mode;      /* GPUTRACE_STACKS: gt_stacks_mode, default advice */
    uint32_t stack_depth; /* GPUTRACE_STACK_DEPTH, default 24 */
    char cupti_lib[512];  /* GPUTRACE_CUPTI_LIB */
    int cupti_callbacks;  /* GPUTRACE_CUPTI_CALLBACKS: gt_cupti_cb_mode */
    /* GPUTRACE_CUPTI_LINK: how kernels are linked to their launching call. order (default):
     * anchors around library calls, launches matched by order offline; queued: kernels' queued
     * timestamps; callbacks: a CUPTI callback pair on every launch. */
    bool cupti_latency; /* queued */
    bool cupti_anchors; /* order */
    int clock_mode;   /* GPUTRACE_CLOCK: 0 auto (default: TSC when invariant), 1 tsc, 2 realtime */
    bool nvtx;        /* GPUTRACE_NVTX, default on (nvtx.c reads it before this is loaded) */
    int stack_python; /* GPUTRACE_STACK_PYTHON: gt_stack_python_mode */
    bool stack_cache; /* GPUTRACE_STACK_CACHE, default on */
    int capture_mode; /* GPUTRACE_CAPTURE: gt_capture_mode */
    int capture_signal;     /* GPUTRACE_CAPTURE_SIGNAL, default SIGUSR2 */
    char capture_file[512]; /* GPUTRACE_CAPTURE=trigger-file:PATH */
    /* GPUTRACE_CUPTI_KINDS: which activity kinds CUPTI records (GT_KIND_* bits; default all). A
     * knob for measuring what each kind costs (tools/bench/whole_process.py), not for users. */
    uint32_t cupti_kinds;
    /* GPUTRACE_CUPTI_HW_TRACE (default on): ask CUPTI for kernel timestamps from the GPU's
     * hardware events (cuptiActivityEnableHWTrace, Blackwell and later), falling back silently. */
    bool cupti_hw_trace;
    /* GPUTRACE_CUPTI_DETACH (default on): a paused capture detaches CUPTI (cuptiFinalize) and the
     * next window attaches it again; a capture paused from the start attaches at its first. */
    bool cupti_detach;
    /* GPUTRACE_FLIGHT_RECORDER=SECONDS (0: off): keep the application's last seconds in memory
     * (at most GPUTRACE_FLIGHT_RECORDER_MB) and write them on a trigger, at exit or at a fatal
     * signal (interpose/core/flight.c). */
    uint32_t flight_s;
    uint32_t flight_mb;
    /* GPUTRACE_SAMPLE=ON/OFF (seconds): CUPTI's records ON seconds out of every ON + OFF, the
     * calls all along (capture.c); 0/0: off. */
    uint32_t sample_on_ms, sample_off_ms;
    int um_mode; /* GPUTRACE_UM: gt_um_mode */
} gt_config;

enum gt_cupti_kind_bits {
    GT_KIND_KERNEL = 1u << 0,
    GT_KIND_MEMCPY = 1u << 1, /* MEMCPY and MEMCPY2 */
    GT_KIND_MEMSET = 1u << 2,
    GT_KIND_OVERHEAD = 1u << 3,
    GT_KIND_ALL = (1u << 4) - 1,
};
const gt_config *gt_core_config(void);
/* 1 for 1/true/yes/on, 0 for 0/false/no/off (any case), -1 for anything else: how every boolean
 * GPUTRACE_* variable reads. */
int gt_parse_bool_value(const char *v);

/* Diagnostics to stderr with the "gputrace: " prefix, via write(2) (no stdio). Cold path only.
 * gt_warn always prints unless GPUTRACE_QUIET=1; gt_debug only with GPUTRACE_VERBOSE=1. */
void gt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gt_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Capture range (GPUTRACE_CAPTURE=profiler-api, like nsys --capture-range=cudaProfilerApi):
 * recording starts paused; cudaProfilerStart resumes it, cudaProfilerStop pauses it. While paused
 * the wrappers record nothing and the capture hooks tell CUPTI to produce no records; records
 * CUPTI already holds still arrive. No effect in the other modes. Called by the
 * cudaProfilerStart/Stop wrappers. The signal and trigger-file modes pause and resume the same
 * way, from the writer thread (capture.c). */
void gt_core_capture_set(bool on);
bool gt_core_capture_paused(void);

#endif
