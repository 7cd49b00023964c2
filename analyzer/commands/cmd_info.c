/* cmd_info.c — `gputrace info FILE...`: what a trace holds and whether it is whole.
 * Exit 0: every file whole; 1: some file truncated or damaged (what was readable is shown);
 * 2: some file is not a trace, unreadable, or of a newer format version. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_args.h"
#include "commands.h"
#include "util.h"
#include "gt_reader.h"
#include "outfile.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "usage: gputrace info TRACE... (files or run folders of *.gtrace)\n\n"
            "Shows each trace's header (process, host, rank, versions, devices, CUPTI state),\n"
            "its record counts by kind, chunks and lost records, and whether it is whole.\n\n"
            "exit status: 0 all files whole; 1 a file is truncated or damaged (the readable\n"
            "part is summarized); 2 a file is not a gputrace trace or has a newer format, or a\n"
            "folder holds none.\n");
}

static void print_version(const char *what, int32_t v)
{
    if (v)
        printf("  %-22s %d\n", what, v);
    else
        printf("  %-22s not seen\n", what);
}

static void print_header(gt_reader *r)
{
    const gt_file_header *h = gt_reader_header(r);
    char when[64] = "?";
    time_t secs = (time_t)(h->start_realtime_ns / 1000000000);
    struct tm tm;
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    printf("%s\n", gt_reader_path(r));
    printf("  format                 %u.%u\n", h->version_major, h->version_minor);
    printf("  process                pid %d, parent %d%s\n", h->pid, h->ppid,
           h->flags & GT_HDR_FORKED_CHILD ? " (forked child)" : "");
    printf("  host                   %s\n", h->host);
    if (h->rank >= 0)
        printf("  rank                   %d (local %d) of %d\n", h->rank, h->local_rank,
               h->world_size);
    printf("  started                %s\n", when);
    printf("  executable             %s\n", gt_reader_exe(r));
    printf("  command                %s\n", gt_reader_cmdline(r));
    const gt_runtime_info *ri = &h->runtime;
    print_version("driver", ri->driver_version);
    print_version("CUDA runtime", ri->runtime_version);
    print_version("cuDNN", ri->cudnn_version);
    print_version("cuDNN built for CUDA", ri->cudnn_cudart_version);
    print_version("cuBLAS", ri->cublas_version);
    print_version("CUPTI", ri->cupti_version);
    printf("  %-22s %s\n", "CUPTI state", gt_cupti_state_name(ri->cupti_state));
    if (h->flags & GT_HDR_STATIC_CUDART)
        printf("  %-22s %s\n", "note", "static CUDA runtime: API calls seen through CUPTI only");
    /* Format 1.3 says which way CUPTI stamped kernels; older recorders never asked. */
    if (ri->cupti_state == GT_CUPTI_ACTIVE && (h->version_major > 1 || h->version_minor >= 3))
        printf("  %-22s %s\n", "kernel timestamps",
               h->flags & GT_HDR_HW_TRACE
                   ? "hardware events (cuptiActivityEnableHWTrace)"
                   : "CUPTI instrumentation (no hardware trace on this GPU or CUPTI)");
    /* Format 1.4: whether unified memory's faults and migrations were recorded. */
    if (h->flags & GT_HDR_UM_COUNTERS)
        printf("  %-22s %s\n", "unified memory", "CUPTI's counters on (faults, migrations)");
    else if (h->flags & GT_HDR_UM_REFUSED)
        printf("  %-22s %s\n", "unified memory",
               "managed memory in use, but CUPTI refused its counters: faults unknown");
    int ndev = ri->device_count < GT_MAX_DEVICES ? ri->device_count : GT_MAX_DEVICES;
    for (int i = 0; i < ndev; i++) {
        const gt_device_info *d = &ri->devices[i];
        printf("  device %-15d %s, compute %d.%d, %d SMs, %.1f GiB\n", i,
               d->name[0] ? d->name : "?", d->cc_major, d->cc_minor, d->sm_count,
               (double)d->total_mem_bytes / (1024.0 * 1024.0 * 1024.0));
    }
}

static void print_counts(const gt_reader_stats *st)
{
    printf("  records                %llu\n", (unsigned long long)st->records);
    for (int k = 0; k < GT_REC_KIND_MAX; k++)
        if (st->records_by_kind[k])
            printf("    %-20s %llu\n", gt_record_kind_name((uint16_t)k),
                   (unsigned long long)st->records_by_kind[k]);
    if (st->unknown_kinds)
        printf("    %-20s %llu (newer kinds, skipped)\n", "unknown",
               (unsigned long long)st->unknown_kinds);
    printf("  chunks                 %llu\n", (unsigned long long)st->chunks_ok);
    printf("  lost records           %llu\n", (unsigned long long)st->lost_records);
}

