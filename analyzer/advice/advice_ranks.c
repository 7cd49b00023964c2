/* advice_ranks.c — the straggler rule: the rank that holds the others back. In lock-stepped data
 * parallelism every rank's step lasts as long as the slowest one's (all wait in the collectives),
 * so the straggler shows in when each rank reaches the collectives (model_ranks.c); ranks that
 * do not wait for each other show it in their step times. Thresholds: docs/advice.md. */
#include "advice.h"
#include "advice_rules.h"
#include "textfmt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What the last rank did instead, the largest first: "CPU work without CUDA calls 15.2 ms"
 * (and a second one when it is at least a quarter of the lateness). Returns the largest. */
static int instead_text(const gt_straggler *st, char *buf, size_t cap)
{
    int order[GT_LATE_COUNT];
    for (int w = 0; w < GT_LATE_COUNT; w++)
        order[w] = w;
    for (int i = 1; i < GT_LATE_COUNT; i++)
        for (int j = i; j > 0 && st->instead_ms[order[j]] > st->instead_ms[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    buf[0] = 0;
    if (st->instead_ms[order[0]] <= STRAGGLER_INSTEAD_SHARE * st->lateness_ms)
        return -1;
    size_t used = (size_t)snprintf(buf, cap, "%s %s", gt_late_what_name(order[0]),
                                   gt_dur(st->instead_ms[order[0]]));
    if (used < cap && st->instead_ms[order[1]] > STRAGGLER_INSTEAD_SHARE * st->lateness_ms)
        snprintf(buf + used, cap - used, ", then %s %s", gt_late_what_name(order[1]),
                 gt_dur(st->instead_ms[order[1]]));
    return order[0];
}

/* The remedy by what the last rank did instead. */
static const char *instead_remedy(int what)
{
    switch (what) {
    case GT_LATE_DATA_LOADING:
        return "Give that rank's input pipeline more DataLoader workers, pinned memory and "
               "prefetching, or even out its shard.";
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

static const gt_proc *proc_with_pid(const gt_proc **ranked, size_t n, int pid)
{
    for (size_t i = 0; i < n; i++)
        if (ranked[i]->hdr.pid == pid)
            return ranked[i];
    return NULL;
}

/* The rank reaching the collectives last (run->straggler, model_ranks.c): its lateness per step,
 * the others' wait for it, what it did instead. */
static void straggler_by_collectives(const gt_run *run, const gt_proc **ranked, size_t n,
                                     gt_advice_list *l)
{
    const gt_straggler *st = &run->straggler;
    const gt_proc *s = proc_with_pid(ranked, n, st->pid);
    size_t of = st->per_step ? st->rounds : st->collectives;
    size_t last = st->per_step ? st->last_in : st->last_at;
    if (!s || st->lateness_ms < STRAGGLER_MIN_LATE_MS ||
        (st->period_ms > 0 && st->lateness_ms < STRAGGLER_LATE_SHARE * st->period_ms) ||
        (double)last < STRAGGLER_LAST_SHARE * (double)of)
        return;
    gt_advice *a =
        gt_adv_add(l, s, "straggler",
                   st->period_ms > 0 ? gt_adv_severity_for_share(st->lateness_ms / st->period_ms)
                                     : GT_SEV_WARNING);
    char instead[200];
    int what = instead_text(st, instead, sizeof instead);
    const char *unit = st->per_step ? "step" : "collective";
    gt_adv_msg(a,
               "Rank %d (pid %d) reaches the %s collectives last in %zu of %zu %ss, %s late "
               "%s (%s): the other ranks wait %s %s for it. %s%s%s%s",
               st->rank, st->pid, st->kind == GT_COLL_NCCL ? "NCCL" : "CPU (gloo)", last, of, unit,
               gt_dur(st->lateness_ms), st->per_step ? "per step" : "over the steady window",
               st->per_step ? gt_fmt("median; a step every %s", gt_dur(st->period_ms))
                            : gt_fmt("a steady window of %s", gt_dur(st->period_ms)),
               gt_dur(st->others_wait_ms), st->per_step ? "per step" : "in all",
               what >= 0 ? "Before each late arrival it did, beyond the others: " : "", instead,
               what >= 0 ? ". " : "", instead_remedy(what));
    gt_adv_ev(a, "rank", st->rank, "");
    gt_adv_ev(a, "lateness_ms_per_step", st->lateness_ms, "ms");
    gt_adv_ev(a, "last_in_steps", (double)st->last_in, "count");
    gt_adv_ev(a, "steps", (double)st->rounds, "count");
    gt_adv_ev(a, "last_at_collectives", (double)st->last_at, "count");
    gt_adv_ev(a, "collectives", (double)st->collectives, "count");
    gt_adv_ev(a, "step_period_ms", st->period_ms, "ms");
    gt_adv_ev(a, "others_wait_ms_per_step", st->others_wait_ms, "ms");
    for (int w = 0; w < GT_LATE_COUNT && a->n_evidence < GT_ADVICE_MAX_EVIDENCE; w++)
        if (st->instead_ms[w] > STRAGGLER_INSTEAD_SHARE * st->lateness_ms)
            gt_adv_ev(a, gt_fmt("instead_%s_ms_per_step", gt_late_what_key(w)), st->instead_ms[w],
                      "ms");
    gt_adv_saving(a, st->lateness_ms, st->per_step);
    a->t_ns = s->steady_start_ns;
}

/* Ranks that do not wait for each other (no collectives seen): the slowest median step, or the
 * most time outside NCCL kernels. */
static void straggler_by_steps(const gt_run *run, gt_advice_list *l)
{
    double meds[256];
    const gt_proc *ranked[256];
    size_t n = 0;
    for (size_t i = 0; i < run->n && n < 256; i++) {
        const gt_proc *p = &run->procs[i];
        if (gt_proc_has_data(p) && gt_adv_has_steps(p) && p->hdr.rank >= 0) {
            ranked[n] = p;
            meds[n++] = p->step_ms_median;
        }
    }
    if (n < 2)
        return;
    const gt_proc *slow = ranked[0];
    for (size_t i = 1; i < n; i++)
        if (ranked[i]->step_ms_median > slow->step_ms_median)
            slow = ranked[i];
    qsort(meds, n, sizeof *meds, cmp_dbl);
    double med = n % 2 ? meds[n / 2] : (meds[n / 2 - 1] + meds[n / 2]) / 2;
    /* In lock-stepped DDP the step times are equal; the straggler shows as the rank that waits
     * least in NCCL. Compare the time each rank spends outside collectives. */
    double own[256], own_med, slow_own = 0;
    const gt_proc *slow_own_p = ranked[0];
    for (size_t i = 0; i < n; i++) {
        own[i] = ranked[i]->step_ms_median - ranked[i]->steady_nccl_ms_per_step;
        if (own[i] >= slow_own) {
            slow_own = own[i];
            slow_own_p = ranked[i];
        }
    }
    double own_sorted[256];
    memcpy(own_sorted, own, n * sizeof *own);
    qsort(own_sorted, n, sizeof *own_sorted, cmp_dbl);
    own_med = n % 2 ? own_sorted[n / 2] : (own_sorted[n / 2 - 1] + own_sorted[n / 2]) / 2;
    int by_step = med > 0 && slow->step_ms_median / med >= STRAGGLER_RATIO;
    int by_own = own_med > 0 && slow_own / own_med >= STRAGGLER_RATIO;
    if (!by_step && !by_own)
        return;
    const gt_proc *s = by_step ? slow : slow_own_p;
    double s_val = by_step ? s->step_ms_median : slow_own, ref = by_step ? med : own_med;
    /* why: the figure where the slow rank exceeds the others' mean the most */
    const char *names[] = {"synchronization", "copies", "data loading / CPU work (GPU idle)",
                           "allocations"};
    double mine[4] = {s->steady_sync_ms_per_step, s->steady_copy_ms_per_step,
                      s->steady_cpu_elsewhere_ms_per_step,
                      (double)s->steady_alloc_ns / 1e6 / s->steady_steps};
    double others[4] = {0};
    for (size_t i = 0; i < n; i++) {
        if (ranked[i] == s)
            continue;
        others[0] += ranked[i]->steady_sync_ms_per_step / (double)(n - 1);
        others[1] += ranked[i]->steady_copy_ms_per_step / (double)(n - 1);
        others[2] += ranked[i]->steady_cpu_elsewhere_ms_per_step / (double)(n - 1);
        others[3] +=
            (double)ranked[i]->steady_alloc_ns / 1e6 / ranked[i]->steady_steps / (double)(n - 1);
    }
    int why = -1;
    double why_ms = 0;
    for (int k = 0; k < 4; k++)
        if (mine[k] - others[k] > why_ms) {
            why_ms = mine[k] - others[k];
            why = k;
        }
    gt_advice *a = gt_adv_add(l, s, "straggler", GT_SEV_WARNING);
    char reason[200] = "";
    if (why >= 0 && why_ms > 0.05 * (s_val - ref))
        snprintf(reason, sizeof reason, " It spends %s more per step than the others in %s.",
                 gt_dur(why_ms), names[why]);
    gt_adv_msg(a,
               "Rank %d holds the others back: %s%s per step against a median of %s (%s "
               "slower); the other ranks wait for it in collectives.%s",
               s->hdr.rank, gt_dur(s_val), by_step ? "" : " outside NCCL", gt_dur(ref),
               gt_pct(100 * (s_val / ref - 1)), reason);
    gt_adv_ev(a, "rank", s->hdr.rank, "");
    gt_adv_ev(a, "step_ms", s->step_ms_median, "ms");
    gt_adv_ev(a, "median_step_ms", med, "ms");
    gt_adv_ev(a, "own_ms_per_step", slow_own, "ms");
    gt_adv_ev(a, "median_own_ms_per_step", own_med, "ms");
    gt_adv_ev(a, "nccl_ms_per_step", s->steady_nccl_ms_per_step, "ms");
    if (why >= 0)
        gt_adv_ev(a, "excess_ms_per_step", why_ms, "ms");
    gt_adv_saving(a, s_val - ref, 1);
    a->t_ns = s->steady_start_ns;
}

void gt_adv_rule_straggler(const gt_run *run, gt_advice_list *l)
{
    const gt_proc *ranked[MAX_RANKS];
    size_t n = ranked_procs(run, ranked);
    if (n < 2)
        return;
    if (run->straggler.found) /* the collectives decide, straggler or not */
        straggler_by_collectives(run, ranked, n, l);
    else
        straggler_by_steps(run, l);
}
