/* xrank.h — the cross-rank analysis from per-rank summaries (`report --summary`, issue 33): which
 * rank is late, at which collective, by how much in each step, whether it is the same rank (or
 * host, or GPU) every step, and how step times spread across ranks and hosts.
 *
 * Each rank's summary is read into plain arrays (xrank_load.c: one file's JSON at a time, so the
 * analysis holds the summaries' own data and no more); the collectives are matched across ranks by
 * the rule a run's traces are (coll_match.h), and the lateness figures are model_ranks.c's: at
 * each collective the last rank is late by its arrival after the median of the others', its
 * lateness in a step is that of its worst collective there, the straggler is the rank with most
 * lateness over the steady steps, and its figure is the median over those steps. */
#ifndef GT_XRANK_H
#define GT_XRANK_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* One process as its summary tells it; times are CLOCK_REALTIME ns, as in the trace. */
typedef struct gt_xrank_proc {
    char *host, *trace, *file;                      /* file: the summary it came from */
    int32_t pid, rank, local_rank, world_size, gpu; /* gpu: CUDA device ordinal, -1 unknown */
    gt_collective *colls;                           /* in order of their end */
    size_t n_colls;
    uint64_t colls_dropped, records_lost;
    gt_step *steps;
    uint64_t (*step_idle)[GT_IDLE_CAUSE_COUNT]; /* per step: GPU idle ns by enum gt_idle_cause */
    size_t n_steps, warmup;
    uint64_t steady_start_ns, steady_end_ns;
    double step_ms_median;
    size_t *idx; /* analysis: its collectives of the chosen kind */
    size_t n_idx, at;
} gt_xrank_proc;

typedef struct gt_xrank_coll { /* one collective matched on two ranks or more, counted */
    size_t index;              /* the reference rank's collective (of the chosen kind) */
    size_t slot;               /* its step (the reference's), or its index without steps */
    size_t last;               /* the last rank to arrive (index into ranks) */
    double late_ms;            /* its arrival after the median of the others' */
    double spread_ms;          /* last arrival after the first */
} gt_xrank_coll;

typedef struct gt_xrank_step { /* one step (slot) with counted collectives */
    size_t slot;
    size_t straggler; /* index into ranks: most lateness in the step */
    double late_ms;   /* its lateness there (its worst collective) */
    size_t collectives;
} gt_xrank_step;

/* What lateness follows over the steps. */
enum gt_xrank_follows {
    GT_FOLLOWS_UNKNOWN = 0, /* fewer than GT_XRANK_MIN_STEPS steps */
    GT_FOLLOWS_NONE,        /* different ranks, hosts and GPUs late in different steps */
    GT_FOLLOWS_RANK,
    GT_FOLLOWS_HOST,
    GT_FOLLOWS_GPU, /* the same device ordinal, on several hosts */
};
#define GT_XRANK_MIN_STEPS 3

typedef struct gt_xrank_rank_stat { /* per chosen rank */
    double step_ms;                 /* median of its steady steps' durations, 0 none */
    double late_ms, wait_ms;        /* per step: lateness where last, its wait for later ranks */
    size_t last_at, last_in;        /* counted collectives / steps it was last in */
    size_t host;                    /* index into hosts */
} gt_xrank_rank_stat;

typedef struct gt_xrank_host {
    const char *name;
    size_t ranks;
    double step_ms; /* median of its ranks' step times */
    size_t last_in; /* steps one of its ranks was the straggler of */
} gt_xrank_host;

typedef struct gt_xrank {
    gt_xrank_proc *procs; /* every process read */
    size_t n_procs, cap_procs;
    size_t files, files_bad;
    size_t *ranks; /* chosen: one process per rank (most collectives), in rank order */
    size_t n_ranks;
    gt_xrank_rank_stat *rank_stat; /* per chosen rank */
    gt_xrank_host *hosts;
    size_t n_hosts;
    int kind;    /* enum gt_collective_kind, -1: no kind every rank ran */
    int use_all; /* fewer than 3 steady matches: every matched collective counted */
    gt_xrank_coll *colls;
    size_t n_colls, cap_colls;
    size_t ref_collectives, unmatched; /* the reference's, those no other rank matched */
    gt_xrank_step *steps;
    size_t n_steps, cap_steps;
    int per_step;           /* slots are steps (the reference had >= 2) */
    gt_straggler straggler; /* as model.h's, figures per step; instead_ms not known here */
    int follows;            /* enum gt_xrank_follows */
    size_t follows_index;   /* the rank (index into ranks), host (into hosts) or device ordinal */
    size_t follows_steps;   /* steps it was late in */
    size_t straggler_ranks; /* distinct ranks that were a step's straggler */
    /* step time across ranks: the ranks' medians, and within one step index the spread */
    double step_ms_min, step_ms_median, step_ms_max;
    size_t fastest, slowest; /* index into ranks */
    double step_spread_median_ms, step_spread_max_ms;
    size_t step_spread_max_at; /* the step index of the largest spread */
} gt_xrank;

/* Whether a file is a per-rank summary: its opening says so (schema "gputrace-summary"). */
int gt_xrank_file_is_summary(const char *path);
/* Whether a path (file or folder) holds summaries rather than traces: a summary file, or a
 * folder with *.json summaries and no *.gtrace file. */
int gt_xrank_path_is_summary(const char *path);

/* Read the summaries (files, folders of *.json summaries, quoted glob patterns) into x. A file
 * that cannot be read or is not a summary is named on stderr and counted in files_bad. Returns
 * the processes read. */
size_t gt_xrank_load(gt_xrank *x, const char *const *paths, int n, const char *who);
/* Match, score, and find the patterns (after gt_xrank_load). */
void gt_xrank_analyse(gt_xrank *x);
void gt_xrank_free(gt_xrank *x);
void gt_xrank_proc_free(gt_xrank_proc *p); /* xrank_load.c: one process's arrays */

/* xrank_stats.c: the step-time spread, the hosts, and what lateness follows (after scoring). */
void gt_xrank_stats(gt_xrank *x);
double gt_xrank_median(double *v, size_t n);    /* sorts v */
const char *gt_xrank_follows_name(int follows); /* "rank", "host", "gpu", "none", "unknown" */

#endif
