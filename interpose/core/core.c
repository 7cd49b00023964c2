/* core.c — the recording core's life cycle: start at load, the output file and its header,
 * exit paths (exit, _exit, fatal signals), fork, and the hooks other modules hang on them. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"
#include "gt_core_fast.h"
#include "gt_encode.h"

#define MAX_HOOKS 16
/* A fatal signal ends the process within this time (the flush; CUPTI's own flush comes first). */
#define SIGNAL_FLUSH_MS 700
#define EXE_MAX 2048
#define CMDLINE_MAX 8192

void gt_config_load(void); /* config.c */

_Atomic int g_recording;
_Atomic int g_writer_failed;
pthread_mutex_t g_hdr_lock = PTHREAD_MUTEX_INITIALIZER;
gt_file_header g_hdr;

static char g_exe[EXE_MAX];
static char g_cmdline[CMDLINE_MAX];
static size_t g_cmdline_len;
static _Atomic int g_pid;      /* the process the current file belongs to */
static _Atomic int g_started;  /* a file is open and the writer runs */
static _Atomic int g_finished; /* finish() ran for g_pid */
static _Atomic int g_exit_hooks_ran;
static _Atomic int g_forked_child;
static _Atomic int g_lazy_claimed; /* a thread is creating the file (gt_core_start_on_activity) */
_Atomic uint64_t gt_core_corr;     /* ids handed out in blocks so far; see gt_core_fast.h */

typedef struct hook_list {
    gt_core_hook fn[MAX_HOOKS];
    _Atomic int n;
} hook_list;
static hook_list g_before_exit, g_fork_child, g_periodic;
static gt_core_capture_hook g_capture_hooks[MAX_HOOKS];
static _Atomic int g_n_capture_hooks;

/* ---------------------------------------------------------------- hooks */

static void hook_add(hook_list *l, gt_core_hook fn)
{
    int i = atomic_load(&l->n);
    if (!fn || i >= MAX_HOOKS)
        return;
    l->fn[i] = fn;
    atomic_store(&l->n, i + 1);
}

static void hooks_run(hook_list *l)
{
    int n = atomic_load(&l->n);
    for (int i = 0; i < n; i++)
        l->fn[i]();
}

void gt_core_on_before_exit(gt_core_hook fn)
{
    hook_add(&g_before_exit, fn);
}

void gt_core_on_fork_child(gt_core_hook fn)
{
    hook_add(&g_fork_child, fn);
}

void gt_core_on_periodic(gt_core_hook fn)
{
    hook_add(&g_periodic, fn);
}

void gt_run_hooks_periodic(void)
{
    hooks_run(&g_periodic);
}

void gt_core_on_capture(gt_core_capture_hook fn)
{
    int i = atomic_load(&g_n_capture_hooks);
    if (!fn || i >= MAX_HOOKS)
        return;
    g_capture_hooks[i] = fn;
    atomic_store(&g_n_capture_hooks, i + 1);
}

void gt_run_hooks_capture(bool on)
{
    int n = atomic_load(&g_n_capture_hooks);
    for (int i = 0; i < n; i++)
        g_capture_hooks[i](on);
}

static void run_before_exit_once(void)
{
    if (syscall(SYS_getpid) != atomic_load(&g_pid) || !atomic_load(&g_started))
        return;
    if (!atomic_exchange(&g_exit_hooks_ran, 1))
        hooks_run(&g_before_exit);
}

void gt_core_register_late_atexit(void)
{
    atexit(run_before_exit_once);
}

/* ---------------------------------------------------------------- small API */

/* A fresh block for this thread: its first id, a multiple of GT_CORR_BLOCK (never 0). Ids are
 * unique in the process and grow on each thread; across threads they are not in call order. */
uint64_t gt_core_corr_refill(void)
{
    return atomic_fetch_add_explicit(&gt_core_corr, GT_CORR_BLOCK, memory_order_relaxed) +
           GT_CORR_BLOCK;
}

