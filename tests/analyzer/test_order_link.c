/* test_order_link.c — kernels linked to calls by anchors and launch order
 * (analyzer/model/order_link.c).
 *
 * 1. One thread: launches take their kernels in order; kernels of an unwrapped library between
 *    them (other names) stay unlinked and counted.
 * 2. Anchors: a library call's kernels go to it; a launch whose kernel was lost cannot take a
 *    same-named kernel from beyond the next anchor on its thread (without anchors it would).
 * 3. A copy's callback pair bounds a thread's launches like an anchor; streaming, a kernel that
 *    starts seconds after its launch (a deep launch queue) is still found.
 * 4. Two threads interleaved in time.
 * 5. Overlapping anchors of two threads holding one kernel: ambiguous, not linked.
 * 6. Paired kernels are left to their pairs; an unnamed launch matches by grid and block; a
 *    kernel that started before its launch is not its kernel.
 * 7. Two threads, the anchors of thread 1's library call holding ids of thread 2's launch (CUPTI
 *    numbers every thread's calls from one counter): the launch keeps its kernel; a kernel inside
 *    the anchors that started before the call did is not the call's (unlinked, counted).
 * 8. A generated run (2 threads, library calls, unwrapped kernels, kernel records arriving in
 *    late batches) links exactly the truth, streaming (window) and whole-file alike.
 * 9. Streams (issue 30): two threads' library calls at once, each on its own stream, hold both
 *    kernels; what the threads' launches show their streams to be tells the kernels apart, and a
 *    kernel on neither stream is neither call's. On one stream (the default one) they stay
 *    ambiguous; a call on a stream with no launch of its own leaves its kernel ambiguous (its
 *    rival's, on a stream launches showed, is still told apart).
 * 10. Streaming, the kernel whose calls' streams are not known waits for them at most 10 s of
 *    trace time, then is ambiguous and leaves the linker's memory; one whose stream a launch
 *    shows within that is told apart.
 * `test_order_link real TRACE`: a trace recorded with anchors and a callback pair on every launch
 * (GPUTRACE_CUPTI_CALLBACKS=1): the links found without the pairs must agree with every pair, and
 * every kernel with a pair must be linked, streaming and whole-file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_reader.h"
#include "gtrace_format.h"
#include "order_link.h"
#include "../gt_check.h"

#define MAX_CORR 200000

typedef struct links {
    uint64_t call[MAX_CORR]; /* by correlation id; 0 none */
    uint64_t emitted, twice;
    const uint8_t *paired; /* by correlation id */
} links;

static void on_link(void *ctx, uint64_t corr, uint64_t call)
{
    links *L = ctx;
    L->emitted++;
    if (corr >= MAX_CORR)
        return;
    if (L->call[corr])
        L->twice++;
    L->call[corr] = call;
}

static bool is_paired(void *ctx, uint64_t corr)
{
    links *L = ctx;
    return L->paired && corr < MAX_CORR && L->paired[corr];
}

static void feed(gt_olinker *o, uint16_t kind, uint32_t tid, const void *body, size_t size)
{
    gt_record r = {.kind = kind, .body_size = (uint32_t)size, .body = body, .tid = tid};
    gt_olink_on_record(o, &r);
}

static void launch_on(gt_olinker *o, uint32_t tid, uint64_t t, uint64_t call, uint32_t name,
                      uint32_t grid, uint64_t stream)
{
    gt_rec_api_launch a = {
        .c = {.t_begin_ns = t, .t_end_ns = t + 2000, .corr_id = call, .stream = stream},
        .name_id = name,
        .grid = {grid, 1, 1},
        .block = {128, 1, 1}};
    feed(o, GT_REC_API_LAUNCH, tid, &a, sizeof a);
}

static void launch(gt_olinker *o, uint32_t tid, uint64_t t, uint64_t call, uint32_t name,
                   uint32_t grid)
{
    launch_on(o, tid, t, call, name, grid, 0);
}

