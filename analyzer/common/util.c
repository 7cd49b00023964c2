/* util.c — the analyzer's shared helpers (util.h). */
#include "util.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void out_of_memory(void)
{
    fprintf(stderr, "gputrace: out of memory\n");
    exit(2);
}

void *gt_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *gt_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *gt_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory();
    return q;
}

char *gt_xstrdup(const char *s)
{
    size_t n = strlen(s ? s : "");
    char *d = gt_xmalloc(n + 1);
    memcpy(d, s ? s : "", n + 1);
    return d;
}

void gt_grow(void **arr, size_t *cap, size_t n, size_t es)
{
    if (n < *cap)
        return;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc <= n)
        nc *= 2;
    *arr = gt_xrealloc(*arr, nc * es);
    memset((char *)*arr + *cap * es, 0, (nc - *cap) * es);
    *cap = nc;
}

size_t gt_first_past(const void *v, size_t n, size_t stride, size_t offset, uint64_t t)
{
    const unsigned char *base = v;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t x;
        memcpy(&x, base + mid * stride + offset, sizeof x);
        if (x <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint32_t gt_map_get(const gt_u64map *m, uint64_t key)
{
    if (!m->cap)
        return UINT32_MAX;
    size_t i = gt_mix64(key) & (m->cap - 1);
    while (m->vals[i] != UINT32_MAX) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return UINT32_MAX;
}

static void map_rehash(gt_u64map *m, size_t ncap)
{
    gt_u64map nm = {gt_xmalloc(ncap * sizeof(uint64_t)), gt_xmalloc(ncap * sizeof(uint32_t)), ncap,
                    0};
    memset(nm.vals, 0xff, ncap * sizeof(uint32_t));
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i] != UINT32_MAX)
            gt_map_put(&nm, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = nm;
}

void gt_map_put(gt_u64map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap)
        map_rehash(m, m->cap ? m->cap * 2 : 64);
    size_t i = gt_mix64(key) & (m->cap - 1);
    while (m->vals[i] != UINT32_MAX) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
}

void gt_map_free(gt_u64map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_path(char ***list, size_t *cnt, size_t *cap, char *p)
{
    gt_grow((void **)list, cap, *cnt, sizeof **list);
    (*list)[(*cnt)++] = p;
}

char **gt_expand_paths(const char *const *paths, int n, size_t *out_n, const char *who)
{
    return gt_expand_paths_suffix(paths, n, out_n, who, ".gtrace");
}

char **gt_expand_paths_suffix(const char *const *paths, int n, size_t *out_n, const char *who,
                              const char *suffix)
{
    size_t slen = strlen(suffix);
    char **list = NULL;
    size_t cnt = 0, cap = 0;
    for (int i = 0; i < n; i++) {
        struct stat sb;
        DIR *d = stat(paths[i], &sb) == 0 && S_ISDIR(sb.st_mode) ? opendir(paths[i]) : NULL;
        if (!d) { /* a file, or a folder we cannot list: opening it says why */
            add_path(&list, &cnt, &cap, gt_xstrdup(paths[i]));
            continue;
        }
        size_t first = cnt;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (len <= slen || strcmp(e->d_name + len - slen, suffix))
                continue;
            size_t plen = strlen(paths[i]) + len + 2;
            char *full = gt_xmalloc(plen);
            snprintf(full, plen, "%s/%s", paths[i], e->d_name);
            add_path(&list, &cnt, &cap, full);
        }
        closedir(d);
        if (cnt > first) /* (never qsort an empty, possibly NULL, list: UBSan) */
            qsort(list + first, cnt - first, sizeof *list, cmp_str);
        else if (who)
            fprintf(stderr, "gputrace%s%s: %s: no %s files in this folder\n", *who ? " " : "", who,
                    paths[i], suffix);
    }
    *out_n = cnt;
    return list;
}

void gt_paths_free(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

const char *gt_fmt(const char *fmt, ...)
{
    static char bufs[8][128];
    static int slot;
    char *b = bufs[slot++ & 7];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    return b;
}

size_t gt_env_count(const char *name, size_t min, size_t dflt)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return dflt;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    return *end || v < min ? dflt : (size_t)v;
}
