/* gt_encode.h — building a .gtrace file piece by piece: header, chunks, records.
 * Used by the recorder's writer thread and by gt_test_writer.h (synthetic traces for tests and
 * tools).
 * Allocation-free: callers pass buffers. */
#ifndef GT_ENCODE_H
#define GT_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "gtrace_format.h"

/* Size of a record with a body of body_size bytes (header included, rounded up to 8). */
static inline uint32_t gt_record_size(uint32_t body_size)
{
    return (uint32_t)((sizeof(gt_record_header) + body_size + 7u) & ~7u);
}

/* Fill the variable header into buf (capacity cap): fixed part (magic, version, endian mark set
 * here) followed by exe and cmdline (cmdline_len bytes, NUL-separated args). Returns header_size,
 * or 0 when cap is too small. The CRC is computed last; call gt_header_seal again after changing
 * any field of the fixed part. */
size_t gt_header_encode(void *buf, size_t cap, const gt_file_header *fixed, const char *exe,
                        const char *cmdline, size_t cmdline_len);
void gt_header_seal(void *buf, size_t header_size);

/* Append one record to a payload buffer. Returns bytes used (gt_record_size), 0 if no room.
 * Padding bytes are zeroed. */
size_t gt_record_append(void *payload, size_t cap, size_t used, uint16_t kind, uint16_t flags,
                        const void *body, uint32_t body_size);

/* Fill a chunk header for payload (computes CRC32 and counts records by walking them). */
void gt_chunk_header_fill(gt_chunk_header *h, const void *payload, uint32_t payload_len,
                          uint32_t seq, uint32_t tid);
/* Count records in a payload; returns UINT32_MAX if the payload is not a valid record sequence. */
uint32_t gt_payload_count_records(const void *payload, uint32_t payload_len);

#endif
