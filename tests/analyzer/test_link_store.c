/* test_link_store.c — the links pass 1 keeps for pass 2 (analyzer/model/model_core.c): a link to
 * a cuDNN call or a GEMM keeps its call; a link to any other call leaves only how it was made (2
 * bits by the GPU op's id); the last decision for an op wins whatever the compactions between
 * (a kept one superseded by a later one to a plain launch, and back); a link whose call was not
 * read yet waits, then follows what the call turns out to be; an op id past 32 bits keeps its
 * link whole; a link to no known call (UINT32_MAX) is no link. Then a million and more
 * decisions, compacted as they come, against a plain table of the truth. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_core.h"
#include "op_link.h"
#include "../gt_check.h"

#define LIBRARY_CALL(i)                                                                            \
    (0x80000000u + (i)) /* calls with a cuDNN aggregate (md_call_agg), apart from launches */

static void read_call(pass_state *s, uint32_t call, int library)
{
    if (library)
        md_call_agg_set(s, call, 7);
    md_link_call_seen(s, call);
}

static void expect(pass_state *s, uint64_t corr, int how, uint32_t call, const char *what)
{
    uint32_t got = UINT32_MAX;
    int h = md_link_of(s, corr, &got);
    CHECK(h == how && got == call, "%s: op %llu linked %d to %u, expected %d to %u", what,
          (unsigned long long)corr, h, got, how, call);
}

static void free_state(pass_state *s)
{
    md_links_free(s);
    gt_map_free(&s->call_by_corr);
}

static void test_rules(void)
{
    pass_state s;
    memset(&s, 0, sizeof s);
    read_call(&s, 10, 0);
    read_call(&s, LIBRARY_CALL(1), 1);
    md_link_add(&s, 100, 10, GT_LINK_PAIR);               /* a plain launch's kernel */
    md_link_add(&s, 101, LIBRARY_CALL(1), GT_LINK_ORDER); /* a cuDNN call's kernel */
    md_link_add(&s, 102, 11, GT_LINK_TIME);               /* call 11 not read yet */
    md_link_add(&s, 103, LIBRARY_CALL(1), GT_LINK_PAIR);  /* kept, then superseded by a launch */
    md_link_add(&s, 103, 10, GT_LINK_ORDER);
    md_link_add(&s, 104, 10, GT_LINK_ORDER); /* a launch's, then a library call's */
    md_link_add(&s, 104, LIBRARY_CALL(1), GT_LINK_TIME);
    md_link_add(&s, 105, UINT32_MAX, GT_LINK_PAIR);      /* no such call: not linked */
    md_link_add(&s, (1ull << 40) + 5, 10, GT_LINK_PAIR); /* past 32 bits: kept whole */
    read_call(&s, 11, 0);
    md_links_sort(&s);
    expect(&s, 100, GT_LINK_PAIR, UINT32_MAX, "plain launch");
    expect(&s, 101, GT_LINK_ORDER, LIBRARY_CALL(1), "library call");
    expect(&s, 102, GT_LINK_TIME, UINT32_MAX, "call read after its link");
    expect(&s, 103, GT_LINK_ORDER, UINT32_MAX, "superseded");
    expect(&s, 104, GT_LINK_TIME, LIBRARY_CALL(1), "a later library call wins");
    expect(&s, 105, 0, UINT32_MAX, "no such call");
    expect(&s, 106, 0, UINT32_MAX, "never linked");
    expect(&s, (1ull << 40) + 5, GT_LINK_PAIR, 10, "past 32 bits");
    CHECK(md_links_kept(&s) == 3, "%zu links kept, expected 3 (101, 104, past 32 bits)",
          md_links_kept(&s));
    free_state(&s);
}

/* A trace without a GPU op (links_v never allocated) sorts and answers "not linked"; under UBSan
 * this is the case that passed a NULL array to memcpy and pointer arithmetic. */
static void test_empty(void)
{
    pass_state s;
    memset(&s, 0, sizeof s);
    read_call(&s, 10, 0);
    md_links_sort(&s);
    md_links_sort(&s); /* sorting again changes nothing */
    expect(&s, 100, 0, UINT32_MAX, "no op at all");
    CHECK(md_links_kept(&s) == 0, "%zu links kept from none", md_links_kept(&s));
    free_state(&s);
}

