/* cmd_record.c — `gputrace record [-o NAME] [--] CMD ARGS...`: run a program under libgputrace.so,
 * then convert and report, in the habit of `nsys profile` and `perf record`.
 *
 * The child gets LD_PRELOAD (ours first, the user's kept), GPUTRACE_DIR (a fresh run folder, so
 * every process of the tree — DataLoader workers, spawned ranks — writes its .gtrace there) and
 * NVTX_INJECTION64_PATH (when unset). We wait for it, passing on the termination signals that were
 * sent to us alone (record_signals.c), keep the names of the captured frames in the run folder
 * (symarchive.h), then hand the run folder to `convert` and `report`, and exit with the child's
 * status (128+signal when it was killed), like a shell.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "commands.h"
#include "doctor.h"
#include "outfile.h"
#include "record_signals.h"
#include "symarchive.h"
#include "symarchive_write.h"

#define LIB_NAME "libgputrace.so"
#define RUN_SUFFIX ".gputrace"
#define PERFETTO_SUFFIX ".perfetto-trace"
#define REPORT_SUFFIX ".report.txt"
#define HTML_SUFFIX ".html"

typedef struct record_options {
    const char *name;    /* -o NAME, NULL: gputrace-run-<time> */
    const char *lib;     /* --lib PATH, NULL: found beside the gputrace executable */
    bool force;          /* -f: reuse an existing run folder */
    bool no_report;      /* --no-report: record and convert only */
    bool quiet;          /* -q: no progress line */
    bool peaks;          /* --peaks: measure this machine's copy peaks first when none are saved */
    const char *capture; /* --capture MODE: GPUTRACE_CAPTURE for the child, NULL: as inherited */
    char **command;      /* the program and its arguments */
} record_options;

static void print_record_help(FILE *out)
{
    fprintf(
        out,
        "usage: gputrace record [OPTIONS] [--] COMMAND [ARGS...]\n"
        "\n"
        "Run COMMAND with libgputrace.so preloaded, gather the .gtrace files of its whole\n"
        "process tree (DataLoader workers, spawned processes) in one run folder, then write\n"
        "NAME.perfetto-trace (open it in https://ui.perfetto.dev), NAME.report.txt (the full\n"
        "report) and NAME.html (the report as a page), and print the verdict and the advice.\n"
        "Exits with COMMAND's exit status (128+N when killed by signal N).\n"
        "Ctrl-C stops COMMAND and still gives a trace.\n"
        "\n"
        "options:\n"
        "  -o, --output NAME  name of the outputs: NAME.gputrace/ (run folder) and\n"
        "                     NAME.perfetto-trace (default: gputrace-run-YYYYmmdd-HHMMSS)\n"
        "  -f, --force        reuse NAME.gputrace/ if it exists (its .gtrace files are removed)\n"
        "      --lib PATH     libgputrace.so to preload (default: the one installed beside "
        "gputrace;\n"
        "                     also GPUTRACE_LIB)\n"
        "      --no-report    convert only, write and print no report\n"
        "      --peaks        first measure this machine's copy peaks when none are saved\n"
        "                     (gputrace doctor --save --copies-only; a few seconds, once)\n"
        "      --capture MODE record only in capture windows (GPUTRACE_CAPTURE):\n"
        "                     profiler-api (cudaProfilerStart/Stop), signal (kill -USR2 PID\n"
        "                     opens a window, the next closes it; gputrace's own PID passes\n"
        "                     it on), trigger-file:PATH (while PATH exists), all (default)\n"
        "  -q, --quiet        no progress line\n"
        "  -h, --help         this help\n"
        "\n"
        "The child also gets GPUTRACE_DIR=<run folder> and NVTX_INJECTION64_PATH=libgputrace.so\n"
        "(when unset), so NVTX ranges (torch.cuda.nvtx, nvtxRangePushA) appear in the trace.\n"
        "Other GPUTRACE_* variables pass through: see docs/configuration.md.\n"
        "\n"
        "examples:\n"
        "  gputrace record -- python train.py --batch-size 64\n"
        "  gputrace record -o resnet -- torchrun --nproc_per_node=2 train.py\n");
}

