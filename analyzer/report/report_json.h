/* report_json.h — the whole report as JSON (report_json.c). */
#ifndef GT_REPORT_JSON_H
#define GT_REPORT_JSON_H

#include <jansson.h>

#include "advice.h"
#include "model.h"

/* The whole report as JSON (docs/report-schema.md): what --json prints, the HTML page renders.
 * NULL when out of memory; the caller owns the reference. */
json_t *gt_report_json(const gt_run *run, const gt_advice_list *adv, int top_n);

#endif
