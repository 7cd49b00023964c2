/* core_clock_tests.c — the trace's clock (interpose/core/clock.c) in the core test binary: child
 * modes that sample gt_now_ns against CLOCK_REALTIME, and the tests that read what they print. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"
#include "core_tests.h"
#include "gt_core.h"

/* ---------------------------------------------------------------- clock (clock.c) */

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* gt_now_ns against CLOCK_REALTIME read just before and after it, for a while, on this thread:
 * how far outside the bracket it fell (ahead/behind, ns), and its largest step backwards. */
typedef struct clock_stats {
    double seconds;
    uint64_t until_anchors; /* and on until the clock has made this many anchors (at most 60 s) */
    uint64_t samples;
    int64_t ahead, behind, backwards;
} clock_stats;

static bool clock_anchors_below(uint64_t want)
{
    gt_clock_info ci;
    gt_clock_get_info(&ci);
    return ci.anchors < want;
}

static void *clock_sampler(void *arg)
{
    clock_stats *st = arg;
    uint64_t end = realtime_ns() + (uint64_t)(st->seconds * 1e9), prev = 0;
    uint64_t limit = realtime_ns() + 60000000000ull;
    bool more_anchors = st->until_anchors && clock_anchors_below(st->until_anchors);
    for (uint64_t r1 = realtime_ns(); r1 < end || (more_anchors && r1 < limit);
         r1 = realtime_ns()) {
        uint64_t t = gt_now_ns(), r2 = realtime_ns();
        if ((int64_t)(t - r2) > st->ahead)
            st->ahead = (int64_t)(t - r2);
        if ((int64_t)(r1 - t) > st->behind)
            st->behind = (int64_t)(r1 - t);
        if (prev && (int64_t)(prev - t) > st->backwards)
            st->backwards = (int64_t)(prev - t);
        prev = t;
        /* Leave the writer thread a core on a small machine, except in short windows that must
         * see every re-anchor (a step back is not seen by a sampler that sleeps across it). */
        if (++st->samples % 4096 == 0 && (st->seconds > 0.1 || st->until_anchors)) {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
            if (more_anchors)
                more_anchors = clock_anchors_below(st->until_anchors);
        }
    }
    return NULL;
}

/* Samples for seconds, and on until the clock made until_anchors anchors (0: no wait). */
static void clock_print_until(const char *who, double seconds, uint64_t until_anchors)
{
    clock_stats st[2] = {{.seconds = seconds, .until_anchors = until_anchors},
                         {.seconds = seconds, .until_anchors = until_anchors}};
    pthread_t t;
    pthread_create(&t, NULL, clock_sampler, &st[1]);
    clock_sampler(&st[0]);
    pthread_join(t, NULL);
    gt_clock_info ci;
    gt_clock_get_info(&ci);
    for (int i = 0; i < 2; i++)
        st[0].ahead = st[i].ahead > st[0].ahead ? st[i].ahead : st[0].ahead,
        st[0].behind = st[i].behind > st[0].behind ? st[i].behind : st[0].behind,
        st[0].backwards = st[i].backwards > st[0].backwards ? st[i].backwards : st[0].backwards;
    printf("%s mode=%d published=%d invariant=%d anchors=%llu steps=%llu samples=%llu ahead=%lld "
           "behind=%lld backwards=%lld max_error=%lld mhz=%.3f\n",
           who, ci.mode, ci.published, ci.invariant, (unsigned long long)ci.anchors,
           (unsigned long long)ci.steps, (unsigned long long)(st[0].samples + st[1].samples),
           (long long)st[0].ahead, (long long)st[0].behind, (long long)st[0].backwards,
           (long long)ci.max_error_ns, ci.ticks_per_us);
    fflush(stdout);
}

static void clock_print(const char *who, double seconds)
{
    clock_print_until(who, seconds, 0);
}

int child_clock(void)
{
    const char *s = getenv("TEST_CLOCK_SECONDS");
    clock_print("self", s ? atof(s) : 2.0);
    return 0;
}

/* A line off by TEST_CLOCK_SHIFT_NS (as if the TSC had drifted): the next re-anchor slews it back
 * to CLOCK_REALTIME within a period (or steps, past GT_CLOCK_STEP_NS). Prints the stats of 50 ms
 * of the moved line before any re-anchor ("shifted": the writer's pass lock is held, as fork
 * holds it, so no re-anchor can come however the machine schedules the writer), of the time
 * through the first re-anchor ("slewing"), and of 0.5 s after the next one ("settled"). Events,
 * not sleeps, mark the phases: on a loaded machine the writer re-anchors late. */
