/* ring.c — the hot path: per-thread rings, record reservation and commit, the recursion guard.
 * A record costs a TLS load, a bounds check, a zeroing copy and a release store: no lock, no
 * syscall, no malloc. A thread's ring is mmap'ed on its first record (cold). */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"
#include "gt_core_fast.h"
#include "gt_encode.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define TLS __attribute__((tls_model("initial-exec"))) __thread

gt_ring *g_rings[GT_MAX_RINGS];
_Atomic uint32_t g_nrings;
pthread_mutex_t g_reg_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic uint64_t g_lost_total;
_Atomic uint64_t g_lost_no_ring;

/* Not static: gt_core_fast.h reads them inline in the wrappers. */
TLS gt_ring *gt_core_tls_ring;
TLS gt_core_thread gt_core_tls; /* guard and correlation ids (gt_core_fast.h) */
static TLS int tls_no_ring;     /* ring allocation failed for this thread: do not retry */
static pthread_key_t g_exit_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

uint64_t gt_now_ns(void)
{
    return gt_fast_now_ns();
}

bool gt_core_recording(void)
{
    int st = atomic_load_explicit(&g_recording, memory_order_relaxed);
    return st == GT_RECORDING_ON || st == GT_RECORDING_PAUSED || st == GT_RECORDING_LAZY ||
           st == GT_RECORDING_ENDING;
}

bool gt_guard_enter(void)
{
    return gt_fast_guard_enter();
}

void gt_guard_leave(void)
{
    gt_fast_guard_leave();
}

