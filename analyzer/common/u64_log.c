/* u64_log.c — numbers appended, then read in order, mostly from disk (u64_log.h). */
#include "u64_log.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define CHUNK_BYTES (GT_U64_LOG_CHUNK * sizeof(uint64_t))

/* A full tail goes to the file; where it cannot, it is kept (after the spilled ones: once the
 * file fails it is not tried again, so the order holds). */
static void tail_full(gt_u64_log *l)
{
    if (!l->n_kept && gt_spill_write(&l->spill, (uint64_t)l->n_spilled * CHUNK_BYTES, l->tail,
                                     CHUNK_BYTES) == 0) {
        l->n_spilled++;
    } else {
        l->kept = gt_xrealloc(l->kept, (l->n_kept + 1) * sizeof *l->kept);
        l->kept[l->n_kept++] = l->tail;
        l->tail = NULL;
    }
    l->n_tail = 0;
}

void gt_u64_log_add(gt_u64_log *l, uint64_t v)
{
    if (!l->tail)
        l->tail = gt_xrealloc(NULL, CHUNK_BYTES);
    l->tail[l->n_tail++] = v;
    l->n++;
    if (l->n_tail == GT_U64_LOG_CHUNK)
        tail_full(l);
}

void gt_u64_log_each(gt_u64_log *l, void (*fn)(void *ctx, uint64_t v), void *ctx)
{
    if (l->n_spilled) {
        uint64_t *buf = gt_xrealloc(NULL, CHUNK_BYTES);
        for (size_t c = 0; c < l->n_spilled; c++) {
            size_t got = gt_spill_read(&l->spill, (uint64_t)c * CHUNK_BYTES, buf, CHUNK_BYTES);
            for (size_t i = 0; i < got / sizeof *buf; i++)
                fn(ctx, buf[i]);
        }
        free(buf);
    }
    for (size_t c = 0; c < l->n_kept; c++)
        for (size_t i = 0; i < GT_U64_LOG_CHUNK; i++)
            fn(ctx, l->kept[c][i]);
    for (size_t i = 0; i < l->n_tail; i++)
        fn(ctx, l->tail[i]);
}

size_t gt_u64_log_bytes(const gt_u64_log *l)
{
    return (l->tail ? CHUNK_BYTES : 0) + l->n_kept * CHUNK_BYTES;
}

void gt_u64_log_free(gt_u64_log *l)
{
    for (size_t c = 0; c < l->n_kept; c++)
        free(l->kept[c]);
    free(l->kept);
    free(l->tail);
    gt_spill_close(&l->spill);
    memset(l, 0, sizeof *l);
}
