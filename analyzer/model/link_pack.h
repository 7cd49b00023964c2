/* link_pack.h — the links pass 1 keeps for pass 2, sorted by GPU op id and packed (issue 33 item
 * 0): a cuDNN-heavy run keeps one per library kernel (ResNet-50: ~480 a training step, two
 * million per GB of trace), 16 bytes each unpacked and three times that while merging. Packed, a
 * link is its op id's distance from the previous one, its call's distance from the previous call
 * (both small: library kernels come in runs of one call) and how it was made: about 3 bytes. */
#ifndef GPUTRACE_LINK_PACK_H
#define GPUTRACE_LINK_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "spill.h"

/* A link decided in pass 1 (op_link.h): the GPU op corr was caused by call, found by how. */
typedef struct md_link {
    uint64_t corr;
    uint32_t call, how;
} md_link;

#define MD_LINK_PACK_BLOCK 256 /* links a block: one index entry each, one decoded at a time */
/* A block's bytes at most: three varints a link, of 10, 5 and 5 bytes at most. */
#define MD_LINK_PACK_BLOCK_BYTES (MD_LINK_PACK_BLOCK * 20)
/* Bytes kept in memory: past this, the whole blocks go to the spill file (spill.h), and memory
 * holds their index only (16 bytes a block of 256 links). */
#define MD_LINK_PACK_MEMORY (1u << 20)

typedef struct md_link_block {
    uint64_t first_corr, offset; /* its first op id, where its bytes start */
} md_link_block;

typedef struct md_link_pack {
    /* A block's offset counts from the pack's first byte: below mem_base its bytes are in the
     * spill file at that offset, from mem_base on in bytes (a block is wholly in one or the
     * other). */
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
    uint64_t mem_base;
    gt_spill spill;
    size_t memory_max; /* 0: MD_LINK_PACK_MEMORY (the tests set less) */
    md_link_block *blocks;
    size_t n_blocks, cap_blocks;
    size_t n; /* links */
    /* the writer: the last link appended */
    uint64_t last_corr;
    uint32_t last_call;
    /* the reader: one block decoded (lookups come mostly in op order) */
    size_t cached; /* its index + 1, 0 none */
    md_link cache[MD_LINK_PACK_BLOCK];
    unsigned n_cache;
} md_link_pack;

/* Append l, whose corr is above every corr appended before (the caller merges in order). */
void md_link_pack_append(md_link_pack *pk, const md_link *l);
/* The block that holds corr's place: the last whose first op id is at most corr (0 if none). */
size_t md_link_pack_block_of(const md_link_pack *pk, uint64_t corr);
/* Forget blocks from `block` on (their links were read: they are merged again and appended). */
void md_link_pack_truncate(md_link_pack *pk, size_t block);
/* The link of op corr, decoded into *out: 1, or 0 when the pack has none. */
int md_link_pack_find(md_link_pack *pk, uint64_t corr, md_link *out);
/* Reading a pack in order: it = {0}, then md_link_pack_next until it returns 0. */
typedef struct md_link_pack_iter {
    size_t i, at; /* the next link; its byte in the block's bytes */
    const uint8_t *block;
    uint64_t corr;
    uint32_t call;
    uint8_t buf[MD_LINK_PACK_BLOCK_BYTES]; /* a block read back from the spill file */
} md_link_pack_iter;
/* From link i on: it = {.i = i}, with i at a block's start (0: from the first). */
int md_link_pack_next(md_link_pack *pk, md_link_pack_iter *it, md_link *out);
size_t md_link_pack_bytes(const md_link_pack *pk);  /* in memory, for GPUTRACE_MEMORY_STATS */
uint64_t md_link_pack_size(const md_link_pack *pk); /* packed bytes, in memory and on disk */
void md_link_pack_free(md_link_pack *pk);

#endif
