/* spill.c — the analysis's temporary file (spill.h). */
#include "spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

static const char *spill_dir(void)
{
    const char *names[] = {"GPUTRACE_TMPDIR", "TMPDIR"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *d = getenv(names[i]);
        if (d && *d)
            return d;
    }
    return "/tmp";
}

static int spill_open(gt_spill *s)
{
    if (s->is_open)
        return 0;
    if (s->failed)
        return -1;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/gputrace-spill-XXXXXX", spill_dir());
    s->fd = n > 0 && (size_t)n < sizeof path ? mkstemp(path) : -1;
    if (s->fd < 0) {
        s->failed = 1;
        return -1;
    }
    unlink(path); /* gone with the process, however it ends */
    s->is_open = 1;
    return 0;
}

int gt_spill_write(gt_spill *s, uint64_t offset, const void *buf, size_t n)
{
    if (spill_open(s) != 0)
        return -1;
    const char *p = buf;
    while (n > 0) {
        ssize_t w = pwrite(s->fd, p, n, (off_t)offset);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            s->failed = 1; /* a full disk: what is already there stays readable */
            return -1;
        }
        p += w;
        n -= (size_t)w;
        offset += (uint64_t)w;
        s->written += (uint64_t)w;
    }
    return 0;
}

uint64_t gt_spill_append(gt_spill *s, const void *buf, size_t n)
{
    uint64_t at = s->end;
    if (gt_spill_write(s, at, buf, n) != 0)
        return UINT64_MAX;
    s->end = at + n;
    return at;
}

size_t gt_spill_read(gt_spill *s, uint64_t offset, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n && s->is_open) {
        ssize_t r = pread(s->fd, (char *)buf + got, n - got, (off_t)(offset + got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "gputrace: reading back the analysis's temporary file: %s\n",
                    strerror(errno));
            exit(2);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    s->reads++;
    return got;
}

void gt_spill_close(gt_spill *s)
{
    if (s->is_open)
        close(s->fd);
    memset(s, 0, sizeof *s);
}

size_t gt_spill_pages_max(size_t dflt)
{
    /* at least two: a page in use and the one asked for */
    return gt_env_count("GPUTRACE_SPILL_PAGES", 2, dflt);
}