/* GPUTRACE_CAPTURE: the windows the trace covers, from its CAPTURE records (format 1.3). */
typedef struct capture_windows {
    uint64_t windows, open_since_ns, covered_ns, end_ns;
    uint32_t source;
    bool open;
    /* GPUTRACE_SAMPLE: CUPTI's windows (CAPTURE records of source SAMPLE) */
    uint64_t gpu_windows, gpu_since_ns, gpu_covered_ns, first_ns;
    uint64_t last_call_ns; /* the end of the last call: the run's end without an END record */
    bool gpu_open;
    /* GPUTRACE_FLIGHT_RECORDER: its writes (FLIGHT records); the last one has the totals */
    uint64_t flight_writes, flight_records;
    gt_rec_flight flight_last;
} capture_windows;

static void note_sample(capture_windows *w, const gt_rec_capture *c)
{
    if (!w->first_ns)
        w->first_ns = c->t_ns;
    if (c->on && !w->gpu_open) {
        w->gpu_windows++;
        w->gpu_open = true;
        w->gpu_since_ns = c->t_ns;
    } else if (!c->on && w->gpu_open) {
        w->gpu_open = false;
        if (c->t_ns > w->gpu_since_ns)
            w->gpu_covered_ns += c->t_ns - w->gpu_since_ns;
    }
}

static void note_capture(capture_windows *w, const gt_record *rec)
{
    if (rec->kind == GT_REC_END && rec->body_size >= GT_REC_END_SIZE_1_2) {
        gt_rec_end e;
        gt_body_copy(&e, sizeof e, rec); /* an older record is shorter: the rest reads 0 */
        w->end_ns = e.t_begin_ns ? e.t_begin_ns : e.t_ns;
        return;
    }
    if (rec->kind >= GT_REC_API && rec->kind <= GT_REC_API_CUBLAS &&
        rec->body_size >= sizeof(gt_api_common)) {
        gt_api_common c;
        memcpy(&c, rec->body, sizeof c);
        if (c.t_end_ns > w->last_call_ns)
            w->last_call_ns = c.t_end_ns;
        return;
    }
    if (rec->kind == GT_REC_FLIGHT && rec->body_size >= sizeof(gt_rec_flight)) {
        memcpy(&w->flight_last, rec->body, sizeof w->flight_last);
        w->flight_writes++;
        w->flight_records += w->flight_last.records;
        return;
    }
    if (rec->kind != GT_REC_CAPTURE || rec->body_size < sizeof(gt_rec_capture))
        return;
    const gt_rec_capture *c = rec->body;
    if (c->source == GT_CAPTURE_SRC_SAMPLE) {
        note_sample(w, c);
        return;
    }
    w->source = c->source;
    if (c->on && !w->open) {
        w->windows++;
        w->open = true;
        w->open_since_ns = c->t_ns;
    } else if (!c->on && w->open) {
        w->open = false;
        if (c->t_ns > w->open_since_ns)
            w->covered_ns += c->t_ns - w->open_since_ns;
    }
}

static void print_flight(const gt_file_header *h, const capture_windows *w)
{
    if (!(h->flags & GT_HDR_FLIGHT_RECORDER))
        return;
    static const char *const WHY[] = {"?", "exit", "trigger", "fatal signal"};
    const gt_rec_flight *f = &w->flight_last;
    printf("  %-22s last %llu s kept; %llu write%s (the last at %s), %llu records; %llu records "
           "evicted (on purpose, not lost)\n",
           "flight recorder", (unsigned long long)(f->window_ns / 1000000000u),
           (unsigned long long)w->flight_writes, w->flight_writes == 1 ? "" : "s",
           WHY[f->reason <= 3 ? f->reason : 0], (unsigned long long)w->flight_records,
           (unsigned long long)f->evicted_records);
}

static void print_sample(const gt_file_header *h, const capture_windows *w)
{
    if (!(h->flags & GT_HDR_GPU_SAMPLED))
        return;
    uint64_t covered = w->gpu_covered_ns;
    uint64_t end = w->end_ns ? w->end_ns : w->last_call_ns; /* no END record: killed, or older */
    if (w->gpu_open && end > w->gpu_since_ns)
        covered += end - w->gpu_since_ns;
    uint64_t span = end > w->first_ns && w->first_ns ? end - w->first_ns : 0;
    printf("  %-22s %llu window%s, %.3f s of %.3f s with GPU records (calls recorded all along; "
           "GPU figures cover the windows only)\n",
           "GPU sampled", (unsigned long long)w->gpu_windows, w->gpu_windows == 1 ? "" : "s",
           (double)covered / 1e9, (double)span / 1e9);
}

static void print_capture(const gt_file_header *h, const capture_windows *w)
{
    print_flight(h, w);
    print_sample(h, w);
    if (!(h->flags & GT_HDR_CAPTURE_WINDOWS))
        return;
    static const char *const SOURCE[] = {"?", "cudaProfilerStart/Stop", "the capture signal",
                                         "the trigger file"};
    uint64_t covered = w->covered_ns;
    if (w->open && w->end_ns > w->open_since_ns)
        covered += w->end_ns - w->open_since_ns;
    printf("  %-22s %llu window%s (%s), %.3f s recorded%s; nothing outside them\n", "capture",
           (unsigned long long)w->windows, w->windows == 1 ? "" : "s",
           SOURCE[w->source <= 3 ? w->source : 0], (double)covered / 1e9,
           w->open && !w->end_ns ? " (the last one open at the end of the file)" : "");
}

