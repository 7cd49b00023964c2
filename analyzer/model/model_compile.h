/* model_compile.h — the compile builder (model_compile.c): a framework's compiler in the process,
 * from its stacks' compiler frames (the calls builder hands them in pass 1), the calls made with
 * one (pass 2) and its compile workers; the phases builder asks it for the compilations' spans. */
#ifndef GT_MODEL_COMPILE_H
#define GT_MODEL_COMPILE_H

#include "model_core.h"

void md_compile_on_stack_frame(gt_proc *p, pass_state *s, uint32_t stack_id, const char *file,
                               const char *func);
void md_compile_on_api(gt_proc *p, pass_state *s, const gt_api_common *c);
void md_compile_workers(gt_proc *p, const pass_state *s);
size_t md_compile_spans(gt_proc *p, const pass_state *s, const gt_phase_span *jit, size_t nj,
                        gt_phase_span **out);

#endif
