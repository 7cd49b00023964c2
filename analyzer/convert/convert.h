/* convert.h — turn one or several .gtrace files into one Perfetto trace (or Chrome JSON).
 *
 * Streaming: each input is read once, record by record (a caller may read along: on_record),
 * and packets are written as they are produced; per-file state is small and bounded (thread/stream
 * tables, correlation caches that forget the oldest entries). Several files (parent, workers,
 * ranks) land on one timeline: all timestamps are CLOCK_REALTIME in the inputs and are mapped to
 * BOOTTIME with the first file's header snapshot, so files from several hosts are aligned by their
 * (NTP-disciplined) realtime clocks. */
#ifndef GT_CONVERT_H
#define GT_CONVERT_H

#include <stdint.h>
#include <stdio.h>

#include "gt_reader.h"
#include "op_link.h"

enum gt_convert_format { GT_CONVERT_PERFETTO = 0, GT_CONVERT_JSON = 1 };

/* An advice item to show as an instant event on the "gputrace advice" track of a process. */
typedef struct gt_convert_advice {
    uint64_t t_ns;      /* CLOCK_REALTIME where the problem happens (0: start of the trace) */
    const char *title;  /* short: "Turn on cudnn.benchmark" */
    const char *detail; /* the numbers and the line of code; may be NULL */
    uint64_t end_ns;    /* > t_ns: a span from t_ns, a phase of the timeline (start-up, JIT
                           compilation...), drawn as a slice on the "gputrace phases" track */
} gt_convert_advice;

/* Called once per input file after all inputs were converted: report advice items with
 * emit(emit_ctx, &item) (any number). file_index counts readable inputs from 0; pid is the one
 * in the file's header. */
typedef void (*gt_convert_advice_emit)(void *emit_ctx, const gt_convert_advice *item);
typedef void (*gt_convert_advice_fn)(void *ctx, int file_index, const char *path, int32_t pid,
                                     gt_convert_advice_emit emit, void *emit_ctx);

/* Every record of input file_index (counted like advice's), in file order, as it is converted:
 * the model's second pass reads along (model.h gt_run_open), so `convert` reads each file twice
 * in all. on_file_end says whether the file was read to its end. */
typedef void (*gt_convert_record_fn)(void *ctx, int file_index, const char *path,
                                     const gt_record *r);
typedef void (*gt_convert_file_end_fn)(void *ctx, int file_index, const char *path, int complete);

/* --max-mb: a span of time kept on the timeline (CLOCK_REALTIME ns, [lo_ns, hi_ns)). */
typedef struct gt_convert_window {
    uint64_t lo_ns, hi_ns;
} gt_convert_window;

typedef struct gt_convert_opts {
    int format;   /* gt_convert_format */
    int progress; /* print a progress line on stderr (callers set it when stderr is a TTY) */
    int quiet;    /* no warnings on stderr */
    /* called for every file once all files were read (advice is decided over the whole run) */
    gt_convert_advice_fn advice;
    void *advice_ctx;
    gt_convert_record_fn on_record; /* may be NULL */
    gt_convert_file_end_fn on_file_end;
    /* the call-site table of file_index if the reader-along has it (valid until on_file_end),
     * else NULL: the converter then reads the file's stacks itself */
    struct gt_symtab *(*symtab)(void *ctx, int file_index, const char *path);
    /* the lag of file_index (op_link.h) if the reader-along measured it in a pass of its own
     * (0), else -1: the converter then reads the file once more to measure it */
    int (*link_lag)(void *ctx, int file_index, const char *path, gt_link_lag *out);
    void *record_ctx;
    /* When set (sorted, disjoint): slices that begin outside every window, and instants and
     * counter values outside them, are left out; the advice stays, and each gap gets a marker
     * on the process's "gputrace" track saying what was left out (left_out_why: which steps
     * were kept and why). convert_budget.c chooses them. */
    const gt_convert_window *keep;
    size_t n_keep;
    const char *left_out_why;
    /* When set: one instant at the start of the first file's "gputrace" track saying it (convert
     * --ranks: the ranks kept and left out), never left out by keep. */
    const char *note;
    /* When set (n_keep entries): the bytes of the events that fall in each window are added to
     * its entry (--max-mb measures the steps it chose, convert_budget.c). */
    uint64_t *keep_bytes;
} gt_convert_opts;

