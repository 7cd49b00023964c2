/* op_link.c — GPU operations to the calls that caused them, one rule for every output (op_link.h).
 * This is the wiring the report's model and the converter each used to do on their own, with
 * two rules for pairs; the linkers themselves are kernel_link.c (queued time) and order_link.c
 * (anchors and launch order). */
#include "op_link.h"

#include <stdlib.h>
#include <string.h>

#include "gtrace_api.h"
#include "util.h"

/* Calls older than this before the newest queued time are forgotten (kernel_link.h). */
#define LINK_WINDOW_NS (10ull * 1000000000ull)
/* A kernel can be read before its call when the call's thread ring was drained later: it waits
 * (up to GT_OP_LINK_PENDING of them) for calls of threads active within this before it. */
#define PENDING_RECENT_NS (1000000000ull)
/* Anchors and launch order are decided this far behind the newest time read (order_link.h). */
#define ORDER_WINDOW_NS (500ull * 1000000ull)
#define SLOT_BITS 18
/* Kernels without a queued time before the time linker stops keeping calls: a file recorded
 * without queued times (callback pairs, format 1.0) would otherwise keep every call it has, for
 * kernels that can never be linked by time. A kernel with a queued time turns it on again. */
#define NO_QUEUED_KERNELS 1024

static gt_op_link_slot *slot_of(const gt_op_links *l, uint64_t corr)
{
    return &l->slots[gt_hash_slot(corr, SLOT_BITS)];
}

uint64_t gt_op_links_call(const gt_op_links *l, uint64_t corr, int *how)
{
    const gt_op_link_slot *s = corr ? slot_of(l, corr) : NULL;
    if (!s || s->corr != corr)
        return 0;
    if (how)
        *how = s->how;
    return s->call;
}

static void decide(gt_op_links *l, uint64_t corr, uint64_t call, int how)
{
    if (!corr || !call || gt_op_links_call(l, corr, NULL))
        return;
    *slot_of(l, corr) = (gt_op_link_slot){.corr = corr, .call = call, .how = how};
    l->emit(l->ctx, corr, call, how);
}

static bool order_paired(void *ctx, uint64_t corr)
{
    return gt_op_links_call(ctx, corr, NULL) != 0;
}

static void order_emit(void *ctx, uint64_t corr, uint64_t call)
{
    decide(ctx, corr, call, GT_LINK_ORDER);
}

int gt_op_links_init(gt_op_links *l, uint32_t hdr_flags, gt_op_link_emit_fn emit, void *ctx)
{
    memset(l, 0, sizeof *l);
    l->by_order = (hdr_flags & GT_HDR_ORDER_LINKS) != 0;
    l->emit = emit;
    l->ctx = ctx;
    gt_linker_init(&l->linker, LINK_WINDOW_NS);
    gt_olink_init(&l->olinker, ORDER_WINDOW_NS, order_paired, order_emit, l);
    l->slots = calloc((size_t)1 << SLOT_BITS, sizeof *l->slots);
    l->out_of_memory = l->slots == NULL;
    return l->slots ? 0 : -1;
}

void gt_op_links_free(gt_op_links *l)
{
    gt_linker_free(&l->linker);
    gt_olink_free(&l->olinker);
    free(l->slots);
    l->slots = NULL;
}

/* A kernel without a pair gets its call from its queued time; one read before its call waits. */
static void link_by_time(gt_op_links *l, const gt_rec_gpu_kernel *k)
{
    if (!k->queued_ns || !k->corr_id || gt_op_links_call(l, k->corr_id, NULL))
        return;
    uint64_t call = gt_linker_find(&l->linker, k->queued_ns, k->name_id);
    if (call) {
        decide(l, k->corr_id, call, GT_LINK_TIME);
        return;
    }
    if (!gt_linker_call_may_follow(&l->linker, k->queued_ns, PENDING_RECENT_NS))
        return;
    if (l->n_pending == GT_OP_LINK_PENDING) /* the oldest gives up: it stays unlinked */
        memmove(l->pending, l->pending + 1, (GT_OP_LINK_PENDING - 1) * sizeof *l->pending);
    else
        l->n_pending++;
    l->pending[l->n_pending - 1] =
        (gt_op_link_pending){.corr = k->corr_id, .queued = k->queued_ns, .name_id = k->name_id};
}

/* Keep calls for the time linker only while kernels carry queued times (NO_QUEUED_KERNELS). */
static void time_linker_track(gt_op_links *l, const gt_rec_gpu_kernel *k)
{
    if (k->queued_ns) {
        l->queued_seen = 1;
        l->time_off = 0;
        return;
    }
    if (l->queued_seen || l->time_off || ++l->kernels_unqueued < NO_QUEUED_KERNELS)
        return;
    l->time_off = 1; /* nothing it keeps can be linked: free it (the stats stay) */
    gt_link_stats st = l->linker.st;
    gt_linker_free(&l->linker);
    gt_linker_init(&l->linker, LINK_WINDOW_NS);
    l->linker.st = st;
}