enum { OPT_LIB = 256, OPT_NO_REPORT, OPT_PEAKS, OPT_CAPTURE };

/* The values libgputrace.so takes (interpose/core/config.c): checked here, so a typo is a usage
 * error instead of a warning in the child's output and a whole-run recording. */
static bool capture_mode_valid(const char *mode)
{
    static const char TRIGGER[] = "trigger-file:";
    return !strcmp(mode, "all") || !strcmp(mode, "profiler-api") || !strcmp(mode, "signal") ||
           (!strncmp(mode, TRIGGER, sizeof TRIGGER - 1) && mode[sizeof TRIGGER - 1]);
}

static int record_option(void *ctx, int c, const char *arg)
{
    record_options *opt = ctx;
    switch (c) {
    case 'o':
        opt->name = arg;
        if (arg[0])
            return GT_CLI_OK;
        gt_cli_usage_error("record", "-o needs a non-empty name");
        return GT_CLI_USAGE;
    case 'f':
        opt->force = true;
        return GT_CLI_OK;
    case 'q':
        opt->quiet = true;
        return GT_CLI_OK;
    case OPT_LIB:
        opt->lib = arg;
        return GT_CLI_OK;
    case OPT_NO_REPORT:
        opt->no_report = true;
        return GT_CLI_OK;
    case OPT_PEAKS:
        opt->peaks = true;
        return GT_CLI_OK;
    case OPT_CAPTURE:
        opt->capture = arg;
        if (capture_mode_valid(arg))
            return GT_CLI_OK;
        gt_cli_usage_error("record",
                           "--capture takes profiler-api, signal, trigger-file:PATH or all");
        return GT_CLI_USAGE;
    default: /* 'h' */
        print_record_help(stdout);
        return GT_CLI_HELP;
    }
}

/* Returns 0, 2 for usage errors (message printed), or -1 for --help (printed). The options end at
 * COMMAND, so its own options are left alone. */
