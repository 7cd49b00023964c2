/* test_advice_engine.c — what every advice rule shares (advice_engine.c, issue 29 items 1, 3, 8):
 * the severity follows the saving's share of its base and nothing else; under 1% a finding is
 * minor; two findings never recover the same time (the pools); the same finding on several ranks
 * is one item naming them; and the report's advice section lists what the verdict lists, in the
 * same order. On synthetic traces (test_report_synth.c). Usage: test_advice_engine WORKDIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "commands.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

static const char *workdir;

static const gt_advice *find(const gt_advice_list *l, const char *id)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].id, id))
            return &l->items[i];
    return NULL;
}

/* Load NAME's traces (one folder), with the run kept for the per-process checks. */
static int load(const char *name, const scenario *scs, int n, gt_run *run, gt_advice_list *l)
{
    char dir[300], paths[4][400], cmd[700];
    snprintf(dir, sizeof dir, "%.200s/%.60s", workdir, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    CHECK(system(cmd) == 0, "%s: %s", name, cmd);
    const char *pp[4];
    for (int i = 0; i < n && i < 4; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/rank%d.gtrace", dir, i);
        pp[i] = paths[i];
    }
    int rc = n == 1 ? scenario_write(pp[0], &scs[0]) : scenario_write_ranks(pp, scs, n);
    CHECK(rc == 0, "%s: write", name);
    const char *in[] = {dir};
    memset(run, 0, sizeof *run);
    memset(l, 0, sizeof *l);
    if (gt_run_load(run, in, 1, 0) != 0)
        return -1;
    gt_advice_from_run(run, l);
    return 0;
}

static int severity_for(const gt_advice *a)
{
    if (a->impact == GT_IMPACT_FAILURE)
        return GT_SEV_CRITICAL;
    if (a->impact == GT_IMPACT_RISK)
        return GT_SEV_WARNING;
    if (a->impact == GT_IMPACT_NOTE || a->saving_bound || a->share_pct < GT_ADVICE_WARNING_PCT)
        return GT_SEV_INFO;
    return a->share_pct >= GT_ADVICE_CRITICAL_PCT ? GT_SEV_CRITICAL : GT_SEV_WARNING;
}

/* What holds for every item, whatever its rule: the share is its saving over its base, at most
 * 100%; its severity follows from the share (or the impact); minor below 1%. */
static void check_items(const char *name, const gt_advice_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const gt_advice *a = &l->items[i];
        if (a->impact == GT_IMPACT_TIME) {
            CHECK(a->has_saving && a->basis != GT_BASIS_NONE && a->base_ms > 0 &&
                      fabs(a->share_pct - 100 * a->saving_ms / a->base_ms) < 1e-6 &&
                      a->share_pct <= 100 && a->saving_ms <= a->base_ms + 1e-9,
                  "%s: %s: share %.2f%% of %.3f ms for %.3f ms", name, a->id, a->share_pct,
                  a->base_ms, a->saving_ms);
            CHECK(a->minor == (a->share_pct < GT_ADVICE_MINOR_PCT), "%s: %s minor %d at %.2f%%",
                  name, a->id, a->minor, a->share_pct);
            CHECK(a->saving_source[0], "%s: %s says where its figure comes from", name, a->id);
        } else {
            CHECK(!a->has_saving && a->share_pct < 0, "%s: %s without a time has no share", name,
                  a->id);
        }
        CHECK(a->severity == severity_for(a), "%s: %s is %s at %.1f%% (impact %s)", name, a->id,
              gt_severity_name(a->severity), a->share_pct, gt_impact_name(a->impact));
        CHECK(i == 0 || l->items[i - 1].severity >= a->severity, "%s: ordered by severity", name);
    }
}

/* No process's step-basis savings add up to more than its step, nor its idle-time savings to
 * more than its idle time. */
