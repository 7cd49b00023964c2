/* test_steps.c — which marker makes the steps (issue 21 item 2), on synthetic traces: a library's
 * NVTX range is passed over (CUB in the CCCL domain, the way CuPy records it), torch.profiler's
 * ProfilerStep#1, #2... are one marker, a range much shorter than its period is passed over, one
 * kernel repeated (a Triton loop) and repeated CUDA graph launches make steps, cudaProfilerStart/
 * Stop windows do, a sync after each iteration does, two loops with a pause between make no
 * steps, and --step-range NAME wins or fails with a message. A loop whose work changes between
 * iterations (shapes that change and autotune, a recompilation) has no pattern, but an operation
 * once an iteration and a wait after it end its steps (the last resort); without such an
 * operation, or without a wait each iteration, it makes none. A loop led by the host (work before
 * an iteration's first kernel) that waits for the GPU once an iteration has its steps end at
 * those waits, a sync or a blocking copy back to the host. Waits back to back with no GPU work
 * between them (a tear-down) make no steps. Usage: test_steps WORKDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "gt_test_writer.h"
#include "gtrace_api.h"
#include "model.h"
#include "test_report_util.h"
#include "../gt_check.h"

#define T0 1700000000000000000ull
#define STR_DOMAIN_CCCL 5
#define STR_CUB 6
#define STR_STEP 7
#define STR_LOG 8
#define STR_KERNEL0 100
#define STR_PROFSTEP0 1000 /* ProfilerStep#0, #1, ... */

typedef struct synth {
    int steps;
    uint64_t period_ns;   /* one step, start to start */
    int kernels;          /* distinct kernels per step (1: one kernel repeated) */
    int step_range;       /* a default-domain "train_step" range around each step */
    int profiler_steps;   /* ProfilerStep#N ranges around each step (2: with emit_nvtx's op_id) */
    int cub_ranges;       /* two CUB ranges (CCCL domain) a step, short */
    int short_log_range;  /* a top-level "log" range each step, 1% of it */
    int graph;            /* the step's kernels come from one CUDA graph launch */
    int profiler_windows; /* cudaProfilerStart/Stop around each step */
    int same_kernel;      /* the step's launches are all of kernel_0 */
    int sync_each;        /* cudaDeviceSynchronize at the end of each step */
    int pause_after;      /* a pause of 50 steps' time after this step: two loops (0 none) */
    int teardown_syncs;   /* cudaDeviceSynchronize calls back to back after the loop, and one
                             before it (the end of the set-up) */
} synth;

static char dir[512];
static gt_test_writer w;
static uint64_t corr;

static const char *path_of(const char *name)
{
    static char b[4][600];
    static int slot;
    char *p = b[slot++ & 3];
    snprintf(p, sizeof b[0], "%s/%s", dir, name);
    return p;
}

static void nvtx(uint64_t t, uint32_t kind, uint32_t name, uint32_t domain)
{
    gt_rec_nvtx v;
    memset(&v, 0, sizeof v);
    v.t_ns = t;
    v.nvtx_kind = kind;
    v.name_id = kind == GT_NVTX_PUSH ? name : 0;
    v.domain_id = domain;
    gt_test_writer_add(&w, GT_REC_NVTX, 0, &v, sizeof v);
}

static void kernel(uint64_t start, uint64_t dur, uint32_t name, uint64_t graph, uint64_t c)
{
    gt_rec_gpu_kernel k;
    memset(&k, 0, sizeof k);
    k.start_ns = start;
    k.end_ns = start + dur;
    k.corr_id = c;
    k.graph_id = graph;
    k.name_id = name;
    k.stream = 7;
    gt_test_writer_add(&w, GT_REC_GPU_KERNEL, 0, &k, sizeof k);
}

static void api(uint64_t t, uint32_t func)
{
    gt_api_common c;
    memset(&c, 0, sizeof c);
    c.t_begin_ns = t;
    c.t_end_ns = t + 1000;
    c.corr_id = ++corr;
    c.func = func;
    gt_test_writer_add(&w, GT_REC_API, 0, &c, sizeof c);
}

