/* id_pages.c — small values by id, in pages, the least recently used on disk (id_pages.h). */
#include "id_pages.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define PAGE_IDS (1u << 16)

static size_t page_bytes(const md_pagebits *b)
{
    return (size_t)PAGE_IDS * b->width / 8;
}

static void table_fit(md_pagebits *b, size_t page)
{
    if (page < b->n_pages)
        return;
    size_t n = b->n_pages ? b->n_pages : 16;
    while (n <= page)
        n *= 2;
    b->pages = gt_xrealloc(b->pages, n * sizeof *b->pages);
    b->used = gt_xrealloc(b->used, n * sizeof *b->used);
    b->spilled = gt_xrealloc(b->spilled, n * sizeof *b->spilled);
    size_t more = n - b->n_pages;
    memset(b->pages + b->n_pages, 0, more * sizeof *b->pages);
    memset(b->used + b->n_pages, 0, more * sizeof *b->used);
    memset(b->spilled + b->n_pages, 0, more * sizeof *b->spilled);
    b->n_pages = n;
}

/* The page in memory used longest ago goes to the file. A write that fails (no file, a full
 * disk) keeps it, and every page from then on: memory is then what it was before spilling. */
static void evict_one(md_pagebits *b)
{
    size_t victim = SIZE_MAX;
    for (size_t p = 0; p < b->n_pages; p++)
        if (b->pages[p] && (victim == SIZE_MAX || b->used[p] < b->used[victim]))
            victim = p;
    if (victim == SIZE_MAX)
        return;
    size_t bytes = page_bytes(b);
    if (gt_spill_write(&b->spill, (uint64_t)victim * bytes, b->pages[victim], bytes) != 0) {
        b->pages_max = SIZE_MAX;
        return;
    }
    free(b->pages[victim]);
    b->pages[victim] = NULL;
    b->spilled[victim] = 1;
    b->resident--;
    b->spilled_pages++;
}

/* Page `page` in memory (read back if spilled, made if create), or NULL: never written. */
static uint64_t *page_at(md_pagebits *b, size_t page, int create)
{
    if (page < b->n_pages && b->pages[page]) {
        b->used[page] = ++b->clock;
        return b->pages[page];
    }
    if (!create && (page >= b->n_pages || !b->spilled[page]))
        return NULL;
    table_fit(b, page);
    if (!b->pages_max)
        b->pages_max = gt_spill_pages_max(MD_PAGES_BYTES_MAX / page_bytes(b));
    if (b->resident >= b->pages_max)
        evict_one(b);
    size_t bytes = page_bytes(b);
    uint64_t *pg = gt_xcalloc(bytes / sizeof(uint64_t), sizeof(uint64_t));
    if (b->spilled[page]) {
        gt_spill_read(&b->spill, (uint64_t)page * bytes, pg, bytes);
        b->spilled[page] = 0;
        b->read_back++;
    }
    b->pages[page] = pg;
    b->resident++;
    b->used[page] = ++b->clock;
    return pg;
}

int md_bits_set(md_pagebits *b, uint64_t i, unsigned v)
{
    if (i >> 32)
        return -1;
    uint64_t *pg = page_at(b, (size_t)(i >> 16), 1);
    uint64_t bit = (i & (PAGE_IDS - 1)) * b->width, mask = (1ull << b->width) - 1;
    uint64_t *word = &pg[bit / 64];
    *word = (*word & ~(mask << bit % 64)) | ((uint64_t)v & mask) << bit % 64;
    return 0;
}

unsigned md_bits_get(md_pagebits *b, uint64_t i)
{
    uint64_t *pg = i >> 32 ? NULL : page_at(b, (size_t)(i >> 16), 0);
    if (!pg)
        return 0;
    uint64_t bit = (i & (PAGE_IDS - 1)) * b->width;
    return (unsigned)(pg[bit / 64] >> bit % 64 & ((1ull << b->width) - 1));
}

size_t md_bits_bytes(const md_pagebits *b)
{
    size_t table = b->n_pages * (sizeof *b->pages + sizeof *b->used + sizeof *b->spilled);
    return table + (b->width ? b->resident * page_bytes(b) : 0);
}

void md_bits_free(md_pagebits *b)
{
    for (size_t i = 0; i < b->n_pages; i++)
        free(b->pages[i]);
    free(b->pages);
    free(b->used);
    free(b->spilled);
    gt_spill_close(&b->spill);
    unsigned width = b->width;
    memset(b, 0, sizeof *b);
    b->width = width; /* what the structure holds does not change when it is emptied */
}
