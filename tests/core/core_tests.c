/* core_tests.c — the recording core compiled straight into a test binary (no preload).
 *
 * The binary plays two roles. As a test (`core_tests TEST`), it re-runs itself as a child
 * (`core_tests child MODE`) with GPUTRACE_* settings, then reads the file the child wrote with
 * the format library and checks it. ctest sets GPUTRACE_DISABLE=1 so the test role itself records
 * nothing; children get GPUTRACE_DISABLE=0. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"
#include "core_tests.h"
#include "gt_core.h"
#include "gt_encode.h"
#include "gt_reader.h"

extern char **environ;

int g_failures;

/* ================================================================ child side */

static void api_record(uint32_t func, uint64_t seq)
{
    gt_rec_api *r = gt_record_begin(GT_REC_API, 0, sizeof *r);
    if (!r)
        return;
    r->c.func = func;
    r->c.corr_id = seq;
    r->c.t_begin_ns = gt_now_ns();
    r->c.t_end_ns = r->c.t_begin_ns + 1;
    gt_record_commit(r);
}

typedef struct kind_size {
    uint16_t kind;
    uint32_t size;
} kind_size;

/* Every fixed-size kind with its body size; variable parts are given extra bytes. */
static const kind_size KINDS[] = {
    {GT_REC_LOST, sizeof(gt_rec_lost)},
    {GT_REC_CLOCK_SYNC, sizeof(gt_rec_clock_sync)},
    {GT_REC_THREAD, sizeof(gt_rec_thread)},
    {GT_REC_API, sizeof(gt_rec_api)},
    {GT_REC_API_MEMCPY, sizeof(gt_rec_api_memcpy)},
    {GT_REC_API_MEMSET, sizeof(gt_rec_api_memset)},
    {GT_REC_API_ALLOC, sizeof(gt_rec_api_alloc)},
    {GT_REC_API_LAUNCH, sizeof(gt_rec_api_launch)},
    {GT_REC_API_SYNC, sizeof(gt_rec_api_sync)},
    {GT_REC_API_CUDNN, sizeof(gt_rec_api_cudnn)},
    {GT_REC_API_CUBLAS, sizeof(gt_rec_api_cublas)},
    {GT_REC_CUDNN_PLAN, sizeof(gt_rec_cudnn_plan) + 21},
    {GT_REC_CUDNN_CONV_SIG, sizeof(gt_rec_cudnn_conv_sig)},
    {GT_REC_CUDNN_PERF, sizeof(gt_rec_cudnn_perf) + 3 * sizeof(gt_cudnn_perf_entry)},
    {GT_REC_NVTX, sizeof(gt_rec_nvtx)},
    {GT_REC_STACK, sizeof(gt_rec_stack) + 5 * 8},
    {GT_REC_MODULE, sizeof(gt_rec_module)},
    {GT_REC_GPU_KERNEL, sizeof(gt_rec_gpu_kernel)},
    {GT_REC_GPU_MEMCPY, sizeof(gt_rec_gpu_memcpy)},
    {GT_REC_GPU_MEMSET, sizeof(gt_rec_gpu_memset)},
    {GT_REC_GPU_SYNC, sizeof(gt_rec_gpu_sync)},
    {GT_REC_GPU_EXT_CORR, sizeof(gt_rec_gpu_ext_corr)},
    {GT_REC_GPU_API, sizeof(gt_rec_gpu_api)},
    {GT_REC_CUPTI_STATS, sizeof(gt_rec_cupti_stats)},
};
#define N_KINDS (sizeof KINDS / sizeof KINDS[0])
#define ROUNDTRIP_FLAGS(k) ((uint16_t)((k)*7u & 0xF))