static int parse_record_options(int argc, char **argv, record_options *opt, char ***owned)
{
    static const struct option LONG_OPTIONS[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"lib", required_argument, NULL, OPT_LIB},
        {"no-report", no_argument, NULL, OPT_NO_REPORT},
        {"peaks", no_argument, NULL, OPT_PEAKS},
        {"quiet", no_argument, NULL, 'q'},
        {"capture", required_argument, NULL, OPT_CAPTURE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(opt, 0, sizeof *opt);
    const gt_cli cli = {.command = "record",
                        .shortopts = "o:fqh",
                        .longopts = LONG_OPTIONS,
                        .stop_at_operand = 1,
                        .on_option = record_option,
                        .ctx = opt};
    int n;
    int parsed = gt_cli_parse(&cli, argc, argv, owned, &n);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? -1 : 2;
    if (n < 1) {
        gt_cli_usage_error("record", "no command given (gputrace record [-o NAME] [--] COMMAND "
                                     "[ARGS...])");
        free(*owned);
        return 2;
    }
    opt->command = *owned;
    return 0;
}

/* ---------------------------------------------------------------- finding libgputrace.so */

static bool is_readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* Build tree: <build>/bin/gputrace and <build>/lib/libgputrace.so. Installed: <prefix>/bin and
 * <prefix>/lib, lib64 or lib/<multiarch>. */
static bool find_library(const char *override, char *out, size_t outlen)
{
    if (override) {
        if (!realpath(override, out) || !is_readable_file(out)) {
            fprintf(stderr, "gputrace record: cannot read the library '%s': %s\n", override,
                    strerror(errno ? errno : ENOENT));
            return false;
        }
        return true;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "gputrace record: cannot read /proc/self/exe (%s); pass --lib PATH\n",
                strerror(errno));
        return false;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const CANDIDATES[] = {
        "../lib/" LIB_NAME,
        "../lib64/" LIB_NAME,
        "../lib/x86_64-linux-gnu/" LIB_NAME,
        "../lib/aarch64-linux-gnu/" LIB_NAME,
        LIB_NAME,
    };
    for (size_t i = 0; i < sizeof CANDIDATES / sizeof CANDIDATES[0]; i++) {
        char candidate[PATH_MAX + 64];
        snprintf(candidate, sizeof candidate, "%s/%s", exe, CANDIDATES[i]);
        if (is_readable_file(candidate) && realpath(candidate, out))
            return true;
    }
    fprintf(stderr,
            "gputrace record: %s not found beside %s (looked in ../lib, ../lib64 and the same "
            "folder).\nPass --lib PATH or set GPUTRACE_LIB.\n",
            LIB_NAME, exe);
    (void)outlen;
    return false;
}

/* ---------------------------------------------------------------- run folder */

typedef struct run_paths {
    char dir[PATH_MAX];      /* absolute run folder: NAME.gputrace */
    char perfetto[PATH_MAX]; /* NAME.perfetto-trace */
    char report[PATH_MAX];   /* NAME.report.txt: the full text report */
    char html[PATH_MAX];     /* NAME.html: the report as a page */
} run_paths;

static bool ends_with(const char *s, const char *suffix)
{
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static int remove_old_traces(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    int removed = 0;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".gtrace"))
            continue;
        char path[PATH_MAX + 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

static bool make_run_folder(const record_options *opt, run_paths *paths)
{
    char base[PATH_MAX - 32];
    if (opt->name) {
        snprintf(base, sizeof base, "%s", opt->name);
        size_t len = strlen(base);
        while (len > 1 && base[len - 1] == '/') /* "-o runs/x/" means "runs/x" */
            base[--len] = '\0';
        if (ends_with(base, PERFETTO_SUFFIX))
            base[len - strlen(PERFETTO_SUFFIX)] = '\0';
        else if (ends_with(base, RUN_SUFFIX))
            base[len - strlen(RUN_SUFFIX)] = '\0';
    } else {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(base, sizeof base, "gputrace-run-%Y%m%d-%H%M%S", &tm);
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s" RUN_SUFFIX, base);
    /* Unnamed runs never collide: a second run in the same second gets "-2", "-3"... */
    for (int attempt = 2; !opt->name && access(dir, F_OK) == 0 && attempt < 1000; attempt++)
        snprintf(dir, sizeof dir, "%s-%d" RUN_SUFFIX, base, attempt);
    if (!opt->name)
        snprintf(base, sizeof base, "%.*s", (int)(strlen(dir) - strlen(RUN_SUFFIX)), dir);

    if (mkdir(dir, 0777) != 0) {
        if (errno != EEXIST) {
            fprintf(stderr, "gputrace record: cannot create the run folder '%s': %s\n", dir,
                    strerror(errno));
            return false;
        }
        if (!opt->force) {
            fprintf(stderr,
                    "gputrace record: '%s' already exists; choose another -o NAME or pass -f to "
                    "replace its traces\n",
                    dir);
            return false;
        }
        if (remove_old_traces(dir) < 0) {
            fprintf(stderr, "gputrace record: '%s' exists and is not a readable folder\n", dir);
            return false;
        }
    }
    if (!realpath(dir, paths->dir)) {
        fprintf(stderr, "gputrace record: cannot resolve '%s': %s\n", dir, strerror(errno));
        return false;
    }
    snprintf(paths->perfetto, sizeof paths->perfetto, "%s" PERFETTO_SUFFIX, base);
    snprintf(paths->report, sizeof paths->report, "%s" REPORT_SUFFIX, base);
    snprintf(paths->html, sizeof paths->html, "%s" HTML_SUFFIX, base);
    return true;
}

/* ---------------------------------------------------------------- the child */

/* LD_PRELOAD is a list separated by spaces or colons; ours goes first (so our wrappers interpose
 * whatever else is preloaded), and is not added twice. */
static void set_child_environment(const char *lib, const char *dir)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old) {
        setenv("LD_PRELOAD", lib, 1);
    } else if (!strstr(old, lib)) {
        size_t len = strlen(lib) + 1 + strlen(old) + 1;
        char *joined = malloc(len);
        if (joined) {
            snprintf(joined, len, "%s:%s", lib, old);
            setenv("LD_PRELOAD", joined, 1);
            free(joined);
        }
    }
    setenv("GPUTRACE_DIR", dir, 1);
    setenv("NVTX_INJECTION64_PATH", lib, 0);
}

/* GPUTRACE_CAPTURE_SIGNAL as libgputrace.so reads it (interpose/core/config.c), else SIGUSR2. */
static int capture_signal_of_env(void)
{
    const char *v = getenv("GPUTRACE_CAPTURE_SIGNAL");
    if (!v || !*v)
        return SIGUSR2;
    const char *n = strncasecmp(v, "SIG", 3) ? v : v + 3;
    if (!strcasecmp(n, "USR1"))
        return SIGUSR1;
    char *end;
    long x = strtol(v, &end, 10);
    return !*end && end != v && x > 0 && x < NSIG && x != SIGKILL && x != SIGSTOP ? (int)x
                                                                                  : SIGUSR2;
}

static pid_t start_child(char **command, const char *lib, const char *dir)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    rs_child_restore();
    gt_restore_sigxfsz(); /* the program gets the SIGXFSZ action gputrace was started with */
    set_child_environment(lib, dir);
    execvp(command[0], command);
    int err = errno;
    fprintf(stderr, "gputrace record: cannot run '%s': %s\n", command[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126); /* the shell's codes for "not found" / "not runnable" */
}

/* ---------------------------------------------------------------- progress and waiting */

static uint64_t bytes_written(const char *dir, int *files)
{
    uint64_t total = 0;
    *files = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ends_with(e->d_name, ".gtrace"))
            continue;
        char path[PATH_MAX + 256];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0) {
            total += (uint64_t)st.st_size;
            (*files)++;
        }
    }
    closedir(d);
    return total;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

