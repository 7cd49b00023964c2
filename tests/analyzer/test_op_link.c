/* test_op_link.c — the one link rule (analyzer/model/op_link.c), fed hand-built records:
 * - pairs of gputrace's own kind (and 0) link, other tools' kinds and anchors do not;
 * - a decision is made once per correlation id (a later pair does not change it);
 * - queued time links a kernel, also one read before its call (pending);
 * - a file without queued times stops keeping calls after 1,024 kernels, and a kernel with a
 *   queued time turns the time linker on again. */
#include <stdio.h>
#include <string.h>

#include "../gt_check.h"
#include "gtrace_api.h"
#include "op_link.h"

typedef struct decisions {
    uint64_t corr[64], call[64];
    int how[64];
    int n;
} decisions;

static void on_link(void *ctx, uint64_t corr, uint64_t call, int how)
{
    decisions *d = ctx;
    if (d->n < 64) {
        d->corr[d->n] = corr;
        d->call[d->n] = call;
        d->how[d->n] = how;
    }
    d->n++;
}

static void feed(gt_op_links *l, uint16_t kind, uint32_t tid, const void *body, uint32_t size)
{
    gt_record r = {.kind = kind, .body_size = size, .body = body, .tid = tid};
    gt_op_links_on_record(l, &r);
}

static void pair(gt_op_links *l, uint64_t corr, uint64_t call, uint32_t kind)
{
    gt_rec_gpu_ext_corr x = {.external_id = call, .corr_id = corr, .ext_kind = kind};
    feed(l, GT_REC_GPU_EXT_CORR, 0, &x, sizeof x);
}

static void launch(gt_op_links *l, uint32_t tid, uint64_t b, uint64_t e, uint64_t call,
                   uint32_t name)
{
    gt_rec_api_launch a = {
        .c = {.t_begin_ns = b, .t_end_ns = e, .corr_id = call, .func = GT_FN_cudaLaunchKernel},
        .name_id = name};
    feed(l, GT_REC_API_LAUNCH, tid, &a, sizeof a);
}

static void kernel(gt_op_links *l, uint64_t corr, uint32_t name, uint64_t queued)
{
    gt_rec_gpu_kernel k = {.start_ns = queued + 500,
                           .end_ns = queued + 900,
                           .corr_id = corr,
                           .name_id = name,
                           .queued_ns = queued};
    feed(l, GT_REC_GPU_KERNEL, 0, &k, sizeof k);
}

static void test_pairs(void)
{
    decisions d = {0};
    gt_op_links l;
    CHECK(gt_op_links_init(&l, 0, on_link, &d) == 0, "init");
    pair(&l, 100, 10, GT_EXT_CORR_KIND_OURS);
    pair(&l, 101, 11, 0);                             /* written without a kind: ours */
    pair(&l, 102, 12, 3);                             /* CUSTOM0: the PyTorch profiler's id */
    pair(&l, 103, 13, GT_EXT_CORR_KIND_ANCHOR_BEGIN); /* an anchor is no pair */
    pair(&l, 100, 99, GT_EXT_CORR_KIND_OURS);         /* decided already: ignored */
    CHECK(d.n == 2, "2 links from pairs (got %d)", d.n);
    CHECK(d.corr[0] == 100 && d.call[0] == 10 && d.how[0] == GT_LINK_PAIR, "ours links");
    CHECK(d.corr[1] == 101 && d.call[1] == 11, "kind 0 links");
    int how = 0;
    CHECK(gt_op_links_call(&l, 100, &how) == 10 && how == GT_LINK_PAIR, "decision kept");
    CHECK(gt_op_links_call(&l, 102, NULL) == 0, "a foreign pair decides nothing");
    gt_op_links_finish(&l);
    gt_op_links_free(&l);
}

static void test_queued(void)
{
    decisions d = {0};
    gt_op_links l;
    CHECK(gt_op_links_init(&l, 0, on_link, &d) == 0, "init");
    launch(&l, 7, 1000, 2000, 1, 5);
    kernel(&l, 200, 5, 1500); /* queued inside the launch */
    CHECK(d.n == 1 && d.call[0] == 1 && d.how[0] == GT_LINK_TIME, "linked by queued time");
    /* a kernel read before its call: it waits, and links when the call comes */
    launch(&l, 8, 3000, 3100, 2, 6); /* thread 8 is active just before */
    kernel(&l, 201, 6, 3500);
    CHECK(d.n == 1, "the early kernel waits (got %d links)", d.n);
    launch(&l, 8, 3400, 3600, 3, 6);
    CHECK(d.n == 2 && d.corr[1] == 201 && d.call[1] == 3, "the waiting kernel links to its call");
    gt_op_links_finish(&l);
    gt_op_links_free(&l);
}

static void test_no_queued_times(void)
{
    decisions d = {0};
    gt_op_links l;
    CHECK(gt_op_links_init(&l, 0, on_link, &d) == 0, "init");
    for (uint64_t i = 0; i < 1100; i++) {
        launch(&l, 7, 1000 + i * 100, 1050 + i * 100, 1 + i, 5);
        kernel(&l, 1000 + i, 5, 0); /* no queued time: nothing to link by time */
    }
    CHECK(l.time_off, "calls no longer kept after 1,024 kernels without a queued time");
    CHECK(l.linker.n_threads == 0, "the time linker's calls were freed (%zu threads)",
          l.linker.n_threads);
    CHECK(d.n == 0, "no link without evidence (got %d)", d.n);
    kernel(&l, 5000, 5, 200000); /* a queued time: the time linker is on again */
    CHECK(!l.time_off, "a kernel with a queued time turns it on");
    launch(&l, 7, 300000, 301000, 9000, 5);
    kernel(&l, 5001, 5, 300500);
    CHECK(d.n == 1 && d.corr[0] == 5001 && d.call[0] == 9000, "linked by time again (got %d)", d.n);
    gt_op_links_finish(&l);
    gt_op_links_free(&l);
}

int main(void)
{
    test_pairs();
    test_queued();
    test_no_queued_times();
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
