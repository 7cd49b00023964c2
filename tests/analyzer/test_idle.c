/* test_idle.c — where the GPU's idle time went (issue 21 item 3) on synthetic traces: each gap's
 * cause (data loading when a batch copy ends it or DataLoader workers exist, host work without
 * either, waiting in a collective), and across ranks the rank that reaches the NCCL collectives
 * last with its lateness per step. Usage: test_idle WORKDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "model.h"
#include "test_advice_util.h"
#include "test_report_synth.h"
#include "../gt_check.h"

static const char *workdir;

/* The cause with most steady idle time among those where the CPU made no CUDA call. */
static int top_cause_without_calls(const gt_proc *p)
{
    int best = GT_IDLE_UNKNOWN;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (c != GT_IDLE_CUDA_CALL && p->steady_idle_cause_ns[c] > p->steady_idle_cause_ns[best])
            best = c;
    return best;
}

static double steady_ms_per_step(const gt_proc *p, int cause)
{
    return (double)p->steady_idle_cause_ns[cause] / 1e6 / p->steady_steps;
}

static const gt_proc *proc_of_rank(const gt_run *run, int rank)
{
    for (size_t i = 0; i < run->n; i++)
        if (run->procs[i].hdr.rank == rank && gt_proc_has_data(&run->procs[i]))
            return &run->procs[i];
    return NULL;
}

/* The scenario's process, written and loaded as a run folder (with the workers beside it). */
static const gt_proc *load_process(const char *name, scenario *sc, gt_run *run)
{
    char dir[600];
    CHECK(run_folder_load(workdir, name, sc, run, dir, sizeof dir) == 0, "%s: load", name);
    for (size_t i = 0; i < run->n; i++)
        if (run->procs[i].hdr.pid == sc->pid)
            return &run->procs[i];
    CHECK(0, "%s: the main process", name);
    return NULL;
}

