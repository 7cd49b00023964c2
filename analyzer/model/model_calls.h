/* model_calls.h — the calls builder (model_calls.c): CPU calls in pass 1 (API tables, copies by
 * direction and memory kind, sync stalls by call site, cuBLAS GEMM shapes), call-site stacks
 * (their Python frames tell the framework and the compiler), the launch entry point. */
#ifndef GT_MODEL_CALLS_H
#define GT_MODEL_CALLS_H

#include "model_core.h"

void md_on_api(gt_proc *p, pass_state *s, const gt_record *r);
void md_on_stack(gt_proc *p, pass_state *s, const gt_record *r);
void md_resolve_stacks(gt_proc *p, pass_state *s);
void md_launch_entry(gt_proc *p);

#endif
