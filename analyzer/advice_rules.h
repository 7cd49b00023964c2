/* advice_rules.h — what advice.c lends the rules kept in files of their own (advice_cudnn.c):
 * building an item (id, message, evidence, saving) and the steady step. Not for use outside
 * advice*.c. */
#ifndef GT_ADVICE_RULES_H
#define GT_ADVICE_RULES_H

#include "advice.h"

gt_advice *gt_adv_add(gt_advice_list *l, const gt_proc *p, const char *id, int severity);
void gt_adv_msg(gt_advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_adv_ev(gt_advice *a, const char *key, double value, const char *unit);
void gt_adv_saving(gt_advice *a, double ms, int per_step); /* per_step: 1 per steady step */
int gt_adv_has_steps(const gt_proc *p);
double gt_adv_step_ms(const gt_proc *p); /* the median step, or the whole steady window */

/* advice_cudnn.c */
void gt_adv_rule_cudnn_benchmark(const gt_proc *p, gt_advice_list *l);

#endif
