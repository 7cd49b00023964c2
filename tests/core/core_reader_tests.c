/* core_reader_tests.c — the reader against a recorded trace cut short or damaged at every point
 * (the core test binary records the trace, core_tests.c holds the harness). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_tests.h"
#include "gt_reader.h"

/* ---------------------------------------------------------------- reader robustness */

static unsigned char *load_small_trace(size_t *len)
{
    char *dir = make_dir("small");
    child_result cr;
    run_child("small", NULL, dir, &cr);
    char files[4][512];
    if (list_traces(dir, files, 4) != 1)
        return NULL;
    FILE *f = fopen(files[0], "rb");
    unsigned char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

typedef struct read_result {
    int rc;
    uint64_t records, api, nvtx;
    gt_reader_stats st;
} read_result;

static read_result read_mem(const unsigned char *data, size_t len)
{
    read_result rr = {0};
    gt_reader *r;
    char err[512];
    rr.rc = gt_reader_open_mem(data, len, &r, err, sizeof err);
    if (rr.rc)
        return rr;
    gt_record rec;
    while (gt_reader_next(r, &rec)) {
        rr.records++;
        rr.api += rec.kind == GT_REC_API;
        if (rec.kind == GT_REC_NVTX) {
            const gt_rec_nvtx *n = rec.body;
            const char *s = gt_reader_string(r, n->name_id);
            rr.nvtx += s && !strcmp(s, "small");
        }
    }
    rr.st = *gt_reader_get_stats(r);
    gt_reader_close(r);
    return rr;
}

void test_truncation(void)
{
    size_t len;
    unsigned char *data = load_small_trace(&len);
    CHECK(data != NULL, "no small trace");
    if (!data)
        return;
    read_result whole = read_mem(data, len);
    CHECK(whole.rc == 0 && whole.api == 300 && whole.nvtx == 1 && !whole.st.truncated &&
              whole.st.chunks_ok >= 3,
          "whole file: rc %d api %llu chunks %llu", whole.rc, (unsigned long long)whole.api,
          (unsigned long long)whole.st.chunks_ok);
    const gt_file_header *h = (const gt_file_header *)data;
    uint64_t prev_records = 0;
    for (size_t cut = 0; cut < len; cut++) {
        read_result rr = read_mem(data, cut);
        if (cut < h->header_size) {
            CHECK(rr.rc != 0, "cut %zu inside the header opened", cut);
            continue;
        }
        CHECK(rr.rc == 0, "cut %zu: rc %d", cut, rr.rc);
        CHECK(rr.records <= whole.records && rr.records >= prev_records, "cut %zu: %llu records",
              cut, (unsigned long long)rr.records);
        CHECK(rr.st.bytes_read_ok <= cut, "cut %zu: read %llu", cut,
              (unsigned long long)rr.st.bytes_read_ok);
        /* A cut between chunks is a whole (shorter) file; anywhere else it is truncation. */
        bool on_boundary = rr.st.bytes_read_ok == cut;
        CHECK(on_boundary ? !rr.st.truncated : rr.st.truncated, "cut %zu: truncated %d", cut,
              rr.st.truncated);
        CHECK(rr.st.chunks_damaged == 0, "cut %zu: damage reported", cut);
        prev_records = rr.records;
    }
    free(data);
}

void test_corruption(void)
{
    size_t len;
    unsigned char *data = load_small_trace(&len);
    if (!data)
        return;
    read_result whole = read_mem(data, len);
    unsigned char *copy = malloc(len);
    uint32_t hsize = ((const gt_file_header *)data)->header_size;
    /* The chunk header's seq and tid fields are outside the CRC (it covers the payload): a flip
     * there can go unnoticed, so those bytes are left alone. */
    static unsigned char unprotected[1 << 20];
    memset(unprotected, 0, len);
    for (size_t off = hsize; off + sizeof(gt_chunk_header) <= len;) {
        gt_chunk_header ch;
        memcpy(&ch, data + off, sizeof ch);
        memset(unprotected + off + offsetof(gt_chunk_header, seq), 1, 4);
        memset(unprotected + off + offsetof(gt_chunk_header, tid), 1, 4);
        off += sizeof ch + ch.payload_len;
    }
    srand(12345);
    int damaged_seen = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(copy, data, len);
        int flips = 1 + rand() % 4;
        size_t first = len;
        for (int f = 0; f < flips; f++) {
            size_t at;
            do
                at = (size_t)rand() % len;
            while (unprotected[at]);
            copy[at] ^= (unsigned char)(1 + rand() % 255);
            if (at < first)
                first = at;
        }
        read_result rr = read_mem(copy, len);
        if (first < hsize) {
            continue; /* header damage: any status, no crash */
        }
        CHECK(rr.rc == 0, "iter %d: rc %d", iter, rr.rc);
        CHECK(rr.records <= whole.records + 0, "iter %d: %llu records", iter,
              (unsigned long long)rr.records);
        if (rr.st.chunks_damaged)
            damaged_seen++;
        /* Every flip lands in some chunk, so something must be reported. */
        CHECK(rr.st.chunks_damaged || rr.st.truncated || rr.st.chunk_seq_gaps ||
                  rr.records < whole.records,
              "iter %d: damage at %zu went unnoticed", iter, first);
    }
    CHECK(damaged_seen > 100, "only %d damaged reads", damaged_seen);
    free(copy);
    free(data);
}
