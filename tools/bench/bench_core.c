/* bench_core.c — cost of one recorded event on the recording core's hot path
 * (gt_record_begin + fill + gt_record_commit of a 48-byte API record), with 1 and N threads.
 * The core is compiled in; the writer thread runs as in production and drains the rings.
 * Each thread records in bursts that fit its ring (BURST events), with a flush between bursts
 * that is not timed: this is the steady state of a wrapper (warm ring, no drops). The first
 * burst touches the ring's pages and is not counted.
 * Usage: bench_core [THREADS] [EVENTS_PER_THREAD]. tools/bench/run_core.sh runs it, and runs
 * it under callgrind for instructions per event. Prints ns/event per thread. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gt_core.h"

static long g_events = 1000000;
#define BURST 40000L /* 40000 x 56 bytes fit the default 4 MB ring */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The body a wrapper would write; kept out of line so callgrind can count exactly it. */
__attribute__((noinline)) void bench_one_event(uint64_t i)
{
    gt_rec_api *r = gt_record_begin(GT_REC_API, 0, sizeof *r);
    if (r) {
        r->c.func = GT_FN_cudaStreamQuery;
        r->c.corr_id = i;
        r->c.t_begin_ns = i;
        r->c.t_end_ns = i + 1;
        r->c.device = 0;
        gt_record_commit(r);
    }
}

static void *worker(void *arg)
{
    double *ns = arg;
    for (long i = 0; i < BURST; i++) /* maps and touches the ring: not the steady state */
        bench_one_event((uint64_t)i);
    gt_core_flush_self();
    uint64_t total = 0;
    long done = 0;
    while (done < g_events) {
        long n = g_events - done < BURST ? g_events - done : BURST;
        uint64_t t0 = mono_ns();
        for (long i = 0; i < n; i++)
            bench_one_event((uint64_t)i);
        total += mono_ns() - t0;
        done += n;
        gt_core_flush_self();
    }
    *ns = (double)total / (double)g_events;
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (argc > 2)
        g_events = atol(argv[2]);
    if (threads < 1 || threads > 256 || g_events < 1) {
        fprintf(stderr, "usage: bench_core [THREADS] [EVENTS_PER_THREAD]\n");
        return 2;
    }
    if (!gt_core_recording()) {
        fprintf(stderr, "bench_core: the core is not recording (check GPUTRACE_DIR)\n");
        return 1;
    }
    pthread_t t[256];
    double ns[256];
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, &ns[i]);
    double sum = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        sum += ns[i];
    }
    printf("threads=%d events/thread=%ld ns/event=%.1f\n", threads, g_events, sum / threads);
    return 0;
}
