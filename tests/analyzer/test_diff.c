/* test_diff.c — `gputrace diff`: two synthetic runs whose cuDNN engine changed; the JSON marks the
 * changed ops with both GPU times and their ratio, advice present in one run only is listed, and
 * run folders are compared rank by rank. Usage: test_diff WORKDIR */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "diff_steady.h"
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

static double ab(json_t *pair, const char *group, const char *key, const char *side)
{
    json_t *v = json_object_get(json_object_get(json_object_get(pair, group), key), side);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static int has_warning(json_t *pair, const char *needle)
{
    json_t *w = json_object_get(pair, "warnings");
    for (size_t i = 0; i < json_array_size(w); i++)
        if (strstr(json_string_value(json_array_get(w, i)), needle))
            return 1;
    return 0;
}

/* Issue 21 item 7: B autotunes at start, runs twice the steps at twice the batch. Whole-run
 * totals are dominated by that (GPU busy % falls); the steady per-step and per-sample figures
 * compare like with like, and the differences in markers, counts and batch are warned about. */
static void test_like_with_like(void)
{
    scenario a = scenario_healthy();
    a.nvtx = 1;
    a.sync_every_step = 1; /* the NVTX step ends when its GPU work does, as in train.py */
    a.cudnn = 1;
    a.conv_batch = 32;
    scenario b = a;
    b.steps = 20;
    b.conv_batch = 64;
    b.conv_kernel_ns = 800000; /* twice the samples, twice the convolution time */
    b.cudnn = 2;
    b.cudnn_engine = 10;
    b.autotune_ns = 40000000; /* 12 trials of 40 ms at start */
    CHECK(scenario_write(at("like_a.gtrace"), &a) == 0 &&
              scenario_write(at("like_b.gtrace"), &b) == 0,
          "write");
    int rc;
    json_t *root = diff_json(at("like_a.gtrace"), at("like_b.gtrace"), at("like.json"), &rc);
    if (!root)
        return;
    json_t *pair = json_array_get(json_object_get(root, "pairs"), 0);
    double sa = ab(pair, "steady", "step_ms", "a"), sb = ab(pair, "steady", "step_ms", "b");
    CHECK(ab(pair, "steady", "batch", "a") == 32 && ab(pair, "steady", "batch", "b") == 64,
          "batch from the op signatures: %.0f, %.0f", ab(pair, "steady", "batch", "a"),
          ab(pair, "steady", "batch", "b"));
    CHECK(fabs(ab(pair, "steady", "ms_per_sample", "a") - sa / 32) < 1e-6 &&
              fabs(ab(pair, "steady", "ms_per_sample", "b") - sb / 64) < 1e-6 && sb / 64 < sa / 32,
          "per sample: A %.4f, B %.4f ms", sa / 32, sb / 64);
    double busy_a = ab(pair, "steady", "busy_pct", "a"),
           busy_b = ab(pair, "steady", "busy_pct", "b");
    double run_a = ab(pair, "totals", "busy_pct", "a"), run_b = ab(pair, "totals", "busy_pct", "b");
    CHECK(busy_b > busy_a - 5 && run_b < run_a - 20,
          "steady busy %% compares the steps (%.1f -> %.1f) where the whole run's is dominated by "
          "autotuning (%.1f -> %.1f)",
          busy_a, busy_b, run_a, run_b);
    CHECK(has_warning(pair, "A has 10 steps, B 20") &&
              has_warning(pair, "batch differs (A 32, B 64"),
          "warnings about step counts and batch");
    json_t *steps = json_object_get(pair, "steps_aligned");
    CHECK(json_array_size(steps) == 10 &&
              json_is_true(json_object_get(json_array_get(steps, 0), "b_warmup")) &&
              json_is_false(json_object_get(json_array_get(steps, 5), "b_warmup")),
          "10 steps aligned, B's autotuning step is warm-up");
    json_t *ph = json_object_get(pair, "phases");
    CHECK(json_array_size(ph) >= 4, "phases side by side");
    json_decref(root);

    char *argv[] = {"diff", (char *)at("like_a.gtrace"), (char *)at("like_b.gtrace")};
    rc = run_captured(cmd_diff, 3, argv, at("like.txt"));
    FILE *f = fopen(at("like.txt"), "r");
    static char buf[1 << 17];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    const char *steady = strstr(buf, "steady state, per step"), *whole = strstr(buf, "whole run");
    CHECK(steady && whole && steady < whole && strstr(buf, " pts") &&
              strstr(buf, "ms per sample") && strstr(buf, "steps aligned one by one"),
          "text: the steady state per step first, shares in points, then the whole run");

    scenario c = a; /* no NVTX: steps from the launch pattern, another marker */
    c.nvtx = 0;
    CHECK(scenario_write(at("like_c.gtrace"), &c) == 0, "write");
    root = diff_json(at("like_a.gtrace"), at("like_c.gtrace"), at("like_c.json"), &rc);
    if (root) {
        pair = json_array_get(json_object_get(root, "pairs"), 0);
        CHECK(has_warning(pair, "step markers differ"), "warning about other step markers");
        json_decref(root);
    }
}

/* Phases filled by the model (by hand here): shown side by side with their shares, and the JSON
 * marks them computed; steps aligned with the warm-up marked. */
static void test_phases_filled(void)
{
    gt_proc a, b;
    memset(&a, 0, sizeof a);
    a.t_min = 1000000000ull;
    a.t_max = a.t_min + 10000000000ull; /* 10 s */
    a.phase_ns[GT_PHASE_STARTUP] = 1000000000ull;
    a.phase_ns[GT_PHASE_STEADY] = 9000000000ull;
    b = a;
    b.t_max = b.t_min + 30000000000ull; /* 30 s: 19 s of autotuning */
    b.phase_ns[GT_PHASE_AUTOTUNE] = 19000000000ull;
    b.phase_ns[GT_PHASE_STEADY] = 10000000000ull;
    gt_step sa[3] = {{0, 2000000}, {2000000, 3000000}, {3000000, 4000000}};
    gt_step sb[3] = {{0, 19000000}, {19000000, 19500000}, {19500000, 20000000}};
    a.steps = sa, a.n_steps = 3, a.warmup_steps = 0, a.steady_steps = 3, a.step_ms_median = 1;
    b.steps = sb, b.n_steps = 3, b.warmup_steps = 1, b.steady_steps = 2, b.step_ms_median = 0.5;
    snprintf(a.step_source, sizeof a.step_source, "NVTX range 'step'");
    snprintf(b.step_source, sizeof b.step_source, "NVTX range 'step'");
    FILE *f = fopen(at("phases.txt"), "w+");
    if (!f)
        return;
    gt_diff_steady_text(&a, &b, f, 15);
    rewind(f);
    static char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    CHECK(strstr(buf, "cuDNN autotuning") && strstr(buf, "19000.0 (63%)") &&
              strstr(buf, "1000.0 (10%)") && !strstr(buf, "not computed") &&
              !strstr(buf, "warning:"),
          "computed phases side by side with shares, no warning for like steps: %s", buf);
    CHECK(strstr(buf, "w 19.000") && strstr(buf, "-50.0%"), "aligned steps, warm-up marked: %s",
          buf);
    json_t *pair = json_object();
    gt_diff_steady_json(&a, &b, pair);
    json_t *ph = json_object_get(pair, "phases");
    json_t *tune = json_array_get(ph, GT_PHASE_AUTOTUNE);
    CHECK(json_array_size(ph) == GT_PHASE_COUNT &&
              json_is_true(json_object_get(tune, "computed")) &&
              json_real_value(json_object_get(tune, "b_ms")) == 19000 &&
              json_real_value(json_object_get(tune, "a_ms")) == 0,
          "JSON phases computed");
    json_decref(pair);
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
    test_like_with_like();
    test_phases_filled();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_diff: all passed\n");
    return failures ? 1 : 0;
}
