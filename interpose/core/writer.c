/* writer.c — the writer thread: moves committed records from the rings into chunks of the file.
 * Order matters for readers: rings are snapshotted first, then the strings interned so far are
 * written, then the snapshotted records, so a string id is always defined before it is used;
 * the application's rings before gputrace's own threads' (CUPTI records), so a call and its
 * external correlation come before the GPU work they explain. The thread blocks every signal;
 * write(2)/writev(2) with EINTR retry, no stdio.
 *
 * The end of the trace (end.c's half of this file: end_trace and below): one last chunk holds a
 * GT_LOST record for every loss the file does not show yet and the GT_REC_END record, so the file's
 * LOST records add up to what the exit line says. After a write failure the file is cut back to
 * its last whole chunk, and whole chunks are given back (their records counted as lost) until the
 * end chunk fits. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "core_internal.h"
#include "gt_encode.h"

#define OWN_CAP (64u << 10)
#define PARK_MS 2000         /* longer than a signal's end (SIGNAL_FLUSH_MS, core.c) */
#define THREAD_NAME_EVERY 10 /* passes between checks for renamed threads */
#define CLOCK_SYNC_NS 1000000000ull

static int g_fd = -1;
static char g_path[1024];
static uint32_t g_seq;
static _Atomic uint64_t g_records;
static uint32_t g_strings_written;
static unsigned char g_own[OWN_CAP] __attribute__((aligned(8)));
static size_t g_own_used;
static uint64_t g_last_clock_sync, g_last_periodic, g_passes;
static unsigned char g_hdr_buf[16384] __attribute__((aligned(8)));
static uint64_t g_snap[GT_MAX_RINGS];
static uint32_t g_snap_state[GT_MAX_RINGS];

static _Atomic int g_kick;
static _Atomic int g_stop;
static _Atomic int g_header_dirty;
static _Atomic int g_running;
static _Atomic int g_thread_alive; /* writer_main began: the thread library's start-up is over */
static _Atomic uint64_t g_flush_req, g_flush_done;
static pthread_t g_thread;
static __thread int tls_is_writer;

/* Where the file stands: the end of the last whole chunk, and the last chunks written (to give
 * back after a write failure). */
#define CHUNK_MARKS 16
typedef struct chunk_mark {
    uint64_t off;     /* where the chunk starts */
    uint64_t records; /* real records in it */
    uint64_t lost;    /* LOST counts in it */
    bool app;         /* a ring's chunk (the application's records), not gputrace's own */
    uint32_t seq;
} chunk_mark;
static uint64_t g_good_off;
static chunk_mark g_marks[CHUNK_MARKS];
static uint32_t g_nmarks; /* marks held, at most CHUNK_MARKS; the newest at g_mark_next - 1 */
static uint32_t g_mark_next;
static uint64_t g_lost_in_file; /* sum of the LOST counts in whole chunks */
static uint64_t g_own_lost;     /* LOST counts waiting in g_own */

/* The end (see the file comment). */
static _Atomic uint64_t g_deadline_ns; /* nonzero: ring data is written until this gt_now_ns */
static _Atomic int g_end_req;          /* a signal handler asks the writer thread to end */
static _Atomic int g_end_reason, g_end_signal;
static _Atomic uint64_t g_end_begin_ns;
static _Atomic int g_end_written;
static _Atomic uint64_t g_after_end; /* calls and records after the end: counted, not recorded */
static _Atomic uint64_t g_calls_interrupted, g_calls_nested; /* gt_core_note_reentry */
static _Atomic uint64_t g_calls_before_cupti;                /* gt_core_note_call_before_cupti */
static _Atomic int g_end_busy; /* one thread rewrites the end chunk at a time */
static uint64_t g_end_off, g_end_after_written, g_end_lost;
static uint32_t g_end_len;
static unsigned char g_end_chunk[sizeof(gt_chunk_header) + 256] __attribute__((aligned(8)));
/* Held around every pass, by the writer or by a thread that drains inline (gt_writer_drain_now),
 * and around closing the file. Never held across a hook or any call into CUDA or CUPTI, so a
 * thread that waits for room can always take it: the writer may be blocked inside CUPTI (its
 * periodic FlushAll waits for CUPTI's worker, which may be the very thread waiting for room). */
static pthread_mutex_t g_pass_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_file_open; /* under g_pass_lock: passes may write */

/* ---------------------------------------------------------------- wake-ups */