typedef struct gt_convert_stats {
    uint64_t files, records, events, bytes_out;
    uint64_t slices, gpu_ops, flows, counters, instants;
    uint64_t lost_records;   /* sum of GT_REC_LOST counts: shown as "records lost" instants */
    uint64_t clamped;        /* slices moved/shortened to keep every track strictly nested */
    uint64_t bad_timestamps; /* events dropped: timestamp outside the representable range */
    uint64_t unknown_records;
    /* kernels whose arrow to their call was drawn, by how the link was found (op_link.h) */
    uint64_t linked_by_time;  /* queued time (kernel_link.h) */
    uint64_t linked_by_order; /* anchors and launch order (order_link.h) */
    uint64_t linked_by_pair;  /* a callback pair */
    uint64_t links_undrawn;   /* links decided but not drawn: their call or op was forgotten */
    /* sync stalls' arrows not drawn: the op waited for was moved past the stall's end (all lanes
     * of its stream busy), so the arrow would end before it starts */
    uint64_t wait_arrows_undrawn;
    uint64_t link_ambiguous; /* kernels left unlinked: calls on several threads held their time */
    uint64_t link_not_anchored; /* between a call's anchors, not its: left to launches */
    uint64_t link_by_stream;    /* of linked_by_order: calls on several threads told apart */
    uint64_t link_other_stream; /* between calls' anchors on none of their streams */
    uint64_t left_out;          /* events left out by opts.keep (slices count once) */
    int damaged;   /* some input was truncated or damaged (converted what was readable) */
    int not_trace; /* some input could not be opened as a trace */
} gt_convert_stats;

/* Convert paths (files or folders of *.gtrace) into out. Returns the exit status: 0 all good,
 * 1 something was damaged or truncated (what was readable is converted), 2 no input was a
 * readable trace or the output could not be written. Messages go to stderr. */
int gt_convert_run(const char *const *paths, int n_paths, FILE *out, const gt_convert_opts *opts,
                   gt_convert_stats *stats);

/* Same over in-memory traces (for the fuzzer and tests). */
int gt_convert_mem(const void *const *bufs, const size_t *lens, int n, FILE *out,
                   const gt_convert_opts *opts, gt_convert_stats *stats);

/* --max-mb (convert_budget.c): the output a full conversion of these inputs would take, from the
 * size of the inputs (about GT_CONVERT_OUT_PER_IN bytes per input byte; measured on real traces).
 */
uint64_t gt_convert_estimate_bytes(const char *const *paths, int n);

/* Which whole steps to keep so that the output stays under max_bytes: the slowest and the median
 * always, then the first steady ones in order, as many as their records allow. The steps are the
 * model's (model.h) of the process with the most, weighed by the records of every input that fall
 * in them; without steps, one span from the steady start. Fills windows (sorted, merged; free
 * with free()) and a sentence saying what was kept; -1 when everything fits after all. */
struct gt_run;
typedef struct gt_convert_budget {
    gt_convert_window *keep;
    size_t n_keep;
    size_t steps_total, steps_kept;
    uint64_t kept_ns, span_ns;
    char why[320];
    /* Each window's step and the order it was chosen in (while the windows are one per step,
     * before gt_convert_budget_fit merges them); the steps the choice began with. */
    size_t *step, *rank;
    const struct gt_step *steps;
    size_t slowest, median, steady_from;
    int by_steps;
} gt_convert_budget;
int gt_convert_budget_choose(const struct gt_run *run, uint64_t max_bytes, gt_convert_budget *b);
/* The steps chosen are converted once, to nowhere, measuring each one's real bytes; the last
 * chosen are then left out until the whole fits max_bytes; the windows are merged. paths, n and
 * format: the conversion's. Returns the bytes the kept steps measured (0: not measured). */
uint64_t gt_convert_budget_fit(const char *const *paths, int n, int format, uint64_t max_bytes,
                               gt_convert_budget *b);
void gt_convert_budget_free(gt_convert_budget *b);

/* --ranks LIST (convert_ranks.c): the input files of the ranks LIST keeps ("0,3,8-11",
 * "slowest", "fastest", combined), each file under its header's rank or, without one, its
 * parent's (ppid on the same host); files of no rank are left out, unreadable ones kept (the
 * conversion says why). slowest/fastest load the model of every rank (model.h); numbers read
 * only the headers. Returns 0, or -1 with the reason in err (bad LIST, a rank not in the inputs,
 * no ranks at all). */
typedef struct gt_rank_choice {
    char **paths; /* the files kept, to convert */
    size_t n_paths;
    size_t ranks_kept, ranks_left_out;
    size_t files_left_out;         /* of ranks left out */
    size_t without_rank;           /* files of no rank (a launcher), left out */
    char kept[256], left_out[256]; /* "0-3,8" ("none"; "...,..." when long) */
    char named[320]; /* "slowest 3, fastest 0 (how they were told apart)", "" when none asked */
} gt_rank_choice;
int gt_convert_choose_ranks(const char *list, const char *const *inputs, int n_inputs,
                            gt_rank_choice *out, char *err, size_t errlen);
void gt_rank_choice_free(gt_rank_choice *c);

#endif