void gt_guard_mark_internal_thread(void)
{
    gt_core_tls.guard = GT_GUARD_INTERNAL;
    if (gt_core_tls_ring)
        atomic_store_explicit(&gt_core_tls_ring->internal, 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------- registration (cold) */

/* Thread exit: hand the ring to the writer, which drains it and then frees it for reuse. The
 * thread's name is kept for the writer: /proc no longer has it once the thread is gone, and a
 * thread that lived less than a writer pass would otherwise stay unnamed. */
static void ring_thread_exit(void *arg)
{
    gt_ring *r = arg;
    if (gt_core_tls_ring == r)
        gt_core_tls_ring = NULL;
    char name[16] = "";
    if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
        memcpy(r->exit_name, name, sizeof name);
    r->exit_name[15] = 0;
    atomic_store_explicit(&r->state, RING_EXITED, memory_order_release);
    gt_writer_kick();
}

static void make_key(void)
{
    pthread_key_create(&g_exit_key, ring_thread_exit);
}

static uint64_t ring_capacity(void)
{
    uint64_t want = (uint64_t)g_cfg.buffer_kb * 1024u, cap = 4096;
    while (cap * 2 <= want)
        cap *= 2;
    return cap;
}

static gt_ring *ring_claim_free(void)
{
    uint32_t n = atomic_load_explicit(&g_nrings, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        gt_ring *r = g_rings[i];
        if (atomic_load_explicit(&r->state, memory_order_acquire) == RING_FREE)
            return r;
    }
    return NULL;
}

static gt_ring *ring_new_locked(void)
{
    uint32_t n = atomic_load_explicit(&g_nrings, memory_order_relaxed);
    if (n >= GT_MAX_RINGS)
        return NULL;
    uint64_t cap = ring_capacity();
    size_t total = sizeof(gt_ring) + 64 + cap;
    /* MAP_POPULATE: take the page faults here, once, rather than one per 4 KB on the hot path. */
    void *mem = mmap(NULL, total, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED)
        return NULL;
    gt_ring *r = mem;
    r->data = (unsigned char *)mem + ((sizeof(gt_ring) + 63) & ~(size_t)63);
    r->mask = cap - 1;
    g_rings[n] = r;
    atomic_store_explicit(&g_nrings, n + 1, memory_order_release);
    return r;
}

static gt_ring *ring_register(void)
{
    if (tls_no_ring)
        return NULL;
    pthread_once(&g_key_once, make_key);
    pthread_mutex_lock(&g_reg_lock);
    gt_ring *r = ring_claim_free();
    if (!r)
        r = ring_new_locked();
    if (r) {
        /* FREE rings are touched by nobody else: reset them before publishing LIVE. */
        atomic_store_explicit(&r->head, 0, memory_order_relaxed);
        atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
        atomic_store_explicit(&r->committed, 0, memory_order_relaxed);
        r->written = 0;
        r->exit_name[0] = 0;
        r->tail_cache = r->open_end = 0;
        r->tid = (uint32_t)syscall(SYS_gettid);
        atomic_store_explicit(&r->internal, gt_core_tls.guard >= GT_GUARD_INTERNAL,
                              memory_order_relaxed);
        r->thread_written = 0;
        atomic_store_explicit(&r->state, RING_LIVE, memory_order_release);
    }
    pthread_mutex_unlock(&g_reg_lock);
    if (!r) {
        tls_no_ring = 1;
        atomic_fetch_add(&g_lost_no_ring, 1);
        atomic_fetch_add(&g_lost_total, 1);
        return NULL;
    }
    gt_core_tls_ring = r;
    pthread_setspecific(g_exit_key, r);
    return r;
}

/* ---------------------------------------------------------------- hot path */

/* The total first: the writer's end of trace takes (total - what the file's LOST records hold) as
 * the rest, so a loss it sees in a ring must already be in the total. */
void gt_ring_note_loss(gt_ring *r, int too_large)
{
    uint64_t now = gt_now_ns();
    uint64_t zero = 0;
    atomic_fetch_add(&g_lost_total, 1);
    atomic_compare_exchange_strong(&r->lost_t_first, &zero, now);
    atomic_store_explicit(&r->lost_t_last, now, memory_order_relaxed);
    atomic_fetch_add(too_large ? &r->lost_large : &r->lost_full, 1);
}

/* Reserve size bytes (plus a PAD to the end of the ring when the record would straddle it).
 * Returns the record header, or NULL when the ring has no room. */
static inline gt_record_header *ring_reserve(gt_ring *r, uint32_t size)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t cap = r->mask + 1;
    uint64_t pos = head & r->mask;
    uint64_t contig = cap - pos;
    uint64_t need = size <= contig ? size : contig + size;
    if (unlikely(head + need - r->tail_cache > cap)) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (head + need - r->tail_cache > cap)
            return NULL;
    }
    if (unlikely(size > contig)) {
        gt_record_header pad = {.kind = GT_REC_PAD, .flags = 0, .size = (uint32_t)contig};
        memcpy(r->data + pos, &pad, sizeof pad);
        head += contig;
        pos = 0;
    }
    r->open_end = head + size;
    return (gt_record_header *)(r->data + pos);
}

static void *record_begin(uint16_t kind, uint16_t flags, uint32_t body_size, bool count_loss)
{
    if (unlikely(atomic_load_explicit(&g_recording, memory_order_relaxed) == GT_RECORDING_LAZY))
        gt_core_start_on_activity(); /* the first record (CUPTI's, NVTX's...): the file now */
    if (unlikely(atomic_load_explicit(&g_recording, memory_order_relaxed) == GT_RECORDING_ENDED)) {
        if (count_loss)
            gt_core_note_after_end(); /* a call in flight when the trace ended, or CUPTI's */
        return NULL;
    }
    gt_ring *r = gt_core_tls_ring;
    if (unlikely(!r)) {
        if (!gt_core_recording())
            return NULL;
        r = ring_register();
        if (!r)
            return NULL;
    }
    if (unlikely(!gt_core_recording()))
        return NULL;
    uint32_t size = gt_record_size(body_size);
    if (unlikely(body_size > (1u << 30) || size > (r->mask + 1) / 2 || size > GT_CHUNK_LIMIT)) {
        if (count_loss)
            gt_ring_note_loss(r, 1);
        return NULL;
    }
    gt_record_header *h = ring_reserve(r, size);
    if (unlikely(!h)) {
        if (count_loss)
            gt_ring_note_loss(r, 0);
        return NULL;
    }
    h->kind = kind;
    h->flags = flags;
    h->size = size;
    memset(h + 1, 0, size - sizeof *h);
    return h + 1;
}

