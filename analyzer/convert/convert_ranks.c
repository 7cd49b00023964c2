/* convert_ranks.c — `convert --ranks LIST`: which input files a rank choice keeps (issue 33
 * item 4), so that a run of a thousand ranks gives a timeline a browser opens.
 *
 * LIST is comma-separated: a rank (3), a range (8-11), `slowest`, `fastest`. A file's rank is its
 * header's (RANK, SLURM_PROCID...); a file without one belongs to its parent's rank, followed by
 * ppid on the same host (a DataLoader worker forked before RANK was set, a compiler the rank
 * started); the rest (a launcher) have no rank and are left out whenever --ranks is given.
 *
 * Numbers need only the headers: the files of other ranks are opened for their header and never
 * read. slowest and fastest need every rank's figures: the model (model.h) of every rank's main
 * process (not its forked children) is loaded at once, as `gputrace report` does, then freed
 * before the conversion, so memory is the report's over those files. slowest is the straggler
 * at the collectives (model_ranks.c: the rank with most lateness per steady step); fastest is
 * the rank that waits longest per step for the others there (it arrives first). Without matched
 * collectives the ranks are told apart by their median steady step: the longest and the
 * shortest. Ties go to the lowest rank. */
#include "convert.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "util.h"

#define MAX_PARENT_HOPS 16 /* a fork chain deeper than this is not a worker of a rank */
#define LIST_TEXT_MAX 200  /* a rank list in a message: longer ones end in "..." */

typedef struct rank_range {
    int32_t lo, hi;
} rank_range;

typedef struct rank_spec {
    rank_range *ranges;
    size_t n;
    int slowest, fastest;
} rank_spec;

typedef struct rank_file {
    char *path;
    int readable;
    int32_t pid, ppid, rank; /* rank: the header's, or -1 */
    int32_t owner;           /* the rank it belongs to (its own or a parent's), -1 none */
    int forked;
    char host[64];
} rank_file;

/* The message into err; returns -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_rank(const char *s, size_t len, int32_t *out)
{
    if (!len || len > 10)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* One item of LIST: a rank, a range or a name. */
static int parse_item(const char *s, size_t len, rank_spec *spec, char *err, size_t errlen)
{
    char item[64];
    snprintf(item, sizeof item, "%.*s", (int)(len < 63 ? len : 63), s);
    if (!strcmp(item, "slowest") || !strcmp(item, "fastest")) {
        *(item[0] == 's' ? &spec->slowest : &spec->fastest) = 1;
        return 0;
    }
    const char *dash = memchr(s, '-', len);
    rank_range r;
    int ok = dash ? parse_rank(s, (size_t)(dash - s), &r.lo) == 0 &&
                        parse_rank(dash + 1, len - (size_t)(dash - s) - 1, &r.hi) == 0
                  : parse_rank(s, len, &r.lo) == 0;
    if (!dash)
        r.hi = r.lo;
    if (!ok)
        return fail(err, errlen, "--ranks: '%s' is not a rank, a range (8-11), slowest or fastest",
                    item);
    if (r.hi < r.lo)
        return fail(err, errlen, "--ranks: the range '%s' ends before it begins", item);
    spec->ranges = gt_xrealloc(spec->ranges, (spec->n + 1) * sizeof *spec->ranges);
    spec->ranges[spec->n++] = r;
    return 0;
}

static int parse_spec(const char *list, rank_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    const char *s = list;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (!len)
            return fail(err, errlen, "--ranks: an empty item in '%s'", list);
        if (parse_item(s, len, spec, err, errlen) != 0)
            return -1;
        if (!comma)
            return 0;
        s = comma + 1;
    }
}

/* Each readable file's header; unreadable ones are kept as they are (the conversion says why). */
static rank_file *read_headers(char **paths, size_t n)
{
    rank_file *f = gt_xcalloc(n + 1, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        gt_reader *r = NULL;
        char err[512];
        f[i].path = paths[i];
        f[i].rank = f[i].owner = -1;
        if (gt_reader_open(paths[i], &r, err, sizeof err) != GT_OPEN_OK)
            continue;
        const gt_file_header *h = gt_reader_header(r);
        f[i].readable = 1;
        f[i].pid = h->pid;
        f[i].ppid = h->ppid;
        f[i].rank = h->rank >= 0 ? h->rank : -1;
        f[i].forked = (h->flags & GT_HDR_FORKED_CHILD) != 0;
        snprintf(f[i].host, sizeof f[i].host, "%.*s", (int)sizeof h->host, h->host);
        gt_reader_close(r);
    }
    return f;
}

