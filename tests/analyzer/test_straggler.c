/* test_straggler.c — the straggler by the collective (issue 30), over the matrix of the issue on
 * simulated DDP-over-gloo ranks (scenario_write_ddp: buckets all-reduced by a gloo thread as the
 * backward fills them): one rank spends delay_ns without CUDA calls before its forward, inside
 * its backward (after the first bucket, as a hook does) or in its data loading (before the batch's
 * copy); with and without a sync each step; the slow rank 0 or 1 (or the last); 2 and 4 ranks; a
 * convolution-like model (long kernels, three buckets, a longer transfer) and an MLP-like one.
 * Sleeping and CPU work write the same trace (no call either way), so the matrix's sleep/busy
 * axis is one case here; the report says they look alike. Balanced ranks have no straggler.
 *
 * For each delayed case the truth is what the delay costs the job: the step's growth against the
 * same ranks without it (less than the delay where the delayed rank's CPU was ahead of its GPU, or
 * its gloo thread still busy: a hook's sleep overlaps the queued backward). The straggler is the
 * slow rank, late by that per step; the others wait about that long in the collective (their idle
 * cause); the slow rank is never described as waiting; and what it did instead is CPU work
 * without CUDA calls (data loading for the delay in data loading), most of that time.
 * Usage: test_straggler WORKDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "model.h"
#include "test_advice_util.h"
#include "test_report_synth.h"
#include "util.h"
#include "../gt_check.h"

#define MS 1000000ull

static const char *workdir;

typedef struct ddp_case {
    const char *name;
    int world, slow, where, sync, conv;
    uint64_t delay_ns;
} ddp_case;

static scenario rank_scenario(const ddp_case *c, int r)
{
    scenario sc = scenario_healthy();
    sc.rank = r;
    sc.world_size = c->world;
    sc.pid = 6000 + r;
    sc.steps = 25;
    sc.nvtx = 1;
    sc.cudnn_ops = 0;
    sc.pinned_h2d_bytes = 1 << 20; /* the batch */
    sc.item_every_step = c->sync;
    sc.kernels_per_step = c->conv ? 45 : 12;
    sc.kernel_ns = c->conv ? 150000 : 60000;
    sc.buckets = c->conv ? 3 : 2;
    sc.gloo_ns = c->conv ? 5 * MS : 1 * MS;
    sc.broadcast_ns = c->conv ? 300000 : 0; /* batch norm's buffers */
    if (r == c->slow) {
        sc.delay_ns = c->delay_ns;
        sc.delay_where = c->where;
    }
    return sc;
}

static const gt_proc *proc_of_rank(const gt_run *run, int rank)
{
    for (size_t i = 0; i < run->n; i++)
        if (run->procs[i].hdr.rank == rank && gt_proc_has_data(&run->procs[i]))
            return &run->procs[i];
    return NULL;
}

static double per_step(const gt_proc *p, int cause)
{
    return (double)p->steady_idle_cause_ns[cause] / 1e6 / p->steady_steps;
}

