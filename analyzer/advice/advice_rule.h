/* advice_rule.h — the shape every advice rule has (issue 28 item 4, issue 29), and what the
 * rules share.
 *
 * A rule is one file, analyzer/advice/rule_<name>.c, ending with its gt_rule (id, a few words for
 * the verdict, scope and two functions), listed in the one table of advice_table.c:
 *   find  — reads the model and, when its trigger holds, fills the item: evidence (gt_adv_ev),
 *           the estimated saving with its basis, the time it comes out of and where the figure
 *           comes from (gt_adv_saving), or the impact of a finding without one (gt_adv_impact),
 *           the call site and time; its own figures for the wording go into data (a struct of its
 *           own, at most GT_RULE_DATA_MAX bytes). Returns 1 when it found something.
 *   word  — after the engine decided the saving's share and the severity: one sentence of
 *           evidence the user can check in the timeline (what, how much per step, where), then
 *           the remedy in the program's framework (c->fw), never a setting the run shows is
 *           already in effect.
 * No rule sets a severity, ranks, merges ranks or folds minor items: advice_engine.c does, for
 * all of them, from the saving. */
#ifndef GT_ADVICE_RULE_H
#define GT_ADVICE_RULE_H

#include <stddef.h>

#include "advice.h"
#include "model.h"

#define GT_RULE_DATA_MAX 1024

typedef struct gt_rule_ctx {
    const gt_run *run;
    const gt_proc *p; /* the process (for a rule over the run: the one its item concerns) */
    int fw;           /* the framework to word the remedy for: gt_proc_framework(p) */
} gt_rule_ctx;

typedef struct gt_words {
    char seen[640];   /* the evidence, one sentence */
    char remedy[512]; /* what to do */
} gt_words;

enum gt_rule_scope {
    GT_RULE_PROCESS = 0, /* once per process with CUDA activity */
    GT_RULE_PROCESS_ANY, /* once per readable process, CUDA activity or not (environment) */
    GT_RULE_RUN,         /* once per run (across processes: the straggler) */
};

typedef struct gt_rule {
    const char *id;
    const char *what; /* the cause in a few words, for the verdict */
    int scope;        /* enum gt_rule_scope */
    int (*find)(const gt_rule_ctx *c, gt_advice *a, void *data);
    void (*word)(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w);
} gt_rule;

/* The table (advice_table.c): every rule, in the order their items are built. */
extern const gt_rule *const gt_rules[];
extern const size_t gt_n_rules;

/* ------------------------------------------------------------------ for find (advice_rule.c) */

void gt_adv_ev(gt_advice *a, const char *key, double value, const char *unit);
/* The estimated saving: ms on basis, out of pool; source says where the figure comes from
 * (printf-style; "" when it is the measured time itself). */
void gt_adv_saving(gt_advice *a, double ms, int basis, int pool, const char *source, ...)
    __attribute__((format(printf, 5, 6)));
/* The same as an upper bound: the run shows at most this much (severity at most info). */
void gt_adv_bound(gt_advice *a, double ms, int basis, int pool, const char *source, ...)
    __attribute__((format(printf, 5, 6)));
void gt_adv_impact(gt_advice *a, int impact); /* a finding without a time figure */
void gt_adv_site(gt_advice *a, const gt_proc *p, uint32_t stack_id);

/* The steady state as the rules measure it (the measures themselves are in advice.h). */
int gt_adv_basis(const gt_proc *p);       /* GT_BASIS_STEP, or GT_BASIS_WINDOW without steps */
const char *gt_adv_per(const gt_proc *p); /* "per step" or "in the steady window" */
/* "the 38.7 ms step" / "the 5.4 s steady window" */
const char *gt_adv_base_words(const gt_proc *p);
const char *gt_adv_ms(double ms);    /* "412 ms", "3.52 ms", "27.0 s" (gt_fmt's buffer) */
int gt_adv_max_cc(const gt_proc *p); /* the newest GPU's compute capability, 90 for 9.0 */
/* The CPU's own work after the waits (no CUDA call) beyond the GPU's busy time in the steady
 * window, ms over the window (0 without steps): not the sync's to save were the waits gone —
 * a CPU-bound loop idles the GPU for it anyway. gpu-idle counts it, sync-stall leaves it out. */
double gt_adv_after_sync_excess_ms(const gt_proc *p);

/* ------------------------------------------------------------------ for word */

void gt_say(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define GT_SEEN(w, ...) gt_say((w)->seen, sizeof(w)->seen, __VA_ARGS__)
#define GT_REMEDY(w, ...) gt_say((w)->remedy, sizeof(w)->remedy, __VA_ARGS__)

#endif
