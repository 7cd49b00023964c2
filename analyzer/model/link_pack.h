/* link_pack.h — the links pass 1 keeps for pass 2, sorted by GPU op id and packed (issue 33 item
 * 0): a cuDNN-heavy run keeps one per library kernel (ResNet-50: ~480 a training step, two
 * million per GB of trace), 16 bytes each unpacked and three times that while merging. Packed, a
 * link is its op id's distance from the previous one, its call's distance from the previous call
 * (both small: library kernels come in runs of one call) and how it was made: about 3 bytes. */
#ifndef GPUTRACE_LINK_PACK_H
#define GPUTRACE_LINK_PACK_H

#include <stddef.h>
#include <stdint.h>

/* A link decided in pass 1 (op_link.h): the GPU op corr was caused by call, found by how. */
typedef struct md_link {
    uint64_t corr;
    uint32_t call, how;
} md_link;

#define MD_LINK_PACK_BLOCK 256 /* links a block: one index entry each, one decoded at a time */

typedef struct md_link_block {
    uint64_t first_corr, offset; /* its first op id, where its bytes start */
} md_link_block;

typedef struct md_link_pack {
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
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
/* The link of op corr, decoded into *out: 1, or 0 when the pack has none. */
int md_link_pack_find(md_link_pack *pk, uint64_t corr, md_link *out);
/* Reading a pack in order: it = {0}, then md_link_pack_next until it returns 0. */
typedef struct md_link_pack_iter {
    size_t i, offset;
    uint64_t corr;
    uint32_t call;
} md_link_pack_iter;
int md_link_pack_next(const md_link_pack *pk, md_link_pack_iter *it, md_link *out);
size_t md_link_pack_bytes(const md_link_pack *pk); /* its memory, for GPUTRACE_MEMORY_STATS */
void md_link_pack_free(md_link_pack *pk);

#endif
