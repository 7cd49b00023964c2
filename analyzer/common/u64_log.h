/* u64_log.h — a list of numbers that is only appended to and read in full, in order (the times of
 * a GPU-sampled trace's calls that give the GPU work: one per launch, all along the run). It
 * grows with the run, so memory holds one chunk of it; the full chunks go to the analysis's
 * temporary file (spill.h), or stay in memory where none can be written. */
#ifndef GT_ANALYZER_U64_LOG_H
#define GT_ANALYZER_U64_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "spill.h"

#define GT_U64_LOG_CHUNK 65536 /* numbers a chunk (512 KB) */

typedef struct gt_u64_log {
    uint64_t *tail;   /* the chunk being filled (GT_U64_LOG_CHUNK), NULL before the first */
    size_t n_tail;    /* numbers in it */
    uint64_t **kept;  /* full chunks that could not be spilled */
    size_t n_kept;    /* of them */
    size_t n_spilled; /* full chunks in the file, in order, before the kept ones */
    size_t n;         /* numbers in all */
    gt_spill spill;
} gt_u64_log;

void gt_u64_log_add(gt_u64_log *l, uint64_t v);
/* Every number in the order added, each handed to fn(ctx, v). */
void gt_u64_log_each(gt_u64_log *l, void (*fn)(void *ctx, uint64_t v), void *ctx);
void gt_u64_log_free(gt_u64_log *l);
size_t gt_u64_log_bytes(const gt_u64_log *l); /* in memory */

#endif
