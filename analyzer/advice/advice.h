/* advice.h — the advice: rules that turn a run's model into findings with numbers
 * (docs/advice.md). Each rule (analyzer/advice/rule_*.c, registered in advice_table.c) finds its
 * evidence and estimates a saving; advice_engine.c decides, in one place for every rule, what
 * the saving is a share of, the severity that share gives, what two findings must not both
 * claim, the merging of one finding on several ranks and the folding of minor ones.
 *
 * For the Perfetto converter (instant events) the simple entry point is gt_advice_compute(): give
 * it the trace paths, get the items back with the time where each problem shows (t_ns, on
 * CLOCK_REALTIME like every record) and the processes (pids) it belongs to. */
#ifndef GT_ADVICE_H
#define GT_ADVICE_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum gt_severity { GT_SEV_INFO = 0, GT_SEV_WARNING = 1, GT_SEV_CRITICAL = 2 };

/* What an estimated saving is a share of (docs/advice.md, "Saving and severity"). */
enum gt_saving_basis {
    GT_BASIS_NONE = 0, /* no time figure: a failure, a risk to the results, a note */
    GT_BASIS_STEP,     /* ms per steady step, a share of the mean steady step */
    GT_BASIS_WINDOW,   /* ms over the steady window when no steps were found, a share of it */
    GT_BASIS_RUN,      /* ms over the whole run (one-time costs, whole-run totals), a share of it */
};

/* What a finding means when it is not a time to save: the severity follows from it. */
enum gt_impact {
    GT_IMPACT_TIME = 0, /* a saving: the severity follows its share */
    GT_IMPACT_FAILURE,  /* calls fail (no kernel image, driver too old): critical */
    GT_IMPACT_RISK,     /* results or figures at risk (mixed CUDA majors, lost records): warning */
    GT_IMPACT_NOTE,     /* worth knowing, nothing to save (inferred algorithms, first use): info */
};

/* The time a saving comes out of: two findings cannot both recover the same time
 * (advice_engine.c hands each pool out once, largest saving first). */
enum gt_saving_pool {
    GT_POOL_IDLE = 0, /* the steady step's GPU idle time */
    GT_POOL_BUSY,     /* the steady step's GPU busy time */
    GT_POOL_CPU,      /* the step's CPU time in calls (allocation, blocking copies) */
    GT_POOL_AUTOTUNE, /* the run's autotuning phase */
    GT_POOL_JIT,      /* the run's JIT compilation phase */
    GT_POOL_COMPILE,  /* the run's compilation phase (a framework's compiler in the process) */
    GT_POOL_RUN,      /* any other time of the run */
    GT_POOL_COUNT
};

#define GT_ADVICE_MAX_EVIDENCE 14
#define GT_ADVICE_MAX_PROCS 16 /* ranks one merged item names */

typedef struct gt_evidence {
    char key[40]; /* "sync_ms_per_step" */
    double value;
    char unit[12]; /* "ms", "%", "GB/s", "count", "" */
} gt_evidence;

typedef struct gt_advice {
    char id[32];        /* rule id: "sync-stall", "pinned-memory", ... */
    int severity;       /* enum gt_severity, from the share or the impact (advice_engine.c) */
    int impact;         /* enum gt_impact */
    char message[1024]; /* the evidence in one sentence a user can check, then the remedy */
    char remedy[512];   /* the remedy alone (also at the end of message) */
    gt_evidence evidence[GT_ADVICE_MAX_EVIDENCE];
    int n_evidence;
    int has_saving;          /* a time figure (impact TIME) */
    double saving_ms;        /* estimated saving, on basis */
    int basis;               /* enum gt_saving_basis */
    int pool;                /* enum gt_saving_pool */
    int saving_bound;        /* saving_ms is an upper bound ("up to"): severity at most info */
    double saving_before_ms; /* the rule's own figure when an earlier finding held part of it */
    char saving_source[200]; /* where the figure comes from: "this machine's pinned peak..." */
    double base_ms;          /* what share_pct is a share of: the step, the window, the run */
    double share_pct;        /* saving / base, -1 without a saving */
    int minor;               /* share under GT_ADVICE_MINOR_PCT: folded into one line */
    int framework;           /* enum gt_framework bit the remedy is worded for */
    char call_site[256];     /* "train.py:57 in train_step", "" when unknown */
    uint64_t t_ns;           /* where the problem shows in the trace (0 = whole run) */
    int pid;                 /* process it concerns (0 = the whole run) */
    int rank;                /* its rank, -1 when none */
    int n_procs;             /* > 1: the same finding on several ranks, merged */
    int pids[GT_ADVICE_MAX_PROCS], ranks[GT_ADVICE_MAX_PROCS];
} gt_advice;

