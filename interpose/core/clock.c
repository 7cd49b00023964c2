/* clock.c — the trace's clock: CLOCK_REALTIME in nanoseconds (CUPTI's GPU timestamps are
 * CLOCK_REALTIME too; the analyzer puts both on one timeline), read from the TSC where it is
 * invariant. Two vDSO clock_gettime calls per wrapped call cost ~55 ns on a kvm-clock VM, two
 * rdtsc ~26 ns.
 *
 * The hot path (gt_fast_now_ns in gt_core_fast.h) follows a line published here:
 *     ns = anchor_ns + ((tsc - anchor_tsc) * mult) >> 32
 * (stored as offset + (tsc * mult) >> 32, which saves the hot path a subtraction), in one of
 * two slots; gt_clock_pub.gen says which. A slot with expire_tsc 0 means "no line: read
 * CLOCK_REALTIME". Only the slot readers are not using is written, then gen moves on, so a reader
 * never waits: it checks gen again after reading and reads again in the rare case a re-anchor
 * happened meanwhile. A line is good up to expire_tsc; after that (writer late, stopped, or a
 * forked child that does not record) readers use clock_gettime.
 *
 * The writer thread re-anchors (gt_clock_tick, under the writer's pass lock) every
 * GPUTRACE_FLUSH_MS (at most 1 s; from 2 ms doubling at start, while the frequency estimate is
 * young). Each anchor samples (tsc, CLOCK_REALTIME) pairs bracketed by two rdtsc and keeps the
 * narrowest. The frequency comes from the longest baseline kept (up to 16 s of samples, one a
 * second: it follows NTP's rate changes). The new line starts where the current line is at the
 * anchor (no jump: timestamps never go backwards at a re-anchor) and its slope is corrected so it
 * meets CLOCK_REALTIME at the next anchor (slewed, like adjtime). An error above GT_CLOCK_STEP_NS
 * (settimeofday, an NTP step) is stepped, as CLOCK_REALTIME itself steps. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "core_internal.h"

#define HIST 16                      /* frequency baseline: up to HIST seconds of samples */
#define HIST_EVERY_NS 1000000000ull  /* one kept sample a second */
#define MIN_BASELINE_NS 1000000ull   /* first line after 1 ms of baseline */
#define FIRST_PERIOD_NS 2000000ull   /* then anchors at 2, 4, 8... ms */
#define MAX_PERIOD_NS 1000000000ull  /* at most a second between anchors */
#define MAX_BRACKET_NS 400           /* a sample bracketed wider than this is retried */
#define STALE_PERIODS 3              /* a line is used for 3 periods past its anchor */
#define MIN_MULT ((1ull << 32) / 20) /* plausible TSC: 0.05 to 20 ns per tick */
#define MAX_MULT (20ull << 32)

gt_clock_published gt_clock_pub;

typedef struct clock_point {
    uint64_t tsc, ns;
} clock_point;

/* Written under the writer's pass lock (gt_clock_tick) or before any thread exists
 * (gt_clock_init); the atomic fields are also read without it (gt_clock_wait_ms, the tests). */
static struct {
    _Atomic int mode;       /* GT_CLOCK_REALTIME or GT_CLOCK_TSC */
    _Atomic uint64_t mult;  /* frequency estimate: ns per tick << 32; 0 before the first */
    clock_point hist[HIST]; /* kept samples, oldest at first */
    uint32_t hist_n, hist_first;
    clock_point last; /* latest sample */
    uint32_t wide_samples;
    _Atomic uint64_t period_ns, due_tsc;
    _Atomic uint64_t anchors, steps;
    _Atomic int64_t last_error_ns, max_error_ns;
} g_clk;

static uint64_t realtime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)

/* cpuid 0x80000007 EDX bit 8: the TSC runs at a constant rate in every P-, C- and T-state (Linux
 * reports it as constant_tsc + nonstop_tsc). */
static bool tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
}

static uint64_t tsc_now(void)
{
    return __rdtsc();
}

static uint64_t tsc_fenced(void)
{
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}

/* The narrowest of a few (rdtsc, CLOCK_REALTIME, rdtsc) brackets; the TSC of the pair is the
 * bracket's middle, so the pair is off by at most half the bracket (~20 ns on a kvm-clock VM). */
static bool sample(clock_point *out, uint64_t *width_ticks)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t1 = tsc_fenced();
        uint64_t ns = realtime_now();
        uint64_t t2 = tsc_fenced();
        if (t2 >= t1 && t2 - t1 < best) {
            best = t2 - t1;
            *out = (clock_point){t1 + (t2 - t1) / 2, ns};
        }
    }
    *width_ticks = best;
    return best != UINT64_MAX;
}

#else

static bool tsc_invariant(void)
{
    return false;
}

static uint64_t tsc_now(void)
{
    return 0;
}

static bool sample(clock_point *out, uint64_t *width_ticks)
{
    (void)out;
    (void)width_ticks;
    return false;
}

#endif

static uint64_t mul_shift(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

static uint64_t ns_to_ticks(uint64_t ns, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ns << 32) / mult);
}

static int64_t abs64(int64_t x)
{
    return x < 0 ? -x : x;
}

