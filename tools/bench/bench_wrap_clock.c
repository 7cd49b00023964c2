/* bench_wrap_clock.c — the trace clock's read cost and accuracy, and a launch-vs-kernel check.
 * Built with the recording core's sources (tools/gpu/tsc.sh compiles it with cc):
 *
 *   bench_wrap_clock bench [SECONDS]  ns per read of clock_gettime(CLOCK_REALTIME), rdtsc and
 *                                     gt_now_ns (GPUTRACE_CLOCK decides which clock), then
 *                                     gt_now_ns against CLOCK_REALTIME read around it for
 *                                     SECONDS (default 2): the most it was ahead/behind, and
 *                                     its largest step backwards.
 *   bench_wrap_clock check FILE...    for every kernel linked to a wrapped launch (CUPTI
 *                                     external correlation), GPU start minus the launch's CPU
 *                                     begin time: must never be negative on one clock.
 * The process records into GPUTRACE_DIR like any traced program (set it to a scratch folder). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core_internal.h"
#include "gt_reader.h"

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double thread_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define READS 5000000
static volatile uint64_t g_sink;

static double ns_per_read(int which)
{
    double best = 1e9;
    for (int rep = 0; rep < 5; rep++) {
        uint64_t acc = 0;
        double t0 = thread_s();
        for (int i = 0; i < READS; i++) {
            if (which == 0)
                acc += realtime_ns();
#if defined(__x86_64__)
            else if (which == 1)
                acc += __rdtsc();
#endif
            else
                acc += gt_now_ns();
        }
        double ns = (thread_s() - t0) * 1e9 / READS;
        g_sink = acc;
        best = ns < best ? ns : best;
    }
    return best;
}

static int bench(double seconds)
{
    /* Let the writer calibrate (first line after ~1 ms, steady period after ~0.3 s). */
    struct timespec settle = {0, 500000000};
    nanosleep(&settle, NULL);
    printf("ns per read (thread CPU, best of 5 x %d):\n", READS);
    printf("  clock_gettime(CLOCK_REALTIME) %.1f\n", ns_per_read(0));
#if defined(__x86_64__)
    printf("  rdtsc                         %.1f\n", ns_per_read(1));
#endif
    printf("  gt_now_ns (the trace's clock) %.1f\n", ns_per_read(2));
    uint64_t end = realtime_ns() + (uint64_t)(seconds * 1e9), prev = 0, n = 0;
    int64_t ahead = 0, behind = 0, back = 0;
    for (uint64_t r1 = realtime_ns(); r1 < end; r1 = realtime_ns(), n++) {
        uint64_t t = gt_now_ns(), r2 = realtime_ns();
        ahead = (int64_t)(t - r2) > ahead ? (int64_t)(t - r2) : ahead;
        behind = (int64_t)(r1 - t) > behind ? (int64_t)(r1 - t) : behind;
        back = prev && (int64_t)(prev - t) > back ? (int64_t)(prev - t) : back;
        prev = t;
    }
    gt_clock_info ci;
    gt_clock_get_info(&ci);
    printf("clock: %s (invariant TSC reported: %s), %.3f TSC ticks/us, %llu re-anchors, "
           "%llu steps, period %llu ms, largest slewed error at a re-anchor %lld ns\n",
           ci.mode == GT_CLOCK_TSC ? (ci.published ? "TSC" : "TSC, not calibrated")
                                   : "CLOCK_REALTIME",
           ci.invariant ? "yes" : "no", ci.ticks_per_us, (unsigned long long)ci.anchors,
           (unsigned long long)ci.steps, (unsigned long long)(ci.period_ns / 1000000),
           (long long)ci.max_error_ns);
    printf("accuracy over %.1f s, %llu samples: at most %lld ns ahead of / %lld ns behind "
           "CLOCK_REALTIME read around it; largest step backwards %lld ns\n",
           seconds, (unsigned long long)n, (long long)ahead, (long long)behind, (long long)back);
    return 0;
}

/* ---------------------------------------------------------------- check */

typedef struct pair {
    uint64_t key, value;
} pair;

static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const pair *)a)->key, y = ((const pair *)b)->key;
    return x < y ? -1 : x > y;
}

static const pair *find(const pair *v, size_t n, uint64_t key)
{
    pair k = {key, 0};
    return bsearch(&k, v, n, sizeof *v, by_key);
}

typedef struct vec {
    pair *v;
    size_t n, cap;
} vec;

static void push(vec *x, uint64_t key, uint64_t value)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 1024;
        x->v = realloc(x->v, x->cap * sizeof *x->v);
        if (!x->v) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    x->v[x->n++] = (pair){key, value};
}

static int check(const char *path)
{
    gt_reader *r;
    char err[512];
    if (gt_reader_open(path, &r, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "%s: %s\n", path, err);
        return 2;
    }
    vec launch = {0}, ext = {0}, kern = {0}; /* corr -> t_begin; cupti -> corr; cupti -> start */
    gt_record rec;
    while (gt_reader_next(r, &rec)) {
        if (rec.kind == GT_REC_API_LAUNCH && rec.body_size >= sizeof(gt_rec_api_launch)) {
            const gt_rec_api_launch *l = rec.body;
            push(&launch, l->c.corr_id, l->c.t_begin_ns);
        } else if (rec.kind == GT_REC_GPU_EXT_CORR &&
                   rec.body_size >= sizeof(gt_rec_gpu_ext_corr)) {
            const gt_rec_gpu_ext_corr *e = rec.body;
            push(&ext, e->corr_id, e->external_id);
        } else if (rec.kind == GT_REC_GPU_KERNEL && rec.body_size >= sizeof(gt_rec_gpu_kernel)) {
            const gt_rec_gpu_kernel *k = rec.body;
            push(&kern, k->corr_id, k->start_ns);
        }
    }
    gt_reader_close(r);
    qsort(launch.v, launch.n, sizeof *launch.v, by_key);
    qsort(ext.v, ext.n, sizeof *ext.v, by_key);
    size_t linked = 0, negative = 0;
    int64_t min_gap = INT64_MAX, max_gap = INT64_MIN;
    double sum = 0;
    for (size_t i = 0; i < kern.n; i++) {
        const pair *e = find(ext.v, ext.n, kern.v[i].key);
        const pair *l = e ? find(launch.v, launch.n, e->value) : NULL;
        if (!l)
            continue;
        int64_t gap = (int64_t)(kern.v[i].value - l->value);
        linked++;
        negative += gap < 0;
        min_gap = gap < min_gap ? gap : min_gap;
        max_gap = gap > max_gap ? gap : max_gap;
        sum += (double)gap;
    }
    printf(
        "%s: %zu kernels, %zu linked to a wrapped launch; GPU start - CPU launch begin: min %lld "
        "ns, mean %.0f ns, max %lld ns; %zu negative\n",
        path, kern.n, linked, linked ? (long long)min_gap : 0LL, linked ? sum / linked : 0.0,
        linked ? (long long)max_gap : 0LL, negative);
    free(launch.v);
    free(ext.v);
    free(kern.v);
    return linked && !negative ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "bench"))
        return bench(argc >= 3 ? atof(argv[2]) : 2.0);
    if (argc >= 3 && !strcmp(argv[1], "check")) {
        int rc = 0;
        for (int i = 2; i < argc; i++) {
            int c = check(argv[i]);
            rc = c > rc ? c : rc;
        }
        return rc;
    }
    fprintf(stderr, "usage: bench_wrap_clock bench [SECONDS] | check FILE.gtrace...\n");
    return 2;
}
