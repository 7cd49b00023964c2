/* convert_budget.c — `convert --max-mb`: a run of hours gives a Perfetto file too large for
 * ui.perfetto.dev (which runs in the browser's memory: files of a few hundred MB are the most it
 * opens comfortably). Instead of cutting anywhere, whole steps are kept: the slowest, the median,
 * the first steady ones, as many as fit; everything else is left out of the timeline, with a
 * marker where (convert_run.c), while the report and the advice still cover the whole run.
 *
 * Whether the run fits is estimated from the inputs' size (converting twice to measure would
 * double the time of exactly the conversions that take longest); when it does not, the steps are
 * chosen by their records, half as many again as the limit allows, and then measured: the steps
 * chosen are converted once to nowhere, each one's bytes counted, and the last chosen are left
 * out until the output fits. Steps differ in bytes per record (arguments, call sites, arrows): by
 * the average alone, a 256 MB limit wrote 358 MB on a real run. */
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
/* Steps chosen by their records, as a share of the limit, before they are measured and the last
 * ones left out (gt_convert_budget_fit). */
#define GT_CONVERT_OVERSELECT 1.5
/* What the measured steps may take of the limit: the conversion itself adds the advice, and the
 * markers of the spans left out (a few kB). */
#define GT_CONVERT_FIT_SHARE 0.97

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
    k->b->step[k->b->n_keep] = i;
    k->b->rank[k->b->n_keep] = k->b->n_keep;
    k->b->keep[k->b->n_keep++] =
        (gt_convert_window){k->p->steps[i].start_ns, k->p->steps[i].end_ns};
    k->b->steps_kept++;
    k->b->kept_ns += step_ns(&k->p->steps[i]);
    k->used += k->weight[i];
    return 1;
}

/* One window per step, sorted by start (steps are disjoint), each with its step and rank. */
static void sort_windows(gt_convert_budget *b)
{
    for (size_t i = 1; i < b->n_keep; i++) { /* insertion: few windows move far */
        gt_convert_window w = b->keep[i];
        size_t st = b->step[i], rk = b->rank[i], j = i;
        for (; j > 0 && b->keep[j - 1].lo_ns > w.lo_ns; j--) {
            b->keep[j] = b->keep[j - 1];
            b->step[j] = b->step[j - 1];
            b->rank[j] = b->rank[j - 1];
        }
        b->keep[j] = w;
        b->step[j] = st;
        b->rank[j] = rk;
    }
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

/* What was kept and why, from the windows (one per step) that remain. */
static void budget_why(gt_convert_budget *b)
{
    const gt_step *steps = b->steps;
    int kept_slowest = 0, kept_median = 0;
    size_t steady_last = 0, steady_any = 0;
    b->steps_kept = b->n_keep;
    b->kept_ns = 0;
    for (size_t i = 0; i < b->n_keep; i++) {
        size_t st = b->step[i];
        b->kept_ns += step_ns(&steps[st]);
        kept_slowest |= st == b->slowest;
        kept_median |= st == b->median;
        if (st >= b->steady_from && st != b->slowest && st != b->median &&
            (!steady_any || st > steady_last)) {
            steady_last = st;
            steady_any = 1;
        }
    }
    char slow[64] = "", med[64] = "", steady[64] = "no steady one after them fit";
    if (kept_slowest)
        snprintf(slow, sizeof slow, "the slowest (#%zu, %.1f ms), ", b->slowest,
                 (double)step_ns(&steps[b->slowest]) / 1e6);
    if (kept_median)
        snprintf(med, sizeof med, "the median (#%zu, %.1f ms), ", b->median,
                 (double)step_ns(&steps[b->median]) / 1e6);
    if (steady_any)
        snprintf(steady, sizeof steady, "the first steady ones (#%zu-#%zu)", b->steady_from,
                 steady_last);
    snprintf(b->why, sizeof b->why, "kept %zu of %zu steps (%.3f s of %.3f s): %s%s%s",
             b->steps_kept, b->steps_total, (double)b->kept_ns / 1e9, (double)b->span_ns / 1e9,
             slow, med, steady);
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
        return -1;
    }
    uint64_t chosen = (uint64_t)((double)max_records * GT_CONVERT_OVERSELECT);
    picker k = {p, calloc(p->n_steps, 1), weight, chosen > always ? chosen - always : 0, 0, b};
    size_t *order = gt_xrealloc(NULL, p->n_steps * sizeof *order);
    b->keep = gt_xrealloc(NULL, p->n_steps * sizeof *b->keep);
    b->step = gt_xrealloc(NULL, p->n_steps * sizeof *b->step);
    b->rank = gt_xrealloc(NULL, p->n_steps * sizeof *b->rank);
    b->steps = p->steps;
    b->by_steps = 1;
    for (size_t i = 0; i < p->n_steps; i++)
        order[i] = i;
    g_sort_steps = p->steps;
    qsort(order, p->n_steps, sizeof *order, by_duration);
    b->slowest = order[p->n_steps - 1];
    b->median = order[p->n_steps / 2];
    b->steady_from = p->warmup_steps < p->n_steps ? p->warmup_steps : 0;
    pick(&k, b->slowest, true);
    pick(&k, b->median, true);
    for (size_t i = b->steady_from; i < p->n_steps; i++) {
        if (k.taken[i])
            continue;
        if (!pick(&k, i, false))
            break;
    }
    free(weight);
    free(order);
    free(k.taken);
    sort_windows(b);
    budget_why(b);
    return 0;
}