static void strings(const synth *s)
{
    char buf[64];
    gt_test_writer_string(&w, STR_DOMAIN_CCCL, "CCCL");
    gt_test_writer_string(&w, STR_CUB, "cub::DeviceReduce::Sum");
    gt_test_writer_string(&w, STR_STEP, "train_step");
    gt_test_writer_string(&w, STR_LOG, "log");
    for (int k = 0; k < s->kernels; k++) {
        snprintf(buf, sizeof buf, "kernel_%d", k);
        gt_test_writer_string(&w, STR_KERNEL0 + (uint32_t)k, buf);
    }
    for (int i = 0; s->profiler_steps && i < s->steps; i++) {
        if (s->profiler_steps == 2) /* torch.autograd.profiler.emit_nvtx names them so */
            snprintf(buf, sizeof buf, "ProfilerStep#%d, op_id = %d", i + 1, 98 * i + 1);
        else
            snprintf(buf, sizeof buf, "ProfilerStep#%d", i + 1);
        gt_test_writer_string(&w, STR_PROFSTEP0 + (uint32_t)i, buf);
    }
}

/* One step from t: the GPU busy 80% of it with the step's kernels (each kernel_k once). */
static void one_step(const synth *s, int i, uint64_t t)
{
    uint64_t p = s->period_ns, kd = p * 8 / 10 / (uint64_t)s->kernels;
    if (s->profiler_windows)
        api(t, GT_FN_cudaProfilerStart);
    if (s->step_range)
        nvtx(t, GT_NVTX_PUSH, STR_STEP, 0);
    if (s->profiler_steps)
        nvtx(t, GT_NVTX_PUSH, STR_PROFSTEP0 + (uint32_t)i, 0);
    uint64_t c = ++corr;
    for (int k = 0; k < s->kernels; k++)
        kernel(t + 20000 + (uint64_t)k * kd, kd - 1000,
               STR_KERNEL0 + (uint32_t)(s->same_kernel ? 0 : k), s->graph ? 42 : 0,
               s->graph ? c : ++corr);
    for (int r = 0; r < s->cub_ranges; r++) { /* 1% of the step each, twice a step */
        nvtx(t + p / 4 + (uint64_t)r * p / 2, GT_NVTX_PUSH, STR_CUB, STR_DOMAIN_CCCL);
        nvtx(t + p / 4 + (uint64_t)r * p / 2 + p / 100, GT_NVTX_POP, 0, STR_DOMAIN_CCCL);
    }
    if (s->short_log_range) {
        nvtx(t + p / 2, GT_NVTX_PUSH, STR_LOG, 0);
        nvtx(t + p / 2 + p / 100, GT_NVTX_POP, 0, 0);
    }
    if (s->profiler_steps)
        nvtx(t + p - 5000, GT_NVTX_POP, 0, 0);
    if (s->step_range)
        nvtx(t + p - 4000, GT_NVTX_POP, 0, 0);
    if (s->profiler_windows)
        api(t + p - 3000, GT_FN_cudaProfilerStop);
    if (s->sync_each)
        api(t + p - 2000, GT_FN_cudaDeviceSynchronize);
}

/* A synthetic trace's file, opened for pid PID running `python SCRIPT` (CMD: argv, NUL-separated).
 */
static int open_synth(const char *path, int pid, const char *cmd, size_t cmd_len)
{
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = pid;
    h.rank = h.local_rank = h.world_size = -1;
    snprintf(h.host, sizeof h.host, "testhost");
    h.runtime.cupti_state = GT_CUPTI_ACTIVE;
    if (gt_test_writer_open(&w, path, &h, "/usr/bin/python3", cmd, cmd_len) != 0)
        return -1;
    gt_test_writer_set_tid(&w, 100);
    return 0;
}

static int write_synth(const char *path, const synth *s)
{
    if (open_synth(path, 77, "python\0loop.py", sizeof "python\0loop.py") != 0)
        return -1;
    strings(s);
    if (s->teardown_syncs)
        api(T0 + 500000, GT_FN_cudaDeviceSynchronize);
    for (int i = 0; i < s->steps; i++)
        one_step(s, i,
                 T0 + 1000000 + (uint64_t)i * s->period_ns +
                     (s->pause_after && i > s->pause_after ? 50 * s->period_ns : 0));
    uint64_t end = T0 + 1000000 + (uint64_t)s->steps * s->period_ns;
    for (int i = 0; i < s->teardown_syncs; i++) /* a static runtime freeing its memory */
        api(end + (uint64_t)i * 10000, GT_FN_cudaDeviceSynchronize);
    return gt_test_writer_close(&w);
}

