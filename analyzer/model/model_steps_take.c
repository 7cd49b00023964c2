/* model_steps_take.c — how a chosen series of times or launches becomes the steps, and when such
 * a series is implausible (too little of the GPU's work, several loops with pauses between them),
 * with the notes step_why keeps of what was passed over. Shared by the step choice's other files,
 * which call it and never the other way: model_steps_pattern.c (repeating patterns),
 * model_steps_waits.c (the wait that ends each iteration) and model_steps.c (the markers, the
 * order they are tried in). */
#include "model_steps_internal.h"

#define STEP_MAX_PAUSED                                                                            \
    0.4 /* share of a pattern's time (after warm-up) in pauses: several loops                      \
         */

size_t md_steps_max(void)
{
    static size_t max;
    if (!max)
        max = gt_env_count("GPUTRACE_STEPS_MAX", 2, GT_STEPS_MAX);
    return max;
}

size_t md_step_ops_max(void)
{
    static size_t max; /* read once: asked for every operation */
    if (!max)
        max = gt_env_count("GPUTRACE_STEP_OPS_MAX", 64, STEP_OPS_MAX);
    return max;
}

void md_steps_tail_add(gt_u64_log *tail, uint64_t t, uint64_t key, const uint32_t *tid)
{
    gt_u64_log_add(tail, t);
    gt_u64_log_add(tail, key);
    if (tid)
        gt_u64_log_add(tail, *tid);
}

size_t md_steps_cut(step_op *ops, uint32_t *tids, size_t n, gt_u64_log *tail, uint64_t *cut)
{
    /* the time before which 7/8 of them lie, from every 16th (a copy of them all would add 32 MB
     * to the peak): the list keeps most of its room for the pattern search (a JAX run's
     * autotuning fills the first thousands; kept to the median, a list of 8,000 found no
     * pattern in jax_step, at 7/8 the same 200 steps as whole), and an eighth for records of
     * earlier times that come late */
    size_t m = (n + 15) / 16;
    uint64_t *t = gt_xrealloc(NULL, (m ? m : 1) * sizeof *t);
    for (size_t i = 0; i < m; i++)
        t[i] = ops[i * 16].t;
    md_sort_u64(t, m);
    uint64_t c = m ? t[m - 1 - m / 8] : 0;
    free(t);
    if (*cut && *cut < c)
        c = *cut; /* a cut only moves back */
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (ops[i].t >= c) {
            md_steps_tail_add(tail, ops[i].t, ops[i].key, tids ? &tids[i] : NULL);
            continue;
        }
        if (tids)
            tids[kept] = tids[i];
        ops[kept++] = ops[i];
    }
    *cut = c;
    return kept;
}

/* Appends src to the string in dst[cap], cut at cap (why texts are a summary, cut is fine). */
static void append(char *dst, size_t cap, const char *src)
{
    size_t len = strnlen(dst, cap - 1), n = strlen(src);
    if (n > cap - 1 - len)
        n = cap - 1 - len;
    memcpy(dst + len, src, n);
    dst[len + n] = 0;
}

void md_steps_note(chooser *c, const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(c->passed);
    if (len + 8 >= sizeof c->passed)
        return;
    char buf[200];
    snprintf(buf, sizeof buf, fmt, a, b);
    if (len)
        append(c->passed, sizeof c->passed, "; ");
    append(c->passed, sizeof c->passed, buf);
}

void md_steps_note_pct(chooser *c, const char *fmt, const char *name, double pct)
{
    char num[32];
    snprintf(num, sizeof num, "%.0f%%", pct);
    md_steps_note(c, fmt, name, num);
}

/* GPU busy time inside [lo, hi] (s->iv: merged, sorted by md_busy). */
static uint64_t busy_in(const pass_state *s, uint64_t lo, uint64_t hi)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n_iv; i++) {
        uint64_t a = s->iv[i][0] > lo ? s->iv[i][0] : lo, b = s->iv[i][1] < hi ? s->iv[i][1] : hi;
        if (b > a)
            sum += b - a;
    }
    return sum;
}

/* Share of the GPU's busy time between the first and the last time (1 without GPU work). */
double md_steps_busy_share(const chooser *c, uint64_t lo, uint64_t hi)
{
    if (!c->p->gpu_busy_ns)
        return 1.0;
    return (double)busy_in(c->s, lo, hi) / (double)c->p->gpu_busy_ns;
}

