/* rule_first_use.c — first-use: convolutions whose first execution the recorder saw bracketed
 * like an autotuning trial, though they never tried a second plan (no Find call, no autotuner
 * frame): the first run of one plan is slow because CUDA loads the kernels' modules on first use
 * (lazy loading) and cuDNN builds the plan, not because anything was autotuned (issue 29 item 5;
 * model_cudnn.c decides). A note with its figure: paid once, nothing to turn off. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

#define FIRST_USE_MIN_MS 1.0 /* below this the first runs are not worth a line */

typedef struct first_use_data {
    double ms, execs;
    size_t ops;
} first_use_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    first_use_data *d = data;
    uint64_t first = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (!op->first_use_execs)
            continue;
        d->ops++;
        d->execs += (double)op->first_use_execs;
        d->ms += (double)op->first_use_ns / 1e6;
        if (op->first_use_first_ns && (!first || op->first_use_first_ns < first))
            first = op->first_use_first_ns;
    }
    if (!d->ops || d->ms < FIRST_USE_MIN_MS)
        return 0;
    gt_adv_impact(a, GT_IMPACT_NOTE);
    gt_adv_ev(a, "first_use_signatures", (double)d->ops, "count");
    gt_adv_ev(a, "first_use_ms", d->ms, "ms");
    a->t_ns = first ? first : p->gpu_first_ns;
    return 1;
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const first_use_data *d = data;
    (void)a;
    GT_SEEN(w,
            "The first execution of %zu convolution signature%s took %s (one plan each, no Find "
            "call, no autotuner): a first-use cost (CUDA loads kernel modules lazily, cuDNN "
            "builds the plan), not autotuning%s.",
            d->ops, d->ops == 1 ? "" : "s", gt_adv_ms(d->ms),
            c->fw == GT_FW_PYTORCH ? "; benchmark mode is off" : "");
    GT_REMEDY(w, "It is paid once; CUDA_MODULE_LOADING=EAGER moves the module loads to start-up, "
                 "a warm-up step keeps it out of timed steps.");
}

const gt_rule gt_rule_first_use = {"first-use", "first execution of convolutions (lazy loading)",
                                   GT_RULE_PROCESS, find, word};
