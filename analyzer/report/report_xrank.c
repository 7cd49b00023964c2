/* report_xrank.c — `gputrace report SUMMARY...`: the straggler, per step and per collective, what
 * lateness follows, and the spread of step times across ranks and hosts (report_xrank.h). The
 * text lists the latest steps and collectives (--top); the JSON lists them all. */
#include "report_xrank.h"

#include <stdlib.h>

#include "report_out.h"
#include "textfmt.h"
#include "util.h"

static const gt_xrank_proc *rank_proc(const gt_xrank *x, size_t k)
{
    return &x->procs[x->ranks[k]];
}

static const char *kind_name(int kind)
{
    return kind == GT_COLL_NCCL ? "NCCL" : kind == GT_COLL_CPU ? "CPU (gloo)" : "no";
}

static const char *gpu_text(int gpu)
{
    return gpu >= 0 ? gt_fmt("%d", gpu) : "?";
}

static const char *rank_where(const gt_xrank *x, size_t k)
{
    const gt_xrank_proc *p = rank_proc(x, k);
    return gt_fmt("rank %d (host %s, GPU %s)", p->rank, p->host, gpu_text(p->gpu));
}

static void print_straggler(const gt_xrank *x, FILE *out)
{
    const gt_straggler *st = &x->straggler;
    size_t s = 0;
    while (s < x->n_ranks && rank_proc(x, s)->rank != st->rank)
        s++;
    fprintf(out, "Straggler: %s, last at %s of %s matched %s; last in %zu of %s: late %s %s\n",
            rank_where(x, s), gt_count((double)st->last_at), gt_count((double)st->collectives),
            st->kind == GT_COLL_NCCL ? "NCCL collectives" : "CPU collectives", st->last_in,
            gt_counted((double)st->rounds, st->per_step ? "step" : "collective",
                       st->per_step ? "steps" : "collectives"),
            gt_dur(st->lateness_ms), st->per_step ? "a step (median)" : "in all");
    fprintf(out, "  %s on average; the other ranks wait %s %s for it; the step takes %s\n",
            gt_dur(x->rank_stat[s].late_ms), gt_dur(st->others_wait_ms),
            st->per_step ? "a step" : "in all", gt_dur(st->period_ms));
}

static void print_follows(const gt_xrank *x, FILE *out)
{
    size_t n = x->n_steps, c = x->follows_steps;
    const char *unit = x->per_step ? "steps" : "collectives";
    switch (x->follows) {
    case GT_FOLLOWS_RANK:
        fprintf(out, "Lateness follows rank %d: the latest in %zu of %zu %s\n",
                rank_proc(x, x->follows_index)->rank, c, n, unit);
        break;
    case GT_FOLLOWS_HOST:
        fprintf(out, "Lateness follows host %s: one of its %zu ranks the latest in %zu of %zu %s\n",
                x->hosts[x->follows_index].name, x->hosts[x->follows_index].ranks, c, n, unit);
        break;
    case GT_FOLLOWS_GPU:
        fprintf(out, "Lateness follows GPU %zu (on several hosts): the latest in %zu of %zu %s\n",
                x->follows_index, c, n, unit);
        break;
    case GT_FOLLOWS_NONE:
        fprintf(out,
                "Lateness follows no rank, host or GPU: %zu different ranks the latest in %zu "
                "%s\n",
                x->straggler_ranks, n, unit);
        break;
    default:
        fprintf(out, "Lateness: too few %s (%zu) to tell what it follows\n", unit, n);
    }
}

