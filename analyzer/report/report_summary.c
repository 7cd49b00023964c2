/* report_summary.c — the per-rank summary (report_summary.h): identity, steps with their idle time
 * by cause, and every collective the process entered, as offsets from its first timestamp.
 *
 * Why rows of numbers rather than objects: a rank of a 1,000-rank job runs thousands of
 * collectives; as arrays of integers a hundred steps stay in kilobytes (docs/performance.md), and
 * the analysis of 1,024 of them reads them in seconds. Times stay in ns: matching across ranks
 * compares ends that lie microseconds apart. */
#include "report_summary.h"

#include <string.h>

static json_int_t rel(const gt_proc *p, uint64_t t)
{
    return t >= p->t_min ? (json_int_t)(t - p->t_min) : 0;
}

/* Idle time of [a, b) by cause, from the gaps (sorted, disjoint) from *g on; *g advances past the
 * gaps that end before b. */
static void step_idle(const gt_proc *p, size_t *g, uint64_t a, uint64_t b,
                      uint64_t out[GT_IDLE_CAUSE_COUNT])
{
    memset(out, 0, GT_IDLE_CAUSE_COUNT * sizeof *out);
    while (*g < p->n_gaps && p->gaps[*g].end_ns <= a)
        (*g)++;
    for (size_t i = *g; i < p->n_gaps && p->gaps[i].start_ns < b; i++) {
        const gt_gap *gp = &p->gaps[i];
        uint64_t x = gp->start_ns > a ? gp->start_ns : a, y = gp->end_ns < b ? gp->end_ns : b;
        if (y > x && gp->cause >= 0 && gp->cause < GT_IDLE_CAUSE_COUNT)
            out[gp->cause] += y - x;
    }
}

static json_t *columns_json(const char *first, const char *second)
{
    json_t *c = json_pack("[s, s]", first, second);
    for (int k = 0; k < GT_IDLE_CAUSE_COUNT; k++)
        json_array_append_new(c, json_string(gt_idle_cause_key(k)));
    return c;
}

static json_t *steps_json(const gt_proc *p)
{
    json_t *rows = json_array();
    size_t g = 0;
    for (size_t i = 0; i < p->n_steps; i++) {
        const gt_step *s = &p->steps[i];
        uint64_t idle[GT_IDLE_CAUSE_COUNT];
        step_idle(p, &g, s->start_ns, s->end_ns, idle);
        json_t *row = json_pack("[I, I]", rel(p, s->start_ns), rel(p, s->end_ns));
        for (int k = 0; k < GT_IDLE_CAUSE_COUNT; k++)
            json_array_append_new(row, json_integer((json_int_t)idle[k]));
        json_array_append_new(rows, row);
    }
    return json_pack("{s:s, s:I, s:f, s:[I, I], s:o, s:o}", "source",
                     gt_step_source_kind_name(p->step_source_kind), "warmup",
                     (json_int_t)p->warmup_steps, "median_ms", p->step_ms_median, "steady",
                     rel(p, p->steady_start_ns), rel(p, p->steady_end_ns), "columns",
                     columns_json("start_ns", "end_ns"), "rows", rows);
}

/* The step a collective belongs to: the first one ending after its end (as model_ranks.c assigns
 * it), -1 past the last step or before the first. */
static long long step_of(const gt_proc *p, size_t *s, uint64_t done)
{
    while (*s < p->n_steps && p->steps[*s].end_ns <= done)
        (*s)++;
    return *s < p->n_steps && p->steps[*s].start_ns <= done ? (long long)*s : -1;
}

static json_t *collectives_json(const gt_proc *p)
{
    json_t *rows = json_array();
    size_t s = 0;
    for (size_t i = 0; i < p->n_collectives; i++) { /* in order of their end */
        const gt_collective *c = &p->collectives[i];
        json_array_append_new(rows, json_pack("[i, I, I, I]", c->kind,
                                              (json_int_t)step_of(p, &s, c->done_ns),
                                              rel(p, c->arrive_ns), rel(p, c->done_ns)));
    }
    return json_pack("{s:I, s:I, s:[s, s, s, s], s:o}", "count", (json_int_t)p->n_collectives,
                     "dropped", (json_int_t)p->collectives_dropped, "columns", "kind", "step",
                     "arrive_ns", "done_ns", "rows", rows);
}

static json_t *idle_json(const gt_proc *p)
{
    json_t *o = json_object();
    for (int k = 0; k < GT_IDLE_CAUSE_COUNT; k++)
        json_object_set_new(o, gt_idle_cause_key(k),
                            json_pack("[f, f]", (double)p->idle_cause_ns[k] / 1e6,
                                      (double)p->steady_idle_cause_ns[k] / 1e6 /
                                          (p->steady_steps > 0 ? p->steady_steps : 1)));
    return o;
}

static json_t *gpu_json(const gt_proc *p)
{
    int d = gt_proc_gpu_device(p);
    const char *name = "";
    for (int i = 0; d >= 0 && i < p->hdr.runtime.device_count && i < GT_MAX_DEVICES; i++)
        if (p->hdr.runtime.devices[i].ordinal == d)
            name = p->hdr.runtime.devices[i].name;
    return json_pack("{s:i, s:s#}", "device", d, "name", name, strnlen(name, 64));
}

static json_t *proc_json(const gt_proc *p)
{
    const char *trace = p->path ? strrchr(p->path, '/') : NULL;
    json_t *o = json_pack(
        "{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:o, s:s, s:I, s:I, s:b, s:b}", "trace",
        trace ? trace + 1 : (p->path ? p->path : ""), "host", p->host ? p->host : p->hdr.host,
        "pid", p->hdr.pid, "ppid", p->hdr.ppid, "rank", p->hdr.rank, "local_rank",
        p->hdr.local_rank, "world_size", p->hdr.world_size, "gpu", gpu_json(p), "exe",
        p->exe ? p->exe : "", "t0_ns", (json_int_t)p->t_min, "records_lost",
        (json_int_t)p->records_lost, "damaged", p->damaged, "gpu_sampled", p->gpu_sampled);
    json_object_set_new(o, "steps", steps_json(p));
    json_object_set_new(o, "idle_ms", idle_json(p));
    json_object_set_new(o, "collectives", collectives_json(p));
    return o;
}

json_t *gt_summary_json(const gt_run *run)
{
    json_t *procs = json_array();
    for (size_t i = 0; i < run->n; i++)
        if (gt_proc_has_data(&run->procs[i]))
            json_array_append_new(procs, proc_json(&run->procs[i]));
    return json_pack("{s:s, s:i, s:s, s:o}", "schema", GT_SUMMARY_SCHEMA, "schema_version",
                     GT_SUMMARY_SCHEMA_VERSION, "gputrace_version",
#ifdef GT_VERSION
                     GT_VERSION,
#else
                     "dev",
#endif
                     "processes", procs);
}