static void check_pools(const char *name, const gt_run *run, const gt_advice_list *l)
{
    for (size_t k = 0; k < run->n; k++) {
        const gt_proc *p = &run->procs[k];
        if (!gt_proc_has_data(p))
            continue;
        double step = 0, idle = 0, run_ms = 0;
        for (size_t i = 0; i < l->n; i++) {
            const gt_advice *a = &l->items[i];
            if (!gt_advice_has_pid(a, p->hdr.pid) || !a->has_saving || a->pid != p->hdr.pid)
                continue;
            if (a->basis == GT_BASIS_RUN)
                run_ms += a->saving_ms;
            else
                step += a->saving_ms;
            if (a->basis != GT_BASIS_RUN && a->pool == GT_POOL_IDLE)
                idle += a->saving_ms;
        }
        CHECK(step <= gt_adv_step_ms(p) + 1e-6 && idle <= gt_adv_idle_ms(p) + 1e-6 &&
                  run_ms <= gt_proc_duration_ms(p) + 1e-6,
              "%s pid %d: per step %.3f of %.3f ms, idle %.3f of %.3f ms, run %.1f of %.1f ms",
              name, p->hdr.pid, step, gt_adv_step_ms(p), idle, gt_adv_idle_ms(p), run_ms,
              gt_proc_duration_ms(p));
    }
}

static void check_case(const char *name, const scenario *scs, int n, gt_advice_list *out)
{
    gt_run run;
    gt_advice_list l;
    if (load(name, scs, n, &run, &l) != 0) {
        CHECK(0, "%s: load", name);
        return;
    }
    check_items(name, &l);
    check_pools(name, &run, &l);
    *out = l;
    gt_run_free(&run);
}

/* The same rule at three sizes: its severity follows the share, nothing else. */
static void test_severity_from_share(void)
{
    static const uint64_t loads[] = {250000, 2000000, 12000000};
    static const int want[] = {GT_SEV_INFO, GT_SEV_WARNING, GT_SEV_CRITICAL};
    for (int i = 0; i < 3; i++) {
        scenario sc = scenario_healthy();
        sc.sync_every_step = 1;
        sc.nvtx = 1;
        sc.data_load_ns = loads[i];
        char name[32];
        snprintf(name, sizeof name, "share%d", i);
        gt_advice_list l;
        check_case(name, &sc, 1, &l);
        const gt_advice *a = find(&l, "sync-stall");
        CHECK(a && a->severity == want[i], "%s: sync-stall %s at %.1f%%, expected %s", name,
              a ? gt_severity_name(a->severity) : "none", a ? a->share_pct : -1,
              gt_severity_name(want[i]));
        gt_advice_list_free(&l);
    }
}

/* Two findings that claim the same GPU time: the convolutions' (benchmark mode could speed them,
 * an upper bound) and their fp32 math (TF32 would, an estimate). The estimate takes its part
 * first, the bound what is left; together never more than the busy time. */
static void test_no_double_counting(void)
{
    scenario sc = scenario_healthy();
    sc.cudnn = 1;
    sc.cudnn_dtype = 0;
    sc.cudnn_tensor_cores = 0;
    sc.conv_kernel_ns = 3000000;
    sc.kernels_per_step = 1;
    sc.kernel_ns = 10000;
    sc.sync_every_step = 1;
    sc.nvtx = 1;
    gt_advice_list l;
    check_case("overlap", &sc, 1, &l);
    const gt_advice *amp = find(&l, "amp"), *bench = find(&l, "cudnn-benchmark");
    CHECK(amp && bench && amp->pool == GT_POOL_BUSY && bench->pool == GT_POOL_BUSY &&
              bench->saving_bound && bench->saving_before_ms > bench->saving_ms + 1 &&
              amp->saving_before_ms == 0,
          "the bound keeps what the estimate left: amp %.3f, benchmark %.3f (had %.3f)",
          amp ? amp->saving_ms : -1, bench ? bench->saving_ms : -1,
          bench ? bench->saving_before_ms : -1);
    gt_advice_list_free(&l);
}

