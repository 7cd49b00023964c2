/* test_link.c — kernels linked to the wrapped call that launched them by CUPTI's queued time
 * (analyzer/model/kernel_link.c).
 *
 * 1. One launch: inside, at both ends (closed interval), 1 ns outside (no_call).
 * 2. A launch of the kernel's own name beats a library call on another thread; two such launches
 *    at one instant are ambiguous.
 * 3. Library calls on two threads at one instant: ambiguous.
 * 4. Nesting on one thread (inner calls arrive first): the outermost library call, unless a launch
 *    of the kernel's name is nested in it.
 * 5. A launch under another name (or unknown) is the last resort.
 * 6. gt_linker_on_record on real records: failed calls and other kinds ignored, tid from the
 * record.
 * 7. Eviction with a window: old kernels no longer link, recent ones do, memory stays bounded.
 * 8. 100k calls out of order by nesting: binary search agrees with a brute-force search.
 * 9. Regressions (`test_link regressions`): an outer call beginning in the same nanosecond as its
 * inner call; one long call on a thread of short ones (eviction and the scan stay bounded).
 * Usage: test_link [regressions] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gtrace_format.h"
#include "kernel_link.h"
#include "../gt_check.h"

#define EVICT_EVERY 4096u /* kernel_link.c: finds between two evictions */

static void add(gt_linker *l, uint32_t tid, uint64_t b, uint64_t e, uint64_t id, uint32_t name,
                int is_launch)
{
    gt_link_call c = {
        .t_begin = b, .t_end = e, .call_id = id, .name_id = name, .is_launch = (uint8_t)is_launch};
    CHECK(gt_linker_add(l, tid, &c), "add [%llu,%llu] id %llu", (unsigned long long)b,
          (unsigned long long)e, (unsigned long long)id);
}

static void launch(gt_linker *l, uint32_t tid, uint64_t b, uint64_t e, uint64_t id, uint32_t name)
{
    add(l, tid, b, e, id, name, 1);
}

static void library(gt_linker *l, uint32_t tid, uint64_t b, uint64_t e, uint64_t id)
{
    add(l, tid, b, e, id, 0, 0);
}

#define EXPECT_FIND(l, q, name, want)                                                              \
    do {                                                                                           \
        uint64_t got_ = gt_linker_find((l), (q), (name));                                          \
        CHECK(got_ == (uint64_t)(want), "find(%llu, name %u) = %llu, want %llu",                   \
              (unsigned long long)(q), (unsigned)(name), (unsigned long long)got_,                 \
              (unsigned long long)(want));                                                         \
    } while (0)

#define EXPECT_STATS(l, lk, nc, amb)                                                               \
    CHECK((l)->st.linked == (lk) && (l)->st.no_call == (nc) && (l)->st.ambiguous == (amb),         \
          "stats linked %llu no_call %llu ambiguous %llu, want %d %d %d",                          \
          (unsigned long long)(l)->st.linked, (unsigned long long)(l)->st.no_call,                 \
          (unsigned long long)(l)->st.ambiguous, (lk), (nc), (amb))

static gt_link_thread *thread_with(gt_linker *l, uint32_t tid)
{
    for (size_t i = 0; i < l->n_threads; i++)
        if (l->threads[i].tid == tid)
            return &l->threads[i];
    return NULL;
}

/* ------------------------------------------------------------------ 1. one launch */