static void print_step_times(const gt_xrank *x, FILE *out)
{
    if (!x->n_ranks || x->step_ms_max <= 0) {
        fprintf(out, "Step time: no steps in the summaries\n");
        return;
    }
    fprintf(out, "Step time across ranks: median %s; fastest rank %d %s, slowest rank %d %s\n",
            gt_dur(x->step_ms_median), rank_proc(x, x->fastest)->rank, gt_dur(x->step_ms_min),
            rank_proc(x, x->slowest)->rank, gt_dur(x->step_ms_max));
    fprintf(out, "  within one step the ranks differ by %s (median), at most %s (step %zu)\n",
            gt_dur(x->step_spread_median_ms), gt_dur(x->step_spread_max_ms), x->step_spread_max_at);
    if (x->n_hosts < 2)
        return;
    size_t lo = 0, hi = 0;
    for (size_t h = 1; h < x->n_hosts; h++) {
        lo = x->hosts[h].step_ms < x->hosts[lo].step_ms ? h : lo;
        hi = x->hosts[h].step_ms > x->hosts[hi].step_ms ? h : hi;
    }
    fprintf(out, "  by host (median of its ranks): fastest %s %s, slowest %s %s\n",
            x->hosts[lo].name, gt_dur(x->hosts[lo].step_ms), x->hosts[hi].name,
            gt_dur(x->hosts[hi].step_ms));
}

static int step_later(const void *a, const void *b)
{
    const gt_xrank_step *x = a, *y = b;
    return x->late_ms > y->late_ms ? -1 : x->late_ms < y->late_ms;
}

static int coll_later(const void *a, const void *b)
{
    const gt_xrank_coll *x = a, *y = b;
    return x->late_ms > y->late_ms ? -1 : x->late_ms < y->late_ms;
}

static void print_steps(const gt_xrank *x, FILE *out, int top_n)
{
    gt_xrank_step *s = gt_xmalloc((x->n_steps + 1) * sizeof *s);
    memcpy(s, x->steps, x->n_steps * sizeof *s);
    qsort(s, x->n_steps, sizeof *s, step_later);
    static const char *const head[] = {"step", "straggler", "host", "GPU", "late", "collectives"};
    gt_table t;
    gt_table_init(&t, 6, head);
    t.limit = (size_t)top_n;
    t.more = " (--top 0 lists all)";
    for (size_t i = 0; i < x->n_steps; i++) {
        const gt_xrank_proc *p = rank_proc(x, s[i].straggler);
        gt_table_row(&t, gt_fmt("%zu", s[i].slot), gt_fmt("rank %d", p->rank), p->host,
                     gpu_text(p->gpu), gt_dur(s[i].late_ms), gt_fmt("%zu", s[i].collectives));
    }
    fprintf(out, "\n%s, latest first\n",
            x->per_step ? "Steps and their straggler"
                        : "Collectives (no steps) and their last rank");
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(s);
}

static void print_collectives(const gt_xrank *x, FILE *out, int top_n)
{
    if (!x->per_step)
        return; /* the steps table lists them */
    gt_xrank_coll *c = gt_xmalloc((x->n_colls + 1) * sizeof *c);
    memcpy(c, x->colls, x->n_colls * sizeof *c);
    qsort(c, x->n_colls, sizeof *c, coll_later);
    static const char *const head[] = {"collective", "step", "last rank",
                                       "host",       "late", "first to last"};
    gt_table t;
    gt_table_init(&t, 6, head);
    t.limit = (size_t)top_n;
    t.more = " (--top 0 lists all)";
    for (size_t i = 0; i < x->n_colls; i++) {
        const gt_xrank_proc *p = rank_proc(x, c[i].last);
        gt_table_row(&t, gt_fmt("#%zu", c[i].index), gt_fmt("%zu", c[i].slot),
                     gt_fmt("rank %d", p->rank), p->host, gt_dur(c[i].late_ms),
                     gt_dur(c[i].spread_ms));
    }
    fprintf(out, "\nCollectives and their last rank, latest first\n");
    gt_table_print(&t, out, "  ");
    gt_table_free(&t);
    free(c);
}