void gt_writer_kick(void)
{
    /* Async-signal-safe: an atomic and a syscall. Only the first kick of a period wakes. */
    if (!atomic_exchange(&g_kick, 1))
        syscall(SYS_futex, &g_kick, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void wait_for_kick(uint32_t ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    syscall(SYS_futex, &g_kick, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
}

/* ---------------------------------------------------------------- output */

/* The first cause of the end wins. */
static void note_end_cause(int reason, int sig)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&g_end_reason, &none, reason)) {
        atomic_store(&g_end_signal, sig);
        atomic_store(&g_end_begin_ns, gt_now_ns());
    }
}

/* From now on every call is counted, none recorded; the next pass ends the trace. */
static void write_failed(int err)
{
    if (atomic_exchange(&g_writer_failed, 1))
        return;
    note_end_cause(GT_END_WRITE_FAILED, 0);
    atomic_store(&g_recording, GT_RECORDING_ENDED);
    gt_warn("cannot write %s: %s; recording stopped, what could not be written is counted as lost "
            "(the application continues)",
            g_path, strerror(err));
}

static int writev_all(struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t w = writev(g_fd, iov, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            write_failed(w < 0 ? errno : ENOSPC);
            return -1;
        }
        while (n > 0 && (size_t)w >= iov->iov_len) {
            w -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + w;
            iov->iov_len -= (size_t)w;
        }
    }
    return 0;
}

/* A chunk with its header filled (seq is set here): written, and marked for a give-back. */
static int write_chunk(gt_chunk_header *h, const void *payload, uint64_t real, uint64_t lost)
{
    if (atomic_load(&g_writer_failed))
        return -1;
    h->seq = g_seq;
    struct iovec iov[2] = {{h, sizeof *h}, {(void *)payload, h->payload_len}};
    if (writev_all(iov, 2) < 0)
        return -1;
    g_marks[g_mark_next] = (chunk_mark){g_good_off, real, lost, h->tid != 0, g_seq};
    g_mark_next = (g_mark_next + 1) % CHUNK_MARKS;
    g_nmarks += g_nmarks < CHUNK_MARKS;
    g_good_off += sizeof *h + h->payload_len;
    g_seq++;
    g_lost_in_file += lost;
    atomic_fetch_add(&g_records, real);
    return 0;
}

/* count: records in the payload (PADs too); real: those a reader returns; lost: the LOST counts
 * in it. */
static int emit_chunk(const void *payload, uint32_t len, uint32_t count, uint32_t tid,
                      uint64_t real, uint64_t lost)
{
    if (!len || atomic_load(&g_writer_failed))
        return -1;
    gt_chunk_header h = {.magic = GT_CHUNK_MAGIC,
                         .payload_len = len,
                         .crc32 = (uint32_t)crc32(0L, payload, len),
                         .record_count = count,
                         .tid = tid};
    return write_chunk(&h, payload, real, lost);
}

static void own_flush(void)
{
    if (!g_own_used)
        return;
    uint32_t count = gt_payload_count_records(g_own, (uint32_t)g_own_used);
    emit_chunk(g_own, (uint32_t)g_own_used, count, 0, count, g_own_lost);
    g_own_used = 0;
    g_own_lost = 0;
}

static void own_add_flags(uint16_t kind, uint16_t flags, const void *body, uint32_t size)
{
    size_t n = gt_record_append(g_own, OWN_CAP, g_own_used, kind, flags, body, size);
    if (!n) {
        own_flush();
        n = gt_record_append(g_own, OWN_CAP, 0, kind, flags, body, size);
    }
    g_own_used += n;
}

static void own_add(uint16_t kind, const void *body, uint32_t size)
{
    own_add_flags(kind, 0, body, size);
}

/* ---------------------------------------------------------------- flight recorder */

/* GPUTRACE_FLIGHT_RECORDER: the application's chunks go to flight.c's memory instead of the file;
 * what they define for later records (and the losses) is written as it comes, from g_own. */
static _Atomic int g_flight_req;
static bool flight_on(void)
{
    return g_cfg.flight_s != 0;
}

static bool flight_define(const gt_record_header *rec)
{
    if (rec->size > OWN_CAP / 2)
        return false; /* held with the rest instead */
    own_add_flags(rec->kind, rec->flags, rec + 1, rec->size - (uint32_t)sizeof *rec);
    return true;
}

static bool past_deadline(void);

/* Write what the flight recorder holds, after a GT_REC_FLIGHT record saying what it is. Past the
 * deadline of a fatal signal, what is left is counted as lost (not flushed). */
