/* test_spill.c — what the analysis keeps on disk when it grows with the run (issue 33 item 0):
 * values by id in pages (analyzer/model/id_pages.c) and a list of numbers (analyzer/common/
 * u64_log.c) read back as written, with the spill file and, where none can be made
 * (GPUTRACE_TMPDIR nowhere), in memory. The links' pack is test_link_store.c's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id_pages.h"
#include "u64_log.h"
#include "util.h"
#include "../gt_check.h"

/* Values by id (id_pages.h) of 1, 2 and 32 bits over 40 pages of ids, two pages in memory at
 * most: written and read in a scattered order, against the truth; the pages went to disk and came
 * back. Without a place to spill (GPUTRACE_TMPDIR nowhere), every page stays in memory, right. */
static void test_pages(void)
{
    enum { IDS = 40 << 16, STEP = 997 };
    const unsigned widths[] = {1, 2, 32};
    int nowhere = getenv("GPUTRACE_TMPDIR") != NULL;
    for (size_t w = 0; w < 3; w++) {
        md_pagebits b;
        memset(&b, 0, sizeof b);
        b.width = widths[w];
        b.pages_max = 2;
        uint64_t mask = (1ull << b.width) - 1, wrong = 0;
        for (uint64_t k = 0; k < IDS / STEP; k++) { /* ids far apart, pages taken in turn */
            uint64_t id = k * STEP % IDS;
            wrong += md_bits_set(&b, id, (unsigned)(gt_mix64(id) & mask)) != 0;
        }
        for (uint64_t k = IDS / STEP; k-- > 0;) { /* backwards, and the ids between */
            uint64_t id = k * STEP % IDS;
            wrong += md_bits_get(&b, id) != (gt_mix64(id) & mask);
            wrong += md_bits_get(&b, id + 1) != 0;
        }
        CHECK(!wrong, "width %u: %llu values wrong", b.width, (unsigned long long)wrong);
        if (nowhere)
            CHECK(b.spill.failed && b.spilled_pages == 0 && b.resident == 40,
                  "width %u, no spill file: %llu pages spilled, %zu in memory", b.width,
                  (unsigned long long)b.spilled_pages, b.resident);
        else
            CHECK(b.spilled_pages > 0 && b.read_back > 0 && b.resident <= 2,
                  "width %u: %llu pages spilled, %llu read back, %zu in memory", b.width,
                  (unsigned long long)b.spilled_pages, (unsigned long long)b.read_back, b.resident);
        wrong = md_bits_set(&b, 1ull << 32, 1) != -1 || md_bits_get(&b, 1ull << 32) != 0;
        CHECK(!wrong, "an id past 32 bits is not kept");
        md_bits_free(&b);
    }
}

typedef struct log_check {
    uint64_t next, wrong;
} log_check;

static void check_next(void *ctx, uint64_t v)
{
    log_check *c = ctx;
    c->wrong += v != gt_mix64(c->next++);
}

/* 200,000 numbers (three full chunks and a part) come back in order; with a spill file the full
 * chunks went there and memory holds one chunk. */
static void test_log(void)
{
    enum { N = 200000 };
    int nowhere = getenv("GPUTRACE_TMPDIR") != NULL;
    gt_u64_log l;
    memset(&l, 0, sizeof l);
    for (uint64_t i = 0; i < N; i++)
        gt_u64_log_add(&l, gt_mix64(i));
    log_check c = {0, 0};
    gt_u64_log_each(&l, check_next, &c);
    CHECK(c.next == N && c.wrong == 0 && l.n == N, "%llu of %d read back, %llu wrong",
          (unsigned long long)c.next, N, (unsigned long long)c.wrong);
    size_t chunks = N / GT_U64_LOG_CHUNK;
    if (nowhere)
        CHECK(l.n_spilled == 0 && l.n_kept == chunks, "no spill file: %zu chunks spilled, %zu kept",
              l.n_spilled, l.n_kept);
    else
        CHECK(l.n_spilled == chunks && l.n_kept == 0 &&
                  gt_u64_log_bytes(&l) == GT_U64_LOG_CHUNK * sizeof(uint64_t),
              "%zu chunks spilled, %zu kept, %zu bytes in memory", l.n_spilled, l.n_kept,
              gt_u64_log_bytes(&l));
    gt_u64_log_free(&l);
}

int main(void)
{
    test_pages();
    test_log();
    setenv("GPUTRACE_TMPDIR", "/nonexistent-gputrace-dir", 1); /* nowhere to spill: in memory */
    test_pages();
    test_log();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_spill: all checks passed\n");
    return failures != 0;
}
