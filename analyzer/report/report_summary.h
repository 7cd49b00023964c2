/* report_summary.h — `report --summary`: per process, what the cross-rank analysis needs
 * (docs/report-schema.md, "Per-rank summary"). Made where a rank's trace is; only it travels. */
#ifndef GT_REPORT_SUMMARY_H
#define GT_REPORT_SUMMARY_H

#include <jansson.h>

#include "model.h"

#define GT_SUMMARY_SCHEMA "gputrace-summary"
#define GT_SUMMARY_SCHEMA_VERSION 1

/* The summary of every process of the run with CUDA activity. NULL when out of memory. */
json_t *gt_summary_json(const gt_run *run);

#endif
