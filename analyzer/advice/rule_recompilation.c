/* rule_recompilation.c — recompilation (issue 30): a framework's compilations after the first one
 * (model_compile.c: spans of the compilation phase that lie apart, separated by a step or by the
 * GPU busy most of the time between). They recur with the program's inputs (new shapes
 * recompile): their saving is their phase time over the run, with the remedy against recompiles.
 * The first compilation is rule_compilation.c's. Thresholds in docs/advice.md. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

#define RECOMPILE_RUN_SHARE 0.01 /* recompilation / run: the rule fires from here */

typedef struct recompile_data {
    size_t n;
    double ms, start_ms;
    int xla;
} recompile_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    recompile_data *d = data;
    double run = gt_proc_duration_ms(p);
    if (p->n_compilations < 2 || run <= 0)
        return 0;
    d->n = p->n_compilations - 1;
    d->ms = (double)p->recompile_ns / 1e6;
    if (d->ms / run < RECOMPILE_RUN_SHARE)
        return 0;
    d->xla = gt_proc_remedy_framework(p) == GT_FW_JAX;
    d->start_ms = (double)(p->compilations[1].start_ns - p->t_min) / 1e6;
    gt_adv_ev(a, "recompilations", (double)d->n, "count");
    gt_adv_ev(a, "recompile_ms", d->ms, "ms");
    gt_adv_ev(a, "recompile_share", 100 * d->ms / run, "%");
    gt_adv_ev(a, "first_compile_ms", (double)p->compile_first_ns / 1e6, "ms");
    gt_adv_saving(a, d->ms, GT_BASIS_RUN, GT_POOL_COMPILE,
                  "the later compilations' time in the compilation phase");
    a->t_ns = p->compilations[1].start_ns;
    return 1;
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const recompile_data *d = data;
    (void)c;
    GT_SEEN(w,
            "%zu compilation%s after the first one took %s (%.0f%% of the run), the first %s into "
            "the run: %s.",
            d->n, d->n == 1 ? "" : "s", gt_adv_ms(d->ms), a->share_pct, gt_adv_ms(d->start_ms),
            d->xla ? "a jitted function met new input shapes or static arguments (or another "
                     "function was compiled when first called)"
                   : "a compiled function met new input shapes (or another function was "
                     "compiled when first called)");
    if (d->xla)
        GT_REMEDY(w, "Pad or bucket the shapes to a few sizes, or mark fewer arguments static.");
    else
        GT_REMEDY(w, "Mark the changing dimension dynamic (torch._dynamo.mark_dynamic(x, 0)) or "
                     "compile with dynamic=True, or pad/bucket the shapes to a few sizes; "
                     "TORCH_LOGS=recompiles says why each one happened.");
}

const gt_rule gt_rule_recompilation = {"recompilation", "compilation that recurs with new inputs",
                                       GT_RULE_PROCESS, find, word};
