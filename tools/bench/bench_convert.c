/* bench_convert.c — speed and peak memory of `gputrace convert` (issue 5 goal: >= 5 M records/s
 * on one core, peak <= 64 MB whatever the trace size). Run by tools/bench/run_convert.sh.
 *
 *   bench_convert gen PATH RECORDS   write a synthetic training-like trace of about RECORDS
 *                                    records (launch + ext correlation + kernel per op, copies,
 *                                    a sync and NVTX range per step, allocations)
 *   bench_convert run PATH [json]    convert it to /dev/null; prints records/s and peak RSS
 * Generating and converting are separate processes so the peak RSS is the converter's alone. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "convert.h"
#include "gt_test_writer.h"
#include "gtrace_api.h"

#define T0 1700000000000000000ull

static gt_test_writer W;

static void add(uint16_t kind, const void *body, uint32_t size)
{
    if (gt_test_writer_add(&W, kind, 0, body, size) != 0) {
        fprintf(stderr, "bench_convert: write failed\n");
        exit(1);
    }
}

/* One step: 64 kernels (launch, ext corr, kernel), 2 copies, a sync, an NVTX range, a malloc
 * and a free: 2 + 64*3 + 2*3 + 1 + 2 + 2 = 205 records. CPU records are on one thread's chunks,
 * GPU records on tid 0 chunks. The recorder's writer drains every ring each 200 ms into chunks
 * of up to 1 MB, so one chunk holds many steps: STEPS_PER_DRAIN steps of CPU records, then their
 * GPU records (a 64 KB test-writer chunk is the smaller of the two limits). */
#define STEPS_PER_DRAIN 16

static uint64_t gen_step_cpu(uint64_t step, uint64_t t)
{
    uint64_t corr = step * 100;
    gt_rec_nvtx push = {.t_ns = t, .nvtx_kind = GT_NVTX_PUSH, .name_id = 2};
    add(GT_REC_NVTX, &push, sizeof push);
    gt_rec_api_alloc al = {
        .c = {.t_begin_ns = t + 100, .t_end_ns = t + 400, .func = GT_FN_cudaMalloc, .device = 0},
        .ptr = 0x10000 + step * 64,
        .bytes = 1 << 20,
        .alloc_kind = GT_ALLOC_DEVICE};
    add(GT_REC_API_ALLOC, &al, sizeof al);
    uint64_t cpu = t + 1000;
    for (int i = 0; i < 2; i++, cpu += 3000) {
        gt_rec_api_memcpy cp = {.c = {.t_begin_ns = cpu,
                                      .t_end_ns = cpu + 2000,
                                      .corr_id = ++corr,
                                      .stream = 0x55,
                                      .func = GT_FN_cudaMemcpyAsync,
                                      .device = 0},
                                .bytes = 1 << 20,
                                .direction = GT_DIR_H2D,
                                .src_kind = GT_MEM_PINNED,
                                .dst_kind = GT_MEM_DEVICE,
                                .is_async = 1};
        add(GT_REC_API_MEMCPY, &cp, sizeof cp);
    }
    for (int i = 0; i < 64; i++, cpu += 5000) {
        gt_rec_api_launch l = {.c = {.t_begin_ns = cpu,
                                     .t_end_ns = cpu + 4000,
                                     .corr_id = ++corr,
                                     .stream = 0x55,
                                     .func = GT_FN_cudaLaunchKernel,
                                     .device = 0},
                               .name_id = 1 + (uint32_t)(i % 8),
                               .grid = {256, 1, 1},
                               .block = {128, 1, 1}};
        add(GT_REC_API_LAUNCH, &l, sizeof l);
    }
    gt_rec_api_sync sy = {.c = {.t_begin_ns = cpu,
                                .t_end_ns = cpu + 200000,
                                .corr_id = ++corr,
                                .stream = 0x55,
                                .func = GT_FN_cudaStreamSynchronize,
                                .device = 0},
                          .sync_kind = GT_SYNC_STREAM};
    add(GT_REC_API_SYNC, &sy, sizeof sy);
    al.c.t_begin_ns = cpu + 201000, al.c.t_end_ns = cpu + 202000, al.c.func = GT_FN_cudaFree;
    al.is_free = 1;
    add(GT_REC_API_ALLOC, &al, sizeof al);
    gt_rec_nvtx pop = {.t_ns = cpu + 203000, .nvtx_kind = GT_NVTX_POP};
    add(GT_REC_NVTX, &pop, sizeof pop);
    return cpu + 210000;
}

