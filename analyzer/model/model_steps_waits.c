/* model_steps_waits.c — the step choice's last resort (issue 30): steps from the wait that ends
 * each iteration, for a loop whose work changes from one iteration to the next (input shapes that
 * change, cuDNN autotuning or a recompilation in some iterations) and that carries no marker. Its
 * GPU operations then make no regular pattern (each iteration runs a different number of them)
 * and its waits come at uneven distances (the autotuner's and the compiler's own syncs), but some
 * operation X still runs once an iteration (the input's random fill, the loss, the optimizer) and
 * the program waits for the GPU once an iteration (loss.item(), a sync: its clock needs one). Such
 * an X and such a wait K alternate: between one X and the next there is exactly one K. The steps
 * end at those waits (the first K after each X). Tried only when the program's markers, graph
 * launches and the repeating patterns of the GPU's operations and of the calls made no steps. */
#include "model_steps.h"
#include "model_steps_internal.h"

#include "textfmt.h"

/* A loop of iterations, not a few operations run once per configuration. */
#define STEP_MIN_ITERATIONS 5
/* Candidates X examined, most frequent first: the work stays bounded whatever the trace (the
 * corpus's once-an-iteration operations come after 30 or so more frequent ones) */
#define STEP_WAIT_CANDIDATES 256

typedef struct key_ops {
    size_t *pos, n; /* where in the time-ordered operations */
} key_ops;

static int cmp_time(const void *a, const void *b)
{
    const step_op *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The index in k of its first position after a (k->n when none). */
static size_t first_after(const key_ops *k, size_t a)
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
static size_t alternations(const key_ops *x, const key_ops *k, size_t n_ops, uint64_t *delay,
                           const step_op *ops)
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

/* A candidate X: how often it runs, where first, which key. */
typedef struct cand {
    size_t n, first;
    uint32_t id;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The steps of X and K: the first K after each X, when one comes before the next X. */
static int take(chooser *c, const step_op *ops, size_t n_ops, const key_ops *x, const key_ops *k,
                uint64_t x_key, uint64_t k_key)
{
    uint64_t *t = gt_xrealloc(NULL, x->n * sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < x->n; i++) {
        size_t end = i + 1 < x->n ? x->pos[i + 1] : n_ops;
        size_t j = first_after(k, x->pos[i]);
        if (j < k->n && k->pos[j] < end)
            t[n++] = ops[k->pos[j]].t;
    }
    char xname[96], kname[96], what[128];
    md_steps_op_name(c, x_key, xname, sizeof xname);
    md_steps_op_name(c, k_key, kname, sizeof kname);
    snprintf(what, sizeof what, "the waits ('%s') after '%s'", gt_short_name(kname, 40, 0),
             gt_short_name(xname, 40, GT_NAME_KERNEL));
    size_t before = strlen(c->passed);
    int first = !strstr(c->passed, "the waits ('"); /* one such note is enough */
    /* Not the pause test of the patterns: an iteration that autotunes or recompiles is long, and
     * it is a step of the loop (one X, one K), not a pause between two loops. */
    int ok = n >= 3 && !md_steps_share_implausible(c, t, n, what);
    if (!first)
        c->passed[before] = 0;
    if (ok) {
        char src[160], why[384];
        snprintf(src, sizeof src, "iteration wait (%zu\xc3\x97 %s after %s)", n,
                 gt_short_name(kname, 40, 0), gt_short_name(xname, 50, GT_NAME_KERNEL));
        snprintf(why, sizeof why,
                 "no program marker, no regular pattern (the iterations' work changes: shapes, "
                 "autotuning, recompiles); '%s' runs once an iteration and the program then "
                 "waits for the GPU ('%s'): each such wait ends a step",
                 gt_short_name(xname, 60, GT_NAME_KERNEL), gt_short_name(kname, 40, 0));
        md_steps_take_times(c, t, n, GT_STEPSRC_ITERATION_WAIT, src);
        md_steps_set_why(c, why);
    }
    free(t);
    return ok;
}

int md_steps_choose_waits(chooser *c)
{
    pass_state *s = c->s;
    size_t n = s->n_ops;
    if (n < 3)
        return 0;
    step_op *ops = s->ops;
    qsort(ops, n, sizeof *ops, cmp_time);
    gt_u64map dense = {0};
    uint32_t *ids = gt_xrealloc(NULL, n * sizeof *ids);
    uint64_t *keys = gt_xrealloc(NULL, n * sizeof *keys);
    size_t n_ids = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = gt_map_get(&dense, ops[i].key);
        if (k == UINT32_MAX) {
            k = (uint32_t)n_ids;
            keys[n_ids++] = ops[i].key;
            gt_map_put(&dense, ops[i].key, k);
        }
        ids[i] = k;
    }
    gt_map_free(&dense);
    key_ops *by_id = gt_xcalloc(n_ids + 1, sizeof *by_id);
    size_t *pos = gt_xrealloc(NULL, n * sizeof *pos);
    for (size_t i = 0; i < n; i++)
        by_id[ids[i]].n++;
    for (size_t k = 0, at = 0; k < n_ids; k++) {
        by_id[k].pos = pos + at;
        at += by_id[k].n;
        by_id[k].n = 0;
    }
    for (size_t i = 0; i < n; i++)
        by_id[ids[i]].pos[by_id[ids[i]].n++] = i;
    /* the waits (syncs, read-backs) and the candidates X (the other operations), most first */
    uint32_t *waits = gt_xrealloc(NULL, (n_ids + 1) * sizeof *waits);
    cand *cands = gt_xrealloc(NULL, (n_ids + 1) * sizeof *cands);
    size_t n_waits = 0, n_cands = 0;
    for (uint32_t k = 0; k < n_ids; k++) {
        if (md_steps_waits_for_gpu(keys[k]))
            waits[n_waits++] = k;
        else if (by_id[k].n >= STEP_MIN_ITERATIONS)
            cands[n_cands++] = (cand){by_id[k].n, by_id[k].pos[0], k};
    }
    qsort(cands, n_cands, sizeof *cands, cmp_cand);
    int ok = 0;
    size_t tried = 0;
    for (size_t i = 0; i < n_cands && i < STEP_WAIT_CANDIDATES && !ok && tried < STEP_PATTERN_TRIES;
         i++) {
        const key_ops *x = &by_id[cands[i].id];
        uint32_t best = UINT32_MAX;
        size_t best_one = 0;
        uint64_t best_delay = 0;
        for (size_t w = 0; w < n_waits; w++) {
            if ((double)by_id[waits[w]].n < STEP_MIN_REGULAR * (double)x->n)
                continue; /* too few to be once between most of X's runs */
            uint64_t delay;
            size_t one = alternations(x, &by_id[waits[w]], n, &delay, ops);
            if ((double)one < STEP_MIN_REGULAR * (double)x->n)
                continue;
            /* the one the most iterations hold once; of equals, the later in the iteration */
            if (best == UINT32_MAX || one > best_one ||
                (one == best_one && delay / one > best_delay / best_one)) {
                best = waits[w];
                best_one = one;
                best_delay = delay;
            }
        }
        if (best == UINT32_MAX)
            continue;
        tried++;
        ok = take(c, ops, n, x, &by_id[best], keys[cands[i].id], keys[best]);
    }
    free(waits);
    free(cands);
    free(pos);
    free(by_id);
    free(ids);
    free(keys);
    return ok;
}