static void anchor(gt_olinker *o, uint32_t tid, uint32_t kind, uint64_t call, uint64_t corr)
{
    gt_rec_gpu_ext_corr e = {.external_id = call, .corr_id = corr, .ext_kind = kind};
    feed(o, GT_REC_GPU_EXT_CORR, tid, &e, sizeof e);
}

static void kernel_on(gt_olinker *o, uint64_t corr, uint64_t start, uint32_t name, int32_t grid,
                      uint32_t stream)
{
    gt_rec_gpu_kernel k = {.start_ns = start,
                           .end_ns = start + 1000,
                           .corr_id = corr,
                           .name_id = name,
                           .context = 1,
                           .stream = stream,
                           .grid = {grid, 1, 1},
                           .block = {128, 1, 1}};
    feed(o, GT_REC_GPU_KERNEL, 0, &k, sizeof k);
}

static void kernel(gt_olinker *o, uint64_t corr, uint64_t start, uint32_t name, int32_t grid)
{
    kernel_on(o, corr, start, name, grid, 7);
}

#define BEGIN GT_EXT_CORR_KIND_ANCHOR_BEGIN
#define END GT_EXT_CORR_KIND_ANCHOR_END
#define EXPECT_LINK(L, corr, want)                                                                 \
    CHECK((L)->call[corr] == (uint64_t)(want), "corr %d -> call %llu, want %llu", (int)(corr),     \
          (unsigned long long)(L)->call[corr], (unsigned long long)(want))

static links *new_links(void)
{
    links *L = calloc(1, sizeof *L);
    if (!L)
        abort();
    return L;
}

static void test_one_thread(void)
{
    links *L = new_links();
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    launch(&o, 1, 1000, 501, 7, 1);
    launch(&o, 1, 2000, 502, 8, 1);
    launch(&o, 1, 3000, 503, 7, 1);
    kernel(&o, 10, 5000, 7, 1);
    kernel(&o, 11, 6000, 99, 1); /* batch norm: nobody launched it through the runtime */
    kernel(&o, 12, 7000, 8, 1);
    kernel(&o, 13, 8000, 7, 1);
    gt_olink_finish(&o);
    EXPECT_LINK(L, 10, 501);
    EXPECT_LINK(L, 11, 0);
    EXPECT_LINK(L, 12, 502);
    EXPECT_LINK(L, 13, 503);
    CHECK(o.st.by_order == 3 && o.st.kernels_no_call == 1 && o.st.launches_no_kernel == 0,
          "one thread: by_order %llu no_call %llu", (unsigned long long)o.st.by_order,
          (unsigned long long)o.st.kernels_no_call);
    gt_olink_free(&o);
    free(L);
}

/* Launch 601 (name 7) lost its kernel; library call 900 follows; then launch 602 (name 7). */
static void anchored_run(bool with_anchors, links *L, gt_olink_stats *st)
{
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    launch(&o, 1, 1000, 601, 7, 1);
    if (with_anchors)
        anchor(&o, 1, BEGIN, 900, 20);
    if (with_anchors)
        anchor(&o, 1, END, 900, 24);
    launch(&o, 1, 9000, 602, 7, 1);
    kernel(&o, 21, 3000, 50, 4); /* the library's kernels */
    kernel(&o, 22, 4000, 51, 4);
    kernel(&o, 23, 5000, 50, 4);
    kernel(&o, 25, 10000, 7, 1); /* launch 602's */
    gt_olink_finish(&o);
    *st = o.st;
    gt_olink_free(&o);
}

static void test_anchors(void)
{
    links *L = new_links();
    gt_olink_stats st;
    anchored_run(true, L, &st);
    EXPECT_LINK(L, 21, 900);
    EXPECT_LINK(L, 22, 900);
    EXPECT_LINK(L, 23, 900);
    EXPECT_LINK(L, 25, 602);
    CHECK(st.by_anchor == 3 && st.by_order == 1 && st.launches_no_kernel == 1,
          "anchors: by_anchor %llu by_order %llu launches_no_kernel %llu",
          (unsigned long long)st.by_anchor, (unsigned long long)st.by_order,
          (unsigned long long)st.launches_no_kernel);
    /* The same without anchors: 601 takes 602's kernel — what the bounds prevent. */
    links *M = new_links();
    anchored_run(false, M, &st);
    EXPECT_LINK(M, 25, 601);
    free(M);
    free(L);
}

