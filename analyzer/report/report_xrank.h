/* report_xrank.h — the cross-rank analysis of per-rank summaries as text and JSON
 * (docs/report-schema.md, "Cross-rank report"; docs/many-ranks.md). */
#ifndef GT_REPORT_XRANK_H
#define GT_REPORT_XRANK_H

#include <jansson.h>
#include <stdio.h>

#include "xrank.h"

#define GT_XRANK_SCHEMA_VERSION 1

void gt_xrank_print(const gt_xrank *x, FILE *out, int top_n);
json_t *gt_xrank_json(const gt_xrank *x); /* NULL when out of memory */

#endif