static void pattern(unsigned char *buf, uint32_t n, uint16_t kind)
{
    for (uint32_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(kind * 31u + i * 7u + 1u);
}

static int child_every_kind(void)
{
    pthread_setname_np(pthread_self(), "rt-main");
    uint32_t id_a = gt_intern("alpha"), id_b = gt_intern("beta kernel<int>");
    if (gt_intern("alpha") != id_a || !id_a || !id_b || id_a == id_b)
        return 10;
    unsigned char body[4096];
    for (size_t i = 0; i < N_KINDS; i++) {
        pattern(body, KINDS[i].size, KINDS[i].kind);
        if (KINDS[i].kind == GT_REC_LOST) /* keep the count small: the reader sums it */
            memset(body, 0, 8), body[0] = 5;
        if (!gt_record_write(KINDS[i].kind, ROUNDTRIP_FLAGS(KINDS[i].kind), body, KINDS[i].size))
            return 11;
    }
    /* Kinds this build does not know: skipped and counted by the reader. */
    gt_record_write(63, 0, body, 16);
    gt_record_write(1000, 0, body, 24);
    gt_core_set_versions(13000, 13010, 91900, 13000, 130100, 130000);
    gt_device_info dev = {.name = "Fake H200",
                          .cc_major = 9,
                          .cc_minor = 0,
                          .sm_count = 132,
                          .total_mem_bytes = 143771566080ull};
    gt_core_set_device(0, &dev);
    gt_core_set_cupti_state(GT_CUPTI_ACTIVE);
    gt_core_set_header_flag(GT_HDR_STATIC_CUDART);
    printf("ok\n");
    return 0;
}

#define N_THREADS 32
#define PER_THREAD 200000

static void *thread_body(void *arg)
{
    uint32_t idx = (uint32_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < PER_THREAD; i++)
        api_record(idx, i);
    return NULL;
}

/* Drain order: a gputrace thread (as CUPTI's worker) whose ring exists before an application
 * thread's writes record 201 first, the application thread then writes 200, and both threads are
 * alive when one writer pass takes both records. The file must hold 200 (the call) before 201
 * (the GPU work it explains). No pass can come between the two writes, however the machine
 * schedules the writer: the child holds the writer's pass lock (as fork does) while they are made.
 */
static _Atomic int drain_step;
static void *internal_writer(void *arg)
{
    (void)arg;
    gt_guard_mark_internal_thread();
    gt_rec_api a = {.c = {.func = 201, .corr_id = 1}};
    gt_record_write(GT_REC_API, 0, &a, sizeof a);
    atomic_store(&drain_step, 1);
    while (atomic_load(&drain_step) != 3) /* alive until the pass took both */
        sched_yield();
    return NULL;
}
static void *app_writer(void *arg)
{
    (void)arg;
    gt_rec_api a = {.c = {.func = 200, .corr_id = 2}};
    gt_record_write(GT_REC_API, 0, &a, sizeof a);
    atomic_store(&drain_step, 2);
    while (atomic_load(&drain_step) != 3)
        sched_yield();
    return NULL;
}
static int child_drain_order(void)
{
    pthread_t ti, ta;
    gt_writer_fork_prepare(); /* no writer pass from here... */
    if (pthread_create(&ti, NULL, internal_writer, NULL))
        return 10;
    while (atomic_load(&drain_step) != 1)
        sched_yield();
    if (pthread_create(&ta, NULL, app_writer, NULL))
        return 11;
    while (atomic_load(&drain_step) != 2)
        sched_yield();
    gt_writer_fork_parent(); /* ...to here: the next one takes both records */
    gt_core_flush_all();
    atomic_store(&drain_step, 3);
    return pthread_join(ta, NULL) || pthread_join(ti, NULL) ? 12 : 0;
}

static int child_threads(void)
{
    pthread_t t[N_THREADS];
    for (uintptr_t i = 0; i < N_THREADS; i++)
        pthread_create(&t[i], NULL, thread_body, (void *)i);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}

static int child_fork(void)
{
    for (int i = 0; i < 10; i++)
        api_record(1, i);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 7; i++)
            api_record(2, i);
        _exit(0); /* like a DataLoader worker: no atexit, no stdio flush */
    }
    int st;
    waitpid(pid, &st, 0);
    for (int i = 0; i < 5; i++)
        api_record(3, i);
    printf("child %d\n", (int)pid);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 12;
}

static int child_spin(void)
{
    for (uint64_t i = 0;; i++) {
        api_record(4, i);
        if (i == 20000) {
            printf("ready\n");
            fflush(stdout);
        }
        if (i % 64 == 0) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        }
    }
    return 0;
}

/* An application that records a lot, prints, and exits 7. */
static int child_bulk(void)
{
    const char *limit = getenv("TEST_FSIZE_LIMIT");
    if (limit) {
        struct rlimit rl = {(rlim_t)atol(limit), (rlim_t)atol(limit)};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 20000; i++)
            api_record(5, (uint64_t)round * 20000 + (uint64_t)i);
        gt_core_flush_all();
    }
    printf("app output\n");
    return 7;
}

