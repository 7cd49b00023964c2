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
#include "symbolize.h"

#define HEADER "# gputrace symbols 1"

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

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    size_t ncap = *cap ? *cap * 2 : 64;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(p, ncap * elem);
    if (!q) {
        fprintf(stderr, "gputrace: out of memory reading the symbol archive\n");
        exit(2);
    }
    *cap = ncap;
    return q;
}

static char *dup_or_null(const char *s)
{
    if (!s || !*s)
        return NULL;
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "gputrace: out of memory reading the symbol archive\n");
        exit(2);
    }
    return d;
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
        a->mods = grow(a->mods, &a->capmods, a->nmods + 1, sizeof *a->mods);
        a->mods[a->nmods++] = (arch_module){strdup(f[1]), strdup(f[2])};
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
    a->ents = grow(a->ents, &a->capents, a->nents + 1, sizeof *a->ents);
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
    size_t hlen = strlen(HEADER);
    if (getline(&line, &cap, f) < 0 || strncmp(line, HEADER, hlen) != 0 ||
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

/* ---------------------------------------------------------------- writing */

typedef struct out_entry {
    char *build_id, *path, *file, *function;
    uint64_t offset;
    int line;
} out_entry;

typedef struct out_list {
    out_entry *v;
    size_t n, cap;
} out_list;

/* Tabs and line ends would break the line format: names never hold them, but a path may. */
static char *clean_copy(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d) {
        fprintf(stderr, "gputrace: out of memory writing the symbol archive\n");
        exit(2);
    }
    for (char *p = d; *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    return d;
}

static void collect_frame(void *ctx, const gt_frame *f)
{
    out_list *l = ctx;
    if (!f->module || (!f->function && !f->file))
        return; /* nothing known here either: nothing to keep */
    l->v = grow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] =
        (out_entry){clean_copy(f->build_id), clean_copy(f->module), clean_copy(f->file),
                    clean_copy(f->function), f->module_offset,      f->file ? f->line : 0};
}

static int out_cmp(const void *x, const void *y)
{
    const out_entry *a = x, *b = y;
    int c = strcmp(a->build_id, b->build_id);
    if (!c)
        c = strcmp(a->path, b->path);
    if (!c)
        c = a->offset < b->offset ? -1 : a->offset > b->offset;
    return c;
}

static bool is_trace_name(const char *name)
{
    size_t n = strlen(name);
    return n > 7 && strcmp(name + n - 7, ".gtrace") == 0;
}

/* Every stack of every .gtrace in dir, symbolized here, into l. Returns the files read. */
static int collect_dir(const char *dir, out_list *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_trace_name(e->d_name))
            continue;
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        gt_reader *r;
        if (gt_reader_open(path, &r, err, sizeof err) != 0)
            continue; /* convert and report say what is wrong with it */
        gt_symtab *st = gt_symtab_new();
        gt_symtab_use_archive(st, false); /* names from the modules themselves */
        if (gt_symtab_load(st, r) > 0)
            gt_symtab_each_native_frame(st, collect_frame, l);
        gt_symtab_free(st);
        gt_reader_close(r);
        files++;
    }
    closedir(d);
    return files;
}

static void free_list(out_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].build_id);
        free(l->v[i].path);
        free(l->v[i].file);
        free(l->v[i].function);
    }
    free(l->v);
}

static bool write_list(FILE *f, out_list *l, size_t *written)
{
    qsort(l->v, l->n, sizeof *l->v, out_cmp);
    fprintf(f,
            "%s\n# The names of the native frames captured in this run, read from the modules on "
            "the machine that recorded it.\n",
            HEADER);
    const out_entry *prev = NULL;
    *written = 0;
    for (size_t i = 0; i < l->n; i++) {
        const out_entry *e = &l->v[i];
        bool same_module =
            prev && !strcmp(prev->build_id, e->build_id) && !strcmp(prev->path, e->path);
        if (same_module && prev->offset == e->offset)
            continue; /* the same frame seen by another process */
        if (!same_module)
            fprintf(f, "M\t%s\t%s\n", e->build_id, e->path);
        fprintf(f, "F\t%llx\t%d\t%s\t%s\n", (unsigned long long)e->offset, e->line, e->file,
                e->function);
        (*written)++;
        prev = e;
    }
    return fflush(f) == 0 && !ferror(f);
}

int gt_symarchive_write_dir(const char *dir, char *err, size_t errlen)
{
    out_list l = {0};
    if (collect_dir(dir, &l) < 0) {
        snprintf(err, errlen, "cannot read the folder '%s': %s", dir, strerror(errno));
        return -1;
    }
    char final[4096], tmp[4200];
    snprintf(final, sizeof final, "%s/%s", dir, GT_SYMARCHIVE_NAME);
    if (l.n == 0) {
        unlink(final); /* an older run's archive (record -f) would describe other stacks */
        free_list(&l);
        return 0;
    }
    snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, GT_SYMARCHIVE_NAME, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        free_list(&l);
        return -1;
    }
    size_t written = 0;
    bool ok = write_list(f, &l, &written);
    ok = (fclose(f) == 0) && ok;
    free_list(&l);
    if (!ok || rename(tmp, final) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s", final, strerror(errno ? errno : EIO));
        unlink(tmp);
        return -1;
    }
    return (int)written;
}
