/* procs.c — a process that ends without CUDA activity leaves one line in the run folder.
 *
 * Why. The trace file is created at a process's first CUDA activity (core.c), so a compiler the
 * program runs (ptxas, nvcc, gcc and its cc1/as/ld) leaves no file; yet its time is the
 * program's JIT compilation, which the analyzer must name rather than blame the GPU's idle time
 * on data loading (issue 21 item 1). At exit such a process appends
 *     <pid> <ppid> <start_ns> <end_ns> <exe>\n
 * (CLOCK_REALTIME; ppid as it was at start) to GPUTRACE_DIR/gputrace-<host>.procs with one
 * O_APPEND write(): lines of concurrent processes never interleave (a line is far below
 * PIPE_BUF). The line is composed at load and at fork, so that the exit path only copies bytes,
 * reads the clock and makes three system calls: async-signal-safe and allocation-free, as a
 * fatal signal's handler or _exit needs. Nothing is created: without the run folder (no process
 * of the run used CUDA yet) the line is dropped, and a failing write changes nothing for the
 * application. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_internal.h"

#define PROCS_LINE_MAX 1024

static char g_procs_path[sizeof g_cfg.dir + 96];
static char g_head[64];  /* "<pid> <ppid> <start_ns> " */
static char g_tail[900]; /* " <exe>\n" */
static size_t g_head_len, g_tail_len;
static _Atomic int g_procs_pid; /* the process the prepared line belongs to, 0 none */

void gt_procs_prepare(const gt_file_header *hdr, const char *exe)
{
    atomic_store(&g_procs_pid, 0);
    char host[64];
    snprintf(host, sizeof host, "%s", hdr->host[0] ? hdr->host : "host");
    for (char *c = host; *c; c++)
        if (*c == '/')
            *c = '_';
    int n = snprintf(g_procs_path, sizeof g_procs_path, "%s/gputrace-%s.procs", g_cfg.dir, host);
    if (n < 0 || (size_t)n >= sizeof g_procs_path)
        return;
    n = snprintf(g_head, sizeof g_head, "%d %d %llu ", hdr->pid, hdr->ppid,
                 (unsigned long long)hdr->start_realtime_ns);
    if (n < 0 || (size_t)n >= sizeof g_head)
        return;
    g_head_len = (size_t)n;
    n = snprintf(g_tail, sizeof g_tail, " %s", exe && *exe ? exe : "?");
    g_tail_len = n < 0 ? 0 : (size_t)n < sizeof g_tail - 1 ? (size_t)n : sizeof g_tail - 2;
    for (size_t i = 0; i < g_tail_len; i++)
        if (g_tail[i] == '\n')
            g_tail[i] = '?';
    g_tail[g_tail_len++] = '\n';
    atomic_store(&g_procs_pid, hdr->pid);
}

/* Decimal digits of v at the end of buf[0..cap); returns where they start. */
static char *u64_digits(char *end, uint64_t v)
{
    do {
        *--end = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return end;
}

void gt_procs_note_exit(void)
{
    int pid = (int)syscall(SYS_getpid);
    int expected = pid;
    if (!pid || !atomic_compare_exchange_strong(&g_procs_pid, &expected, 0))
        return; /* not prepared, another process (vfork), or written already */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    char line[PROCS_LINE_MAX], digits[24];
    char *d = u64_digits(digits + sizeof digits, now);
    size_t dn = (size_t)(digits + sizeof digits - d), len = 0;
    if (g_head_len + dn + g_tail_len > sizeof line)
        return;
    memcpy(line, g_head, g_head_len);
    len += g_head_len;
    memcpy(line + len, d, dn);
    len += dn;
    memcpy(line + len, g_tail, g_tail_len);
    len += g_tail_len;
    int fd = open(g_procs_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    ssize_t w = write(fd, line, len);
    (void)w; /* a line lost to a full disk is one process less in the folded list */
    close(fd);
}