static void check_delayed(const ddp_case *c, const gt_run *run, const gt_advice_list *l,
                          double balanced_ms)
{
    const gt_straggler *st = &run->straggler;
    const gt_proc *ref = proc_of_rank(run, 0);
    double want = ref ? ref->step_ms_median - balanced_ms : 0;
    CHECK(want > 0.6 * (double)c->delay_ns / 1e6 && want <= (double)c->delay_ns / 1e6 + 0.5,
          "%s: the delay of %.1f ms costs %.2f ms a step", c->name, (double)c->delay_ns / 1e6,
          want);
    CHECK(st->found && st->rank == c->slow && st->kind == GT_COLL_CPU,
          "%s: straggler rank %d (found %d), rank %d slow", c->name, st->rank, st->found, c->slow);
    CHECK(fabs(st->lateness_ms - want) <= 0.15 * want, "%s: %.2f ms late per step, %.2f written",
          c->name, st->lateness_ms, want);
    CHECK(st->per_step && st->last_in >= st->rounds * 9 / 10, "%s: last in %zu of %zu steps",
          c->name, st->last_in, st->rounds);
    int what = c->where == DELAY_DATA ? GT_LATE_DATA_LOADING : GT_LATE_HOST_WORK;
    CHECK(st->instead_ms[what] > 0.75 * want && st->instead_ms[what] < 1.1 * want,
          "%s: instead %s %.2f ms per step, the delay %.2f (gpu %.2f, calls %.2f, host %.2f, data "
          "%.2f)",
          c->name, gt_late_what_name(what), st->instead_ms[what], want, st->instead_ms[GT_LATE_GPU],
          st->instead_ms[GT_LATE_CUDA_CALL], st->instead_ms[GT_LATE_HOST_WORK],
          st->instead_ms[GT_LATE_DATA_LOADING]);
    /* its own time, by thread role: until it handed the data over, the time its program made no
     * call is its own work even while its gloo thread moved the earlier buckets (a hook's sleep
     * on the autograd thread overlaps bucket 0's transfer) */
    CHECK(st->instead_ms[GT_LATE_COLLECTIVE] < 0.1 * want,
          "%s: instead other collectives %.2f ms per step, the delay %.2f", c->name,
          st->instead_ms[GT_LATE_COLLECTIVE], want);
    const gt_advice *a = advice_find(l, "straggler", c->slow);
    CHECK(a && strstr(a->message, gt_late_what_name(what)) &&
              strstr(a->message, gt_fmt("Rank %d ", c->slow)),
          "%s: straggler advice %s", c->name, a ? a->message : "none");
    for (int r = 0; r < c->world; r++) {
        const gt_proc *p = proc_of_rank(run, r);
        if (!p)
            continue;
        const gt_advice *idle = advice_find(l, "gpu-idle", r);
        if (r == c->slow) { /* never waiting: its collective time is the transfer */
            CHECK(per_step(p, GT_IDLE_COLLECTIVE) < 0.1 * want,
                  "%s: the slow rank %d waits %.2f ms a step", c->name, r,
                  per_step(p, GT_IDLE_COLLECTIVE));
            CHECK(!idle || !strstr(idle->message, "wait"), "%s: the slow rank told it waits: %s",
                  c->name, idle ? idle->message : "");
            continue;
        }
        /* the others wait in the collective about the delay (less the overlap with their own
         * GPU work on the next bucket) */
        double wait = per_step(p, GT_IDLE_COLLECTIVE);
        CHECK(wait > 0.6 * want && wait < 1.1 * want, "%s: rank %d waits %.2f ms a step, %.2f late",
              c->name, r, wait, want);
        CHECK(p->steady_idle_cause_ns[GT_IDLE_DATA_LOADING] <
                  p->steady_idle_cause_ns[GT_IDLE_COLLECTIVE],
              "%s: rank %d's wait read as data loading", c->name, r);
        CHECK(!idle || (idle->severity == GT_SEV_INFO &&
                        strstr(idle->message, gt_fmt("waits for rank %d", c->slow))),
              "%s: rank %d's idle: %s", c->name, r, idle ? idle->message : "");
    }
}

/* Writes and loads the case; the median step of rank 0, or -1. */
static double run_case(const ddp_case *c, double balanced_ms)
{
    double step = -1;
    scenario scs[8];
    char buf[8][600];
    const char *paths[8];
    for (int r = 0; r < c->world; r++) {
        scs[r] = rank_scenario(c, r);
        snprintf(buf[r], sizeof buf[r], "%s/%s-rank%d.gtrace", workdir, c->name, r);
        paths[r] = buf[r];
    }
    CHECK(scenario_write_ddp(paths, scs, c->world) == 0, "%s: write", c->name);
    gt_run run = {0};
    CHECK(gt_run_load(&run, paths, c->world, 0) == 0, "%s: load", c->name);
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_proc *ref = proc_of_rank(&run, 0);
    if (ref && ref->n_steps >= 2)
        step = ref->step_ms_median;
    if (c->slow >= 0)
        check_delayed(c, &run, &l, balanced_ms);
    else
        CHECK(!advice_find(&l, "straggler", -1), "%s: a straggler among balanced ranks: %s",
              c->name, advice_find(&l, "straggler", -1)->message);
    gt_advice_list_free(&l);
    gt_run_free(&run);
    return step;
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    static const char *const where_names[] = {"forward", "backward", "data"};
    int cases = 0;
    for (int sync = 0; sync <= 1; sync++)
        for (int world = 2; world <= 4; world += 2)
            for (int conv = 0; conv <= 1; conv++) {
                char name[96];
                snprintf(name, sizeof name, "balanced_%s_w%d_%s", sync ? "sync" : "nosync", world,
                         conv ? "conv" : "mlp");
                ddp_case b = {name, world, -1, 0, sync, conv, 0};
                double balanced = run_case(&b, 0);
                CHECK(balanced > 0, "%s: steps", name);
                cases++;
                for (int where = DELAY_FORWARD; where <= DELAY_DATA; where++)
                    for (int last = 0; last <= 1; last++) {
                        int slow = last ? world - 1 : 0;
                        snprintf(name, sizeof name, "%s_%s_w%d_%s_slow%d", where_names[where],
                                 sync ? "sync" : "nosync", world, conv ? "conv" : "mlp", slow);
                        ddp_case c = {name, world, slow, where, sync, conv, 20 * MS};
                        run_case(&c, balanced);
                        cases++;
                    }
            }
    if (failures)
        fprintf(stderr, "%d failure(s) in %d cases\n", failures, cases);
    else
        printf("test_straggler: all passed (%d cases)\n", cases);
    return failures ? 1 : 0;
}
