/* test_verdict.c — the verdict that opens `gputrace report` (analyzer/report/report_verdict.c) on
 * model figures filled by hand: phases and idle causes printed when the model has them, the lines
 * that stand in for them when it does not, causes ranked by their saving's share of what it saves,
 * at most ten lines; and on a synthetic trace, the report opens with it (text and JSON). Usage:
 * test_verdict WORKDIR */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "report_verdict.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

static char dir[512];

#define MS 1000000ull

/* A process of 24 s: 19.2 s of autotuning, 20 NVTX steps of 50 ms, 80 % busy in the steady state.
 */
static void fill_proc(gt_proc *p, int with_phases_and_causes)
{
    memset(p, 0, sizeof *p);
    p->path = "synthetic.gtrace";
    p->cmdline = "python train.py --benchmark";
    p->hdr.pid = 77;
    p->hdr.rank = -1;
    p->gpu_records = 1000;
    p->t_min = 1000 * MS;
    p->t_max = p->t_min + 24000 * MS;
    p->gpu_first_ns = p->t_min + 500 * MS;
    p->gpu_last_ns = p->t_max - 100 * MS;
    p->gpu_busy_ns = 2000 * MS;
    p->n_steps = 20;
    p->warmup_steps = 2;
    p->steady_steps = 18;
    p->step_ms_median = 50;
    p->steady_busy_pct = 80;
    p->steady_start_ns = p->t_max - 1000 * MS;
    p->steady_end_ns = p->t_max - 100 * MS;
    snprintf(p->step_source, sizeof p->step_source, "NVTX range 'step'");
    if (!with_phases_and_causes)
        return;
    p->phase_ns[GT_PHASE_STARTUP] = 1200 * MS;
    p->phase_ns[GT_PHASE_AUTOTUNE] = 19200 * MS;
    p->phase_ns[GT_PHASE_WARMUP] = 2400 * MS;
    p->phase_ns[GT_PHASE_STEADY] = 1000 * MS;
    p->phase_ns[GT_PHASE_TEARDOWN] = 200 * MS;
    p->steady_idle_cause_ns[GT_IDLE_DATA_LOADING] = 18 * 4400000ull; /* 4.4 ms per step */
    p->steady_idle_cause_ns[GT_IDLE_CUDA_CALL] = 18 * 1100000ull;
    p->steady_idle_cause_ns[GT_IDLE_HOST_WORK] = 18 * 200000ull;
    p->steady_idle_cause_ns[GT_IDLE_JIT] = 18 * 100000ull; /* the fourth: left off the line */
}

/* An item as advice_engine.c leaves it: its saving weighed against its base (the 50 ms step or
 * the 24 s run), with the severity and minor flag that share gives. */
static gt_advice item(const char *id, int impact, double ms, int basis, const char *site)
{
    gt_advice a;
    memset(&a, 0, sizeof a);
    snprintf(a.id, sizeof a.id, "%s", id);
    a.impact = impact;
    a.has_saving = impact == GT_IMPACT_TIME;
    a.saving_ms = ms;
    a.basis = a.has_saving ? basis : GT_BASIS_NONE;
    a.base_ms = basis == GT_BASIS_RUN ? 24000 : 50;
    a.share_pct = a.has_saving ? 100 * ms / a.base_ms : -1;
    a.minor = a.has_saving && a.share_pct < GT_ADVICE_MINOR_PCT;
    a.severity = impact == GT_IMPACT_FAILURE             ? GT_SEV_CRITICAL
                 : impact == GT_IMPACT_RISK              ? GT_SEV_WARNING
                 : !a.has_saving                         ? GT_SEV_INFO
                 : a.share_pct >= GT_ADVICE_CRITICAL_PCT ? GT_SEV_CRITICAL
                 : a.share_pct >= GT_ADVICE_WARNING_PCT  ? GT_SEV_WARNING
                                                         : GT_SEV_INFO;
    snprintf(a.call_site, sizeof a.call_site, "%s", site);
    a.pid = 77;
    a.rank = -1;
    return a;
}

