/* own_trace.c — see own_trace.h. */
#include "own_trace.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gt_reader.h"

/* gputrace-<host>-<pid>[-rank<R>][.<n>].gtrace: the pid followed by '-' or '.'. */
static bool is_own_trace(const char *name)
{
    char pid[24];
    int n = snprintf(pid, sizeof pid, "-%d", (int)getpid());
    size_t len = strlen(name);
    if (len < 7 || strcmp(name + len - 7, ".gtrace"))
        return false;
    for (const char *p = strstr(name, pid); p; p = strstr(p + 1, pid))
        if (p[n] == '-' || p[n] == '.')
            return true;
    return false;
}

int own_trace_count(uint16_t kind, uint32_t *hdr_flags)
{
    const char *dir = getenv("GPUTRACE_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    char path[4096] = "";
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (is_own_trace(e->d_name))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    gt_reader *r;
    char err[256];
    if (!path[0] || gt_reader_open(path, &r, err, sizeof err) != GT_OPEN_OK)
        return -1;
    if (hdr_flags)
        *hdr_flags = gt_reader_header(r)->flags;
    int count = 0;
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1)
        count += rec.kind == kind;
    gt_reader_close(r);
    return count;
}

bool own_trace_wait(uint16_t kind, int want, int ceiling_s)
{
    struct timespec t0, now, pause = {0, 5000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (own_trace_count(kind, NULL) >= want)
            return true;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= ceiling_s)
            return false;
        nanosleep(&pause, NULL);
    }
}
