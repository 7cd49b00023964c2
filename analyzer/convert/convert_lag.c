/* convert_lag.c — how large the converter's link caches must be for this file, measured by a first
 * streaming pass over it.
 *
 * An arrow needs both of its ends: the call's slice (the call cache, by our call id), and the GPU
 * op (by CUPTI correlation id) with the link that op_link.h decides between them. The three come
 * in file order, as far apart as the recording put them: CUPTI hands its activity buffers over in
 * batches, late (a whole flush period of calls may come before the first of their kernels), and
 * the launch-order linker decides a window behind the newest time read. Caches of a fixed size
 * forget whatever is further apart than they hold, and on a fast launch loop that is most of the
 * arrows. So the same linker the conversion uses is fed the file once before, measuring in ids
 * how far behind the newest each cache is asked for something (gt_link_lag, op_link.h): each
 * cache is then a ring twice that size, which holds every link of the file. Memory follows the
 * lag, not the length of the run. With advice, the model's first pass measures it (no pass of
 * our own: gt_convert_opts.link_lag); this pass is for conversions without. */
#include "convert_internal.h"

typedef struct cv_lag_pass {
    gt_op_links links;
    gt_link_lag lag;
} cv_lag_pass;

static void lag_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    cv_lag_pass *p = ctx;
    (void)how;
    gt_link_lag_decided(&p->lag, corr, call);
}

int cv_measure_lag(const cv_source *src, gt_link_lag *out)
{
    memset(out, 0, sizeof *out);
    gt_reader *r = NULL;
    char err[256];
    int rc = src->mem ? gt_reader_open_mem(src->mem, src->len, &r, err, sizeof err)
                      : gt_reader_open(src->path, &r, err, sizeof err);
    if (rc != GT_OPEN_OK)
        return -1;
    cv_lag_pass *p = calloc(1, sizeof *p);
    if (!p || gt_op_links_init(&p->links, gt_reader_header(r)->flags, lag_decided, p) != 0) {
        if (p)
            gt_op_links_free(&p->links);
        free(p);
        gt_reader_close(r);
        return -1;
    }
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        gt_link_lag_record(&p->lag, &rec);
        gt_op_links_on_record(&p->links, &rec);
    }
    gt_op_links_finish(&p->links);
    *out = p->lag;
    gt_op_links_free(&p->links);
    free(p);
    gt_reader_close(r);
    return 0;
}

/* The bits of a ring that holds span + 1 consecutive ids with room to spare (twice), at least
 * min_bits, at most max_bits (beyond it the links are counted as not drawn). */
unsigned cv_ring_bits(uint64_t span, unsigned min_bits, unsigned max_bits)
{
    unsigned bits = min_bits;
    while (bits < max_bits && ((uint64_t)1 << bits) < 2 * (span + 1))
        bits++;
    return bits;
}
