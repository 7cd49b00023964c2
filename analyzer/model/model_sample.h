/* model_sample.h — the sampling builder (model_sample.c, GPUTRACE_SAMPLE): the windows CUPTI's
 * records cover, the busy intervals and gaps cut to them, the steady window's measured part,
 * and the factor whole-run GPU totals are extrapolated by. Every later builder asks it whether a
 * time was measured. */
#ifndef GT_MODEL_SAMPLE_H
#define GT_MODEL_SAMPLE_H

#include "model_core.h"

void md_sample_on_capture(pass_state *s, const gt_record *r);
void md_sample_on_call(pass_state *s, uint16_t kind, const gt_api_common *c);
void md_sample_windows(gt_proc *p, pass_state *s);
void md_sample_clip(gt_proc *p, pass_state *s);
/* The time the windows hold of [gpu_first, gpu_last]: a sampled trace's span. */
uint64_t md_sample_span(const gt_proc *p);
void md_sample_gaps(gt_proc *p, const pass_state *s, size_t *cap);
void md_sample_bins(gt_proc *p);
void md_sample_steady(gt_proc *p, uint64_t lo, uint64_t hi);
uint64_t md_steady_scaled(const gt_proc *p, uint64_t ns);
double md_steady_gpu_steps(const gt_proc *p);
int md_in_steady_gpu(const gt_proc *p, uint64_t t);

#endif