/* 0 whole, 1 truncated/damaged, 2 unusable. */
/* How the recording ended, and the calls it counted instead of recording. */
static void print_end(const gt_rec_end *e)
{
    static const char *const how[] = {"?", "exit", "fatal signal", "write failure"};
    printf("  ended                  by %s", how[e->reason <= GT_END_WRITE_FAILED ? e->reason : 0]);
    if (e->reason == GT_END_SIGNAL)
        printf(" %d", e->signal);
    printf("\n");
    if (e->lost_after_end || e->calls_interrupted)
        printf("  calls not recorded     %llu after the end, %llu from signal handlers that "
               "interrupted gputrace (both counted as lost)\n",
               (unsigned long long)e->lost_after_end, (unsigned long long)e->calls_interrupted);
    if (e->calls_nested)
        printf(
            "  nested calls           %llu made inside another wrapped call (by its library or a "
            "signal handler): not recorded, the outer call covers them\n",
            (unsigned long long)e->calls_nested);
    if (e->calls_before_cupti)
        printf("  GPU work not recorded  of %llu calls (launches, copies, memsets, library calls) "
               "made\n                         before CUPTI was attached: the calls are recorded\n",
               (unsigned long long)e->calls_before_cupti);
}

static int info_one(const char *path)
{
    gt_reader *r;
    char err[1024];
    int rc = gt_reader_open(path, &r, err, sizeof err);
    if (rc == GT_OPEN_BAD_HEADER) {
        fprintf(stderr, "gputrace info: %s (0 records read)\n", err);
        return 1;
    }
    if (rc != GT_OPEN_OK) {
        fprintf(stderr, "gputrace info: %s\n", err);
        return 2;
    }
    gt_record rec;
    capture_windows windows = {0};
    while (gt_reader_next(r, &rec))
        note_capture(&windows, &rec);
    print_header(r);
    print_capture(gt_reader_header(r), &windows);
    const gt_reader_stats *st = gt_reader_get_stats(r);
    print_counts(st);
    int status = 0;
    if (st->truncated || st->chunks_damaged || st->chunk_seq_gaps) {
        status = 1;
        printf("  state                  %s\n", st->truncated ? "TRUNCATED" : "DAMAGED");
        fprintf(stderr,
                "gputrace info: %s is %s at byte %llu: read %llu of %llu bytes and %llu records "
                "(%llu damaged chunks skipped, %llu chunks missing)\n",
                path, st->truncated && !st->chunks_damaged ? "truncated" : "damaged",
                (unsigned long long)st->first_damage_offset, (unsigned long long)st->bytes_read_ok,
                (unsigned long long)st->bytes_total, (unsigned long long)st->records,
                (unsigned long long)st->chunks_damaged, (unsigned long long)st->chunk_seq_gaps);
    } else {
        printf("  state                  whole (%llu bytes)\n",
               (unsigned long long)st->bytes_total);
    }
    if (gt_reader_end_state(r) == GT_ENDED_ABNORMALLY)
        printf("  ended                  abnormally: no end record (killed, crashed or hung; the "
               "last records may be missing, uncounted)\n");
    else if (gt_reader_end_state(r) == GT_ENDED_NORMALLY)
        print_end(&st->end);
    gt_reader_close(r);
    return status;
}

static int info_option(void *ctx, int c, const char *arg)
{
    (void)ctx, (void)c, (void)arg; /* 'h' is the only option */
    print_help(stdout);
    return GT_CLI_HELP;
}

int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const gt_cli cli = {
        .command = "info", .shortopts = "h", .longopts = longopts, .on_option = info_option};
    char **files;
    int n_files;
    int parsed = gt_cli_parse(&cli, argc, argv, &files, &n_files);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n_files < 1) {
        gt_cli_usage_error("info", "no trace given");
        free(files);
        return 2;
    }
    int worst = 0, shown = 0;
    for (int i = 0; i < n_files; i++) {
        /* A run folder stands for its traces, as for every other command (util.h). */
        size_t n = 0;
        char **list = gt_expand_paths((const char *const *)&files[i], 1, &n, "info");
        if (!n && worst < 2)
            worst = 2; /* a folder without any trace */
        for (size_t k = 0; k < n; k++) {
            if (shown++)
                printf("\n");
            int s = info_one(list[k]);
            if (s > worst)
                worst = s;
            fflush(stdout);
        }
        gt_paths_free(list, n);
    }
    free(files);
    if (gt_stdout_finish("info") != 0)
        worst = 2;
    return worst;
}
