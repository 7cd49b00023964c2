/* record_signals.c — which signals `gputrace record` passes on to the program it runs.
 *
 * The program runs in gputrace record's process group, so it keeps the terminal as a shell left
 * it: it reads it, Ctrl-Z stops both, a hangup reaches both. A signal the terminal sends (Ctrl-C,
 * Ctrl-\, a hangup) reaches every process of the foreground group: the program got it too, and
 * passing it on would make one Ctrl-C two KeyboardInterrupts. The kernel marks those SI_KERNEL (a
 * kill() is SI_USER with the sender's pid). One sent to gputrace record alone (kill -INT PID, a
 * Python harness's send_signal, timeout --foreground) is passed on, so that the program ends as it
 * was told, and record still converts what it wrote. Not passed on: the terminal's, unless the
 * program left our process group (setsid: then it got nothing), and the program's own (a
 * kill(0, sig) of its group, which reached it already).
 *
 * Not told apart: a kill() of the whole group (`kill %1` in an interactive shell, timeout without
 * --foreground, killpg) reaches the program directly and is passed on too, since a signal's
 * siginfo does not say it was sent to a group (docs/limits.md).
 *
 * A script's background job starts with SIGINT ignored (POSIX: job control is off), and the
 * program inherits that: Python then never installs its KeyboardInterrupt handler, and a SIGINT
 * passed on is ignored; a 100,000-step run went on for minutes. A SIGINT sent to gputrace record
 * alone while the program still ignores it is passed on as SIGTERM (the program's own choice of
 * ignoring SIGINT, when it was not ignored at start, is left alone).
 *
 * Every handler here blocks the others (one forward at a time, in order of arrival), uses only
 * async-signal-safe calls, and all of them stay blocked from before fork until the program's pid is
 * known: a signal sent meanwhile (the program's own kill -USR2 $PPID at its first instruction,
 * on a busy machine) waits instead of finding no pid to pass it on to. */
#include "record_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static const int TERMINATION_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define N_TERMINATION (int)(sizeof TERMINATION_SIGNALS / sizeof TERMINATION_SIGNALS[0])

static struct sigaction saved_actions[N_TERMINATION + 1]; /* the capture signal's last */
static sigset_t saved_mask, handled;
static int capture_sig; /* 0: --capture signal not asked for */
static bool sigint_ignored_at_start;
static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t sigint_as_sigterm;

/* /proc/PID/status's SigIgn mask has sig. Async-signal-safe: no stdio, no allocation. */
static bool process_ignores(pid_t pid, int sig)
{
    char path[32] = "/proc/", digits[16];
    int n = 0;
    for (unsigned v = (unsigned)pid; v || !n; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    size_t at = strlen(path);
    while (n)
        path[at++] = digits[--n];
    memcpy(path + at, "/status", sizeof "/status");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[4096];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return false;
    buf[got] = 0;
    const char *line = strstr(buf, "\nSigIgn:");
    if (!line)
        return false;
    uint64_t mask = 0;
    for (const char *c = line + sizeof "\nSigIgn:" - 1; *c && *c != '\n'; c++) {
        int d = *c >= '0' && *c <= '9' ? *c - '0' : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10 : -1;
        if (d >= 0)
            mask = mask << 4 | (uint64_t)d;
    }
    return (mask >> (sig - 1)) & 1;
}

/* See the file comment. */
static bool should_pass_on(pid_t child, const siginfo_t *info)
{
    if (!info)
        return true;
    if (info->si_code == SI_USER && info->si_pid == child)
        return false;               /* the program's own */
    if (info->si_code == SI_KERNEL) /* the terminal's: it reached our group */
        return getpgid(child) != getpgrp();
    return true;
}

static void pass_on_termination(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    int saved_errno = errno;
    pid_t child = (pid_t)child_pid;
    if (child > 0 && should_pass_on(child, info)) {
        if (sig == SIGINT && sigint_ignored_at_start && process_ignores(child, SIGINT)) {
            sig = SIGTERM;
            sigint_as_sigterm = 1;
        }
        kill(child, sig);
    }
    errno = saved_errno;
}

/* --capture signal: `kill -USR2 <gputrace's pid>` works as on the program's, whoever sends it. */
static void pass_on_capture(int sig)
{
    int saved_errno = errno;
    if (child_pid > 0)
        kill((pid_t)child_pid, sig);
    errno = saved_errno;
}

void rs_install(int capture_signal)
{
    capture_sig = capture_signal;
    sigint_as_sigterm = 0;
    sigemptyset(&handled);
    for (int i = 0; i < N_TERMINATION; i++)
        sigaddset(&handled, TERMINATION_SIGNALS[i]);
    if (capture_sig)
        sigaddset(&handled, capture_sig);
    sigprocmask(SIG_BLOCK, &handled, &saved_mask);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = pass_on_termination;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sa.sa_mask = handled;
    for (int i = 0; i < N_TERMINATION; i++)
        sigaction(TERMINATION_SIGNALS[i], &sa, &saved_actions[i]);
    sigint_ignored_at_start =
        !(saved_actions[0].sa_flags & SA_SIGINFO) && saved_actions[0].sa_handler == SIG_IGN;
    if (capture_sig) {
        struct sigaction cap;
        memset(&cap, 0, sizeof cap);
        cap.sa_handler = pass_on_capture;
        cap.sa_flags = SA_RESTART;
        cap.sa_mask = handled;
        sigaction(capture_sig, &cap, &saved_actions[N_TERMINATION]);
    }
}

static void restore_actions(void)
{
    for (int i = 0; i < N_TERMINATION; i++)
        sigaction(TERMINATION_SIGNALS[i], &saved_actions[i], NULL);
    if (capture_sig)
        sigaction(capture_sig, &saved_actions[N_TERMINATION], NULL);
}

void rs_child_restore(void)
{
    restore_actions();
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

void rs_watch(pid_t pid)
{
    child_pid = pid;
    sigprocmask(SIG_SETMASK, &saved_mask, NULL); /* what came since rs_install is passed on now */
}

void rs_restore(void)
{
    sigprocmask(SIG_BLOCK, &handled, NULL);
    child_pid = 0;
    restore_actions();
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

bool rs_sigint_sent_as_sigterm(void)
{
    return sigint_as_sigterm;
}
