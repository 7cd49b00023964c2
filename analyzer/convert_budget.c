/* convert_budget.c — `convert --max-mb`: a run of hours gives a Perfetto file too large for
 * ui.perfetto.dev (which runs in the browser's memory: files of a few hundred MB are the most it
 * opens comfortably). Instead of cutting anywhere, whole steps are kept: the slowest, the median,
 * the first steady ones, as many as fit; everything else is left out of the timeline, with a
 * marker where (convert_run.c), while the report and the advice still cover the whole run.
 *
 * The size is estimated before converting, from the inputs' size: converting twice to measure
 * would double the time of exactly the conversions that take longest. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert.h"
#include "model.h"
#include "util.h"

/* Perfetto bytes per .gtrace byte: 0.42 – 0.84 over the 24 traces in tests/data (ResNet-18/50
 * 0.53 – 0.62; fewer strings per record in longer runs lowers it): the estimate takes the upper
 * end, so a run estimated to fit does. */
#define GT_CONVERT_OUT_PER_IN 0.9

uint64_t gt_convert_estimate_bytes(const char *const *paths, int n)
{
    size_t n_in = 0;
    char **in = gt_expand_paths(paths, n, &n_in, NULL);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n_in; i++) {
        struct stat sb;
        if (stat(in[i], &sb) == 0 && S_ISREG(sb.st_mode))
            bytes += (uint64_t)sb.st_size;
    }
    gt_paths_free(in, n_in);
    return (uint64_t)((double)bytes * GT_CONVERT_OUT_PER_IN);
}

static uint64_t step_ns(const gt_step *s)
{
    return s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
}

static const gt_step *g_sort_steps; /* qsort has no context argument */

static int by_duration(const void *a, const void *b)
{
    uint64_t x = step_ns(&g_sort_steps[*(const size_t *)a]);
    uint64_t y = step_ns(&g_sort_steps[*(const size_t *)b]);
    return x < y ? -1 : x > y;
}

static int by_start(const void *a, const void *b)
{
    const gt_convert_window *x = a, *y = b;
    return x->lo_ns < y->lo_ns ? -1 : x->lo_ns > y->lo_ns;
}

/* The process whose steps stand for the run: the one with the most (the trainer, rank 0 first
 * among equals), else the one with the longest GPU activity. */
static const gt_proc *lead_process(const gt_run *run)
{
    const gt_proc *best = NULL;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (!gt_proc_has_data(p))
            continue;
        if (!best || p->n_steps > best->n_steps ||
            (p->n_steps == best->n_steps &&
             p->gpu_last_ns - p->gpu_first_ns > best->gpu_last_ns - best->gpu_first_ns))
            best = p;
    }
    return best;
}

typedef struct picker {
    const gt_proc *p;
    unsigned char *taken;
    uint64_t budget_ns;
    gt_convert_budget *b;
} picker;

/* Keep step i when it fits (the first one always does). */
static int pick(picker *k, size_t i)
{
    if (i >= k->p->n_steps || k->taken[i])
        return 0;
    uint64_t d = step_ns(&k->p->steps[i]);
    if (k->b->steps_kept && k->b->kept_ns + d > k->budget_ns)
        return 0;
    k->taken[i] = 1;
    k->b->keep[k->b->n_keep++] =
        (gt_convert_window){k->p->steps[i].start_ns, k->p->steps[i].end_ns};
    k->b->steps_kept++;
    k->b->kept_ns += d;
    return 1;
}

static void merge_windows(gt_convert_budget *b)
{
    qsort(b->keep, b->n_keep, sizeof *b->keep, by_start);
    size_t out = 0;
    for (size_t i = 0; i < b->n_keep; i++) {
        if (out && b->keep[i].lo_ns <= b->keep[out - 1].hi_ns) {
            if (b->keep[i].hi_ns > b->keep[out - 1].hi_ns)
                b->keep[out - 1].hi_ns = b->keep[i].hi_ns;
        } else {
            b->keep[out++] = b->keep[i];
        }
    }
    b->n_keep = out;
}

/* No steps: one span of the budget's length from the steady start (the second half of the GPU's
 * active time when nothing else is known). */
static int choose_span(const gt_proc *p, gt_convert_budget *b)
{
    uint64_t lo = p->steady_start_ns ? p->steady_start_ns : p->gpu_first_ns;
    b->keep = gt_xrealloc(NULL, sizeof *b->keep);
    b->keep[0] = (gt_convert_window){lo, lo + b->kept_ns};
    b->n_keep = 1;
    snprintf(b->why, sizeof b->why,
             "no steps were found: kept %.3f s from the start of the steady state",
             (double)b->kept_ns / 1e9);
    return 0;
}

int gt_convert_budget_choose(const gt_run *run, double fraction, gt_convert_budget *b)
{
    memset(b, 0, sizeof *b);
    const gt_proc *p = lead_process(run);
    if (!p)
        return -1;
    b->span_ns = (uint64_t)(gt_proc_duration_ms(p) * 1e6);
    if (fraction > 1)
        fraction = 1;
    uint64_t budget = (uint64_t)((double)b->span_ns * fraction);
    b->steps_total = p->n_steps;
    if (p->n_steps < 2) {
        b->kept_ns = budget;
        return choose_span(p, b);
    }
    picker k = {p, calloc(p->n_steps, 1), budget, b};
    size_t *order = gt_xrealloc(NULL, p->n_steps * sizeof *order);
    b->keep = gt_xrealloc(NULL, p->n_steps * sizeof *b->keep);
    for (size_t i = 0; i < p->n_steps; i++)
        order[i] = i;
    g_sort_steps = p->steps;
    qsort(order, p->n_steps, sizeof *order, by_duration);
    size_t slowest = order[p->n_steps - 1], median = order[p->n_steps / 2];
    size_t first_steady = p->warmup_steps < p->n_steps ? p->warmup_steps : 0;
    int kept_slowest = pick(&k, slowest);
    int kept_median = pick(&k, median);
    size_t steady_from = first_steady, steady_to = first_steady;
    for (size_t i = first_steady; i < p->n_steps && b->kept_ns < budget; i++) {
        if (k.taken[i] && i != slowest && i != median)
            continue;
        if (!k.taken[i] && !pick(&k, i))
            break;
        steady_to = i + 1;
    }
    char slow[64] = "", med[64] = "";
    if (kept_slowest)
        snprintf(slow, sizeof slow, "the slowest (#%zu, %.1f ms), ", slowest,
                 (double)step_ns(&p->steps[slowest]) / 1e6);
    if (kept_median)
        snprintf(med, sizeof med, "the median (#%zu, %.1f ms), ", median,
                 (double)step_ns(&p->steps[median]) / 1e6);
    snprintf(b->why, sizeof b->why,
             "kept %zu of %zu steps (%.3f s of %.3f s): %s%sthe first steady ones (#%zu-#%zu)",
             b->steps_kept, b->steps_total, (double)b->kept_ns / 1e9, (double)b->span_ns / 1e9,
             slow, med, steady_from, steady_to ? steady_to - 1 : steady_from);
    free(order);
    free(k.taken);
    merge_windows(b);
    return 0;
}
