/* test_report.c — `gputrace report`: JSON parses back and carries the documented fields, text has
 * every section and no colour when not a terminal, exit statuses (0, 1 damaged, 2 not a trace,
 * 3 --fail-on), run folders. Usage: test_report WORKDIR */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

static char dir[512];

static const char *path_of(const char *name)
{
    static char bufs[4][600];
    static int slot;
    char *b = bufs[slot++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

static void test_json(void)
{
    scenario sc = scenario_healthy();
    sc.sync_every_step = 1;
    sc.data_load_ns = 2000000;
    sc.cudnn = 2;
    sc.nvtx = 1;
    CHECK(scenario_write(path_of("json.gtrace"), &sc) == 0, "write");
    int rc =
        run_args(cmd_report, "report", path_of("json.out"), 2, "--json", path_of("json.gtrace"));
    CHECK(rc == 0, "report --json exit %d", rc);
    json_error_t err;
    json_t *root = json_load_file(path_of("json.out"), 0, &err);
    CHECK(root != NULL, "JSON parses: %s (line %d)", err.text, err.line);
    if (!root)
        return;
    CHECK(!strcmp(json_string_value(json_object_get(root, "schema")), "gputrace-report"),
          "schema name");
    CHECK(json_integer_value(json_object_get(root, "schema_version")) == 2, "schema version");
    json_t *p = json_array_get(json_object_get(root, "processes"), 0);
    CHECK(json_integer_value(json_object_get(p, "pid")) == 4242, "pid");
    json_t *steps = json_object_get(p, "steps");
    CHECK(json_integer_value(json_object_get(steps, "count")) == 10, "10 NVTX steps, got %lld",
          (long long)json_integer_value(json_object_get(steps, "count")));
    CHECK(strstr(json_string_value(json_object_get(steps, "source")), "train_step") != NULL,
          "steps from NVTX");
    CHECK(json_integer_value(json_object_get(steps, "warmup_steps")) >= 1,
          "the autotuning step is warm-up");
    json_t *cudnn = json_object_get(p, "cudnn");
    CHECK(json_array_size(cudnn) == 4, "4 cuDNN ops, got %zu", json_array_size(cudnn));
    json_t *op = json_array_get(cudnn, 0);
    CHECK(!strcmp(json_string_value(json_object_get(op, "mode")), "autotuned"), "autotuned");
    CHECK(json_integer_value(json_object_get(op, "plans")) == 4, "3 candidates + chosen plan");
    json_t *chosen = json_object_get(op, "chosen");
    CHECK(chosen && !strcmp(json_string_value(json_object_get(chosen, "engine")), "engine 38"),
          "chosen engine 38");
    CHECK(json_real_value(json_object_get(op, "gpu_ms")) > 3.9, "GPU time joined via ext corr");
    CHECK(json_real_value(json_object_get(op, "autotune_ms")) > 5, "autotune cost");
    json_t *advice = json_object_get(root, "advice");
    CHECK(json_array_size(advice) >= 1, "advice present");
    int found = 0;
    for (size_t i = 0; i < json_array_size(advice); i++) {
        json_t *a = json_array_get(advice, i);
        const char *keys[] = {"id",       "severity", "message", "evidence", "estimated_saving_ms",
                              "call_site"};
        for (size_t k = 0; k < 6; k++)
            CHECK(json_object_get(a, keys[k]) != NULL, "advice item has %s", keys[k]);
        if (!strcmp(json_string_value(json_object_get(a, "id")), "sync-stall")) {
            found = 1;
            CHECK(
                json_is_number(json_object_get(json_object_get(a, "evidence"), "sync_ms_per_step")),
                "evidence is numbers");
            CHECK(strstr(json_string_value(json_object_get(a, "call_site")), "train.py:57"),
                  "call site");
        }
    }
    CHECK(found, "sync-stall in JSON advice");
    json_decref(root);
}

static void test_text_and_fail_on(void)
{
    scenario sc = scenario_healthy();
    sc.pageable_h2d_bytes = 32u << 20;
    sc.sync_every_step = 1;
    CHECK(scenario_write(path_of("text.gtrace"), &sc) == 0, "write");
    setenv("NO_COLOR", "1", 1);
    int rc = run_args(cmd_report, "report", path_of("text.out"), 1, path_of("text.gtrace"));
    CHECK(rc == 0, "plain report exits 0 even with advice, got %d", rc);
    char *t = slurp(path_of("text.out"));
    const char *sections[] = {
        "== run ==",       "== steps ==",   "== GPU time ==",    "== kernels ==",
        "== API calls ==", "== copies ==",  "== sync stalls ==", "== cuDNN ==",
        "== advice ==",    "pinned-memory", "train.py:57",       "pageable"};
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        CHECK(strstr(t, sections[i]) != NULL, "text report lacks '%s'", sections[i]);
    CHECK(strchr(t, '\033') == NULL, "no colour escapes when not a terminal");
    free(t);
    rc = run_args(cmd_report, "report", path_of("fail.out"), 2, "--fail-on=warning",
                  path_of("text.gtrace"));
    CHECK(rc == 3, "--fail-on=warning with warnings exits 3, got %d", rc);
    scenario ok = scenario_healthy();
    CHECK(scenario_write(path_of("ok.gtrace"), &ok) == 0, "write");
    rc = run_args(cmd_report, "report", path_of("ok.out"), 2, "--fail-on=info",
                  path_of("ok.gtrace"));
    CHECK(rc == 0, "--fail-on=info on a healthy run exits 0, got %d", rc);
    rc = run_args(cmd_report, "report", path_of("bad.out"), 2, "--fail-on=loud",
                  path_of("ok.gtrace"));
    CHECK(rc == 2, "bad --fail-on value exits 2, got %d", rc);
    rc = run_args(cmd_report, "report", path_of("help.out"), 1, "--help");
    t = slurp(path_of("help.out"));
    CHECK(rc == 0 && strstr(t, "--fail-on"), "--help");
    free(t);
}

static void test_bad_inputs(void)
{
    FILE *f = fopen(path_of("notatrace.gtrace"), "w");
    fputs("hello, I am not a trace\n", f);
    fclose(f);
    int rc = run_args(cmd_report, "report", path_of("nt.out"), 1, path_of("notatrace.gtrace"));
    CHECK(rc == 2, "not a trace exits 2, got %d", rc);
    rc =
        run_args(cmd_report, "report", path_of("missing.out"), 1, path_of("does-not-exist.gtrace"));
    CHECK(rc == 2, "missing file exits 2, got %d", rc);
    /* a damaged file: overwrite bytes in the middle (one of several chunks); still reported */
    scenario sc = scenario_healthy();
    sc.steps = 80;
    CHECK(scenario_write(path_of("damaged.gtrace"), &sc) == 0, "write");
    f = fopen(path_of("damaged.gtrace"), "r+b");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    fputs("XXXXXXXXXXXXXXXX", f);
    fclose(f);
    rc = run_args(cmd_report, "report", path_of("damaged.out"), 1, path_of("damaged.gtrace"));
    char *t = slurp(path_of("damaged.out"));
    CHECK(rc == 1, "damaged input exits 1, got %d", rc);
    CHECK(strstr(t, "== kernels ==") != NULL, "damaged input still reported");
    free(t);
    /* truncated */
    CHECK(scenario_write(path_of("trunc.gtrace"), &sc) == 0, "write");
    CHECK(truncate(path_of("trunc.gtrace"), size / 3) == 0, "truncate");
    rc = run_args(cmd_report, "report", path_of("trunc.out"), 1, path_of("trunc.gtrace"));
    CHECK(rc == 1, "truncated input exits 1, got %d", rc);
}

static void test_run_folder(void)
{
    const char *run = path_of("run");
    mkdir(run, 0700);
    char p0[700], p1[700];
    snprintf(p0, sizeof p0, "%s/gputrace-host-1-rank0.gtrace", run);
    snprintf(p1, sizeof p1, "%s/gputrace-host-2-rank1.gtrace", run);
    scenario r0 = scenario_healthy();
    r0.rank = 0;
    r0.world_size = 2;
    scenario r1 = r0;
    r1.rank = 1;
    r1.pid = 4243;
    r1.data_load_ns = 15000000;
    CHECK(scenario_write(p0, &r0) == 0 && scenario_write(p1, &r1) == 0, "write ranks");
    int rc = run_args(cmd_report, "report", path_of("run.out"), 2, "--json", run);
    CHECK(rc == 0, "folder report exit %d", rc);
    json_error_t err;
    json_t *root = json_load_file(path_of("run.out"), 0, &err);
    CHECK(root != NULL, "folder JSON parses");
    if (!root)
        return;
    CHECK(json_array_size(json_object_get(root, "processes")) == 2, "two processes");
    CHECK(json_array_size(json_object_get(root, "ranks")) == 2, "two ranks");
    int straggler = 0;
    json_t *adv = json_object_get(root, "advice");
    for (size_t i = 0; i < json_array_size(adv); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(adv, i), "id")), "straggler"))
            straggler = json_integer_value(json_object_get(json_array_get(adv, i), "rank")) == 1;
    CHECK(straggler, "straggler rank 1 in folder report");
    json_decref(root);
    rc = run_args(cmd_report, "report", path_of("run.txt"), 1, run);
    char *t = slurp(path_of("run.txt"));
    CHECK(strstr(t, "== ranks ==") != NULL, "ranks section in text");
    free(t);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_json();
    test_text_and_fail_on();
    test_bad_inputs();
    test_run_folder();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_report: all passed\n");
    return failures ? 1 : 0;
}
