/* xrank.c — collectives matched across the ranks' summaries, and the straggler (xrank.h). The
 * rules are model_ranks.c's, so that summaries and the merged traces give one answer (the corpus
 * test tests/corpus/test_summaries.py compares them): one process per rank, NCCL when every rank
 * ran NCCL kernels else CPU collectives, the first rank the reference, its steady window the
 * counted one (all matches when fewer than 3 lie in it), its steps the slots.
 *
 * Memory: the per-step figures are kept per matched collective and per step, never per rank and
 * step (1,024 ranks by 10,000 collectives would be 80 MB of doubles); the waits, which need every
 * rank, are summed one step at a time. */
#include "xrank.h"

#include <stdlib.h>
#include <string.h>

#include "coll_match.h"
#include "model_core.h"
#include "util.h"

#define MIN_COUNTED 3 /* as model_ranks.c: fewer steady matches, count them all */

static const gt_collective *xcoll(const gt_xrank_proc *p, size_t i)
{
    return gt_coll_pick(p->colls, p->idx, i);
}

static gt_xrank_proc *rank_proc(const gt_xrank *x, size_t k)
{
    return &x->procs[x->ranks[k]];
}

static int by_rank(const void *a, const void *b, void *ctx)
{
    const gt_xrank *x = ctx;
    int ra = x->procs[*(const size_t *)a].rank, rb = x->procs[*(const size_t *)b].rank;
    return ra < rb ? -1 : ra > rb;
}

/* One process per rank: the one with most collectives (DataLoader workers carry the rank too). */
static void pick_ranks(gt_xrank *x)
{
    x->ranks = gt_xcalloc(x->n_procs + 1, sizeof *x->ranks);
    x->n_ranks = 0;
    for (size_t i = 0; i < x->n_procs; i++) {
        const gt_xrank_proc *p = &x->procs[i];
        if (p->rank < 0 || p->n_colls < 2)
            continue;
        x->ranks[x->n_ranks++] = i;
    }
    qsort_r(x->ranks, x->n_ranks, sizeof *x->ranks, by_rank, x);
    size_t m = 0;
    for (size_t k = 0; k < x->n_ranks; k++) {
        if (m && rank_proc(x, k)->rank == x->procs[x->ranks[m - 1]].rank) {
            if (rank_proc(x, k)->n_colls > x->procs[x->ranks[m - 1]].n_colls)
                x->ranks[m - 1] = x->ranks[k];
            continue;
        }
        x->ranks[m++] = x->ranks[k];
    }
    x->n_ranks = m;
}

static size_t take_kind(gt_xrank_proc *p, int kind)
{
    p->idx = gt_xrealloc(p->idx, (p->n_colls + 1) * sizeof *p->idx);
    p->n_idx = 0;
    for (size_t i = 0; i < p->n_colls; i++)
        if (p->colls[i].kind == kind)
            p->idx[p->n_idx++] = i;
    p->at = 0;
    return p->n_idx;
}

/* NCCL when every rank ran NCCL kernels, else CPU collectives when every rank had some. */
static int choose_kind(gt_xrank *x)
{
    static const int kinds[] = {GT_COLL_NCCL, GT_COLL_CPU};
    for (int i = 0; i < 2; i++) {
        size_t k = 0;
        while (k < x->n_ranks && take_kind(rank_proc(x, k), kinds[i]) >= 2)
            k++;
        if (k == x->n_ranks)
            return kinds[i];
    }
    return -1;
}

static int in_steady(const gt_xrank_proc *p, uint64_t t)
{
    return t >= p->steady_start_ns && t <= p->steady_end_ns;
}

/* The reference's j-th collective on the other ranks, as model_ranks.c: those whose copy ends
 * with the reference's waited for the same last arrival (a broadcast's tree makes a rank wait for
 * its parent only); at[k] SIZE_MAX for a rank that does not. Returns the ranks matched, the
 * reference included. */
static size_t match_ranks(gt_xrank *x, size_t j, size_t *at, uint64_t spread)
{
    const gt_xrank_proc *ref = rank_proc(x, 0);
    uint64_t t = xcoll(ref, j)->done_ns,
             tol = gt_coll_tolerance(ref->colls, ref->idx, ref->n_idx, j, spread);
    size_t matched = 1;
    at[0] = j;
    for (size_t k = 1; k < x->n_ranks; k++) {
        gt_xrank_proc *p = rank_proc(x, k);
        at[k] = gt_coll_match_one(p->colls, p->idx, p->n_idx, &p->at, t, tol, spread);
        matched += at[k] != SIZE_MAX;
    }
    return matched;
}

/* Matched on every rank with the neighbours' distance alone, counted when in the steady window;
 * *spread: twice the median distance of those matches' ends from the reference's. */
