/* order_link.h — links kernels to calls without queued timestamps and without a CUPTI callback on
 * every launch (the recorder's default since format 1.2, GPUTRACE_CUPTI_LINK=order).
 *
 * Two sources of evidence, both nearly free to record:
 * - Anchors: the recorder brackets each outermost cuDNN/cuBLAS call with two cheap runtime calls
 *   whose CUPTI correlation ids it writes (GT_EXT_CORR_KIND_ANCHOR_BEGIN/END). CUPTI numbers all
 * API calls from one counter, so the kernels the library launched carry ids strictly between them.
 * - Order: a kernel launched through the wrapped runtime gets its correlation id when its launch
 *   call enters CUPTI, so on one thread the launches (in the thread's record order) and their
 *   kernels (by correlation id) come in the same order. Anchors seen on the same thread bound the
 *   ids a launch can have (after the anchor before it, before the anchor after it); inside those
 *   bounds a launch takes the first kernel of its name (or, unnamed, of its grid and block) that
 *   no other launch took, and that did not start before the launch.
 *
 * On the H200 this agreed with a callback pair for every kernel that had one (ResNet-18/50 steps,
 * docs/evidence/validation-log.md). Kernels of calls nobody wraps (cuDNN's legacy batch norm) match
 * no launch and stay unlinked, counted.
 *
 * Callback pairs (copies, sets) on a thread bound its launches like anchors.
 *
 * Once the anchored call's own record is read, a kernel inside its anchors is not linked to it if
 * it started before the call began (it cannot be the call's: such a link would be drawn
 * backwards), nor if another thread launched a kernel of its name during the call (that thread's
 * launch takes it by order). Neither happened in the H200 recordings; both are counted.
 *
 * Streaming (window_ns > 0): a kernel is looked up once the newest time read is window_ns past its
 * start; a launch is matched once a kernel above its upper bound has been looked up (one stream
 * runs in order, so every kernel below the bound has been read) and window_ns has passed; or once
 * a cudaDeviceSynchronize of its thread and device that began after it returned (its kernel
 * ended before that, so it started before) and a kernel that started window_ns after that return
 * has been read; or after 10 s without a bound. Without the sync bound a launch loop that only
 * syncs (no copy, no library call) kept 10 s of launches and kernels, and the converter's link
 * caches sized for them (issue 33: 1.35 GB). With window_ns 0 everything is decided at the end.
 *
 * Streams (issue 30): library calls on several threads at once (OpenMP threads each calling
 * cublasSgemv) put each kernel inside several calls' anchors. Each library call's record carries
 * its handle's stream (cublasGetStream_v2, cudnnGetStream), a runtime handle; the kernel carries
 * CUPTI's stream id. Which CUPTI stream a handle is, is learned from launches only: a launch on a
 * handle whose kernel it took by order shows it (streams). A kernel inside several calls' anchors
 * goes to the one call whose stream is the kernel's, once the others are known to be on other
 * streams (by their learned ids, or by another handle: two live handles are two streams); while a
 * holder's stream is not known yet the kernel waits, up to UNBOUNDED_WAIT_NS of trace time after
 * it started, then stays ambiguous. Several holders on the kernel's stream (threads sharing one
 * stream) leave it ambiguous at once; one on none of the holders' streams is none of theirs
 * (other_stream: left to the launches). One call's anchors alone are not checked by stream:
 * whole-file, the streams are learned after those kernels are taken, streaming before, and the
 * two would differ. The default
 * streams' handles (0, cudaStreamLegacy, cudaStreamPerThread) are the same stream for every thread
 * or one per thread depending on how the program was built: a default handle seen on two CUPTI
 * streams is not used to tell kernels apart. */
#ifndef GT_ORDER_LINK_H
#define GT_ORDER_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_reader.h"

typedef struct gt_olink_stats {
    uint64_t by_anchor;       /* kernels inside one anchored library call */
    uint64_t by_order;        /* kernels matched to a runtime launch */
    uint64_t kernels_no_call; /* kernels neither anchored nor matched */
    uint64_t ambiguous;       /* kernels inside the anchors of several calls */
    uint64_t launches_no_kernel;
    /* Kernels inside one call's anchors not linked to it (left to the launches, else unlinked and
     * counted in kernels_no_call): started before the call began, or a launch of their name on
     * another thread during the call may have made them (CUPTI's ids are process-wide). */
    uint64_t before_call;
    uint64_t other_thread;
    /* Kernels inside several calls' anchors linked to the one whose stream is theirs; kernels
     * inside several calls' anchors whose stream is none of theirs (left to the launches, else
     * unlinked and counted in kernels_no_call). */
    uint64_t by_stream;
    uint64_t other_stream;
} gt_olink_stats;