/* Leave out the last chosen steps (rank SIZE_MAX) while the steps' bytes and the fixed part pass
 * room; never the slowest and the median (ranks 0 and 1). The ranks are the order of choice, 0
 * to n_keep - 1: walked from the last through their inverse (a scan for the highest each time was
 * quadratic: a million steps chosen took minutes). */
static void leave_out_last(gt_convert_budget *b, const uint64_t *bytes, uint64_t *in_steps,
                           uint64_t fixed, uint64_t room)
{
    size_t *at_rank = gt_xrealloc(NULL, (b->n_keep ? b->n_keep : 1) * sizeof *at_rank);
    for (size_t i = 0; i < b->n_keep; i++)
        at_rank[i] = SIZE_MAX;
    for (size_t i = 0; i < b->n_keep; i++)
        if (b->rank[i] < b->n_keep)
            at_rank[b->rank[i]] = i;
    size_t left = b->n_keep;
    for (size_t r = b->n_keep; r-- > 0 && fixed + *in_steps > room && left > 2;) {
        size_t i = at_rank[r];
        if (i == SIZE_MAX)
            continue;
        *in_steps -= bytes[i];
        b->rank[i] = SIZE_MAX;
        left--;
    }
    free(at_rank);
}

uint64_t gt_convert_budget_fit(const char *const *paths, int n, int format, uint64_t max_bytes,
                               gt_convert_budget *b)
{
    uint64_t measured = 0;
    FILE *nowhere = b->by_steps ? fopen("/dev/null", "w") : NULL;
    uint64_t *bytes = nowhere ? calloc(b->n_keep, sizeof *bytes) : NULL;
    gt_convert_stats st;
    gt_convert_opts o = {
        .format = format, .quiet = 1, .keep = b->keep, .n_keep = b->n_keep, .keep_bytes = bytes};
    if (bytes && gt_convert_run(paths, n, nowhere, &o, &st) <= 1) {
        uint64_t in_steps = 0;
        for (size_t i = 0; i < b->n_keep; i++)
            in_steps += bytes[i];
        uint64_t fixed = st.bytes_out > in_steps ? st.bytes_out - in_steps : 0;
        uint64_t room = (uint64_t)((double)max_bytes * GT_CONVERT_FIT_SHARE);
        /* Leave out the last chosen (never the slowest and the median: ranks 0 and 1) until the
         * steps fit beside what every output has (descriptors, NVTX ranges, strings). */
        leave_out_last(b, bytes, &in_steps, fixed, room);
        size_t out = 0;
        for (size_t i = 0; i < b->n_keep; i++)
            if (b->rank[i] != SIZE_MAX) {
                b->keep[out] = b->keep[i];
                b->step[out] = b->step[i];
                b->rank[out++] = b->rank[i];
            }
        b->n_keep = out;
        measured = fixed + in_steps;
        budget_why(b);
    }
    free(bytes);
    if (nowhere)
        fclose(nowhere);
    merge_windows(b);
    return measured;
}

void gt_convert_budget_free(gt_convert_budget *b)
{
    free(b->keep);
    free(b->step);
    free(b->rank);
    memset(b, 0, sizeof *b);
}
