/* model_steps_internal.h — what the step choice's four files share, each calling only those
 * listed after it: model_steps.c (the markers, the order they are tried in),
 * model_steps_waits.c (the last resort: the wait that ends each iteration of a loop whose work
 * changes), model_steps_pattern.c (repeating patterns: of GPU operations, or, in a GPU-sampled
 * trace, of the calls, which are recorded all along) and model_steps_take.c (a series of times
 * made the steps, or found implausible). */
#ifndef MODEL_STEPS_INTERNAL_H
#define MODEL_STEPS_INTERNAL_H

#include "model_core.h"

#define STEP_OPS_MAX (4u << 20) /* operations (or calls) kept for the pattern search */
/* STEP_OPS_MAX, or GPUTRACE_STEP_OPS_MAX (at least 64): the tests make a small trace go past it.
 * Past it, the operations go to disk (model_steps_pattern.c carries a pattern over them). */
size_t md_step_ops_max(void);
size_t md_steps_max(void); /* GT_STEPS_MAX, or GPUTRACE_STEPS_MAX (at least 2) */
/* The list is full (md_step_ops_max): it keeps its earliest 7/8 by time, the rest goes to tail
 * (time, key, and the thread where tids), and so do the operations from *cut on, set here. The
 * list stays the run's beginning, whatever order the records came in (CUPTI hands its GPU
 * records over late, the calls come at once). Returns the list's new length. */
size_t md_steps_cut(struct step_op *ops, uint32_t *tids, size_t n, gt_u64_log *tail, uint64_t *cut);
/* Where an operation at time t goes: the tail when past the cut (0: none yet). */
void md_steps_tail_add(gt_u64_log *tail, uint64_t t, uint64_t key, const uint32_t *tid);
#define STEP_PATTERN_TRIES 24 /* candidates tried, best first, before giving up */
#define STEP_MIN_REGULAR 0.9  /* share of a pattern's intervals with the usual operation count */

/* One operation of a pattern search: when, and what (the same key = the same operation). */
typedef struct step_op {
    uint64_t t, key; /* key: kernel name id, or COPY_KEY | kind << 48 | bytes, or SYNC_KEY | ..., or
                        CPU_KEY(tag) | payload for a call of a sampled trace */
} step_op;
#define COPY_KEY (1ull << 63)
#define SYNC_KEY (1ull << 62) /* | the API function, or 1 << 20 | CUPTI's sync type */
/* A blocking copy call back to the host, as a wait: its function and its size (40 bits). */
#define SYNC_COPY_BIT (1ull << 21)
#define SYNC_COPY_KEY(func, bytes)                                                                 \
    (SYNC_KEY | SYNC_COPY_BIT | ((uint64_t)(bytes) & ((1ull << 40) - 1)) << 22 | (func))
#define SYNC_COPY_BYTES(key) ((key) >> 22 & ((1ull << 40) - 1))

/* Calls of a GPU-sampled trace (model_steps_pattern.c): bits 56..61 say which kind of call, the
 * low 56 bits which one (a function or graph exec handle: user-space addresses fit). Copies and
 * syncs use COPY_KEY and SYNC_KEY as the GPU side does. */
#define CPU_KEY(tag) ((uint64_t)(tag) << 56)
#define CPU_KEY_TAG(key) ((unsigned)((key) >> 56 & 0x3f))
#define CPU_KEY_PAYLOAD(key) ((key) & ((1ull << 56) - 1))
enum cpu_key_tag {
    CPU_TAG_NONE = 0,   /* a GPU-side key */
    CPU_TAG_LAUNCH = 1, /* a kernel launch: by its function, else its name id */
    CPU_TAG_GRAPH = 2,  /* cudaGraphLaunch of one graph exec */
    CPU_TAG_LIBRARY = 3 /* a cuDNN or cuBLAS call, by its API function */
};

typedef struct chooser {
    gt_proc *p;
    pass_state *s;
    char passed[256];          /* what was passed over, for step_why */
    char iterations_note[200]; /* several iterations a step (md_steps_take_times), for step_why */
    /* the next md_steps_take_times' series is every thin-th of runs times (a long run's, thinned
     * to bound memory: model_steps_pattern.c); 0: the series is all of them */
    size_t thin, runs;
} chooser;

/* Where one key's operations are in the time-ordered operations. */
typedef struct step_key_ops {
    const size_t *pos;
    size_t n;
} step_key_ops;

/* model_steps_take.c */
void md_steps_note(chooser *c, const char *fmt, const char *a, const char *b);
void md_steps_note_pct(chooser *c, const char *fmt, const char *name, double pct);
double md_steps_median(double *v, size_t n); /* sorts v */
/* Share of the GPU's busy time between the first and the last time (1 without GPU work). */
double md_steps_busy_share(const chooser *c, uint64_t lo, uint64_t hi);
int md_steps_times_implausible(chooser *c, const uint64_t *t, size_t n, const char *what);
/* The same without the pause test: the steps' share of the GPU's work (or of the calls) only. */
int md_steps_share_implausible(chooser *c, const uint64_t *t, size_t n, const char *what);
void md_steps_take_times(chooser *c, const uint64_t *t, size_t n, int kind, const char *source);
void md_steps_set_why(chooser *c, const char *why);
/* The launches (t, in time order) of the graph launched most as the steps, of the GPU's graph
 * kernels or (from_calls) of a sampled trace's graph launch calls; graphs: how many were seen. */
int md_steps_take_graph_launches(chooser *c, const uint64_t *t, size_t n, size_t graphs,
                                 int from_calls);
/* The wait that ends X's iterations: of the waits (each one key's positions), the one that comes
 * exactly once between X's consecutive runs in STEP_MIN_REGULAR of them (the intervals from one X
 * to the next, the last to the end), of equals the later in the iteration; -1 when none. */
long md_steps_best_wait(const step_op *ops, size_t n_ops, const step_key_ops *x,
                        const step_key_ops *waits, size_t n_waits);
/* The first wait k after each X when one comes before the next X, into t (x->n at most); returns
 * how many. */
size_t md_steps_wait_times(const step_op *ops, size_t n_ops, const step_key_ops *x,
                           const step_key_ops *k, uint64_t *t);

/* model_steps_pattern.c: the repeating pattern of the GPU operations (s->ops), or of the calls
 * of a GPU-sampled trace (s->cpu_ops); 1 when it made the steps. */
int md_steps_choose_pattern(chooser *c);
/* The same of the calls (s->calls: their order changes). */
int md_steps_choose_calls(chooser *c);
/* What an operation's key names ("Memcpy DtoH 4 B", a kernel's short name, a sync's function). */
void md_steps_op_name(const chooser *c, uint64_t key, char *buf, size_t size);
/* A wait for the GPU: a CPU-blocking sync, or a copy back to the host (a read-back). */
int md_steps_waits_for_gpu(uint64_t key);

/* model_steps_waits.c: the wait that ends each iteration after an operation run once an
 * iteration, for loops whose work changes between iterations (the last resort); 1 when it made
 * the steps. */
int md_steps_choose_waits(chooser *c);

#endif
