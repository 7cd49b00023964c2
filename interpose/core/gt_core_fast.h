/* gt_core_fast.h — inline copies of the recording core's hot path, for the API wrappers of
 * libgputrace.so (interpose/wrap). Each wrapped call used to make six calls into the core (guard
 * enter/leave, two clock reads, record begin/commit); a call costs its setup, the callee's
 * prologue and the registers saved around it, which together were most of what a wrapper added.
 *
 * Same behaviour as the functions of gt_core.h, which stay the API for everything else:
 *   - gt_fast_guard_enter/leave are gt_guard_enter/leave;
 *   - gt_fast_record_begin handles the common case (ring mapped, record fits before the end of
 *     the ring within the producer's cached view of tail) and hands every other case to
 *     gt_record_begin, which rechecks everything (wrap-around PAD, fresh tail, losses); only for
 *     wrappers, after gt_fast_guard_enter: it does not look at g_recording again;
 *   - gt_fast_record_commit is gt_record_commit.
 * Only for code linked into libgputrace.so: it reads the core's hidden thread-local state. */
#ifndef GT_CORE_FAST_H
#define GT_CORE_FAST_H

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core_internal.h"
#include "gt_encode.h"

/* ring.c. initial-exec: one %fs-relative access (libgputrace.so is preloaded or linked, so its
 * thread-local block is static). */
extern __thread gt_ring *gt_core_tls_ring __attribute__((tls_model("initial-exec")));
/* The guard and the thread's next correlation id share one thread-local block: one address
 * computation for both on the hot path. */
/* gt_core_thread.guard: what the thread is doing in gputrace. A call that finds it non-zero is not
 * recorded: in RECORDING it can only come from a signal handler that interrupted the record being
 * written (counted as lost); in IN_REAL it was made during another wrapped call's real function
 * (a library calling a wrapped function, or a signal handler then): counted as nested. */
enum {
    GT_GUARD_NONE = 0,
    GT_GUARD_RECORDING = 1,      /* in a wrapper's own bookkeeping */
    GT_GUARD_IN_REAL = 2,        /* in a wrapper's real function (gt_call_begin .. gt_call_end) */
    GT_GUARD_INTERNAL = 1 << 20, /* gputrace's own threads */
};
typedef struct gt_core_thread {
    int guard;          /* enum above: >0 inside a wrapper or on an internal thread */
    uint64_t corr_next; /* next correlation id of this thread's block (see GT_CORR_BLOCK) */
} gt_core_thread;
extern __thread gt_core_thread gt_core_tls __attribute__((tls_model("initial-exec")));
/* core.c: correlation ids are handed to each thread in blocks of GT_CORR_BLOCK (aligned), so a
 * call takes the next id of its thread's block: a `lock xadd` per call was the wrapper's single
 * most expensive instruction (it also waits for every earlier store to drain). */
#define GT_CORR_BLOCK 256u
extern _Atomic uint64_t gt_core_corr;
uint64_t gt_core_corr_refill(void);
/* ring.c: the rest of gt_record_commit, when the ring looks more than half full. */
void gt_core_commit_check_fill(gt_ring *r, uint64_t end);

#define GT_FAST_INLINE static inline __attribute__((always_inline))

/* CLOCK_REALTIME ns from the TSC along the line clock.c publishes (two slots; gen says which).
 * No lock: a read that overlapped a re-anchor (gen moved) is done again, which never waits for
 * the writer (it only writes the slot not in use). When there is no line (expire_tsc 0:
 * GPUTRACE_CLOCK=realtime, not calibrated yet) or it is stale, one clock_gettime instead.
 * Acquire loads are plain moves on x86; they keep the second read of gen after the slot's. */
