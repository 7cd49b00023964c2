/* convert_lag.c — how large the converter's link caches must be for this file, measured by a first
 * streaming pass over it.
 *
 * An arrow needs both of its ends: the call's slice (the call cache, by our call id), and the GPU
 * op (by CUPTI correlation id) with the link that op_link.h decides between them. The three come
 * in file order, as far apart as the recording put them: CUPTI hands its activity buffers over in
 * batches, late (a whole flush period of calls may come before the first of their kernels), and
 * the launch-order linker decides a window behind the newest time read. Caches of a fixed size
 * forget whatever is further apart than they hold, and on a fast launch loop that is most of the
 * arrows. So the pass feeds the records to the same linker the conversion uses, and measures, in
 * ids, how far behind the newest each cache is asked for something: each cache is then a ring
 * twice that size, which holds every link of the file. Memory is proportional to the lag, not to
 * the length of the run. */
#include "convert_internal.h"

typedef struct cv_lag_pass {
    gt_op_links links;
    uint64_t newest_call;    /* highest call id read */
    uint64_t newest_corr;    /* highest correlation id of a GPU op read */
    uint64_t newest_decided; /* highest correlation id decided */
    cv_lag lag;
} cv_lag_pass;

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* A link decided: the call must still be in the call cache (or come later: it then waits), and
 * an op read before its link must still be in the late-op cache. */
static void lag_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    cv_lag_pass *p = ctx;
    (void)how;
    if (call <= p->newest_call)
        p->lag.call_span = max_u64(p->lag.call_span, p->newest_call - call);
    else
        p->lag.ahead_span = max_u64(p->lag.ahead_span, call - p->newest_call);
    if (corr <= p->newest_corr)
        p->lag.late_span = max_u64(p->lag.late_span, p->newest_corr - corr);
    p->newest_decided = max_u64(p->newest_decided, corr);
}

static void lag_record(cv_lag_pass *p, const gt_record *rec)
{
    if (rec->kind >= GT_REC_API && rec->kind <= GT_REC_API_CUBLAS) {
        gt_api_common a;
        gt_body_copy(&a, sizeof a, rec);
        p->newest_call = max_u64(p->newest_call, a.corr_id);
        gt_op_links_on_record(&p->links, rec); /* after: as the conversion feeds it */
        return;
    }
    if (rec->kind != GT_REC_GPU_KERNEL && rec->kind != GT_REC_GPU_MEMCPY &&
        rec->kind != GT_REC_GPU_MEMSET) {
        if (rec->kind == GT_REC_GPU_EXT_CORR)
            gt_op_links_on_record(&p->links, rec);
        return;
    }
    gt_op_links_on_record(&p->links, rec);
    uint64_t corr = 0;
    if (rec->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, rec);
        corr = k.corr_id;
    } else if (rec->kind == GT_REC_GPU_MEMCPY) {
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, rec);
        corr = m.corr_id;
    } else {
        gt_rec_gpu_memset s;
        gt_body_copy(&s, sizeof s, rec);
        corr = s.corr_id;
    }
    /* Its link may have been decided before it (a callback pair): kept until now. */
    if (corr && corr <= p->newest_decided)
        p->lag.decided_span = max_u64(p->lag.decided_span, p->newest_decided - corr);
    p->newest_corr = max_u64(p->newest_corr, corr);
}

int cv_measure_lag(const cv_source *src, cv_lag *out)
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
    while (gt_reader_next(r, &rec) == 1)
        lag_record(p, &rec);
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
