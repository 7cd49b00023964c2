/* xrank_stats.c — what the matched collectives do not say alone (xrank.h): how step times spread
 * across ranks and hosts, and whether lateness follows a rank, a host or a GPU.
 *
 * Step times: in lock-stepped data parallelism every rank waits for the slowest at each
 * collective, so step times agree across ranks and the spread is small even with a straggler (its
 * lateness shows at the collectives); a wide spread means the ranks do not run in lock step
 * (different work per rank, or steps found differently). Within one step, the ranks' steps are
 * compared by their index in each rank's own list: hosts' clocks may differ, indexes do not.
 *
 * What lateness follows: over the steps with matched collectives, the share of steps whose
 * straggler is one rank, else one host's ranks, else ranks of one device ordinal on several hosts.
 * One value follows when its share is at least halfway from a half to all of them — 0.5 + 0.5 /
 * (the number of values): a coin flip between two ranks (0.5) is no pattern, three steps in four
 * is; with 1,024 ranks, a rank late in over half the steps is one — never by chance. */
#include "xrank.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double gt_xrank_median(double *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *gt_xrank_follows_name(int follows)
{
    static const char *const names[] = {"unknown", "none", "rank", "host", "gpu"};
    return follows >= 0 && follows <= GT_FOLLOWS_GPU ? names[follows] : "?";
}

static const gt_xrank_proc *rank_proc(const gt_xrank *x, size_t k)
{
    return &x->procs[x->ranks[k]];
}

static double step_ms(const gt_step *s)
{
    return (double)(s->end_ns - s->start_ns) / 1e6;
}

/* A rank's step time: the median of its steps in its steady window (all of them when none lies
 * there). */
static double rank_step_ms(const gt_xrank_proc *p, double *v)
{
    size_t m = 0;
    for (size_t i = 0; i < p->n_steps; i++)
        if (p->steps[i].start_ns >= p->steady_start_ns && p->steps[i].end_ns <= p->steady_end_ns)
            v[m++] = step_ms(&p->steps[i]);
    for (size_t i = 0; !m && i < p->n_steps; i++)
        v[i] = step_ms(&p->steps[i]);
    return gt_xrank_median(v, m ? m : p->n_steps);
}

static void find_hosts(gt_xrank *x)
{
    x->hosts = gt_xcalloc(x->n_ranks + 1, sizeof *x->hosts);
    for (size_t k = 0; k < x->n_ranks; k++) {
        const char *h = rank_proc(x, k)->host;
        size_t i = 0;
        while (i < x->n_hosts && strcmp(x->hosts[i].name, h))
            i++;
        if (i == x->n_hosts)
            x->hosts[x->n_hosts++].name = h;
        x->hosts[i].ranks++;
        x->rank_stat[k].host = i;
    }
}

static size_t max_steps(const gt_xrank *x)
{
    size_t m = 0;
    for (size_t k = 0; k < x->n_ranks; k++)
        m = rank_proc(x, k)->n_steps > m ? rank_proc(x, k)->n_steps : m;
    return m;
}

/* The ranks' step times, their spread, the hosts' (median of their ranks'). */
static void step_times(gt_xrank *x)
{
    size_t n = x->n_ranks, ms = max_steps(x);
    double *v = gt_xcalloc((n > ms ? n : ms) + 1, sizeof *v), *w = gt_xcalloc(n + 1, sizeof *w);
    for (size_t k = 0; k < n; k++) {
        x->rank_stat[k].step_ms = rank_step_ms(rank_proc(x, k), v);
        if (x->rank_stat[k].step_ms < x->rank_stat[x->fastest].step_ms)
            x->fastest = k;
        if (x->rank_stat[k].step_ms > x->rank_stat[x->slowest].step_ms)
            x->slowest = k;
        w[k] = x->rank_stat[k].step_ms;
    }
    x->step_ms_min = n ? x->rank_stat[x->fastest].step_ms : 0;
    x->step_ms_max = n ? x->rank_stat[x->slowest].step_ms : 0;
    x->step_ms_median = gt_xrank_median(w, n);
    for (size_t h = 0; h < x->n_hosts; h++) {
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if (x->rank_stat[k].host == h)
                w[m++] = x->rank_stat[k].step_ms;
        x->hosts[h].step_ms = gt_xrank_median(w, m);
    }
    free(w);
    /* within a step index: max - min over the ranks that have it */
    size_t m = 0;
    for (size_t i = 0; i < ms; i++) {
        double lo = 0, hi = 0;
        size_t have = 0;
        for (size_t k = 0; k < n; k++) {
            const gt_xrank_proc *p = rank_proc(x, k);
            if (i >= p->n_steps)
                continue;
            double d = step_ms(&p->steps[i]);
            lo = have && lo < d ? lo : d;
            hi = have && hi > d ? hi : d;
            have++;
        }
        if (have < 2)
            continue;
        if (hi - lo > x->step_spread_max_ms) {
            x->step_spread_max_ms = hi - lo;
            x->step_spread_max_at = i;
        }
        v[m++] = hi - lo;
    }
    x->step_spread_median_ms = gt_xrank_median(v, m);
    free(v);
}