static void flight_dump(uint32_t reason)
{
    uint64_t now = gt_now_ns();
    gt_rec_flight f = {.window_ns = (uint64_t)g_cfg.flight_s * 1000000000ull,
                       .t_from_ns = gt_flight_oldest_ns(now),
                       .t_ns = now,
                       .reason = reason};
    gt_flight_counts(&f.evicted_chunks, &f.evicted_records, &f.records);
    own_add(GT_REC_FLIGHT, &f, sizeof f);
    own_flush();
    gt_chunk_header *h;
    uint64_t records;
    while (gt_flight_take(&h, &records))
        if (past_deadline() || write_chunk(h, h + 1, records, 0) < 0)
            atomic_fetch_add(&g_lost_total, records);
}

void gt_writer_flight_request(void)
{
    atomic_store(&g_flight_req, 1);
    gt_writer_kick();
}

uint64_t gt_writer_flight_evicted(void)
{
    uint64_t chunks, records, held;
    gt_flight_counts(&chunks, &records, &held);
    return records;
}

/* pwrite at offset 0: chunks keep appending at the file position. Returns the header size. */
static size_t write_header(void)
{
    size_t n = gt_header_snapshot(g_hdr_buf, sizeof g_hdr_buf);
    if (!n || atomic_load(&g_writer_failed))
        return 0;
    ssize_t w;
    do
        w = pwrite(g_fd, g_hdr_buf, n, 0);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)n) {
        write_failed(w < 0 ? errno : ENOSPC);
        return 0;
    }
    return n;
}

/* ---------------------------------------------------------------- bookkeeping records */

static void write_strings(void)
{
    static unsigned char body[sizeof(gt_rec_string) + GT_MAX_STRING];
    pthread_mutex_lock(&g_intern_lock);
    uint32_t count = gt_intern_count_locked();
    for (uint32_t id = g_strings_written + 1; id <= count; id++) {
        uint32_t len = 0;
        const char *s = gt_intern_get_locked(id, &len);
        gt_rec_string hdr = {.id = id, .len = len};
        memcpy(body, &hdr, sizeof hdr);
        memcpy(body + sizeof hdr, s, len);
        own_add(GT_REC_STRING, body, (uint32_t)(sizeof hdr + len));
    }
    g_strings_written = count;
    pthread_mutex_unlock(&g_intern_lock);
}

static void write_clock_sync(void)
{
    struct timespec rt, mono, boot;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    clock_gettime(CLOCK_BOOTTIME, &boot);
    gt_rec_clock_sync cs = {
        .realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec,
        .monotonic_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec,
        .boottime_ns = (uint64_t)boot.tv_sec * 1000000000u + (uint64_t)boot.tv_nsec,
    };
    own_add(GT_REC_CLOCK_SYNC, &cs, sizeof cs);
    g_last_clock_sync = cs.realtime_ns;
}

static int read_thread_name(uint32_t tid, char name[16])
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read(fd, name, 15);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    name[n] = 0;
    if (name[n - 1] == '\n')
        name[n - 1] = 0;
    return 0;
}

/* Name each thread once, and again when it renamed itself (checked every few passes). The names
 * are interned here; the records follow in write_thread_records, after the strings. */
static gt_rec_thread g_thread_recs[GT_MAX_RINGS];
static uint32_t g_n_thread_recs;

static void intern_thread_names(uint32_t n)
{
    bool recheck = g_passes % THREAD_NAME_EVERY == 0;
    g_n_thread_recs = 0;
    for (uint32_t i = 0; i < n; i++) {
        gt_ring *r = g_rings[i];
        bool exited = g_snap_state[i] == RING_EXITED;
        if (g_snap_state[i] == RING_FREE || (r->thread_written && (exited || !recheck)))
            continue;
        char name[16] = "";
        if (exited) /* gone from /proc: the name it left at exit (ring.c) */
            memcpy(name, r->exit_name, sizeof name);
        else if (read_thread_name(r->tid, name) < 0)
            continue;
        if (!name[0])
            continue;
        if (r->thread_written && !strcmp(name, r->name))
            continue;
        memcpy(r->name, name, sizeof name);
        g_thread_recs[g_n_thread_recs++] =
            (gt_rec_thread){.tid = r->tid, .name_id = gt_intern(name), .t_start_ns = gt_now_ns()};
        r->thread_written = 1;
    }
}

static void write_thread_records(void)
{
    for (uint32_t i = 0; i < g_n_thread_recs; i++)
        own_add(GT_REC_THREAD, &g_thread_recs[i], sizeof g_thread_recs[i]);
}

