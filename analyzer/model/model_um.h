/* model_um.h — the unified-memory builder (model_um.c): managed allocations, prefetches and
 * advice from the calls (pass 1), CUPTI's fault and migration counters, and the kernels' stall on
 * them over the run and in the steady window (after pass 1, once the window is known). The calls
 * and steady builders ask it which copies are prefetches: migrations, not data copies. */
#ifndef GT_MODEL_UM_H
#define GT_MODEL_UM_H

#include "model_core.h"

void md_um_on_gpu(gt_proc *p, pass_state *s, const gt_record *r);
void md_um_on_api(gt_proc *p, const gt_record *r);
/* A prefetch is recorded as a copy of managed memory: counted here, not with the data copies. */
int md_um_is_prefetch(uint32_t func);
void md_um_finish(gt_proc *p, pass_state *s, uint64_t lo, uint64_t hi);

#endif