static int child_small(void)
{
    uint32_t id = gt_intern("small");
    for (int i = 0; i < 300; i++) {
        api_record(6, (uint64_t)i);
        if (i % 100 == 99)
            gt_core_flush_all(); /* several chunks */
    }
    gt_rec_nvtx n = {.t_ns = gt_now_ns(), .nvtx_kind = GT_NVTX_MARK, .name_id = id};
    gt_record_write(GT_REC_NVTX, 0, &n, sizeof n);
    return 0;
}

static int child_main(const char *mode)
{
    gt_core_start_on_activity(); /* a CUDA program's file and writer, as its first call makes them
                                  */
    if (!strcmp(mode, "every-kind"))
        return child_every_kind();
    if (!strcmp(mode, "threads"))
        return child_threads();
    if (!strcmp(mode, "drain-order"))
        return child_drain_order();
    if (!strcmp(mode, "fork"))
        return child_fork();
    if (!strcmp(mode, "spin"))
        return child_spin();
    if (!strcmp(mode, "bulk"))
        return child_bulk();
    if (!strcmp(mode, "small"))
        return child_small();
    if (!strcmp(mode, "clock"))
        return child_clock();
    if (!strcmp(mode, "clock-fork"))
        return child_clock_fork();
    if (!strcmp(mode, "clock-slew"))
        return child_clock_slew();
    fprintf(stderr, "unknown child mode %s\n", mode);
    return 99;
}

/* ================================================================ test side */

char g_tmp[256];
static char g_self[1024];

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

/* Start `self child MODE` with extra environment; returns the pid (output goes to files). */
static pid_t spawn_child(const char *mode, const char *const *env_extra, const char *dir)
{
    char outp[512], errp[512];
    snprintf(outp, sizeof outp, "%s/stdout", g_tmp);
    snprintf(errp, sizeof errp, "%s/stderr", g_tmp);
    /* Gone before the child starts: a slow child must not leave the previous one's "ready" for
     * wait_ready to find. */
    unlink(outp);
    unlink(errp);
    pid_t pid = fork();
    if (pid)
        return pid;
    setenv("GPUTRACE_DISABLE", "0", 1);
    setenv("GPUTRACE_DIR", dir, 1);
    unsetenv("GPUTRACE_QUIET");
    for (; env_extra && *env_extra; env_extra++)
        putenv((char *)*env_extra);
    int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    execl(g_self, g_self, "child", mode, (char *)NULL);
    _exit(127);
}

static void collect(child_result *r, pid_t pid)
{
    char p[512];
    r->pid = pid;
    waitpid(pid, &r->status, 0);
    snprintf(p, sizeof p, "%s/stdout", g_tmp);
    slurp(p, r->out, sizeof r->out);
    snprintf(p, sizeof p, "%s/stderr", g_tmp);
    slurp(p, r->err, sizeof r->err);
}

void run_child(const char *mode, const char *const *env_extra, const char *dir, child_result *r)
{
    collect(r, spawn_child(mode, env_extra, dir));
}

int exited_with(const child_result *r, int code)
{
    return WIFEXITED(r->status) && WEXITSTATUS(r->status) == code;
}

char *make_dir(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", g_tmp, name);
    mkdir(path, 0700);
    return path;
}

/* Paths of the .gtrace files in dir (sorted by name); returns how many. */
int list_traces(const char *dir, char out[][512], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 7 && !strcmp(e->d_name + len - 7, ".gtrace"))
            snprintf(out[n++], 512, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    return n;
}

static gt_reader *open_only_trace(const char *dir)
{
    char files[4][512];
    int n = list_traces(dir, files, 4);
    CHECK(n == 1, "expected one trace in %s, found %d", dir, n);
    if (n < 1)
        return NULL;
    gt_reader *r;
    char err[512];
    int rc = gt_reader_open(files[0], &r, err, sizeof err);
    CHECK(rc == GT_OPEN_OK, "%s", err);
    return rc == GT_OPEN_OK ? r : NULL;
}

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* ---------------------------------------------------------------- tests */

