/* model_steady.h — the steady builder (model_steady.c): the steady window from the steps (warm-up
 * before it), pass 2's log of what it counts, its figures per step, the idle gaps' totals. */
#ifndef GT_MODEL_STEADY_H
#define GT_MODEL_STEADY_H

#include "model_core.h"

void md_analyse_steps(gt_proc *p);
void md_steady_record(gt_proc *p, pass_state *s, const gt_record *r);
/* A blocking call (pass 2; category 0 of md_api_category_for_gap): a small gap after one is the
 * wait's, not launch overhead (md_gap_totals). */
void md_note_blocking(pass_state *s, uint64_t a, uint64_t b);
void md_steady_count(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi);
void md_gap_totals(gt_proc *p, pass_state *s, uint64_t lo, uint64_t hi);
/* The launch-latency gaps a wait returned in (after md_steady_count): sync-stall's. */
void md_after_sync_small_gaps(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi);
/* Both of the above from a third read of p->path instead of the log, for a file past the log's
 * limit (s->steady_reread): the same figures, the same sums in the same order. -1 when the file
 * cannot be opened again (the figures stay 0, as for a pass 2 cut short). */
int md_steady_reread(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi);

#endif