static const rank_file *parent_of(const rank_file *f, size_t n, const rank_file *child)
{
    for (size_t i = 0; i < n; i++)
        if (&f[i] != child && f[i].readable && f[i].pid == child->ppid && child->ppid > 0 &&
            !strcmp(f[i].host, child->host))
            return &f[i];
    return NULL;
}

/* A file's rank, or its nearest ancestor's among the inputs. */
static void assign_owners(rank_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const rank_file *p = &f[i];
        for (int hop = 0; p && p->rank < 0 && hop < MAX_PARENT_HOPS; hop++)
            p = parent_of(f, n, p);
        f[i].owner = p && f[i].readable ? p->rank : -1;
    }
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

/* The distinct ranks of the inputs, sorted. */
static int32_t *ranks_present(const rank_file *f, size_t n, size_t *out_n)
{
    int32_t *r = gt_xcalloc(n + 1, sizeof *r);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (f[i].rank >= 0)
            r[m++] = f[i].rank;
    qsort(r, m, sizeof *r, cmp_i32);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
        if (!u || r[u - 1] != r[i])
            r[u++] = r[i];
    *out_n = u;
    return r;
}

static size_t lower_bound(const int32_t *v, size_t n, int32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* "0-3,8,10-11" of the marked ranks of v (keep[i] == want), shortened past LIST_TEXT_MAX. */
static void list_text(const int32_t *v, const uint8_t *keep, size_t n, int want, char *buf,
                      size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] != want)
            continue;
        size_t j = i;
        while (j + 1 < n && keep[j + 1] == want && v[j + 1] == v[j] + 1)
            j++;
        char item[32];
        if (j > i)
            snprintf(item, sizeof item, "%s%" PRId32 "-%" PRId32, used ? "," : "", v[i], v[j]);
        else
            snprintf(item, sizeof item, "%s%" PRId32, used ? "," : "", v[i]);
        if (used + strlen(item) + 4 >= cap || used > LIST_TEXT_MAX) {
            snprintf(buf + used, cap - used, ",...");
            return;
        }
        used += (size_t)snprintf(buf + used, cap - used, "%s", item);
        i = j;
    }
    if (!used)
        snprintf(buf, cap, "none");
}

/* Every rank of the ranges must be in the inputs: the first one missing is named. */
static int mark_ranges(const rank_spec *spec, const int32_t *v, size_t n, uint8_t *keep, char *err,
                       size_t errlen)
{
    for (size_t k = 0; k < spec->n; k++) {
        const rank_range *r = &spec->ranges[k];
        size_t at = lower_bound(v, n, r->lo);
        int64_t want = r->lo;
        for (; at < n && v[at] <= r->hi && v[at] == want; at++, want++)
            keep[at] = 1;
        if (want <= r->hi) {
            char have[LIST_TEXT_MAX + 40];
            uint8_t *all = gt_xcalloc(n + 1, 1);
            list_text(v, all, n, 0, have, sizeof have);
            free(all);
            snprintf(err, errlen, "--ranks: rank %" PRId64 " is not in these traces (they hold %s)",
                     want, have);
            return -1;
        }
    }
    return 0;
}

/* The rank with the largest (sign 1) or smallest (sign -1) figure among procs with one. */
static int32_t rank_by(const gt_run *run, int sign, double (*figure)(const gt_proc *))
{
    int32_t best = -1;
    double best_v = 0;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        double v = figure(p);
        if (p->open_status != GT_OPEN_OK || p->hdr.rank < 0 || v < 0)
            continue;
        if (best < 0 || sign * v > sign * best_v || (v == best_v && p->hdr.rank < best)) {
            best = p->hdr.rank;
            best_v = v;
        }
    }
    return best;
}

static double wait_figure(const gt_proc *p)
{
    return p->coll_matched ? p->coll_wait_ms_per_step : -1;
}

static double step_figure(const gt_proc *p)
{
    return p->n_steps >= 2 && p->step_ms_median > 0 ? p->step_ms_median : -1;
}

/* slowest/fastest from the model of every rank's main process (forked children carry no
 * collective of their own). Fills slowest, fastest and how they were told apart. */
