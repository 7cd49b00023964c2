/* mem_stats.h — the model's memory by structure, on request (GPUTRACE_MEMORY_STATS=1). */
#ifndef GPUTRACE_MEM_STATS_H
#define GPUTRACE_MEM_STATS_H

#include "model_core.h"

/* Print what p's model and its pass state s hold now, on stderr, when GPUTRACE_MEMORY_STATS is
 * set (not "0"); when: "pass 1", "pass 2". */
void md_memory_stats(const gt_proc *p, const pass_state *s, const char *when);

#endif
