/* advice_rules.h — what advice.c lends the rules kept in files of their own (advice_cudnn.c,
 * advice_ranks.c, advice_launch.c, advice_compile.c):
 * building an item (id, message, evidence, saving) and the steady step; and those rules' entry
 * points, which gt_advice_from_run calls. Not for use outside advice*.c. The types are only
 * declared here (advice.h defines them), so advice.c can include this without a cycle. */
#ifndef GT_ADVICE_RULES_H
#define GT_ADVICE_RULES_H

struct gt_advice;
struct gt_advice_list;
struct gt_proc;
struct gt_run;

struct gt_advice *gt_adv_add(struct gt_advice_list *l, const struct gt_proc *p, const char *id,
                             int severity);
void gt_adv_msg(struct gt_advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_adv_ev(struct gt_advice *a, const char *key, double value, const char *unit);
void gt_adv_saving(struct gt_advice *a, double ms, int per_step); /* per_step: per steady step */
int gt_adv_has_steps(const struct gt_proc *p);
double gt_adv_step_ms(const struct gt_proc *p); /* the median step, or the whole steady window */
const char *
gt_adv_per_step_word(const struct gt_proc *p); /* "per step" / "in the second half..." */
/* critical / warning / info from the saving's share of the step or the run (docs/advice.md) */
int gt_adv_severity_for_share(double share);

/* advice_cudnn.c */
void gt_adv_rule_cudnn_benchmark(const struct gt_proc *p, struct gt_advice_list *l);
/* advice_launch.c: the GPU idles between short kernels while the CPU prepares the next launch */
void gt_adv_rule_launch_bound(const struct gt_proc *p, struct gt_advice_list *l);
/* advice_compile.c: a framework's compiler in the process, first compilation and recompiles */
void gt_adv_rule_compilation(const struct gt_proc *p, struct gt_advice_list *l);
/* advice_ranks.c: the rank that holds the others back */
void gt_adv_rule_straggler(const struct gt_run *run, struct gt_advice_list *l);

#endif