int child_clock_slew(void)
{
    clock_print("calibrated", 0.5);
    gt_clock_test_shift(atoll(getenv("TEST_CLOCK_SHIFT_NS")));
    gt_core_flush_all(); /* a writer pass now: it moves the line, the re-anchor is due 20 ms later
                          */
    gt_writer_fork_prepare();
    clock_print("shifted", 0.05);
    gt_clock_info ci;
    gt_clock_get_info(&ci);
    gt_writer_fork_parent();
    clock_print_until("slewing", 0.05, ci.anchors + 1);
    for (int i = 0; i < 12000 && clock_anchors_below(ci.anchors + 3); i++) {
        struct timespec ts = {0, 5000000}; /* the slewed line's period is over: at most 60 s */
        nanosleep(&ts, NULL);
    }
    clock_print("settled", 0.5);
    return 0;
}

/* The clock across fork: the child keeps the parent's line until its own writer re-anchors. */
int child_clock_fork(void)
{
    clock_print("parent-before", 0.3);
    pid_t pid = fork();
    if (pid == 0) {
        clock_print("forked", 0.8);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    clock_print("parent-after", 0.3);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 12;
}

/* ---------------------------------------------------------------- clock */

typedef struct clock_line {
    int mode, published, invariant;
    unsigned long long anchors, steps, samples;
    long long ahead, behind, backwards, max_error;
    double mhz;
} clock_line;

static bool parse_clock(const char *out, const char *who, clock_line *c)
{
    char key[64];
    snprintf(key, sizeof key, "%s mode=", who);
    const char *p = strstr(out, key);
    memset(c, 0, sizeof *c);
    return p && sscanf(p + strlen(who),
                       " mode=%d published=%d invariant=%d anchors=%llu steps=%llu samples=%llu "
                       "ahead=%lld behind=%lld backwards=%lld max_error=%lld mhz=%lf",
                       &c->mode, &c->published, &c->invariant, &c->anchors, &c->steps, &c->samples,
                       &c->ahead, &c->behind, &c->backwards, &c->max_error, &c->mhz) == 11;
}

/* The documented bound (docs/configuration.md, GPUTRACE_CLOCK): within 1 us of CLOCK_REALTIME
 * read around it, and never more than 1 us backwards on a thread. */
#define CLOCK_BOUND_NS 1000

static void check_clock_line(const char *out, const char *who, bool want_tsc)
{
    clock_line c;
    bool ok = parse_clock(out, who, &c);
    CHECK(ok, "no '%s' line in: %s", who, out);
    if (!ok)
        return;
    printf("%s: %s", who, strstr(out, who));
    CHECK(c.samples > 1000, "%s: %llu samples", who, c.samples);
    CHECK(c.ahead <= CLOCK_BOUND_NS && c.behind <= CLOCK_BOUND_NS,
          "%s: %lld ns ahead of, %lld ns behind CLOCK_REALTIME", who, c.ahead, c.behind);
    CHECK(c.backwards <= CLOCK_BOUND_NS, "%s: went %lld ns backwards", who, c.backwards);
    if (!want_tsc) {
        CHECK(c.mode == GT_CLOCK_REALTIME && !c.published, "%s: mode %d published %d", who, c.mode,
              c.published);
        /* clock_gettime itself, between two clock_gettime calls. */
        CHECK(c.ahead <= 0 && c.behind <= 0, "%s: realtime outside its bracket", who);
        return;
    }
    CHECK(c.mode == GT_CLOCK_TSC && c.published, "%s: mode %d published %d", who, c.mode,
          c.published);
    CHECK(c.steps == 0, "%s: %llu steps", who, c.steps);
    CHECK(c.mhz > 100 && c.mhz < 20000, "%s: TSC at %.3f MHz", who, c.mhz);
}

void test_clock(void)
{
#if defined(__x86_64__)
    /* Many re-anchors (every 50 ms) and two sampling threads for 2 s. */
    child_result cr;
    char *dir = make_dir("clock-tsc");
    const char *tsc[] = {"GPUTRACE_CLOCK=tsc", "GPUTRACE_FLUSH_MS=50", NULL};
    run_child("clock", tsc, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    check_clock_line(cr.out, "self", true);
    clock_line c;
    if (parse_clock(cr.out, "self", &c))
        CHECK(c.anchors >= 20, "%llu re-anchors in 2 s at 50 ms", c.anchors);
    /* The default period (200 ms, slowly doubled up to it). */
    dir = make_dir("clock-default");
    const char *dflt[] = {"GPUTRACE_CLOCK=tsc", "TEST_CLOCK_SECONDS=1.5", NULL};
    run_child("clock", dflt, dir, &cr);
    check_clock_line(cr.out, "self", true);
    if (parse_clock(cr.out, "self", &c))
        CHECK(c.anchors >= 8, "%llu re-anchors in 1.5 s", c.anchors);
#endif
}

void test_clock_settings(void)
{
    child_result cr;
    clock_line c;
    char *dir = make_dir("clock-realtime");
    const char *rt[] = {"GPUTRACE_CLOCK=realtime", "TEST_CLOCK_SECONDS=0.5", NULL};
    run_child("clock", rt, dir, &cr);
    CHECK(exited_with(&cr, 0) && !strstr(cr.err, "GPUTRACE_CLOCK"), "status %d, stderr: %s",
          cr.status, cr.err);
    check_clock_line(cr.out, "self", false);

    /* auto: the TSC exactly when the CPU reports it invariant. */
    dir = make_dir("clock-auto");
    const char *aut[] = {"GPUTRACE_CLOCK=auto", "TEST_CLOCK_SECONDS=0.5", NULL};
    run_child("clock", aut, dir, &cr);
    CHECK(exited_with(&cr, 0) && !strstr(cr.err, "GPUTRACE_CLOCK"), "status %d, stderr: %s",
          cr.status, cr.err);
    bool auto_tsc = parse_clock(cr.out, "self", &c) && c.invariant;
    check_clock_line(cr.out, "self", auto_tsc);

    /* A bad value: one warning naming it, then the default (auto). */
    dir = make_dir("clock-bad");
    const char *bad[] = {"GPUTRACE_CLOCK=sundial", "TEST_CLOCK_SECONDS=0.5", NULL};
    run_child("clock", bad, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d", cr.status);
    CHECK(strstr(cr.err, "GPUTRACE_CLOCK=sundial") && strstr(cr.err, "using auto"), "warning: %s",
          cr.err);
    check_clock_line(cr.out, "self", auto_tsc);
}

/* The slew and the step, on a line moved on purpose: readers never go back at a slewed
 * re-anchor, and are back within the bound two periods later. */
void test_clock_slew(void)
{
#if defined(__x86_64__)
    child_result cr;
    clock_line shifted, settled;
    char *dir = make_dir("clock-slew");
    const char *slew[] = {"GPUTRACE_CLOCK=tsc", "GPUTRACE_FLUSH_MS=100",
                          "TEST_CLOCK_SHIFT_NS=20000", NULL};
    run_child("clock-slew", slew, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    check_clock_line(cr.out, "calibrated", true);
    check_clock_line(cr.out, "settled", true);
    clock_line slewing;
    if (parse_clock(cr.out, "shifted", &shifted)) {
        printf("shifted: %s", strstr(cr.out, "shifted"));
        CHECK(shifted.ahead > 15000, "the 20 us shift never showed: %lld ns ahead", shifted.ahead);
    }
    if (parse_clock(cr.out, "slewing", &slewing)) {
        printf("slewing: %s", strstr(cr.out, "slewing"));
        CHECK(slewing.backwards <= CLOCK_BOUND_NS, "went %lld ns back while slewing",
              slewing.backwards);
        CHECK(slewing.steps == 0, "a 20 us error was stepped");
    }
    if (parse_clock(cr.out, "settled", &settled))
        CHECK(settled.max_error >= 15000, "the re-anchor saw %lld ns of error, not the shift",
              settled.max_error);

    dir = make_dir("clock-step");
    const char *step[] = {"GPUTRACE_CLOCK=tsc", "GPUTRACE_FLUSH_MS=100",
                          "TEST_CLOCK_SHIFT_NS=200000", NULL};
    run_child("clock-slew", step, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    if (parse_clock(cr.out, "settled", &settled))
        CHECK(settled.ahead <= CLOCK_BOUND_NS && settled.behind <= CLOCK_BOUND_NS &&
                  settled.backwards <= CLOCK_BOUND_NS,
              "after a step: %lld ahead, %lld behind, %lld back", settled.ahead, settled.behind,
              settled.backwards);
    if (parse_clock(cr.out, "shifted", &shifted) && parse_clock(cr.out, "slewing", &slewing)) {
        printf("shifted: %s", strstr(cr.out, "shifted"));
        CHECK(slewing.steps == 1 && shifted.ahead > 150000,
              "a 200 us error: %llu steps, %lld ns ahead", slewing.steps, shifted.ahead);
    }
#endif
}

void test_clock_fork(void)
{
#if defined(__x86_64__)
    child_result cr;
    char *dir = make_dir("clock-fork");
    const char *tsc[] = {"GPUTRACE_CLOCK=tsc", NULL};
    run_child("clock-fork", tsc, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    check_clock_line(cr.out, "parent-before", true);
    check_clock_line(cr.out, "forked", true);
    check_clock_line(cr.out, "parent-after", true);
    clock_line before, forked;
    if (parse_clock(cr.out, "parent-before", &before) && parse_clock(cr.out, "forked", &forked))
        CHECK(forked.anchors > before.anchors, "the child's writer never re-anchored (%llu, %llu)",
              before.anchors, forked.anchors);
#endif
}
