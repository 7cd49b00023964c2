/* gt_test_writer.h — a whole-file writer of synthetic .gtrace files, for tests and tools (never in
 * libgputrace.so: format/CMakeLists.txt builds it into gtformat only, not gtformat_pic). */
#ifndef GT_TEST_WRITER_H
#define GT_TEST_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "gt_encode.h"

/* stdio-free (write(2)); one chunk in memory at a time. */
typedef struct gt_test_writer {
    int fd;
    uint32_t seq;
    uint32_t tid;
    size_t used;
    unsigned char payload[1 << 16];
} gt_test_writer;
int gt_test_writer_open(gt_test_writer *w, const char *path, const gt_file_header *fixed,
                        const char *exe, const char *cmdline, size_t cmdline_len);
/* Add a record to the current chunk (flushes a full chunk first). 0 on success. */
int gt_test_writer_add(gt_test_writer *w, uint16_t kind, uint16_t flags, const void *body,
                       uint32_t body_size);
/* Define a string record. */
int gt_test_writer_string(gt_test_writer *w, uint32_t id, const char *s);
/* Switch thread id: flushes the current chunk. */
int gt_test_writer_set_tid(gt_test_writer *w, uint32_t tid);
int gt_test_writer_flush(gt_test_writer *w);
int gt_test_writer_close(gt_test_writer *w);

#endif