static void emit_lost(uint64_t count, uint32_t reason, uint32_t tid, uint64_t t0, uint64_t t1)
{
    if (!count)
        return;
    gt_rec_lost l = {
        .count = count, .t_first_ns = t0, .t_last_ns = t1, .reason = reason, .lost_tid = tid};
    own_add(GT_REC_LOST, &l, sizeof l); /* may flush what g_own held first */
    g_own_lost += count;
}

static void write_ring_losses(gt_ring *r)
{
    uint64_t full = atomic_exchange(&r->lost_full, 0);
    uint64_t large = atomic_exchange(&r->lost_large, 0);
    if (!full && !large)
        return;
    uint64_t t0 = atomic_exchange(&r->lost_t_first, 0);
    uint64_t t1 = atomic_load(&r->lost_t_last);
    emit_lost(full, GT_LOST_BUFFER_FULL, r->tid, t0, t1);
    emit_lost(large, GT_LOST_TOO_LARGE, r->tid, t0, t1);
}

/* ---------------------------------------------------------------- ring data */

static bool past_deadline(void)
{
    uint64_t d = atomic_load_explicit(&g_deadline_ns, memory_order_relaxed);
    return d && gt_now_ns() >= d;
}

/* Write ring bytes [tail, end) as chunks of whole records; stop at the ring's wrap point and at
 * GT_CHUNK_LIMIT. The producer does not touch this range until tail moves past it. */
static void drain_ring(gt_ring *r, uint64_t end)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t cap = r->mask + 1;
    while (tail < end && !past_deadline()) {
        uint64_t start = tail, limit = end;
        uint64_t wrap = tail - (tail & r->mask) + cap;
        if (limit > wrap)
            limit = wrap;
        uint32_t count = 0, real = 0;
        while (tail < limit) {
            gt_record_header h;
            memcpy(&h, r->data + (tail & r->mask), sizeof h);
            if (h.size < sizeof h || (h.size & 7u) || h.size > limit - tail) {
                tail = end; /* cannot happen with our producers; never loop on garbage */
                count = 0;
                break;
            }
            if (count && tail - start + h.size > GT_CHUNK_LIMIT)
                break;
            tail += h.size;
            count++;
            real += h.kind != GT_REC_PAD;
        }
        if (count && flight_on()) /* held; what it defines is written (and counted) from g_own */
            gt_flight_keep(r->data + (start & r->mask), (uint32_t)(tail - start), real, r->tid,
                           gt_now_ns(), flight_define);
        else if (count && emit_chunk(r->data + (start & r->mask), (uint32_t)(tail - start), count,
                                     r->tid, real, 0) < 0)
            atomic_fetch_add(&g_lost_total, real); /* the write failed: lost, and counted */
        r->written += real;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
    }
}

/* One pass over every ring; see the file comment for the order. */
static void end_trace(bool in_signal_handler);

static void writer_pass(bool final)
{
    uint32_t n = atomic_load_explicit(&g_nrings, memory_order_acquire);
    if (atomic_load(&g_end_written))
        return;
    if (atomic_load(&g_writer_failed)) {
        end_trace(false); /* what was recorded is counted; the end chunk fits where it can */
        return;
    }
    if (atomic_exchange(&g_header_dirty, 0))
        write_header();
    for (uint32_t i = 0; i < n; i++) {
        g_snap_state[i] = atomic_load_explicit(&g_rings[i]->state, memory_order_acquire);
        if (g_snap_state[i] != RING_FREE)
            g_snap[i] = atomic_load_explicit(&g_rings[i]->head, memory_order_acquire);
    }
    intern_thread_names(n);
    write_strings();
    write_thread_records();
    if (final || gt_now_ns() - g_last_clock_sync >= CLOCK_SYNC_NS)
        write_clock_sync();
    for (uint32_t i = 0; i < n; i++)
        if (g_snap_state[i] != RING_FREE)
            write_ring_losses(g_rings[i]);
    emit_lost(atomic_exchange(&g_lost_no_ring, 0), GT_LOST_BUFFER_FULL, 0, 0, 0);
    own_flush();
    /* The application's rings first, gputrace's own threads' (CUPTI's worker) last: a GPU record
     * in this snapshot comes from work that ended before it, so the call and the external
     * correlation that explain it, written while the work was launched, are in the same snapshot
     * and now come first in the file: a streaming reader meets them before the GPU record. */
    for (uint32_t internal = 0; internal <= 1; internal++)
        for (uint32_t i = 0; i < n; i++) {
            if (g_snap_state[i] == RING_FREE ||
                atomic_load_explicit(&g_rings[i]->internal, memory_order_relaxed) != internal)
                continue;
            drain_ring(g_rings[i], g_snap[i]);
            if (g_snap_state[i] == RING_EXITED) { /* its thread is gone: drained, reusable */
                write_ring_losses(g_rings[i]);
                atomic_store_explicit(&g_rings[i]->state, RING_FREE, memory_order_release);
            }
        }
    own_flush();
    if (flight_on() && atomic_exchange(&g_flight_req, 0))
        flight_dump(GT_FLIGHT_TRIGGER);
    g_passes++;
}

