/* symarchive_write.c — writing a run's symbol archive (symarchive_write.h): every stack of the
 * folder's traces symbolized on this machine, the named frames written as symarchive.h's format. */
#include "symarchive_write.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_reader.h"
#include "outfile.h"
#include "symarchive.h"
#include "symbolize.h"
#include "util.h"

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
    char *d = gt_xstrdup(s);
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
    gt_grow((void **)&l->v, &l->cap, l->n, sizeof *l->v);
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
            GT_SYMARCHIVE_HEADER);
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
    char final[4096];
    snprintf(final, sizeof final, "%s/%s", dir, GT_SYMARCHIVE_NAME);
    if (l.n == 0) {
        unlink(final); /* an older run's archive (record -f) would describe other stacks */
        free_list(&l);
        return 0;
    }
    /* Through outfile.h: a fresh temporary file (never a planted link), renamed only over a
     * regular file, and nothing under the name when a write fails. */
    gt_outfile out;
    if (gt_outfile_open(&out, final, "archive") != 0) {
        snprintf(err, errlen, "cannot write '%s'", final);
        free_list(&l);
        return -1;
    }
    size_t written = 0;
    bool ok = write_list(out.f, &l, &written);
    free_list(&l);
    if (!ok) {
        gt_outfile_discard(&out);
        snprintf(err, errlen, "cannot write '%s'", final);
        return -1;
    }
    if (gt_outfile_commit(&out, "archive") != 0) {
        snprintf(err, errlen, "cannot write '%s'", final);
        return -1;
    }
    return (int)written;
}