/* A call arrived: the kernels waiting for it are linked now. */
static void link_pending(gt_op_links *l, const gt_record *r)
{
    gt_link_call call;
    if (!l->n_pending || !gt_link_call_of_record(r, &call))
        return;
    for (uint32_t i = 0; i < l->n_pending;) {
        gt_op_link_pending *p = &l->pending[i];
        if (gt_link_call_holds(&call, p->queued, p->name_id)) {
            decide(l, p->corr, call.call_id, GT_LINK_TIME);
            l->linker.st.linked++;
            l->linker.st.no_call--;
        } else if (call.t_end <= p->queued + PENDING_RECENT_NS) {
            i++;
            continue;
        }
        *p = l->pending[--l->n_pending]; /* linked, or no call can hold it any more */
    }
}

void gt_op_links_on_record(gt_op_links *l, const gt_record *r)
{
    if (l->out_of_memory)
        return;
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        if (l->by_order) {
            gt_olink_on_record(&l->olinker, r);
        } else if (!l->time_off) {
            gt_linker_on_record(&l->linker, r); /* out of memory: the call links no kernel */
            link_pending(l, r);
        }
        return;
    }
    switch (r->kind) {
    case GT_REC_GPU_KERNEL: {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        if (l->by_order) {
            if (!gt_op_links_call(l, k.corr_id, NULL))
                gt_olink_on_record(&l->olinker, r); /* no pair (yet) */
        } else {
            time_linker_track(l, &k);
            link_by_time(l, &k);
        }
        break;
    }
    case GT_REC_GPU_EXT_CORR: {
        gt_rec_gpu_ext_corr x;
        gt_body_copy(&x, sizeof x, r);
        if (x.ext_kind == GT_EXT_CORR_KIND_OURS || x.ext_kind == 0)
            decide(l, x.corr_id, x.external_id, GT_LINK_PAIR);
        if (l->by_order) /* anchors; and a copy's pair bounds its thread's launches */
            gt_olink_on_record(&l->olinker, r);
        break;
    }
    default:
        break;
    }
}

void gt_op_links_finish(gt_op_links *l)
{
    if (!l->out_of_memory && l->by_order)
        gt_olink_finish(&l->olinker);
    l->ambiguous = l->linker.st.ambiguous + l->olinker.st.ambiguous;
    l->not_anchored = l->olinker.st.before_call + l->olinker.st.other_thread;
    l->by_stream = l->olinker.st.by_stream;
    l->other_stream = l->olinker.st.other_stream;
}

bool gt_op_link_makes_work(int cat, uint32_t func)
{
    return cat == GT_CAT_LAUNCH || cat == GT_CAT_COPY || cat == GT_CAT_SET ||
           cat == GT_CAT_CUBLAS || func == GT_FN_cudnnBackendExecute ||
           (func >= GT_FN_cudnnConvolutionForward &&
            func <= GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx) ||
           (func >= GT_FN_cudnnBatchNormalizationForwardTraining &&
            func <= GT_FN_cudnnSpatialTfSamplerBackward); /* batch norm and the other ops */
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

void gt_link_lag_decided(gt_link_lag *g, uint64_t corr, uint64_t call)
{
    if (call <= g->newest_call)
        g->call_span = max_u64(g->call_span, g->newest_call - call);
    else
        g->ahead_span = max_u64(g->ahead_span, call - g->newest_call);
    if (corr <= g->newest_corr)
        g->late_span = max_u64(g->late_span, g->newest_corr - corr);
    g->newest_decided = max_u64(g->newest_decided, corr);
}

void gt_link_lag_record(gt_link_lag *g, const gt_record *r)
{
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        gt_api_common a;
        gt_body_copy(&a, sizeof a, r);
        g->newest_call = max_u64(g->newest_call, a.corr_id);
        return;
    }
    uint64_t corr;
    if (r->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        corr = k.corr_id;
    } else if (r->kind == GT_REC_GPU_MEMCPY) {
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        corr = m.corr_id;
    } else if (r->kind == GT_REC_GPU_MEMSET) {
        gt_rec_gpu_memset m;
        gt_body_copy(&m, sizeof m, r);
        corr = m.corr_id;
    } else {
        return;
    }
    if (corr && corr <= g->newest_decided) /* its link may have been decided before it */
        g->decided_span = max_u64(g->decided_span, g->newest_decided - corr);
    g->newest_corr = max_u64(g->newest_corr, corr);
}