static void show_progress(const char *dir, const struct timespec *t0)
{
    int files;
    uint64_t bytes = bytes_written(dir, &files);
    fprintf(stderr, "\r\033[Kgputrace: recording %.1f s, %.1f MB written in %d file%s",
            seconds_since(t0), (double)bytes / 1e6, files, files == 1 ? "" : "s");
    fflush(stderr);
}

/* Waits for the child; returns its wait status. On a TTY a progress line is refreshed in place once
 * a second (from the first second on, so short runs print nothing); it shares the terminal with the
 * program's own output, so it stays one short line. */
static int wait_child(pid_t pid, const char *dir, bool progress)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    double next_refresh = 1.0;
    bool shown = false;
    for (;;) {
        pid_t r = waitpid(pid, &status, progress ? WNOHANG : 0);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            fprintf(stderr, "gputrace record: waitpid: %s\n", strerror(errno));
            status = 1 << 8;
            break;
        }
        if (progress && r == 0) {
            if (seconds_since(&t0) >= next_refresh) {
                show_progress(dir, &t0);
                shown = true;
                next_refresh += 1.0;
            }
            struct timespec pause = {0, 100 * 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }
    if (shown)
        fprintf(stderr, "\r\033[K");
    return status;
}

static int exit_code_of(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

/* ---------------------------------------------------------------- convert and report */

/* The names of the captured frames, read now on the machine that has the modules, kept in the run
 * folder (as `perf archive` keeps perf's): the run then reads the same when analyzed elsewhere. */
static void keep_symbols(const char *dir)
{
    char err[512];
    if (gt_symarchive_write_dir(dir, err, sizeof err) < 0)
        fprintf(stderr, "gputrace record: the frames' names were not kept with the run: %s\n", err);
}

static int count_traces(const char *dir)
{
    int files;
    bytes_written(dir, &files);
    return files;
}

static int run_subcommand(int (*fn)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    fflush(NULL);
    int rc = fn(argc, argv);
    fflush(NULL);
    return rc;
}

/* The timeline, then the report: its verdict and advice printed (the lines a user reads before
 * anything else), the full report and the page written beside the run, and where each is. */
static void convert_and_report(const record_options *opt, run_paths *paths)
{
    char *convert_argv[] = {"convert", "-q", "-o", paths->perfetto, "--", paths->dir, NULL};
    int rc = run_subcommand(cmd_convert, convert_argv);
    /* Status 1 means "damaged input, what was readable is converted": still worth opening. */
    bool converted = rc <= 1; /* a failed write is status 2 and leaves no file behind */
    if (!converted)
        fprintf(stderr, "gputrace record: converting %s failed (status %d)\n", paths->dir, rc);
    bool reported = false;
    if (!opt->no_report) {
        char *report_argv[] = {"report",    "--brief", "--text-file", paths->report, "--html",
                               paths->html, "--",      paths->dir,    NULL};
        rc = run_subcommand(cmd_report, report_argv);
        reported = rc <= 1 || rc == 3;
        if (!reported)
            fprintf(stderr, "gputrace record: the report failed (status %d)\n", rc);
    }
    fprintf(stderr, "\ngputrace: run folder   %s\n", paths->dir);
    if (reported)
        fprintf(stderr, "gputrace: full report  %s  (the page: %s)\n", paths->report, paths->html);
    if (converted)
        fprintf(stderr, "gputrace: timeline     %s  (open in https://ui.perfetto.dev)\n",
                paths->perfetto);
}

static int record(const record_options *opt_in);

int cmd_record(int argc, char **argv)
{
    record_options opt;
    char **command;
    int rc = parse_record_options(argc, argv, &opt, &command);
    if (rc)
        return rc < 0 ? 0 : rc;
    rc = record(&opt);
    free(command);
    return rc;
}

static int record(const record_options *opt_in)
{
    record_options opt = *opt_in;
    if (!opt.lib)
        opt.lib = getenv("GPUTRACE_LIB");
    char lib[PATH_MAX];
    if (!find_library(opt.lib, lib, sizeof lib))
        return 2;
    if (opt.peaks && dr_peaks_ensure(opt.quiet) != 0)
        fprintf(stderr, "gputrace record: could not measure this machine's peaks (no GPU?); "
                        "recording anyway\n");
    run_paths paths;
    if (!make_run_folder(&opt, &paths))
        return 2;

    rs_install(opt.capture && !strcmp(opt.capture, "signal") ? capture_signal_of_env() : 0);
    if (opt.capture)
        setenv("GPUTRACE_CAPTURE", opt.capture, 1); /* the child inherits it */
    pid_t pid = start_child(opt.command, lib, paths.dir);
    if (pid < 0) {
        fprintf(stderr, "gputrace record: fork: %s\n", strerror(errno));
        rs_restore();
        return 2;
    }
    rs_watch(pid);
    int status = wait_child(pid, paths.dir, !opt.quiet && isatty(STDERR_FILENO));
    rs_restore();
    int child_rc = exit_code_of(status);
    if (rs_sigint_sent_as_sigterm())
        fprintf(stderr,
                "gputrace record: '%s' ignores SIGINT (it was started with SIGINT ignored, as a "
                "script starts a background job), so the SIGINT sent to gputrace record was "
                "passed on as SIGTERM\n",
                opt.command[0]);

    if (WIFSIGNALED(status))
        fprintf(stderr, "gputrace record: '%s' was killed by signal %d (%s)\n", opt.command[0],
                WTERMSIG(status), strsignal(WTERMSIG(status)));
    if (count_traces(paths.dir) == 0) {
        /* An empty run folder only gets in the way of the next try; rmdir keeps anything else. */
        bool removed = rmdir(paths.dir) == 0;
        if (child_rc == 126 || child_rc == 127) /* the child said why it could not run */
            return child_rc;
        fprintf(stderr,
                "gputrace record: no .gtrace file was written%s%s.\n"
                "Did '%s' (status %d) use CUDA? A process leaves a trace at its first CUDA call. "
                "Is it dynamically linked (LD_PRELOAD does not reach static programs)? "
                "GPUTRACE_VERBOSE=1 shows what libgputrace.so did.\n",
                removed ? "" : " in ", removed ? "" : paths.dir, opt.command[0], child_rc);
        return child_rc;
    }
    keep_symbols(paths.dir);
    convert_and_report(&opt, &paths);
    return child_rc;
}
