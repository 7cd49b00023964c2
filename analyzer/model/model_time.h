/* model_time.h — the time builder (model_time.c): NVTX ranges, GPU busy time and idle gaps, and
 * what the CPU's calls were doing in each gap (pass 2). */
#ifndef GT_MODEL_TIME_H
#define GT_MODEL_TIME_H

#include "model_core.h"

void md_on_nvtx(gt_proc *p, pass_state *s, const gt_rec_nvtx *v, uint32_t tid);
/* End of pass 1: the GPU's busy intervals merged, its first and last time, busy time and span,
 * the timeline's bins. */
void md_busy(gt_proc *p, pass_state *s);
/* The idle gaps between the busy intervals; made after the steps are chosen and the step
 * finder's inputs freed, so that the two, both growing with the run, never peak together. */
void md_gaps(gt_proc *p, const pass_state *s);
void md_gap_to_last_step(gt_proc *p); /* after the steps are chosen */
int md_api_category_for_gap(const gt_record *r, const gt_api_common *c, uint32_t sync_kind,
                            const gt_rec_api_memcpy *m);
void md_attribute_to_gaps(gt_proc *p, int category, uint64_t a, uint64_t b);

#endif
