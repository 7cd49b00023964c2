/* model_ranks.c — what needs every process of a run (issue 21 item 3): DataLoader workers (forked
 * children of a process running its program), and the collectives of all ranks matched round by
 * round (a round is a step's collectives): which rank reaches them last and by how much, and how
 * long the other ranks' NCCL kernels spin waiting for it. Step times cannot show a straggler in
 * lock-stepped data parallelism (every rank waits for the slowest, so all steps are equal); the
 * arrival at each collective can. Ranks on one host share CLOCK_REALTIME. */
#include "model_core.h"
#include "model_idle.h"
#include "model_sample.h"

#define MAX_RANKS 1024
#define MIN_ROUNDS_STEADY 3 /* fewer matched rounds in the steady window: use them all */

typedef struct rank_side {
    gt_proc *p;
    const gt_collective **c; /* this rank's collectives of the chosen kind, by end */
    size_t n;
    size_t *round; /* index of each round's first collective, then n */
    size_t n_rounds;
    double *late;   /* lateness (ms) per counted round */
    double *wait;   /* wait for the last rank (ms) per counted round */
    size_t last_in; /* counted rounds it was last in */
} rank_side;

static int is_worker_of(const gt_proc *w, const gt_proc *p)
{
    return w != p && w->open_status == GT_OPEN_OK && (w->hdr.flags & GT_HDR_FORKED_CHILD) &&
           p->hdr.pid > 0 && w->hdr.ppid == p->hdr.pid && w->exe && p->exe &&
           !strcmp(w->exe, p->exe) && !strcmp(w->hdr.host, p->hdr.host);
}

/* DataLoader workers are forked children of the training process that keep its program (no
 * exec); a child that exec'd another program (a compiler, a rank) does not count. */
static void find_workers(gt_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        gt_proc *p = &run->procs[i];
        p->dataloader_workers = 0;
        if (p->open_status != GT_OPEN_OK)
            continue;
        for (size_t j = 0; j < run->n; j++)
            p->dataloader_workers += is_worker_of(&run->procs[j], p);
        md_idle_assign(p);
    }
}

/* Rounds: collectives end in bursts (one per gradient bucket) separated by the rest of the step;
 * a pause longer than half the mean spacing starts a new round. */
static void make_rounds(rank_side *r)
{
    r->round = gt_xrealloc(NULL, (r->n + 1) * sizeof *r->round);
    r->n_rounds = 0;
    double mean =
        r->n > 1 ? (double)(r->c[r->n - 1]->done_ns - r->c[0]->done_ns) / (double)(r->n - 1) : 0;
    for (size_t i = 0; i < r->n; i++)
        if (i == 0 || (double)(r->c[i]->done_ns - r->c[i - 1]->done_ns) > mean / 2)
            r->round[r->n_rounds++] = i;
    r->round[r->n_rounds] = r->n;
}

static size_t side_collectives(rank_side *r, int kind)
{
    r->c = gt_xrealloc(r->c, (r->p->n_collectives + 1) * sizeof *r->c); /* again per kind */
    r->n = 0;
    for (size_t i = 0; i < r->p->n_collectives; i++)
        if (r->p->collectives[i].kind == kind)
            r->c[r->n++] = &r->p->collectives[i];
    return r->n;
}

