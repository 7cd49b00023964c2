/* advice_internal.h — what advice.c shares with the rules in other files (advice_ranks.c). The
 * advice types by their struct tags (advice.h defines them), so that advice.c can include this
 * without a cycle. */
#ifndef GT_ADVICE_INTERNAL_H
#define GT_ADVICE_INTERNAL_H

#include "model.h"

struct gt_advice;
struct gt_advice_list;

struct gt_advice *gt_adv_item(struct gt_advice_list *l, const gt_proc *p, const char *id,
                              int severity);
void gt_adv_msg(struct gt_advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gt_adv_ev(struct gt_advice *a, const char *key, double value, const char *unit);
void gt_adv_saving(struct gt_advice *a, double ms, int per_step);
int gt_adv_has_steps(const gt_proc *p);

/* advice_ranks.c: the rank that holds the others back */
void gt_adv_rule_straggler(const gt_run *run, struct gt_advice_list *l);

#endif
