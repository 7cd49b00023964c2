/* load_check — a trace recorded on an oversubscribed machine keeps everything an idle one keeps
 * (issue 31). ti_load_app (waves of threads making launches, copies and queries on the fake
 * libcudart, the fake CUPTI's worker delivering its buffers meanwhile) runs twice under
 * LD_PRELOAD=libgputrace.so: on the machine as it is, then with LOAD_FACTOR (3) CPU-bound processes
 * per core started by this test. Both files must hold every call, kernel and copy the program
 * made, name every thread, count nothing lost (no LOST record, the end record's counts at 0), end
 * normally, and so agree with each other.
 *
 * What this leaves to the recorder is its scheduling: the writer thread, threads that end before
 * the writer ever saw them, CUPTI's start, its worker and the exit drain. Not the capacity of a
 * ring: each thread's records fit its ring (GPUTRACE_BUFFER_KB) even if the writer never ran before
 * the exit, so a loss here is the recorder's fault, never the machine's speed.
 *
 * Environment: GT_LIB (libgputrace.so), FAKES (the fake CUDA libraries), APP (ti_load_app), WORK (a
 * folder for the runs). Exit 0 when every check holds. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../gt_check.h"
#include "gt_reader.h"

#define WAVES "3"
#define THREADS "24"
#define ITERATIONS "400"
#define MAX_HOGS 1024

/* What the program says it did, and what its trace holds. */
typedef struct counts {
    long calls, kernels, copies, threads;
} counts;

typedef struct trace_counts {
    counts seen;
    long gpu_api;     /* CUPTI's API records: on only for a program no wrapper sees */
    bool static_flag; /* GT_HDR_STATIC_CUDART: no wrapped call seen before the kernels */
    unsigned long long lost_records, end_lost, after_end, interrupted, records;
    int end_state, whole;
} trace_counts;

static const char *env_or_die(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "load_check: %s is not set\n", name);
        exit(2);
    }
    return v;
}

/* Runs the app traced into dir; its stdout's counts into *said. False when it failed. */
static bool run_app(const char *dir, counts *said)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/app.out", dir);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("LD_PRELOAD", env_or_die("GT_LIB"), 1);
        setenv("LD_LIBRARY_PATH", env_or_die("FAKES"), 1);
        setenv("GPUTRACE_DIR", dir, 1);
        setenv("GPUTRACE_BUFFER_KB", "256", 1); /* a thread's 1,202 calls (~100 KB) fit */
        setenv("FAKE_CUPTI_WORKER_MS", "5", 1);
        setenv("GPUTRACE_QUIET", "1", 1);
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            dup2(fd, 1);
        const char *app = env_or_die("APP");
        execl(app, app, WAVES, THREADS, ITERATIONS, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *f = fopen(out, "r");
    int got = f ? fscanf(f, "calls %ld kernels %ld copies %ld threads %ld", &said->calls,
                         &said->kernels, &said->copies, &said->threads)
                : 0;
    if (f)
        fclose(f);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == 4;
    CHECK(ok, "%s: the program failed (status %d)", dir, status);
    return ok;
}

static bool is_named_load_thread(const char *name, char names[][16], long *n)
{
    if (!name || strncmp(name, "load-", 5))
        return false;
    for (long i = 0; i < *n; i++)
        if (!strcmp(names[i], name))
            return false;
    snprintf(names[(*n)++], 16, "%s", name);
    return true;
}

static bool read_trace(const char *dir, trace_counts *tc)
{
    memset(tc, 0, sizeof *tc);
    DIR *d = opendir(dir);
    char path[1024] = "";
    int files = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".gtrace"))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name), files++;
    if (d)
        closedir(d);
    gt_reader *r;
    char err[512];
    bool opened = files == 1 && gt_reader_open(path, &r, err, sizeof err) == GT_OPEN_OK;
    CHECK(opened, "%s: expected one readable trace, found %d", dir, files);
    if (!opened)
        return false;
    static char names[4096][16];
    long named = 0;
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        if (rec.kind >= GT_REC_API && rec.kind <= GT_REC_API_CUBLAS)
            tc->seen.calls++;
        else if (rec.kind == GT_REC_GPU_KERNEL)
            tc->seen.kernels++;
        else if (rec.kind == GT_REC_GPU_MEMCPY)
            tc->seen.copies++;
        else if (rec.kind == GT_REC_GPU_API)
            tc->gpu_api++;
        else if (rec.kind == GT_REC_THREAD && named < 4096)
            tc->seen.threads += is_named_load_thread(
                gt_reader_string(r, ((const gt_rec_thread *)rec.body)->name_id), names, &named);
    }
    tc->static_flag = (gt_reader_header(r)->flags & GT_HDR_STATIC_CUDART) != 0;
    const gt_reader_stats *st = gt_reader_get_stats(r);
    tc->records = st->records;
    tc->lost_records = st->lost_records;
    tc->end_lost = st->end.lost;
    tc->after_end = st->end.lost_after_end;
    tc->interrupted = st->end.calls_interrupted;
    tc->end_state = gt_reader_end_state(r);
    tc->whole = !st->truncated && !st->chunks_damaged && !st->chunk_seq_gaps;
    gt_reader_close(r);
    return true;
}