/* The most frequent value among the steps' stragglers' keys, and how often. */
static size_t mode_of(const size_t *key, size_t n, size_t n_values, size_t *count)
{
    size_t *c = gt_xcalloc(n_values + 1, sizeof *c), best = 0;
    for (size_t i = 0; i < n; i++)
        if (key[i] < n_values && ++c[key[i]] > c[best])
            best = key[i];
    *count = c[best];
    free(c);
    return best;
}

static int follows(size_t count, size_t steps, size_t values)
{
    return values >= 2 && (double)count >= (0.5 + 0.5 / (double)values) * (double)steps;
}

static size_t distinct(const size_t *key, size_t n, size_t n_values)
{
    uint8_t *seen = gt_xcalloc(n_values + 1, 1);
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (key[i] < n_values && !seen[key[i]]++)
            d++;
    free(seen);
    return d;
}

static void find_follows(gt_xrank *x)
{
    size_t n = x->n_steps, count, gpus = 0;
    x->follows = n >= GT_XRANK_MIN_STEPS ? GT_FOLLOWS_NONE : GT_FOLLOWS_UNKNOWN;
    size_t *rank = gt_xcalloc(n + 1, sizeof *rank), *host = gt_xcalloc(n + 1, sizeof *host);
    size_t *gpu = gt_xcalloc(n + 1, sizeof *gpu);
    for (size_t k = 0; k < x->n_ranks; k++)
        gpus = rank_proc(x, k)->gpu >= 0 && (size_t)rank_proc(x, k)->gpu >= gpus
                   ? (size_t)rank_proc(x, k)->gpu + 1
                   : gpus;
    for (size_t i = 0; i < n; i++) {
        rank[i] = x->steps[i].straggler;
        host[i] = x->rank_stat[rank[i]].host;
        x->hosts[host[i]].last_in++;
        int g = rank_proc(x, rank[i])->gpu;
        gpu[i] = g >= 0 ? (size_t)g : SIZE_MAX;
    }
    x->straggler_ranks = distinct(rank, n, x->n_ranks);
    size_t r = mode_of(rank, n, x->n_ranks, &count);
    if (x->follows == GT_FOLLOWS_NONE && follows(count, n, x->n_ranks)) {
        x->follows = GT_FOLLOWS_RANK;
        x->follows_index = r;
        x->follows_steps = count;
    }
    size_t h = mode_of(host, n, x->n_hosts, &count);
    if (x->follows == GT_FOLLOWS_NONE && follows(count, n, x->n_hosts)) {
        x->follows = GT_FOLLOWS_HOST;
        x->follows_index = h;
        x->follows_steps = count;
    }
    size_t g = mode_of(gpu, n, gpus, &count);
    if (x->follows == GT_FOLLOWS_NONE && x->n_hosts >= 2 && follows(count, n, gpus)) {
        x->follows = GT_FOLLOWS_GPU;
        x->follows_index = g;
        x->follows_steps = count;
    }
    free(rank);
    free(host);
    free(gpu);
}

void gt_xrank_stats(gt_xrank *x)
{
    find_hosts(x);
    step_times(x);
    find_follows(x);
}
