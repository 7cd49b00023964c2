/* gt_test_writer.c — synthetic .gtrace files for tests and tools (see gt_test_writer.h). Kept out
 * of gt_encode.c so the injected library carries only what its writer thread uses. */
#include "gt_test_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
