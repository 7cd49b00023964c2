/* flight_tests.c — the flight recorder's memory (interpose/core/flight.c) on its own: chunks older
 * than the window and chunks past the memory cap are evicted oldest first and counted, what is
 * held comes back whole (CRC) and in order, across the byte ring's wrap, and a chunk larger than
 * the cap is counted, never held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core_internal.h"
#include "gt_check.h"
#include "gt_encode.h"

#define SEC 1000000000ull
#define GT_CHECK(cond) CHECK(cond, "%s", "")

static unsigned char payload[300 << 10] __attribute__((aligned(8)));

/* A chunk of n bytes of records whose bodies carry tag. */
static void store(uint32_t n, uint32_t tag, uint64_t t_ns)
{
    uint32_t used = 0, body = n - 8;
    memset(payload, 0, n);
    for (uint32_t i = 0; i + 8 <= body; i += 8)
        memcpy(payload + 8 + i, &tag, sizeof tag);
    used = (uint32_t)gt_record_append(payload, n, 0, GT_REC_API, 0, payload + 8, body);
    GT_CHECK(used == n);
    gt_chunk_header h;
    gt_chunk_header_fill(&h, payload, used, 0, 7);
    gt_flight_store(&h, payload, 1, t_ns);
}

/* Take everything held: the tags, oldest first, each chunk whole. */
static uint32_t take_all(uint32_t *tags, uint32_t cap)
{
    uint32_t n = 0;
    gt_chunk_header *h;
    uint64_t records;
    while (gt_flight_take(&h, &records)) {
        const unsigned char *p = (const unsigned char *)(h + 1);
        GT_CHECK(h->magic == GT_CHUNK_MAGIC && h->tid == 7 && records == 1);
        GT_CHECK(h->crc32 == (uint32_t)crc32(0L, p, h->payload_len));
        if (n < cap)
            memcpy(&tags[n], p + 8, sizeof tags[n]);
        n++;
    }
    return n;
}

static void counts(uint64_t want_chunks, uint64_t want_held)
{
    uint64_t chunks, records, held;
    gt_flight_counts(&chunks, &records, &held);
    GT_CHECK(chunks == want_chunks && records == want_chunks && held == want_held);
    if (chunks != want_chunks || held != want_held)
        fprintf(stderr, "evicted %llu (want %llu), held %llu (want %llu)\n",
                (unsigned long long)chunks, (unsigned long long)want_chunks,
                (unsigned long long)held, (unsigned long long)want_held);
}

int main(void)
{
    uint32_t tags[256];
    /* The window: 2 s; a chunk every 0.5 s for 5 s keeps those of the last 2 s. */
    gt_flight_configure(2, 4);
    for (uint32_t i = 0; i <= 10; i++)
        store(1024, i, 100 * SEC + i * SEC / 2);
    GT_CHECK(gt_flight_oldest_ns(105 * SEC) == 103 * SEC);
    counts(6, 5);
    uint32_t n = take_all(tags, 256);
    GT_CHECK(n == 5 && tags[0] == 6 && tags[4] == 10);

    /* The cap: 4 MB; forty 200 KB chunks at once keep the newest that fit (20: 4 MB over
     * 200 KB + header), the ring wrapping several times, every one whole and in order. */
    gt_flight_fork_child(); /* counts back to 0 */
    for (uint32_t i = 0; i < 40; i++)
        store(200 << 10, 100 + i, 200 * SEC);
    uint64_t chunks, records, held;
    gt_flight_counts(&chunks, &records, &held);
    GT_CHECK(chunks + held == 40 && held >= 19 && held <= 20);
    n = take_all(tags, 256);
    GT_CHECK(n == held);
    for (uint32_t i = 0; i < n; i++)
        GT_CHECK(tags[i] == 100 + 40 - n + i);

    /* Stored again after being emptied, across the wrap: order and contents hold. */
    for (uint32_t i = 0; i < 30; i++)
        store(150 << 10, 300 + i, 201 * SEC);
    n = take_all(tags, 256);
    GT_CHECK(n >= 25 && n <= 27 && tags[n - 1] == 329);
    for (uint32_t i = 1; i < n; i++)
        GT_CHECK(tags[i] == tags[i - 1] + 1);

    /* Larger than the whole cap: counted, not held; what was held stays. */
    gt_flight_fork_child();
    store(1024, 500, 300 * SEC);
    gt_flight_configure(2, 4);
    gt_chunk_header big = {.magic = GT_CHUNK_MAGIC, .payload_len = (4u << 20) + 8, .tid = 7};
    gt_flight_store(&big, payload, 3, 300 * SEC); /* never read: its length alone refuses it */
    gt_flight_counts(&chunks, &records, &held);
    GT_CHECK(chunks == 1 && records == 3 && held == 1);
    if (!failures)
        printf("flight: ok\n");
    return failures != 0;
}
