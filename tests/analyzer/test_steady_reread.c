/* test_steady_reread.c — a long file's steady figures come from a third read of the file
 * rather than a log kept in memory (model_steady.c, issue 33 item 0: memory bounded whatever the
 * run's length). The limit is made small (GPUTRACE_STEADY_LOG_MAX) so that tests/data's traces
 * take the third read; the model must say it took it, and report (text and JSON), convert and
 * diff must write byte for byte what they write from the log. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "model.h"
#include "test_report_util.h"
#include "../gt_check.h"

static char dir[4096], data[4096];

static const char *at(const char *name)
{
    static char buf[8][4200];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static const char *trace(const char *name)
{
    static char buf[4][4200];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s.gtrace", data, name);
    return buf[k];
}

/* The limit: NULL the default (the traces here are far below it), else a number of records. */
static void set_limit(const char *v)
{
    if (v)
        setenv("GPUTRACE_STEADY_LOG_MAX", v, 1);
    else
        unsetenv("GPUTRACE_STEADY_LOG_MAX");
}

/* report (text, JSON), convert and diff (against other) of one trace, into files tagged tag. */
static void outputs(const char *name, const char *other, const char *tag)
{
    char f[5][64];
    snprintf(f[0], sizeof f[0], "%s.%s.txt", name, tag);
    snprintf(f[1], sizeof f[1], "%s.%s.json", name, tag);
    snprintf(f[2], sizeof f[2], "%s.%s.pftrace", name, tag);
    snprintf(f[3], sizeof f[3], "%s.%s.diff.txt", name, tag);
    snprintf(f[4], sizeof f[4], "%s.%s.diff.json", name, tag);
    run_args(cmd_report, "report", at(f[0]), 1, trace(name));
    run_args(cmd_report, "report", at(f[1]), 2, "--json", trace(name));
    run_args(cmd_convert, "convert", at("convert.out"), 4, "-q", "-o", at(f[2]), trace(name));
    run_args(cmd_diff, "diff", at(f[3]), 2, trace(other), trace(name));
    run_args(cmd_diff, "diff", at(f[4]), 3, "--json", trace(other), trace(name));
}

static void same_file(const char *a, const char *b)
{
    char *x = slurp(at(a)), *y = slurp(at(b));
    CHECK(x[0] != 0, "%s is empty", a);
    CHECK(strcmp(x, y) == 0, "%s and %s differ", a, b);
    free(x);
    free(y);
}

/* What the model says of one trace under the limit: whether it read the file a third time, and
 * its steady figures (they must be there for the comparison to mean anything). */
static int load_reread(const char *name, double *steady_steps, uint64_t *steady_kernels)
{
    gt_run run;
    memset(&run, 0, sizeof run);
    const char *paths[] = {trace(name)};
    int reread = -1;
    if (gt_run_load(&run, paths, 1, 0) == 0 && run.n == 1) {
        reread = run.procs[0].steady_reread;
        *steady_steps = run.procs[0].steady_steps;
        *steady_kernels = run.procs[0].steady_kernels;
    }
    gt_run_free(&run);
    return reread;
}

static void test_trace(const char *name, const char *other)
{
    double steps_log = 0, steps_reread = 0;
    uint64_t kernels_log = 0, kernels_reread = 0;
    set_limit(NULL);
    CHECK(load_reread(name, &steps_log, &kernels_log) == 0,
          "%s: the steady log is kept below the default limit", name);
    set_limit("10");
    CHECK(load_reread(name, &steps_reread, &kernels_reread) == 1,
          "%s: past GPUTRACE_STEADY_LOG_MAX=10 the steady figures come from a third read", name);
    CHECK(kernels_log > 0, "%s: steady kernels counted (%llu)", name,
          (unsigned long long)kernels_log);
    CHECK(kernels_reread == kernels_log && steps_reread == steps_log,
          "%s: steady kernels %llu by the third read, %llu by the log", name,
          (unsigned long long)kernels_reread, (unsigned long long)kernels_log);

    set_limit(NULL);
    outputs(name, other, "log");
    set_limit("10");
    outputs(name, other, "reread");
    set_limit(NULL);
    const char *ext[] = {"txt", "json", "pftrace", "diff.txt", "diff.json"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        char a[96], b[96];
        snprintf(a, sizeof a, "%s.log.%s", name, ext[i]);
        snprintf(b, sizeof b, "%s.reread.%s", name, ext[i]);
        same_file(a, b);
    }
}

/* A limit that is no number is the default one. */
static void test_limit_parse(void)
{
    double steps = 0;
    uint64_t kernels = 0;
    set_limit("many");
    CHECK(load_reread("sync_every_iter", &steps, &kernels) == 0,
          "GPUTRACE_STEADY_LOG_MAX=many: the default limit");
    set_limit(NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_steady_reread WORKDIR DATADIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    snprintf(data, sizeof data, "%s", argv[2]);
    setenv("GPUTRACE_LOCAL_BINARIES", "off", 1);
    setenv("NO_COLOR", "1", 1);
    /* steps and waits (sync_every_iter), a read-back every step, pageable copies, cuDNN
     * autotuning (its waits are the phases' evidence, kept in pass 2 past the limit), a
     * launch-bound loop, a ResNet-50 training run */
    test_trace("sync_every_iter", "sync_every_iter_nosync");
    test_trace("train_item_every_step", "sync_every_iter");
    test_trace("pageable_copies", "pageable_copies_pinned");
    test_trace("conv_backend_autotune_pip", "conv_backend_heuristic_pip");
    test_trace("launch_bound", "launch_bound_batched");
    test_trace("resnet50_train", "resnet18_queued");
    test_limit_parse();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_steady_reread: all passed\n");
    return failures ? 1 : 0;
}