/* Loads one synthetic trace (run prepared by the caller) and checks its step source's kind;
 * NULL when it did not load as one process. */
static const gt_proc *load_checked(const char *name, const char *path, gt_run *run, int kind)
{
    const char *paths[] = {path};
    CHECK(gt_run_load(run, paths, 1, 0) == 0 && run->n == 1, "%s: load", name);
    if (run->n != 1)
        return NULL;
    const gt_proc *p = &run->procs[0];
    CHECK(p->step_source_kind == kind, "%s: kind %s, expected %s (%s: %s)", name,
          gt_step_source_kind_name(p->step_source_kind), gt_step_source_kind_name(kind),
          p->step_source, p->step_why);
    return p;
}

/* Loads one trace with --step-range range (NULL: none); checks kind, steps and step time. */
static void expect(const char *name, const synth *s, const char *range, int kind, size_t n_steps,
                   const char *why_has)
{
    const char *path = path_of(name);
    CHECK(write_synth(path, s) == 0, "%s: write", name);
    gt_run run = {0};
    run.opts.step_range = range;
    const gt_proc *p = load_checked(name, path, &run, kind);
    if (!p) {
        gt_run_free(&run);
        return;
    }
    CHECK(p->n_steps == n_steps, "%s: %zu steps, expected %zu (%s)", name, p->n_steps, n_steps,
          p->step_source);
    double want = (double)s->period_ns / 1e6;
    if (n_steps >= 2)
        CHECK(p->step_ms_median > 0.95 * want && p->step_ms_median < 1.05 * want,
              "%s: step %.4f ms, expected %.4f ms", name, p->step_ms_median, want);
    CHECK(!why_has || strstr(p->step_why, why_has), "%s: why '%s' lacks '%s'", name, p->step_why,
          why_has);
    gt_run_free(&run);
}

static synth base(void)
{
    synth s;
    memset(&s, 0, sizeof s);
    s.steps = 20;
    s.period_ns = 2000000;
    s.kernels = 6;
    return s;
}

static void test_library_range_passed_over(void)
{
    synth s = base();
    s.cub_ranges = 1; /* CuPy: CUB's ranges in the CCCL domain, twice a step */
    expect("cub.gtrace", &s, NULL, GT_STEPSRC_KERNEL_PATTERN, 19,
           "'cub::DeviceReduce::Sum' is a library range (CCCL)");
    s.step_range = 1; /* the program's own range wins over CUB's and over the pattern */
    expect("cub_step.gtrace", &s, NULL, GT_STEPSRC_NVTX, 20, "the program's own NVTX range");
}

static void test_profiler_steps_one_marker(void)
{
    synth s = base();
    s.profiler_steps = 1;
    s.short_log_range = 1;
    expect("profstep.gtrace", &s, NULL, GT_STEPSRC_PROFILER_STEP, 20, "torch.profiler");
    s.profiler_steps = 2; /* "ProfilerStep#3, op_id = 197": each name unique before the fix */
    expect("profstep_nvtx.gtrace", &s, NULL, GT_STEPSRC_PROFILER_STEP, 20, "torch.profiler");
    expect("profstep_nvtx_user.gtrace", &s, "ProfilerStep", GT_STEPSRC_USER, 20, "--step-range");
}

static void test_short_range_passed_over(void)
{
    synth s = base();
    s.short_log_range = 1; /* top-level, once a step, but 1% of it: inside a step */
    expect("log.gtrace", &s, NULL, GT_STEPSRC_KERNEL_PATTERN, 19,
           "'log' lasts 1% of the time between its starts");
}

static void test_one_kernel_repeated(void)
{
    synth s = base();
    s.kernels = 1; /* a Triton loop: one kernel, launched again and again */
    s.steps = 300;
    s.period_ns = 15000;
    expect("triton.gtrace", &s, NULL, GT_STEPSRC_KERNEL_PATTERN, 299, "one kernel over and over");
}

static void test_graph_launches(void)
{
    synth s = base();
    s.graph = 1; /* torch.compile reduce-overhead: each step one graph launch */
    expect("graph.gtrace", &s, NULL, GT_STEPSRC_GRAPH_LAUNCH, 19, "CUDA graph");
}