static int name_extremes(const rank_file *f, size_t n, int32_t *slowest, int32_t *fastest,
                         char *how, size_t howlen, char *err, size_t errlen)
{
    const char **paths = gt_xcalloc(n + 1, sizeof *paths);
    int m = 0;
    for (size_t i = 0; i < n; i++)
        if (f[i].readable && f[i].rank >= 0 && !f[i].forked)
            paths[m++] = f[i].path;
    gt_run run;
    memset(&run, 0, sizeof run);
    int loaded = m ? gt_run_load(&run, paths, m, 0) : -1;
    free(paths);
    int rc = 0;
    if (loaded == 0 && run.straggler.found) {
        *slowest = run.straggler.rank;
        *fastest = rank_by(&run, 1, wait_figure);
        snprintf(how, howlen,
                 "slowest: the straggler, most late at the collectives; fastest: the rank that "
                 "waits longest for the others there");
    } else if (loaded == 0 && rank_by(&run, 1, step_figure) >= 0) {
        *slowest = rank_by(&run, 1, step_figure);
        *fastest = rank_by(&run, -1, step_figure);
        snprintf(how, howlen,
                 "no collectives matched across the ranks: slowest and fastest by their median "
                 "steady step");
    } else {
        rc = fail(err, errlen,
                  "--ranks: cannot tell the slowest or fastest rank: no collective matched across "
                  "the ranks and no steps found (name the ranks by number)");
    }
    if (loaded == 0)
        gt_run_free(&run);
    return rc;
}

static void keep_rank(const int32_t *v, size_t n, uint8_t *keep, int32_t rank)
{
    size_t at = lower_bound(v, n, rank);
    if (at < n && v[at] == rank)
        keep[at] = 1;
}

/* Which ranks LIST keeps (keep[i] for v[i]). */
static int choose(const rank_spec *spec, const rank_file *f, size_t n_files, const int32_t *v,
                  size_t n, uint8_t *keep, gt_rank_choice *out, char *err, size_t errlen)
{
    if (mark_ranges(spec, v, n, keep, err, errlen) != 0)
        return -1;
    if (!spec->slowest && !spec->fastest)
        return 0;
    int32_t slowest = -1, fastest = -1;
    char how[200];
    if (name_extremes(f, n_files, &slowest, &fastest, how, sizeof how, err, errlen) != 0)
        return -1;
    char named[64] = "";
    if (spec->slowest) {
        keep_rank(v, n, keep, slowest);
        snprintf(named, sizeof named, "slowest %" PRId32, slowest);
    }
    if (spec->fastest) {
        keep_rank(v, n, keep, fastest);
        size_t used = strlen(named);
        snprintf(named + used, sizeof named - used, "%sfastest %" PRId32, used ? ", " : "",
                 fastest);
    }
    snprintf(out->named, sizeof out->named, "%s (%s)", named, how);
    return 0;
}

static void fill_choice(const rank_file *f, size_t n_files, const int32_t *v, size_t n,
                        const uint8_t *keep, gt_rank_choice *out)
{
    out->paths = gt_xcalloc(n_files + 1, sizeof *out->paths);
    for (size_t i = 0; i < n_files; i++) {
        size_t at = f[i].owner >= 0 ? lower_bound(v, n, f[i].owner) : n;
        int kept = !f[i].readable || (at < n && keep[at]); /* unreadable: the conversion says */
        if (kept)
            out->paths[out->n_paths++] = gt_xstrdup(f[i].path);
        else if (f[i].owner < 0)
            out->without_rank++;
        else
            out->files_left_out++;
    }
    list_text(v, keep, n, 1, out->kept, sizeof out->kept);
    list_text(v, keep, n, 0, out->left_out, sizeof out->left_out);
    for (size_t i = 0; i < n; i++)
        out->ranks_kept += keep[i];
    out->ranks_left_out = n - out->ranks_kept;
}

int gt_convert_choose_ranks(const char *list, const char *const *inputs, int n_inputs,
                            gt_rank_choice *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    rank_spec spec;
    if (parse_spec(list, &spec, err, errlen) != 0) {
        free(spec.ranges);
        return -1;
    }
    size_t n_files = 0;
    char **files = gt_expand_paths(inputs, n_inputs, &n_files, "convert");
    rank_file *f = read_headers(files, n_files);
    assign_owners(f, n_files);
    size_t n = 0;
    int32_t *v = ranks_present(f, n_files, &n);
    uint8_t *keep = gt_xcalloc(n + 1, 1);
    int rc = 0;
    if (!n)
        rc = fail(err, errlen,
                  "--ranks: no input has a rank (RANK or SLURM_PROCID was not set: one process "
                  "and its children); convert without --ranks");
    else if (choose(&spec, f, n_files, v, n, keep, out, err, errlen) != 0)
        rc = -1;
    else
        fill_choice(f, n_files, v, n, keep, out);
    free(keep);
    free(v);
    free(f);
    free(spec.ranges);
    gt_paths_free(files, n_files);
    if (rc != 0)
        gt_rank_choice_free(out);
    return rc;
}

void gt_rank_choice_free(gt_rank_choice *c)
{
    for (size_t i = 0; i < c->n_paths; i++)
        free(c->paths[i]);
    free(c->paths);
    memset(c, 0, sizeof *c);
}