static size_t steady_matches(gt_xrank *x, uint64_t *spread)
{
    const gt_xrank_proc *ref = rank_proc(x, 0);
    size_t count = 0, m = 0;
    double *d = gt_xcalloc(ref->n_idx * x->n_ranks + 1, sizeof *d);
    for (size_t j = 0; j < ref->n_idx; j++) {
        uint64_t t = xcoll(ref, j)->done_ns,
                 tol = gt_coll_tolerance(ref->colls, ref->idx, ref->n_idx, j, 0);
        size_t k = 1, m0 = m;
        for (; k < x->n_ranks; k++) { /* stops at the first rank that lacks it, as model_ranks.c */
            gt_xrank_proc *p = rank_proc(x, k);
            size_t i = gt_coll_match_one(p->colls, p->idx, p->n_idx, &p->at, t, tol, 0);
            if (i == SIZE_MAX)
                break;
            uint64_t e = xcoll(p, i)->done_ns;
            d[m++] = (double)(e > t ? e - t : t - e);
        }
        m = k == x->n_ranks ? m : m0;
        count += k == x->n_ranks && in_steady(ref, t);
    }
    *spread = (uint64_t)(2 * gt_xrank_median(d, m));
    free(d);
    return count;
}

static void rewind_all(gt_xrank *x)
{
    for (size_t k = 0; k < x->n_ranks; k++)
        rank_proc(x, k)->at = 0;
}

/* The slot of the reference's j-th collective: the first step ending after t, or j. */
static size_t slot_of(const gt_xrank_proc *p, uint64_t t, size_t j)
{
    if (p->n_steps < 2)
        return j;
    size_t i = MD_FIRST_ENDING_AFTER(p->steps, p->n_steps, t);
    return i < p->n_steps ? i : p->n_steps - 1;
}

typedef struct score_ctx {
    size_t *at;
    double *others;   /* n_ranks: the other ranks' arrivals */
    double *wait;     /* n_ranks: this slot's largest wait per rank */
    double *wait_sum; /* n_ranks: over the counted slots */
    size_t slot;      /* the slot wait holds, SIZE_MAX none */
} score_ctx;

static void flush_waits(gt_xrank *x, score_ctx *c)
{
    if (c->slot == SIZE_MAX)
        return;
    for (size_t k = 0; k < x->n_ranks; k++) {
        c->wait_sum[k] += c->wait[k];
        c->wait[k] = 0;
    }
}

/* One collective matched on the ranks that waited for each other (at[k] SIZE_MAX: not rank k):
 * its last rank and lateness, each rank's wait. */
static void score(gt_xrank *x, score_ctx *c, size_t j, size_t slot)
{
    uint64_t last_t = 0, first_t = UINT64_MAX;
    size_t last = 0, m = 0;
    for (size_t k = 0; k < x->n_ranks; k++) {
        if (c->at[k] == SIZE_MAX)
            continue;
        uint64_t a = xcoll(rank_proc(x, k), c->at[k])->arrive_ns;
        if (a > last_t) {
            last_t = a;
            last = k;
        }
        first_t = a < first_t ? a : first_t;
    }
    for (size_t k = 0; k < x->n_ranks; k++)
        if (k != last && c->at[k] != SIZE_MAX)
            c->others[m++] = (double)xcoll(rank_proc(x, k), c->at[k])->arrive_ns;
    if (slot != c->slot) {
        flush_waits(x, c);
        c->slot = slot;
    }
    for (size_t k = 0; k < x->n_ranks; k++) {
        if (c->at[k] == SIZE_MAX)
            continue;
        double w = (double)(last_t - xcoll(rank_proc(x, k), c->at[k])->arrive_ns) / 1e6;
        c->wait[k] = w > c->wait[k] ? w : c->wait[k];
    }
    gt_grow((void **)&x->colls, &x->cap_colls, x->n_colls, sizeof *x->colls);
    x->colls[x->n_colls++] =
        (gt_xrank_coll){j, slot, last, ((double)last_t - gt_xrank_median(c->others, m)) / 1e6,
                        (double)(last_t - first_t) / 1e6};
    x->rank_stat[last].last_at++;
}

static void match_and_score(gt_xrank *x, double *wait_sum)
{
    const gt_xrank_proc *ref = rank_proc(x, 0);
    size_t n = x->n_ranks;
    score_ctx c = {gt_xcalloc(n, sizeof *c.at), gt_xcalloc(n, sizeof *c.others),
                   gt_xcalloc(n, sizeof *c.wait), wait_sum, SIZE_MAX};
    uint64_t spread;
    x->use_all = steady_matches(x, &spread) < MIN_COUNTED;
    rewind_all(x);
    x->ref_collectives = ref->n_idx;
    for (size_t j = 0; j < ref->n_idx; j++) {
        uint64_t t = xcoll(ref, j)->done_ns;
        if (match_ranks(x, j, c.at, spread) < 2) {
            x->unmatched++;
            continue;
        }
        if (x->use_all || in_steady(ref, t))
            score(x, &c, j, slot_of(ref, t, j));
    }
    flush_waits(x, &c);
    free(c.at);
    free(c.others);
    free(c.wait);
}

