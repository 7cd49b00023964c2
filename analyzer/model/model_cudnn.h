/* model_cudnn.h — the cuDNN builder (model_cudnn.c): wrapped cuDNN calls grouped by what they ran,
 * plans and their JSON, convolution signatures, the engine or algorithm chosen, autotuning. */
#ifndef GT_MODEL_CUDNN_H
#define GT_MODEL_CUDNN_H

#include "model_core.h"

void md_on_api_cudnn(gt_proc *p, pass_state *s, const gt_record *r);
void md_on_cudnn_plan(pass_state *s, const gt_record *r);
void md_on_cudnn_sig(pass_state *s, const gt_record *r);
void md_on_cudnn_perf(pass_state *s, const gt_record *r);
void md_build_cudnn_ops(gt_proc *p, pass_state *s);
void md_build_inferred_ops(gt_proc *p);
/* When the trials of the op a cuDNN call ran ended, 0 when it was not autotuned (after
 * md_build_cudnn_ops). */
uint64_t md_cudnn_trials_end(gt_proc *p, pass_state *s, uint32_t func, uint32_t plan_id,
                             uint32_t sig_id);

#endif
