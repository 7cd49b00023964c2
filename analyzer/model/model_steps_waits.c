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

static int cmp_time(const void *a, const void *b)
{
    const step_op *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
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
static int take(chooser *c, const step_op *ops, size_t n_ops, const step_key_ops *x,
                const step_key_ops *k, uint64_t x_key, uint64_t k_key)
{
    uint64_t *t = gt_xrealloc(NULL, x->n * sizeof *t);
    size_t n = md_steps_wait_times(ops, n_ops, x, k, t);
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
    step_key_ops *by_id = gt_xcalloc(n_ids + 1, sizeof *by_id);
    size_t *pos = gt_xrealloc(NULL, n * sizeof *pos);
    for (size_t i = 0; i < n; i++)
        by_id[ids[i]].n++;
    for (size_t k = 0, at = 0; k < n_ids; k++) {
        by_id[k].pos = pos + at;
        at += by_id[k].n;
        by_id[k].n = 0;
    }
    for (size_t i = 0; i < n; i++) {
        step_key_ops *k = &by_id[ids[i]];
        pos[(size_t)(k->pos - pos) + k->n++] = i;
    }
    /* the waits (syncs, read-backs) and the candidates X (the other operations), most first */
    step_key_ops *waits = gt_xrealloc(NULL, (n_ids + 1) * sizeof *waits);
    uint64_t *wait_keys = gt_xrealloc(NULL, (n_ids + 1) * sizeof *wait_keys);
    cand *cands = gt_xrealloc(NULL, (n_ids + 1) * sizeof *cands);
    size_t n_waits = 0, n_cands = 0;
    for (uint32_t k = 0; k < n_ids; k++) {
        if ((keys[k] & SYNC_KEY) && (keys[k] & SYNC_COPY_BIT)) {
            continue; /* a copy call: it would pair with its own GPU copy (JAX's small copies) */
        } else if (md_steps_waits_for_gpu(keys[k])) {
            wait_keys[n_waits] = keys[k];
            waits[n_waits++] = by_id[k];
        } else if (by_id[k].n >= STEP_MIN_ITERATIONS) {
            cands[n_cands++] = (cand){by_id[k].n, by_id[k].pos[0], k};
        }
    }
    qsort(cands, n_cands, sizeof *cands, cmp_cand);
    int ok = 0;
    size_t tried = 0;
    for (size_t i = 0; i < n_cands && i < STEP_WAIT_CANDIDATES && !ok && tried < STEP_PATTERN_TRIES;
         i++) {
        const step_key_ops *x = &by_id[cands[i].id];
        long best = md_steps_best_wait(ops, n, x, waits, n_waits);
        if (best < 0)
            continue;
        tried++;
        ok = take(c, ops, n, x, &waits[best], keys[cands[i].id], wait_keys[best]);
    }
    free(wait_keys);
    free(waits);
    free(cands);
    free(pos);
    free(by_id);
    free(ids);
    free(keys);
    return ok;
}