typedef struct gt_olink_kernel {
    uint64_t corr, start;
    uint32_t name_id;
    uint32_t device, context, stream; /* CUPTI's */
    int32_t grid[3], block[3];
    /* 0 waiting, 1 linked, 2 paired or ambiguous, 3 waits for an open anchor, 4 waits for the
     * stream of a call whose anchors hold it */
    uint8_t done;
    uint8_t checked;    /* looked up among the anchors: a launch may take it */
    uint8_t unanchored; /* inside a call's anchors but not its: not looked up again */
} gt_olink_kernel;

typedef struct gt_olink_launch {
    uint64_t t_begin, call_id;
    /* ids of the bounds around it on its thread (anchors, pairs): its kernel's id is in [lo, hi);
     * hi 0 = none yet */
    uint64_t lo, hi;
    uint64_t synced_ns; /* the end of a device sync of its thread after it (0: none yet) */
    uint64_t stream;    /* the runtime's handle */
    uint32_t name_id, tid;
    uint32_t grid[3], block[3];
    int32_t device;
} gt_olink_launch;

typedef struct gt_olink_anchor {
    uint64_t call_id, begin, end; /* end 0: the call has not ended yet */
    uint64_t seen_ns;             /* the newest time read when it was (last) seen */
    uint64_t t_begin, t_end;      /* the call's own times, from its record (0: not read yet) */
    uint64_t stream;              /* its handle's stream (runtime handle), from its record */
    int32_t device;               /* from its record, -1 unknown */
    uint32_t tid;
} gt_olink_anchor;

/* What launches showed a runtime stream handle to be: CUPTI's context and stream ids. */
typedef struct gt_olink_stream {
    uint64_t handle;
    uint32_t tid; /* cudaStreamPerThread: one stream per thread; else 0 */
    int32_t device;
    uint32_t context, stream;
    bool varies; /* a default handle seen on two CUPTI streams (per-thread default streams) */
} gt_olink_stream;

typedef struct gt_olink_thread {
    uint32_t tid;
    uint64_t last_anchor; /* correlation id of this thread's latest anchor: the next launch's lo */
    uint64_t last_match;  /* correlation id of this thread's latest matched kernel */
    size_t first_open;    /* launches[first_open..] of this thread may still wait for hi */
} gt_olink_thread;

#define GT_OLINK_MAX_STREAMS 1024

/* Answers whether a kernel's correlation id already has a callback pair (no order link then). */
typedef bool (*gt_olink_paired_fn)(void *ctx, uint64_t corr);
/* Receives each link found. */
typedef void (*gt_olink_emit_fn)(void *ctx, uint64_t corr, uint64_t call_id);

typedef struct gt_olinker {
    gt_olink_kernel *kernels; /* [0, kernels_sorted) sorted by correlation id */
    size_t n_kernels, cap_kernels, kernels_sorted;
    gt_olink_launch *launches; /* [0, launches_sorted) sorted by begin */
    size_t n_launches, cap_launches, launches_sorted;
    void *scratch; /* for merging */
    size_t scratch_bytes;
    gt_olink_anchor *anchors; /* sorted by begin */
    size_t n_anchors, cap_anchors;
    gt_olink_thread *threads;
    size_t n_threads, cap_threads;
    gt_olink_stream *streams; /* a ring of GT_OLINK_MAX_STREAMS: the oldest is forgotten */
    size_t n_streams, next_stream;
    uint64_t window_ns, newest_ns, resolved_at;
    uint64_t max_checked_corr; /* the highest id of a kernel looked up so far */
    uint64_t newest_kernel_ns; /* the latest start of a kernel read so far */
    bool out_of_memory;
    gt_olink_paired_fn paired;
    gt_olink_emit_fn emit;
    void *ctx;
    gt_olink_stats st;
} gt_olinker;

void gt_olink_init(gt_olinker *o, uint64_t window_ns, gt_olink_paired_fn paired,
                   gt_olink_emit_fn emit, void *ctx);
void gt_olink_free(gt_olinker *o);

/* Feed every record in file order: launches, anchors and kernels without a queued time are kept;
 * links may be emitted from inside. */
void gt_olink_on_record(gt_olinker *o, const gt_record *r);

/* End of the input: decide everything still waiting. */
void gt_olink_finish(gt_olinker *o);

#endif
