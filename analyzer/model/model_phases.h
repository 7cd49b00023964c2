/* model_phases.h — the phases builder (model_phases.c): start-up, JIT compilation, cuDNN
 * autotuning, warm-up, steady state, tear-down, from the evidence pass 1 collects. */
#ifndef GT_MODEL_PHASES_H
#define GT_MODEL_PHASES_H

#include "model_core.h"

int md_api_is_jit(uint32_t func); /* compiles or loads code (not context creation) */
void md_phase_evidence(gt_proc *p, pass_state *s, const gt_record *r);
void md_phase_end_record(gt_proc *p, const gt_record *r);
void md_phases(gt_proc *p, pass_state *s);
void md_phase_overlaps(const gt_proc *p, uint64_t a, uint64_t b, uint64_t out[GT_PHASE_COUNT]);
/* The part of [a, b] in the steady window's GPU-measured part (model_sample.c) less JIT
 * compilation, compilation and autotuning in it: every steady figure leaves those phases out
 * alike. part, when given, gets the phases' overlaps (after md_phases). */
uint64_t md_steady_outside_phases(const gt_proc *p, uint64_t a, uint64_t b,
                                  uint64_t part[GT_PHASE_COUNT]);
/* Of the idle gaps merged into busy intervals to bound memory (md_iv_add), the part inside what
 * md_steady_outside_phases counts: ns and gaps, a bucket by the share of it inside. */
void md_merged_in_steady(const gt_proc *p, const md_merged *m, uint64_t *ns, uint64_t *gaps);

#endif