uint64_t gt_next_corr_id(void)
{
    return gt_fast_next_corr_id();
}

bool gt_core_is_forked_child(void)
{
    return atomic_load(&g_forked_child);
}

void gt_core_flush_self(void)
{
    gt_writer_flush_wait(10000);
}

void gt_core_flush_all(void)
{
    gt_writer_flush_wait(10000);
}

/* ---------------------------------------------------------------- header */

static void header_changed(void)
{
    pthread_mutex_unlock(&g_hdr_lock);
    gt_writer_header_changed();
}

void gt_core_set_versions(int32_t driver, int32_t runtime, int32_t cudnn, int32_t cudnn_cudart,
                          int32_t cublas, int32_t cupti)
{
    pthread_mutex_lock(&g_hdr_lock);
    gt_runtime_info *ri = &g_hdr.runtime;
    if (driver)
        ri->driver_version = driver;
    if (runtime)
        ri->runtime_version = runtime;
    if (cudnn)
        ri->cudnn_version = cudnn;
    if (cudnn_cudart)
        ri->cudnn_cudart_version = cudnn_cudart;
    if (cublas)
        ri->cublas_version = cublas;
    if (cupti)
        ri->cupti_version = cupti;
    header_changed();
}

void gt_core_set_device(int ordinal, const gt_device_info *info)
{
    if (ordinal < 0 || ordinal >= GT_MAX_DEVICES || !info)
        return;
    pthread_mutex_lock(&g_hdr_lock);
    g_hdr.runtime.devices[ordinal] = *info;
    g_hdr.runtime.devices[ordinal].ordinal = ordinal;
    g_hdr.runtime.devices[ordinal].name[sizeof info->name - 1] = 0;
    if (g_hdr.runtime.device_count <= ordinal)
        g_hdr.runtime.device_count = ordinal + 1;
    header_changed();
}

void gt_core_set_cupti_state(uint32_t state)
{
    pthread_mutex_lock(&g_hdr_lock);
    g_hdr.runtime.cupti_state = state;
    header_changed();
}

void gt_core_set_header_flag(uint32_t flag)
{
    pthread_mutex_lock(&g_hdr_lock);
    g_hdr.flags |= flag;
    header_changed();
}

size_t gt_header_snapshot(void *buf, size_t cap)
{
    pthread_mutex_lock(&g_hdr_lock);
    size_t n = gt_header_encode(buf, cap, &g_hdr, g_exe, g_cmdline, g_cmdline_len);
    pthread_mutex_unlock(&g_hdr_lock);
    return n;
}

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static size_t read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t used = 0;
    while (used < cap) {
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    return used;
}

/* The first of the variables that is set to an integer, else -1. */
static int32_t env_int(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (!v || !*v)
            continue;
        char *end;
        long x = strtol(v, &end, 10);
        if (!*end && x >= 0 && x < (1L << 30))
            return (int32_t)x;
        gt_warn("%s=%s is not a rank number; ignored", *names, v);
    }
    return -1;
}

static void fill_header(void)
{
    memset(&g_hdr, 0, sizeof g_hdr);
    g_hdr.pid = (int32_t)getpid();
    g_hdr.ppid = (int32_t)getppid();
    g_hdr.start_realtime_ns = clock_ns(CLOCK_REALTIME);
    g_hdr.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
    g_hdr.start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
    static const char *const RANK[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                       NULL};
    static const char *const LOCAL[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                                        NULL};
    static const char *const WORLD[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE",
                                        "PMI_SIZE", NULL};
    g_hdr.rank = env_int(RANK);
    g_hdr.local_rank = env_int(LOCAL);
    g_hdr.world_size = env_int(WORLD);
    g_hdr.flags = GT_HDR_END_RECORD; /* this recorder ends its files with GT_REC_END */
    if (gt_capture_windows())
        g_hdr.flags |= GT_HDR_CAPTURE_WINDOWS; /* GT_REC_CAPTURE records bound what was recorded */
    if (g_cfg.flight_s)
        g_hdr.flags |= GT_HDR_FLIGHT_RECORDER; /* GT_REC_FLIGHT records say what was kept */
    if (g_cfg.sample_on_ms)
        g_hdr.flags |= GT_HDR_GPU_SAMPLED; /* GT_REC_CAPTURE records bound the GPU side */
    gethostname(g_hdr.host, sizeof g_hdr.host - 1);
    ssize_t n = readlink("/proc/self/exe", g_exe, sizeof g_exe - 1);
    g_exe[n > 0 ? n : 0] = 0;
    g_cmdline_len = read_small_file("/proc/self/cmdline", g_cmdline, sizeof g_cmdline);
}