void *gt_record_begin(uint16_t kind, uint16_t flags, uint32_t body_size)
{
    return record_begin(kind, flags, body_size, true);
}

void gt_record_commit(void *body)
{
    (void)body;
    gt_ring *r = gt_core_tls_ring;
    uint64_t end = r->open_end;
    gt_fast_count_commit(r);
    atomic_store_explicit(&r->head, end, memory_order_release);
    if (unlikely(end - r->tail_cache > (r->mask + 1) / 2))
        gt_core_commit_check_fill(r, end);
}

/* Past half full: wake the writer early rather than wait for the flush period. */
void gt_core_commit_check_fill(gt_ring *r, uint64_t end)
{
    r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
    if (end - r->tail_cache > (r->mask + 1) / 2)
        gt_writer_kick();
}

bool gt_record_write(uint16_t kind, uint16_t flags, const void *body, uint32_t body_size)
{
    void *p = gt_record_begin(kind, flags, body_size);
    if (!p)
        return false;
    memcpy(p, body, body_size);
    gt_record_commit(p);
    return true;
}

/* Never waits on another thread: the writer thread may itself be waiting on the caller (its
 * periodic hook calls cuptiActivityFlushAll, which waits while CUPTI's worker thread delivers a
 * buffer to this function), or be the caller. So the caller drains the rings itself, under the
 * writer's pass lock, which no thread holds across a call into CUDA or CUPTI. */
void *gt_record_begin_wait(uint16_t kind, uint16_t flags, uint32_t body_size, int timeout_ms)
{
    uint64_t deadline = gt_now_ns() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000u;
    for (;;) {
        void *p = record_begin(kind, flags, body_size, false);
        if (p)
            return p;
        gt_ring *r = gt_core_tls_ring;
        if (!r || !gt_core_recording() || gt_record_size(body_size) > (r->mask + 1) / 2 ||
            gt_now_ns() >= deadline || !gt_writer_drain_now())
            break;
    }
    if (atomic_load(&g_recording) == GT_RECORDING_ENDED)
        gt_core_note_after_end();
    else if (gt_core_tls_ring && gt_core_recording())
        gt_ring_note_loss(gt_core_tls_ring,
                          gt_record_size(body_size) > (gt_core_tls_ring->mask + 1) / 2);
    return NULL;
}

/* In the child after fork only the forking thread exists: its ring restarts empty under its new
 * tid, every other ring is freed. The parent's unwritten records are the parent's business. */
void gt_ring_fork_child(void)
{
    pthread_mutex_init(&g_reg_lock, NULL);
    uint32_t n = atomic_load(&g_nrings);
    for (uint32_t i = 0; i < n; i++) {
        gt_ring *r = g_rings[i];
        atomic_store(&r->head, 0);
        atomic_store(&r->tail, 0);
        atomic_store(&r->committed, 0);
        r->written = 0;
        r->tail_cache = r->open_end = 0;
        r->thread_written = 0;
        atomic_store(&r->lost_full, 0);
        atomic_store(&r->lost_large, 0);
        atomic_store(&r->lost_t_first, 0);
        atomic_store(&r->lost_t_last, 0);
        atomic_store(&r->state, r == gt_core_tls_ring ? RING_LIVE : RING_FREE);
    }
    if (gt_core_tls_ring)
        gt_core_tls_ring->tid = (uint32_t)syscall(SYS_gettid);
    atomic_store(&g_lost_total, 0);
    atomic_store(&g_lost_no_ring, 0);
}