static void test_profiler_windows(void)
{
    synth s = base();
    s.profiler_windows = 1;
    expect("windows.gtrace", &s, NULL, GT_STEPSRC_PROFILER_RANGE, 20, "cudaProfilerStart/Stop");
}

static void test_sync_each_iteration(void)
{
    synth s = base();
    s.same_kernel = 1; /* a benchmark loop: 6 launches of one kernel, then a sync */
    s.sync_each = 1;
    expect("sync_each.gtrace", &s, NULL, GT_STEPSRC_KERNEL_PATTERN, 19, "cudaDeviceSynchronize");
}

/* More waits than iterations, back to back after the loop with no GPU work between them (on the
 * H200, managed_gemv's static build: 18 device syncs as it freed its memory made 97 µs "steps"
 * of a 30.7 ms loop): waits that end no work end no step. */
static void test_waits_without_work_passed_over(void)
{
    synth s = base();
    s.teardown_syncs = 30;
    expect("teardown_syncs.gtrace", &s, NULL, GT_STEPSRC_KERNEL_PATTERN, 19, "kernel_0");
}

static void test_several_loops_rejected(void)
{
    synth s = base();
    s.steps = 40;
    s.pause_after = 19; /* two loops of 20 with a long pause: no one step */
    expect("two_loops.gtrace", &s, NULL, GT_STEPSRC_NONE, 0, "several loops, not one");
}

static void test_step_range_option(void)
{
    synth s = base();
    s.step_range = 1;
    s.short_log_range = 1;
    expect("user.gtrace", &s, "log", GT_STEPSRC_USER, 20, "--step-range");
    synth ps = base();
    ps.profiler_steps = 1;
    expect("user_prof.gtrace", &ps, "ProfilerStep#N", GT_STEPSRC_USER, 20, "--step-range");
    expect("user_prof2.gtrace", &ps, "ProfilerStep", GT_STEPSRC_USER, 20, "--step-range");
    /* an unknown name: no steps, no fallback, and the commands say so and exit 2 */
    expect("user_none.gtrace", &s, "no_such_range", GT_STEPSRC_NONE, 0, "no NVTX range");
    char *argv[] = {"report", "--step-range", "no_such_range", (char *)path_of("user.gtrace")};
    int rc = run_captured(cmd_report, 4, argv, path_of("user_none.out"));
    CHECK(rc == 2, "report --step-range unknown: exit %d, expected 2", rc);
    char *argv_ok[] = {"report", "--json", "--step-range", "log", (char *)path_of("user.gtrace")};
    rc = run_captured(cmd_report, 5, argv_ok, path_of("user_ok.out"));
    CHECK(rc == 0, "report --step-range log: exit %d", rc);
    char *conv[] = {"convert",
                    "-q",
                    "--step-range",
                    "no_such_range",
                    "-o",
                    (char *)path_of("x.perfetto-trace"),
                    (char *)path_of("user.gtrace")};
    rc = run_captured(cmd_convert, 7, conv, path_of("conv.out"));
    CHECK(rc == 2, "convert --step-range unknown: exit %d, expected 2", rc);
    char *diff[] = {"diff", "--step-range", "no_such_range", (char *)path_of("user.gtrace"),
                    (char *)path_of("user.gtrace")};
    rc = run_captured(cmd_diff, 5, diff, path_of("diff.out"));
    CHECK(rc == 2, "diff --step-range unknown: exit %d, expected 2", rc);
}

/* ---- a loop whose work changes between iterations (model_steps_waits.c) ---- */

#define STR_FILL 20
#define STR_SHAPE0 30 /* a shape's convolution kernel: 30 + 4 * version + shape */
#define STR_TRIAL0 200

typedef struct changing {
    int steps;
    uint64_t period_ns;
    int fills;     /* the input's random fill: kernels an iteration (1: once an iteration) */
    int wait_each; /* the loss read back each iteration (a 4 B copy, then a stream sync) */
    int recompile; /* every 10 iterations new kernel names, compiled with read-backs of its own */
} changing;

static void sync_call(uint64_t end, uint32_t func)
{
    api(end - 1000, func); /* api() records [t, t + 1 us] */
}