void gt_xrank_print(const gt_xrank *x, FILE *out, int top_n)
{
    fprintf(out, "gputrace report: %s from %s (%s), %s\n",
            gt_counted((double)x->n_ranks, "rank", "ranks"),
            gt_counted((double)(x->files - x->files_bad), "summary", "summaries"),
            gt_counted((double)x->n_hosts, "host", "hosts"),
            x->kind >= 0 ? gt_fmt("%s collectives", kind_name(x->kind))
                         : "no collective every rank ran");
    if (x->kind >= 0)
        fprintf(out,
                "Matched: %s of the first rank's %s on the ranks that waited for them%s; %s "
                "counted (%s)\n",
                gt_count((double)(x->ref_collectives - x->unmatched)),
                gt_count((double)x->ref_collectives),
                x->unmatched ? " (on no other rank: the rest)" : "", gt_count((double)x->n_colls),
                x->use_all ? "all: fewer than 3 in the steady window" : "the steady window");
    if (x->straggler.found) {
        print_straggler(x, out);
        print_follows(x, out);
    } else if (x->n_ranks >= 2) {
        fprintf(out, "Straggler: none found (no collective matched on two ranks)\n");
    } else {
        fprintf(out, "Straggler: needs 2 ranks with collectives; the summaries hold %zu\n",
                x->n_ranks);
    }
    print_step_times(x, out);
    if (x->straggler.found) {
        print_steps(x, out, top_n);
        print_collectives(x, out, top_n);
    }
}

static json_t *straggler_json(const gt_xrank *x)
{
    const gt_straggler *st = &x->straggler;
    if (!st->found)
        return json_null();
    size_t s = 0;
    while (s < x->n_ranks && rank_proc(x, s)->rank != st->rank)
        s++;
    const gt_xrank_proc *p = rank_proc(x, s);
    return json_pack("{s:i, s:i, s:s, s:i, s:s, s:b, s:I, s:I, s:I, s:I, s:f, s:f, s:f}", "rank",
                     st->rank, "pid", st->pid, "host", p->host, "gpu", p->gpu, "kind",
                     st->kind == GT_COLL_NCCL ? "nccl" : "cpu", "per_step", st->per_step, "steps",
                     (json_int_t)st->rounds, "last_in_steps", (json_int_t)st->last_in,
                     "collectives", (json_int_t)st->collectives, "last_at_collectives",
                     (json_int_t)st->last_at, "lateness_ms", st->lateness_ms, "period_ms",
                     st->period_ms, "others_wait_ms", st->others_wait_ms);
}

static json_t *follows_json(const gt_xrank *x)
{
    json_t *o =
        json_pack("{s:s, s:I, s:I, s:I}", "what", gt_xrank_follows_name(x->follows), "steps",
                  (json_int_t)x->n_steps, "late_in_steps", (json_int_t)x->follows_steps,
                  "straggler_ranks", (json_int_t)x->straggler_ranks);
    if (x->follows == GT_FOLLOWS_RANK)
        json_object_set_new(o, "rank", json_integer(rank_proc(x, x->follows_index)->rank));
    else if (x->follows == GT_FOLLOWS_HOST)
        json_object_set_new(o, "host", json_string(x->hosts[x->follows_index].name));
    else if (x->follows == GT_FOLLOWS_GPU)
        json_object_set_new(o, "gpu", json_integer((json_int_t)x->follows_index));
    return o;
}

static json_t *step_time_json(const gt_xrank *x)
{
    json_t *hosts = json_array();
    for (size_t h = 0; h < x->n_hosts; h++)
        json_array_append_new(hosts, json_pack("{s:s, s:I, s:f, s:I}", "host", x->hosts[h].name,
                                               "ranks", (json_int_t)x->hosts[h].ranks, "step_ms",
                                               x->hosts[h].step_ms, "straggler_in_steps",
                                               (json_int_t)x->hosts[h].last_in));
    int have = x->n_ranks > 0;
    return json_pack("{s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:I, s:o}", "median_ms",
                     x->step_ms_median, "min_ms", x->step_ms_min, "max_ms", x->step_ms_max,
                     "fastest_rank", have ? rank_proc(x, x->fastest)->rank : -1, "slowest_rank",
                     have ? rank_proc(x, x->slowest)->rank : -1, "step_spread_median_ms",
                     x->step_spread_median_ms, "step_spread_max_ms", x->step_spread_max_ms,
                     "step_spread_max_at", (json_int_t)x->step_spread_max_at, "hosts", hosts);
}