/* A copy's callback pair on the thread bounds the launches like an anchor: 611 lost its kernel
 * and cannot take 612's from beyond the copy. */
static void test_pair_bounds(void)
{
    links *L = new_links();
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    launch(&o, 1, 1000, 611, 7, 1);
    gt_rec_gpu_ext_corr pair = {
        .external_id = 950, .corr_id = 20, .ext_kind = GT_EXT_CORR_KIND_OURS};
    feed(&o, GT_REC_GPU_EXT_CORR, 1, &pair, sizeof pair);
    launch(&o, 1, 9000, 612, 7, 1);
    kernel(&o, 25, 10000, 7, 1);
    gt_olink_finish(&o);
    EXPECT_LINK(L, 25, 612);
    CHECK(o.st.launches_no_kernel == 1, "pair bounds: launches without kernel %llu",
          (unsigned long long)o.st.launches_no_kernel);
    gt_olink_free(&o);
    free(L);
}

/* Streaming with a deep launch queue: the kernel starts 3 s after its launch, far beyond the
 * 0.5 s window; the launch waits until a kernel above its bound has been read. */
static void test_deep_queue(void)
{
    links *L = new_links();
    gt_olinker o;
    uint64_t s = 1000000000ull;
    gt_olink_init(&o, s / 2, is_paired, on_link, L);
    launch(&o, 1, 1 * s, 621, 7, 1);
    anchor(&o, 1, BEGIN, 960, 20);
    anchor(&o, 1, END, 960, 22);
    launch(&o, 2, 3 * s, 622, 8, 1); /* the CPU runs on: time advances */
    kernel(&o, 10, 4 * s, 7, 1);
    kernel(&o, 21, 4 * s + 1000, 50, 4);
    launch(&o, 2, 5 * s, 623, 8, 1);
    kernel(&o, 30, 6 * s, 8, 1);
    launch(&o, 2, 8 * s, 624, 8, 1);
    gt_olink_finish(&o);
    EXPECT_LINK(L, 10, 621);
    EXPECT_LINK(L, 21, 960);
    EXPECT_LINK(L, 30, 622);
    gt_olink_free(&o);
    free(L);
}

static void test_two_threads(void)
{
    links *L = new_links();
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    /* thread 1 launches name 7, thread 2 name 8, alternating; ids follow the time order */
    for (int i = 0; i < 10; i++) {
        uint32_t tid = 1 + (uint32_t)(i % 2);
        launch(&o, tid, 1000 + 100 * (uint64_t)i, 700 + (uint64_t)i, tid == 1 ? 7 : 8, 1);
    }
    for (int i = 0; i < 10; i++)
        kernel(&o, 30 + (uint64_t)i, 5000 + 100 * (uint64_t)i, i % 2 ? 8 : 7, 1);
    gt_olink_finish(&o);
    for (int i = 0; i < 10; i++)
        EXPECT_LINK(L, 30 + i, 700 + i);
    gt_olink_free(&o);
    free(L);
}

