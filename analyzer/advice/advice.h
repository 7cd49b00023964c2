/* advice.h — rules that turn a run's aggregates into advice with numbers (docs/advice.md).
 *
 * For the Perfetto converter (instant events) the simple entry point is gt_advice_compute(): give
 * it the trace paths, get the items back with the time where each problem shows (t_ns, on
 * CLOCK_REALTIME like every record) and the process (pid) it belongs to. */
#ifndef GT_ADVICE_H
#define GT_ADVICE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum gt_severity { GT_SEV_INFO = 0, GT_SEV_WARNING = 1, GT_SEV_CRITICAL = 2 };

#define GT_ADVICE_MAX_EVIDENCE 12

typedef struct gt_evidence {
    char key[40]; /* "sync_ms_per_step" */
    double value;
    char unit[12]; /* "ms", "%", "GB/s", "count", "" */
} gt_evidence;

typedef struct gt_advice {
    char id[32];       /* rule id: "sync-stall", "pinned-memory", ... */
    int severity;      /* enum gt_severity */
    char message[640]; /* one or two sentences: what, how much, what to do */
    gt_evidence evidence[GT_ADVICE_MAX_EVIDENCE];
    int n_evidence;
    int has_saving;      /* 0: estimated_saving_ms is unknown (JSON null) */
    double saving_ms;    /* estimated saving, see saving_per_step */
    int saving_per_step; /* 1: saving_ms is per steady step; 0: over the whole run */
    char call_site[256]; /* "train.py:57 in train_step", "" when unknown */
    uint64_t t_ns;       /* where the problem shows in the trace (0 = whole run) */
    int pid;             /* process it concerns (0 = the whole run, e.g. straggler) */
    int rank;            /* its rank, -1 when none */
} gt_advice;

typedef struct gt_advice_list {
    gt_advice *items;
    size_t n, cap;
} gt_advice_list;

/* Evaluate every rule on a loaded run; appends to out (initialise it to {0}). Items are sorted by
 * severity (critical first), then estimated saving. */
void gt_advice_from_run(const gt_run *run, gt_advice_list *out);

/* Load the traces (files or run folders), evaluate, free the model. Returns 0, or -1 when no file
 * could be read as a trace (out stays empty). */
int gt_advice_compute(const char *const *paths, int n, gt_advice_list *out);

void gt_advice_list_free(gt_advice_list *list);

const char *gt_severity_name(int severity); /* "info", "warning", "critical" */
/* "info"/"warning"/"critical" (also "warn", "crit") -> severity; -1 when unknown. */
int gt_severity_parse(const char *name);

#endif
