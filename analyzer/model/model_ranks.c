/* model_ranks.c — what needs every process of a run (issue 21 item 3, issue 30): DataLoader
 * workers (forked children of a process running its program), and the collectives of all ranks
 * matched one by one: at each, which rank arrives last, by how much, what it did instead, and how
 * long the others wait for it (their NCCL kernels spin meanwhile).
 *
 * Why per collective. Step times cannot show a straggler in lock-stepped data parallelism (every
 * rank waits for the slowest, so all steps are equal); the arrival at each collective can.
 *
 * Lateness is what the others waited for. A rank arrives at a collective when it can take part:
 * its program has called it and its data is ready (NCCL: its kernel starts; gloo: the collective
 * thread's wait for the data on the host returns, or, for a rank that only receives, such as a
 * broadcast's other ranks, the program's handover: model.h gt_collective). Data that waits in
 * the rank's GPU queue (its own work, or on a shared GPU other ranks' kernels ahead of it) is
 * ready later: that is its lateness too. The ranks whose copy of a collective ends together
 * waited for each other: the last of them is late by its arrival after the median of theirs.
 * Not every collective makes every rank wait (gloo's broadcast runs down a tree: a rank waits
 * for its parent only, the others of the group end early), so a collective is scored over the
 * ranks that end it with the reference rank, at least two. DDP with batch norm broadcasts its
 * buffers at each forward: a rank delayed before the forward shows there — the root waits for
 * it — and only a little at the gradients' all-reduce (the ranks leave the broadcast together).
 *
 * Matching. The collectives of a process group are the same, in the same order, on every rank,
 * and each ends on the ranks that waited for each other at about the same moment (the last
 * arrival plus the transfer): so each rank's collective is matched to the reference rank's that
 * ends nearest, within half the distance to the reference's neighbours and at least the spread
 * of one collective's ends over the ranks (two in flight together — gloo's threads — end in
 * either order within it: taken in order) — whatever the number of buckets, the step length, or
 * a collective one rank's trace lacks. Ranks on one host share CLOCK_REALTIME.
 *
 * What the last rank did instead: from the last matched collective that ended before any rank
 * arrived at this one (every rank left it together) to its arrival, its time split by what it was
 * doing (GPU busy, CUDA calls, no call with a batch after it or DataLoader workers, no call,
 * compilation, other collectives: model.h's gt_late_what), less the median of the other ranks'
 * split of their own, shorter, time. The split goes by thread role (breakdown): until the
 * program's threads handed the data over, their time is the rank's own work even while its
 * collective thread moved earlier collectives' data; after it, waiting on the collective thread
 * busy with other collectives is 'other collectives'. A rank sleeping and one computing on the
 * CPU look alike (no call either way) without CPU samples. */
#include "coll_match.h"
#include "model_core.h"
#include "model_idle.h"
#include "model_sample.h"

#define MAX_RANKS 1024
#define MIN_COUNTED 3 /* fewer matched collectives in the steady window: count them all */

/* Per step, a rank's figures are those of its worst collective in the step: one delay shows at
 * several collectives of a step (gloo's two threads reduce two buckets at once, each waiting for
 * the late rank; a late start delays its next bucket too), and summing them would count it more
 * than once. Without steps each collective is its own slot. */