/* 2.4 M decisions over 2 M ops, compacted as they come (only the library calls' kept): every 7th op
 * a library call's kernel, every 5th decided twice (the second to the other kind of call), every
 * 11th decided before its call is read (read 1,000 decisions later), every 13th decided again after
 * them all. small: the pack keeps 4 KB in memory (the rest goes to the spill file) and a merge
 * that reaches back more than 1,000 links rewrites the pack (the last one does), with the id
 * pages two at a time: the same answers. */
static void test_many(int small)
{
    enum { OPS = 2000000 };
    pass_state s;
    memset(&s, 0, sizeof s);
    if (small) {
        s.link_pack_memory = 4096;
        s.links_tail_max = 1000;
        s.link_how.pages_max = s.calls_seen.pages_max = s.call_agg.pages_max = 2;
    }
    uint32_t *truth_call = calloc(OPS, sizeof *truth_call);
    uint8_t *truth_how = calloc(OPS, 1);
    uint32_t *late = calloc(OPS, sizeof *late);
    size_t n_late = 0, next_late = 0;
    for (uint32_t op = 0; op < OPS; op++) {
        int library = op % 7 == 0, twice = op % 5 == 0, early = op % 11 == 0;
        uint32_t call = library ? LIBRARY_CALL(op) : 2 * op + 1;
        if (!early)
            read_call(&s, call, library);
        else
            late[n_late++] = call;
        int how = 1 + op % 3;
        md_link_add(&s, op + 1, call, (uint32_t)how);
        truth_call[op] = library ? call : UINT32_MAX;
        truth_how[op] = (uint8_t)how;
        if (twice) {
            uint32_t other = library ? 2 * op + 1 : LIBRARY_CALL(op);
            read_call(&s, other, !library);
            md_link_add(&s, op + 1, other, GT_LINK_TIME);
            truth_call[op] = library ? UINT32_MAX : other;
            truth_how[op] = GT_LINK_TIME;
        }
        for (; next_late < n_late && next_late + 1000 < op; next_late++)
            read_call(&s, late[next_late], late[next_late] >= LIBRARY_CALL(0));
    }
    for (; next_late < n_late; next_late++)
        read_call(&s, late[next_late], late[next_late] >= LIBRARY_CALL(0));
    /* every 13th op decided again long after (a compaction between): to the other kind */
    for (uint32_t op = 0; op < OPS; op += 13) {
        int library = truth_call[op] == UINT32_MAX;
        uint32_t call = library ? LIBRARY_CALL(OPS + op) : 2 * op + 2;
        read_call(&s, call, library);
        md_link_add(&s, op + 1, call, GT_LINK_PAIR);
        truth_call[op] = library ? call : UINT32_MAX;
        truth_how[op] = GT_LINK_PAIR;
    }
    md_links_sort(&s);
    int wrong = 0;
    size_t library_ops = 0;
    for (uint32_t op = 0; op < OPS; op++) {
        library_ops += truth_call[op] != UINT32_MAX;
        uint32_t call = UINT32_MAX;
        int how = md_link_of(&s, op + 1, &call);
        if ((how != truth_how[op] || call != truth_call[op]) && wrong++ < 5)
            CHECK(0, "op %u: linked %d to %u, truth %d to %u", op + 1, how, call, truth_how[op],
                  truth_call[op]);
    }
    CHECK(!wrong, "%d of %d ops linked otherwise than decided", wrong, OPS);
    CHECK(md_links_kept(&s) == library_ops,
          "%zu links kept of %d ops, %zu of them a library call's", md_links_kept(&s), OPS,
          library_ops);
    /* packed: an op id a few apart from the last, a call near the last, how: 3 bytes or so */
    double per_link = (double)md_link_pack_size(s.links_packed) / (double)library_ops;
    CHECK(per_link < 6.0, "%.2f bytes a kept link (16 unpacked)", per_link);
    if (small) { /* the pack and the pages went to disk; memory holds the index and a few KB */
        CHECK(s.links_packed->mem_base > 0 && s.links_packed->cap_bytes <= 16384,
              "pack: %llu bytes on disk, %zu in memory",
              (unsigned long long)s.links_packed->mem_base, s.links_packed->cap_bytes);
        CHECK(s.link_how.spilled_pages > 0 && s.link_how.read_back > 0 && s.link_how.resident <= 2,
              "link bits: %llu pages spilled, %llu read back, %zu in memory",
              (unsigned long long)s.link_how.spilled_pages,
              (unsigned long long)s.link_how.read_back, s.link_how.resident);
    }
    free(truth_call);
    free(truth_how);
    free(late);
    free_state(&s);
}

