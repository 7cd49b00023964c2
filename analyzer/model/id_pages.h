/* id_pages.h — a small value per id (1 to 32 bits), for ids that are dense counters: calls' and
 * GPU ops' correlation ids (32-bit). Pages of 64 K ids are made when first written, so memory
 * follows the ids' range (2 bits per GPU op for how it was linked, 1 per call for whether pass 1
 * read it, 32 per call for the cuDNN or GEMM aggregate a library call joins). They grow with a
 * run, so at most pages_max of them stay in memory: the one least recently used goes to a
 * temporary file (spill.h) and comes back when asked for. Lookups come nearly in id order
 * (records are read in time order), so few pages are read back. Where no temporary file can be
 * written, every page stays in memory: never lost. */
#ifndef GPUTRACE_ID_PAGES_H
#define GPUTRACE_ID_PAGES_H

#include <stddef.h>
#include <stdint.h>

#include "spill.h"

typedef struct md_pagebits {
    uint64_t **pages; /* by page: in memory, or NULL (none, or spilled) */
    uint64_t *used;   /* by page: when last used (a clock) */
    uint8_t *spilled; /* by page: its bytes are in the spill file (at page * page size) */
    size_t n_pages;   /* of the page table */
    unsigned width;   /* bits per id: 1, 2, 4, 8, 16 or 32; set before the first use */
    size_t resident;  /* pages in memory */
    size_t pages_max; /* 0: from MD_PAGES_BYTES_MAX (gt_spill_pages_max) on first use */
    uint64_t clock;
    gt_spill spill;
    uint64_t spilled_pages, read_back; /* counts, for GPUTRACE_MEMORY_STATS */
} md_pagebits;

/* The memory a structure's pages may hold before the least recently used go to the file. */
#define MD_PAGES_BYTES_MAX (8u << 20)

/* Set id i's value (its low width bits): 0, or -1 for an id past 32 bits (not kept). */
int md_bits_set(md_pagebits *b, uint64_t i, unsigned v);
/* Its value, 0 when never set (a spilled page comes back). */
unsigned md_bits_get(md_pagebits *b, uint64_t i);
size_t md_bits_bytes(const md_pagebits *b); /* in memory, for GPUTRACE_MEMORY_STATS */
void md_bits_free(md_pagebits *b);

#endif