/* One process per rank (the one with most collectives), in rank order. */
static size_t pick_ranks(gt_run *run, rank_side *sides)
{
    size_t n = 0;
    for (size_t i = 0; i < run->n; i++) {
        gt_proc *p = &run->procs[i];
        if (p->open_status != GT_OPEN_OK || p->hdr.rank < 0 || p->n_collectives < 2)
            continue;
        size_t k = 0;
        while (k < n && sides[k].p->hdr.rank != p->hdr.rank)
            k++;
        if (k == n && n < MAX_RANKS)
            sides[n++].p = p;
        else if (k < n && p->n_collectives > sides[k].p->n_collectives)
            sides[k].p = p;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort by rank */
        for (size_t j = i; j > 0 && sides[j].p->hdr.rank < sides[j - 1].p->hdr.rank; j--) {
            gt_proc *t = sides[j].p;
            sides[j].p = sides[j - 1].p;
            sides[j - 1].p = t;
        }
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t round_first_done(const rank_side *r, size_t m)
{
    return r->c[r->round[m]]->done_ns;
}

/* The round of side r that ends nearest to t, or SIZE_MAX when none is within tol. */
static size_t match_round(const rank_side *r, uint64_t t, uint64_t tol, size_t *hint)
{
    size_t m = *hint;
    while (m + 1 < r->n_rounds && round_first_done(r, m + 1) <= t)
        m++;
    *hint = m;
    size_t best = SIZE_MAX;
    uint64_t best_d = tol + 1;
    for (size_t k = m; k < r->n_rounds && k <= m + 1; k++) {
        uint64_t f = round_first_done(r, k), d = f > t ? f - t : t - f;
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

typedef struct round_ctx {
    rank_side *sides;
    size_t n;
    size_t *at;       /* each side's round in this match */
    int counted;      /* the round is in the figures (steady window) */
    size_t n_counted; /* rounds scored so far */
} round_ctx;

/* Arrival of side k at the round's c-th collective. */
static uint64_t arrival(const round_ctx *x, size_t k, size_t c)
{
    return x->sides[k].c[x->sides[k].round[x->at[k]] + c]->arrive_ns;
}

/* NCCL kernels of a rank that arrived early spin until the last rank arrives: GPU time that does
 * no work, counted as idle waiting in a collective. */
static void add_nccl_wait(const round_ctx *x, size_t k, size_t c, uint64_t last)
{
    const gt_collective *col = x->sides[k].c[x->sides[k].round[x->at[k]] + c];
    if (col->kind != GT_COLL_NCCL || last <= col->arrive_ns)
        return;
    uint64_t w = last - col->arrive_ns, dur = col->done_ns - col->arrive_ns;
    if (w > dur)
        w = dur;
    gt_proc *p = x->sides[k].p;
    p->nccl_wait_ns += w;
    if (col->arrive_ns >= p->steady_start_ns && col->arrive_ns < p->steady_end_ns &&
        md_in_steady_gpu(p, col->arrive_ns))
        p->steady_nccl_wait_ns += w;
}

static size_t round_size(const round_ctx *x)
{
    size_t cnt = SIZE_MAX;
    for (size_t k = 0; k < x->n; k++) {
        size_t sz = x->sides[k].round[x->at[k] + 1] - x->sides[k].round[x->at[k]];
        cnt = sz < cnt ? sz : cnt;
    }
    return cnt;
}

/* The median of sorted v (n >= 2) without one element equal to a (which one does not matter:
 * the rest is the same multiset); O(log n), so that thousands of ranks stay cheap. */
static double median_without(const double *v, size_t n, double a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first element >= a */
        size_t mid = (lo + hi) / 2;
        if (v[mid] < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t pos = lo < n ? lo : n - 1, m = n - 1; /* the others: v without v[pos] */
#define OTHER(j) v[(j) < pos ? (j) : (j) + 1]
    double med = m % 2 ? OTHER(m / 2) : (OTHER(m / 2 - 1) + OTHER(m / 2)) / 2;
#undef OTHER
    return med;
}

/* One matched round: each side's lateness (its latest arrival after the median of the others'
 * at the same collective, by order in the round) and wait (for the last arrival). */
static void score_round(round_ctx *x, double *late, double *wait, double *all)
{
    size_t cnt = round_size(x);
    for (size_t k = 0; k < x->n; k++)
        late[k] = wait[k] = -1e300;
    for (size_t c = 0; c < cnt; c++) {
        uint64_t last = 0;
        for (size_t k = 0; k < x->n; k++)
            last = arrival(x, k, c) > last ? arrival(x, k, c) : last;
        for (size_t k = 0; k < x->n; k++)
            all[k] = (double)arrival(x, k, c);
        qsort(all, x->n, sizeof *all, cmp_double);
        for (size_t k = 0; k < x->n; k++) {
            double a = (double)arrival(x, k, c);
            double l = (a - median_without(all, x->n, a)) / 1e6;
            double w = (double)(last - arrival(x, k, c)) / 1e6;
            late[k] = l > late[k] ? l : late[k];
            wait[k] = w > wait[k] ? w : wait[k];
            add_nccl_wait(x, k, c, last);
        }
    }
    if (!x->counted || !cnt)
        return;
    size_t last_k = 0;
    for (size_t k = 0; k < x->n; k++) {
        last_k = late[k] > late[last_k] ? k : last_k;
        x->sides[k].late[x->n_counted] = late[k];
        x->sides[k].wait[x->n_counted] = wait[k];
    }
    x->sides[last_k].last_in++;
    x->n_counted++;
}

/* Match the reference's (rank order first) rounds to every other rank's: the rounds that end
 * nearest in time, within a quarter of the reference's round period. Returns the matched
 * reference rounds; at[j * n + k] is side k's round for the j-th match. */
static size_t match_rounds(rank_side *sides, size_t n, size_t *at, int *steady)
{
    rank_side *ref = &sides[0];
    uint64_t span = round_first_done(ref, ref->n_rounds - 1) - round_first_done(ref, 0);
    uint64_t tol = span / (ref->n_rounds - 1) / 4;
    size_t hint[MAX_RANKS] = {0}, matched = 0;
    for (size_t j = 0; j < ref->n_rounds; j++) {
        uint64_t t = round_first_done(ref, j);
        size_t k = 1;
        at[matched * n] = j;
        for (; k < n; k++)
            if ((at[matched * n + k] = match_round(&sides[k], t, tol, &hint[k])) == SIZE_MAX)
                break;
        if (k < n)
            continue;
        steady[matched++] = t >= ref->p->steady_start_ns && t <= ref->p->steady_end_ns;
    }
    return matched;
}

static void add_nccl_wait_to_causes(rank_side *sides, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        gt_proc *p = sides[k].p;
        p->idle_cause_ns[GT_IDLE_COLLECTIVE] += p->nccl_wait_ns;
        p->steady_idle_cause_ns[GT_IDLE_COLLECTIVE] += md_steady_scaled(p, p->steady_nccl_wait_ns);
    }
}

/* The straggler: the rank last in most counted rounds; its median lateness, the others' wait. */
static void name_straggler(gt_run *run, rank_side *sides, size_t n, size_t counted, int kind,
                           double period_ms)
{
    size_t s = 0;
    for (size_t k = 1; k < n; k++)
        if (sides[k].last_in > sides[s].last_in)
            s = k;
    gt_straggler *st = &run->straggler;
    st->found = 1;
    st->rank = sides[s].p->hdr.rank;
    st->pid = sides[s].p->hdr.pid;
    st->kind = kind;
    st->rounds = counted;
    st->last_in = sides[s].last_in;
    st->period_ms = period_ms;
    st->lateness_ms = median_of(sides[s].late, counted);
    double wait = 0;
    for (size_t k = 0; k < n; k++)
        if (k != s)
            wait += median_of(sides[k].wait, counted) / (double)(n - 1);
    st->others_wait_ms = wait;
}

static double round_period_ms(const rank_side *ref, const size_t *at, size_t matched, size_t n)
{
    if (matched < 2)
        return 0;
    double *d = gt_xrealloc(NULL, matched * sizeof *d);
    for (size_t j = 1; j < matched; j++)
        d[j - 1] =
            (double)(round_first_done(ref, at[j * n]) - round_first_done(ref, at[(j - 1) * n])) /
            1e6;
    double m = median_of(d, matched - 1);
    free(d);
    return m;
}

static void analyse_ranks(gt_run *run, rank_side *sides, size_t n, int kind)
{
    for (size_t k = 0; k < n; k++)
        make_rounds(&sides[k]);
    if (sides[0].n_rounds < 2)
        return;
    size_t *at = gt_xrealloc(NULL, sides[0].n_rounds * n * sizeof *at);
    int *steady = gt_xrealloc(NULL, sides[0].n_rounds * sizeof *steady);
    size_t matched = match_rounds(sides, n, at, steady), n_steady = 0;
    for (size_t j = 0; j < matched; j++)
        n_steady += steady[j] != 0;
    int use_all = n_steady < MIN_ROUNDS_STEADY;
    for (size_t k = 0; k < n; k++) {
        sides[k].late = gt_xrealloc(NULL, (matched + 1) * sizeof *sides[k].late);
        sides[k].wait = gt_xrealloc(NULL, (matched + 1) * sizeof *sides[k].wait);
    }
    double *late = gt_xrealloc(NULL, 3 * n * sizeof *late);
    round_ctx x = {sides, n, NULL, 0, 0};
    for (size_t j = 0; j < matched; j++) {
        x.at = &at[j * n];
        x.counted = use_all || steady[j];
        score_round(&x, late, late + n, late + 2 * n);
    }
    add_nccl_wait_to_causes(sides, n);
    if (x.n_counted)
        name_straggler(run, sides, n, x.n_counted, kind,
                       round_period_ms(&sides[0], at, matched, n));
    free(late);
    free(at);
    free(steady);
}

static void free_sides(rank_side *sides, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free(sides[k].c);
        free(sides[k].round);
        free(sides[k].late);
        free(sides[k].wait);
    }
    free(sides);
}

/* NCCL when every rank ran NCCL kernels, else CPU collectives when every rank had some. */
static int choose_kind(rank_side *sides, size_t n)
{
    static const int kinds[] = {GT_COLL_NCCL, GT_COLL_CPU};
    for (int i = 0; i < 2; i++) {
        size_t k = 0;
        while (k < n && side_collectives(&sides[k], kinds[i]) >= 2)
            k++;
        if (k == n)
            return kinds[i];
    }
    return -1;
}

static void cross_rank(gt_run *run)
{
    rank_side *sides = gt_xcalloc(MAX_RANKS, sizeof *sides);
    size_t n = pick_ranks(run, sides);
    for (size_t k = 0; k < n; k++) {
        sides[k].p->nccl_wait_ns = 0;
        sides[k].p->steady_nccl_wait_ns = 0;
    }
    int kind = n >= 2 ? choose_kind(sides, n) : -1;
    if (kind >= 0)
        analyse_ranks(run, sides, n, kind);
    free_sides(sides, n);
}

void gt_run_cross_process(gt_run *run)
{
    memset(&run->straggler, 0, sizeof run->straggler);
    find_workers(run);
    cross_rank(run);
}
