/* op_link.h — the one rule that links a GPU operation (kernel, copy, set) to the wrapped call that
 * caused it. The report's model and the converter both feed it the records of a file in file
 * order and both take its decisions as they come: what the report counts as linked is what the
 * converter draws as an arrow.
 *
 * The evidence, strongest first:
 * - a callback pair: a GT_REC_GPU_EXT_CORR of gputrace's own kind (GT_EXT_CORR_KIND_OURS, or 0
 *   from writers that wrote no kind). Pairs of other kinds belong to other tools (the PyTorch
 *   profiler pushes CUSTOM0/1 ids): their "external id" is not one of our calls, so they link
 *   nothing. Anchors (order_link.h) are not pairs either.
 * - anchors and launch order (order_link.h), for files recorded with GT_HDR_ORDER_LINKS;
 * - otherwise the kernel's queued time (kernel_link.h).
 * One kind of evidence per file besides pairs (the header says which). A decision is made once
 * per CUPTI correlation id and given to the consumer through emit(); a later pair for an id
 * already decided is ignored (it names the same call).
 *
 * Streaming: calls and kernels are kept within fixed windows behind the newest time read, so
 * memory is bounded whatever the file's size; decisions are remembered in a fixed ring for
 * gt_op_links_call(). */
#ifndef GT_OP_LINK_H
#define GT_OP_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "gt_reader.h"
#include "kernel_link.h"
#include "order_link.h"

enum gt_link_how { GT_LINK_NONE = 0, GT_LINK_PAIR = 1, GT_LINK_ORDER = 2, GT_LINK_TIME = 3 };

/* A decision: the GPU op with CUPTI correlation id corr was caused by our call call_id. */
typedef void (*gt_op_link_emit_fn)(void *ctx, uint64_t corr, uint64_t call_id, int how);

#define GT_OP_LINK_PENDING 256

typedef struct gt_op_link_slot {
    uint64_t corr, call;
    int how;
} gt_op_link_slot;

typedef struct gt_op_link_pending {
    uint64_t corr, queued;
    uint32_t name_id;
} gt_op_link_pending;

typedef struct gt_op_links {
    int by_order; /* the file has anchors and launch order (GT_HDR_ORDER_LINKS) */
    gt_linker linker;
    gt_olinker olinker;
    gt_op_link_pending pending[GT_OP_LINK_PENDING]; /* kernels read before their call */
    uint32_t n_pending;
    gt_op_link_slot *slots; /* decisions, by correlation id (a ring: the oldest are forgotten) */
    gt_op_link_emit_fn emit;
    void *ctx;
    uint64_t ambiguous;    /* kernels left unlinked: several threads could have launched them */
    uint64_t not_anchored; /* kernels between a call's anchors that cannot be its (order_link.h) */
    uint64_t by_stream;    /* kernels of calls on several threads at once told apart by stream */
    uint64_t other_stream; /* kernels between calls' anchors on none of their streams */
    uint64_t kernels_unqueued; /* kernels without a queued time, while none had one */
    int queued_seen, time_off; /* the time linker keeps no calls while time_off */
    bool out_of_memory;
} gt_op_links;

/* Returns -1 when memory ran out (nothing is linked then). hdr_flags: the file header's flags. */
int gt_op_links_init(gt_op_links *l, uint32_t hdr_flags, gt_op_link_emit_fn emit, void *ctx);
void gt_op_links_free(gt_op_links *l);

/* Feed every record in file order. A consumer that draws calls feeds an API record after it has
 * drawn the call (a decision may name it at once), every other record before handling it. */
void gt_op_links_on_record(gt_op_links *l, const gt_record *r);

/* End of the file: decide what still waits. */
void gt_op_links_finish(gt_op_links *l);

/* The call a recent decision gave the GPU op corr, 0 none (yet). */
uint64_t gt_op_links_call(const gt_op_links *l, uint64_t corr, int *how);

/* How far apart, in ids, the file puts a call, its GPU ops and their link (a consumer that keeps
 * them in rings by id sizes the rings from it: the converter). CUPTI hands its buffers over in
 * batches, late, and the launch-order linker decides a window behind the newest time read, so
 * these are as large as the recording made them. Feed every record (before
 * gt_op_links_on_record) and every decision. Spans are the largest seen: */
typedef struct gt_link_lag {
    uint64_t call_span;    /* call ids, a link naming a call read before: newest call - call */
    uint64_t ahead_span;   /* call ids, a link naming a call not read yet: call - newest call */
    uint64_t late_span;    /* correlation ids, a link to an op read before: newest op - op */
    uint64_t decided_span; /* correlation ids, an op linked before it: newest linked - op */
    uint64_t newest_call, newest_corr, newest_decided;
} gt_link_lag;
void gt_link_lag_record(gt_link_lag *g, const gt_record *r);
void gt_link_lag_decided(gt_link_lag *g, uint64_t corr, uint64_t call);

/* Whether a call of this API function and category can put work on the GPU (a link may name
 * it): launches, copies, sets, cuBLAS, cuDNN executes and convolutions. */
bool gt_op_link_makes_work(int api_category, uint32_t func);

#endif
