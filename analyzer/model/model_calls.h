/* model_calls.h — the calls builder (model_calls.c): CPU calls in pass 1 (API tables, copies by
 * direction and memory kind, sync stalls by call site, cuBLAS GEMM shapes), call-site stacks. */
#ifndef GT_MODEL_CALLS_H
#define GT_MODEL_CALLS_H

#include "model_core.h"

void md_on_api(gt_proc *p, pass_state *s, const gt_record *r);
void md_on_stack(pass_state *s, const gt_record *r);
void md_resolve_stacks(gt_proc *p, pass_state *s);

#endif