/* Per step (slot): each rank's lateness is its worst collective there; the step's straggler the
 * rank latest in it. late_sum[k]: rank k's lateness summed over the steps. */
static void steps_of(gt_xrank *x, double *late_sum)
{
    double *cur = gt_xcalloc(x->n_ranks, sizeof *cur);
    size_t *touched = gt_xcalloc(x->n_colls + 1, sizeof *touched);
    for (size_t i = 0; i < x->n_colls;) {
        size_t e = i, n_touched = 0;
        while (e < x->n_colls && x->colls[e].slot == x->colls[i].slot)
            e++;
        for (size_t c = i; c < e; c++) {
            const gt_xrank_coll *m = &x->colls[c];
            if (cur[m->last] == 0)
                touched[n_touched++] = m->last;
            cur[m->last] = m->late_ms > cur[m->last] ? m->late_ms : cur[m->last];
        }
        gt_xrank_step st = {x->colls[i].slot, 0, cur[0], e - i};
        for (size_t t = 0; t < n_touched; t++) {
            size_t k = touched[t];
            if (cur[k] > st.late_ms || (cur[k] == st.late_ms && k < st.straggler))
                st = (gt_xrank_step){st.slot, k, cur[k], st.collectives};
            late_sum[k] += cur[k];
        }
        for (size_t t = 0; t < n_touched; t++)
            cur[touched[t]] = 0;
        gt_grow((void **)&x->steps, &x->cap_steps, x->n_steps, sizeof *x->steps);
        x->steps[x->n_steps++] = st;
        x->rank_stat[st.straggler].last_in++;
        i = e;
    }
    free(cur);
    free(touched);
}

/* The straggler: the rank with most lateness; its lateness per step is the median over the steps
 * of its worst collective in each (0 in the steps it was not last in), as model_ranks.c. */
static void name_straggler(gt_xrank *x, const double *late_sum, const double *wait_sum)
{
    size_t s = 0, n = x->n_ranks;
    for (size_t k = 1; k < n; k++)
        if (late_sum[k] > late_sum[s])
            s = k;
    const gt_xrank_proc *ref = rank_proc(x, 0), *sp = rank_proc(x, s);
    gt_straggler *st = &x->straggler;
    *st = (gt_straggler){.found = 1, .rank = sp->rank, .pid = sp->pid, .kind = x->kind};
    st->collectives = x->n_colls;
    st->last_at = x->rank_stat[s].last_at;
    st->per_step = x->per_step;
    st->rounds = x->n_steps;
    st->last_in = x->rank_stat[s].last_in;
    double *v = gt_xcalloc(x->n_steps + 1, sizeof *v),
           per = x->per_step && x->n_steps ? (double)x->n_steps : 1;
    for (size_t i = 0, c = 0; i < x->n_steps; i++) {
        for (; c < x->n_colls && x->colls[c].slot == x->steps[i].slot; c++)
            if (x->colls[c].last == s && x->colls[c].late_ms > v[i])
                v[i] = x->colls[c].late_ms;
    }
    st->lateness_ms = x->per_step ? gt_xrank_median(v, x->n_steps) : late_sum[s];
    free(v);
    st->period_ms = x->per_step ? ref->step_ms_median
                                : (double)(ref->steady_end_ns - ref->steady_start_ns) / 1e6;
    double wait = 0;
    for (size_t k = 0; k < n; k++)
        if (k != s)
            wait += wait_sum[k] / (double)(n - 1);
    st->others_wait_ms = wait / per;
    for (size_t k = 0; k < n; k++) {
        x->rank_stat[k].late_ms = late_sum[k] / per;
        x->rank_stat[k].wait_ms = wait_sum[k] / per;
    }
}

void gt_xrank_analyse(gt_xrank *x)
{
    pick_ranks(x);
    x->rank_stat = gt_xcalloc(x->n_ranks + 1, sizeof *x->rank_stat);
    x->kind = x->n_ranks >= 2 ? choose_kind(x) : -1;
    if (x->kind >= 0) {
        x->per_step = rank_proc(x, 0)->n_steps >= 2;
        double *late_sum = gt_xcalloc(2 * x->n_ranks, sizeof *late_sum);
        match_and_score(x, late_sum + x->n_ranks);
        steps_of(x, late_sum);
        if (x->n_colls)
            name_straggler(x, late_sum, late_sum + x->n_ranks);
        free(late_sum);
    }
    gt_xrank_stats(x);
}

void gt_xrank_free(gt_xrank *x)
{
    for (size_t i = 0; i < x->n_procs; i++)
        gt_xrank_proc_free(&x->procs[i]);
    free(x->procs);
    free(x->ranks);
    free(x->rank_stat);
    free(x->hosts);
    free(x->colls);
    free(x->steps);
    memset(x, 0, sizeof *x);
}
