/* core_internal.h — shared state of the recording core's files (not for other modules). */
#ifndef GT_CORE_INTERNAL_H
#define GT_CORE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gt_core.h"

#define GT_MAX_RINGS 4096
#define GT_CHUNK_LIMIT (1u << 20) /* the writer cuts chunks at 1 MB: little is lost to a crash */
#define GT_MAX_STRING 8192        /* longer interned strings are cut (kernel names fit) */

enum ring_state { RING_FREE = 0, RING_LIVE = 1, RING_EXITED = 2 };

/* One thread's single-producer/single-consumer byte ring. head and tail only grow; positions are
 * taken modulo cap. Records never straddle the end: a PAD record fills the gap instead. */
typedef struct gt_ring {
    /* producer's line */
    _Atomic uint64_t head;
    uint64_t tail_cache; /* producer's last view of tail */
    uint64_t open_end;   /* head after the open record */
    uint64_t mask;
    _Atomic uint64_t committed; /* records committed (PADs not counted); only the owner stores */
    unsigned char *data;
    uint32_t tid;
    _Atomic uint32_t internal; /* a gputrace thread (CUPTI's worker, the writer): drained last */
    /* consumer's line: apart from the producer's so they do not share a cache line */
    _Alignas(64) _Atomic uint64_t tail;
    _Atomic uint32_t state;  /* enum ring_state */
    uint32_t thread_written; /* writer-only: GT_REC_THREAD emitted for this owner */
    char name[16];           /* writer-only: name last written */
    uint64_t written;        /* writer-only: records of this owner written (or counted lost) */
    char exit_name[16];      /* the owner's name as it exited (set before state = EXITED) */
    /* losses, exchanged by the writer into GT_REC_LOST records */
    _Atomic uint64_t lost_full, lost_large;
    _Atomic uint64_t lost_t_first, lost_t_last;
} gt_ring;

/* g_recording: whether records are accepted. */
enum gt_recording_state {
    GT_RECORDING_STOPPED = 0, /* not started, finished, or a write failed */
    GT_RECORDING_ON = 1,
    GT_RECORDING_PAUSED = 2, /* capture range paused: only CUPTI's and the library's own records
                              * are accepted (the wrappers' guard sees "not on") */
    GT_RECORDING_ENDED = 3,  /* the trace ended (exit, fatal signal, write failure): every call
                              * and record from now on is counted, not recorded (writer.c) */
    GT_RECORDING_LAZY = 4,   /* loaded, no file yet: the first wrapped call or record creates it
                              * (core.c), so a process that never uses CUDA leaves none */
    GT_RECORDING_ENDING = 5, /* a fatal signal is ending the process: CUPTI's last records are
                              * still taken; the application's new calls wait (then count) */
};

extern gt_config g_cfg;
extern _Atomic int g_recording;     /* enum gt_recording_state */
extern _Atomic int g_writer_failed; /* a write failed: recording stopped for good */
extern gt_ring *g_rings[GT_MAX_RINGS];
extern _Atomic uint32_t g_nrings;
extern pthread_mutex_t g_reg_lock;
extern _Atomic uint64_t g_lost_total;
extern _Atomic uint64_t g_lost_no_ring; /* threads that could not get a ring */

/* ring.c */
void gt_ring_fork_child(void);
/* A call or record that came after the trace ended: counted (writer.c), never recorded. Cold,
 * async-signal-safe. */
void gt_core_note_after_end(void);
/* A call that found gputrace at work on its thread (gt_fast_guard_enter): interrupted 1 = from a
 * signal handler inside gputrace's bookkeeping (lost), 0 = nested in a wrapped call's real
 * function. Async-signal-safe: one atomic add. */
void gt_core_note_reentry(int interrupted);
/* Their counts so far, for the end record. */
uint64_t gt_writer_calls_interrupted(void);
uint64_t gt_writer_calls_nested(void);
uint64_t gt_writer_calls_before_cupti(void); /* gt_core_note_call_before_cupti (gt_core.h) */
/* A new call while a fatal signal ends the process: it waits (bounded) until the trace ended,
 * leaving the CPU to the ending, then is counted like any call after the end. */
void gt_core_wait_while_ending(void);
void gt_ring_note_loss(gt_ring *r, int too_large);

/* intern.c */
extern pthread_mutex_t g_intern_lock;
uint32_t gt_intern_count_locked(void);
const char *gt_intern_get_locked(uint32_t id, uint32_t *len);

/* procs.c: the line a process without CUDA activity leaves at exit (gputrace-<host>.procs).
 * prepare at load and in a forked child; note_exit is async-signal-safe, writes once. */
void gt_procs_prepare(const gt_file_header *hdr, const char *exe);
void gt_procs_note_exit(void);

/* writer.c */
int gt_writer_start(int fd, const char *path);
void gt_writer_kick(void);
/* Wait (at most timeout_ms of CLOCK_MONOTONIC time) until everything committed before the call is
 * written. Async-signal-safe. False on timeout or when no writer runs. */
bool gt_writer_flush_wait(int timeout_ms);
/* End the trace: the final pass, then the GT_REC_END chunk (reason: enum gt_end_reason; sig for
 * GT_END_SIGNAL). The caller set g_recording to ENDED first. gt_writer_stop does it on the writer
 * thread and joins it; gt_writer_end_within does it from a signal handler: the writer stops
 * writing ring data at budget_ms * 3/4, counts what it could not write, and ends; the call
 * returns by budget_ms (async-signal-safe; false when the end could not be written in time). */
