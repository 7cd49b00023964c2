/* diff_steady.h — what `gputrace diff` compares like with like (issue 21 item 7): steady-state
 * per-step figures, per sample where the batch is known from the cuDNN op signatures, shares in
 * percentage points; the phases side by side; warnings when the step markers, step counts, batch
 * or work per step differ; the steps aligned one by one; the whole-run totals last, labelled as
 * such (start-up, autotuning and the run's length are in them). */
#ifndef GT_DIFF_STEADY_H
#define GT_DIFF_STEADY_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* kernels per step differing by this factor: other work in a step */
#define GT_DIFF_WORK_RATIO 1.2

/* The batch size: N of the cuDNN ops' input tensors, the one most executions ran; 0 unknown. */
int64_t gt_proc_batch(const gt_proc *p);

/* Text: warnings, the steady per-step table, phases, whole-run totals, aligned steps. */
void gt_diff_steady_text(const gt_proc *a, const gt_proc *b, FILE *out, int top_n);
/* The same as JSON members added to a pair object: "warnings", "steady", "phases",
 * "steps_aligned", "totals" (whole run). */
void gt_diff_steady_json(const gt_proc *a, const gt_proc *b, json_t *pair);

#endif