/* GPUTRACE_DIR=run1 is created when missing, as a user expects: with its missing parents, 0700
 * (traces hold command lines and file paths). */
static bool make_dirs(const char *dir)
{
    char p[sizeof g_cfg.dir];
    snprintf(p, sizeof p, "%s", dir);
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c)
            continue;
        char saved = *c;
        *c = 0;
        if (mkdir(p, 0700) < 0 && errno != EEXIST)
            return false;
        *c = saved;
        if (!saved)
            return true;
    }
}

/* gputrace-<host>-<pid>[-rank<R>].gtrace in GPUTRACE_DIR; never follows or reuses a file (an
 * exec'ed image has the same pid: it gets a .1, .2... name). */
static int open_output(char *path, size_t cap)
{
    char host[64];
    snprintf(host, sizeof host, "%s", g_hdr.host[0] ? g_hdr.host : "host");
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    char rank[32] = "";
    if (g_hdr.rank >= 0)
        snprintf(rank, sizeof rank, "-rank%d", g_hdr.rank);
    int err = 0;
    for (int n = 0; n < 100; n++) {
        char suffix[8] = "";
        if (n)
            snprintf(suffix, sizeof suffix, ".%d", n);
        int len = snprintf(path, cap, "%s/gputrace-%s-%d%s%s.gtrace", g_cfg.dir, host, g_hdr.pid,
                           rank, suffix);
        if (len < 0 || (size_t)len >= cap) {
            err = ENAMETOOLONG;
            break;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == ENOENT && n == 0 && make_dirs(g_cfg.dir)) {
            gt_debug("created %s", g_cfg.dir);
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        }
        if (fd >= 0)
            return fd;
        err = errno;
        if (err != EEXIST)
            break;
    }
    gt_warn("cannot create a trace file in %s: %s; not recording (the application continues)",
            g_cfg.dir, strerror(err));
    return -1;
}

static void install_sigint_handler(void);

/* Open this process's file and start the writer. */
static bool start_recording(void)
{
    char path[1024];
    int fd = open_output(path, sizeof path);
    if (fd < 0)
        return false;
    if (gt_writer_start(fd, path) < 0) {
        close(fd);
        return false;
    }
    atomic_store(&g_started, 1);
    install_sigint_handler();
    bool paused = gt_capture_windows();
    atomic_store(&g_recording, paused ? GT_RECORDING_PAUSED : GT_RECORDING_ON);
    gt_debug("recording to %s%s", path, paused ? " (paused until a capture window opens)" : "");
    return true;
}

/* Issue 21: a process that never uses CUDA (a shell, ptxas, a DataLoader helper) leaves no file.
 * The file is created at the first CUDA activity instead of at load: the first wrapped call, the
 * first record (CUPTI's buffers, NVTX). A failure to create it stops recording for good. */
void gt_core_start_on_activity(void)
{
    if (atomic_load(&g_recording) != GT_RECORDING_LAZY)
        return;
    int none = 0;
    if (!atomic_compare_exchange_strong(&g_lazy_claimed, &none, 1)) {
        while (atomic_load(&g_recording) == GT_RECORDING_LAZY) /* another thread opens it */
            sched_yield();
        return;
    }
    if (!start_recording())
        atomic_store(&g_recording, GT_RECORDING_STOPPED);
}