/* The pack itself: links with op ids far apart and near, calls going back and forth (a later op
 * of an earlier call), no call (UINT32_MAX) and op ids past 32 bits read back whole, in order
 * and by lookup in any order; an op between two kept ones is not found. spill: the pack keeps 4
 * KB in memory, the rest is read back from the spill file; then cut back into the spilled part
 * and appended again, it reads as before. */
static void test_pack(int spill)
{
    enum { N = 100000 };
    md_link *truth = calloc(N, sizeof *truth);
    md_link_pack pk;
    memset(&pk, 0, sizeof pk);
    pk.memory_max = spill ? 4096 : 0;
    uint64_t corr = 5, seed = 12345;
    for (size_t i = 0; i < N; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = seed >> 33;
        corr += r % 16 == 0 ? (r << 20) : 2 + r % 5; /* now and then a jump past 32 bits */
        uint32_t call = r % 9 == 0 ? UINT32_MAX : (uint32_t)(i / 3 + (r % 4 == 0 ? 0 : r % 50));
        truth[i] = (md_link){.corr = corr, .call = call, .how = (uint32_t)(r % 4)};
        md_link_pack_append(&pk, &truth[i]);
    }
    static md_link_pack_iter it;
    memset(&it, 0, sizeof it);
    md_link l;
    size_t n = 0, wrong = 0;
    while (md_link_pack_next(&pk, &it, &l)) {
        wrong += n >= N || memcmp(&l, &truth[n], sizeof l) != 0;
        n++;
    }
    CHECK(n == N && !wrong, "read back %zu of %d in order, %zu wrong", n, N, wrong);
    for (size_t k = 0; k < N; k++) {
        size_t i = (k * 7919) % N; /* every link once, out of order */
        int found = md_link_pack_find(&pk, truth[i].corr, &l);
        wrong += !found || memcmp(&l, &truth[i], sizeof l) != 0;
        wrong += md_link_pack_find(&pk, truth[i].corr + 1, &l) &&
                 (i + 1 == N || truth[i + 1].corr != truth[i].corr + 1);
    }
    wrong += md_link_pack_find(&pk, 4, &l); /* before the first */
    CHECK(!wrong, "%zu lookups wrong of %d", wrong, 2 * N);
    if (spill) {
        CHECK(pk.mem_base > 0 && pk.cap_bytes <= 16384, "%llu bytes spilled, %zu in memory",
              (unsigned long long)pk.mem_base, pk.cap_bytes);
        size_t from = 10; /* a block on disk: cut there, appended again */
        CHECK(pk.blocks[from].offset < pk.mem_base, "block %zu is not on disk", from);
        md_link_pack_truncate(&pk, from);
        for (size_t i = from * MD_LINK_PACK_BLOCK; i < N; i++)
            md_link_pack_append(&pk, &truth[i]);
        memset(&it, 0, sizeof it);
        for (n = 0; md_link_pack_next(&pk, &it, &l); n++)
            wrong += n >= N || memcmp(&l, &truth[n], sizeof l) != 0;
        CHECK(n == N && !wrong, "after the cut: %zu of %d read back, %zu wrong", n, N, wrong);
    }
    md_link_pack_free(&pk);
    free(truth);
}

int main(void)
{
    test_pack(0);
    test_pack(1);
    test_empty();
    test_rules();
    test_many(0);
    test_many(1);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("test_link_store: all checks passed\n");
    return failures != 0;
}