static void test_one_launch(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    launch(&l, 1, 1000, 2000, 11, 7);
    launch(&l, 1, 2500, 3000, 12, 7);
    EXPECT_FIND(&l, 1500, 7, 11);
    EXPECT_FIND(&l, 1000, 7, 11); /* closed at t_begin */
    EXPECT_FIND(&l, 2000, 7, 11); /* closed at t_end */
    EXPECT_STATS(&l, 3, 0, 0);
    EXPECT_FIND(&l, 999, 7, 0);
    EXPECT_FIND(&l, 2001, 7, 0);
    EXPECT_STATS(&l, 3, 2, 0);
    EXPECT_FIND(&l, 2700, 7, 12);
    EXPECT_FIND(&l, 2499, 7, 0);
    EXPECT_FIND(&l, 3001, 7, 0);
    EXPECT_STATS(&l, 4, 4, 0);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 2. name preference */

static void test_name_preference(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 1, 5); /* thread A: a launch of kernel 5 */
    library(&l, 2, 50, 300, 2);    /* thread B: a cuDNN call around it */
    EXPECT_FIND(&l, 150, 5, 1);    /* the kernel's own launch wins */
    EXPECT_FIND(&l, 150, 6, 2);    /* another kernel: the library call beats A's launch */
    EXPECT_FIND(&l, 250, 5, 2);    /* only B holds the time */
    EXPECT_STATS(&l, 3, 0, 0);
    gt_linker_free(&l);

    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 1, 5);
    launch(&l, 2, 120, 220, 2, 5);
    EXPECT_FIND(&l, 150, 5, 0); /* both threads launch kernel 5 now */
    EXPECT_STATS(&l, 0, 0, 1);
    EXPECT_FIND(&l, 110, 5, 1);
    EXPECT_FIND(&l, 210, 5, 2);
    EXPECT_STATS(&l, 2, 0, 1);
    gt_linker_free(&l);

    /* A launch of the name beats a launch under another name at the same instant. */
    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 1, 5);
    launch(&l, 2, 100, 200, 2, 6);
    EXPECT_FIND(&l, 150, 5, 1);
    EXPECT_FIND(&l, 150, 6, 2);
    EXPECT_STATS(&l, 2, 0, 0);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 3. library calls */