/* ---------------------------------------------------------------- exit */

/* "lost" is what the file's end chunk counts, so the line and the file agree. */
static void print_summary(void)
{
    if (g_cfg.quiet)
        return;
    uint64_t after = gt_writer_after_end(), interrupted = gt_writer_calls_interrupted();
    char late[96] = "", handlers[96] = "";
    if (after)
        snprintf(late, sizeof late, "; %llu calls after the end, not recorded",
                 (unsigned long long)after);
    if (interrupted) /* the file counts them with its losses (gt_rec_end.calls_interrupted) */
        snprintf(handlers, sizeof handlers, "; %llu calls from signal handlers, not recorded",
                 (unsigned long long)interrupted);
    char unseen[128] = "";
    uint64_t before_cupti = gt_writer_calls_before_cupti();
    if (before_cupti) /* recorded calls whose GPU work is not (gt_rec_end.calls_before_cupti) */
        snprintf(unseen, sizeof unseen,
                 "; %llu GPU calls before CUPTI was attached, their GPU work not recorded",
                 (unsigned long long)before_cupti);
    char evicted[96] = "";
    if (g_cfg.flight_s)
        snprintf(evicted, sizeof evicted, ", %llu evicted by the flight recorder, which keeps %u s",
                 (unsigned long long)gt_writer_flight_evicted(), g_cfg.flight_s);
    gt_warn("wrote %s (%llu records, %llu lost%s)%s%s%s", gt_writer_path(),
            (unsigned long long)gt_writer_records_written(),
            (unsigned long long)gt_writer_end_lost(), evicted, late, handlers, unseen);
}

/* Everything recorded so far reaches the file, which ends with its end chunk; later calls are
 * counted there. Runs once per process. */
static void finish(void)
{
    if (syscall(SYS_getpid) != atomic_load(&g_pid))
        return; /* a vfork child sharing our memory */
    if (!atomic_load(&g_started)) {
        if (atomic_load(&g_recording) == GT_RECORDING_LAZY)
            gt_procs_note_exit(); /* no CUDA activity: one line in the run folder */
        return;
    }
    run_before_exit_once();
    if (atomic_exchange(&g_finished, 1))
        return;
    atomic_store(&g_recording, GT_RECORDING_ENDED);
    gt_writer_stop();
    print_summary();
}

static void at_exit(void)
{
    finish();
}

__attribute__((destructor)) static void core_fini(void)
{
    finish();
}

/* DataLoader workers and other forked children often end with os._exit: flush first. The real
 * _exit is the exit_group system call. */
GT_EXPORT void _exit(int status)
{
    finish();
    for (;;)
        syscall(SYS_exit_group, status);
}

GT_EXPORT void _Exit(int status)
{
    _exit(status);
}

/* ---------------------------------------------------------------- signals */

/* Signals whose default action ends the process: the trace is flushed and ended first (bounded by
 * SIGNAL_FLUSH_MS), then what was there before decides. The crash signals are included: what was
 * recorded up to a crash is what explains it. */
static const int FATAL_SIGNALS[] = {SIGTERM, SIGINT, SIGHUP, SIGSEGV, SIGBUS, SIGABRT, SIGFPE};
#define N_FATAL (int)(sizeof FATAL_SIGNALS / sizeof FATAL_SIGNALS[0])
static struct sigaction g_old_action[N_FATAL];

static int signal_slot(int sig)
{
    for (int i = 0; i < N_FATAL; i++)
        if (FATAL_SIGNALS[i] == sig)
            return i;
    return -1;
}

static bool has_handler(const struct sigaction *old)
{
    return (old->sa_flags & SA_SIGINFO) ? old->sa_sigaction != NULL
                                        : old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN;
}

/* A fault the kernel raised at an instruction (not kill/raise): returning re-runs the instruction,
 * which faults again under the default action, so the core dump shows the real place. */