GT_FAST_INLINE uint64_t gt_fast_now_ns(void)
{
#if defined(__x86_64__)
    for (;;) {
        uint64_t gen = atomic_load_explicit(&gt_clock_pub.gen, memory_order_acquire);
        gt_clock_slot *s = (gt_clock_slot *)((char *)gt_clock_pub.slot + (gen & GT_CLOCK_GEN_STEP));
        uint64_t offset = atomic_load_explicit(&s->offset, memory_order_acquire);
        uint64_t mult = atomic_load_explicit(&s->mult, memory_order_acquire);
        uint64_t expire = atomic_load_explicit(&s->expire_tsc, memory_order_acquire);
        uint64_t tsc = __rdtsc();
        if (__builtin_expect(atomic_load_explicit(&gt_clock_pub.gen, memory_order_relaxed) != gen,
                             0))
            continue;
        if (__builtin_expect(tsc <= expire, 1))
            return offset + (uint64_t)(((unsigned __int128)tsc * mult) >> 32);
        break;
    }
#endif
    struct timespec ts; /* inline: in realtime mode this is every read (a call costs ~7 ns) */
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

GT_FAST_INLINE uint64_t gt_fast_next_corr_id(void)
{
    uint64_t id = gt_core_tls.corr_next;
    if (__builtin_expect((id & (GT_CORR_BLOCK - 1)) == 0, 0)) /* block used up, or none yet */
        id = gt_core_corr_refill();
    gt_core_tls.corr_next = id + 1;
    return id;
}

GT_FAST_INLINE bool gt_fast_guard_enter(void)
{
    /* A paused capture records none of the application's calls; after the end of the trace an
     * outermost call is counted (not recorded). */
    int st = atomic_load_explicit(&g_recording, memory_order_relaxed);
    if (__builtin_expect(!gt_core_tls.guard && st == GT_RECORDING_ON, 1)) {
        gt_core_tls.guard = GT_GUARD_RECORDING;
        return true;
    }
    if (__builtin_expect(gt_core_tls.guard != GT_GUARD_NONE, 0)) {
        if (st == GT_RECORDING_ON && gt_core_tls.guard < GT_GUARD_INTERNAL)
            gt_core_note_reentry(gt_core_tls.guard == GT_GUARD_RECORDING);
        return false;
    }
    if (__builtin_expect(st == GT_RECORDING_ENDING, 0) && !gt_core_tls.guard)
        gt_core_wait_while_ending();
    else if (__builtin_expect(st == GT_RECORDING_ENDED, 0) && !gt_core_tls.guard)
        gt_core_note_after_end();
    if (__builtin_expect(st == GT_RECORDING_LAZY, 0) && !gt_core_tls.guard) {
        gt_core_start_on_activity(); /* the first call: the file is created now */
        if (atomic_load_explicit(&g_recording, memory_order_relaxed) == GT_RECORDING_ON) {
            gt_core_tls.guard = GT_GUARD_RECORDING;
            return true;
        }
    }
    return false;
}

/* The ring's count of committed records, for the end of the trace (what was recorded but never
 * written is counted). Only the owner stores it: a load and a store, no locked instruction. Before
 * the head's release store, so a writer that saw a record also sees it counted. */
GT_FAST_INLINE void gt_fast_count_commit(gt_ring *r)
{
    atomic_store_explicit(&r->committed,
                          atomic_load_explicit(&r->committed, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

GT_FAST_INLINE void gt_fast_guard_leave(void)
{
    gt_core_tls.guard = GT_GUARD_NONE;
}

/* Zero n bytes (a multiple of 8) at 8-byte aligned p. n is a sizeof at every wrapper's call site:
 * the tests below fold away and leave a few 16-byte stores. A plain memset of a constant 90-odd
 * bytes becomes `rep stos` here, which costs some 30 cycles to start. */
typedef uint64_t gt_fast_zero16 __attribute__((vector_size(16), aligned(8), may_alias));
typedef uint64_t gt_fast_zero8 __attribute__((may_alias));

GT_FAST_INLINE void gt_fast_zero(void *p, uint32_t n)
{
    unsigned char *q = p;
    if (!__builtin_constant_p(n) || n > 128) {
        memset(q, 0, n);
        return;
    }
    /* Written out, not a loop: GCC turns a loop back into memset here. */
    // clang-format off
#define GT_FAST_ZERO16(off) \
    if ((off) + 16 <= n) \
        *(gt_fast_zero16 *)(q + (off)) = (gt_fast_zero16){0, 0};
    GT_FAST_ZERO16(0)
    GT_FAST_ZERO16(16)
    GT_FAST_ZERO16(32)
    GT_FAST_ZERO16(48)
    GT_FAST_ZERO16(64)
    GT_FAST_ZERO16(80)
    GT_FAST_ZERO16(96)
    GT_FAST_ZERO16(112)
#undef GT_FAST_ZERO16
    // clang-format on
    if (n & 8)
        *(gt_fast_zero8 *)(q + (n & ~15u)) = 0;
}

GT_FAST_INLINE void *gt_fast_record_begin(uint16_t kind, uint16_t flags, uint32_t body_size)
{
    gt_ring *r = gt_core_tls_ring;
    uint32_t size = gt_record_size(body_size);
    /* The smallest ring is 4096 bytes: a record of at most 2048 always passes the size limits.
     * A call still in flight when the trace ended goes to gt_record_begin, which counts it. */
    if (__builtin_expect(r != NULL && size <= 2048 &&
                             atomic_load_explicit(&g_recording, memory_order_relaxed) ==
                                 GT_RECORDING_ON,
                         1)) {
        uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
        uint64_t cap = r->mask + 1, pos = head & r->mask;
        if (__builtin_expect(size <= cap - pos && head + size - r->tail_cache <= cap, 1)) {
            gt_record_header *h = (gt_record_header *)(r->data + pos);
            h->kind = kind;
            h->flags = flags;
            h->size = size;
            gt_fast_zero(h + 1, size - (uint32_t)sizeof *h);
            r->open_end = head + size;
            return h + 1;
        }
    }
    return gt_record_begin(kind, flags, body_size);
}

GT_FAST_INLINE void gt_fast_record_commit(void *body)
{
    (void)body;
    gt_ring *r = gt_core_tls_ring;
    uint64_t end = r->open_end;
    gt_fast_count_commit(r);
    atomic_store_explicit(&r->head, end, memory_order_release);
    /* Past half full of the cached view: let the core look at the real tail and wake the writer. */
    if (__builtin_expect(end - r->tail_cache > (r->mask + 1) / 2, 0))
        gt_core_commit_check_fill(r, end);
}

#endif