static void check_run(const char *what, const counts *said, const trace_counts *tc)
{
    printf("%s: %ld calls, %ld kernels, %ld copies, %ld threads named, %llu lost (end: %llu lost, "
           "%llu after the end, %llu interrupted); the program made %ld, %ld, %ld in %ld threads\n",
           what, tc->seen.calls, tc->seen.kernels, tc->seen.copies, tc->seen.threads,
           tc->lost_records, tc->end_lost, tc->after_end, tc->interrupted, said->calls,
           said->kernels, said->copies, said->threads);
    CHECK(tc->seen.calls == said->calls && tc->seen.kernels == said->kernels &&
              tc->seen.copies == said->copies && tc->seen.threads == said->threads,
          "%s: the trace does not hold everything the program did", what);
    CHECK(!tc->lost_records && !tc->end_lost && !tc->after_end && !tc->interrupted,
          "%s: records counted lost", what);
    /* Kernels that came before the first wrapped call was done once made gputrace take the
     * program for one with a static cudart, and switch CUPTI's costly API records on. */
    CHECK(!tc->static_flag && !tc->gpu_api,
          "%s: taken for a static cudart (flag %d, %ld CUPTI API records)", what, tc->static_flag,
          tc->gpu_api);
    CHECK(tc->end_state == GT_ENDED_NORMALLY && tc->whole,
          "%s: the file is not whole and ended (end state %d)", what, tc->end_state);
}

static int start_hogs(pid_t *hogs)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *f = getenv("LOAD_FACTOR");
    long n = (cores > 0 ? cores : 2) * (f && atoi(f) > 0 ? atoi(f) : 3);
    if (n > MAX_HOGS)
        n = MAX_HOGS;
    for (long i = 0; i < n; i++) {
        hogs[i] = fork();
        if (hogs[i] == 0) {
            for (volatile unsigned long spin = 0;; spin++)
                ;
        }
    }
    return (int)n;
}

static void stop_hogs(pid_t *hogs, int n)
{
    for (int i = 0; i < n; i++)
        if (hogs[i] > 0)
            kill(hogs[i], SIGKILL);
    for (int i = 0; i < n; i++)
        if (hogs[i] > 0)
            waitpid(hogs[i], NULL, 0);
}

int main(void)
{
    const char *work = env_or_die("WORK");
    char idle_dir[1024], busy_dir[1024];
    snprintf(idle_dir, sizeof idle_dir, "%s/idle", work);
    snprintf(busy_dir, sizeof busy_dir, "%s/busy", work);
    mkdir(work, 0700);
    for (int i = 0; i < 2; i++) {
        const char *dir = i ? busy_dir : idle_dir;
        char cmd[2200];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0 || mkdir(dir, 0700) != 0) {
            fprintf(stderr, "load_check: cannot make %s\n", dir);
            return 2;
        }
    }
    counts idle_said, busy_said;
    trace_counts idle, busy;
    bool idle_ok = run_app(idle_dir, &idle_said) && read_trace(idle_dir, &idle);
    static pid_t hogs[MAX_HOGS];
    int n = start_hogs(hogs);
    printf("loaded: %d CPU-bound processes on %ld cores\n", n, sysconf(_SC_NPROCESSORS_ONLN));
    bool busy_ok = run_app(busy_dir, &busy_said);
    stop_hogs(hogs, n);
    busy_ok = busy_ok && read_trace(busy_dir, &busy);
    if (idle_ok)
        check_run("idle machine", &idle_said, &idle);
    if (busy_ok)
        check_run("busy machine", &busy_said, &busy);
    if (idle_ok && busy_ok)
        CHECK(idle.seen.calls == busy.seen.calls && idle.seen.kernels == busy.seen.kernels &&
                  idle.seen.copies == busy.seen.copies && idle.seen.threads == busy.seen.threads,
              "the busy machine's trace differs from the idle one's");
    if (!failures)
        printf("load_check: ok\n");
    return failures ? 1 : 0;
}