static void readback(uint64_t t)
{
    gt_rec_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    m.start_ns = t;
    m.end_ns = t + 2000;
    m.corr_id = ++corr;
    m.bytes = 4;
    m.stream = 7;
    m.copy_kind = 2;
    m.dst_kind = GT_MEM_PAGEABLE;
    m.src_kind = GT_MEM_DEVICE;
    gt_test_writer_add(&w, GT_REC_GPU_MEMCPY, 0, &m, sizeof m);
    sync_call(t + 10000, GT_FN_cudaStreamSynchronize);
}

/* The program of tests/data/corpus/bench_shapes (sample_apps/corpus/cudnn_benchmark.py): a new
 * input size joins every 4 iterations and each iteration takes the next of the sizes seen so
 * far; an iteration meeting a size for the first time autotunes its convolution (6 trials, each
 * timed with a device sync, 8 ms); a size runs 3 + size convolution kernels. */
static int write_changing(const char *path, const changing *c)
{
    if (open_synth(path, 78, "python\0shapes.py", sizeof "python\0shapes.py") != 0)
        return -1;
    char buf[64];
    gt_test_writer_string(&w, STR_FILL, "distribution_fill");
    for (int v = 0; v < 8; v++)
        for (int k = 0; k < 4; k++) {
            snprintf(buf, sizeof buf, "conv_v%d_size%d", v, k);
            gt_test_writer_string(&w, STR_SHAPE0 + (uint32_t)(4 * v + k), buf);
        }
    for (int k = 0; k < 6 * 16; k++) {
        snprintf(buf, sizeof buf, "trial_%d", k);
        gt_test_writer_string(&w, STR_TRIAL0 + (uint32_t)k, buf);
    }
    int seen[8][4] = {{0}}, tuned = 0;
    uint64_t t = T0 + 1000000;
    for (int i = 0; i < c->steps; i++) {
        int introduced = 1 + i / 4 < 4 ? 1 + i / 4 : 4, size = i % introduced;
        int version = c->recompile ? i / 10 : 0;
        uint64_t g = t + 10000;
        for (int f = 0; f < c->fills; f++, g += 30000)
            kernel(g, 20000, STR_FILL, 0, ++corr);
        if (c->recompile && i && i % 10 == 0) { /* the compiler's own runs and read-backs */
            for (int r = 0; r < 2; r++, g += 3000000) {
                kernel(g, 50000, STR_TRIAL0 + (uint32_t)(6 * tuned++ % 96), 0, ++corr);
                readback(g + 60000);
            }
        }
        if (!seen[version][size]) { /* autotuning: trials timed one by one */
            seen[version][size] = 1;
            for (int j = 0; j < 6; j++, g += 1300000) {
                kernel(g, 200000, STR_TRIAL0 + (uint32_t)((6 * tuned + j) % 96), 0, ++corr);
                sync_call(g + 1200000, GT_FN_cudaDeviceSynchronize);
            }
            tuned++;
        }
        for (int k = 0; k < 3 + size; k++, g += 110000)
            kernel(g, 100000, STR_SHAPE0 + (uint32_t)(4 * version + size), 0, ++corr);
        uint64_t end = g + 50000 > t + c->period_ns ? g + 50000 : t + c->period_ns;
        if (c->wait_each)
            readback(end - 40000);
        t = end;
    }
    if (!c->wait_each)
        sync_call(t + 10000, GT_FN_cudaDeviceSynchronize);
    return gt_test_writer_close(&w);
}

static void expect_changing(const char *name, const changing *c, int kind, const char *why_has)
{
    const char *path = path_of(name);
    CHECK(write_changing(path, c) == 0, "%s: write", name);
    gt_run run = {0};
    const gt_proc *p = load_checked(name, path, &run, kind);
    if (!p) {
        gt_run_free(&run);
        return;
    }
    double want = (double)c->period_ns / 1e6;
    if (kind != GT_STEPSRC_NONE) {
        CHECK(p->n_steps + 2 >= (size_t)c->steps, "%s: %zu steps of %d iterations", name,
              p->n_steps, c->steps);
        CHECK(p->step_ms_median > 0.95 * want && p->step_ms_median < 1.05 * want,
              "%s: step %.4f ms, expected %.4f ms", name, p->step_ms_median, want);
    } else {
        CHECK(p->n_steps == 0, "%s: %zu steps, expected none", name, p->n_steps);
    }
    CHECK(strstr(p->step_why, why_has), "%s: why '%s' lacks '%s'", name, p->step_why, why_has);
    gt_run_free(&run);
}