static void hist_reset(clock_point p)
{
    g_clk.hist[0] = p;
    g_clk.hist_n = 1;
    g_clk.hist_first = 0;
}

static void hist_keep(clock_point p)
{
    const clock_point *newest = &g_clk.hist[(g_clk.hist_first + g_clk.hist_n - 1) % HIST];
    if (p.ns - newest->ns < HIST_EVERY_NS)
        return;
    if (g_clk.hist_n < HIST) {
        g_clk.hist[(g_clk.hist_first + g_clk.hist_n++) % HIST] = p;
    } else {
        g_clk.hist[g_clk.hist_first] = p;
        g_clk.hist_first = (g_clk.hist_first + 1) % HIST;
    }
}

static gt_clock_slot *slot_of(uint64_t gen)
{
    return &gt_clock_pub.slot[(gen / GT_CLOCK_GEN_STEP) & 1];
}

static void publish(uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult, uint64_t max_ticks)
{
    uint64_t gen = atomic_load_explicit(&gt_clock_pub.gen, memory_order_relaxed);
    gt_clock_slot *s = slot_of(gen + GT_CLOCK_GEN_STEP);
    uint64_t offset = anchor_ns - mul_shift(anchor_tsc, mult);
    uint64_t expire = max_ticks ? anchor_tsc + max_ticks : 0;
    /* Release stores: a reader that sees any of them also sees gen past its own, and rereads. */
    atomic_store_explicit(&s->offset, offset, memory_order_release);
    atomic_store_explicit(&s->mult, mult, memory_order_release);
    atomic_store_explicit(&s->expire_tsc, expire, memory_order_release);
    atomic_store_explicit(&s->anchor_tsc, anchor_tsc, memory_order_release);
    atomic_store_explicit(&gt_clock_pub.gen, gen + GT_CLOCK_GEN_STEP, memory_order_release);
}

/* The current line at tsc, computed as the hot path does (same rounding). */
static bool line_at(const gt_clock_slot *s, uint64_t tsc, uint64_t *ns)
{
    uint64_t expire = atomic_load_explicit(&s->expire_tsc, memory_order_relaxed);
    if (tsc > expire || tsc < atomic_load_explicit(&s->anchor_tsc, memory_order_relaxed))
        return false;
    *ns = atomic_load_explicit(&s->offset, memory_order_relaxed) +
          mul_shift(tsc, atomic_load_explicit(&s->mult, memory_order_relaxed));
    return true;
}

static void use_realtime(const char *why)
{
    g_clk.mode = GT_CLOCK_REALTIME;
    publish(0, 0, 0, 0);
    if (why)
        gt_debug("clock: CLOCK_REALTIME (%s)", why);
}

/* Where readers are now: the current line at tsc, if they still use it. */
static bool current_line_at(uint64_t tsc, uint64_t *ns)
{
    return line_at(slot_of(atomic_load_explicit(&gt_clock_pub.gen, memory_order_relaxed)), tsc, ns);
}

/* CLOCK_REALTIME was set (settimeofday, an NTP step) since the last sample: the latest sample
 * and the frequency known so far disagree with p by more than any drift could. */
static bool realtime_stepped(clock_point p)
{
    if (!g_clk.mult)
        return false;
    uint64_t expect = g_clk.last.ns + mul_shift(p.tsc - g_clk.last.tsc, g_clk.mult);
    return p.tsc < g_clk.last.tsc || abs64((int64_t)(expect - p.ns)) > GT_CLOCK_STEP_NS;
}

/* A new line through where readers are now, meeting CLOCK_REALTIME (p) at the next anchor. */
static void reanchor(clock_point p, uint64_t mult)
{
    uint64_t period_ticks = ns_to_ticks(g_clk.period_ns, mult);
    uint64_t anchor_ns = p.ns, on_line;
    int64_t err = 0;
    if (current_line_at(p.tsc, &on_line)) {
        err = (int64_t)(on_line - p.ns);
        if (abs64(err) <= GT_CLOCK_STEP_NS)
            anchor_ns = on_line;
        else
            g_clk.steps++;
    }
    /* err / period is at most 50 us / 2 ms = 2.5 % of the slope: it stays positive. */
    int64_t slew = anchor_ns == p.ns
                       ? 0
                       : (int64_t)((__int128)-err * ((__int128)1 << 32) / (__int128)period_ticks);
    publish(p.tsc, anchor_ns, (uint64_t)((int64_t)mult + slew), STALE_PERIODS * period_ticks);
    g_clk.last_error_ns = err;
    if (abs64(err) > g_clk.max_error_ns && abs64(err) <= GT_CLOCK_STEP_NS)
        g_clk.max_error_ns = abs64(err);
    g_clk.anchors++;
    /* Due a little early: the writer wakes on its own period and should find the anchor due. */
    g_clk.due_tsc = p.tsc + period_ticks - period_ticks / 8;
    uint64_t max_period = (uint64_t)g_cfg.flush_ms * 1000000u;
    if (max_period > MAX_PERIOD_NS)
        max_period = MAX_PERIOD_NS;
    if (g_clk.period_ns < max_period)
        g_clk.period_ns = g_clk.period_ns * 2 < max_period ? g_clk.period_ns * 2 : max_period;
}

