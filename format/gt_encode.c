/* gt_encode.c — building .gtrace files: header, records, chunks (see gtrace_format.h).
 * Allocation-free so the recorder can use it from its writer thread. */
#include "gt_encode.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
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

/* ---------------------------------------------------------------- test writer */

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int gt_test_writer_open(gt_test_writer *w, const char *path, const gt_file_header *fixed,
                        const char *exe, const char *cmdline, size_t cmdline_len)
{
    memset(w, 0, sizeof *w);
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w->fd < 0)
        return -1;
    /* The header is encoded into the payload buffer, which is free at this point. */
    size_t hsize =
        gt_header_encode(w->payload, sizeof w->payload, fixed, exe, cmdline, cmdline_len);
    if (!hsize || write_all(w->fd, w->payload, hsize) < 0) {
        close(w->fd);
        w->fd = -1;
        return -1;
    }
    return 0;
}

int gt_test_writer_flush(gt_test_writer *w)
{
    if (!w->used)
        return 0;
    gt_chunk_header h;
    gt_chunk_header_fill(&h, w->payload, (uint32_t)w->used, w->seq++, w->tid);
    int rc = write_all(w->fd, &h, sizeof h);
    if (!rc)
        rc = write_all(w->fd, w->payload, w->used);
    w->used = 0;
    return rc;
}

int gt_test_writer_add(gt_test_writer *w, uint16_t kind, uint16_t flags, const void *body,
                       uint32_t body_size)
{
    if (gt_record_size(body_size) > sizeof w->payload)
        return -1;
    size_t n =
        gt_record_append(w->payload, sizeof w->payload, w->used, kind, flags, body, body_size);
    if (!n) {
        if (gt_test_writer_flush(w) < 0)
            return -1;
        n = gt_record_append(w->payload, sizeof w->payload, 0, kind, flags, body, body_size);
    }
    w->used += n;
    return 0;
}

int gt_test_writer_string(gt_test_writer *w, uint32_t id, const char *s)
{
    size_t len = strlen(s);
    if (len > sizeof w->payload - 64)
        return -1;
    unsigned char body[sizeof(gt_rec_string) + (1 << 16)];
    gt_rec_string hdr = {.id = id, .len = (uint32_t)len};
    memcpy(body, &hdr, sizeof hdr);
    memcpy(body + sizeof hdr, s, len);
    return gt_test_writer_add(w, GT_REC_STRING, 0, body, (uint32_t)(sizeof hdr + len));
}

int gt_test_writer_set_tid(gt_test_writer *w, uint32_t tid)
{
    int rc = gt_test_writer_flush(w);
    w->tid = tid;
    return rc;
}

int gt_test_writer_close(gt_test_writer *w)
{
    int rc = gt_test_writer_flush(w);
    if (w->fd >= 0 && close(w->fd) < 0)
        rc = -1;
    w->fd = -1;
    return rc;
}
