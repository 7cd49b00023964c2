/* xrank_load.c — per-rank summaries read into plain arrays (xrank.h; the format:
 * docs/report-schema.md, "Per-rank summary"). One file's JSON is parsed at a time and freed once
 * its rows are copied: the analysis holds the summaries' data, not 1,024 JSON trees. A file that
 * is not a summary, or one whose rows are not what the schema says, is named and skipped whole:
 * half a rank would match wrongly. */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"
#include "xrank.h"

#define SUMMARY_SCHEMA "gputrace-summary"
#define SUMMARY_VERSION 1 /* the newest schema_version this reader knows */
#define HEAD_BYTES 512

int gt_xrank_file_is_summary(const char *path)
{
    char head[HEAD_BYTES + 1];
    struct stat sb; /* never open a FIFO or a device to look: it may wait or consume */
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, HEAD_BYTES, f);
    fclose(f);
    head[n] = 0;
    size_t i = strspn(head, " \t\r\n");
    return head[i] == '{' && strstr(head, "\"" SUMMARY_SCHEMA "\"") != NULL;
}

int gt_xrank_path_is_summary(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return strpbrk(path, "*?[") != NULL; /* a pattern the shell left: summaries */
    if (!S_ISDIR(sb.st_mode))
        return gt_xrank_file_is_summary(path);
    size_t n_traces, n_json;
    char **traces = gt_expand_paths(&path, 1, &n_traces, NULL);
    char **json = gt_expand_paths_suffix(&path, 1, &n_json, NULL, ".json");
    int any = 0;
    for (size_t i = 0; i < n_json && !any; i++)
        any = gt_xrank_file_is_summary(json[i]);
    gt_paths_free(traces, n_traces);
    gt_paths_free(json, n_json);
    return any && n_traces == 0;
}

typedef struct load_err {
    char what[160];
} load_err;

static int fail(load_err *e, const char *what)
{
    snprintf(e->what, sizeof e->what, "%s", what);
    return -1;
}

/* An integer at row[i] >= 0 into *v. */
static int row_int(const json_t *row, size_t i, int64_t min, int64_t *v)
{
    const json_t *x = json_array_get(row, i);
    if (!json_is_integer(x) || json_integer_value(x) < min)
        return -1;
    *v = json_integer_value(x);
    return 0;
}

static int read_collectives(gt_xrank_proc *p, const json_t *c, uint64_t t0, load_err *e)
{
    const json_t *rows = json_object_get(c, "rows");
    if (!json_is_array(rows))
        return fail(e, "collectives.rows is not an array");
    p->n_colls = json_array_size(rows);
    p->colls = gt_xcalloc(p->n_colls + 1, sizeof *p->colls);
    p->colls_dropped = (uint64_t)json_integer_value(json_object_get(c, "dropped"));
    for (size_t i = 0; i < p->n_colls; i++) {
        const json_t *row = json_array_get(rows, i);
        int64_t kind, step, a, d;
        if (!json_is_array(row) || row_int(row, 0, 0, &kind) || kind > GT_COLL_CPU ||
            row_int(row, 1, -1, &step) || row_int(row, 2, 0, &a) || row_int(row, 3, a, &d))
            return fail(e, gt_fmt("collective %zu: not [kind, step, arrive_ns, done_ns]", i));
        p->colls[i] = (gt_collective){t0 + (uint64_t)a, t0 + (uint64_t)d, (int)kind, 0};
        if (i && p->colls[i].done_ns < p->colls[i - 1].done_ns)
            return fail(e, gt_fmt("collective %zu ends before the one above it", i));
    }
    return 0;
}

/* The idle causes of the step rows' columns after start and end, by their key. */
static void cause_columns(const json_t *cols, int *cause, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *key = json_string_value(json_array_get(cols, i + 2));
        cause[i] = -1;
        for (int k = 0; key && k < GT_IDLE_CAUSE_COUNT; k++)
            if (!strcmp(key, gt_idle_cause_key(k)))
                cause[i] = k;
    }
}

static int read_steps(gt_xrank_proc *p, const json_t *s, uint64_t t0, load_err *e)
{
    const json_t *rows = json_object_get(s, "rows"), *steady = json_object_get(s, "steady");
    int64_t a, b;
    if (!json_is_array(rows) || !json_is_array(steady) || row_int(steady, 0, 0, &a) ||
        row_int(steady, 1, a, &b))
        return fail(e, "steps: no rows or no steady [start, end]");
    p->steady_start_ns = t0 + (uint64_t)a;
    p->steady_end_ns = t0 + (uint64_t)b;
    p->warmup = (size_t)json_integer_value(json_object_get(s, "warmup"));
    p->step_ms_median = json_number_value(json_object_get(s, "median_ms"));
    const json_t *cols = json_object_get(s, "columns");
    size_t n_causes = json_array_size(cols) > 2 ? json_array_size(cols) - 2 : 0;
    int cause[64];
    n_causes = n_causes < 64 ? n_causes : 64;
    cause_columns(cols, cause, n_causes);
    p->n_steps = json_array_size(rows);
    p->steps = gt_xcalloc(p->n_steps + 1, sizeof *p->steps);
    p->step_idle = gt_xcalloc(p->n_steps + 1, sizeof *p->step_idle);
    for (size_t i = 0; i < p->n_steps; i++) {
        const json_t *row = json_array_get(rows, i);
        if (!json_is_array(row) || row_int(row, 0, 0, &a) || row_int(row, 1, a, &b))
            return fail(e, gt_fmt("step %zu: not [start_ns, end_ns, ...]", i));
        p->steps[i] = (gt_step){t0 + (uint64_t)a, t0 + (uint64_t)b};
        if (i && p->steps[i].start_ns < p->steps[i - 1].start_ns)
            return fail(e, gt_fmt("step %zu starts before the one above it", i));
        for (size_t c = 0; c < n_causes; c++) {
            int64_t ns;
            if (cause[c] >= 0 && !row_int(row, c + 2, 0, &ns))
                p->step_idle[i][cause[c]] = (uint64_t)ns;
        }
    }
    return 0;
}