/* One process: write, load, check the top cause and the advice. */
static void one_process(const char *name, scenario sc_in, int want_cause, const char *want_text)
{
    scenario copy = sc_in, *sc = &copy;
    gt_run run;
    const gt_proc *p = load_process(name, sc, &run);
    if (p) {
        int got = top_cause_without_calls(p);
        CHECK(got == want_cause, "%s: idle cause '%s', expected '%s' (%.2f ms/step)", name,
              gt_idle_cause_name(got), gt_idle_cause_name(want_cause), steady_ms_per_step(p, got));
        CHECK(p->dataloader_workers == sc->dataloader_workers, "%s: %d workers found, %d written",
              name, p->dataloader_workers, sc->dataloader_workers);
        double load = (double)sc->data_load_ns / 1e6;
        CHECK(fabs(steady_ms_per_step(p, want_cause) - load) < 0.2 * load,
              "%s: %.2f ms/step of '%s', %.2f ms of CPU work per step written", name,
              steady_ms_per_step(p, want_cause), gt_idle_cause_name(want_cause), load);
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_advice *a = advice_find(&l, "gpu-idle", -1);
    CHECK(a != NULL, "%s: gpu-idle fires", name);
    if (a)
        CHECK(strstr(a->message, want_text) != NULL, "%s: gpu-idle says '%s': %s", name, want_text,
              a->message);
    gt_advice_list_free(&l);
    gt_run_free(&run);
}

static scenario idle_loop(void)
{
    scenario sc = scenario_healthy();
    sc.kernels_per_step = 10;
    sc.kernel_ns = 100000;
    sc.data_load_ns = 5000000; /* 5 ms of CPU per step, the GPU needs 1 ms */
    sc.pinned_h2d_bytes = 0;
    return sc;
}

static void test_idle_causes(void)
{
    /* a batch copied to the GPU after the CPU work: data loading in the training process */
    scenario batch = idle_loop();
    batch.pageable_h2d_bytes = 1 << 20;
    one_process("idle_batch", batch, GT_IDLE_DATA_LOADING, "loads data");
    /* no copy, no workers: Python work, not data loading (the gloo corpus run's slow rank) */
    scenario host = idle_loop();
    one_process("idle_host", host, GT_IDLE_HOST_WORK, "loads no data");
    /* DataLoader workers beside it: the main process waits for their batches */
    scenario workers = idle_loop();
    workers.dataloader_workers = 2;
    one_process("idle_workers", workers, GT_IDLE_DATA_LOADING, "DataLoader workers");
}

/* A data-bound loop that also reads loss.item() each step: every gap begins with that sync, yet
 * removing it would hide at most the GPU's own ~1 ms a step; the rest is data loading. */
static void test_data_bound_with_item(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/data_bound_item.gtrace", workdir);
    scenario sc = idle_loop();
    sc.data_load_ns = 20000000;
    sc.pageable_h2d_bytes = 1 << 20;
    sc.item_every_step = 1;
    sc.nvtx = 1;
    CHECK(scenario_write(path, &sc) == 0, "data_bound_item: write");
    const char *paths[] = {path};
    gt_advice_list l = {0};
    CHECK(gt_advice_compute(paths, 1, &l) == 0, "data_bound_item: load");
    const gt_advice *idle = advice_find(&l, "gpu-idle", -1),
                    *sync = advice_find(&l, "sync-stall", -1);
    CHECK(idle && strstr(idle->message, "loads data"), "data_bound_item: gpu-idle for data: %s",
          idle ? idle->message : "none");
    if (idle)
        CHECK(idle->saving_ms > 15 && idle->saving_ms < 20, "data_bound_item: saving %.2f ms/step",
              idle->saving_ms);
    if (sync)
        CHECK(!sync->has_saving || sync->saving_ms < 3,
              "data_bound_item: the sync cannot save %.2f ms a step", sync->saving_ms);
    gt_advice_list_free(&l);
}

/* x.cpu() of 400 MB each step (issue 30): the driver stages the pageable copy through its bounce
 * buffer, the GPU idle while the CPU copies; that idle is the copy's, whether the call was seen
 * (its time) or not (between the copy's GPU records), never data loading — even with DataLoader
 * workers beside the process. A pinned copy leaves no such idle. */
static void pageable_case(const char *name, int unrecorded, int chunks, int workers,
                          double want_share)
{
    scenario sc = idle_loop();
    sc.data_load_ns = 0;
    sc.steps = 10;
    sc.d2h_bytes = 400u << 20;
    sc.d2h_chunks = chunks;
    sc.d2h_gpu_share = 0.4;
    sc.d2h_unrecorded = unrecorded;
    sc.dataloader_workers = workers;
    gt_run run;
    const gt_proc *p = load_process(name, &sc, &run);
    if (p) {
        /* the staging: 60% of the copy's time, 400 MB at 20 GB/s = 20.97 ms on the GPU */
        double staged = 20.97 / 0.4 * 0.6, copy = steady_ms_per_step(p, GT_IDLE_COPY);
        CHECK(copy > want_share * staged && copy < 1.05 * staged,
              "%s: %.2f ms a step in the copy, %.2f ms staged", name, copy, staged);
        CHECK(steady_ms_per_step(p, GT_IDLE_DATA_LOADING) < 0.1 * staged,
              "%s: %.2f ms a step of data loading", name,
              steady_ms_per_step(p, GT_IDLE_DATA_LOADING));
    }
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_advice *idle = advice_find(&l, "gpu-idle", -1);
    CHECK(!idle || !strstr(idle->message, "loaded data"), "%s: %s", name, idle->message);
    CHECK(unrecorded || advice_find(&l, "pinned-memory", -1), "%s: pinned-memory", name);
    gt_advice_list_free(&l);
    gt_run_free(&run);
}

static void test_pageable_copy(void)
{
    pageable_case("xcpu_call_seen", 0, 1, 0, 0.95);
    pageable_case("xcpu_call_seen_workers", 0, 1, 2, 0.95);
    /* no call seen: the staging between the 8 records, and after the last as long as between */
    pageable_case("xcpu_unseen_chunks", 1, 8, 2, 0.95);
    /* a pinned copy each step: the GPU copies at the link's rate, no staging, no copy idle */
    scenario pin = idle_loop();
    pin.data_load_ns = 0;
    pin.steps = 10;
    pin.pinned_h2d_bytes = 400u << 20;
    char path[600];
    snprintf(path, sizeof path, "%s/pinned_copy.gtrace", workdir);
    CHECK(scenario_write(path, &pin) == 0, "pinned: write");
    const char *paths[] = {path};
    gt_run run = {0};
    CHECK(gt_run_load(&run, paths, 1, 0) == 0 && run.n == 1, "pinned: load");
    if (run.n == 1)
        CHECK(steady_ms_per_step(&run.procs[0], GT_IDLE_COPY) < 0.05,
              "pinned: %.3f ms a step in a copy", steady_ms_per_step(&run.procs[0], GT_IDLE_COPY));
    gt_run_free(&run);
}

static scenario nccl_rank(int rank, int world)
{
    scenario sc = scenario_healthy();
    sc.rank = rank;
    sc.world_size = world;
    sc.pid = 5000 + rank;
    sc.steps = 30;
    sc.kernels_per_step = 10;
    sc.kernel_ns = 300000;
    sc.pinned_h2d_bytes = 0;
    sc.item_every_step = 1; /* loss.item(): the CPU keeps in step with its GPU */
    sc.nccl_per_step = 3;   /* three gradient buckets */
    sc.nccl_ns = 200000;
    sc.nvtx = 1;
    return sc;
}

/* The same loop with gloo: the all-reduces run on a CPU thread, the GPU idles meanwhile. */
static scenario gloo_rank(int rank, int world)
{
    scenario sc = nccl_rank(rank, world);
    sc.nccl_per_step = 0;
    sc.gloo_per_step = 2;
    sc.gloo_ns = 1000000;
    sc.nvtx = 0; /* steps from the kernel pattern, as in the corpus run */
    return sc;
}

/* World of `world` ranks, rank `slow` with `delay_ns` more CPU work per step (-1: none). */
static void ranks_case(const char *name, int gloo, int world, int slow, uint64_t delay_ns)
{
    scenario scs[8];
    char paths_buf[8][512];
    const char *paths[8];
    for (int r = 0; r < world; r++) {
        scs[r] = gloo ? gloo_rank(r, world) : nccl_rank(r, world);
        if (r == slow)
            scs[r].data_load_ns = delay_ns;
        snprintf(paths_buf[r], sizeof paths_buf[r], "%s/%s-rank%d.gtrace", workdir, name, r);
        paths[r] = paths_buf[r];
    }
    CHECK(scenario_write_ranks(paths, scs, world) == 0, "%s: write ranks", name);
    gt_run run = {0};
    CHECK(gt_run_load(&run, paths, world, 0) == 0, "%s: load", name);
    gt_advice_list l = {0};
    gt_advice_from_run(&run, &l);
    const gt_advice *a = advice_find(&l, "straggler", -1);
    if (slow < 0) {
        CHECK(a == NULL, "%s: no straggler among equal ranks (%s)", name, a ? a->message : "");
    } else {
        double want = (double)delay_ns / 1e6,
               late = a ? advice_evidence(a, "lateness_ms_per_step") : -1;
        CHECK(a && a->rank == slow, "%s: straggler is rank %d (got %d)", name, slow,
              a ? a->rank : -1);
        CHECK(fabs(late - want) <= 0.2 * want, "%s: lateness %.3f ms per step, injected %.3f", name,
              late, want);
        CHECK(run.straggler.found && run.straggler.kind == (gloo ? GT_COLL_CPU : GT_COLL_NCCL),
              "%s: rounds of the collectives", name);
        if (a)
            CHECK(strstr(a->message, gloo ? "gloo" : "NCCL") && strstr(a->message, "late per step"),
                  "%s: message %s", name, a->message);
        const gt_proc *sp = proc_of_rank(&run, slow);
        CHECK(sp && top_cause_without_calls(sp) == GT_IDLE_HOST_WORK,
              "%s: the slow rank idles in host work", name);
        /* the others' GPUs wait in the collective: that is their idle, not data loading */
        for (int r = 0; r < world; r++) {
            const gt_proc *p = proc_of_rank(&run, r);
            if (!p || r == slow)
                continue;
            CHECK(top_cause_without_calls(p) == GT_IDLE_COLLECTIVE,
                  "%s: rank %d idles '%s', expected waiting in a collective", name, r,
                  gt_idle_cause_name(top_cause_without_calls(p)));
            /* waiting for the late rank, then (gloo) the GPU idles while the data moves: the
             * transfer, gloo_ns per all-reduce, every rank there */
            double wait = steady_ms_per_step(p, GT_IDLE_COLLECTIVE);
            double move = gloo ? (double)scs[r].gloo_per_step * (double)scs[r].gloo_ns / 1e6 : 0;
            double moved = steady_ms_per_step(p, GT_IDLE_COLLECTIVE_TRANSFER);
            CHECK(fabs(wait - want) <= 0.2 * want, "%s: rank %d waits %.3f ms/step, injected %.3f",
                  name, r, wait, want);
            CHECK(fabs(moved - move) <= 0.1 * move + 0.01,
                  "%s: rank %d moves data %.3f ms/step, %.3f written", name, r, moved, move);
            CHECK(p->steady_idle_cause_ns[GT_IDLE_DATA_LOADING] == 0, "%s: rank %d data loading",
                  name, r);
            CHECK(!advice_find(&l, "gpu-idle", r) ||
                      advice_find(&l, "gpu-idle", r)->severity == GT_SEV_INFO,
                  "%s: rank %d told to fix its own idle", name, r);
        }
    }
    gt_advice_list_free(&l);
    gt_run_free(&run);
}

static void test_straggler(void)
{
    ranks_case("nccl2", 0, 2, 1, 8000000);
    ranks_case("nccl4", 0, 4, 2, 3000000);
    ranks_case("nccl8", 0, 8, 5, 2000000);
    ranks_case("nccl2_small", 0, 2, 0, 1500000);
    ranks_case("nccl2_equal", 0, 2, -1, 0);
    ranks_case("gloo2", 1, 2, 1, 6000000);
    ranks_case("gloo3", 1, 3, 0, 4000000);
    ranks_case("gloo2_equal", 1, 2, -1, 0);
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    test_idle_causes();
    test_data_bound_with_item();
    test_pageable_copy();
    test_straggler();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_idle: all passed\n");
    return failures ? 1 : 0;
}