void gt_writer_stop(void);
bool gt_writer_end_within(int reason, int sig, int budget_ms);
/* After the end: the losses the END chunk counts (for the exit line). */
uint64_t gt_writer_end_lost(void);
uint64_t gt_writer_after_end(void);
void gt_writer_fork_prepare(void); /* fork handlers: no pass in progress across fork */
void gt_writer_fork_parent(void);
void gt_writer_fork_child_reset(void);
void gt_writer_header_changed(void);
uint64_t gt_writer_records_written(void);
/* Drain every ring now in the calling thread (any thread; no lock of ours held). False when the
 * writer is not running. */
bool gt_writer_drain_now(void);
const char *gt_writer_path(void);

/* clock.c: the trace's clock (CLOCK_REALTIME ns), read from the TSC along a published line; see
 * the file comment. gt_config.clock_mode takes these values (GPUTRACE_CLOCK). */
enum { GT_CLOCK_AUTO = 0, GT_CLOCK_TSC = 1, GT_CLOCK_REALTIME = 2 };
#define GT_CLOCK_STEP_NS 50000 /* a larger error at a re-anchor is stepped, not slewed */
typedef struct gt_clock_slot {
    /* ns = offset + (tsc * mult) >> 32 (128-bit product) for tsc <= expire_tsc: the line through
     * (anchor_tsc, anchor_ns), with offset = anchor_ns - ((anchor_tsc * mult) >> 32) (mod 2^64),
     * so the hot path needs no subtraction. */
    _Atomic uint64_t offset;
    _Atomic uint64_t mult;       /* ns per tick << 32, slew included */
    _Atomic uint64_t expire_tsc; /* the line is good up to this TSC; 0: no line */
    _Atomic uint64_t anchor_tsc; /* where the line was anchored (for the writer) */
} gt_clock_slot;
/* gen grows by GT_CLOCK_GEN_STEP per line published, so (gen & GT_CLOCK_GEN_STEP) is the byte
 * offset of the current slot: one AND on the hot path, no shift. */
#define GT_CLOCK_GEN_STEP 32u
typedef struct gt_clock_published {
    _Alignas(64) gt_clock_slot slot[2]; /* first: the slot is at (gen & STEP) from the base */
    _Atomic uint64_t gen;
} gt_clock_published;
_Static_assert(sizeof(gt_clock_slot) == GT_CLOCK_GEN_STEP, "slot offset is gen & STEP");
extern gt_clock_published gt_clock_pub;
void gt_clock_init(void);        /* at load, after the configuration: TSC or not, 1st sample */
void gt_clock_tick(void);        /* writer passes, under the pass lock: re-anchor when due */
uint32_t gt_clock_wait_ms(void); /* how long the writer may sleep before the next anchor */
typedef struct gt_clock_info {
    int mode;       /* GT_CLOCK_TSC or GT_CLOCK_REALTIME */
    bool published; /* readers follow a TSC line now */
    bool invariant; /* the CPU reports an invariant TSC (what auto goes by) */
    uint64_t anchors, steps;
    double ticks_per_us;
    uint64_t period_ns;
    int64_t last_error_ns, max_error_ns; /* line minus CLOCK_REALTIME at re-anchors (slewed) */
} gt_clock_info;
void gt_clock_get_info(gt_clock_info *out);
void gt_clock_test_shift(int64_t ns); /* tests: the current line moves by ns (a fake error) */

/* capture.c: GPUTRACE_CAPTURE=signal/trigger-file. init at load (the signal handler); poll on
 * each writer round, no lock held: opens or closes the window the signal or file asks for. */
void gt_capture_init(void);
void gt_capture_poll(void);
bool gt_capture_windows(void); /* recording runs in windows (not with the flight recorder) */

/* flight.c: GPUTRACE_FLIGHT_RECORDER's memory of chunks (writer thread only; see the file). */
void gt_flight_configure(uint32_t seconds, uint32_t cap_mb);
void gt_flight_store(const gt_chunk_header *h, const void *payload, uint64_t records,
                     uint64_t now_ns);
uint64_t gt_flight_keep(const unsigned char *payload, uint32_t len, uint64_t real_total,
                        uint32_t tid, uint64_t now_ns, bool (*define)(const gt_record_header *rec));
uint64_t gt_flight_oldest_ns(uint64_t now_ns); /* evicts what is too old first; 0: none held */
bool gt_flight_take(gt_chunk_header **h, uint64_t *records); /* the oldest, removed */
void gt_flight_counts(uint64_t *evicted_chunks, uint64_t *evicted_records, uint64_t *held_records);
void gt_flight_fork_child(void);
/* writer.c: write what the flight recorder holds at the next writer round (async-signal-safe). */
void gt_writer_flight_request(void);
/* After the end: records the flight recorder evicted (for the exit line). */
uint64_t gt_writer_flight_evicted(void);

/* core.c */
extern pthread_mutex_t g_hdr_lock;
extern gt_file_header g_hdr;
size_t gt_header_snapshot(void *buf, size_t cap); /* encoded, sealed header */
void gt_run_hooks_periodic(void);
void gt_run_hooks_capture(bool on);

#endif