/* Runs the verdict into a file and returns its text (caller frees); *lines gets the count. */
static char *verdict_text(const gt_run *run, const gt_advice_list *adv, int *lines)
{
    char path[600];
    snprintf(path, sizeof path, "%s/verdict.txt", dir);
    FILE *f = fopen(path, "w+");
    if (!f)
        return strdup("");
    gt_verdict v;
    gt_verdict_build(run, adv, &v);
    *lines = gt_verdict_print(&v, f, 0);
    long n = ftell(f);
    rewind(f);
    char *t = calloc(1, (size_t)n + 1);
    size_t got = fread(t, 1, (size_t)n, f);
    t[got] = 0;
    fclose(f);
    return t;
}

static int count_lines(const char *t)
{
    int n = 0;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

static void test_filled(void)
{
    gt_proc p;
    fill_proc(&p, 1);
    gt_run run = {.procs = &p, .n = 1};
    gt_advice items[12];
    size_t n = 0; /* in the engine's order: severity, then share */
    items[n++] = item("cudnn-benchmark", GT_IMPACT_TIME, 19200, GT_BASIS_RUN, ""); /* 80% */
    items[n++] = item("sync-stall", GT_IMPACT_TIME, 10, GT_BASIS_STEP, "train.py:114 (main)");
    items[n++] = item("gpu-idle", GT_IMPACT_TIME, 4.4, GT_BASIS_STEP, "train.py:106 (main)");
    items[n++] = item("environment", GT_IMPACT_RISK, 0, GT_BASIS_NONE, "");
    items[n++] = item("cudnn-inferred", GT_IMPACT_NOTE, 0, GT_BASIS_NONE, "");
    for (int i = 0; i < 6; i++) /* minor ones: one line, whatever their number */
        items[n++] = item("amp", GT_IMPACT_TIME, 0.01 * (i + 1), GT_BASIS_STEP, "");
    gt_advice_list adv = {items, n, n};
    int lines = 0;
    char *t = verdict_text(&run, &adv, &lines);
    CHECK(lines == count_lines(t) && lines <= GT_VERDICT_MAX_LINES,
          "at most ten lines, counted right: %d (%d in the text)", lines, count_lines(t));
    CHECK(strstr(t, "steady step  50.0 ms (median of 18 steps after 2 warm-up, from NVTX range "
                    "'step'); GPU busy 80%"),
          "steady step and busy %%: %s", t);
    CHECK(strstr(t, "phases       24.0 s: start-up 1200 ms (5%), cuDNN autotuning 19.2 s (80%), "
                    "warm-up 2400 ms (10%), steady state 1000 ms (4.2%), tear-down 200 ms "
                    "(0.8%)"),
          "phases with their shares: %s", t);
    CHECK(strstr(t, "GPU idle     5.80 ms per step of the 50.0 ms step (12%), by cause: data "
                    "loading 4.40 ms, in a CUDA call 1.10 ms, host work without CUDA calls "
                    "200 \xc2\xb5s\n"),
          "the idle time, its share, its causes, largest first, three named: %s", t);
    /* two lists, the one whose first share is larger first: over the run 80% > per step 20% */
    const char *c1 = strstr(t, "  over the run 1. cudnn-benchmark"),
               *c2 = strstr(t, "  per step     2. sync-stall"),
               *c3 = strstr(t, "               3. gpu-idle");
    CHECK(c1 && c2 && c3 && c1 < c2 && c2 < c3,
          "the lists, each named once, ranked by share inside: %s", t);
    CHECK(strstr(t, "~10.0 ms of the 50.0 ms step (20%) -- at train.py:114 (main)") &&
              strstr(t, "~19.2 s of the 24.0 s run (80%)"),
          "savings with what they are a share of, and call sites: %s", t);
    CHECK(strstr(t, "  also         4. environment: the environment\n") &&
              !strstr(t, "cudnn-inferred"),
          "a risk after the savings, a note not in the verdict: %s", t);
    CHECK(
        strstr(t, "  minor        amp <0.1%, amp <0.1%, amp <0.1%, amp <0.1%, ... (each under 1%)"),
        "minor items on one line: %s", t);
    free(t);

    /* no saving above 1%: the largest measured idle cause is named, with its share */
    gt_advice_list minor = {&items[5], 2, 2};
    t = verdict_text(&run, &minor, &lines);
    CHECK(strstr(t, "causes       none above 1%; the largest idle cause is data loading: 4.40 ms "
                    "per step of the 50.0 ms step (8.8%)") &&
              strstr(t, "  minor        amp"),
          "%s", t);
    free(t);

    /* JSON: the same figures */
    gt_verdict v;
    gt_verdict_build(&run, &adv, &v);
    json_t *j = gt_verdict_json(&v);
    CHECK(json_real_value(json_object_get(j, "step_ms")) == 50, "JSON step_ms");
    json_t *ph = json_object_get(j, "phases");
    CHECK(json_array_size(ph) == 5 &&
              !strcmp(json_string_value(json_object_get(json_array_get(ph, 1), "phase")),
                      "cuDNN autotuning") &&
              json_real_value(json_object_get(json_array_get(ph, 1), "share_pct")) == 80,
          "JSON phases");
    CHECK(json_real_value(json_object_get(json_object_get(j, "steady_idle_ms_per_step"),
                                          "data loading")) > 4.39,
          "JSON idle by cause");
    json_t *c = json_array_get(json_object_get(j, "causes"), 1);
    CHECK(!strcmp(json_string_value(json_object_get(c, "id")), "sync-stall") &&
              json_real_value(json_object_get(c, "share_pct")) == 20 &&
              !strcmp(json_string_value(json_object_get(c, "list")), "per step") &&
              !strcmp(json_string_value(json_object_get(c, "saving_basis")), "per_step") &&
              !strcmp(json_string_value(json_object_get(c, "call_site")), "train.py:114 (main)"),
          "JSON causes ranked, with list, share and call site");
    CHECK(json_array_size(json_object_get(j, "minor")) == 6 &&
              json_real_value(
                  json_object_get(json_object_get(j, "largest_idle_cause"), "share_pct")) > 8.7,
          "JSON minor items and the largest idle cause");
    json_decref(j);
}

/* Two processes: the verdict is about the one with the most GPU time, says there are others,
 * and labels causes with their process; still at most ten lines. */
static void test_two_processes(void)
{
    gt_proc p[2];
    fill_proc(&p[0], 1);
    fill_proc(&p[1], 1);
    p[1].hdr.pid = 78;
    p[1].hdr.rank = 1;
    p[1].gpu_busy_ns *= 2;
    gt_run run = {.procs = p, .n = 2};
    gt_advice items[2] = {item("straggler", GT_IMPACT_TIME, 5, GT_BASIS_STEP, ""),
                          item("gpu-idle", GT_IMPACT_TIME, 1, GT_BASIS_STEP, "")};
    items[0].pid = 78, items[0].rank = 1;
    gt_advice_list adv = {items, 2, 2};
    int lines = 0;
    char *t = verdict_text(&run, &adv, &lines);
    CHECK(!strncmp(t, "== verdict: rank 1 (pid 78)", 27) &&
              strstr(t, "(the process with the most GPU time; 1 other process below)") &&
              strstr(t, "1. straggler: one rank holds the others back -- ~5.00 ms of the 50.0 "
                        "ms step (10%) (rank 1)") &&
              strstr(t, "(pid 77)") && lines <= GT_VERDICT_MAX_LINES,
          "two processes: %s", t);
    free(t);
}

/* Phases and idle causes not filled (another part of the model did not run): the verdict says
 * what it knows instead, and never prints an empty line for them. */
static void test_unfilled(void)
{
    gt_proc p;
    fill_proc(&p, 0);
    p.n_steps = 0;
    p.steady_steps = 1;
    snprintf(p.step_why, sizeof p.step_why, "no NVTX range and no repeating launch pattern");
    gt_run run = {.procs = &p, .n = 1};
    gt_advice_list none = {0};
    int lines = 0;
    char *t = verdict_text(&run, &none, &lines);
    CHECK(strstr(t, "steady state no steps found: no NVTX range and no repeating launch pattern"),
          "no steps, and why: %s", t);
    CHECK(strstr(t, "run          24.0 s; GPU active 23.4 s of it") && !strstr(t, "phases"),
          "no phases: the run and the GPU's active span: %s", t);
    CHECK(strstr(t, "GPU idle     180 ms of the 900 ms steady window (20%)\n") &&
              !strstr(t, "by cause"),
          "no idle causes: the steady idle time: %s", t);
    CHECK(strstr(t, "causes       no rule fired; GPU busy 80%") && !strstr(t, "incomplete"),
          "no advice: %s", t);
    free(t);
    p.records_lost = 12;
    t = verdict_text(&run, &none, &lines);
    CHECK(strstr(t, "incomplete   12 records lost: the figures are lower bounds"),
          "lost records are said in the verdict: %s", t);
    free(t);
    gt_proc quiet;
    memset(&quiet, 0, sizeof quiet);
    gt_run empty = {.procs = &quiet, .n = 1};
    t = verdict_text(&empty, &none, &lines);
    CHECK(lines == 0 && !*t, "no CUDA activity: no verdict");
    free(t);
}

/* The report opens with the verdict, before the tables; JSON has it as "verdict". */
static void test_report_opens_with_it(void)
{
    char trace[600], out[600], json[600];
    snprintf(trace, sizeof trace, "%s/verdict.gtrace", dir);
    snprintf(out, sizeof out, "%s/verdict.out", dir);
    snprintf(json, sizeof json, "%s/verdict.json", dir);
    scenario sc = scenario_healthy();
    sc.nvtx = 1;
    sc.sync_every_step = 1;
    sc.data_load_ns = 2000000;
    CHECK(scenario_write(trace, &sc) == 0, "write");
    setenv("NO_COLOR", "1", 1);
    char *argv[] = {"report", trace, NULL};
    CHECK(run_captured(cmd_report, 2, argv, out) == 0, "report");
    FILE *f = fopen(out, "r");
    char line[1024];
    int n = 0, blank_at = -1, sync_at = -1, sync_item = -1;
    while (f && fgets(line, sizeof line, f) && blank_at < 0) {
        if (n == 0)
            CHECK(!strncmp(line, "== verdict: pid 4242", 20), "first line: %s", line);
        if (strstr(line, "sync-stall"))
            sync_item = n;
        /* the call site ends the item's line, or its continuation when the line is fitted */
        if (sync_item >= 0 && n - sync_item <= 1 && strstr(line, "train.py:57"))
            sync_at = sync_item;
        if (line[0] == '\n')
            blank_at = n;
        n++;
    }
    if (f)
        fclose(f);
    CHECK(blank_at > 0 && blank_at <= GT_VERDICT_MAX_LINES, "verdict of %d lines, then a blank",
          blank_at);
    CHECK(sync_at > 0 && sync_at < blank_at, "the sync stall and its call site are in it");
    char *jargv[] = {"report", "--json", trace, NULL};
    CHECK(run_captured(cmd_report, 3, jargv, json) == 0, "report --json");
    json_error_t err;
    json_t *root = json_load_file(json, 0, &err);
    json_t *v = json_object_get(root, "verdict");
    CHECK(json_integer_value(json_object_get(v, "pid")) == 4242 &&
              json_integer_value(json_object_get(v, "steps")) == 10 &&
              json_array_size(json_object_get(v, "causes")) >= 1,
          "JSON verdict");
    json_decref(root);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_filled();
    test_unfilled();
    test_two_processes();
    test_report_opens_with_it();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_verdict: all passed\n");
    return failures ? 1 : 0;
}