static double median_of(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* insertion sort: callers pass copies they own */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double md_steps_median(double *v, size_t n)
{
    if (n > 64) {
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    return median_of(v, n);
}

/* Share of a series' time, after its first tenth (warm-up, compilation), spent in pauses longer
 * than 4 usual intervals: a benchmark's loops one after the other (a conv layer's iterations,
 * then the next layer's) pause between loops; one loop of steps does not. */
static double paused_share(const uint64_t *t, size_t n)
{
    if (n < 3)
        return 0;
    double *iv = gt_xrealloc(NULL, (n - 1) * sizeof *iv);
    for (size_t i = 0; i + 1 < n; i++)
        iv[i] = (double)(t[i + 1] - t[i]);
    double *sorted = gt_xrealloc(NULL, (n - 1) * sizeof *sorted);
    memcpy(sorted, iv, (n - 1) * sizeof *sorted);
    double med = md_steps_median(sorted, n - 1), all = 0, paused = 0;
    for (size_t i = (n - 1) / 10; i + 1 < n; i++) {
        all += iv[i];
        paused += iv[i] > 4 * med ? iv[i] : 0;
    }
    free(iv);
    free(sorted);
    return all > 0 ? paused / all : 0;
}

/* Implausible steps from a series of times (a pattern, graph launches): a note, or 0. */
/* Share of the calls that gave the GPU work (a GPU-sampled trace's, recorded all along) made
 * between the first and the last time (1 without such calls). */
typedef struct calls_between {
    uint64_t lo, hi;
    size_t in;
} calls_between;

static void count_between(void *ctx, uint64_t t)
{
    calls_between *b = ctx;
    b->in += t >= b->lo && t <= b->hi;
}

static double calls_share(const chooser *c, uint64_t lo, uint64_t hi)
{
    calls_between b = {lo, hi, 0};
    gt_u64_log_each(&c->s->submits, count_between, &b);
    return c->s->submits.n ? (double)b.in / (double)c->s->submits.n : 1.0;
}

/* A GPU-sampled trace's steps come from its calls: their share of the calls that gave the GPU
 * work stands for the share of its busy time, which the windows show only in part (windows
 * outside the loop would reject every loop). */
int md_steps_share_implausible(chooser *c, const uint64_t *t, size_t n, const char *what)
{
    int by_calls = c->p->gpu_sampled;
    double share =
        by_calls ? calls_share(c, t[0], t[n - 1]) : md_steps_busy_share(c, t[0], t[n - 1]);
    if (share < GT_STEP_MIN_COVER) {
        md_steps_note_pct(c,
                          by_calls ? "%s hold only %s of the calls that gave the GPU work"
                                   : "%s hold only %s of the GPU's busy time",
                          what, 100.0 * share);
        return 1;
    }
    return 0;
}

int md_steps_times_implausible(chooser *c, const uint64_t *t, size_t n, const char *what)
{
    if (md_steps_share_implausible(c, t, n, what))
        return 1;
    double paused = paused_share(t, n);
    if (paused > STEP_MAX_PAUSED) {
        md_steps_note_pct(c,
                          "%s stop and start again: %s of their time is pauses of over 4 usual "
                          "intervals (several loops, not one)",
                          what, 100.0 * paused);
        return 1;
    }
    return 0;
}

/* Markers before the longest pause in the first tenth of a series: an earlier, separate run of
 * the same work (JAX runs a warm-up call of its step 21 times, then compiles for 2.2 s): the steps
 * start at the marker before that pause, so the pause is the first, warm-up, step. */
static size_t leading_markers(const uint64_t *t, size_t n)
{
    double *iv = gt_xrealloc(NULL, (n - 1) * sizeof *iv);
    for (size_t i = 0; i + 1 < n; i++)
        iv[i] = (double)(t[i + 1] - t[i]);
    double longest = 0, med = md_steps_median(iv, n - 1);
    size_t at = 0;
    for (size_t i = 0; i <= (n - 1) / 10 && i + 1 < n; i++) {
        double d = (double)(t[i + 1] - t[i]);
        if (d > 4 * med && d > longest) {
            longest = d;
            at = i;
        }
    }
    free(iv);
    return at;
}

/* Steps from a marker's times: each from one time to the next (n times, n - 1 steps). */
void md_steps_take_times(chooser *c, const uint64_t *t, size_t n, int kind, const char *source)
{
    gt_proc *p = c->p;
    size_t skip = leading_markers(t, n);
    t += skip;
    n -= skip;
    /* a thinned series (every thin-th time of a long run's) holds runs times in all */
    size_t thin = c->thin > 1 ? c->thin : 1, iterations = thin > 1 ? c->runs - 1 : n - 1;
    c->thin = c->runs = 0;
    size_t max = md_steps_max(), per = (n - 1 + max - 1) / max; /* times of the series a step */
    p->step_iterations = per * thin;
    p->n_steps = (n - 1) / per;
    p->steps = gt_xrealloc(NULL, p->n_steps * sizeof *p->steps);
    for (size_t i = 0; i < p->n_steps; i++)
        p->steps[i] = (gt_step){t[i * per], t[(i + 1) * per]};
    p->step_source_kind = kind;
    c->iterations_note[0] = 0;
    if (p->step_iterations > 1) {
        snprintf(p->step_source, sizeof p->step_source, "%.80s, %zu iterations a step", source,
                 p->step_iterations);
        snprintf(c->iterations_note, sizeof c->iterations_note,
                 "; the run has %zu iterations, more than the %zu steps the analysis keeps: %zu "
                 "make one step (the last %zu left out)",
                 iterations, max, p->step_iterations, iterations - p->n_steps * p->step_iterations);
    } else {
        snprintf(p->step_source, sizeof p->step_source, "%s", source);
    }
}

void md_steps_set_why(chooser *c, const char *why)
{
    c->p->step_why[0] = 0;
    append(c->p->step_why, sizeof c->p->step_why, why);
    append(c->p->step_why, sizeof c->p->step_why, c->iterations_note);
    if (c->passed[0]) {
        append(c->p->step_why, sizeof c->p->step_why, "; " GT_STEP_WHY_NOT_USED);
        append(c->p->step_why, sizeof c->p->step_why, c->passed);
    }
}

int md_steps_take_graph_launches(chooser *c, const uint64_t *t, size_t n, size_t graphs,
                                 int from_calls)
{
    if (n < 3) {
        md_steps_note(c, "%s%s", "CUDA graphs launched fewer than 3 times", "");
        return 0;
    }
    if (md_steps_times_implausible(c, t, n, "the CUDA graph launches"))
        return 0;
    char src[128], why[200];
    snprintf(src, sizeof src, "CUDA graph launches (%zu launches of one graph)%s", n,
             from_calls ? " \xe2\x80\x94 CPU side, GPU sampled" : "");
    snprintf(why, sizeof why, "no program marker; %sthe program launches %s",
             from_calls ? "GPU sampled, so from the calls (recorded all along): " : "",
             graphs > 1 ? "CUDA graphs repeatedly (the graph launched most, first of its step)"
                        : "a CUDA graph repeatedly");
    md_steps_take_times(c, t, n, GT_STEPSRC_GRAPH_LAUNCH, src);
    md_steps_set_why(c, why);
    return 1;
}

/* ---- the wait that ends an iteration ---- */

/* The index in k of its first position after a (k->n when none). */
static size_t first_after(const step_key_ops *k, size_t a)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->pos[mid] <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Iterations (intervals from one X to the next, the last one to the end) holding exactly one K,
 * and the summed delay from X to that K (which of two waits that both alternate ends the
 * iteration later: the CPU resumes after it). */
static size_t alternations(const step_key_ops *x, const step_key_ops *k, size_t n_ops,
                           uint64_t *delay, const step_op *ops)
{
    size_t one = 0;
    *delay = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t end = i + 1 < x->n ? x->pos[i + 1] : n_ops;
        size_t j = first_after(k, x->pos[i]);
        size_t m = 0;
        while (j + m < k->n && k->pos[j + m] < end && m < 2)
            m++;
        if (m == 1) {
            one++;
            *delay += ops[k->pos[j]].t - ops[x->pos[i]].t;
        }
    }
    return one;
}

long md_steps_best_wait(const step_op *ops, size_t n_ops, const step_key_ops *x,
                        const step_key_ops *waits, size_t n_waits)
{
    long best = -1;
    size_t best_one = 0;
    uint64_t best_delay = 0;
    for (size_t w = 0; w < n_waits; w++) {
        if ((double)waits[w].n < STEP_MIN_REGULAR * (double)x->n)
            continue; /* too few to be once between most of X's runs */
        uint64_t delay;
        size_t one = alternations(x, &waits[w], n_ops, &delay, ops);
        if ((double)one < STEP_MIN_REGULAR * (double)x->n)
            continue;
        /* the one the most iterations hold once; of equals, the later in the iteration */
        if (best < 0 || one > best_one ||
            (one == best_one && delay / one > best_delay / best_one)) {
            best = (long)w;
            best_one = one;
            best_delay = delay;
        }
    }
    return best;
}

size_t md_steps_wait_times(const step_op *ops, size_t n_ops, const step_key_ops *x,
                           const step_key_ops *k, uint64_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t end = i + 1 < x->n ? x->pos[i + 1] : n_ops;
        size_t j = first_after(k, x->pos[i]);
        if (j < k->n && k->pos[j] < end)
            t[n++] = ops[k->pos[j]].t;
    }
    return n;
}
