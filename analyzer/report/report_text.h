/* report_text.h — the text forms of a report: the full one (`gputrace report`, the file `record`
 * writes beside the run) and the short one `record` prints (the verdict and the advice). Both are
 * fitted to the terminal (textfmt.h). */
#ifndef GT_REPORT_TEXT_H
#define GT_REPORT_TEXT_H

#include <stdio.h>

#include "advice.h"
#include "model.h"

/* The full report: verdict, each process's sections (tables of --top rows, "… N more"), ranks,
 * advice with evidence. Returns the lines printed, -1 when out of memory. */
int gt_report_text(const gt_run *run, const gt_advice_list *adv, FILE *out, int top_n, int color);

/* record prints the short form and then where the full report, the timeline and the page are:
 * forty lines at most for a typical run. */
#define GT_REPORT_BRIEF_LINES 36

/* The verdict and the advice without their evidence, in at most max_lines lines where the advice
 * allows (the first item is always shown; the ones that do not fit are named on one line). */
int gt_report_brief(const gt_run *run, const gt_advice_list *adv, FILE *out, int color,
                    int max_lines);

#endif