static void test_ambiguous_and_paired(void)
{
    links *L = new_links();
    uint8_t *paired = calloc(MAX_CORR, 1);
    L->paired = paired;
    paired[44] = 1;
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    anchor(&o, 1, BEGIN, 901, 40);
    anchor(&o, 2, BEGIN, 902, 41);
    anchor(&o, 1, END, 901, 43);
    anchor(&o, 2, END, 902, 45);
    launch(&o, 3, 1000, 801, 0, 9);    /* unnamed: by grid and block */
    launch(&o, 3, 1000000, 802, 5, 1); /* its kernel started before it: not that one */
    kernel(&o, 42, 3000, 60, 4);       /* inside both 901 and 902 */
    kernel(&o, 44, 3100, 61, 4);       /* paired: left to its pair */
    kernel(&o, 46, 3200, 62, 1);       /* another name and grid: nobody's */
    kernel(&o, 47, 3300, 63, 9);       /* grid 9: the unnamed launch's */
    kernel(&o, 48, 800000, 5, 1);
    gt_olink_finish(&o);
    EXPECT_LINK(L, 42, 0);
    EXPECT_LINK(L, 44, 0);
    EXPECT_LINK(L, 46, 0);
    EXPECT_LINK(L, 47, 801);
    EXPECT_LINK(L, 48, 0);
    CHECK(o.st.ambiguous == 1 && o.st.by_anchor == 0 && o.st.by_order == 1 &&
              o.st.launches_no_kernel == 1,
          "ambiguous %llu by_anchor %llu by_order %llu no_kernel %llu",
          (unsigned long long)o.st.ambiguous, (unsigned long long)o.st.by_anchor,
          (unsigned long long)o.st.by_order, (unsigned long long)o.st.launches_no_kernel);
    gt_olink_free(&o);
    free(paired);
    free(L);
}

static void library_call_on(gt_olinker *o, uint32_t tid, uint64_t b, uint64_t e, uint64_t call,
                            uint64_t stream)
{
    gt_rec_api_cublas c = {
        .c = {.t_begin_ns = b, .t_end_ns = e, .corr_id = call, .stream = stream}};
    feed(o, GT_REC_API_CUBLAS, tid, &c, sizeof c);
}

static void library_call(gt_olinker *o, uint32_t tid, uint64_t b, uint64_t e, uint64_t call)
{
    gt_rec_api_cudnn c = {.c = {.t_begin_ns = b, .t_end_ns = e, .corr_id = call}};
    feed(o, GT_REC_API_CUDNN, tid, &c, sizeof c);
}

/* Library call 900 on thread 1 runs [5000, 9000] with anchors 20..26; thread 2 launches name 7
 * at 6000 (id 23, between the anchors). Kernel 21 started at 3000, before the call: it cannot be
 * the call's (an anchor pair gone wrong; a link drawn backwards). */
static void test_other_thread_in_anchors(bool call_record, links *L, gt_olink_stats *st)
{
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    launch(&o, 2, 1000, 700, 7, 1);
    kernel(&o, 10, 1500, 7, 1);
    anchor(&o, 1, BEGIN, 900, 20);
    launch(&o, 2, 6000, 701, 7, 1);
    anchor(&o, 1, END, 900, 26);
    if (call_record)
        library_call(&o, 1, 5000, 9000, 900);
    kernel(&o, 21, 3000, 50, 4);
    kernel(&o, 22, 6500, 50, 4);
    kernel(&o, 23, 7000, 7, 1);
    kernel(&o, 24, 7500, 51, 4);
    gt_olink_finish(&o);
    *st = o.st;
    gt_olink_free(&o);
}

static void test_other_thread(void)
{
    links *L = new_links();
    gt_olink_stats st;
    test_other_thread_in_anchors(true, L, &st);
    EXPECT_LINK(L, 10, 700);
    EXPECT_LINK(L, 21, 0);
    EXPECT_LINK(L, 22, 900);
    EXPECT_LINK(L, 23, 701);
    EXPECT_LINK(L, 24, 900);
    CHECK(st.by_anchor == 2 && st.by_order == 2 && st.before_call == 1 && st.other_thread == 1 &&
              st.kernels_no_call == 1 && !st.launches_no_kernel,
          "other thread: by_anchor %llu by_order %llu before_call %llu other_thread %llu "
          "no_call %llu no_kernel %llu",
          (unsigned long long)st.by_anchor, (unsigned long long)st.by_order,
          (unsigned long long)st.before_call, (unsigned long long)st.other_thread,
          (unsigned long long)st.kernels_no_call, (unsigned long long)st.launches_no_kernel);
    /* Without the call's record (its times unknown) the anchors alone decide, as before. */
    links *M = new_links();
    test_other_thread_in_anchors(false, M, &st);
    EXPECT_LINK(M, 21, 900);
    EXPECT_LINK(M, 23, 900);
    free(M);
    free(L);
}

