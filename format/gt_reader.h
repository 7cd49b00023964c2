/* gt_reader.h — streaming reader of .gtrace files (used by the analyzer, tests and the fuzzer).
 *
 * Reads one record at a time with bounded memory (one chunk in memory at a time, plus the string
 * table). Never crashes on any input: damage is reported, not trusted. A chunk with a bad CRC or
 * length is skipped by scanning for the next chunk magic; truncation stops the stream. */
#ifndef GT_READER_H
#define GT_READER_H

#include <stddef.h>
#include <stdint.h>

#include "gtrace_format.h"

enum gt_open_status {
    GT_OPEN_OK = 0,
    GT_OPEN_IO_ERROR = 1,      /* cannot open/read the file (errno kept in the message) */
    GT_OPEN_NOT_TRACE = 2,     /* bad magic, endianness, or a header too short */
    GT_OPEN_NEWER_VERSION = 3, /* major version newer than this build reads */
    GT_OPEN_BAD_HEADER = 4,    /* header CRC mismatch or inconsistent sizes */
};

typedef struct gt_reader gt_reader;

typedef struct gt_record {
    uint16_t kind;
    uint16_t flags;
    uint32_t body_size; /* bytes of body (record size minus the 8-byte record header) */
    const void *body;   /* valid until the next gt_reader_next call; 8-byte aligned */
    uint32_t tid;       /* from the chunk header */
    uint32_t chunk_seq;
    uint64_t file_offset; /* offset of the record header in the file */
} gt_record;

typedef struct gt_reader_stats {
    uint64_t bytes_total;   /* file size */
    uint64_t bytes_read_ok; /* header + good chunks */
    uint64_t chunks_ok;
    uint64_t chunks_damaged; /* CRC/length failures skipped */
    uint64_t chunk_seq_gaps; /* missing sequence numbers */
    uint64_t records;        /* records returned */
    uint64_t records_by_kind[GT_REC_KIND_MAX];
    uint64_t unknown_kinds;       /* records of kinds >= GT_REC_KIND_MAX or not known: skipped */
    uint64_t lost_records;        /* sum of GT_REC_LOST counts seen so far */
    uint64_t first_damage_offset; /* file offset of the first damage, 0 if none */
    int truncated;                /* file ends inside a chunk */
    int ended;                    /* a GT_REC_END was read (gt_reader_end_state) */
    gt_rec_end end;               /* its body, when ended */
} gt_reader_stats;

/* How the recording ended, once every record was read: a file whose recorder writes end records
 * (GT_HDR_END_RECORD) and that has none ended abnormally (killed, crashed, hung). */
enum gt_end_state { GT_ENDED_NORMALLY = 0, GT_ENDED_ABNORMALLY = 1, GT_ENDED_UNKNOWN = 2 };
int gt_reader_end_state(const gt_reader *r);

/* Open a file. On failure returns a non-zero gt_open_status and writes a one-line message
 * (naming the path, and both versions for GT_OPEN_NEWER_VERSION) into err. */
int gt_reader_open(const char *path, gt_reader **out, char *err, size_t errlen);
/* Same over a memory buffer (not copied; must outlive the reader). For fuzzing and tests. */
int gt_reader_open_mem(const void *data, size_t len, gt_reader **out, char *err, size_t errlen);
void gt_reader_close(gt_reader *r);

const gt_file_header *gt_reader_header(const gt_reader *r);
const char *gt_reader_exe(const gt_reader *r);     /* "" when absent */
const char *gt_reader_cmdline(const gt_reader *r); /* arguments joined by spaces */
const char *gt_reader_path(const gt_reader *r);

/* Next record: 1 = *rec filled, 0 = end of the readable data. STRING records are also returned
 * (and recorded in the string table before return). PAD records are never returned. */
int gt_reader_next(gt_reader *r, gt_record *rec);
/* Go back to the first chunk (the string table is kept). 0 on success. */
int gt_reader_rewind(gt_reader *r);
/* A string defined so far; NULL for unknown ids (callers print "?"). */
const char *gt_reader_string(const gt_reader *r, uint32_t id);
const gt_reader_stats *gt_reader_get_stats(const gt_reader *r);

/* Names for printing. */
const char *gt_record_kind_name(uint16_t kind); /* NULL when unknown */
const char *gt_mem_kind_name(uint8_t kind);     /* "pageable", "pinned", ... */
const char *gt_memcpy_dir_name(uint8_t dir);    /* "HtoD", ... */
const char *gt_cupti_state_name(uint32_t state);

#endif