static int int_or(const json_t *o, const char *key, int dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static int read_proc(gt_xrank_proc *p, const json_t *o, load_err *e)
{
    const json_t *t0 = json_object_get(o, "t0_ns"), *steps = json_object_get(o, "steps");
    const json_t *colls = json_object_get(o, "collectives");
    if (!json_is_object(o) || !json_is_integer(t0) || json_integer_value(t0) < 0 ||
        !json_is_object(steps) || !json_is_object(colls))
        return fail(e, "a process without t0_ns, steps or collectives");
    p->host = gt_xstrdup(json_string_value(json_object_get(o, "host")));
    p->trace = gt_xstrdup(json_string_value(json_object_get(o, "trace")));
    p->pid = int_or(o, "pid", -1);
    p->rank = int_or(o, "rank", -1);
    p->local_rank = int_or(o, "local_rank", -1);
    p->world_size = int_or(o, "world_size", -1);
    p->gpu = int_or(json_object_get(o, "gpu"), "device", -1);
    p->records_lost = (uint64_t)json_integer_value(json_object_get(o, "records_lost"));
    uint64_t base = (uint64_t)json_integer_value(t0);
    if (read_steps(p, steps, base, e) || read_collectives(p, colls, base, e))
        return -1;
    return 0;
}

void gt_xrank_proc_free(gt_xrank_proc *p)
{
    free(p->idx);
    free(p->host);
    free(p->trace);
    free(p->file);
    free(p->colls);
    free(p->steps);
    free(p->step_idle);
    memset(p, 0, sizeof *p);
}

/* One summary file: its processes appended to x; -1 with e->what when it is not a summary. */
static int load_file(gt_xrank *x, const char *path, load_err *e)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return fail(e, gt_fmt("not JSON (line %d: %.60s)", je.line, je.text));
    const char *schema = json_string_value(json_object_get(root, "schema"));
    int version = int_or(root, "schema_version", 0);
    const json_t *procs = json_object_get(root, "processes");
    int rc = 0;
    if (!schema || strcmp(schema, SUMMARY_SCHEMA) || !json_is_array(procs))
        rc = fail(e, "not a gputrace summary (no schema \"" SUMMARY_SCHEMA "\" with processes)");
    else if (version < 1 || version > SUMMARY_VERSION)
        rc = fail(e, gt_fmt("summary schema_version %d; this gputrace reads 1 to %d", version,
                            SUMMARY_VERSION));
    size_t first = x->n_procs;
    for (size_t i = 0; !rc && i < json_array_size(procs); i++) {
        gt_grow((void **)&x->procs, &x->cap_procs, x->n_procs, sizeof *x->procs);
        gt_xrank_proc *p = &x->procs[x->n_procs++];
        p->file = gt_xstrdup(path);
        rc = read_proc(p, json_array_get(procs, i), e);
    }
    if (rc) /* the whole file or nothing */
        while (x->n_procs > first)
            gt_xrank_proc_free(&x->procs[--x->n_procs]);
    json_decref(root);
    return rc;
}

/* A pattern the shell did not expand (quoted, or too many files for one command line). */
static char **expand_pattern(const char *pattern, size_t *n)
{
    glob_t g;
    *n = 0;
    if (glob(pattern, 0, NULL, &g) != 0)
        return NULL;
    char **list = gt_xcalloc(g.gl_pathc + 1, sizeof *list);
    for (size_t i = 0; i < g.gl_pathc; i++)
        list[(*n)++] = gt_xstrdup(g.gl_pathv[i]);
    globfree(&g);
    return list;
}

static void load_one(gt_xrank *x, const char *path, const char *who)
{
    load_err e = {""};
    x->files++;
    if (load_file(x, path, &e) != 0) {
        fprintf(stderr, "gputrace %s: %s: %s\n", who, path, e.what);
        x->files_bad++;
    }
}

size_t gt_xrank_load(gt_xrank *x, const char *const *paths, int n, const char *who)
{
    for (int i = 0; i < n; i++) {
        struct stat sb;
        size_t m = 0;
        char **list = NULL;
        int exists = stat(paths[i], &sb) == 0, folder = exists && S_ISDIR(sb.st_mode);
        if (!exists && strpbrk(paths[i], "*?[")) {
            list = expand_pattern(paths[i], &m);
            if (!m)
                fprintf(stderr, "gputrace %s: %s: no file matches\n", who, paths[i]);
            x->files_bad += !m;
        } else {
            list = gt_expand_paths_suffix(&paths[i], 1, &m, who, ".json");
        }
        for (size_t j = 0; j < m; j++)
            if (!folder || gt_xrank_file_is_summary(list[j]))
                load_one(x, list[j], who);
        gt_paths_free(list, m);
    }
    return x->n_procs;
}