/* ------------------------------------------------------------------ streams */

#define STATS(st)                                                                                  \
    (unsigned long long)(st).by_anchor, (unsigned long long)(st).by_order,                         \
        (unsigned long long)(st).by_stream, (unsigned long long)(st).ambiguous,                    \
        (unsigned long long)(st).other_stream, (unsigned long long)(st).kernels_no_call
#define STATS_FMT                                                                                  \
    "by_anchor %llu by_order %llu by_stream %llu ambiguous %llu other_stream %llu no_call %llu"

/* Threads 1 and 2 each call gemv (calls 901, 902, [1000, 9000]) on their own handle (h1, h2) at
 * once: both calls' anchors (40, 41 .. 45, 46) hold kernels 42 (CUPTI stream s1), 43 (s2) and 44
 * (stream 23: neither). Then each thread launches a kernel of its own on its handle (calls 801,
 * 802; kernels 50 on s1, 51 on s2), unless launches_of_2 is false. */
static void two_gemvs(links *L, gt_olink_stats *st, uint64_t h1, uint64_t h2, uint32_t s1,
                      uint32_t s2, bool launches_of_2)
{
    gt_olinker o;
    gt_olink_init(&o, 0, is_paired, on_link, L);
    anchor(&o, 1, BEGIN, 901, 40);
    anchor(&o, 2, BEGIN, 902, 41);
    kernel_on(&o, 42, 3000, 60, 4, s1);
    kernel_on(&o, 43, 3100, 60, 4, s2);
    kernel_on(&o, 44, 3200, 61, 2, 23);
    anchor(&o, 1, END, 901, 45);
    library_call_on(&o, 1, 1000, 9000, 901, h1);
    anchor(&o, 2, END, 902, 46);
    library_call_on(&o, 2, 1000, 9000, 902, h2);
    launch_on(&o, 1, 10000, 801, 7, 1, h1);
    kernel_on(&o, 50, 12000, 7, 1, s1);
    if (launches_of_2) {
        launch_on(&o, 2, 10000, 802, 8, 1, h2);
        kernel_on(&o, 51, 12100, 8, 1, s2);
    }
    gt_olink_finish(&o);
    *st = o.st;
    gt_olink_free(&o);
}

static void test_streams(void)
{
    /* Each thread on its own stream: told apart; kernel 44 on neither is neither's. */
    links *L = new_links();
    gt_olink_stats st;
    two_gemvs(L, &st, 0x1000, 0x2000, 21, 22, true);
    EXPECT_LINK(L, 42, 901);
    EXPECT_LINK(L, 43, 902);
    EXPECT_LINK(L, 44, 0);
    EXPECT_LINK(L, 50, 801);
    EXPECT_LINK(L, 51, 802);
    CHECK(st.by_stream == 2 && st.by_order == 2 && st.ambiguous == 0 && st.other_stream == 1 &&
              st.kernels_no_call == 1 && st.by_anchor == 0,
          "own streams: " STATS_FMT, STATS(st));
    free(L);

    /* Every thread on the default stream: the kernels cannot be told apart, and are counted. */
    L = new_links();
    two_gemvs(L, &st, 0, 0, 7, 7, true);
    EXPECT_LINK(L, 42, 0);
    EXPECT_LINK(L, 43, 0);
    EXPECT_LINK(L, 50, 801);
    EXPECT_LINK(L, 51, 802);
    CHECK(st.by_stream == 0 && st.ambiguous == 2 && st.by_order == 2 && st.other_stream == 1,
          "one stream: " STATS_FMT, STATS(st));
    free(L);

    /* Thread 2 never launches on its stream: its kernel stays ambiguous (what s2 is was never
     * shown); thread 1's is told apart (h2 is another handle than h1: another stream). */
    L = new_links();
    two_gemvs(L, &st, 0x1000, 0x2000, 21, 22, false);
    EXPECT_LINK(L, 42, 901);
    EXPECT_LINK(L, 43, 0);
    CHECK(st.by_stream == 1 && st.ambiguous == 2 && st.other_stream == 0,
          "no launch on one stream: " STATS_FMT, STATS(st));
    free(L);
}

