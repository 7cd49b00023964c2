/* gt_reader.c — streaming .gtrace reader. Trusts nothing in the file: every length is checked
 * against what remains, every chunk against its CRC. Memory stays bounded: one chunk payload at a
 * time (at most GT_MAX_CHUNK_PAYLOAD) plus the string table. */
#include "gt_reader.h"
#include "gt_encode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_HEADER_SIZE (1u << 20) /* exe + cmdline; larger is damage */
#define SCAN_BLOCK 65536

typedef struct string_slot {
    uint32_t id; /* 0 = empty */
    char *s;
} string_slot;

struct gt_reader {
    int fd; /* -1 for memory sources */
    const unsigned char *mem;
    uint64_t size;
    char *path;
    gt_file_header hdr;
    char *exe;
    char *cmdline;
    uint64_t first_chunk;
    uint64_t off; /* next chunk header */
    unsigned char *payload;
    size_t payload_cap;
    uint32_t payload_len, pos, chunk_seq, chunk_tid;
    int have_seq;
    uint32_t expected_seq;
    int ended;
    string_slot *strings; /* open addressing, power-of-two capacity */
    size_t strings_cap, strings_used;
    gt_reader_stats st;
};

/* Read len bytes at off; returns bytes read (short at end of data). */
static size_t src_read(gt_reader *r, uint64_t off, void *buf, size_t len)
{
    if (off >= r->size || !len)
        return 0;
    if (len > r->size - off)
        len = (size_t)(r->size - off);
    if (r->fd < 0) {
        memcpy(buf, r->mem + off, len);
        return len;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(r->fd, (char *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    return done;
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *path, long a, long b,
                    long c, long d)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, path, a, b, c, d);
}

/* Copy a length-prefixed field of the header; NULL on inconsistency. */
static char *take_field(const unsigned char *h, uint32_t hsize, uint32_t *off, uint32_t *out_len)
{
    uint32_t len;
    if (hsize - *off < 4)
        return NULL;
    memcpy(&len, h + *off, 4);
    *off += 4;
    if (len > hsize - *off)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (!s)
        return NULL;
    memcpy(s, h + *off, len);
    s[len] = 0;
    *off += len;
    *out_len = len;
    return s;
}

static int parse_header(gt_reader *r, char *err, size_t errlen)
{
    unsigned char fixed[sizeof(gt_file_header)];
    size_t n = src_read(r, 0, fixed, sizeof fixed);
    if (n < 8 || memcmp(fixed, GT_MAGIC, 8)) {
        set_err(err, errlen, "%s: not a gputrace trace (no GPUTRACE magic)", r->path, 0, 0, 0, 0);
        return GT_OPEN_NOT_TRACE;
    }
    if (n < 16) {
        set_err(err, errlen, "%s: header truncated (%ld bytes)", r->path, (long)n, 0, 0, 0);
        return GT_OPEN_BAD_HEADER;
    }
    gt_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(&h, fixed, n);
    if (h.endian_mark != GT_ENDIAN_MARK && n >= 20) {
        set_err(err, errlen, "%s: not a gputrace trace of this byte order", r->path, 0, 0, 0, 0);
        return GT_OPEN_NOT_TRACE;
    }
    if (h.version_major > GT_VERSION_MAJOR) {
        set_err(err, errlen,
                "%s: format version %ld.%ld is newer than this gputrace reads (%ld.%ld); "
                "use a newer gputrace",
                r->path, h.version_major, h.version_minor, GT_VERSION_MAJOR, GT_VERSION_MINOR);
        return GT_OPEN_NEWER_VERSION;
    }
    if (h.version_major < GT_VERSION_MAJOR) {
        set_err(err, errlen, "%s: format version %ld.%ld is older than this gputrace reads (%ld.x)",
                r->path, h.version_major, h.version_minor, GT_VERSION_MAJOR, 0);
        return GT_OPEN_NOT_TRACE;
    }
    if (n < sizeof fixed || h.header_size < sizeof fixed + 8 || h.header_size > MAX_HEADER_SIZE ||
        (h.header_size & 7u) || h.header_size > r->size) {
        set_err(err, errlen, "%s: header damaged or truncated (header size %ld, file size %ld)",
                r->path, (long)h.header_size, (long)r->size, 0, 0);
        return GT_OPEN_BAD_HEADER;
    }
    unsigned char *full = malloc(h.header_size);
    if (!full || src_read(r, 0, full, h.header_size) != h.header_size) {
        free(full);
        set_err(err, errlen, "%s: cannot read the header", r->path, 0, 0, 0, 0);
        return GT_OPEN_IO_ERROR;
    }
    uint32_t stored = h.header_crc32, zero = 0;
    memcpy(full + offsetof(gt_file_header, header_crc32), &zero, 4);
    uint32_t crc = (uint32_t)crc32(0L, full, h.header_size);
    uint32_t off = sizeof fixed, exe_len = 0, cmd_len = 0;
    if (crc == stored) {
        r->exe = take_field(full, h.header_size, &off, &exe_len);
        r->cmdline = r->exe ? take_field(full, h.header_size, &off, &cmd_len) : NULL;
    }
    free(full);
    if (crc != stored || !r->cmdline) {
        set_err(err, errlen, "%s: header damaged (CRC mismatch)", r->path, 0, 0, 0, 0);
        return GT_OPEN_BAD_HEADER;
    }
    /* Arguments are stored NUL-separated; show them joined by spaces. */
    while (cmd_len && !r->cmdline[cmd_len - 1])
        r->cmdline[--cmd_len] = 0;
    for (uint32_t i = 0; i < cmd_len; i++)
        if (!r->cmdline[i])
            r->cmdline[i] = ' ';
    r->hdr = h;
    r->hdr.host[sizeof r->hdr.host - 1] = 0;
    for (int i = 0; i < GT_MAX_DEVICES; i++)
        r->hdr.runtime.devices[i].name[sizeof r->hdr.runtime.devices[i].name - 1] = 0;
    r->first_chunk = h.header_size;
    return GT_OPEN_OK;
}

static int finish_open(gt_reader *r, gt_reader **out, char *err, size_t errlen)
{
    int rc = parse_header(r, err, errlen);
    if (rc != GT_OPEN_OK) {
        gt_reader_close(r);
        return rc;
    }
    r->st.bytes_total = r->size;
    r->st.bytes_read_ok = r->first_chunk;
    r->off = r->first_chunk;
    *out = r;
    return GT_OPEN_OK;
}

static gt_reader *reader_new(const char *path)
{
    gt_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = -1;
    r->path = strdup(path);
    if (!r->path) {
        free(r);
        return NULL;
    }
    return r;
}

int gt_reader_open(const char *path, gt_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    gt_reader *r = reader_new(path);
    if (!r) {
        set_err(err, errlen, "%s: out of memory", path, 0, 0, 0, 0);
        return GT_OPEN_IO_ERROR;
    }
    /* O_NONBLOCK: opening a FIFO (a *.gtrace in a run folder can be anything) must not wait for
     * a writer; it is refused below, and regular files ignore the flag. */
    r->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat sb;
    if (r->fd < 0 || fstat(r->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        int e = r->fd < 0 ? errno : (errno ? errno : EISDIR);
        if (r->fd >= 0 && !S_ISREG(sb.st_mode))
            e = EISDIR;
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot open: %s", path,
                     e == EISDIR ? "not a regular file" : strerror(e));
        gt_reader_close(r);
        return GT_OPEN_IO_ERROR;
    }
    r->size = (uint64_t)sb.st_size;
    return finish_open(r, out, err, errlen);
}

int gt_reader_open_mem(const void *data, size_t len, gt_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    gt_reader *r = reader_new("<memory>");
    if (!r) {
        set_err(err, errlen, "%s: out of memory", "<memory>", 0, 0, 0, 0);
        return GT_OPEN_IO_ERROR;
    }
    r->mem = data;
    r->size = len;
    return finish_open(r, out, err, errlen);
}

void gt_reader_close(gt_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    for (size_t i = 0; i < r->strings_cap; i++)
        free(r->strings[i].s);
    free(r->strings);
    free(r->payload);
    free(r->exe);
    free(r->cmdline);
    free(r->path);
    free(r);
}

const gt_file_header *gt_reader_header(const gt_reader *r)
{
    return &r->hdr;
}

const char *gt_reader_exe(const gt_reader *r)
{
    return r->exe ? r->exe : "";
}

const char *gt_reader_cmdline(const gt_reader *r)
{
    return r->cmdline ? r->cmdline : "";
}

const char *gt_reader_path(const gt_reader *r)
{
    return r->path;
}

const gt_reader_stats *gt_reader_get_stats(const gt_reader *r)
{
    return &r->st;
}

/* ---------------------------------------------------------------- string table */

static size_t slot_of(uint32_t id, size_t cap)
{
    return (size_t)((id * 2654435761u) & (cap - 1));
}

static void strings_put(gt_reader *r, uint32_t id, const char *s, uint32_t len)
{
    if (!id)
        return;
    if ((r->strings_used + 1) * 2 > r->strings_cap) {
        size_t ncap = r->strings_cap ? r->strings_cap * 2 : 256;
        string_slot *ns = calloc(ncap, sizeof *ns);
        if (!ns)
            return;
        for (size_t i = 0; i < r->strings_cap; i++) {
            if (!r->strings[i].id)
                continue;
            size_t j = slot_of(r->strings[i].id, ncap);
            while (ns[j].id)
                j = (j + 1) & (ncap - 1);
            ns[j] = r->strings[i];
        }
        free(r->strings);
        r->strings = ns;
        r->strings_cap = ncap;
    }
    size_t j = slot_of(id, r->strings_cap);
    while (r->strings[j].id && r->strings[j].id != id)
        j = (j + 1) & (r->strings_cap - 1);
    if (r->strings[j].id == id)
        return; /* defined once per file; a repeat (rewind, fork child copy) keeps the first */
    char *copy = malloc((size_t)len + 1);
    if (!copy)
        return;
    memcpy(copy, s, len);
    copy[len] = 0;
    r->strings[j].id = id;
    r->strings[j].s = copy;
    r->strings_used++;
}

const char *gt_reader_string(const gt_reader *r, uint32_t id)
{
    if (!id || !r->strings_cap)
        return NULL;
    size_t j = slot_of(id, r->strings_cap);
    while (r->strings[j].id) {
        if (r->strings[j].id == id)
            return r->strings[j].s;
        j = (j + 1) & (r->strings_cap - 1);
    }
    return NULL;
}

/* ---------------------------------------------------------------- chunks */

static void note_damage(gt_reader *r, uint64_t off)
{
    if (!r->st.first_damage_offset)
        r->st.first_damage_offset = off ? off : 1;
}

/* Load the chunk at off into r->payload if it is whole and intact.
 * Returns 1 ok, 0 damaged, -1 extends past the end of the file. */
static int load_chunk(gt_reader *r, uint64_t off, gt_chunk_header *ch)
{
    if (src_read(r, off, ch, sizeof *ch) != sizeof *ch)
        return -1;
    if (ch->magic != GT_CHUNK_MAGIC || ch->payload_len > GT_MAX_CHUNK_PAYLOAD ||
        (ch->payload_len & 7u))
        return 0;
    if (ch->payload_len > r->size - off - sizeof *ch)
        return -1;
    if (ch->payload_len > r->payload_cap) {
        size_t ncap = ch->payload_len < 65536 ? 65536 : ch->payload_len;
        unsigned char *np = malloc(ncap);
        if (!np)
            return 0;
        free(r->payload);
        r->payload = np;
        r->payload_cap = ncap;
    }
    if (src_read(r, off + sizeof *ch, r->payload, ch->payload_len) != ch->payload_len)
        return -1;
    if ((uint32_t)crc32(0L, r->payload, ch->payload_len) != ch->crc32)
        return 0;
    /* UINT32_MAX is the count's error value: a chunk claiming that many records is damaged even
     * when the broken payload "matches" it (a size-0 record would then never be stepped over). */
    uint32_t records = gt_payload_count_records(r->payload, ch->payload_len);
    if (records == UINT32_MAX || records != ch->record_count)
        return 0;
    return 1;
}

/* Find the next intact chunk at or after off (chunks are 8-byte aligned relative to the first).
 * Returns its offset, or UINT64_MAX. */
static uint64_t scan_for_chunk(gt_reader *r, uint64_t off, int *saw_truncated)
{
    unsigned char block[SCAN_BLOCK];
    uint64_t rel = (off - r->first_chunk + 7u) & ~(uint64_t)7u;
    off = r->first_chunk + rel;
    while (off + sizeof(gt_chunk_header) <= r->size) {
        size_t n = src_read(r, off, block, sizeof block);
        for (size_t i = 0; i + 4 <= n; i += 8) {
            uint32_t magic;
            memcpy(&magic, block + i, 4);
            if (magic != GT_CHUNK_MAGIC)
                continue;
            gt_chunk_header ch;
            int rc = load_chunk(r, off + i, &ch);
            if (rc == 1)
                return off + i;
            if (rc < 0)
                *saw_truncated = 1;
        }
        if (n < sizeof block)
            break;
        off += sizeof block - 8; /* keep alignment; overlap is harmless */
    }
    return UINT64_MAX;
}

/* Make the next intact chunk current. 0 at end of readable data. */
static int next_chunk(gt_reader *r)
{
    while (!r->ended && r->off < r->size) {
        gt_chunk_header ch;
        int rc = load_chunk(r, r->off, &ch);
        if (rc != 1) {
            note_damage(r, r->off);
            int truncated = rc < 0;
            uint64_t next = scan_for_chunk(r, r->off + 8, &truncated);
            if (next == UINT64_MAX) {
                /* Nothing intact follows: a cut-off tail is truncation, anything else damage. */
                if (truncated)
                    r->st.truncated = 1;
                else
                    r->st.chunks_damaged++;
                r->ended = 1;
                return 0;
            }
            r->st.chunks_damaged++;
            r->off = next;
            rc = load_chunk(r, r->off, &ch);
            if (rc != 1) { /* cannot happen: scan verified it; stay safe */
                r->ended = 1;
                return 0;
            }
        }
        if (r->have_seq && ch.seq > r->expected_seq)
            r->st.chunk_seq_gaps += ch.seq - r->expected_seq;
        r->have_seq = 1;
        r->expected_seq = ch.seq + 1;
        r->st.chunks_ok++;
        r->st.bytes_read_ok += sizeof ch + ch.payload_len;
        r->payload_len = ch.payload_len;
        r->pos = 0;
        r->chunk_seq = ch.seq;
        r->chunk_tid = ch.tid;
        r->off += sizeof ch + ch.payload_len;
        if (ch.payload_len)
            return 1;
    }
    r->ended = 1;
    return 0;
}

int gt_reader_next(gt_reader *r, gt_record *rec)
{
    for (;;) {
        if (r->pos >= r->payload_len && !next_chunk(r))
            return 0;
        gt_record_header rh;
        memcpy(&rh, r->payload + r->pos, sizeof rh); /* sizes were validated by load_chunk */
        if (rh.size < sizeof rh || rh.size > r->payload_len - r->pos) {
            r->pos = r->payload_len; /* cannot happen after load_chunk; never loop in place */
            continue;
        }
        const unsigned char *body = r->payload + r->pos + sizeof rh;
        uint64_t file_offset = r->off - r->payload_len + r->pos;
        r->pos += rh.size;
        uint32_t body_size = rh.size - (uint32_t)sizeof rh;
        if (rh.kind == GT_REC_PAD)
            continue;
        if (!gt_record_kind_name(rh.kind)) {
            r->st.unknown_kinds++;
            continue;
        }
        if (rh.kind == GT_REC_STRING && body_size >= sizeof(gt_rec_string)) {
            gt_rec_string s;
            memcpy(&s, body, sizeof s);
            if (s.len <= body_size - sizeof s)
                strings_put(r, s.id, (const char *)body + sizeof s, s.len);
        } else if (rh.kind == GT_REC_LOST && body_size >= sizeof(gt_rec_lost)) {
            gt_rec_lost l;
            memcpy(&l, body, sizeof l);
            r->st.lost_records += l.count;
        } else if (rh.kind == GT_REC_END && body_size >= GT_REC_END_SIZE_1_2) {
            memset(&r->st.end, 0, sizeof r->st.end); /* a 1.2 record has no call counts: 0 */
            memcpy(&r->st.end, body, body_size < sizeof r->st.end ? body_size : sizeof r->st.end);
            r->st.ended = 1;
            /* calls the file has no record of */
            r->st.lost_records += r->st.end.lost_after_end + r->st.end.calls_interrupted;
        }
        r->st.records++;
        r->st.records_by_kind[rh.kind]++;
        rec->kind = rh.kind;
        rec->flags = rh.flags;
        rec->body_size = body_size;
        rec->body = body;
        rec->tid = r->chunk_tid;
        rec->chunk_seq = r->chunk_seq;
        rec->file_offset = file_offset;
        return 1;
    }
}

int gt_reader_rewind(gt_reader *r)
{
    uint64_t total = r->st.bytes_total;
    memset(&r->st, 0, sizeof r->st);
    r->st.bytes_total = total;
    r->st.bytes_read_ok = r->first_chunk;
    r->off = r->first_chunk;
    r->payload_len = r->pos = 0;
    r->have_seq = 0;
    r->ended = 0;
    return 0;
}

int gt_reader_end_state(const gt_reader *r)
{
    if (r->st.ended)
        return GT_ENDED_NORMALLY;
    return r->hdr.flags & GT_HDR_END_RECORD ? GT_ENDED_ABNORMALLY : GT_ENDED_UNKNOWN;
}
