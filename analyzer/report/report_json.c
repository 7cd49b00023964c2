/* report_json.c — the whole report as one JSON object (docs/report-schema.md): the processes
 * (report_out.c), the verdict (report_verdict.c), the ranks, the straggler and the advice. What
 * `report --json` prints and the HTML page (report_html.c) draws from; its own unit so that the
 * verdict and the per-process JSON need not know each other. */
#include "report_json.h"

#include "report_out.h"
#include "report_verdict.h"

static json_t *ranks_json(const gt_run *run)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->hdr.rank < 0 || !gt_proc_has_data(p))
            continue;
        json_array_append_new(
            arr,
            json_pack("{s:i, s:i, s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I}", "rank",
                      p->hdr.rank, "pid", p->hdr.pid, "host", p->host ? p->host : "", "step_ms",
                      p->n_steps >= 2 ? json_real(p->step_ms_median) : json_null(),
                      "nccl_ms_per_step", p->steady_nccl_ms_per_step, "sync_ms_per_step",
                      p->steady_sync_ms_per_step, "copy_ms_per_step", p->steady_copy_ms_per_step,
                      "idle_ms_per_step", gt_adv_idle_ms(p), "busy_pct", p->steady_busy_pct,
                      "late_ms_per_step", p->coll_late_ms_per_step, "wait_ms_per_step",
                      p->coll_wait_ms_per_step, "last_at_collectives", (json_int_t)p->coll_last_at,
                      "collectives", (json_int_t)p->coll_matched));
    }
    return arr;
}

/* The rank that reaches the collectives last (model_ranks.c), null when none were matched. */
static json_t *straggler_json(const gt_run *run)
{
    const gt_straggler *st = &run->straggler;
    if (!st->found)
        return json_null();
    json_t *instead = json_object();
    for (int w = 0; w < GT_LATE_COUNT; w++)
        json_object_set_new(instead, gt_late_what_key(w), json_real(st->instead_ms[w]));
    return json_pack("{s:i, s:i, s:s, s:b, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:o}", "rank",
                     st->rank, "pid", st->pid, "kind", st->kind == GT_COLL_NCCL ? "nccl" : "cpu",
                     "per_step", st->per_step, "steps", (json_int_t)st->rounds, "last_in_steps",
                     (json_int_t)st->last_in, "collectives", (json_int_t)st->collectives,
                     "last_at_collectives", (json_int_t)st->last_at, "lateness_ms", st->lateness_ms,
                     "period_ms", st->period_ms, "others_wait_ms", st->others_wait_ms, "instead_ms",
                     instead);
}

/* The whole report as JSON (docs/report-schema.md): what --json prints and the HTML page
 * renders. */
json_t *gt_report_json(const gt_run *run, const gt_advice_list *adv, int top_n)
{
    json_t *procs = json_array(), *advice = json_array();
    for (size_t i = 0; i < run->n; i++)
        json_array_append_new(procs, gt_proc_to_json(&run->procs[i], top_n));
    for (size_t i = 0; i < adv->n; i++)
        json_array_append_new(advice, gt_advice_to_json(&adv->items[i]));
    gt_verdict v;
    gt_verdict_build(run, adv, &v);
    return json_pack("{s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "schema", "gputrace-report",
                     "schema_version", GT_REPORT_SCHEMA_VERSION, "gputrace_version",
#ifdef GT_VERSION
                     GT_VERSION,
#else
                     "dev",
#endif
                     "verdict", gt_verdict_json(&v), "processes", procs, "ranks", ranks_json(run),
                     "straggler", straggler_json(run), "advice", advice);
}