/* The same finding on two ranks: one item naming both, the costlier rank's figures. */
static void test_ranks_merged(void)
{
    scenario r[2] = {scenario_healthy(), scenario_healthy()};
    for (int k = 0; k < 2; k++) {
        r[k].rank = k;
        r[k].world_size = 2;
        r[k].pid = 5000 + k;
        r[k].cudnn = 1;
        r[k].cudnn_dtype = 0;
        r[k].cudnn_tensor_cores = 0;
        r[k].conv_kernel_ns = 3000000;
        r[k].sync_every_step = 1;
        r[k].nvtx = 1;
    }
    r[1].conv_kernel_ns = 3300000;
    gt_advice_list l;
    check_case("ranks", r, 2, &l);
    int amps = 0;
    for (size_t i = 0; i < l.n; i++)
        amps += !strcmp(l.items[i].id, "amp");
    const gt_advice *a = find(&l, "amp");
    CHECK(amps == 1 && a && a->n_procs == 2 && a->ranks[0] == 0 && a->ranks[1] == 1 &&
              a->rank == 1 && strstr(a->message, "Seen on ranks 0, 1; the figures are rank 1's") &&
              !strcmp(gt_advice_who(a), "ranks 0, 1") && gt_advice_has_pid(a, 5000) &&
              gt_advice_has_pid(a, 5001),
          "one amp item for both ranks (%d items): %s", amps, a ? a->message : "none");
    gt_advice_list_free(&l);
}

/* The verdict's causes and the advice section list the same items in the same order. */
static void test_tables_agree(void)
{
    char dir[300], trace[400], out[400];
    snprintf(dir, sizeof dir, "%.200s/agree", workdir);
    snprintf(trace, sizeof trace, "%s.gtrace", dir);
    snprintf(out, sizeof out, "%s.txt", dir);
    scenario sc = scenario_healthy();
    sc.sync_every_step = 1;
    sc.nvtx = 1;
    sc.data_load_ns = 3000000;
    sc.pageable_h2d_bytes = 8u << 20;
    sc.cudnn = 1;
    sc.jit_ns = 30000000;
    sc.jit_step = 1;
    CHECK(scenario_write(trace, &sc) == 0, "agree: write");
    setenv("NO_COLOR", "1", 1);
    char *argv[] = {"report", trace, NULL};
    CHECK(run_captured(cmd_report, 2, argv, out) == 0, "agree: report");
    FILE *f = fopen(out, "r");
    char line[2048], verdict_ids[8][32], advice_ids[8][32];
    int nv = 0, na = 0, in_advice = 0, blank = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '\n')
            blank = 1;
        if (strstr(line, "== advice =="))
            in_advice = 1;
        char id[32];
        const char *dot = strstr(line, ". ");
        if (!blank && dot && dot - line < 20 && sscanf(dot + 2, "%31[^:]", id) == 1 && nv < 8)
            snprintf(verdict_ids[nv++], 32, "%s", id);
        if (in_advice && sscanf(line, "  [%*[a-z]] %31s", id) == 1 && na < 8)
            snprintf(advice_ids[na++], 32, "%s", id);
    }
    if (f)
        fclose(f);
    CHECK(nv >= 3 && nv == na, "agree: %d causes in the verdict, %d in the advice", nv, na);
    for (int i = 0; i < nv && i < na; i++)
        CHECK(!strcmp(verdict_ids[i], advice_ids[i]),
              "agree: #%d is %s in the verdict, %s in the "
              "advice",
              i + 1, verdict_ids[i], advice_ids[i]);
}

int main(int argc, char **argv)
{
    workdir = argc > 1 ? argv[1] : ".";
    setenv("GPUTRACE_PEAKS", "off", 1);
    test_severity_from_share();
    test_no_double_counting();
    test_ranks_merged();
    test_tables_agree();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_advice_engine: all passed\n");
    return failures ? 1 : 0;
}
