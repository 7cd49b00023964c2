/* model_steps.h — the steps builder (model_steps.c, model_steps_pattern.c, model_steps_take.c;
 * model_steps_internal.h is what its files share): what pass 1 collects for the step choice, and
 * the choice itself. */
#ifndef GT_MODEL_STEPS_H
#define GT_MODEL_STEPS_H

#include "model_core.h"

void md_steps_on_kernel(pass_state *s, const gt_rec_gpu_kernel *k);
void md_steps_on_memcpy(pass_state *s, const gt_rec_gpu_memcpy *m);
void md_steps_on_api(pass_state *s, const gt_api_common *c);
void md_steps_on_copy_call(pass_state *s, const gt_rec_api_memcpy *m);
void md_steps_on_gpu_sync(pass_state *s, const gt_rec_gpu_sync *g);
void md_steps_on_call(pass_state *s, const gt_record *r); /* GPU-sampled traces only */
void md_choose_steps(gt_proc *p, pass_state *s);
void md_steps_free(pass_state *s);

#endif
