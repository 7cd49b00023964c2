/* kernel_link.h — links a kernel to the wrapped call that launched it by the kernel's queued time.
 *
 * CUPTI's queued timestamp (format 1.1, GPUTRACE_CUPTI_LATENCY) is taken while the launching API
 * call runs, on the recording clock: the kernel belongs to the call whose [t_begin, t_end]
 * contains it. On an H200 that held for all 16,714 kernels of ResNet-18/50 steps whose callback
 * pair was known (docs/evidence/validation-log.md). Recorders default to it because a CUPTI
 * callback pair on every launch cost ~5% of a launch-bound step; callback pairs, when present,
 * still win.
 *
 * Candidates are the calls that put kernels on the GPU: launches (one whose kernel has the same
 * name first, one under another name last) and cuDNN/cuBLAS calls (their kernels come from the
 * library's own runtime, unseen by the wrappers; nested calls resolve to the outermost, like the
 * callbacks). Several threads with a candidate at the same instant make the link ambiguous: no
 * link, counted. */
#ifndef GT_KERNEL_LINK_H
#define GT_KERNEL_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gt_reader.h"

typedef struct gt_link_call {
    uint64_t t_begin, t_end;
    uint64_t call_id; /* gt_api_common.corr_id */
    uint32_t name_id; /* launches: the kernel's name id, 0 unknown */
    uint8_t is_launch;
    uint64_t max_end; /* the latest t_end of this call and those before it (the scan's stop) */
} gt_link_call;

typedef struct gt_link_thread {
    uint32_t tid;
    gt_link_call *v; /* [head, n) kept, sorted by t_begin, an outer call before its inner ones */
    size_t n, cap, head;
    uint64_t last_end; /* the latest t_end added: how far this thread's records have come */
} gt_link_thread;

typedef struct gt_link_stats {
    uint64_t linked;    /* kernels given a call by their queued time */
    uint64_t no_call;   /* queued time inside no candidate call (unwrapped library, lost call) */
    uint64_t ambiguous; /* candidates on several threads */
} gt_link_stats;

typedef struct gt_linker {
    gt_link_thread *threads;
    size_t n_threads, cap_threads;
    uint64_t window_ns;     /* calls older than this before the newest queued time are dropped */
    uint64_t newest_queued; /* 0 keeps every call (multi-pass readers) */
    uint64_t finds;
    gt_link_stats st;
} gt_linker;

/* window_ns 0: keep every call (the report reads the whole file); else keep the calls that ended
 * within window_ns of the newest queued time seen (streaming conversion: bounded memory). */
void gt_linker_init(gt_linker *l, uint64_t window_ns);
void gt_linker_free(gt_linker *l);

/* Feed every record: launches, cuDNN and cuBLAS calls that returned success are kept. Returns
 * false only when memory ran out (the call is then not a candidate). */
bool gt_linker_on_record(gt_linker *l, const gt_record *r);
bool gt_linker_add(gt_linker *l, uint32_t tid, const gt_link_call *c);

/* The call id that launched a kernel queued at queued_ns with that name, or 0. */
uint64_t gt_linker_find(gt_linker *l, uint64_t queued_ns, uint32_t kernel_name_id);

/* After a find gave 0: could the call still come? True when a thread whose records have not yet
 * reached queued_ns was active within recent_ns before it (its ring is drained later than the
 * kernel's record was: a streaming reader keeps the kernel and retries with the next calls). */
bool gt_linker_call_may_follow(const gt_linker *l, uint64_t queued_ns, uint64_t recent_ns);

/* Whether call c (kind as in gt_linker_on_record) holds a kernel queued at queued_ns with that
 * name: its interval contains the time and, for a launch, the name matches. */
bool gt_link_call_holds(const gt_link_call *c, uint64_t queued_ns, uint32_t kernel_name_id);

/* The candidate a record describes (false for other kinds and failed calls). */
bool gt_link_call_of_record(const gt_record *r, gt_link_call *out);

#endif