static void test_changing_iterations(void)
{
    changing c = {.steps = 40, .period_ns = 2000000, .fills = 1, .wait_each = 1};
    /* shapes that change: the fill once an iteration, then the read-back ends it */
    expect_changing("shapes.gtrace", &c, GT_STEPSRC_ITERATION_WAIT,
                    "'distribution_fill' runs once an iteration and the program then waits for "
                    "the GPU ('cudaStreamSynchronize')");
    /* recompiles: new kernel names every 10 iterations, two extra read-backs in the compilation */
    c.recompile = 1;
    expect_changing("recompile.gtrace", &c, GT_STEPSRC_ITERATION_WAIT, "runs once an iteration");
    /* no operation once an iteration (the fill runs twice): no steps */
    c.recompile = 0;
    c.fills = 2;
    expect_changing("no_once.gtrace", &c, GT_STEPSRC_NONE, "no marker");
    /* an operation once an iteration but no wait each iteration (one sync at the end): none */
    c.fills = 1;
    c.wait_each = 0;
    expect_changing("no_wait.gtrace", &c, GT_STEPSRC_NONE, "no marker");
}

/* ---- a loop led by the host (model_steps_pattern.c: a pattern's steps end at the waits) ---- */

typedef struct host_led {
    int steps;
    int every;       /* every Nth iteration the host works 1 ms before its first kernel and 5 ms
                        after it (a new input shape's cuDNN plans); 0: never */
    int wait;        /* after the kernels: 0 none, 1 a stream sync, 2 a blocking cudaMemcpy back
                        to pageable memory (its staging after the GPU's copy; no sync) */
    int same_kernel; /* 12 launches of one kernel (matmuls), then an add (not 4 kernels) */
    int tail_waits;  /* waits after the loop (a timing of its own) */
} host_led;

#define HOST_USUAL_NS 1750000ull /* 0.1 ms host work, 4 kernels of 0.4 ms, 0.05 ms to the wait */

static uint64_t copy_back(uint64_t t)
{
    gt_rec_gpu_memcpy m;
    memset(&m, 0, sizeof m);
    m.start_ns = t;
    m.end_ns = t + 20000;
    m.corr_id = ++corr;
    m.bytes = 4 << 20;
    m.stream = 7;
    m.copy_kind = 2; /* DtoH */
    m.src_kind = GT_MEM_DEVICE;
    m.dst_kind = GT_MEM_PAGEABLE;
    gt_test_writer_add(&w, GT_REC_GPU_MEMCPY, 0, &m, sizeof m);
    gt_rec_api_memcpy c;
    memset(&c, 0, sizeof c);
    c.c.t_begin_ns = t - 10000;
    c.c.t_end_ns = t + 50000; /* the staging: the call returns 30 us after the GPU's copy */
    c.c.corr_id = ++corr;
    c.c.func = GT_FN_cudaMemcpy;
    c.bytes = m.bytes;
    c.direction = GT_DIR_D2H;
    c.src_kind = GT_MEM_DEVICE;
    c.dst_kind = GT_MEM_PAGEABLE;
    c.peer_device = -1;
    gt_test_writer_add(&w, GT_REC_API_MEMCPY, 0, &c, sizeof c);
    return c.c.t_end_ns;
}

static int write_host_led(const char *path, const host_led *h)
{
    if (open_synth(path, 79, "python\0led.py", sizeof "python\0led.py") != 0)
        return -1;
    synth names = base();
    names.kernels = 4;
    strings(&names);
    uint64_t t = T0 + 1000000;
    for (int i = 0; i < h->steps + h->tail_waits; i++) {
        int heavy = h->every && i % h->every == 0, tail = i >= h->steps;
        uint64_t g = t + (heavy ? 1000000 : 100000), per = h->same_kernel ? 13 : 4;
        for (uint64_t k = 0; k < per && !tail; k++) { /* 1.6 ms of kernels */
            uint32_t name = (uint32_t)(h->same_kernel ? k == per - 1 : k);
            kernel(g, 1600000 / per - 1000, STR_KERNEL0 + name, 0, ++corr);
            g += 1600000 / per + (heavy && k == 0 ? 5000000 : 0);
        }
        if (h->wait == 2) {
            t = copy_back(g + 20000);
        } else {
            t = g + 50000;
            if (h->wait == 1 || tail)
                sync_call(t, GT_FN_cudaStreamSynchronize);
        }
    }
    return gt_test_writer_close(&w);
}