typedef struct gt_advice_list {
    gt_advice *items;
    size_t n, cap;
} gt_advice_list;

/* Severity from the share (docs/advice.md): the one place these numbers live. */
#define GT_ADVICE_CRITICAL_PCT 25.0
#define GT_ADVICE_WARNING_PCT 5.0
#define GT_ADVICE_MINOR_PCT 1.0

/* Evaluate every rule on a loaded run; appends to out (initialise it to {0}). Items are sorted by
 * severity (critical first), then by share. */
void gt_advice_from_run(const gt_run *run, gt_advice_list *out);

/* Load the traces (files or run folders), evaluate, free the model. Returns 0, or -1 when no file
 * could be read as a trace (out stays empty). */
int gt_advice_compute(const char *const *paths, int n, gt_advice_list *out);

void gt_advice_list_free(gt_advice_list *list);

/* The steady state as the advice measures it, for every reader (docs/advice.md, "Step", "Steady
 * window"): the per-step figures are the steady window's totals over its steps, so the step they
 * are a share of is the mean steady step; without steps, the steady window less the JIT and
 * autotuning phases inside it stands for one step. */
int gt_adv_has_steps(const gt_proc *p);
double gt_adv_steps(const gt_proc *p);     /* steady steps, 1 without steps */
double gt_adv_window_ms(const gt_proc *p); /* the steady window less JIT and autotuning in it */
double gt_adv_step_ms(const gt_proc *p);   /* the mean steady step, or the window */
/* The steady GPU idle time per step: the idle causes, less NCCL kernels spinning for a late rank
 * (their GPU is busy; model_ranks.c counts them as waiting in a collective); and its busy time. */
double gt_adv_idle_ms(const gt_proc *p);
double gt_adv_busy_ms(const gt_proc *p);
/* One idle cause per steady step, NCCL spinning left out of the collective wait like above. */
double gt_adv_idle_cause_ms(const gt_proc *p, int cause);

/* Whether the item concerns the process pid (its own, or one of the ranks it was merged from). */
int gt_advice_has_pid(const gt_advice *a, int pid);
/* "rank 1", "ranks 0, 1", "pid 4242" or "" (run-wide) in a static buffer (gt_fmt's). */
const char *gt_advice_who(const gt_advice *a);
/* What the rule is about in a few words (the verdict's), "" when the id is unknown. */
const char *gt_advice_what(const char *id);

/* A time as the advice writes it: "412 ms", "3.52 ms", "0.034 ms", "27.0 s" (gt_fmt's buffer). */
const char *gt_advice_ms_text(double ms);
/* "~67.7 ms of the 96.3 ms step (70%)", "up to 3.1 ms of the 38.7 ms step (8%)", "~27.0 s of the
 * 33.0 s run (81%)"; "" without a saving (gt_fmt's buffer). */
const char *gt_advice_saving_text(const gt_advice *a);

/* The lists the advice is shown in, the verdict's and the report's alike: failures, then the
 * savings per steady step (or over the steady window) and those over the run, each list by its
 * share, then the findings without a time (risks, notes), then the minor ones in one line. */
enum gt_advice_group {
    GT_GROUP_FAILURE = 0,
    GT_GROUP_STEP, /* per step, or over the steady window when no steps were found */
    GT_GROUP_RUN,  /* over the run: one-time costs and whole-run totals */
    GT_GROUP_OTHER,
    GT_GROUP_MINOR,
    GT_GROUP_COUNT
};
int gt_advice_group(const gt_advice *a);
/* The groups in the order to show them: the saving list whose first item has the larger share
 * before the other. */
void gt_advice_group_order(const gt_advice_list *l, int order[GT_GROUP_COUNT]);
const char *gt_advice_group_name(int group); /* "per step", "over the run", ... */
const char *gt_impact_name(int impact);      /* "time", "failure", "risk", "note" */

const char *gt_severity_name(int severity); /* "info", "warning", "critical" */
/* "info"/"warning"/"critical" (also "warn", "crit") -> severity; -1 when unknown. */
int gt_severity_parse(const char *name);
const char *gt_saving_basis_name(int basis); /* "per_step", "steady_window", "run", NULL */

#endif