/* end: the final pass and the end of the trace, without letting go of the lock in between. */
static void locked_pass(bool final, bool end)
{
    pthread_mutex_lock(&g_pass_lock);
    gt_clock_tick(); /* under the lock: one re-anchoring thread at a time, none across fork */
    if (atomic_load(&g_file_open)) {
        writer_pass(final);
        if (end)
            end_trace(false);
    }
    pthread_mutex_unlock(&g_pass_lock);
}

/* Any thread, no lock of ours held: write what every ring holds now, in this thread. For a
 * producer that must not lose records and cannot count on the writer thread (which may be
 * waiting inside CUPTI for this very thread, or be this thread). */
bool gt_writer_drain_now(void)
{
    if (!atomic_load(&g_running) || !atomic_load(&g_file_open))
        return false;
    locked_pass(false, false);
    return true;
}

static void *writer_main(void *arg)
{
    (void)arg;
    tls_is_writer = 1;
    gt_guard_mark_internal_thread();
    atomic_store(&g_thread_alive, 1);
    for (;;) {
        bool stop = atomic_load(&g_stop);
        bool end = stop || atomic_load(&g_end_req);
        uint64_t req = atomic_load(&g_flush_req);
        atomic_store(&g_kick, 0);
        uint64_t now = gt_now_ns();
        if (!end && !atomic_load(&g_end_written))
            gt_capture_poll(); /* without g_pass_lock: a switch calls CUPTI */
        if (!end && !atomic_load(&g_end_written) &&
            now - g_last_periodic >= (uint64_t)g_cfg.flush_ms * 1000000u) {
            g_last_periodic = now;
            gt_run_hooks_periodic(); /* without g_pass_lock: hooks call CUPTI */
        }
        locked_pass(end, end);
        atomic_store(&g_flush_done, req);
        if (stop)
            break;
        uint32_t clock_ms = gt_clock_wait_ms(); /* the TSC clock's next re-anchor */
        if (!atomic_load(&g_kick))
            wait_for_kick(clock_ms < g_cfg.flush_ms ? clock_ms : g_cfg.flush_ms);
    }
    return NULL;
}

/* ---------------------------------------------------------------- the end of the trace */

static uint64_t lost_not_in_file(void)
{
    uint64_t total = atomic_load(&g_lost_total);
    return total > g_lost_in_file ? total - g_lost_in_file : 0;
}

/* The end chunk: one LOST record for the losses no LOST record of the file holds yet (reason: the
 * write failure, else the flush that ran out of time), then the END record. Returns its size. */
static uint32_t build_end_chunk(void)
{
    unsigned char *payload = g_end_chunk + sizeof(gt_chunk_header);
    size_t cap = sizeof g_end_chunk - sizeof(gt_chunk_header), used = 0;
    uint64_t rest = lost_not_in_file();
    bool failed = atomic_load(&g_writer_failed);
    if (rest) {
        gt_rec_lost l = {.count = rest,
                         .reason = failed ? GT_LOST_WRITE_FAILED : GT_LOST_NOT_FLUSHED};
        used += gt_record_append(payload, cap, used, GT_REC_LOST, 0, &l, sizeof l);
    }
    g_end_lost = g_lost_in_file + rest;
    g_end_after_written = atomic_load(&g_after_end);
    int reason = atomic_load(&g_end_reason);
    gt_rec_end e = {.t_begin_ns = atomic_load(&g_end_begin_ns),
                    .t_ns = gt_now_ns(),
                    .records = atomic_load(&g_records),
                    .lost = g_end_lost,
                    .lost_after_end = g_end_after_written,
                    .reason = (uint32_t)(reason ? reason : GT_END_EXIT),
                    .signal = atomic_load(&g_end_signal),
                    .calls_interrupted = atomic_load(&g_calls_interrupted),
                    .calls_nested = atomic_load(&g_calls_nested),
                    .calls_before_cupti = atomic_load(&g_calls_before_cupti)};
    used += gt_record_append(payload, cap, used, GT_REC_END, 0, &e, sizeof e);
    gt_chunk_header h;
    gt_chunk_header_fill(&h, payload, (uint32_t)used, g_seq, 0);
    memcpy(g_end_chunk, &h, sizeof h);
    return (uint32_t)(sizeof h + used);
}

