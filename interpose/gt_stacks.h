/* gt_stacks.h — call-site capture for the records advice points at (issue 8).
 * Native frames through libunwind (loaded lazily with dlopen: libgputrace.so must load where
 * libunwind is absent) and, in a Python process, the Python frames of the calling thread.
 * Stacks are interned: each distinct stack is written once as GT_REC_STACK; records carry its id.
 */
#ifndef GT_STACKS_H
#define GT_STACKS_H

#include <stdint.h>

enum gt_stack_reason {
    GT_STACK_FOR_ADVICE =
        1,                /* syncs, pageable/synchronous copies, allocations, cuDNN/cuBLAS calls */
    GT_STACK_FOR_ALL = 2, /* any other wrapped call (only with GPUTRACE_STACKS=all) */
};

/* Capture the caller's stack when GPUTRACE_STACKS allows it for this reason; returns the stack id
 * for gt_api_common.stack_id, or 0 (off, failed, or libunwind missing). Call inside the wrapper,
 * after gt_guard_enter. Wrappers must cope with it returning 0. */
uint32_t gt_stack_capture(int reason);

/* Called by the core at start and after each dlopen: writes GT_REC_MODULE records for new modules.
 */
void gt_stacks_note_modules(void);

#endif
