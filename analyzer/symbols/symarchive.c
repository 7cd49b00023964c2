/* symarchive.c — a run's symbol archive: written where the run was recorded, read wherever the run
 * is analyzed. See symarchive.h for the format and why it exists. */
#include "symarchive.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_reader.h"
#include "util.h"

typedef struct arch_module {
    char *build_id; /* hex, "" when none */
    char *path;
} arch_module;

typedef struct arch_entry {
    int module;
    int line;
    uint64_t offset;
    char *file;     /* NULL when unknown */
    char *function; /* NULL when unknown */
} arch_entry;

struct gt_symarchive {
    arch_module *mods;
    size_t nmods, capmods;
    arch_entry *ents;
    size_t nents, capents;
};

static char *dup_or_null(const char *s)
{
    return s && *s ? gt_xstrdup(s) : NULL;
}

/* ---------------------------------------------------------------- reading */

/* Splits line at tabs into at most max fields (the last keeps any further tabs). */
static int split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    fields[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = '\0';
            fields[n++] = p + 1;
        }
    return n;
}

static void parse_line(gt_symarchive *a, char *line)
{
    size_t len = strlen(line);
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        line[--len] = '\0';
    char *f[5];
    int n = split_tabs(line, f, 5);
    if (n == 3 && strcmp(f[0], "M") == 0 && f[2][0]) {
        gt_grow((void **)&a->mods, &a->capmods, a->nmods, sizeof *a->mods);
        a->mods[a->nmods++] = (arch_module){gt_xstrdup(f[1]), gt_xstrdup(f[2])};
        if (!a->mods[a->nmods - 1].build_id || !a->mods[a->nmods - 1].path) {
            fprintf(stderr, "gputrace: out of memory reading the symbol archive\n");
            exit(2);
        }
        return;
    }
    if (n != 5 || strcmp(f[0], "F") != 0 || a->nmods == 0)
        return; /* unknown or damaged: skipped */
    char *end;
    errno = 0;
    unsigned long long offset = strtoull(f[1], &end, 16);
    if (errno || end == f[1] || *end)
        return;
    long ln = strtol(f[2], &end, 10);
    if (end == f[2] || *end || ln < 0 || ln > 100000000)
        return;
    if (!f[3][0] && !f[4][0])
        return;
    gt_grow((void **)&a->ents, &a->capents, a->nents, sizeof *a->ents);
    a->ents[a->nents++] = (arch_entry){(int)a->nmods - 1, (int)ln, (uint64_t)offset,
                                       dup_or_null(f[3]), dup_or_null(f[4])};
}

static int entry_cmp(const void *x, const void *y)
{
    const arch_entry *a = x, *b = y;
    if (a->module != b->module)
        return a->module < b->module ? -1 : 1;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

static gt_symarchive *load_stream(FILE *f, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    size_t hlen = strlen(GT_SYMARCHIVE_HEADER);
    if (getline(&line, &cap, f) < 0 || strncmp(line, GT_SYMARCHIVE_HEADER, hlen) != 0 ||
        (line[hlen] != '\n' && line[hlen] != '\0')) {
        static bool warned; /* once: every trace of a run folder reads the same archive */
        if (!warned)
            fprintf(stderr, "gputrace: %s is not a gputrace symbol archive of version 1: ignored\n",
                    name);
        warned = true;
        free(line);
        return NULL;
    }
    gt_symarchive *a = calloc(1, sizeof *a);
    if (!a) {
        free(line);
        return NULL;
    }
    while (getline(&line, &cap, f) >= 0)
        if (line[0] != '#')
            parse_line(a, line);
    free(line);
    if (a->nents)
        qsort(a->ents, a->nents, sizeof *a->ents, entry_cmp);
    return a;
}

gt_symarchive *gt_symarchive_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    gt_symarchive *a = load_stream(f, path);
    fclose(f);
    return a;
}

gt_symarchive *gt_symarchive_load_mem(const void *data, size_t len)
{
    if (len == 0)
        return NULL;
    FILE *f = fmemopen((void *)data, len, "r");
    if (!f)
        return NULL;
    gt_symarchive *a = load_stream(f, "(memory)");
    fclose(f);
    return a;
}

void gt_symarchive_free(gt_symarchive *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nmods; i++) {
        free(a->mods[i].build_id);
        free(a->mods[i].path);
    }
    for (size_t i = 0; i < a->nents; i++) {
        free(a->ents[i].file);
        free(a->ents[i].function);
    }
    free(a->mods);
    free(a->ents);
    free(a);
}

int gt_symarchive_module(const gt_symarchive *a, const char *build_id_hex, const char *path)
{
    if (!a)
        return -1;
    bool have_id = build_id_hex && *build_id_hex;
    for (size_t i = 0; i < a->nmods; i++) {
        const arch_module *m = &a->mods[i];
        if (have_id && m->build_id[0]) {
            if (strcmp(m->build_id, build_id_hex) == 0)
                return (int)i; /* the same file, wherever it lies now */
        } else if (path && strcmp(m->path, path) == 0) {
            return (int)i;
        }
    }
    return -1;
}

bool gt_symarchive_find(const gt_symarchive *a, int module, uint64_t offset, const char **function,
                        const char **file, int *line)
{
    if (!a || module < 0 || a->nents == 0)
        return false;
    arch_entry key = {.module = module, .offset = offset};
    const arch_entry *e = bsearch(&key, a->ents, a->nents, sizeof *a->ents, entry_cmp);
    if (!e)
        return false;
    *function = e->function;
    *file = e->file;
    *line = e->line;
    return true;
}
