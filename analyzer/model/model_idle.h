/* model_idle.h — the idle builder (model_idle.c): what the CPU was doing in each idle gap of the
 * GPU (the cause of each gap), from pass 2's calls and the phases. */
#ifndef GT_MODEL_IDLE_H
#define GT_MODEL_IDLE_H

#include "model_core.h"

void md_idle_on_thread(pass_state *s, const gt_record *r);
void md_idle_on_api(gt_proc *p, pass_state *s, const gt_record *r, const gt_api_common *c,
                    int blocking);
void md_idle_on_kernel(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k, int is_nccl);
void md_idle_on_gpu_memcpy(gt_proc *p, pass_state *s, const gt_rec_gpu_memcpy *m);
void md_idle_finish(gt_proc *p, pass_state *s);
void md_idle_assign(gt_proc *p);
void md_idle_collectives(gt_proc *p); /* the gaps' collective cover, again from zero */

#endif
