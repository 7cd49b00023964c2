/* intern.c — the string table: each distinct string gets an id once; the writer emits
 * GT_REC_STRING for ids it has not written yet, before the ring data that may use them.
 * Cold path (callers cache ids), so a mutex and malloc are fine here. Its growable array and
 * string hash stay here rather than in analyzer/'s shared helpers: the injected library links
 * nothing of the analyzer, and these never run where malloc is not allowed. */
#include <stdlib.h>
#include <string.h>

#include "core_internal.h"

typedef struct intern_entry {
    uint32_t hash;
    uint32_t len;
    char *s;
} intern_entry;

pthread_mutex_t g_intern_lock = PTHREAD_MUTEX_INITIALIZER;
static intern_entry *g_entries; /* by id - 1 */
static uint32_t g_count, g_entries_cap;
static uint32_t *g_index; /* open addressing: id or 0 */
static uint32_t g_index_cap;

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static bool index_grow(void)
{
    uint32_t ncap = g_index_cap ? g_index_cap * 2 : 1024;
    uint32_t *ni = calloc(ncap, sizeof *ni);
    if (!ni)
        return false;
    for (uint32_t id = 1; id <= g_count; id++) {
        uint32_t j = g_entries[id - 1].hash & (ncap - 1);
        while (ni[j])
            j = (j + 1) & (ncap - 1);
        ni[j] = id;
    }
    free(g_index);
    g_index = ni;
    g_index_cap = ncap;
    return true;
}

static uint32_t intern_locked(const char *s, size_t len, uint32_t h)
{
    if (g_index_cap) {
        for (uint32_t j = h & (g_index_cap - 1); g_index[j]; j = (j + 1) & (g_index_cap - 1)) {
            intern_entry *e = &g_entries[g_index[j] - 1];
            if (e->hash == h && e->len == len && !memcmp(e->s, s, len))
                return g_index[j];
        }
    }
    if ((g_count + 1) * 2 > g_index_cap && !index_grow())
        return 0;
    if (g_count == g_entries_cap) {
        uint32_t ncap = g_entries_cap ? g_entries_cap * 2 : 512;
        intern_entry *ne = realloc(g_entries, ncap * sizeof *ne);
        if (!ne)
            return 0;
        g_entries = ne;
        g_entries_cap = ncap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, s, len);
    copy[len] = 0;
    uint32_t id = ++g_count;
    g_entries[id - 1] = (intern_entry){.hash = h, .len = (uint32_t)len, .s = copy};
    uint32_t j = h & (g_index_cap - 1);
    while (g_index[j])
        j = (j + 1) & (g_index_cap - 1);
    g_index[j] = id;
    return id;
}

uint32_t gt_intern_n(const char *s, size_t len)
{
    if (!s)
        return 0;
    if (len > GT_MAX_STRING)
        len = GT_MAX_STRING;
    uint32_t h = hash_bytes(s, len);
    pthread_mutex_lock(&g_intern_lock);
    uint32_t id = intern_locked(s, len, h);
    pthread_mutex_unlock(&g_intern_lock);
    return id;
}

uint32_t gt_intern(const char *s)
{
    return s ? gt_intern_n(s, strnlen(s, GT_MAX_STRING)) : 0;
}

uint32_t gt_intern_count_locked(void)
{
    return g_count;
}

const char *gt_intern_get_locked(uint32_t id, uint32_t *len)
{
    if (!id || id > g_count)
        return NULL;
    *len = g_entries[id - 1].len;
    return g_entries[id - 1].s;
}