/* Streaming (a 0.5 s window): the same two calls at 1 s, kernels 42 (s1 = 21) and 43 (s2 = 22).
 * Thread 1 launches on h1 at 3 s (its kernel 60 on s1, bounded by a copy's pair at id 61); thread
 * 2 never does. Thread 3 launches a kernel every 250 ms on a stream of its own until 14 s. */
static void test_stream_wait(void)
{
    links *L = new_links();
    gt_olinker o;
    uint64_t s = 1000000000ull;
    gt_olink_init(&o, s / 2, is_paired, on_link, L);
    anchor(&o, 1, BEGIN, 901, 40);
    anchor(&o, 2, BEGIN, 902, 41);
    anchor(&o, 1, END, 901, 44);
    library_call_on(&o, 1, s, s + 9000, 901, 0x1000);
    anchor(&o, 2, END, 902, 45);
    library_call_on(&o, 2, s, s + 9000, 902, 0x2000);
    kernel_on(&o, 42, s + 3000, 60, 4, 21);
    kernel_on(&o, 43, s + 3100, 60, 4, 22);
    uint64_t corr = 100, call = 1000;
    bool decided_42 = false, dropped_43 = false;
    uint64_t ambiguous_before_10s = 1;
    for (uint64_t t = 2 * s; t < 14 * s; t += s / 4) {
        if (t == 3 * s) {
            launch_on(&o, 1, t, 801, 7, 1, 0x1000);
            anchor(&o, 1, GT_EXT_CORR_KIND_OURS, 802, 61);
            kernel_on(&o, 60, t + 1000, 7, 1, 21);
        }
        launch_on(&o, 3, t, call++, 9, 1, 0x3000);
        kernel_on(&o, corr++, t + 1000, 9, 1, 23);
        if (t < s + 10 * s)
            ambiguous_before_10s = o.st.ambiguous;
        if (L->call[42] == 901)
            decided_42 = true;
        bool held = false;
        for (size_t i = 0; i < o.n_kernels; i++)
            held |= o.kernels[i].corr == 43;
        if (t >= 13 * s)
            dropped_43 = !held;
    }
    CHECK(decided_42, "streaming: kernel 42 told apart once thread 1's launch showed its stream");
    CHECK(ambiguous_before_10s == 0, "streaming: kernel 43 decided before it waited 10 s");
    CHECK(o.st.ambiguous == 1 && dropped_43,
          "streaming: kernel 43 ambiguous after 10 s (%llu) and gone from memory (%d)",
          (unsigned long long)o.st.ambiguous, dropped_43);
    gt_olink_finish(&o);
    EXPECT_LINK(L, 42, 901);
    EXPECT_LINK(L, 43, 0);
    EXPECT_LINK(L, 60, 801);
    CHECK(o.st.by_stream == 1 && o.st.ambiguous == 1, "streaming: " STATS_FMT, STATS(o.st));
    gt_olink_free(&o);
    free(L);
}

/* ------------------------------------------------------------------ generated runs */

typedef struct gen_event {
    int what; /* 0 launch, 1 anchor begin, 2 anchor end, 3 kernel */
    uint32_t tid, name;
    uint64_t t, call, corr;
    int32_t grid;
} gen_event;

typedef struct gen_run {
    gen_event *cpu, *gpu;
    size_t n_cpu, n_gpu;
    uint64_t truth[MAX_CORR];
} gen_run;

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng % n);
}

/* Bursts of two threads taking turns; each thread issues launches (names 1..6), library calls
 * (2-4 kernels between anchors) and unwrapped kernels (name 90). */