static void gen_step_gpu(uint64_t step, uint64_t t)
{
    uint64_t gpu = t + 3000;
    uint64_t corr = step * 100;
    for (int i = 0; i < 66; i++) {
        /* gputrace's own kind, as the recorder writes it (another tool's pairs link nothing) */
        gt_rec_gpu_ext_corr x = {.external_id = ++corr,
                                 .corr_id = corr + (1ull << 40),
                                 .ext_kind = GT_EXT_CORR_KIND_OURS};
        add(GT_REC_GPU_EXT_CORR, &x, sizeof x);
        if (i < 2) {
            gt_rec_gpu_memcpy m = {.start_ns = gpu,
                                   .end_ns = gpu + 2000,
                                   .corr_id = x.corr_id,
                                   .bytes = 1 << 20,
                                   .device = 0,
                                   .stream = 7,
                                   .copy_kind = 1,
                                   .src_kind = GT_MEM_PINNED,
                                   .dst_kind = GT_MEM_DEVICE};
            add(GT_REC_GPU_MEMCPY, &m, sizeof m);
            gpu += 2500;
        } else {
            gt_rec_gpu_kernel k = {.start_ns = gpu,
                                   .end_ns = gpu + 2500,
                                   .corr_id = x.corr_id,
                                   .name_id = 1 + (uint32_t)(i % 8),
                                   .device = 0,
                                   .stream = 7,
                                   .grid = {256, 1, 1},
                                   .block = {128, 1, 1},
                                   .registers = 64};
            add(GT_REC_GPU_KERNEL, &k, sizeof k);
            gpu += 3000;
        }
    }
}

static int gen(const char *path, uint64_t records)
{
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = 1000;
    h.start_realtime_ns = (int64_t)T0;
    h.start_boottime_ns = 1000000000000;
    h.rank = -1;
    static const char cmd[] = "python\0train.py";
    if (gt_test_writer_open(&W, path, &h, "/usr/bin/python3", cmd, sizeof cmd) != 0)
        return 1;
    gt_test_writer_set_tid(&W, 1000);
    char name[64];
    for (uint32_t i = 1; i <= 8; i++) {
        snprintf(name, sizeof name, "_Z12conv_kernel%uILi3EEvPKfPfi", i);
        gt_test_writer_string(&W, i, name);
    }
    gt_test_writer_string(&W, 2000, "train_step");
    uint64_t t = T0 + 1000000;
    uint64_t steps = records / 205 + 1;
    for (uint64_t s0 = 0; s0 < steps; s0 += STEPS_PER_DRAIN) {
        uint64_t t_step[STEPS_PER_DRAIN];
        uint64_t n = steps - s0 < STEPS_PER_DRAIN ? steps - s0 : STEPS_PER_DRAIN;
        gt_test_writer_set_tid(&W, 1000); /* a tid switch flushes the chunk */
        for (uint64_t i = 0; i < n; i++) {
            t_step[i] = t;
            t = gen_step_cpu(s0 + i, t);
        }
        gt_test_writer_set_tid(&W, 0);
        for (uint64_t i = 0; i < n; i++)
            gen_step_gpu(s0 + i, t_step[i]);
    }
    printf("wrote %s: %" PRIu64 " steps, about %" PRIu64 " records\n", path, steps, steps * 205);
    return gt_test_writer_close(&W) == 0 ? 0 : 1;
}

static int run(const char *path, int json)
{
    FILE *out = fopen("/dev/null", "wb");
    if (!out)
        return 1;
    gt_convert_opts opts = {.format = json ? GT_CONVERT_JSON : GT_CONVERT_PERFETTO, .quiet = 1};
    gt_convert_stats st;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = gt_convert_run(&path, 1, out, &opts, &st);
    clock_gettime(CLOCK_MONOTONIC, &b);
    fclose(out);
    double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    /* CPU seconds too: on a shared machine the wall clock counts other processes' time. */
    double user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
    double sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    double cpu = user + sys; /* sys: the reader's pread calls, one pair per chunk */
    printf("format=%s records=%" PRIu64 " seconds=%.3f cpu_seconds=%.3f (user %.3f sys %.3f) "
           "records_per_s=%.0f records_per_cpu_s=%.0f peak_rss_mb=%.1f output_bytes=%" PRIu64
           " bytes_per_record=%.1f exit=%d\n",
           json ? "json" : "perfetto", st.records, s, cpu, user, sys, (double)st.records / s,
           cpu > 0 ? (double)st.records / cpu : 0.0, (double)ru.ru_maxrss / 1024.0, st.bytes_out,
           st.records ? (double)st.bytes_out / (double)st.records : 0.0, rc);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "gen"))
        return gen(argv[2], strtoull(argv[3], NULL, 10));
    if (argc >= 3 && !strcmp(argv[1], "run"))
        return run(argv[2], argc > 3 && !strcmp(argv[3], "json"));
    fprintf(stderr, "usage: bench_convert gen PATH RECORDS | run PATH [json]\n");
    return 2;
}