typedef struct rank_side {
    gt_proc *p;
    size_t *c; /* this rank's collectives of the chosen kind (indexes, by end) */
    size_t n;
    size_t at;                        /* matching: the next candidate */
    size_t last_at;                   /* counted collectives it was last at */
    double *late;                     /* per slot: its largest lateness where it was last */
    double *wait;                     /* per slot: its largest wait for a later rank */
    double (*instead)[GT_LATE_COUNT]; /* per slot: what it did instead, at its largest lateness */
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

/* The first collective of p (in order of their end) that ends after t. */
static size_t first_done_after(const gt_proc *p, uint64_t t)
{
    size_t lo = 0, hi = p->n_collectives;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->collectives[mid].done_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static gt_collective *coll(const rank_side *r, size_t i)
{
    return &r->p->collectives[r->c[i]];
}

static size_t side_collectives(rank_side *r, int kind)
{
    r->c = gt_xrealloc(r->c, (r->p->n_collectives + 1) * sizeof *r->c); /* again per kind */
    r->n = 0;
    for (size_t i = 0; i < r->p->n_collectives; i++)
        if (r->p->collectives[i].kind == kind)
            r->c[r->n++] = i;
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

static uint64_t absdiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* Side r's collective that ends nearest to t within tol (coll_match.c: the rule summaries are
 * matched by too); SIZE_MAX when none. */
static size_t match_one(rank_side *r, uint64_t t, uint64_t tol, uint64_t spread)
{
    return gt_coll_match_one(r->p->collectives, r->c, r->n, &r->at, t, tol, spread);
}

/* The tolerance for the reference's j-th collective. */
static uint64_t tolerance(const rank_side *ref, size_t j, uint64_t spread)
{
    return gt_coll_tolerance(ref->p->collectives, ref->c, ref->n, j, spread);
}

/* The phase kinds that count as compilation for what a rank did instead. */
static int late_what_of_gap(const gt_proc *p, const gt_gap *g)
{
    if (gt_phase_is_named_cost(g->phase))
        return GT_LATE_COMPILE;
    return g->ends_with_h2d || p->dataloader_workers > 0 ? GT_LATE_DATA_LOADING : GT_LATE_HOST_WORK;
}

/* The time of [x, y] inside rank p's CPU collectives (each instant once). */
static double collective_overlap(const gt_proc *p, uint64_t x, uint64_t y)
{
    uint64_t covered_to = x, sum = 0;
    for (size_t i = first_done_after(p, x); i < p->n_collectives; i++) {
        const gt_collective *c = &p->collectives[i];
        if (c->kind != GT_COLL_CPU)
            continue;
        if (c->arrive_ns >= y) {
            if (c->done_ns > y)
                break; /* in order of their end: the later ones lie after y */
            continue;
        }
        uint64_t lo = c->arrive_ns > covered_to ? c->arrive_ns : covered_to;
        uint64_t hi = c->done_ns < y ? c->done_ns : y;
        if (hi > lo) {
            sum += hi - lo;
            covered_to = hi;
        }
    }
    return (double)sum;
}

/* What rank p did in [a, b], added to out: GPU busy outside its idle gaps, and in the gaps (with
 * `collectives`) its collectives' time first, the CUDA calls' time (each gap's prorated to its
 * part in [a, b]) and the rest. */
static void breakdown_part(const gt_proc *p, uint64_t a, uint64_t b, int collectives,
                           double out[GT_LATE_COUNT])
{
    if (b <= a)
        return;
    double idle = 0;
    for (size_t i = md_gap_lower(p, a); i < p->n_gaps && p->gaps[i].start_ns < b; i++) {
        const gt_gap *g = &p->gaps[i];
        uint64_t x = g->start_ns > a ? g->start_ns : a, y = g->end_ns < b ? g->end_ns : b;
        if (y <= x)
            continue;
        double len = (double)(g->end_ns - g->start_ns), f = (double)(y - x) / len;
        double coll_ns = collectives ? collective_overlap(p, x, y) : 0;
        double calls = (double)(gt_gap_ns(g, GT_GAP_SYNC) + gt_gap_ns(g, GT_GAP_COPY) +
                                gt_gap_ns(g, GT_GAP_LAUNCH) + gt_gap_ns(g, GT_GAP_ALLOC) +
                                gt_gap_ns(g, GT_GAP_OTHER_API)) *
                       f;
        double part = (double)(y - x);
        coll_ns = coll_ns < part ? coll_ns : part;
        calls = calls < part - coll_ns ? calls : part - coll_ns;
        int what = late_what_of_gap(p, g);
        out[GT_LATE_COLLECTIVE] += what == GT_LATE_COMPILE ? 0 : coll_ns / 1e6;
        out[GT_LATE_CUDA_CALL] += what == GT_LATE_COMPILE ? 0 : calls / 1e6;
        out[what] += (what == GT_LATE_COMPILE ? part : part - coll_ns - calls) / 1e6;
        idle += part;
    }
    out[GT_LATE_GPU] += ((double)(b - a) - idle) / 1e6;
}

/* What rank p did from `from` until it arrived at collective c, by thread role. Up to the
 * handover its program's threads made the data: their GPU work, CUDA calls and time without a
 * call are the rank's own, even while its collective thread was busy with earlier collectives
 * at the same time (a hook sleeping on the autograd thread while gloo reduces the earlier
 * buckets: its own work). From the handover to the arrival the data waited: for the GPU, or for
 * the collective thread still in other collectives. Without a known handover (NCCL, a CPU
 * collective whose program made no call on its stream) the whole time is split the second way. */
static void breakdown(const gt_proc *p, uint64_t from, const gt_collective *c,
                      double out[GT_LATE_COUNT])
{
    memset(out, 0, GT_LATE_COUNT * sizeof *out);
    uint64_t h = c->handover_ns, to = c->arrive_ns;
    h = h < from ? from : h > to ? to : h;
    breakdown_part(p, from, h, 0, out);
    breakdown_part(p, h, to, 1, out);
}

typedef struct match_ctx {
    gt_run *run;
    rank_side *sides;
    size_t n;
    size_t *at;      /* each side's collective at this match */
    size_t *prev;    /* each side's collective at the last common point, SIZE_MAX none */
    int counted;     /* in the figures (steady window) */
    size_t step;     /* the reference's step it belongs to */
    uint8_t *seen;   /* per step: a counted collective lies in it */
    double *scratch; /* 2 * n + n * GT_LATE_COUNT */
} match_ctx;

/* NCCL kernels of a rank that arrived early spin until the last rank arrives: GPU time that does
 * no work, counted as idle waiting in a collective. */
static void add_nccl_wait(gt_proc *p, const gt_collective *c, uint64_t last)
{
    if (c->kind != GT_COLL_NCCL || last <= c->arrive_ns)
        return;
    uint64_t w = last - c->arrive_ns, dur = c->done_ns - c->arrive_ns;
    if (w > dur)
        w = dur;
    p->nccl_wait_ns += w;
    if (c->arrive_ns >= p->steady_start_ns && c->arrive_ns < p->steady_end_ns &&
        md_in_steady_gpu(p, c->arrive_ns))
        p->steady_nccl_wait_ns += w;
}

/* What the last rank did instead: its split of [previous done, arrival] beyond the median of
 * the others' splits of theirs, into out (zeros without a previous collective). */
static void instead_of(match_ctx *x, size_t last, double out[GT_LATE_COUNT])
{
    double *split = x->scratch + 2 * x->n, *col = x->scratch;
    memset(out, 0, GT_LATE_COUNT * sizeof *out);
    for (size_t k = 0; k < x->n; k++) {
        if (x->at[k] == SIZE_MAX)
            continue;
        if (x->prev[k] == SIZE_MAX)
            return;
        breakdown(x->sides[k].p, coll(&x->sides[k], x->prev[k])->done_ns,
                  coll(&x->sides[k], x->at[k]), split + k * GT_LATE_COUNT);
    }
    for (int w = 0; w < GT_LATE_COUNT; w++) {
        size_t m = 0;
        for (size_t k = 0; k < x->n; k++)
            if (k != last && x->at[k] != SIZE_MAX)
                col[m++] = split[k * GT_LATE_COUNT + w];
        double excess = split[last * GT_LATE_COUNT + w] - median_of(col, m);
        out[w] = excess > 0 ? excess : 0;
    }
}

/* One collective matched on the ranks that waited for each other (at[k] SIZE_MAX: not rank k):
 * its last rank and lateness, the others' waits. */
static void score(match_ctx *x)
{
    uint64_t last_t = 0;
    size_t last = 0;
    for (size_t k = 0; k < x->n; k++) {
        if (x->at[k] == SIZE_MAX)
            continue;
        uint64_t a = coll(&x->sides[k], x->at[k])->arrive_ns;
        if (a > last_t) {
            last_t = a;
            last = k;
        }
    }
    double *others = x->scratch;
    size_t m = 0;
    for (size_t k = 0; k < x->n; k++) {
        if (x->at[k] == SIZE_MAX)
            continue;
        gt_collective *c = coll(&x->sides[k], x->at[k]);
        c->last_arrive_ns = last_t;
        add_nccl_wait(x->sides[k].p, c, last_t);
        if (k != last)
            others[m++] = (double)c->arrive_ns;
    }
    if (!x->counted)
        return;
    rank_side *l = &x->sides[last];
    double late = ((double)last_t - median_of(others, m)) / 1e6;
    size_t i = x->step;
    l->last_at++;
    x->seen[i] = 1;
    if (late > l->late[i]) {
        l->late[i] = late;
        instead_of(x, last, l->instead[i]);
    }
    for (size_t k = 0; k < x->n; k++) {
        if (x->at[k] == SIZE_MAX)
            continue;
        double w = (double)(last_t - coll(&x->sides[k], x->at[k])->arrive_ns) / 1e6;
        if (w > x->sides[k].wait[i])
            x->sides[k].wait[i] = w;
    }
}

/* The slot of the reference's j-th collective: its step (steps are sorted), or j without steps. */
static size_t slot_of(const gt_proc *p, uint64_t t, size_t j)
{
    if (p->n_steps < 2)
        return j;
    size_t i = MD_FIRST_ENDING_AFTER(p->steps, p->n_steps, t);
    return i < p->n_steps ? i : p->n_steps - 1;
}

static int in_steady(const gt_proc *p, uint64_t t)
{
    return t >= p->steady_start_ns && t <= p->steady_end_ns;
}

#define HISTORY 64 /* matched collectives remembered for the last common point */

/* The last point the ranks of collective `at` left together before it: the latest earlier match
 * of them all that ended before any of them arrived at it. Collectives in flight at once (gloo's
 * two threads reduce two buckets together) ended after some rank arrived: not a common point. */
static int common_point(const match_ctx *x, const size_t *hist, size_t n_hist, size_t *prev)
{
    uint64_t first = UINT64_MAX;
    for (size_t k = 0; k < x->n; k++) {
        uint64_t a = x->at[k] == SIZE_MAX ? UINT64_MAX : coll(&x->sides[k], x->at[k])->arrive_ns;
        first = a < first ? a : first;
    }
    for (size_t h = n_hist; h-- > 0 && h + HISTORY >= n_hist;) {
        const size_t *m = hist + (h % HISTORY) * x->n;
        size_t k = 0;
        while (k < x->n && (x->at[k] == SIZE_MAX || m[k] != SIZE_MAX))
            k++;
        if (k == x->n && coll(&x->sides[0], m[0])->done_ns <= first) {
            memcpy(prev, m, x->n * sizeof *m);
            return 1;
        }
    }
    return 0;
}

/* The reference's j-th collective on the other ranks: those whose copy of it ends with the
 * reference's (within tol) waited for the same last arrival. A collective need not make every
 * rank wait for every other (a broadcast's tree: a rank waits for its parent only, and its copy
 * ends earlier); a rank that lacks it (not recorded) is left out likewise. Returns the ranks
 * matched, the reference included. */
static size_t match_ranks(rank_side *sides, size_t n, size_t j, uint64_t spread, size_t *at)
{
    uint64_t t = coll(&sides[0], j)->done_ns, tol = tolerance(&sides[0], j, spread);
    size_t matched = 1;
    at[0] = j;
    for (size_t k = 1; k < n; k++)
        matched += (at[k] = match_one(&sides[k], t, tol, spread)) != SIZE_MAX;
    return matched;
}

/* Every reference collective matched on the ranks that waited for it, scored in order. Returns the
 * matched ones counted. */
static size_t match_all(gt_run *run, rank_side *sides, size_t n, int use_all, uint64_t spread,
                        uint8_t *seen)
{
    rank_side *ref = &sides[0];
    size_t *at = gt_xcalloc(2 * n, sizeof *at), *prev = at + n, counted = 0, n_hist = 0;
    size_t *hist = gt_xcalloc(HISTORY * n, sizeof *hist);
    double *scratch = gt_xcalloc(2 * n + n * GT_LATE_COUNT, sizeof *scratch);
    match_ctx x = {run, sides, n, at, prev, 0, 0, seen, scratch};
    for (size_t j = 0; j < ref->n; j++) {
        uint64_t t = coll(ref, j)->done_ns;
        if (match_ranks(sides, n, j, spread, at) < 2)
            continue;
        if (!common_point(&x, hist, n_hist, prev))
            for (size_t k = 0; k < n; k++)
                prev[k] = SIZE_MAX;
        x.counted = use_all || in_steady(ref->p, t);
        x.step = slot_of(ref->p, t, j);
        score(&x);
        counted += x.counted != 0;
        memcpy(hist + (n_hist++ % HISTORY) * n, at, n * sizeof *at);
    }
    free(at);
    free(hist);
    free(scratch);
    return counted;
}

/* Matched collectives in the reference's steady window, counted without scoring, with only the
 * neighbours' distance as the tolerance; *spread: how far apart one collective's ends lie on the
 * ranks — twice the median distance of the matched ones' ends from the reference's. */
static size_t steady_matches(rank_side *sides, size_t n, uint64_t *spread)
{
    rank_side *ref = &sides[0];
    size_t count = 0, m = 0;
    double *d = gt_xcalloc(ref->n * n + 1, sizeof *d);
    for (size_t k = 0; k < n; k++)
        sides[k].at = 0;
    for (size_t j = 0; j < ref->n; j++) {
        uint64_t t = coll(ref, j)->done_ns, tol = tolerance(ref, j, 0);
        size_t k = 1, i, m0 = m;
        while (k < n && (i = match_one(&sides[k], t, tol, 0)) != SIZE_MAX) {
            d[m++] = (double)absdiff(coll(&sides[k], i)->done_ns, t);
            k++;
        }
        m = k == n ? m : m0;
        count += k == n && in_steady(ref->p, t);
    }
    for (size_t k = 0; k < n; k++)
        sides[k].at = 0;
    *spread = (uint64_t)(2 * median_of(d, m));
    free(d);
    return count;
}

/* Slots with a counted collective, and those rank s was the latest in. */
static size_t rounds_and_last(rank_side *sides, size_t n, const uint8_t *seen, size_t n_slots,
                              size_t s, size_t *last_in)
{
    size_t rounds = 0;
    *last_in = 0;
    for (size_t i = 0; i < n_slots; i++) {
        if (!seen[i])
            continue;
        size_t best = 0;
        for (size_t k = 1; k < n; k++)
            if (sides[k].late[i] > sides[best].late[i])
                best = k;
        rounds++;
        *last_in += best == s;
    }
    return rounds;
}

static double sum_of(const double *v, const uint8_t *seen, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += seen[i] ? v[i] : 0;
    return sum;
}

/* The straggler: the rank with most lateness; its figures per step (median over the steps with
 * matched collectives) and the others' wait for it. */
static void name_straggler(gt_run *run, rank_side *sides, size_t n, size_t counted, int kind,
                           const uint8_t *seen, size_t n_steps)
{
    size_t s = 0;
    double late_of_s = sum_of(sides[0].late, seen, n_steps);
    for (size_t k = 1; k < n; k++)
        if (sum_of(sides[k].late, seen, n_steps) > late_of_s) {
            s = k;
            late_of_s = sum_of(sides[k].late, seen, n_steps);
        }
    const gt_proc *ref = sides[0].p;
    gt_straggler *st = &run->straggler;
    st->found = 1;
    st->rank = sides[s].p->hdr.rank;
    st->pid = sides[s].p->hdr.pid;
    st->kind = kind;
    st->collectives = counted;
    st->last_at = sides[s].last_at;
    st->per_step = ref->n_steps >= 2;
    st->rounds = rounds_and_last(sides, n, seen, n_steps, s, &st->last_in);
    double steps = st->rounds ? (double)st->rounds : 1;
    double *v = gt_xcalloc(n_steps + 1, sizeof *v);
    size_t m = 0;
    for (size_t i = 0; i < n_steps; i++)
        if (seen[i])
            v[m++] = sides[s].late[i];
    st->lateness_ms = st->per_step ? median_of(v, m) : late_of_s;
    free(v);
    st->period_ms = st->per_step ? ref->step_ms_median
                                 : (double)(ref->steady_end_ns - ref->steady_start_ns) / 1e6;
    double wait = 0;
    for (size_t k = 0; k < n; k++)
        if (k != s)
            wait += sum_of(sides[k].wait, seen, n_steps) / (double)(n - 1);
    double per = st->per_step ? steps : 1;
    st->others_wait_ms = wait / per;
    for (size_t i = 0; i < n_steps; i++)
        for (int w = 0; w < GT_LATE_COUNT && seen[i]; w++)
            st->instead_ms[w] += sides[s].instead[i][w] / per;
    for (size_t k = 0; k < n; k++) {
        gt_proc *p = sides[k].p;
        p->coll_late_ms_per_step = sum_of(sides[k].late, seen, n_steps) / per;
        p->coll_wait_ms_per_step = sum_of(sides[k].wait, seen, n_steps) / per;
        p->coll_last_at = sides[k].last_at;
        p->coll_matched = counted;
    }
}

/* Each process's idle causes again, now that each collective's last arrival is known: a rank's
 * time in a collective before it is waiting, after it is the transfer. */
static void causes_again(rank_side *sides, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        gt_proc *p = sides[k].p;
        md_idle_collectives(p);
        md_idle_assign(p);
        p->idle_cause_ns[GT_IDLE_COLLECTIVE] += p->nccl_wait_ns;
        p->steady_idle_cause_ns[GT_IDLE_COLLECTIVE] += md_steady_scaled(p, p->steady_nccl_wait_ns);
    }
}

static void analyse_ranks(gt_run *run, rank_side *sides, size_t n, int kind)
{
    const gt_proc *ref = sides[0].p;
    size_t n_steps = ref->n_steps >= 2 ? ref->n_steps : sides[0].n; /* slots */
    for (size_t k = 0; k < n; k++) {
        sides[k].late = gt_xcalloc(n_steps + 1, sizeof *sides[k].late);
        sides[k].wait = gt_xcalloc(n_steps + 1, sizeof *sides[k].wait);
        sides[k].instead = gt_xcalloc(n_steps + 1, sizeof *sides[k].instead);
    }
    uint64_t spread;
    int use_all = steady_matches(sides, n, &spread) < MIN_COUNTED;
    uint8_t *seen = gt_xcalloc(n_steps + 1, 1);
    size_t counted = match_all(run, sides, n, use_all, spread, seen);
    causes_again(sides, n);
    if (counted)
        name_straggler(run, sides, n, counted, kind, seen, n_steps);
    free(seen);
}

static void free_sides(rank_side *sides, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        free(sides[k].c);
        free(sides[k].late);
        free(sides[k].wait);
        free(sides[k].instead);
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
        gt_proc *p = sides[k].p;
        p->nccl_wait_ns = p->steady_nccl_wait_ns = 0;
        p->coll_late_ms_per_step = p->coll_wait_ms_per_step = 0;
        p->coll_last_at = p->coll_matched = 0;
        for (size_t i = 0; i < p->n_collectives; i++)
            p->collectives[i].last_arrive_ns = 0;
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

const char *gt_late_what_name(int what)
{
    static const char *const names[GT_LATE_COUNT] = {"GPU work",     "CUDA calls",
                                                     "data loading", "CPU work without CUDA calls",
                                                     "compilation",  "other collectives"};
    return what >= 0 && what < GT_LATE_COUNT ? names[what] : "?";
}

const char *gt_late_what_key(int what)
{
    static const char *const keys[GT_LATE_COUNT] = {"gpu",       "cuda_call", "data_loading",
                                                    "host_work", "compile",   "collective"};
    return what >= 0 && what < GT_LATE_COUNT ? keys[what] : "?";
}