static json_t *ranks_json(const gt_xrank *x)
{
    json_t *a = json_array();
    for (size_t k = 0; k < x->n_ranks; k++) {
        const gt_xrank_proc *p = rank_proc(x, k);
        const gt_xrank_rank_stat *r = &x->rank_stat[k];
        json_array_append_new(
            a,
            json_pack("{s:i, s:i, s:s, s:i, s:s, s:f, s:f, s:f, s:I, s:I, s:I}", "rank", p->rank,
                      "pid", p->pid, "host", p->host, "gpu", p->gpu, "summary", p->file, "step_ms",
                      r->step_ms, "late_ms_per_step", r->late_ms, "wait_ms_per_step", r->wait_ms,
                      "last_at_collectives", (json_int_t)r->last_at, "straggler_in_steps",
                      (json_int_t)r->last_in, "records_lost", (json_int_t)p->records_lost));
    }
    return a;
}

static json_t *steps_json(const gt_xrank *x)
{
    json_t *a = json_array();
    for (size_t i = 0; i < x->n_steps; i++) {
        const gt_xrank_step *s = &x->steps[i];
        const gt_xrank_proc *p = rank_proc(x, s->straggler);
        json_array_append_new(a, json_pack("{s:I, s:i, s:s, s:i, s:f, s:I}", "step",
                                           (json_int_t)s->slot, "rank", p->rank, "host", p->host,
                                           "gpu", p->gpu, "late_ms", s->late_ms, "collectives",
                                           (json_int_t)s->collectives));
    }
    return a;
}

static json_t *collectives_json(const gt_xrank *x)
{
    json_t *a = json_array();
    for (size_t i = 0; i < x->n_colls; i++) {
        const gt_xrank_coll *c = &x->colls[i];
        json_array_append_new(a, json_pack("{s:I, s:I, s:i, s:f, s:f}", "index",
                                           (json_int_t)c->index, "step", (json_int_t)c->slot,
                                           "rank", rank_proc(x, c->last)->rank, "late_ms",
                                           c->late_ms, "spread_ms", c->spread_ms));
    }
    return a;
}

json_t *gt_xrank_json(const gt_xrank *x)
{
    json_t *o = json_pack("{s:s, s:i, s:{s:I, s:I, s:I}, s:I, s:I, s:s, s:b, s:I, s:I}", "schema",
                          "gputrace-xrank", "schema_version", GT_XRANK_SCHEMA_VERSION, "inputs",
                          "files", (json_int_t)x->files, "unreadable", (json_int_t)x->files_bad,
                          "processes", (json_int_t)x->n_procs, "rank_count", (json_int_t)x->n_ranks,
                          "host_count", (json_int_t)x->n_hosts, "kind",
                          x->kind == GT_COLL_NCCL  ? "nccl"
                          : x->kind == GT_COLL_CPU ? "cpu"
                                                   : "none",
                          "all_matches_counted", x->use_all, "reference_collectives",
                          (json_int_t)x->ref_collectives, "unmatched", (json_int_t)x->unmatched);
    json_object_set_new(o, "straggler", straggler_json(x));
    json_object_set_new(o, "follows", follows_json(x));
    json_object_set_new(o, "step_time", step_time_json(x));
    json_object_set_new(o, "ranks", ranks_json(x));
    json_object_set_new(o, "steps", steps_json(x));
    json_object_set_new(o, "collectives", collectives_json(x));
    return o;
}
