/* link_pack.c — sorted links, packed (link_pack.h). A link is three varints: the op id's distance
 * from the previous link's, the call's distance from the previous call's (zigzag: a later op may
 * belong to an earlier call) and how. A block starts from zero distances: its first op id is in
 * the index, so a lookup decodes one block, read back from the spill file when it went there. */
#include "link_pack.h"

#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

static void put_varint(md_link_pack *pk, uint64_t v)
{
    gt_grow((void **)&pk->bytes, &pk->cap_bytes, pk->n_bytes + 10, 1);
    while (v >= 0x80) {
        pk->bytes[pk->n_bytes++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    pk->bytes[pk->n_bytes++] = (uint8_t)v;
}

static uint64_t get_varint(const uint8_t *b, size_t *at)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t c = b[(*at)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80))
            break;
    }
    return v;
}

static uint64_t zigzag(int64_t d)
{
    return ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
}

static int64_t unzigzag(uint64_t z)
{
    return (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
}

/* At a block's start: the whole blocks in memory go to the spill file once they pass
 * MD_LINK_PACK_MEMORY. A write that fails keeps them (and the pack stays in memory from then on).
 */
static void spill_blocks(md_link_pack *pk)
{
    if (pk->n_bytes < (pk->memory_max ? pk->memory_max : MD_LINK_PACK_MEMORY) || pk->spill.failed)
        return;
    if (gt_spill_write(&pk->spill, pk->mem_base, pk->bytes, pk->n_bytes) != 0)
        return;
    pk->mem_base += pk->n_bytes;
    pk->n_bytes = 0;
}

void md_link_pack_append(md_link_pack *pk, const md_link *l)
{
    if (pk->n % MD_LINK_PACK_BLOCK == 0) {
        spill_blocks(pk);
        gt_grow((void **)&pk->blocks, &pk->cap_blocks, pk->n_blocks + 1, sizeof *pk->blocks);
        pk->blocks[pk->n_blocks++] =
            (md_link_block){.first_corr = l->corr, .offset = pk->mem_base + pk->n_bytes};
        pk->last_corr = l->corr;
        pk->last_call = 0;
    }
    put_varint(pk, l->corr - pk->last_corr);
    put_varint(pk, zigzag((int64_t)l->call - (int64_t)pk->last_call));
    put_varint(pk, l->how);
    pk->last_corr = l->corr;
    pk->last_call = l->call;
    pk->n++;
    pk->cached = 0; /* the block being written may be the cached one */
}

/* Block b's bytes: in memory, or read back into buf. */
static const uint8_t *block_bytes(md_link_pack *pk, size_t b, uint8_t *buf)
{
    uint64_t at = pk->blocks[b].offset;
    if (at >= pk->mem_base)
        return pk->bytes + (at - pk->mem_base);
    uint64_t end = b + 1 < pk->n_blocks ? pk->blocks[b + 1].offset : pk->mem_base;
    if (end > pk->mem_base)
        end = pk->mem_base;
    size_t n = (size_t)(end - at);
    if (n > MD_LINK_PACK_BLOCK_BYTES)
        n = MD_LINK_PACK_BLOCK_BYTES;
    memset(buf + gt_spill_read(&pk->spill, at, buf, n), 0, MD_LINK_PACK_BLOCK_BYTES - n);
    return buf;
}

int md_link_pack_next(md_link_pack *pk, md_link_pack_iter *it, md_link *out)
{
    if (it->i >= pk->n)
        return 0;
    if (it->i % MD_LINK_PACK_BLOCK == 0 || !it->block) {
        size_t b = it->i / MD_LINK_PACK_BLOCK;
        it->block = block_bytes(pk, b, it->buf);
        it->at = 0;
        it->corr = pk->blocks[b].first_corr;
        it->call = 0;
    }
    it->corr += get_varint(it->block, &it->at);
    it->call = (uint32_t)((int64_t)it->call + unzigzag(get_varint(it->block, &it->at)));
    uint64_t how = get_varint(it->block, &it->at);
    *out = (md_link){.corr = it->corr, .call = it->call, .how = (uint32_t)how};
    it->i++;
    return 1;
}

static void decode_block(md_link_pack *pk, size_t block)
{
    md_link_pack_iter it = {.i = block * MD_LINK_PACK_BLOCK};
    pk->n_cache = 0;
    while (pk->n_cache < MD_LINK_PACK_BLOCK && md_link_pack_next(pk, &it, &pk->cache[pk->n_cache]))
        pk->n_cache++;
    pk->cached = block + 1;
}

size_t md_link_pack_block_of(const md_link_pack *pk, uint64_t corr)
{
    size_t past = gt_first_past(pk->blocks, pk->n_blocks, sizeof *pk->blocks,
                                offsetof(md_link_block, first_corr), corr);
    return past ? past - 1 : 0;
}

void md_link_pack_truncate(md_link_pack *pk, size_t block)
{
    if (block >= pk->n_blocks)
        return;
    uint64_t end = pk->blocks[block].offset;
    if (end >= pk->mem_base) {
        pk->n_bytes = (size_t)(end - pk->mem_base);
    } else { /* the file past end is written again by the next spill */
        pk->mem_base = end;
        pk->n_bytes = 0;
    }
    pk->n_blocks = block;
    pk->n = block * MD_LINK_PACK_BLOCK;
    pk->cached = 0;
}

int md_link_pack_find(md_link_pack *pk, uint64_t corr, md_link *out)
{
    if (pk->n_blocks == 0 || corr < pk->blocks[0].first_corr)
        return 0;
    size_t lo = md_link_pack_block_of(pk, corr);
    if (pk->cached != lo + 1)
        decode_block(pk, lo);
    /* the first link at or after corr: the first whose corr is past corr - 1 (corr is at least
     * the block's first, so only the first block can hold 0) */
    size_t a = corr == 0 ? 0
                         : gt_first_past(pk->cache, pk->n_cache, sizeof *pk->cache,
                                         offsetof(md_link, corr), corr - 1);
    if (a == pk->n_cache || pk->cache[a].corr != corr)
        return 0;
    *out = pk->cache[a];
    return 1;
}

size_t md_link_pack_bytes(const md_link_pack *pk)
{
    return pk->cap_bytes + pk->cap_blocks * sizeof *pk->blocks + sizeof *pk;
}

uint64_t md_link_pack_size(const md_link_pack *pk)
{
    return pk->mem_base + pk->n_bytes;
}

void md_link_pack_free(md_link_pack *pk)
{
    free(pk->bytes);
    free(pk->blocks);
    gt_spill_close(&pk->spill);
    memset(pk, 0, sizeof *pk);
}
