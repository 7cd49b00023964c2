/* report_verdict.h — the verdict that opens `gputrace report` (issue 21 item 8, issue 29): at most
 * ten lines a user reads before the tables: the steady step and GPU busy %, the phases' shares of
 * the run, where the steady GPU idle time went, and the causes in the advice's own lists (per
 * step, over the run) with their savings, shares and call sites; when no cause stands out, the
 * largest measured idle cause. The text and the JSON "verdict" object come from one gt_verdict. */
#ifndef GT_REPORT_VERDICT_H
#define GT_REPORT_VERDICT_H

#include <jansson.h>
#include <stdio.h>

#include "advice.h"
#include "model.h"

#define GT_VERDICT_MAX_LINES 10 /* the whole block, its title included */
#define GT_VERDICT_MAX_CAUSES 8

typedef struct gt_verdict_cause {
    const gt_advice *advice;
    int group; /* enum gt_advice_group: the list it is shown in */
} gt_verdict_cause;

typedef struct gt_verdict {
    const gt_proc *p;   /* the process with the most GPU busy time; NULL: no CUDA activity */
    size_t other_procs; /* other processes with CUDA activity */
    const gt_advice_list *adv;
    gt_verdict_cause causes[GT_VERDICT_MAX_CAUSES];
    size_t n_causes; /* the advice lists' items in their order (gt_advice_group_order): failures,
                        savings per step and over the run, risks; notes and minor ones apart */
    size_t n_minor;  /* minor items (under 1%), named on one line */
} gt_verdict;

void gt_verdict_build(const gt_run *run, const gt_advice_list *adv, gt_verdict *v);
/* Prints at most GT_VERDICT_MAX_LINES lines; returns how many it printed. */
int gt_verdict_print(const gt_verdict *v, FILE *out, int color);
json_t *gt_verdict_json(const gt_verdict *v); /* JSON null when there is no process */

#endif
