/* util.h — the analyzer's small shared helpers, each in one place: allocation with one
 * out-of-memory policy, growable arrays, hashing and a u64 map, record-body copies and the
 * expansion of trace folders. (Not for the injected library: it never allocates like this.) */
#ifndef GT_ANALYZER_UTIL_H
#define GT_ANALYZER_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gt_reader.h"

/* Out of memory is not something the offline analyzer can work around: one message and exit
 * status 2 ("could not produce the output", as for an unwritable output file). */
void *gt_xmalloc(size_t n);
void *gt_xcalloc(size_t n, size_t size);
void *gt_xrealloc(void *p, size_t n);
char *gt_xstrdup(const char *s); /* NULL is taken as "" */

/* Grow *arr (elements of es bytes, *cap of them) so that index n fits; new elements are zero. */
void gt_grow(void **arr, size_t *cap, size_t n, size_t es);
/* Of n records of stride bytes sorted by the uint64_t at offset, the first whose value is past t
 * (n when none): the one binary search over sorted records. */
size_t gt_first_past(const void *v, size_t n, size_t stride, size_t offset, uint64_t t);

/* A count from the environment (a limit the tests lower): the variable's value when it is a number
 * of at least min, else dflt. */
size_t gt_env_count(const char *name, size_t min, size_t dflt);

/* A 64-bit mixer (splitmix64's finalizer): hash keys that are counters or pointers. */
static inline uint64_t gt_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
/* A slot in a direct-mapped table of 2^bits entries for a correlation id: ids are counters, so
 * folding keeps neighbours in different slots. */
static inline size_t gt_hash_slot(uint64_t key, unsigned bits)
{
    return (size_t)((key ^ (key >> bits) ^ (key >> 2 * bits) ^ (key >> 3 * bits)) &
                    ((1ull << bits) - 1));
}

/* Open-addressing map from u64 to u32 (UINT32_MAX = absent). Zero-initialized is empty. */
typedef struct gt_u64map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;
} gt_u64map;
uint32_t gt_map_get(const gt_u64map *m, uint64_t key);
void gt_map_put(gt_u64map *m, uint64_t key, uint32_t val);
void gt_map_free(gt_u64map *m);

/* Copy a record body into a struct: short (older) bodies leave the later fields zero. */
static inline void gt_body_copy(void *dst, size_t dst_size, const gt_record *r)
{
    size_t n = r->body_size < dst_size ? r->body_size : dst_size;
    memcpy(dst, r->body, n);
    if (n < dst_size)
        memset((char *)dst + n, 0, dst_size - n);
}

/* Folders become their *.gtrace files (sorted; unless who is NULL a message, "gputrace WHO: ...",
 * names a folder without any), anything else is kept as given. Returns the list (free with
 * gt_paths_free) and its length in *out_n. */
char **gt_expand_paths(const char *const *paths, int n, size_t *out_n, const char *who);
/* The same for the files whose name ends with suffix (".json": per-rank summaries). */
char **gt_expand_paths_suffix(const char *const *paths, int n, size_t *out_n, const char *who,
                              const char *suffix);
void gt_paths_free(char **list, size_t n);

/* printf into one of 8 rotating static buffers of 128 bytes: for short texts built inline
 * (table cells, report lines); the ninth call reuses the first buffer. */
const char *gt_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
