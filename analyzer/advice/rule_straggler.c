/* rule_straggler.c — straggler: the rank that holds the others back. In lock-stepped data
 * parallelism every rank's step lasts as long as the slowest one's (all wait in the
 * collectives), so the straggler shows in when each rank reaches the collectives (model_ranks.c);
 * ranks that do not wait for each other show it in their step times. The saving is its lateness
 * per step, out of its own GPU's idle time (gpu-idle leaves that part to it). A rule over the
 * run: its item is the straggler's. Thresholds: docs/advice.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"

#define STRAGGLER_RATIO 1.05      /* without collectives: slowest rank's step / median step */
#define STRAGGLER_MIN_LATE_MS 0.5 /* median lateness per step at the collectives ... */
#define STRAGGLER_LATE_SHARE 0.05 /* ... and as a share of the step period */
#define STRAGGLER_LAST_SHARE 0.5  /* last to arrive in at least this share of the steps */
#define STRAGGLER_INSTEAD_SHARE                                                                    \
    0.25 /* what it did instead is named from this share of lateness                               \
          */
#define MAX_RANKS 256

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Ranks with data, one process each (the run's first with that rank). */
static size_t ranked_procs(const gt_run *run, const gt_proc **out)
{
    size_t n = 0;
    for (size_t i = 0; i < run->n && n < MAX_RANKS; i++) {
        const gt_proc *p = &run->procs[i];
        if (!gt_proc_has_data(p) || p->hdr.rank < 0)
            continue;
        size_t k = 0;
        while (k < n && out[k]->hdr.rank != p->hdr.rank)
            k++;
        if (k == n)
            out[n++] = p;
    }
    return n;
}

enum { WHY_HOST, WHY_DATA, WHY_SYNC, WHY_COPY, WHY_ALLOC, WHY_GPU, WHY_COUNT };
static const char *const why_names[WHY_COUNT] = {"CPU work without CUDA calls",
                                                 "data loading",
                                                 "synchronization",
                                                 "copies",
                                                 "allocations",
                                                 "GPU work"};

/* A rank's steady-window figures per step; without steps, per collective round. */
static void per_step_figures(const gt_proc *p, double period_ms, double f[WHY_COUNT])
{
    double w = p->steady_end_ns > p->steady_start_ns
                   ? (double)(p->steady_end_ns - p->steady_start_ns) / 1e6
                   : 0;
    double steps = gt_adv_has_steps(p) ? gt_adv_steps(p) : period_ms > 0 ? w / period_ms : 1;
    if (steps < 1)
        steps = 1;
    f[WHY_HOST] = (double)p->steady_idle_cause_ns[GT_IDLE_HOST_WORK] / 1e6 / steps;
    f[WHY_DATA] = (double)p->steady_idle_cause_ns[GT_IDLE_DATA_LOADING] / 1e6 / steps;
    f[WHY_SYNC] = p->steady_sync_ms_per_step * p->steady_steps / steps;
    f[WHY_COPY] = p->steady_copy_ms_per_step * p->steady_steps / steps;
    f[WHY_ALLOC] = (double)p->steady_alloc_ns / 1e6 / steps;
    f[WHY_GPU] = p->steady_busy_pct / 100 * w / steps;
}

/* Why the slow rank is slow: the figure where it exceeds the other ranks' mean most. */
static int straggler_reason(const gt_proc *s, const gt_proc **ranked, size_t n, double period_ms,
                            double *excess)
{
    double mine[WHY_COUNT], others[WHY_COUNT] = {0}, f[WHY_COUNT];
    per_step_figures(s, period_ms, mine);
    for (size_t i = 0; i < n; i++) {
        if (ranked[i] == s)
            continue;
        per_step_figures(ranked[i], period_ms, f);
        for (int k = 0; k < WHY_COUNT; k++)
            others[k] += f[k] / (double)(n - 1);
    }
    int why = -1;
    *excess = 0;
    for (int k = 0; k < WHY_COUNT; k++)
        if (mine[k] - others[k] > *excess) {
            *excess = mine[k] - others[k];
            why = k;
        }
    return why;
}

static const gt_proc *proc_with_pid(const gt_proc **ranked, size_t n, int pid)
{
    for (size_t i = 0; i < n; i++)
        if (ranked[i]->hdr.pid == pid)
            return ranked[i];
    return NULL;
}

typedef struct straggler_data {
    int by_collectives, per_step, kind, why, rank, pid;
    size_t of, last;
    double late_ms, period_ms, others_wait_ms, excess_ms, ref_ms, own_ms;
    int outside_nccl;
    int instead[2]; /* what it did instead (enum gt_late_what), the largest first; -1 none */
    double instead_ms[2];
} straggler_data;

/* What the last rank did instead before its late arrivals (model_ranks.c), the largest first,
 * each named from STRAGGLER_INSTEAD_SHARE of its lateness. */
static void instead_of(const gt_straggler *st, straggler_data *d)
{
    d->instead[0] = d->instead[1] = -1;
    for (int w = 0; w < GT_LATE_COUNT; w++) {
        double ms = st->instead_ms[w];
        if (ms <= STRAGGLER_INSTEAD_SHARE * st->lateness_ms)
            continue;
        if (d->instead[0] < 0 || ms > d->instead_ms[0]) {
            d->instead[1] = d->instead[0], d->instead_ms[1] = d->instead_ms[0];
            d->instead[0] = w, d->instead_ms[0] = ms;
        } else if (d->instead[1] < 0 || ms > d->instead_ms[1]) {
            d->instead[1] = w, d->instead_ms[1] = ms;
        }
    }
}

/* The rank reaching the collectives last (run->straggler, model_ranks.c): its lateness per step,
 * the others' wait for it, what it did instead. */
static const gt_proc *by_collectives(const gt_run *run, const gt_proc **ranked, size_t n,
                                     straggler_data *d)
{
    const gt_straggler *st = &run->straggler;
    const gt_proc *s = proc_with_pid(ranked, n, st->pid);
    size_t of = st->per_step ? st->rounds : st->collectives;
    size_t last = st->per_step ? st->last_in : st->last_at;
    if (!s || st->lateness_ms < STRAGGLER_MIN_LATE_MS ||
        (st->period_ms > 0 && st->lateness_ms < STRAGGLER_LATE_SHARE * st->period_ms) ||
        (double)last < STRAGGLER_LAST_SHARE * (double)of)
        return NULL;
    d->by_collectives = 1;
    d->per_step = st->per_step;
    d->kind = st->kind;
    d->of = of;
    d->last = last;
    d->late_ms = st->lateness_ms;
    d->period_ms = st->period_ms;
    d->others_wait_ms = st->others_wait_ms;
    d->why = -1;
    instead_of(st, d);
    return s;
}

static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Ranks that do not wait for each other (no collectives matched): the slowest median step, or
 * the most time outside NCCL kernels (in lock-stepped DDP the step times are equal and the
 * straggler is the rank that waits least in NCCL). */
static const gt_proc *by_steps(const gt_proc **all, size_t n_all, straggler_data *d)
{
    const gt_proc *ranked[MAX_RANKS];
    double steps[MAX_RANKS], own[MAX_RANKS];
    size_t n = 0;
    for (size_t i = 0; i < n_all; i++)
        if (gt_adv_has_steps(all[i]))
            ranked[n++] = all[i];
    if (n < 2)
        return NULL;
    const gt_proc *slow = ranked[0], *slow_own = ranked[0];
    for (size_t i = 0; i < n; i++) {
        steps[i] = ranked[i]->step_ms_median;
        own[i] = ranked[i]->step_ms_median - ranked[i]->steady_nccl_ms_per_step;
        if (steps[i] > slow->step_ms_median)
            slow = ranked[i];
        if (own[i] >= slow_own->step_ms_median - slow_own->steady_nccl_ms_per_step)
            slow_own = ranked[i];
    }
    double med = median_of(steps, n), own_med = median_of(own, n);
    double slow_own_ms = slow_own->step_ms_median - slow_own->steady_nccl_ms_per_step;
    int by_step = med > 0 && slow->step_ms_median / med >= STRAGGLER_RATIO;
    int by_own = own_med > 0 && slow_own_ms / own_med >= STRAGGLER_RATIO;
    if (!by_step && !by_own)
        return NULL;
    const gt_proc *s = by_step ? slow : slow_own;
    d->outside_nccl = !by_step;
    d->own_ms = by_step ? s->step_ms_median : slow_own_ms;
    d->ref_ms = by_step ? med : own_med;
    d->late_ms = d->own_ms - d->ref_ms;
    d->why = straggler_reason(s, ranked, n, 0, &d->excess_ms);
    return s;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    straggler_data *d = data;
    const gt_proc *ranked[MAX_RANKS];
    size_t n = ranked_procs(c->run, ranked);
    if (n < 2)
        return 0;
    /* the collectives decide, straggler or not */
    const gt_proc *s =
        c->run->straggler.found ? by_collectives(c->run, ranked, n, d) : by_steps(ranked, n, d);
    if (!s)
        return 0;
    a->pid = d->pid = s->hdr.pid;
    a->rank = d->rank = s->hdr.rank;
    a->t_ns = s->steady_start_ns;
    gt_adv_ev(a, "rank", d->rank, "");
    gt_adv_ev(a, "lateness_ms_per_step", d->late_ms, "ms");
    if (d->by_collectives) {
        const gt_straggler *st = &c->run->straggler;
        gt_adv_ev(a, "last_in_steps", (double)st->last_in, "count");
        gt_adv_ev(a, "steps", (double)st->rounds, "count");
        gt_adv_ev(a, "last_at_collectives", (double)st->last_at, "count");
        gt_adv_ev(a, "collectives", (double)st->collectives, "count");
        gt_adv_ev(a, "step_period_ms", d->period_ms, "ms");
        gt_adv_ev(a, "others_wait_ms_per_step", d->others_wait_ms, "ms");
        for (int w = 0; w < GT_LATE_COUNT && a->n_evidence < GT_ADVICE_MAX_EVIDENCE; w++)
            if (st->instead_ms[w] > STRAGGLER_INSTEAD_SHARE * st->lateness_ms)
                gt_adv_ev(a, gt_fmt("instead_%s_ms_per_step", gt_late_what_key(w)),
                          st->instead_ms[w], "ms");
    } else {
        gt_adv_ev(a, "step_ms", d->own_ms, "ms");
        gt_adv_ev(a, "median_step_ms", d->ref_ms, "ms");
    }
    if (d->why >= 0)
        gt_adv_ev(a, "excess_ms_per_step", d->excess_ms, "ms");
    if ((d->by_collectives ? d->per_step : gt_adv_has_steps(s)) || d->period_ms <= 0)
        gt_adv_saving(a, d->late_ms, GT_BASIS_STEP, GT_POOL_IDLE,
                      "its lateness per step, which every other rank waits");
    else /* per round; the window holds window / period rounds */
        gt_adv_saving(a, d->late_ms * gt_adv_window_ms(s) / d->period_ms, GT_BASIS_WINDOW,
                      GT_POOL_IDLE, "its lateness per round times the rounds in the window");
    return 1;
}

/* The remedy by what the last rank did instead. */
static const char *instead_remedy(int what, int fw)
{
    switch (what) {
    case GT_LATE_DATA_LOADING:
        return fw == GT_FW_PYTORCH
                   ? "Give that rank's input pipeline more DataLoader workers, pinned memory and "
                     "prefetching, or even out its shard (DistributedSampler shards of equal size)."
                   : "Give that rank's input pipeline more workers and prefetching, or even out "
                     "its shard.";
    case GT_LATE_GPU:
        return "Even out the GPU work per rank (uneven shards or sequence lengths, extra passes on "
               "one rank), or check that rank's GPU (shared, throttled, slower).";
    case GT_LATE_CUDA_CALL:
        return "Look at that rank's CUDA calls before the collective (a sync, a copy, "
               "allocations).";
    case GT_LATE_COMPILE:
        return "That rank compiled (or recompiled) while the others waited: warm the caches, "
               "or keep shapes the same on every rank.";
    case GT_LATE_COLLECTIVE:
        return "That rank spends longer in other collectives first (another process group?).";
    default:
        return "Find that rank's extra work with a CPU profiler (py-spy dump/record on its pid): "
               "logging, checkpointing, metrics or an uneven input pipeline on one rank; a rank "
               "that sleeps or waits on something else looks the same without CPU samples.";
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const straggler_data *d = data;
    (void)a;
    if (d->by_collectives) {
        char instead[200] = "";
        if (d->instead[0] >= 0) {
            size_t u =
                (size_t)snprintf(instead, sizeof instead,
                                 " Before each late arrival it did, beyond the others: "
                                 "%s %s",
                                 gt_late_what_name(d->instead[0]), gt_adv_ms(d->instead_ms[0]));
            if (d->instead[1] >= 0 && u < sizeof instead)
                u +=
                    (size_t)snprintf(instead + u, sizeof instead - u, ", then %s %s",
                                     gt_late_what_name(d->instead[1]), gt_adv_ms(d->instead_ms[1]));
            if (u < sizeof instead)
                snprintf(instead + u, sizeof instead - u, ".");
        }
        const char *unit = d->per_step ? "step" : "collective";
        GT_SEEN(w,
                "Rank %d (pid %d) reaches the %s collectives last in %zu of %zu %ss, %s late %s "
                "(%s): the other ranks wait %s %s for it.%s",
                d->rank, d->pid, d->kind == GT_COLL_NCCL ? "NCCL" : "CPU (gloo)", d->last, d->of,
                unit, gt_adv_ms(d->late_ms), d->per_step ? "per step" : "over the steady window",
                d->per_step ? gt_fmt("median; a step every %s", gt_adv_ms(d->period_ms))
                            : gt_fmt("a steady window of %s", gt_adv_ms(d->period_ms)),
                gt_adv_ms(d->others_wait_ms), d->per_step ? "per step" : "in all", instead);
        GT_REMEDY(w, "%s", instead_remedy(d->instead[0], c->fw));
        return;
    }
    char reason[200] = "";
    if (d->why >= 0 && d->excess_ms > 0.25 * d->late_ms)
        snprintf(reason, sizeof reason, " It spends %s more per step than the others in %s.",
                 gt_adv_ms(d->excess_ms), why_names[d->why]);
    GT_SEEN(w,
            "Rank %d holds the others back: %s%s per step against a median of %s (%.0f%% "
            "slower); the other ranks wait for it in collectives.%s",
            d->rank, gt_adv_ms(d->own_ms), d->outside_nccl ? " outside NCCL" : "",
            gt_adv_ms(d->ref_ms), d->ref_ms > 0 ? 100 * (d->own_ms / d->ref_ms - 1) : 0, reason);
    if (c->fw == GT_FW_PYTORCH)
        GT_REMEDY(w, "Even out the work per rank: the input pipeline (DistributedSampler shards "
                     "of equal size), work only this rank does (logging, metrics, checkpoints "
                     "on rank 0: do them less often or on a thread).");
    else
        GT_REMEDY(w, "Even out the work per rank: the input pipeline, uneven shards, work only "
                     "this rank does (logging, checkpoints).");
}

const gt_rule gt_rule_straggler = {"straggler", "one rank holds the others back", GT_RULE_RUN, find,
                                   word};
