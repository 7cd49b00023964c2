/* advice_ranks.c — the straggler rule: the rank that holds the others back. In lock-stepped data
 * parallelism every rank's step lasts as long as the slowest one's (all wait in the collectives),
 * so the straggler shows in when each rank reaches the collectives (model_ranks.c); ranks that
 * do not wait for each other show it in their step times. Thresholds: docs/advice.md. */
#include "advice.h"
#include "advice_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRAGGLER_RATIO 1.05      /* without collectives: slowest rank's step / median step */
#define STRAGGLER_MIN_LATE_MS 0.5 /* median lateness per step at the collectives ... */
#define STRAGGLER_LATE_SHARE 0.05 /* ... and as a share of the step period */
#define STRAGGLER_LAST_SHARE 0.5  /* last to arrive in at least this share of the steps */
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
    double steps = gt_adv_has_steps(p) ? p->steady_steps : period_ms > 0 ? w / period_ms : 1;
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

/* The rank reaching the collectives last (run->straggler), with its lateness per step. */
static void straggler_by_collectives(const gt_run *run, const gt_proc **ranked, size_t n,
                                     gt_advice_list *l)
{
    const gt_straggler *st = &run->straggler;
    const gt_proc *s = proc_with_pid(ranked, n, st->pid);
    if (!s || st->lateness_ms < STRAGGLER_MIN_LATE_MS ||
        (st->period_ms > 0 && st->lateness_ms < STRAGGLER_LATE_SHARE * st->period_ms) ||
        (double)st->last_in < STRAGGLER_LAST_SHARE * (double)st->rounds)
        return;
    gt_advice *a = gt_adv_add(l, s, "straggler", GT_SEV_WARNING);
    double excess = 0;
    int why = straggler_reason(s, ranked, n, st->period_ms, &excess);
    char reason[200] = "";
    if (why >= 0 && excess > 0.25 * st->lateness_ms)
        snprintf(reason, sizeof reason, " It spends %.2f ms more per step than the others in %s.",
                 excess, why_names[why]);
    gt_adv_msg(a,
               "Rank %d (pid %d) reaches the %s collectives last in %zu of %zu steps, %.2f ms late "
               "per step (median; a step every %.2f ms): the other ranks wait %.2f ms per step for "
               "it.%s Even out the work per rank (input pipeline, uneven shards, extra work on "
               "one rank such as logging or checkpointing).",
               st->rank, st->pid, st->kind == GT_COLL_NCCL ? "NCCL" : "CPU (gloo)", st->last_in,
               st->rounds, st->lateness_ms, st->period_ms, st->others_wait_ms, reason);
    gt_adv_ev(a, "rank", st->rank, "");
    gt_adv_ev(a, "lateness_ms_per_step", st->lateness_ms, "ms");
    gt_adv_ev(a, "last_in_steps", (double)st->last_in, "count");
    gt_adv_ev(a, "steps", (double)st->rounds, "count");
    gt_adv_ev(a, "step_period_ms", st->period_ms, "ms");
    gt_adv_ev(a, "others_wait_ms_per_step", st->others_wait_ms, "ms");
    if (why >= 0)
        gt_adv_ev(a, "excess_ms_per_step", excess, "ms");
    gt_adv_saving(a, st->lateness_ms, 1);
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
        snprintf(reason, sizeof reason, " It spends %.2f ms more per step than the others in %s.",
                 why_ms, names[why]);
    gt_adv_msg(
        a,
        "Rank %d holds the others back: %.2f ms%s per step against a median of %.2f ms (%.0f%% "
        "slower); the other ranks wait for it in collectives.%s",
        s->hdr.rank, s_val, by_step ? "" : " outside NCCL", ref, 100 * (s_val / ref - 1), reason);
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