static void generate(gen_run *g)
{
    g->cpu = calloc(60000, sizeof *g->cpu);
    g->gpu = calloc(60000, sizeof *g->gpu);
    if (!g->cpu || !g->gpu)
        abort();
    uint64_t t = 1000000, corr = 1, call = 1;
    for (int burst = 0; burst < 400; burst++) {
        uint32_t tid = 1 + (uint32_t)(burst % 2);
        for (int op = 0; op < 40; op++, t += 3000 + rnd(5000)) {
            int kind = (int)rnd(10);
            if (kind < 6) { /* runtime launch */
                uint32_t name = 1 + rnd(6);
                g->cpu[g->n_cpu++] = (gen_event){0, tid, name, t, call, 0, 1};
                g->gpu[g->n_gpu++] = (gen_event){3, 0, name, t + 100000, 0, corr, 1};
                g->truth[corr++] = call++;
            } else if (kind < 9) { /* library call between anchors */
                g->cpu[g->n_cpu++] = (gen_event){1, tid, 0, t, call, corr++, 0};
                for (uint32_t k = 2 + rnd(3); k-- > 0;) {
                    g->gpu[g->n_gpu++] = (gen_event){3, 0, 40 + k, t + 200000, 0, corr, 4};
                    g->truth[corr++] = call;
                }
                g->cpu[g->n_cpu++] = (gen_event){2, tid, 0, t + 1000, call, corr++, 0};
                call++;
            } else { /* an unwrapped library's kernel */
                g->gpu[g->n_gpu++] = (gen_event){3, 0, 90, t + 100000, 0, corr++, 2};
            }
        }
    }
}

static void replay(const gen_event *e, gt_olinker *o)
{
    if (e->what == 0)
        launch(o, e->tid, e->t, e->call, e->name, (uint32_t)e->grid);
    else if (e->what == 1 || e->what == 2)
        anchor(o, e->tid, e->what == 1 ? BEGIN : END, e->call, e->corr);
    else
        kernel(o, e->corr, e->t, e->name, e->grid);
}

/* Streaming order: CPU records up to each 200 ms drain, then the kernels of that period in two
 * interleaved per-thread-buffer-like halves (odd and even correlation ids), as CUPTI delivers. */
static void run_generated(const gen_run *g, uint64_t window, links *L, gt_olink_stats *st)
{
    gt_olinker o;
    gt_olink_init(&o, window, is_paired, on_link, L);
    size_t c = 0, k = 0;
    for (uint64_t drain = 1000000 + 200000000ull; c < g->n_cpu || k < g->n_gpu;
         drain += 200000000ull) {
        while (c < g->n_cpu && g->cpu[c].t < drain)
            replay(&g->cpu[c++], &o);
        size_t k_end = k;
        while (k_end < g->n_gpu && g->gpu[k_end].t < drain)
            k_end++;
        for (int half = 0; half < 2; half++)
            for (size_t i = k; i < k_end; i++)
                if ((int)(g->gpu[i].corr % 2) == half)
                    replay(&g->gpu[i], &o);
        k = k_end;
    }
    gt_olink_finish(&o);
    *st = o.st;
    gt_olink_free(&o);
}

static void test_generated(void)
{
    gen_run *g = calloc(1, sizeof *g);
    if (!g)
        abort();
    generate(g);
    uint64_t windows[] = {0, 1000000000ull};
    for (size_t w = 0; w < 2; w++) {
        links *L = new_links();
        gt_olink_stats st;
        run_generated(g, windows[w], L, &st);
        size_t wrong = 0, missing = 0, extra = 0;
        for (size_t corr = 0; corr < MAX_CORR; corr++) {
            if (g->truth[corr] && !L->call[corr])
                missing++;
            else if (g->truth[corr] && L->call[corr] != g->truth[corr])
                wrong++;
            else if (!g->truth[corr] && L->call[corr])
                extra++;
        }
        CHECK(!wrong && !missing && !extra && !L->twice,
              "generated run, window %llu: %zu wrong, %zu missing, %zu extra, %llu twice "
              "(by_anchor %llu by_order %llu no_call %llu no_kernel %llu)",
              (unsigned long long)windows[w], wrong, missing, extra, (unsigned long long)L->twice,
              (unsigned long long)st.by_anchor, (unsigned long long)st.by_order,
              (unsigned long long)st.kernels_no_call, (unsigned long long)st.launches_no_kernel);
        CHECK(st.kernels_no_call > 0 && st.by_anchor > 0 && st.by_order > 0,
              "generated run exercises unwrapped kernels, anchors and launches");
        free(L);
    }
    free(g->cpu);
    free(g->gpu);
    free(g);
}

