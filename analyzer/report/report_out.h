/* report_out.h — output helpers shared by `report` and `diff`: colour decisions, aligned text
 * tables, number formatting, and the JSON form of a process and of advice. */
#ifndef GT_REPORT_OUT_H
#define GT_REPORT_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "advice.h"
#include "model.h"

#define GT_REPORT_SCHEMA_VERSION 2 /* 2: advice savings with basis, share, impact (issue 29) */
#define GT_DIFF_SCHEMA_VERSION 1

/* Colour only when out is a terminal and NO_COLOR is unset or empty. */
int gt_use_color(FILE *out);
const char *gt_sev_color(int severity, int color); /* escape or "" */
const char *gt_color_reset(int color);
const char *gt_bold(int color);

/* A text table: add header and rows of cells, then print aligned (numbers right-aligned) and
 * fitted to the line (textfmt.h): the columns marked shrink give way, widest first, their cells
 * shortened between tokens; rows past limit are summed up as "… N more". */
#define GT_TABLE_MAX_COLS 10
typedef struct gt_table {
    int ncols;
    size_t nrows, cap;
    char **cells; /* nrows × ncols, row 0 is the header */
    int right[GT_TABLE_MAX_COLS];
    int max_width[GT_TABLE_MAX_COLS];       /* 0 = unlimited; longer cells are shortened */
    int shrink[GT_TABLE_MAX_COLS];          /* may be shortened further to fit the line */
    unsigned name_flags[GT_TABLE_MAX_COLS]; /* gt_short_name flags: GT_NAME_KERNEL */
    int under;    /* column+1 printed under its row when the line is too narrow for it, 0 none */
    size_t limit; /* rows printed, 0 = all */
    const char *more; /* after "… N more": " (--top 0 lists all)" */
} gt_table;
void gt_table_init(gt_table *t, int ncols, const char *const *header);
void gt_table_row(gt_table *t, ...); /* ncols const char * values */
void gt_table_print(const gt_table *t, FILE *out, const char *indent);
void gt_table_free(gt_table *t);

/* report_advice.c: the advice section (text, by group) and an item's JSON */
json_t *gt_advice_to_json(const gt_advice *a);
void gt_advice_print(const gt_advice_list *l, FILE *out, int color, const char *indent);
const char *gt_evidence_number(double v); /* 14640, 0.35, 12.5: never 1.464e+04 */
json_t *gt_proc_to_json(const gt_proc *p, int top_n);
/* report_phases.c: the phases line(s) of a process, and its "phases"/"phase_totals" JSON. */
void gt_phases_print(const gt_proc *p, FILE *out);
void gt_phases_json_add(json_t *o, const gt_proc *p);
json_t *gt_cudnn_op_json(const gt_proc *p, const gt_cudnn_opstat *op);
/* One item: its header (severity, id, process, estimated saving), message and call site, then
 * its saving's source and evidence when evidence is set. */
void gt_advice_print_one(const gt_advice *a, FILE *out, int color, const char *indent,
                         int evidence);
const char *gt_cudnn_mode(const gt_cudnn_opstat *op); /* "autotuned", "heuristic", "inferred"... */
const char *gt_proc_label(const gt_proc *p); /* "rank 1 (pid 123)" or "pid 123"; static buffer */

/* report_um.c: unified memory (managed allocations, faults, migrations) of a process */
int gt_um_seen(const gt_proc *p); /* anything to show */
void gt_um_print(const gt_proc *p, FILE *out);
json_t *gt_um_json(const gt_proc *p); /* null when nothing to show */

/* report_sample.c: a GPU-sampled trace (GPUTRACE_SAMPLE) in the report; nothing when unsampled */
void gt_sample_print_run(const gt_proc *p, FILE *out);
int gt_sample_verdict_line(const gt_proc *p, FILE *out); /* lines printed */
void gt_sample_print_busy(const gt_proc *p, FILE *out);
const char *gt_sample_column(const gt_proc *p, int first_bin, int bins); /* timeline shade */
void gt_sample_print_kernels(const gt_proc *p, FILE *out);
void gt_sample_print_copies(const gt_proc *p, FILE *out);
json_t *gt_sample_verdict_json(const gt_proc *p);

#endif
