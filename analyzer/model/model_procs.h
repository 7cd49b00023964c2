/* model_procs.h — every process of the run (model_procs.c): the traces' headers and the
 * recorder's .procs lines, read before the traces' passes. */
#ifndef GT_MODEL_PROCS_H
#define GT_MODEL_PROCS_H

#include "model_core.h"

void md_run_notes(gt_run *run, const char *const *paths, int n, char **list, size_t cnt);
void md_run_note_proc(gt_run *run, size_t i, const gt_proc *p);
void md_run_notes_finish(gt_run *run);
void md_run_notes_free(gt_run *run);

#endif