static bool pwrite_all(const void *buf, size_t len, uint64_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t n = pwrite(g_fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return true;
}

/* After a failed write: cut the file back to its last whole chunk, and give back whole chunks
 * (their records and losses counted again as lost) until the end chunk fits. */
static bool give_back_chunk(void)
{
    if (!g_nmarks)
        return false;
    g_mark_next = (g_mark_next + CHUNK_MARKS - 1) % CHUNK_MARKS;
    g_nmarks--;
    chunk_mark m = g_marks[g_mark_next];
    g_good_off = m.off;
    g_seq = m.seq;
    g_lost_in_file -= m.lost;
    atomic_fetch_sub(&g_records, m.records);
    if (m.app) /* gputrace's own records (strings, names, clock) are not the application's */
        atomic_fetch_add(&g_lost_total, m.records);
    return true;
}

static void write_end_chunk(void)
{
    bool failed = atomic_load(&g_writer_failed);
    for (;;) {
        if (failed && ftruncate(g_fd, (off_t)g_good_off) < 0) {
            /* no room was made; the write below decides */
        }
        g_end_len = build_end_chunk();
        if (pwrite_all(g_end_chunk, g_end_len, g_good_off)) {
            g_end_off = g_good_off;
            return;
        }
        failed = true;
        if (!give_back_chunk())
            return; /* not even the end fits: the file ends abnormally */
    }
}

/* Records committed to a ring but not written are counted (a deadline, a write failure, calls in
 * flight at the end); the producers are released. */
static void count_unwritten(void)
{
    uint32_t n = atomic_load_explicit(&g_nrings, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        gt_ring *r = g_rings[i];
        if (atomic_load_explicit(&r->state, memory_order_acquire) == RING_FREE)
            continue;
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t c = atomic_load_explicit(&r->committed, memory_order_relaxed);
        if (c > r->written)
            atomic_fetch_add(&g_lost_total, c - r->written);
        r->written = c;
        atomic_store_explicit(&r->tail, head, memory_order_release);
    }
}

static void rewrite_end(void);

/* Under g_pass_lock, g_recording already ENDED: the last chunk of the file. In a signal handler
 * the header is left as the writer last wrote it: its lock may be held by the interrupted thread.
 */
static void end_trace(bool in_signal_handler)
{
    if (atomic_load(&g_end_written))
        return;
    if (!atomic_load(&g_writer_failed)) {
        uint32_t n = atomic_load_explicit(&g_nrings, memory_order_acquire);
        for (uint32_t i = 0; i < n; i++)
            if (atomic_load_explicit(&g_rings[i]->state, memory_order_acquire) != RING_FREE)
                write_ring_losses(g_rings[i]);
        emit_lost(atomic_exchange(&g_lost_no_ring, 0), GT_LOST_BUFFER_FULL, 0, 0, 0);
        own_flush();
    }
    /* After a write failure too: what the flight recorder held is then counted as lost. */
    if (flight_on())
        flight_dump(atomic_load(&g_end_reason) == GT_END_SIGNAL ? GT_FLIGHT_SIGNAL
                                                                : GT_FLIGHT_EXIT);
    count_unwritten();
    write_end_chunk();
    if (!atomic_load(&g_writer_failed) && !in_signal_handler)
        write_header();
    atomic_store(&g_end_written, 1);
    rewrite_end(); /* calls counted while the end was being written */
}

/* Any thread, async-signal-safe: the end chunk in place with the new count of calls after the end
 * (same size, new CRC). One thread writes at a time; the others' counts are taken by the writer
 * in its next round, which it makes when the count moved while it wrote. */
static void rewrite_end(void)
{
    for (int round = 0; round < 4; round++) {
        if (atomic_exchange(&g_end_busy, 1))
            return;
        uint64_t n = atomic_load(&g_after_end);
        if (g_end_off && n != g_end_after_written) {
            unsigned char *payload = g_end_chunk + sizeof(gt_chunk_header);
            uint32_t len = g_end_len - (uint32_t)sizeof(gt_chunk_header);
            size_t at = len - sizeof(gt_rec_end) + offsetof(gt_rec_end, lost_after_end);
            memcpy(payload + at, &n, sizeof n);
            gt_chunk_header h;
            memcpy(&h, g_end_chunk, sizeof h);
            h.crc32 = (uint32_t)crc32(0L, payload, len);
            memcpy(g_end_chunk, &h, sizeof h);
            pwrite_all(g_end_chunk, g_end_len, g_end_off);
            g_end_after_written = n;
        }
        atomic_store(&g_end_busy, 0);
        if (atomic_load(&g_after_end) == n)
            return;
    }
}

static uint64_t monotonic_ms(void);
static void sleep_ms(long ms);

/* While a fatal signal ends the process (its default action follows), a calling thread waits here
 * (bounded) instead of competing for the CPU with the thread that ends the trace: with dozens of
 * threads calling in a loop, the end would otherwise take seconds. */
static void park_while_signal_ends(void)
{
    uint64_t t0 = monotonic_ms();
    while (monotonic_ms() - t0 < PARK_MS)
        sleep_ms(5);
}

void gt_core_wait_while_ending(void)
{
    uint64_t t0 = monotonic_ms();
    while (atomic_load(&g_recording) == GT_RECORDING_ENDING && monotonic_ms() - t0 < PARK_MS)
        sleep_ms(5);
    gt_core_note_after_end();
}

void gt_core_note_reentry(int interrupted)
{
    atomic_fetch_add_explicit(interrupted ? &g_calls_interrupted : &g_calls_nested, 1,
                              memory_order_relaxed);
}

uint64_t gt_writer_calls_interrupted(void)
{
    return atomic_load(&g_calls_interrupted);
}

uint64_t gt_writer_calls_nested(void)
{
    return atomic_load(&g_calls_nested);
}

void gt_core_note_call_before_cupti(void)
{
    atomic_fetch_add_explicit(&g_calls_before_cupti, 1, memory_order_relaxed);
}

uint64_t gt_writer_calls_before_cupti(void)
{
    return atomic_load(&g_calls_before_cupti);
}

void gt_core_note_after_end(void)
{
    atomic_fetch_add(&g_after_end, 1);
    if (atomic_load(&g_end_reason) == GT_END_SIGNAL)
        park_while_signal_ends();
    if (atomic_load(&g_end_written))
        rewrite_end();
}

uint64_t gt_writer_end_lost(void)
{
    return atomic_load(&g_end_written) ? g_end_lost : atomic_load(&g_lost_total);
}

uint64_t gt_writer_after_end(void)
{
    return atomic_load(&g_after_end);
}

static uint64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* From a signal handler: the writer thread ends the trace (it writes ring data for 3/4 of the
 * budget, then counts the rest). If it does not manage in time (blocked inside CUPTI, say), this
 * thread ends it when the pass lock is free. Elapsed time, not a count of sleeps, bounds the wait:
 * a loaded machine stretches every sleep. */
bool gt_writer_end_within(int reason, int sig, int budget_ms)
{
    if (!atomic_load(&g_running) || atomic_load(&g_end_written))
        return atomic_load(&g_end_written);
    note_end_cause(reason, sig);
    uint64_t t0 = monotonic_ms();
    atomic_store(&g_deadline_ns, gt_now_ns() + (uint64_t)budget_ms * 750000u);
    atomic_store(&g_end_req, 1);
    gt_writer_kick();
    while (!atomic_load(&g_end_written) && monotonic_ms() - t0 < (uint64_t)budget_ms) {
        if (monotonic_ms() - t0 >= (uint64_t)budget_ms * 7 / 8 &&
            pthread_mutex_trylock(&g_pass_lock) == 0) {
            if (atomic_load(&g_file_open))
                end_trace(true);
            pthread_mutex_unlock(&g_pass_lock);
            break;
        }
        gt_writer_kick();
        sleep_ms(1);
    }
    return atomic_load(&g_end_written);
}

/* ---------------------------------------------------------------- control */

static int start_thread(void)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits "all blocked" */
    int rc = pthread_create(&g_thread, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        gt_warn("cannot start the writer thread: %s; not recording", strerror(rc));
        return -1;
    }
    atomic_store(&g_running, 1);
    /* Wait (bounded) until the thread runs our code: a fork while the new thread is still inside
     * the thread library's or a sanitizer's start-up (which allocate under their own locks) would
     * leave those locks held in the child, whose own writer start then waits for ever. */
    for (int i = 0; i < 2000 && !atomic_load(&g_thread_alive); i++) {
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* fork: no pass may be in progress, because a pass allocates (interning thread names) and uses
 * stdio-like code under locks of the C library or a sanitizer that the child would inherit held
 * (glibc makes its own malloc fork-safe; ASan's allocator in GCC 12 is not). Taken before the
 * core's other locks: a pass takes those inside this one. */
void gt_writer_fork_prepare(void)
{
    pthread_mutex_lock(&g_pass_lock);
}

void gt_writer_fork_parent(void)
{
    pthread_mutex_unlock(&g_pass_lock);
}

static void reset_state(int fd, const char *path)
{
    g_fd = fd;
    snprintf(g_path, sizeof g_path, "%s", path);
    g_seq = 0;
    atomic_store(&g_records, 0);
    g_strings_written = 0;
    g_own_used = 0;
    g_own_lost = 0;
    g_last_clock_sync = g_last_periodic = g_passes = 0;
    g_nmarks = g_mark_next = 0;
    g_lost_in_file = 0;
    g_end_off = g_end_after_written = g_end_lost = 0;
    atomic_store(&g_deadline_ns, 0);
    atomic_store(&g_end_req, 0);
    atomic_store(&g_end_reason, 0);
    atomic_store(&g_end_signal, 0);
    atomic_store(&g_end_begin_ns, 0);
    atomic_store(&g_end_written, 0);
    atomic_store(&g_after_end, 0);
    atomic_store(&g_calls_interrupted, 0);
    atomic_store(&g_calls_nested, 0);
    atomic_store(&g_calls_before_cupti, 0);
    atomic_store(&g_end_busy, 0);
    atomic_store(&g_kick, 0);
    atomic_store(&g_stop, 0);
    atomic_store(&g_header_dirty, 0);
    atomic_store(&g_flush_req, 0);
    atomic_store(&g_flush_done, 0);
    atomic_store(&g_writer_failed, 0);
    atomic_store(&g_running, 0);
    atomic_store(&g_thread_alive, 0);
    atomic_store(&g_file_open, 1);
}

int gt_writer_start(int fd, const char *path)
{
    reset_state(fd, path);
    gt_flight_configure(g_cfg.flight_s, g_cfg.flight_mb);
    size_t n = write_header();
    if (!n || lseek(fd, (off_t)n, SEEK_SET) < 0)
        return -1;
    g_good_off = n;
    return start_thread();
}

/* In the child: the forking thread took g_pass_lock in gt_writer_fork_prepare; no writer runs. The
 * parent's file stays the parent's. */
void gt_writer_fork_child_reset(void)
{
    pthread_mutex_init(&g_pass_lock, NULL);
    atomic_store(&g_running, 0);
    atomic_store(&g_file_open, 0);
    atomic_store(&g_end_written, 0);
    g_end_off = 0;
    gt_flight_fork_child();
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
}

void gt_writer_header_changed(void)
{
    atomic_store(&g_header_dirty, 1);
    gt_writer_kick();
}

bool gt_writer_flush_wait(int timeout_ms)
{
    if (!atomic_load(&g_running) || atomic_load(&g_end_written))
        return false;
    if (tls_is_writer) {
        locked_pass(false, false);
        return true;
    }
    uint64_t req = atomic_fetch_add(&g_flush_req, 1) + 1, t0 = monotonic_ms();
    while (atomic_load(&g_flush_done) < req) {
        if (monotonic_ms() - t0 >= (uint64_t)timeout_ms)
            return false;
        gt_writer_kick();
        struct timespec ts = {0, 500000};
        nanosleep(&ts, NULL);
    }
    return true;
}

/* The final pass and the end chunk on the writer thread, then the thread ends. The file stays
 * open: calls after the end rewrite the end chunk's count (rewrite_end). */
void gt_writer_stop(void)
{
    if (!atomic_exchange(&g_running, 0))
        return;
    note_end_cause(GT_END_EXIT, 0);
    atomic_store(&g_stop, 1);
    gt_writer_kick();
    pthread_join(g_thread, NULL);
    pthread_mutex_lock(&g_pass_lock); /* no inline drain is writing now, or will */
    atomic_store(&g_file_open, 0);
    pthread_mutex_unlock(&g_pass_lock);
}

uint64_t gt_writer_records_written(void)
{
    return atomic_load(&g_records);
}

const char *gt_writer_path(void)
{
    return g_path;
}