/* Tests: move the current line by ns at the next writer pass (as an accumulated error would),
 * and re-anchor 20 ms later, so the slew (or the step) can be watched. */
static _Atomic int64_t g_test_shift;

void gt_clock_test_shift(int64_t ns)
{
    atomic_store(&g_test_shift, ns);
}

static bool apply_test_shift(void)
{
    int64_t shift = atomic_exchange(&g_test_shift, 0);
    gt_clock_slot *s = slot_of(atomic_load_explicit(&gt_clock_pub.gen, memory_order_relaxed));
    uint64_t at = atomic_load_explicit(&s->anchor_tsc, memory_order_relaxed), ns;
    if (!shift || !line_at(s, at, &ns))
        return false;
    uint64_t expire = atomic_load_explicit(&s->expire_tsc, memory_order_relaxed);
    publish(at, ns + (uint64_t)shift, atomic_load_explicit(&s->mult, memory_order_relaxed),
            expire - at);
    /* Re-anchor in 20 ms: long enough for the test's readers to see the moved line. */
    g_clk.due_tsc = tsc_now() + ns_to_ticks(20000000, g_clk.mult);
    return true;
}

void gt_clock_tick(void)
{
    if (g_clk.mode != GT_CLOCK_TSC || apply_test_shift())
        return;
    clock_point p;
    uint64_t width;
    if (tsc_now() < g_clk.due_tsc)
        return;
    if (!sample(&p, &width))
        return;
    /* Preempted inside every bracket: try again at the next passes (the writer wakes within a
     * millisecond), but not for ever: a slow clock_gettime (a sanitizer's) gives wide ones. */
    if (g_clk.mult && width > ns_to_ticks(MAX_BRACKET_NS, g_clk.mult) && g_clk.wide_samples++ < 8)
        return;
    g_clk.wide_samples = 0;
    if (realtime_stepped(p))
        hist_reset(p); /* the baseline spans the step: start a new one, keep the frequency */
    g_clk.last = p;
    const clock_point *o = &g_clk.hist[g_clk.hist_first];
    uint64_t mult = g_clk.mult;
    if (p.ns - o->ns >= MIN_BASELINE_NS && p.tsc > o->tsc)
        mult = (uint64_t)(((unsigned __int128)(p.ns - o->ns) << 32) / (p.tsc - o->tsc));
    else if (!mult)
        return; /* the first baseline is too short yet */
    if (mult < MIN_MULT || mult > MAX_MULT) {
        use_realtime("the TSC's rate is implausible");
        return;
    }
    g_clk.mult = mult;
    hist_keep(p);
    reanchor(p, mult);
}

uint32_t gt_clock_wait_ms(void)
{
    if (g_clk.mode != GT_CLOCK_TSC)
        return UINT32_MAX;
    if (!g_clk.mult)
        return 1;
    uint64_t now = tsc_now();
    if (now >= g_clk.due_tsc)
        return 1;
    uint64_t ms = mul_shift(g_clk.due_tsc - now, g_clk.mult) / 1000000u + 1;
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void gt_clock_init(void)
{
    memset(&g_clk, 0, sizeof g_clk);
    g_clk.period_ns = FIRST_PERIOD_NS;
    bool invariant = tsc_invariant();
    if (g_cfg.clock_mode == GT_CLOCK_REALTIME) {
        use_realtime("GPUTRACE_CLOCK=realtime");
        return;
    }
#if !defined(__x86_64__)
    if (g_cfg.clock_mode == GT_CLOCK_TSC)
        gt_warn("GPUTRACE_CLOCK=tsc: no TSC on this CPU; using CLOCK_REALTIME");
    use_realtime("no TSC");
    return;
#endif
    if (!invariant && g_cfg.clock_mode != GT_CLOCK_TSC) {
        use_realtime("the CPU does not report an invariant TSC");
        return;
    }
    if (!invariant)
        gt_warn("GPUTRACE_CLOCK=tsc: the CPU does not report an invariant TSC; using it anyway");
    clock_point p;
    uint64_t width;
    if (!sample(&p, &width)) {
        use_realtime("no TSC sample");
        return;
    }
    g_clk.mode = GT_CLOCK_TSC;
    g_clk.last = p;
    hist_reset(p);
    gt_debug("clock: TSC, calibrated against CLOCK_REALTIME by the writer thread");
}

void gt_clock_get_info(gt_clock_info *out)
{
    memset(out, 0, sizeof *out);
    out->mode = g_clk.mode;
    out->published = atomic_load(&slot_of(atomic_load(&gt_clock_pub.gen))->expire_tsc) != 0;
    out->invariant = tsc_invariant();
    out->anchors = g_clk.anchors;
    out->steps = g_clk.steps;
    out->ticks_per_us = g_clk.mult ? (double)(1ull << 32) * 1000.0 / (double)g_clk.mult : 0;
    out->period_ns = g_clk.period_ns;
    out->last_error_ns = g_clk.last_error_ns;
    out->max_error_ns = g_clk.max_error_ns;
}
