/* report_html.h — `gputrace report --html FILE`: the report as one self-contained HTML page. */
#ifndef GT_REPORT_HTML_H
#define GT_REPORT_HTML_H

#include "advice.h"
#include "model.h"

/* Writes the page to path (outfile.h: whole or not at all). 0 ok, -1 with the reason printed. */
int gt_report_html(const gt_run *run, const gt_advice_list *adv, const char *path, int top_n);

#endif