/* The steps of a host-led loop: KIND, the host's median iteration (the usual one), WHY_HAS. */
static void expect_host_led(const char *name, const host_led *h, int kind, const char *why_has,
                            const char *why_lacks)
{
    const char *path = path_of(name);
    CHECK(write_host_led(path, h) == 0, "%s: write", name);
    gt_run run = {0};
    const gt_proc *p = load_checked(name, path, &run, kind);
    if (!p) {
        gt_run_free(&run);
        return;
    }
    double want = (h->wait == 2 ? HOST_USUAL_NS + 40000 : HOST_USUAL_NS) / 1e6;
    CHECK(p->step_ms_median > 0.95 * want && p->step_ms_median < 1.05 * want,
          "%s: step %.4f ms, the host's iteration %.4f ms (%s)", name, p->step_ms_median, want,
          p->step_source);
    CHECK(strstr(p->step_why, why_has), "%s: why '%s' lacks '%s'", name, p->step_why, why_has);
    CHECK(!why_lacks || !strstr(p->step_why, why_lacks), "%s: why '%s' has '%s'", name, p->step_why,
          why_lacks);
    gt_run_free(&run);
}

static void test_steps_end_at_waits(void)
{
    /* every third iteration the host works before its first kernel and after it: steps from one
     * first kernel to the next would put that first millisecond in the iteration before; the
     * sync that ends each iteration times them as the host does */
    host_led h = {.steps = 30, .every = 3, .wait = 1};
    expect_host_led("led_sync.gtrace", &h, GT_STEPSRC_KERNEL_PATTERN,
                    "each step ends when that wait returns", NULL);
    /* the wait is the copy back to pageable memory: the host resumes when the call returns */
    h.wait = 2;
    expect_host_led("led_copy.gtrace", &h, GT_STEPSRC_KERNEL_PATTERN,
                    "waits for the GPU ('cudaMemcpy of 4194304 B') once an iteration", NULL);
    /* no wait each iteration: the pattern's own times (the same median without heavy ones) */
    host_led free_running = {.steps = 30, .wait = 0};
    expect_host_led("led_nowait.gtrace", &free_running, GT_STEPSRC_KERNEL_PATTERN,
                    "each starting with 'kernel_0'", "once an iteration");
    /* one kernel 12 times, an add, then a sync; after the loop two syncs of a timing of its
     * own: the sync is regular through the loop, so the kernel is the iteration's work, not its
     * step */
    host_led same = {.steps = 12, .wait = 1, .same_kernel = 1, .tail_waits = 2};
    expect_host_led("led_same_kernel.gtrace", &same, GT_STEPSRC_KERNEL_PATTERN,
                    "each step ends when that wait returns", "over and over");
}

static void test_library_names(void)
{
    CHECK(gt_step_library("CCCL", "x"), "CCCL domain");
    CHECK(gt_step_library("TSL", "Thunk:#name=jit(step)"), "XLA");
    CHECK(gt_step_library(NULL, "Thunk:#name=jit(train_step)/dot"), "XLA thunk");
    CHECK(gt_step_library(NULL, "aten::add, seq = 12"), "torch op");
    CHECK(gt_step_library(NULL, "ncclAllReduce"), "NCCL");
    CHECK(!gt_step_library(NULL, "train_step"), "the program's own");
    CHECK(!gt_step_library("MyApp", "ProfilerStep#3"), "a user domain");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_steps WORKDIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    test_library_names();
    test_library_range_passed_over();
    test_profiler_steps_one_marker();
    test_short_range_passed_over();
    test_one_kernel_repeated();
    test_graph_launches();
    test_profiler_windows();
    test_sync_each_iteration();
    test_waits_without_work_passed_over();
    test_several_loops_rejected();
    test_step_range_option();
    test_changing_iterations();
    test_steps_end_at_waits();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_steps: all checks passed\n");
    return failures != 0;
}