/* ------------------------------------------------------------------ a real trace */

static int test_real(const char *path, uint64_t window)
{
    gt_reader *r;
    char err[256];
    if (gt_reader_open(path, &r, err, sizeof err)) {
        fprintf(stderr, "FAIL %s: %s\n", path, err);
        return 1;
    }
    links *L = new_links();
    uint64_t *pair = calloc(MAX_CORR, sizeof *pair);
    if (!pair)
        abort();
    gt_olinker o;
    gt_olink_init(&o, window, NULL, on_link, L);
    /* the pairs are not shown to it */
    gt_record rec;
    uint64_t kernels = 0;
    uint8_t *is_kernel = calloc(MAX_CORR, 1);
    if (!is_kernel)
        abort();
    while (gt_reader_next(r, &rec) == 1) {
        gt_olink_on_record(&o, &rec);
        if (rec.kind == GT_REC_GPU_KERNEL) {
            gt_rec_gpu_kernel k;
            memcpy(&k, rec.body, sizeof k);
            kernels++;
            if (k.corr_id < MAX_CORR)
                is_kernel[k.corr_id] = 1;
        }
        if (rec.kind == GT_REC_GPU_EXT_CORR) {
            gt_rec_gpu_ext_corr e;
            memcpy(&e, rec.body, sizeof e);
            if (e.ext_kind == GT_EXT_CORR_KIND_OURS && e.corr_id < MAX_CORR)
                pair[e.corr_id] = e.external_id;
        }
    }
    gt_olink_finish(&o);
    size_t agree = 0, disagree = 0, pair_only = 0;
    for (size_t c = 0; c < MAX_CORR; c++) {
        if (pair[c] && L->call[c])
            pair[c] == L->call[c] ? agree++ : disagree++;
        else if (pair[c] && !L->call[c] && is_kernel[c])
            pair_only++; /* a kernel whose launch is known, left unlinked */
    }
    printf("%s: %llu kernels, by anchor %llu, by order %llu, no call %llu, ambiguous %llu, "
           "launches without kernel %llu, inside anchors but not the call's %llu + %llu; against "
           "the pairs: %zu agree, %zu disagree, %zu "
           "paired kernels unlinked\n",
           path, (unsigned long long)kernels, (unsigned long long)o.st.by_anchor,
           (unsigned long long)o.st.by_order, (unsigned long long)o.st.kernels_no_call,
           (unsigned long long)o.st.ambiguous, (unsigned long long)o.st.launches_no_kernel,
           (unsigned long long)o.st.before_call, (unsigned long long)o.st.other_thread, agree,
           disagree, pair_only);
    CHECK(agree > 1000 && !disagree && !pair_only && o.st.by_order > 1000 &&
              o.st.by_anchor > 1000 && !o.st.launches_no_kernel && !o.st.ambiguous &&
              !o.st.before_call && !o.st.other_thread &&
              o.st.by_anchor + o.st.by_order + o.st.by_stream + o.st.kernels_no_call == kernels,
          "real trace: every kernel with a pair is linked, and to its pair's call");
    free(is_kernel);
    gt_olink_free(&o);
    gt_reader_close(r);
    free(pair);
    free(L);
    return failures != 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "real")) /* streaming (the converter's window), whole file */
        return test_real(argv[2], 2000000000ull) | test_real(argv[2], 0);
    test_one_thread();
    test_anchors();
    test_pair_bounds();
    test_deep_queue();
    test_two_threads();
    test_ambiguous_and_paired();
    test_other_thread();
    test_streams();
    test_stream_wait();
    test_generated();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures != 0;
}