static void test_library_ambiguous(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    library(&l, 1, 100, 500, 1); /* cuDNN */
    library(&l, 2, 300, 800, 2); /* cuBLAS */
    EXPECT_FIND(&l, 400, 9, 0);
    EXPECT_STATS(&l, 0, 0, 1);
    EXPECT_FIND(&l, 200, 9, 1);
    EXPECT_FIND(&l, 600, 9, 2);
    EXPECT_STATS(&l, 2, 0, 1);
    launch(&l, 3, 390, 410, 3, 7); /* a launch under another name settles nothing */
    EXPECT_FIND(&l, 400, 9, 0);
    EXPECT_STATS(&l, 2, 0, 2);
    EXPECT_FIND(&l, 400, 7, 3); /* a launch of the kernel's name does */
    EXPECT_STATS(&l, 3, 0, 2);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 4. nesting */

static void test_nesting(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    /* One thread writes its calls when they end: innermost first. */
    library(&l, 1, 220, 240, 3);   /* cuBLAS inside the inner one */
    library(&l, 1, 200, 300, 2);   /* inner cuBLAS */
    launch(&l, 1, 400, 450, 4, 9); /* a launch of kernel 9 inside the outer call */
    library(&l, 1, 100, 1000, 1);  /* outer cuBLAS, written last */
    EXPECT_FIND(&l, 250, 8, 1);
    EXPECT_FIND(&l, 230, 8, 1);
    EXPECT_FIND(&l, 200, 8, 1);
    EXPECT_FIND(&l, 150, 8, 1);
    EXPECT_FIND(&l, 1000, 8, 1);
    EXPECT_FIND(&l, 420, 9, 4); /* the nested launch of that name */
    EXPECT_FIND(&l, 420, 8, 1); /* another kernel: the outer call */
    EXPECT_FIND(&l, 1001, 8, 0);
    EXPECT_STATS(&l, 7, 1, 0);
    gt_link_thread *t = thread_with(&l, 1);
    CHECK(t && t->n == 4, "thread 1 keeps 4 calls");
    for (size_t i = 1; t && i < t->n; i++)
        CHECK(t->v[i - 1].t_begin <= t->v[i].t_begin, "calls sorted by t_begin at %zu", i);
    /* Another thread's library call: the named launch still wins, other kernels are ambiguous. */
    library(&l, 2, 410, 430, 5);
    EXPECT_FIND(&l, 420, 9, 4);
    EXPECT_FIND(&l, 420, 8, 0);
    EXPECT_STATS(&l, 8, 1, 1);
    gt_linker_free(&l);

    /* Launches of one name nested in each other (a runtime launch over a wrapped driver launch):
     * the innermost, the one that put the kernel on the GPU. */
    gt_linker_init(&l, 0);
    launch(&l, 1, 200, 300, 2, 5);
    launch(&l, 1, 100, 500, 1, 5);
    EXPECT_FIND(&l, 250, 5, 2);
    EXPECT_FIND(&l, 400, 5, 1);
    EXPECT_STATS(&l, 2, 0, 0);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 5. launch under another name
 */

static void test_unnamed_last(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 1, 0); /* the wrapper could not name its kernel */
    EXPECT_FIND(&l, 150, 5, 1);    /* nothing else holds the time: used */
    library(&l, 2, 50, 300, 2);
    EXPECT_FIND(&l, 150, 5, 2); /* a library call on another thread beats it */
    EXPECT_STATS(&l, 2, 0, 0);
    gt_linker_free(&l);

    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 1, 6);
    launch(&l, 2, 100, 200, 2, 5);
    EXPECT_FIND(&l, 150, 5, 2);
    EXPECT_FIND(&l, 150, 6, 1);
    EXPECT_FIND(&l, 150, 7, 0); /* two launches, neither of kernel 7 */
    EXPECT_STATS(&l, 2, 0, 1);
    gt_linker_free(&l);

    /* On one thread: a launch under another name nested in a library call loses to the call. */
    gt_linker_init(&l, 0);
    launch(&l, 1, 100, 200, 2, 6);
    library(&l, 1, 0, 1000, 1);
    EXPECT_FIND(&l, 150, 5, 1);
    EXPECT_FIND(&l, 150, 6, 2);
    EXPECT_STATS(&l, 2, 0, 0);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 6. records */

static gt_record record(uint16_t kind, const void *body, uint32_t size, uint32_t tid)
{
    gt_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.body = body;
    r.body_size = size;
    r.tid = tid;
    return r;
}

static gt_api_common common(uint64_t b, uint64_t e, uint64_t id, int32_t result)
{
    gt_api_common c;
    memset(&c, 0, sizeof c);
    c.t_begin_ns = b;
    c.t_end_ns = e;
    c.corr_id = id;
    c.result = result;
    c.device = 0;
    c.stream = 0x1234;
    return c;
}

static void feed(gt_linker *l, uint16_t kind, const void *body, uint32_t size, uint32_t tid)
{
    gt_record r = record(kind, body, size, tid);
    CHECK(gt_linker_on_record(l, &r), "on_record kind %u", kind);
}

static void test_records(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    gt_rec_api_launch la = {.c = common(100, 200, 11, 0), .function = 0xabc, .name_id = 5};
    feed(&l, GT_REC_API_LAUNCH, &la, sizeof la, 7);
    CHECK(l.n_threads == 1 && l.threads[0].tid == 7 && l.threads[0].n == 1, "launch kept on 7");
    if (l.n_threads == 1 && l.threads[0].n == 1) {
        const gt_link_call *c = &l.threads[0].v[0];
        CHECK(c->t_begin == 100 && c->t_end == 200 && c->call_id == 11 && c->name_id == 5 &&
                  c->is_launch == 1,
              "launch fields");
    }
    gt_rec_api_cudnn dn = {.c = common(300, 400, 21, 0), .handle = 1, .plan = 0x5555, .algo = -1};
    feed(&l, GT_REC_API_CUDNN, &dn, sizeof dn, 8);
    gt_rec_api_cudnn dn_bad = {.c = common(300, 400, 22, 3), .plan = 0x5555};
    feed(&l, GT_REC_API_CUDNN, &dn_bad, sizeof dn_bad, 9); /* failed: launched nothing */
    gt_rec_api_cublas bl = {.c = common(500, 600, 31, 0), .m = 64, .n = 64, .k = 64};
    feed(&l, GT_REC_API_CUBLAS, &bl, sizeof bl, 9);
    gt_rec_api_cublas bl_bad = {.c = common(620, 700, 32, -1)};
    feed(&l, GT_REC_API_CUBLAS, &bl_bad, sizeof bl_bad, 9);
    gt_rec_api_launch la_bad = {.c = common(620, 700, 33, 1), .name_id = 5};
    feed(&l, GT_REC_API_LAUNCH, &la_bad, sizeof la_bad, 9);
    /* Other kinds hold the time but are no candidates. */
    gt_rec_api_memcpy mc = {.c = common(620, 700, 41, 0), .bytes = 4096};
    feed(&l, GT_REC_API_MEMCPY, &mc, sizeof mc, 9);
    gt_rec_api sy = {.c = common(620, 700, 42, 0)};
    feed(&l, GT_REC_API, &sy, sizeof sy, 9);
    feed(&l, GT_REC_API_SYNC, &sy, sizeof sy, 10);
    feed(&l, GT_REC_GPU_KERNEL, &sy, sizeof sy, 11);
    /* A body too short for gt_api_common: ignored, no thread made. */
    gt_rec_api_launch la_short = {.c = common(620, 700, 43, 0), .name_id = 5};
    feed(&l, GT_REC_API_LAUNCH, &la_short, 16, 12);
    CHECK(l.n_threads == 3, "threads 7, 8, 9 only: %zu", l.n_threads);
    gt_link_thread *t8 = thread_with(&l, 8), *t9 = thread_with(&l, 9);
    CHECK(t8 && t8->n == 1 && t8->v[0].is_launch == 0 && t8->v[0].call_id == 21, "cudnn kept on 8");
    CHECK(t9 && t9->n == 1 && t9->v[0].is_launch == 0 && t9->v[0].call_id == 31,
          "only the successful cublas kept on 9");
    EXPECT_FIND(&l, 150, 5, 11);
    EXPECT_FIND(&l, 350, 1, 21); /* the failed cuDNN call on 9 would make it ambiguous */
    EXPECT_FIND(&l, 550, 1, 31);
    EXPECT_FIND(&l, 650, 5, 0);
    EXPECT_STATS(&l, 3, 1, 0);

    /* tid from the record: two launches at one instant on two threads are ambiguous ... */
    gt_rec_api_launch a7 = {.c = common(1000, 1100, 51, 0), .name_id = 5};
    gt_rec_api_launch a8 = {.c = common(1000, 1100, 52, 0), .name_id = 5};
    feed(&l, GT_REC_API_LAUNCH, &a7, sizeof a7, 7);
    feed(&l, GT_REC_API_LAUNCH, &a8, sizeof a8, 8);
    EXPECT_FIND(&l, 1050, 5, 0);
    EXPECT_STATS(&l, 3, 1, 1);
    /* ... and nested calls on one thread resolve to the outer one. */
    gt_rec_api_cudnn in = {.c = common(2200, 2300, 61, 0)};
    gt_rec_api_cudnn out = {.c = common(2000, 3000, 60, 0)};
    feed(&l, GT_REC_API_CUDNN, &in, sizeof in, 8);
    feed(&l, GT_REC_API_CUDNN, &out, sizeof out, 8);
    EXPECT_FIND(&l, 2250, 1, 60);
    EXPECT_STATS(&l, 4, 1, 1);
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 7. eviction */

static void test_eviction(void)
{
    const uint64_t W = 1000000, S = 1000, D = 500, T0 = 1000000000ull;
    const size_t N = 1000000;
    /* After an eviction a thread keeps the calls that may hold a time within W of the newest
     * queued time (those begun in the last W + D); up to EVICT_EVERY more come before the next. */
    const size_t bound = (size_t)((W + D) / S) + EVICT_EVERY + 2;
    gt_linker l;
    gt_linker_init(&l, W);
    size_t worst = 0, not_linked = 0, inside_lost = 0;
    for (size_t i = 0; i < N; i++) {
        uint64_t b = T0 + i * S;
        launch(&l, 1, b, b + D, i + 1, 5);
        if (i < 1000)
            library(&l, 2, b + 100, b + 200, 10000000 + i); /* thread 2 goes quiet early */
        if (gt_linker_find(&l, b + D / 2 + (i < 1000 ? 200 : 0), 5) != i + 1)
            not_linked++;
        if (i % 1000 == 0 && i >= W / S) { /* a kernel queued W/2 ago: inside the window */
            size_t j = i - (W / S) / 2;
            if (gt_linker_find(&l, T0 + j * S + D / 2, 5) != j + 1)
                inside_lost++;
        }
        gt_link_thread *t = thread_with(&l, 1);
        if (t && t->n - t->head > worst)
            worst = t->n - t->head;
    }
    CHECK(not_linked == 0, "%zu of %zu kernels queued at the newest time not linked", not_linked,
          N);
    CHECK(inside_lost == 0, "%zu kernels inside the window not linked", inside_lost);
    gt_link_thread *t1 = thread_with(&l, 1), *t2 = thread_with(&l, 2);
    CHECK(t1 && worst <= bound, "thread 1 kept up to %zu calls, bound %zu", worst, bound);
    CHECK(t1 && t1->cap <= 4 * bound, "thread 1 capacity %zu for at most %zu calls",
          t1 ? t1->cap : 0, bound);
    CHECK(t1 && t1->head > 0, "thread 1 evicted nothing");
    CHECK(t2 && t2->n == t2->head, "thread 2 keeps %zu calls long after its last one",
          t2 ? t2->n - t2->head : 0);
    printf("eviction: %zu calls, window %llu ns: at most %zu kept (bound %zu), capacity %zu\n", N,
           (unsigned long long)W, worst, bound, t1 ? t1->cap : 0);
    uint64_t no_call = l.st.no_call;
    EXPECT_FIND(&l, T0 + D / 2, 5, 0); /* queued long before the window */
    EXPECT_FIND(&l, T0 + 500000 * S + D / 2, 5, 0);
    CHECK(l.st.no_call == no_call + 2, "evicted kernels counted as no_call");
    EXPECT_FIND(&l, T0 + (N - 10) * S + D / 2, 5, N - 9); /* recent ones still link */
    EXPECT_FIND(&l, T0 + (N - 1 - W / S / 2) * S, 5, N - W / S / 2);
    gt_linker_free(&l);

    /* window 0 keeps every call: the oldest kernel still links. */
    gt_linker_init(&l, 0);
    for (size_t i = 0; i < 3 * EVICT_EVERY; i++) {
        uint64_t b = T0 + i * S * 100;
        launch(&l, 1, b, b + D, i + 1, 5);
        EXPECT_FIND(&l, b + D, 5, i + 1);
    }
    EXPECT_FIND(&l, T0, 5, 1);
    CHECK(l.n_threads == 1 && l.threads[0].head == 0 && l.threads[0].n == 3 * EVICT_EVERY,
          "window 0 keeps all");
    gt_linker_free(&l);
}

/* ------------------------------------------------------------------ 8. many calls, brute force */

typedef struct ref_call {
    uint32_t tid;
    gt_link_call c;
} ref_call;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state % n;
}

/* The rule of kernel_link.h, by looking at every call: per thread the innermost launch of the name,
 * the outermost library call, the innermost launch under another name; the first kind found on any
 * thread decides, several threads with it make the link ambiguous (-1). */
static int64_t brute_find(const ref_call *calls, size_t n, uint32_t n_threads, uint64_t q,
                          uint32_t name)
{
    int64_t best[3] = {0, 0, 0};
    int count[3] = {0, 0, 0};
    for (uint32_t tid = 1; tid <= n_threads; tid++) {
        const gt_link_call *pick[3] = {NULL, NULL, NULL};
        for (size_t i = 0; i < n; i++) {
            const gt_link_call *c = &calls[i].c;
            if (calls[i].tid != tid || q < c->t_begin || q > c->t_end)
                continue;
            int k = !c->is_launch ? 1 : c->name_id == name ? 0 : 2;
            if (!pick[k] ||
                (k == 1 ? c->t_begin < pick[k]->t_begin : c->t_begin > pick[k]->t_begin))
                pick[k] = c;
        }
        for (int k = 0; k < 3; k++)
            if (pick[k])
                best[k] = (int64_t)pick[k]->call_id, count[k]++;
    }
    for (int k = 0; k < 3; k++)
        if (count[k])
            return count[k] > 1 ? -1 : best[k];
    return 0;
}

/* One top-level unit on a thread: a launch, or a library call holding up to three nested calls
 * (one level of library calls inside may hold a launch). Calls are emitted as they end. */
static void gen_unit(ref_call *calls, size_t *n, size_t max, uint32_t tid, uint64_t *t, int depth,
                     uint64_t *next_id)
{
    uint64_t b = *t;
    if (depth > 1 || rnd(3) == 0) {
        uint64_t e = b + 50 + rnd(2000);
        if (*n < max)
            calls[(*n)++] = (ref_call){tid,
                                       {.t_begin = b,
                                        .t_end = e,
                                        .call_id = (*next_id)++,
                                        .name_id = 1 + rnd(3),
                                        .is_launch = 1}};
        *t = e;
        return;
    }
    uint64_t id = (*next_id)++;
    *t = b + 1 + rnd(100); /* children begin after their parent: no tie on t_begin */
    for (uint64_t k = rnd(4); k > 0; k--) {
        gen_unit(calls, n, max, tid, t, depth + 1, next_id);
        *t += 1 + rnd(200);
    }
    uint64_t e = *t + rnd(100);
    if (*n < max)
        calls[(*n)++] = (ref_call){tid, {.t_begin = b, .t_end = e, .call_id = id, .is_launch = 0}};
    *t = e;
}

static void test_many(void)
{
    enum { N = 100000, THREADS = 4, QUERIES = 600 };
    ref_call *calls = malloc(N * sizeof *calls);
    if (!calls) {
        CHECK(0, "out of memory");
        return;
    }
    size_t n = 0;
    uint64_t next_id = 1, span = 0;
    for (uint32_t tid = 1; tid <= THREADS; tid++) {
        uint64_t t = 1000000;
        size_t stop = (size_t)N * tid / THREADS;
        while (n < stop) {
            t += rnd(40000);
            gen_unit(calls, &n, stop, tid, &t, 0, &next_id);
        }
        if (t > span)
            span = t;
    }
    gt_linker l;
    gt_linker_init(&l, 0);
    for (size_t i = 0; i < n; i++)
        CHECK(gt_linker_add(&l, calls[i].tid, &calls[i].c), "add %zu", i);
    size_t wrong = 0, seen[3] = {0, 0, 0};
    uint64_t want_st[3] = {0, 0, 0};
    for (int k = 0; k < QUERIES; k++) {
        uint64_t q;
        const gt_link_call *c = &calls[rnd(n)].c;
        switch (k % 3) { /* a random instant, a call's begin, a call's end */
        case 0:
            q = 1 + rnd(span);
            break;
        case 1:
            q = c->t_begin;
            break;
        default:
            q = c->t_end;
            break;
        }
        uint32_t name = 1 + rnd(3);
        int64_t want = brute_find(calls, n, THREADS, q, name);
        uint64_t got = gt_linker_find(&l, q, name);
        int kind = want > 0 ? 0 : want == 0 ? 1 : 2;
        seen[kind]++;
        want_st[kind]++;
        if (got != (want > 0 ? (uint64_t)want : 0)) {
            if (wrong++ < 10)
                CHECK(0, "q %llu name %u: got %llu want %lld", (unsigned long long)q, name,
                      (unsigned long long)got, (long long)want);
        }
    }
    CHECK(wrong == 0, "%zu of %d queries disagree with the brute force", wrong, QUERIES);
    CHECK(l.st.linked == want_st[0] && l.st.no_call == want_st[1] && l.st.ambiguous == want_st[2],
          "stats %llu/%llu/%llu, want %llu/%llu/%llu", (unsigned long long)l.st.linked,
          (unsigned long long)l.st.no_call, (unsigned long long)l.st.ambiguous,
          (unsigned long long)want_st[0], (unsigned long long)want_st[1],
          (unsigned long long)want_st[2]);
    /* The queries must have exercised every outcome, or the test proves little. */
    CHECK(seen[0] > 100 && seen[1] > 20 && seen[2] > 5,
          "outcomes linked %zu none %zu ambiguous %zu", seen[0], seen[1], seen[2]);
    printf("many: %zu calls on %d threads, %d queries: linked %zu, none %zu, ambiguous %zu\n", n,
           THREADS, QUERIES, seen[0], seen[1], seen[2]);
    gt_linker_free(&l);
    free(calls);
}

/* ------------------------------------------------------------------ regressions */

/* An outer call that begins in the same nanosecond as the call nested in it: kernel_link.h says the
 * outermost. Once, the outer call (arriving last) was placed after the inner one and the backward
 * scan ended on the inner one. */
static void regression_equal_begin(void)
{
    gt_linker l;
    gt_linker_init(&l, 0);
    library(&l, 1, 100, 300, 2);  /* inner cuBLAS, written first */
    library(&l, 1, 100, 1000, 1); /* outer, same t_begin */
    EXPECT_FIND(&l, 250, 8, 1);
    gt_linker_free(&l);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One long call (a cuDNN autotune or a first cuBLAS call loading its modules: 20 ms) on a thread
 * of 1 us launches: kernel_link.h keeps "the calls that ended within window_ns". Once, eviction
 * also waited for t_begin + the longest duration, so the thread kept 20 ms of calls, and every find
 * scanned back over them. */
static void regression_long_call(void)
{
    const uint64_t W = 1000000, S = 1000, D = 500, T0 = 1000000000ull, LONG = 20000000;
    const size_t N = 60000;
    const size_t bound = (size_t)((W + D) / S) + EVICT_EVERY + 2;
    double took[2];
    size_t worst[2];
    for (int with_long = 0; with_long < 2; with_long++) {
        gt_linker l;
        gt_linker_init(&l, W);
        if (with_long)
            library(&l, 1, T0 - LONG - 10, T0 - 10, 999999999);
        worst[with_long] = 0;
        double t0 = now_s();
        for (size_t i = 0; i < N; i++) {
            uint64_t b = T0 + i * S;
            launch(&l, 1, b, b + D, i + 1, 5);
            gt_linker_find(&l, b + D / 2, 5);
            gt_link_thread *t = thread_with(&l, 1);
            if (t->n - t->head > worst[with_long])
                worst[with_long] = t->n - t->head;
        }
        took[with_long] = now_s() - t0;
        gt_linker_free(&l);
    }
    printf("long call: kept up to %zu calls (without it %zu, bound %zu); %zu adds+finds took "
           "%.3f s (without it %.3f s)\n",
           worst[1], worst[0], bound, N, took[1], took[0]);
    CHECK(worst[1] <= bound, "one 20 ms call makes a thread keep %zu calls (bound %zu)", worst[1],
          bound);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "regressions")) {
        regression_equal_begin();
        regression_long_call();
    } else {
        test_one_launch();
        test_name_preference();
        test_library_ambiguous();
        test_nesting();
        test_unnamed_last();
        test_records();
        test_eviction();
        test_many();
    }
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_link: all passed\n");
    return failures ? 1 : 0;
}
