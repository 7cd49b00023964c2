/* info_tests.c — `gputrace info` exit codes and messages on whole, truncated, damaged, foreign and
 * newer-version files. Usage: info_tests PATH-TO-INFO-COMMAND [ARGS-BEFORE-FILE...]
 * (e.g. `info_tests build/bin/gputrace info`). */
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gt_test_writer.h"
#include "gt_reader.h"

static int g_failures;
static char g_tmp[256];
static char **g_cmd;
static int g_ncmd;

#define GT_CHECK_COUNTER g_failures
#include "../gt_check.h"

static char g_out[65536], g_err[65536];

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = 0;
    fclose(f);
}

/* Run the info command on one file; returns its exit status (-1 when it crashed). */
static int run_info(const char *file)
{
    char outp[512], errp[512];
    snprintf(outp, sizeof outp, "%s/out", g_tmp);
    snprintf(errp, sizeof errp, "%s/err", g_tmp);
    pid_t pid = fork();
    if (!pid) {
        char *argv[16];
        int n = 0;
        for (int i = 0; i < g_ncmd && n < 14; i++)
            argv[n++] = g_cmd[i];
        argv[n++] = (char *)file;
        argv[n] = NULL;
        dup2(open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
        dup2(open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    slurp(outp, g_out, sizeof g_out);
    slurp(errp, g_err, sizeof g_err);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_trace(const char *path, int chunks, uint16_t major)
{
    gt_file_header h = {.pid = 42, .ppid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    strcpy(h.host, "testhost");
    h.runtime.cudnn_version = 91900;
    h.runtime.device_count = 1;
    strcpy(h.runtime.devices[0].name, "Fake GPU");
    gt_test_writer *w = malloc(sizeof *w);
    const char cmd[] = "python\0train.py";
    gt_test_writer_open(w, path, &h, "/usr/bin/python3", cmd, sizeof cmd);
    gt_test_writer_string(w, 1, "cudaMemcpy");
    gt_test_writer_set_tid(w, 7);
    for (int c = 0; c < chunks; c++) {
        for (int i = 0; i < 10; i++) {
            gt_rec_api a = {.c = {.func = 20, .corr_id = (uint64_t)(c * 10 + i)}};
            gt_test_writer_add(w, GT_REC_API, 0, &a, sizeof a);
        }
        gt_test_writer_flush(w);
    }
    gt_rec_lost l = {.count = 3, .reason = GT_LOST_BUFFER_FULL, .lost_tid = 7};
    gt_test_writer_add(w, GT_REC_LOST, 0, &l, sizeof l);
    gt_test_writer_add(w, 200, 0, &l, 8); /* a kind from the future */
    gt_test_writer_close(w);
    free(w);
    if (major != GT_VERSION_MAJOR) { /* rewrite the version and reseal the header */
        int fd = open(path, O_RDWR);
        unsigned char buf[8192];
        ssize_t n = pread(fd, buf, sizeof buf, 0);
        gt_file_header *fh = (gt_file_header *)buf;
        bool read_back = n > 0 && fh->header_size <= sizeof buf;
        CHECK(read_back, "cannot read back the header of %s", path);
        if (read_back) {
            fh->version_major = major;
            gt_header_seal(buf, fh->header_size);
            CHECK(pwrite(fd, buf, fh->header_size, 0) == (ssize_t)fh->header_size,
                  "cannot rewrite the header of %s", path);
        }
        close(fd);
    }
}

/* A trace whose END record is end_size bytes long: a 1.3/1.4 recorder's (GT_REC_END_SIZE_1_3,
 * no calls_before_cupti) or a 1.5 one's (sizeof(gt_rec_end)). */
static void write_ended_trace(const char *path, uint32_t end_size, uint64_t before_cupti)
{
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = 43;
    gt_test_writer *w = malloc(sizeof *w);
    const char cmd[] = "app";
    gt_test_writer_open(w, path, &h, "/usr/bin/app", cmd, sizeof cmd);
    gt_rec_api a = {.c = {.func = 40, .corr_id = 1}};
    gt_test_writer_add(w, GT_REC_API, 0, &a, sizeof a);
    gt_rec_end e = {.t_ns = 1,
                    .records = 1,
                    .reason = GT_END_EXIT,
                    .calls_interrupted = 2,
                    .calls_before_cupti = before_cupti};
    gt_test_writer_add(w, GT_REC_END, 0, &e, end_size);
    gt_test_writer_close(w);
    free(w);
}

/* The end record's count of calls made before CUPTI was attached (1.5) reads back and is shown;
 * an older, shorter end record reads as before, with 0 and no line for it. */
static void check_end_versions(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/end15.gtrace", g_tmp);
    write_ended_trace(path, sizeof(gt_rec_end), 7);
    int rc = run_info(path);
    CHECK(rc == 0 && strstr(g_out, "GPU work not recorded  of 7 calls") &&
              strstr(g_out, "2 from signal handlers"),
          "1.5 end record: exit %d\n%s%s", rc, g_out, g_err);
    snprintf(path, sizeof path, "%s/end13.gtrace", g_tmp);
    write_ended_trace(path, GT_REC_END_SIZE_1_3, 7); /* the count is cut off, as 1.4 wrote it */
    rc = run_info(path);
    CHECK(rc == 0 && !strstr(g_out, "GPU work not recorded") &&
              strstr(g_out, "2 from signal handlers") &&
              strstr(g_out, "ended                  by exit"),
          "1.3 end record: exit %d\n%s%s", rc, g_out, g_err);
    gt_reader *r;
    char err[512];
    if (gt_reader_open(path, &r, err, sizeof err) == GT_OPEN_OK) {
        gt_record rec;
        while (gt_reader_next(r, &rec) == 1)
            ;
        const gt_reader_stats *st = gt_reader_get_stats(r);
        CHECK(st->ended && st->end.calls_interrupted == 2 && st->end.calls_before_cupti == 0,
              "1.3 end record read: ended %d, interrupted %llu, before CUPTI %llu", st->ended,
              (unsigned long long)st->end.calls_interrupted,
              (unsigned long long)st->end.calls_before_cupti);
        gt_reader_close(r);
    } else {
        CHECK(0, "open %s: %s", path, err);
    }
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: info_tests INFO-COMMAND [ARGS...]\n");
        return 2;
    }
    g_cmd = argv + 1;
    g_ncmd = argc - 1;
    snprintf(g_tmp, sizeof g_tmp, "/tmp/gt-info-XXXXXX");
    if (!mkdtemp(g_tmp))
        return 2;
    char path[512];

    snprintf(path, sizeof path, "%s/whole.gtrace", g_tmp);
    write_trace(path, 3, GT_VERSION_MAJOR);
    int rc = run_info(path);
    CHECK(rc == 0, "whole file: exit %d, %s", rc, g_err);
    CHECK(strstr(g_out, "pid 42") && strstr(g_out, "testhost") && strstr(g_out, "91900") &&
              strstr(g_out, "Fake GPU") && strstr(g_out, "python train.py") &&
              strstr(g_out, "api                  30") && strstr(g_out, "whole"),
          "whole file output:\n%s", g_out);
    CHECK(strstr(g_out, "lost records           3") && strstr(g_out, "unknown"),
          "losses/unknown kinds not shown:\n%s", g_out);

    /* Truncated in the middle of the last chunk. */
    long size = file_size(path);
    char cut[512];
    snprintf(cut, sizeof cut, "%s/cut.gtrace", g_tmp);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "head -c %ld '%s' > '%s'", size - 20, path, cut);
    CHECK(system(cmd) == 0, "head failed");
    rc = run_info(cut);
    CHECK(rc == 1, "truncated file: exit %d", rc);
    CHECK(strstr(g_err, "truncated") && strstr(g_err, "bytes") && strstr(g_err, "31 records"),
          "truncated message: %s", g_err);

    /* A damaged byte in the first chunk: the rest is still read. */
    char bad[512];
    snprintf(bad, sizeof bad, "%s/bad.gtrace", g_tmp);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, bad);
    CHECK(system(cmd) == 0, "cp failed");
    int fd = open(bad, O_RDWR);
    uint32_t hsize = 0;
    CHECK(pread(fd, &hsize, 4, offsetof(gt_file_header, header_size)) == 4, "cannot read %s", bad);
    unsigned char x = 0xAA;
    /* inside the first API chunk's payload */
    CHECK(pwrite(fd, &x, 1, hsize + 24 + 100 + 40) == 1, "cannot damage %s", bad);
    close(fd);
    rc = run_info(bad);
    CHECK(rc == 1, "damaged file: exit %d", rc);
    CHECK(strstr(g_err, "damaged") && strstr(g_err, "1 damaged chunks"), "damaged message: %s",
          g_err);

    char newer[512];
    snprintf(newer, sizeof newer, "%s/newer.gtrace", g_tmp);
    write_trace(newer, 1, GT_VERSION_MAJOR + 1);
    rc = run_info(newer);
    char v1[32], v2[32];
    snprintf(v1, sizeof v1, "%d.%d", GT_VERSION_MAJOR + 1, GT_VERSION_MINOR);
    snprintf(v2, sizeof v2, "%d.%d", GT_VERSION_MAJOR, GT_VERSION_MINOR);
    CHECK(rc == 2 && strstr(g_err, v1) && strstr(g_err, v2), "newer version: exit %d, %s", rc,
          g_err);

    char notrace[512];
    snprintf(notrace, sizeof notrace, "%s/notes.txt", g_tmp);
    FILE *f = fopen(notrace, "w");
    fputs("just some text, not a trace\n", f);
    fclose(f);
    rc = run_info(notrace);
    CHECK(rc == 2 && strstr(g_err, "not a gputrace trace"), "text file: exit %d, %s", rc, g_err);
    rc = run_info("/nonexistent/file.gtrace");
    CHECK(rc == 2 && strstr(g_err, "cannot open"), "missing file: exit %d, %s", rc, g_err);
    char empty[512];
    snprintf(empty, sizeof empty, "%s/empty.gtrace", g_tmp);
    close(open(empty, O_WRONLY | O_CREAT, 0644));
    rc = run_info(empty);
    CHECK(rc == 2, "empty file: exit %d", rc);
    check_end_versions();
    rc = run_info("--help");
    CHECK(rc == 0 && strstr(g_out, "usage: gputrace info"), "--help: exit %d", rc);

    if (!g_failures) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
        if (system(cmd))
            fprintf(stderr, "cannot remove %s\n", g_tmp);
    }
    printf("info_tests: %s (%d failed checks)\n", g_failures ? "FAIL" : "ok", g_failures);
    return g_failures ? 1 : 0;
}