static bool is_synchronous_fault(int sig, const siginfo_t *info)
{
    return (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE) && info && info->si_code > 0;
}

static void die_by_default(int sig, const siginfo_t *info)
{
    signal(sig, SIG_DFL);
    if (is_synchronous_fault(sig, info))
        return;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* The application's handler may let the process live on (Python turns SIGINT into an exception):
 * then the trace goes on too, after a bounded flush. Under the default action the process ends:
 * the trace is ended (recording stops, the end chunk counts what could not be written), then the
 * signal is delivered again. Async-signal-safe apart from the exit line (as at exit). */
/* The process is about to end by sig's default action: the trace ends first (bounded), once. */
static void end_for_default_action(int sig)
{
    if (syscall(SYS_getpid) != atomic_load(&g_pid))
        return; /* a vfork child sharing our memory */
    if (!atomic_load(&g_started)) {
        if (atomic_load(&g_recording) == GT_RECORDING_LAZY)
            gt_procs_note_exit(); /* ends without CUDA activity */
        return;
    }
    if (atomic_exchange(&g_finished, 1))
        return;
    /* New calls wait from here: CUPTI's flush and the writer get the CPU. */
    atomic_store(&g_recording, GT_RECORDING_ENDING);
    run_before_exit_once();
    atomic_store(&g_recording, GT_RECORDING_ENDED);
    gt_writer_end_within(GT_END_SIGNAL, sig, SIGNAL_FLUSH_MS);
    print_summary();
}

static void on_fatal_signal(int sig, siginfo_t *info, void *ctx)
{
    int saved = errno;
    int slot = signal_slot(sig);
    struct sigaction *old = slot >= 0 ? &g_old_action[slot] : NULL;
    bool app_handles = old && has_handler(old);
    if (!app_handles)
        end_for_default_action(sig);
    else if (syscall(SYS_getpid) == atomic_load(&g_pid) && atomic_load(&g_started) &&
             !atomic_load(&g_finished))
        gt_writer_flush_wait(SIGNAL_FLUSH_MS); /* CUPTI's exit flush waits for the real exit */
    if (app_handles && (old->sa_flags & SA_SIGINFO))
        old->sa_sigaction(sig, info, ctx);
    else if (app_handles)
        old->sa_handler(sig);
    else if (!old || old->sa_handler == SIG_DFL)
        die_by_default(sig, info);
    errno = saved;
}

static void install_signal_handler(int slot)
{
    struct sigaction sa, old;
    if (sigaction(FATAL_SIGNALS[slot], NULL, &old) < 0)
        return;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
        return; /* ignored (nohup, a script's background job): keep it ignored */
    g_old_action[slot] = old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    /* SA_ONSTACK: a thread with an alternate stack (a stack overflow) runs us there. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    sigaction(FATAL_SIGNALS[slot], &sa, NULL);
}

/* At load: every fatal signal but SIGINT. */
static void install_signal_handlers(void)
{
    for (int i = 0; i < N_FATAL; i++)
        if (FATAL_SIGNALS[i] != SIGINT)
            install_signal_handler(i);
}

/* SIGINT's handler comes with the trace file, at the first CUDA activity. Python installs its
 * KeyboardInterrupt handler at start-up only where it finds SIGINT at its default: with ours
 * installed at load it found a handler and left SIGINT to it, so a Ctrl-C killed the program
 * instead of raising KeyboardInterrupt (no finally, no checkpoint saved). By the first CUDA call
 * the interpreter's handler is in place, and ours flushes, then passes the signal on to it. Once
 * per process image: a forked child inherits the handler (and what it passes on to). */
static void install_sigint_handler(void)
{
    static _Atomic int installed;
    if (!atomic_exchange(&installed, 1))
        install_signal_handler(signal_slot(SIGINT));
}

/* A program that ends by sending itself a fatal signal left at its default action bypasses
 * gputrace's handler, which it replaced: Python after an uncaught KeyboardInterrupt sets SIGINT
 * back to SIG_DFL and calls kill(getpid(), SIGINT), after its finalization and before the C
 * library's exit handlers, so the trace had no end. The trace is ended first, as the handler ends
 * it (bounded, async-signal-safe: kill() may be called from a handler). */
GT_EXPORT int kill(pid_t pid, int sig)
{
    struct sigaction cur;
    if (pid > 0 && pid == (pid_t)syscall(SYS_getpid) && signal_slot(sig) >= 0 &&
        sigaction(sig, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
        cur.sa_handler == SIG_DFL)
        end_for_default_action(sig);
    return (int)syscall(SYS_kill, pid, sig);
}

/* ---------------------------------------------------------------- fork */

static void fork_prepare(void)
{
    gt_writer_fork_prepare(); /* first: a pass takes the locks below */
    pthread_mutex_lock(&g_reg_lock);
    pthread_mutex_lock(&g_intern_lock);
    pthread_mutex_lock(&g_hdr_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&g_hdr_lock);
    pthread_mutex_unlock(&g_intern_lock);
    pthread_mutex_unlock(&g_reg_lock);
    gt_writer_fork_parent();
}

/* The child records into its own file and never touches its parent's CUDA or CUPTI state (the
 * fork_child hooks make the other modules forget it). */
static void fork_child(void)
{
    pthread_mutex_init(&g_hdr_lock, NULL);
    pthread_mutex_init(&g_intern_lock, NULL);
    atomic_store(&g_forked_child, 1);
    bool was_started = atomic_load(&g_started);
    bool was_lazy = atomic_load(&g_recording) == GT_RECORDING_LAZY;
    atomic_store(&g_recording, GT_RECORDING_STOPPED);
    atomic_store(&g_lazy_claimed, 0);
    atomic_store(&g_started, 0);
    atomic_store(&g_finished, 0);
    atomic_store(&g_exit_hooks_ran, 0);
    atomic_store(&g_pid, (int)syscall(SYS_getpid));
    gt_core_tls.corr_next = 0; /* the child's ids come from its own blocks */
    gt_ring_fork_child();      /* also re-initialises g_reg_lock */
    gt_writer_fork_child_reset();
    hooks_run(&g_fork_child);
    g_hdr.pid = (int32_t)getpid();
    g_hdr.ppid = (int32_t)getppid();
    g_hdr.start_realtime_ns = clock_ns(CLOCK_REALTIME);
    g_hdr.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
    g_hdr.start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
    if (!was_started) { /* the parent had no file yet: neither has the child, until it uses CUDA */
        gt_procs_prepare(&g_hdr, g_exe);
        if (was_lazy)
            atomic_store(&g_recording, GT_RECORDING_LAZY);
        return;
    }
    g_hdr.flags |= GT_HDR_FORKED_CHILD;
    start_recording();
}

/* ---------------------------------------------------------------- start */

/* The modules' GT_MODULE entries (gt_core.h); the linker defines the bounds of the section, absent
 * (NULL) where no module is linked in. */
extern const gt_module __start_gt_modules[] __attribute__((weak, visibility("hidden")));
extern const gt_module __stop_gt_modules[] __attribute__((weak, visibility("hidden")));

static void init_modules(void)
{
    for (int order = 0; order <= GT_MODULE_ORDER_MAX; order++)
        for (const gt_module *m = __start_gt_modules; m && m < __stop_gt_modules; m++)
            if (m->order == order && m->init) {
                gt_debug("module %s", m->name);
                m->init();
            }
}

__attribute__((constructor)) static void core_init(void)
{
    gt_config_load();
    atomic_store(&g_pid, (int)syscall(SYS_getpid));
    if (g_cfg.disabled)
        return;
    gt_clock_init();
    fill_header();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    gt_procs_prepare(&g_hdr, g_exe);
    atomic_store(&g_recording, GT_RECORDING_LAZY); /* the file comes with the first CUDA activity */
    atexit(at_exit);
    install_signal_handlers();
    gt_capture_init();
    init_modules();
}
