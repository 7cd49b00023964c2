/* test_diff.c — `gputrace diff`: two synthetic runs whose cuDNN engine changed; the JSON marks the
 * changed ops with both GPU times and their ratio, advice present in one run only is listed, and
 * run folders are compared rank by rank. Usage: test_diff WORKDIR */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "test_report_synth.h"
#include "test_report_util.h"
#include "../gt_check.h"

static char dir[512];

static const char *at(const char *name)
{
    static char bufs[8][600];
    static int slot;
    char *b = bufs[slot++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

static json_t *diff_json(const char *a, const char *b, const char *out, int *rc)
{
    char *argv[] = {"diff", "--json", (char *)a, (char *)b};
    *rc = run_captured(cmd_diff, 4, argv, out);
    json_error_t err;
    json_t *root = json_load_file(out, 0, &err);
    CHECK(root != NULL, "diff JSON parses: %s", err.text);
    return root;
}

static void test_engine_change(void)
{
    scenario a = scenario_healthy();
    a.cudnn = 1;
    a.cudnn_engine = 38;
    a.conv_kernel_ns = 400000;
    scenario b = a;
    b.cudnn_engine = 58; /* e.g. cuDNN 9.19 vs 9.14 picking another engine */
    b.conv_kernel_ns = 600000;
    b.cudnn_cudart_version = 12090; /* environment advice only in B */
    CHECK(scenario_write(at("a.gtrace"), &a) == 0 && scenario_write(at("b.gtrace"), &b) == 0,
          "write");
    int rc;
    json_t *root = diff_json(at("a.gtrace"), at("b.gtrace"), at("diff.json"), &rc);
    CHECK(rc == 0, "diff exit %d", rc);
    if (!root)
        return;
    CHECK(!strcmp(json_string_value(json_object_get(root, "schema")), "gputrace-diff"), "schema");
    json_t *pair = json_array_get(json_object_get(root, "pairs"), 0);
    json_t *ops = json_object_get(pair, "cudnn");
    CHECK(json_array_size(ops) == 4, "4 ops matched by signature, got %zu", json_array_size(ops));
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *op = json_array_get(ops, i);
        CHECK(json_is_true(json_object_get(op, "changed")), "op %zu marked changed", i);
        double ratio = json_real_value(json_object_get(op, "gpu_ratio"));
        CHECK(ratio > 1.45 && ratio < 1.55, "GPU ratio %.3f (expected 1.5)", ratio);
        const char *ea = json_string_value(
            json_object_get(json_object_get(json_object_get(op, "a"), "chosen"), "engine"));
        const char *eb = json_string_value(
            json_object_get(json_object_get(json_object_get(op, "b"), "chosen"), "engine"));
        CHECK(ea && eb && !strcmp(ea, "engine 38") && !strcmp(eb, "engine 58"), "engines %s -> %s",
              ea ? ea : "?", eb ? eb : "?");
    }
    json_t *tot = json_object_get(pair, "totals");
    double sa = json_real_value(json_object_get(json_object_get(tot, "step_ms"), "a"));
    double sb = json_real_value(json_object_get(json_object_get(tot, "step_ms"), "b"));
    CHECK(sa > 0 && sb > sa, "step time a %.3f b %.3f", sa, sb);
    json_t *only_b = json_object_get(root, "advice_only_b");
    int env = 0;
    for (size_t i = 0; i < json_array_size(only_b); i++)
        env |= !strcmp(json_string_value(json_object_get(json_array_get(only_b, i), "id")),
                       "environment");
    CHECK(env, "environment advice only in B");
    CHECK(json_array_size(json_object_get(root, "advice_only_a")) == 0, "nothing only in A");
    json_decref(root);

    /* same engine: nothing marked */
    root = diff_json(at("a.gtrace"), at("a.gtrace"), at("same.json"), &rc);
    if (root) {
        json_t *o = json_object_get(json_array_get(json_object_get(root, "pairs"), 0), "cudnn");
        for (size_t i = 0; i < json_array_size(o); i++)
            CHECK(json_is_false(json_object_get(json_array_get(o, i), "changed")),
                  "identical runs: op %zu not changed", i);
        json_decref(root);
    }

    /* text form marks the change */
    char *argv[] = {"diff", (char *)at("a.gtrace"), (char *)at("b.gtrace")};
    setenv("NO_COLOR", "1", 1);
    rc = run_captured(cmd_diff, 3, argv, at("diff.txt"));
    FILE *f = fopen(at("diff.txt"), "r");
    char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    CHECK(rc == 0 && strstr(buf, "engine 38") && strstr(buf, "engine 58") && strstr(buf, "1.50x"),
          "text diff shows both engines and the ratio");
}

static void test_rank_by_rank(void)
{
    mkdir(at("runA"), 0700);
    mkdir(at("runB"), 0700);
    for (int r = 0; r < 2; r++) {
        scenario s = scenario_healthy();
        s.rank = r;
        s.world_size = 2;
        s.pid = 100 + r;
        char name[64];
        snprintf(name, sizeof name, "runA/rank%d.gtrace", r);
        CHECK(scenario_write(at(name), &s) == 0, "write A");
        s.kernel_ns = r == 1 ? 700000 : 500000;                   /* B: rank 1 slower */
        snprintf(name, sizeof name, "runB/rank%d.gtrace", 1 - r); /* other file order */
        s.rank = r;
        CHECK(scenario_write(at(name), &s) == 0, "write B");
    }
    int rc;
    json_t *root = diff_json(at("runA"), at("runB"), at("ranks.json"), &rc);
    if (!root)
        return;
    json_t *pairs = json_object_get(root, "pairs");
    CHECK(json_array_size(pairs) == 2, "two rank pairs");
    for (size_t i = 0; i < json_array_size(pairs); i++) {
        json_t *p = json_array_get(pairs, i);
        json_int_t ra = json_integer_value(json_object_get(json_object_get(p, "a"), "rank"));
        json_int_t rb = json_integer_value(json_object_get(json_object_get(p, "b"), "rank"));
        CHECK(ra == rb, "paired by rank: %lld vs %lld", (long long)ra, (long long)rb);
    }
    json_decref(root);
}

int main(int argc, char **argv)
{
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_engine_change();
    test_rank_by_rank();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_diff: all passed\n");
    return failures ? 1 : 0;
}