static void test_roundtrip(void)
{
    child_result cr;
    char *dir = make_dir("roundtrip");
    run_child("every-kind", NULL, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    const gt_file_header *h = gt_reader_header(r);
    CHECK(h->pid == cr.pid, "pid %d vs %d", h->pid, cr.pid);
    CHECK(h->ppid == getpid(), "ppid %d", h->ppid);
    CHECK(h->runtime.driver_version == 13000 && h->runtime.runtime_version == 13010 &&
              h->runtime.cudnn_version == 91900 && h->runtime.cudnn_cudart_version == 13000 &&
              h->runtime.cublas_version == 130100 && h->runtime.cupti_version == 130000,
          "versions not in the header");
    CHECK(h->runtime.device_count == 1 && !strcmp(h->runtime.devices[0].name, "Fake H200") &&
              h->runtime.devices[0].cc_major == 9 && h->runtime.devices[0].sm_count == 132,
          "device not in the header");
    CHECK(h->runtime.cupti_state == GT_CUPTI_ACTIVE, "cupti state %u", h->runtime.cupti_state);
    CHECK(h->flags == (GT_HDR_STATIC_CUDART | GT_HDR_END_RECORD), "flags %u", h->flags);
    CHECK(h->rank == -1 && h->world_size == -1, "rank %d", h->rank);
    CHECK(strstr(gt_reader_exe(r), "core_tests") != NULL, "exe %s", gt_reader_exe(r));
    CHECK(strstr(gt_reader_cmdline(r), "child every-kind") != NULL, "cmdline '%s'",
          gt_reader_cmdline(r));
    CHECK(h->start_realtime_ns > 1600000000000000000ll && h->start_monotonic_ns > 0, "clocks");

    int seen[N_KINDS] = {0}, threads_named = 0, clock_syncs = 0;
    unsigned char expect[4096];
    gt_record rec;
    while (gt_reader_next(r, &rec)) {
        if (rec.kind == GT_REC_THREAD && rec.tid == 0) {
            const gt_rec_thread *t = rec.body;
            const char *name = gt_reader_string(r, t->name_id);
            threads_named += name && !strcmp(name, "rt-main");
            continue;
        }
        if (rec.kind == GT_REC_CLOCK_SYNC && rec.tid == 0) {
            const gt_rec_clock_sync *cs = rec.body;
            clock_syncs += cs->realtime_ns > 0 && cs->monotonic_ns > 0 && cs->boottime_ns > 0;
            continue;
        }
        if (rec.tid == 0)
            continue; /* strings and other bookkeeping of the writer */
        for (size_t i = 0; i < N_KINDS; i++) {
            if (KINDS[i].kind != rec.kind)
                continue;
            pattern(expect, KINDS[i].size, rec.kind);
            if (rec.kind == GT_REC_LOST)
                memset(expect, 0, 8), expect[0] = 5;
            CHECK(rec.body_size == ((KINDS[i].size + 7u) & ~7u), "kind %u size %u", rec.kind,
                  rec.body_size);
            CHECK(!memcmp(rec.body, expect, KINDS[i].size), "kind %u body differs", rec.kind);
            CHECK(rec.flags == ROUNDTRIP_FLAGS(rec.kind), "kind %u flags %u", rec.kind, rec.flags);
            CHECK(rec.tid == (uint32_t)cr.pid, "tid %u", rec.tid);
            seen[i]++;
        }
    }
    for (size_t i = 0; i < N_KINDS; i++)
        CHECK(seen[i] == 1, "kind %u seen %d times", KINDS[i].kind, seen[i]);
    CHECK(threads_named == 1, "thread name records: %d", threads_named);
    CHECK(clock_syncs >= 1, "no clock sync");
    const char *a = NULL, *b = NULL;
    for (uint32_t id = 1; id < 10; id++) {
        const char *s = gt_reader_string(r, id);
        if (s && !strcmp(s, "alpha"))
            a = s;
        if (s && !strcmp(s, "beta kernel<int>"))
            b = s;
    }
    CHECK(a && b, "interned strings missing");
    const gt_reader_stats *st = gt_reader_get_stats(r);
    CHECK(st->unknown_kinds == 2, "unknown kinds %llu", (unsigned long long)st->unknown_kinds);
    CHECK(st->lost_records == 5, "lost %llu", (unsigned long long)st->lost_records);
    CHECK(!st->truncated && !st->chunks_damaged && !st->chunk_seq_gaps, "damage reported");
    CHECK(st->bytes_read_ok == st->bytes_total, "read %llu of %llu",
          (unsigned long long)st->bytes_read_ok, (unsigned long long)st->bytes_total);
    char msg[256];
    snprintf(msg, sizeof msg, "gputrace: wrote %s/", dir);
    CHECK(strstr(cr.err, msg) && strstr(cr.err, " lost)"), "exit line missing: %s", cr.err);
    gt_reader_close(r);
}

static void test_drain_order(void)
{
    child_result cr;
    char *dir = make_dir("drain_order");
    run_child("drain-order", NULL, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    int order[2] = {0, 0}, n = 0;
    gt_record rec;
    while (gt_reader_next(r, &rec))
        if (rec.kind == GT_REC_API && n < 2) {
            const gt_rec_api *a = rec.body;
            if (a->c.func == 200 || a->c.func == 201)
                order[n++] = (int)a->c.func;
        }
    CHECK(n == 2 && order[0] == 200 && order[1] == 201,
          "the application's record must come first: got %d records, %d then %d", n, order[0],
          order[1]);
    gt_reader_close(r);
}

static void test_threads(void)
{
    child_result cr;
    char *dir = make_dir("threads");
    run_child("threads", NULL, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    static uint64_t count[N_THREADS], next_seq[N_THREADS];
    static uint32_t tid_of[N_THREADS];
    uint64_t lost_by_tid_total = 0, records = 0, bad_order = 0;
    typedef struct {
        uint32_t tid;
        uint64_t n;
    } tl;
    tl lost[256];
    int nlost = 0;
    gt_record rec;
    while (gt_reader_next(r, &rec)) {
        if (rec.kind == GT_REC_LOST) {
            const gt_rec_lost *l = rec.body;
            if (nlost < 256)
                lost[nlost++] = (tl){l->lost_tid, l->count};
            lost_by_tid_total += l->count;
        }
        if (rec.kind != GT_REC_API)
            continue;
        const gt_rec_api *a = rec.body;
        if (a->c.func >= N_THREADS)
            continue;
        uint32_t i = a->c.func;
        tid_of[i] = rec.tid;
        if (a->c.corr_id < next_seq[i])
            bad_order++;
        next_seq[i] = a->c.corr_id + 1;
        count[i]++;
        records++;
    }
    CHECK(bad_order == 0, "%llu records out of order", (unsigned long long)bad_order);
    for (int i = 0; i < N_THREADS; i++) {
        uint64_t l = 0;
        for (int j = 0; j < nlost; j++)
            if (lost[j].tid == tid_of[i])
                l += lost[j].n;
        CHECK(count[i] + l == PER_THREAD, "thread %d: %llu written + %llu lost", i,
              (unsigned long long)count[i], (unsigned long long)l);
    }
    CHECK(records + lost_by_tid_total == (uint64_t)N_THREADS * PER_THREAD, "total %llu + %llu",
          (unsigned long long)records, (unsigned long long)lost_by_tid_total);
    char expect[128];
    snprintf(expect, sizeof expect, ", %llu lost)", (unsigned long long)lost_by_tid_total);
    CHECK(strstr(cr.err, expect) != NULL, "exit line disagrees: %s", cr.err);
    fprintf(stderr, "threads: %llu records, %llu lost\n", (unsigned long long)records,
            (unsigned long long)lost_by_tid_total);
    gt_reader_close(r);
}

/* Counts of GT_REC_API records for funcs 1..3 of one file; returns its header in *h. */
static bool count_api(const char *path, uint64_t counts[4], gt_file_header *h)
{
    gt_reader *r;
    char err[512];
    if (gt_reader_open(path, &r, err, sizeof err) != GT_OPEN_OK) {
        CHECK(0, "%s", err);
        return false;
    }
    memset(counts, 0, 4 * sizeof counts[0]);
    gt_record rec;
    while (gt_reader_next(r, &rec)) {
        uint32_t f = rec.kind == GT_REC_API ? ((const gt_rec_api *)rec.body)->c.func : 0;
        if (f >= 1 && f <= 3)
            counts[f]++;
    }
    *h = *gt_reader_header(r);
    gt_reader_close(r);
    return true;
}

static void test_fork(void)
{
    child_result cr;
    char *dir = make_dir("fork");
    run_child("fork", NULL, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d, stderr: %s", cr.status, cr.err);
    char files[4][512];
    int n = list_traces(dir, files, 4);
    CHECK(n == 2, "expected 2 traces, found %d", n);
    if (n != 2)
        return;
    int child_pid = 0;
    sscanf(cr.out, "child %d", &child_pid);
    for (int i = 0; i < 2; i++) {
        gt_file_header h;
        uint64_t c[4];
        if (!count_api(files[i], c, &h))
            continue;
        if (h.flags & GT_HDR_FORKED_CHILD) {
            CHECK(h.pid == child_pid && h.ppid == cr.pid, "child pid %d ppid %d", h.pid, h.ppid);
            CHECK(c[1] == 0 && c[2] == 7 && c[3] == 0, "child file has %llu/%llu/%llu",
                  (unsigned long long)c[1], (unsigned long long)c[2], (unsigned long long)c[3]);
        } else {
            CHECK(h.pid == cr.pid, "parent pid %d", h.pid);
            CHECK(c[1] == 10 && c[2] == 0 && c[3] == 5, "parent file has %llu/%llu/%llu",
                  (unsigned long long)c[1], (unsigned long long)c[2], (unsigned long long)c[3]);
        }
    }
    CHECK(count_lines_with(cr.err, "gputrace: wrote") == 2, "exit lines: %s", cr.err);
}

static void wait_ready(void)
{
    char p[512], buf[64];
    snprintf(p, sizeof p, "%s/stdout", g_tmp);
    for (int i = 0; i < 6000; i++) { /* 60 s at least: a ceiling, not the expected time */
        slurp(p, buf, sizeof buf);
        if (strstr(buf, "ready"))
            return;
        usleep(10000);
    }
    CHECK(0, "child never got ready");
}

/* API records in the only trace of dir so far (the writer may be writing it: the reader stops
 * at a partial chunk). */
static uint64_t api_records_now(const char *dir)
{
    char files[4][512];
    gt_reader *r;
    char err[512];
    if (list_traces(dir, files, 4) != 1 ||
        gt_reader_open(files[0], &r, err, sizeof err) != GT_OPEN_OK)
        return 0;
    gt_record rec;
    uint64_t api = 0;
    while (gt_reader_next(r, &rec) == 1)
        api += rec.kind == GT_REC_API;
    gt_reader_close(r);
    return api;
}

static void test_sigkill(void)
{
    char *dir = make_dir("sigkill");
    const char *env[] = {"GPUTRACE_FLUSH_MS=10", NULL};
    pid_t pid = spawn_child("spin", env, dir);
    wait_ready();
    /* Killed once the writer has written 20,000 records: they must survive it, readable. (A sleep
     * here hoped the writer had run by then; on a busy machine it had not.) */
    for (int i = 0; i < 6000 && api_records_now(dir) < 20000; i++)
        usleep(10000);
    kill(pid, SIGKILL);
    child_result cr;
    collect(&cr, pid);
    CHECK(WIFSIGNALED(cr.status) && WTERMSIG(cr.status) == SIGKILL, "status %d", cr.status);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    gt_record rec;
    uint64_t api = 0;
    while (gt_reader_next(r, &rec))
        api += rec.kind == GT_REC_API;
    CHECK(api >= 20000, "only %llu records survived", (unsigned long long)api);
    CHECK(gt_reader_get_stats(r)->chunks_damaged == 0, "damaged chunks");
    CHECK(gt_reader_end_state(r) == GT_ENDED_ABNORMALLY, "a killed process's file must say so");
    gt_reader_close(r);
}

static void test_sigterm(void)
{
    char *dir = make_dir("sigterm");
    pid_t pid = spawn_child("spin", NULL, dir);
    wait_ready();
    kill(pid, SIGTERM);
    child_result cr;
    collect(&cr, pid);
    CHECK(WIFSIGNALED(cr.status) && WTERMSIG(cr.status) == SIGTERM, "status %d", cr.status);
    CHECK(strstr(cr.err, "gputrace: wrote") != NULL, "no exit line: %s", cr.err);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    gt_record rec;
    uint64_t api = 0;
    while (gt_reader_next(r, &rec))
        api += rec.kind == GT_REC_API;
    const gt_reader_stats *st = gt_reader_get_stats(r);
    /* The signal's end writes for a bounded time and counts what it could not write: every one of
     * the 20,000+ records is in the file or counted, and some are in the file. */
    CHECK(api > 0 && api + st->lost_records > 20000 && !st->truncated && !st->chunks_damaged,
          "api %llu lost %llu truncated %d", (unsigned long long)api,
          (unsigned long long)st->lost_records, st->truncated);
    CHECK(gt_reader_end_state(r) == GT_ENDED_NORMALLY && st->end.reason == GT_END_SIGNAL &&
              st->end.signal == SIGTERM,
          "end state %d reason %u signal %d", gt_reader_end_state(r), st->end.reason,
          st->end.signal);
    gt_reader_close(r);

    /* An ignored SIGTERM (nohup) stays ignored. */
    dir = make_dir("sigterm-ignored");
    signal(SIGTERM, SIG_IGN);
    const char *env[] = {NULL};
    child_result cr2;
    pid = spawn_child("small", env, dir);
    kill(pid, SIGTERM);
    collect(&cr2, pid);
    signal(SIGTERM, SIG_DFL);
    CHECK(exited_with(&cr2, 0), "ignored SIGTERM killed the app: status %d", cr2.status);
}

static void test_full_disk(void)
{
    char *dir = make_dir("fulldisk");
    const char *env[] = {"TEST_FSIZE_LIMIT=100000", "GPUTRACE_BUFFER_KB=64", NULL};
    child_result cr;
    run_child("bulk", env, dir, &cr);
    CHECK(exited_with(&cr, 7), "status %d (exit %d), stderr: %s", cr.status,
          WIFEXITED(cr.status) ? WEXITSTATUS(cr.status) : -1, cr.err);
    CHECK(!strcmp(cr.out, "app output\n"), "stdout '%s'", cr.out);
    CHECK(count_lines_with(cr.err, "gputrace: cannot write") == 1, "stderr: %s", cr.err);
    CHECK(count_lines_with(cr.err, "gputrace:") == 2, "more than a warning and the exit line: %s",
          cr.err);
    gt_reader *r = open_only_trace(dir);
    if (!r)
        return;
    gt_record rec;
    uint64_t api = 0;
    while (gt_reader_next(r, &rec))
        api += rec.kind == GT_REC_API;
    const gt_reader_stats *st = gt_reader_get_stats(r);
    CHECK(st->bytes_total <= 100000 && api > 0 && st->chunks_damaged == 0,
          "size %llu api %llu damaged %llu", (unsigned long long)st->bytes_total,
          (unsigned long long)api, (unsigned long long)st->chunks_damaged);
    /* 20 rounds of 20000 calls: each one written or counted (the end chunk says so). */
    CHECK(api + st->lost_records == 400000 && st->end.reason == GT_END_WRITE_FAILED,
          "%llu written + %llu lost, end reason %u", (unsigned long long)api,
          (unsigned long long)st->lost_records, st->end.reason);
    gt_reader_close(r);
}

static void test_unwritable_dir(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/plainfile", g_tmp);
    close(open(path, O_WRONLY | O_CREAT, 0600));
    strcat(path, "/sub"); /* ENOTDIR even for root */
    child_result cr;
    run_child("bulk", NULL, path, &cr);
    CHECK(exited_with(&cr, 7), "status %d", cr.status);
    CHECK(!strcmp(cr.out, "app output\n"), "stdout '%s'", cr.out);
    CHECK(count_lines_with(cr.err, "gputrace:") == 1 &&
              strstr(cr.err, "gputrace: cannot create a trace file"),
          "stderr: %s", cr.err);
}

static void test_settings(void)
{
    child_result cr;
    char *dir = make_dir("quiet");
    const char *quiet[] = {"GPUTRACE_QUIET=1", NULL};
    run_child("small", quiet, dir, &cr);
    CHECK(exited_with(&cr, 0) && cr.err[0] == 0, "quiet run printed: %s", cr.err);
    char files[4][512];
    CHECK(list_traces(dir, files, 4) == 1, "quiet run wrote no file");

    dir = make_dir("disabled");
    const char *disabled[] = {"GPUTRACE_DISABLE=1", NULL};
    run_child("small", disabled, dir, &cr);
    CHECK(exited_with(&cr, 0) && cr.err[0] == 0, "disabled run printed: %s", cr.err);
    CHECK(list_traces(dir, files, 4) == 0, "disabled run wrote a file");

    dir = make_dir("badvalues");
    const char *bad[] = {"GPUTRACE_BUFFER_KB=lots", "GPUTRACE_FLUSH_MS=-5", "GPUTRACE_API=most",
                         "GPUTRACE_QUIET=maybe", NULL};
    run_child("small", bad, dir, &cr);
    CHECK(exited_with(&cr, 0), "status %d", cr.status);
    CHECK(strstr(cr.err, "GPUTRACE_BUFFER_KB=lots") && strstr(cr.err, "GPUTRACE_FLUSH_MS=-5") &&
              strstr(cr.err, "GPUTRACE_API=most") && strstr(cr.err, "GPUTRACE_QUIET=maybe"),
          "warnings: %s", cr.err);
    gt_reader *r = open_only_trace(dir);
    if (r) {
        gt_record rec;
        uint64_t api = 0;
        while (gt_reader_next(r, &rec))
            api += rec.kind == GT_REC_API;
        CHECK(api == 300, "api %llu", (unsigned long long)api);
        gt_reader_close(r);
    }

    dir = make_dir("rank");
    const char *rank[] = {"RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8", NULL};
    run_child("small", rank, dir, &cr);
    int n = list_traces(dir, files, 4);
    CHECK(n == 1 && strstr(files[0], "-rank3.gtrace"), "rank file name %s", n ? files[0] : "");
    r = open_only_trace(dir);
    if (r) {
        const gt_file_header *h = gt_reader_header(r);
        CHECK(h->rank == 3 && h->local_rank == 1 && h->world_size == 8, "rank %d/%d/%d", h->rank,
              h->local_rank, h->world_size);
        gt_reader_close(r);
    }
    dir = make_dir("slurm");
    const char *slurm[] = {"SLURM_PROCID=5", "SLURM_LOCALID=2", "SLURM_NTASKS=16", NULL};
    run_child("small", slurm, dir, &cr);
    r = open_only_trace(dir);
    if (r) {
        const gt_file_header *h = gt_reader_header(r);
        CHECK(h->rank == 5 && h->local_rank == 2 && h->world_size == 16, "slurm rank %d/%d/%d",
              h->rank, h->local_rank, h->world_size);
        gt_reader_close(r);
    }
}

/* ---------------------------------------------------------------- the real libgputrace.so */

static void test_preload(const char *so, const char *app)
{
    char *dir = make_dir("preload");
    char outp[512], errp[512];
    snprintf(outp, sizeof outp, "%s/stdout", g_tmp);
    snprintf(errp, sizeof errp, "%s/stderr", g_tmp);
    pid_t pid = fork();
    if (!pid) {
        setenv("LD_PRELOAD", so, 1);
        setenv("GPUTRACE_DISABLE", "0", 1);
        setenv("GPUTRACE_DIR", dir, 1);
        setenv("GPUTRACE_CUPTI", "0", 1);
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        execl(app, app, "arg1", "two words", (char *)NULL);
        _exit(127);
    }
    child_result cr;
    collect(&cr, pid);
    CHECK(exited_with(&cr, 5), "app status %d, stderr: %s", cr.status, cr.err);
    CHECK(!strcmp(cr.out, "hello from the app\n"), "app stdout '%s'", cr.out);
    /* No CUDA, no file (issue 21): the file comes with the first CUDA activity
     * (capture.lazy_file checks that one call makes one). */
    char files[4][512];
    int n = list_traces(dir, files, 4);
    CHECK(n == 0, "a process without CUDA left %d traces; stderr: %s", n, cr.err);
    CHECK(count_lines_with(cr.err, "gputrace:") == 0, "stderr: %s", cr.err);
}

/* ================================================================ main */

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "child"))
        return child_main(argv[2]);
    if (argc < 2) {
        fprintf(stderr, "usage: core_tests TEST | child MODE\n");
        return 2;
    }
    ssize_t n = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
    g_self[n > 0 ? n : 0] = 0;
    snprintf(g_tmp, sizeof g_tmp, "%s/gt-core-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 2;
    }
    const char *t = argv[1];
    if (!strcmp(t, "roundtrip"))
        test_roundtrip();
    else if (!strcmp(t, "threads"))
        test_threads();
    else if (!strcmp(t, "drain_order"))
        test_drain_order();
    else if (!strcmp(t, "fork"))
        test_fork();
    else if (!strcmp(t, "sigkill"))
        test_sigkill();
    else if (!strcmp(t, "sigterm"))
        test_sigterm();
    else if (!strcmp(t, "full_disk"))
        test_full_disk();
    else if (!strcmp(t, "unwritable_dir"))
        test_unwritable_dir();
    else if (!strcmp(t, "settings"))
        test_settings();
    else if (!strcmp(t, "truncation"))
        test_truncation();
    else if (!strcmp(t, "corruption"))
        test_corruption();
    else if (!strcmp(t, "clock"))
        test_clock();
    else if (!strcmp(t, "clock_settings"))
        test_clock_settings();
    else if (!strcmp(t, "clock_fork"))
        test_clock_fork();
    else if (!strcmp(t, "clock_slew"))
        test_clock_slew();
    else if (!strcmp(t, "preload") && argc == 4)
        test_preload(argv[2], argv[3]);
    else {
        fprintf(stderr, "unknown test %s\n", t);
        return 2;
    }
    if (!g_failures) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", g_tmp);
    }
    printf("%s: %s (%d failed checks)\n", t, g_failures ? "FAIL" : "ok", g_failures);
    return g_failures ? 1 : 0;
}
