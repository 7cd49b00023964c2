/* convert_budget.c — `convert --max-mb`: a run of hours gives a Perfetto file too large for
 * ui.perfetto.dev (which runs in the browser's memory: files of a few hundred MB are the most it
 * opens comfortably). Instead of cutting anywhere, whole steps are kept: the slowest, the median,
 * the first steady ones, as many as fit; everything else is left out of the timeline, with a
 * marker where (convert_run.c), while the report and the advice still cover the whole run.
 *
 * The size is estimated before converting, from the inputs' size: converting twice to measure
 * would double the time of exactly the conversions that take longest. */
#include <stdbool.h>
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
/* Perfetto bytes per timed record (a call, a GPU operation, an NVTX event, with its arrows and
 * counters): 43 – 60 on the larger traces in tests/data (ResNet-18/50 43 – 48; the synthetic
 * long run 47); the budget takes 64, and the descriptors and strings ride in the margin. */
#define GT_CONVERT_BYTES_PER_RECORD 64

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

/* The step holding time t (steps are sorted and disjoint), or n when none does. */
static size_t step_at(const gt_step *steps, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (steps[mid].end_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && steps[lo].start_ns <= t ? lo : n;
}

/* Records that become events, by the step their time falls in (weight[n]: outside every step),
 * over every input; NVTX records in *always (every range is kept, convert_nvtx.c). The first field
 * of each of these kinds is its time. */
static void weigh_steps(const gt_run *run, const gt_proc *p, uint64_t *weight, uint64_t *always)
{
    for (size_t i = 0; i < run->n; i++) {
        gt_reader *r;
        char err[256];
        if (!run->procs[i].path ||
            gt_reader_open(run->procs[i].path, &r, err, sizeof err) != GT_OPEN_OK)
            continue;
        gt_record rec;
        while (gt_reader_next(r, &rec) == 1) {
            bool timed = (rec.kind >= GT_REC_API && rec.kind <= GT_REC_API_CUBLAS) ||
                         rec.kind == GT_REC_NVTX ||
                         (rec.kind >= GT_REC_GPU_KERNEL && rec.kind <= GT_REC_GPU_MEMSET);
            uint64_t t;
            if (!timed || rec.body_size < sizeof t)
                continue;
            memcpy(&t, rec.body, sizeof t);
            if (rec.kind == GT_REC_NVTX)
                (*always)++;
            else
                weight[step_at(p->steps, p->n_steps, t)]++;
        }
        gt_reader_close(r);
    }
}

typedef struct picker {
    const gt_proc *p;
    unsigned char *taken;
    const uint64_t *weight;
    uint64_t budget, used;
    gt_convert_budget *b;
} picker;

/* Keep step i when its records fit, or when forced (the slowest and the median always are). */
static int pick(picker *k, size_t i, bool force)
{
    if (i >= k->p->n_steps || k->taken[i])
        return 0;
    if (!force && k->used + k->weight[i] > k->budget)
        return 0;
    k->taken[i] = 1;
    k->b->keep[k->b->n_keep++] =
        (gt_convert_window){k->p->steps[i].start_ns, k->p->steps[i].end_ns};
    k->b->steps_kept++;
    k->b->kept_ns += step_ns(&k->p->steps[i]);
    k->used += k->weight[i];
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

int gt_convert_budget_choose(const gt_run *run, uint64_t max_bytes, gt_convert_budget *b)
{
    memset(b, 0, sizeof *b);
    const gt_proc *p = lead_process(run);
    if (!p)
        return -1;
    b->span_ns = (uint64_t)(gt_proc_duration_ms(p) * 1e6);
    uint64_t max_records = max_bytes / GT_CONVERT_BYTES_PER_RECORD;
    b->steps_total = p->n_steps;
    if (p->n_steps < 2) { /* by time: the records' spread is not known without steps */
        uint64_t est = gt_convert_estimate_bytes((const char *const *)&p->path, 1);
        double fraction = est ? (double)max_bytes / (double)est : 1;
        b->kept_ns = (uint64_t)((double)b->span_ns * (fraction < 1 ? fraction : 1));
        return choose_span(p, b);
    }
    uint64_t *weight = calloc(p->n_steps + 1, sizeof *weight);
    uint64_t always = 0;
    weigh_steps(run, p, weight, &always);
    uint64_t records = always;
    for (size_t i = 0; i <= p->n_steps; i++)
        records += weight[i];
    if (records <= max_records) { /* the estimate from the size was too cautious: all fits */
        free(weight);
        free(b->keep);
        b->keep = NULL;
        return -1;
    }
    picker k = {
        p, calloc(p->n_steps, 1), weight, max_records > always ? max_records - always : 0, 0, b};
    size_t *order = gt_xrealloc(NULL, p->n_steps * sizeof *order);
    b->keep = gt_xrealloc(NULL, p->n_steps * sizeof *b->keep);
    for (size_t i = 0; i < p->n_steps; i++)
        order[i] = i;
    g_sort_steps = p->steps;
    qsort(order, p->n_steps, sizeof *order, by_duration);
    size_t slowest = order[p->n_steps - 1], median = order[p->n_steps / 2];
    size_t first_steady = p->warmup_steps < p->n_steps ? p->warmup_steps : 0;
    int kept_slowest = pick(&k, slowest, true);
    int kept_median = pick(&k, median, true);
    size_t steady_from = first_steady, steady_kept = 0;
    for (size_t i = first_steady; i < p->n_steps; i++) {
        if (k.taken[i] && i != slowest && i != median)
            continue;
        if (!k.taken[i] && !pick(&k, i, false))
            break;
        steady_kept = i + 1 - steady_from;
    }
    char slow[64] = "", med[64] = "", steady[64] = "no steady one after them fit";
    if (kept_slowest)
        snprintf(slow, sizeof slow, "the slowest (#%zu, %.1f ms), ", slowest,
                 (double)step_ns(&p->steps[slowest]) / 1e6);
    if (kept_median)
        snprintf(med, sizeof med, "the median (#%zu, %.1f ms), ", median,
                 (double)step_ns(&p->steps[median]) / 1e6);
    if (steady_kept)
        snprintf(steady, sizeof steady, "the first steady ones (#%zu-#%zu)", steady_from,
                 steady_from + steady_kept - 1);
    snprintf(b->why, sizeof b->why, "kept %zu of %zu steps (%.3f s of %.3f s): %s%s%s",
             b->steps_kept, b->steps_total, (double)b->kept_ns / 1e9, (double)b->span_ns / 1e9,
             slow, med, steady);
    free(weight);
    free(order);
    free(k.taken);
    merge_windows(b);
    return 0;
}
