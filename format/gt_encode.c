/* gt_encode.c — building .gtrace files: header, records, chunks (see gtrace_format.h).
 * Allocation-free so the recorder can use it from its writer thread. */
#include "gt_encode.h"

#include <string.h>
#include <zlib.h>

static size_t align8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

size_t gt_header_encode(void *buf, size_t cap, const gt_file_header *fixed, const char *exe,
                        const char *cmdline, size_t cmdline_len)
{
    size_t exe_len = exe ? strlen(exe) : 0;
    if (!cmdline)
        cmdline_len = 0;
    size_t size = align8(sizeof(gt_file_header) + 4 + exe_len + 4 + cmdline_len);
    if (size > cap || size > UINT32_MAX)
        return 0;
    unsigned char *p = buf;
    memset(p, 0, size);
    gt_file_header h = *fixed;
    memcpy(h.magic, GT_MAGIC, 8);
    h.version_major = GT_VERSION_MAJOR;
    h.version_minor = GT_VERSION_MINOR;
    h.header_size = (uint32_t)size;
    h.endian_mark = GT_ENDIAN_MARK;
    memcpy(p, &h, sizeof h);
    size_t off = sizeof h;
    uint32_t len32 = (uint32_t)exe_len;
    memcpy(p + off, &len32, 4);
    off += 4;
    if (exe_len)
        memcpy(p + off, exe, exe_len);
    off += exe_len;
    len32 = (uint32_t)cmdline_len;
    memcpy(p + off, &len32, 4);
    off += 4;
    if (cmdline_len)
        memcpy(p + off, cmdline, cmdline_len);
    gt_header_seal(buf, size);
    return size;
}

void gt_header_seal(void *buf, size_t header_size)
{
    unsigned char *p = buf;
    uint32_t zero = 0;
    size_t crc_off = offsetof(gt_file_header, header_crc32);
    memcpy(p + crc_off, &zero, 4);
    uint32_t crc = (uint32_t)crc32(0L, p, (uInt)header_size);
    memcpy(p + crc_off, &crc, 4);
}

size_t gt_record_append(void *payload, size_t cap, size_t used, uint16_t kind, uint16_t flags,
                        const void *body, uint32_t body_size)
{
    if (body_size > UINT32_MAX - 16)
        return 0;
    uint32_t size = gt_record_size(body_size);
    if (used > cap || cap - used < size)
        return 0;
    unsigned char *p = (unsigned char *)payload + used;
    gt_record_header rh = {.kind = kind, .flags = flags, .size = size};
    memcpy(p, &rh, sizeof rh);
    if (body_size)
        memcpy(p + sizeof rh, body, body_size);
    memset(p + sizeof rh + body_size, 0, size - sizeof rh - body_size);
    return size;
}

uint32_t gt_payload_count_records(const void *payload, uint32_t payload_len)
{
    const unsigned char *p = payload;
    uint32_t off = 0, count = 0;
    while (off < payload_len) {
        gt_record_header rh;
        if (payload_len - off < sizeof rh)
            return UINT32_MAX;
        memcpy(&rh, p + off, sizeof rh);
        if (rh.size < sizeof rh || (rh.size & 7u) || rh.size > payload_len - off)
            return UINT32_MAX;
        off += rh.size;
        count++;
    }
    return count;
}

void gt_chunk_header_fill(gt_chunk_header *h, const void *payload, uint32_t payload_len,
                          uint32_t seq, uint32_t tid)
{
    h->magic = GT_CHUNK_MAGIC;
    h->payload_len = payload_len;
    h->seq = seq;
    h->crc32 = (uint32_t)crc32(0L, payload, payload_len);
    h->record_count = gt_payload_count_records(payload, payload_len);
    h->tid = tid;
}
