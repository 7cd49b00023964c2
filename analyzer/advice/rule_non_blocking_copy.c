/* rule_non_blocking_copy.c — non-blocking-copy: host-to-device copies that block the CPU while it
 * could queue more work: synchronous cudaMemcpy, or an asynchronous copy followed at once by a
 * stream sync with nothing in between (PyTorch's non_blocking=False). Copies from pageable memory
 * are left to pinned-memory: they block whatever the call (the driver stages them), and pinning
 * is their remedy. Measured over the run (the
 * model counts these calls over the whole run); the saving is the CPU time they blocked.
 * Thresholds: docs/advice.md. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

#define NONBLOCK_MIN_SHARE 0.01 /* blocked CPU time / run */

typedef struct nonblock_data {
    double count, ms, then_sync;
    int pinned_h2d_run;
} nonblock_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    nonblock_data *d = data;
    uint64_t ns = 0, count = 0;
    uint32_t stack = 0;
    for (int k = 0; k < 6; k++) { /* pageable copies block anyway: pinned-memory's */
        const gt_copy_agg *cp = &p->copies[GT_DIR_H2D][k];
        if (k == GT_MEM_PAGEABLE)
            continue;
        ns += cp->blocking_ns;
        count += cp->blocking_count;
        if (!stack && cp->blocking_count)
            stack = cp->top_stack;
    }
    ns += p->copy_then_sync_ns;
    count += p->copy_then_sync_count;
    double run_ms = gt_proc_duration_ms(p);
    d->ms = (double)ns / 1e6;
    if (!count || run_ms <= 0 || d->ms / run_ms < NONBLOCK_MIN_SHARE)
        return 0;
    d->count = (double)count;
    d->then_sync = (double)p->copy_then_sync_count;
    d->pinned_h2d_run = p->copies[GT_DIR_H2D][GT_MEM_PINNED].count > 0;
    gt_adv_ev(a, "blocking_copies", d->count, "count");
    gt_adv_ev(a, "blocking_ms", d->ms, "ms");
    gt_adv_ev(a, "copy_then_sync", d->then_sync, "count");
    gt_adv_ev(a, "share", 100 * d->ms / run_ms, "%");
    gt_adv_saving(a, d->ms, GT_BASIS_RUN, GT_POOL_CPU, "the CPU time the copies blocked");
    gt_adv_site(a, p, stack ? stack : p->copy_then_sync_stack);
    return 1;
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const nonblock_data *d = data;
    char at[300] = "";
    if (a->call_site[0])
        snprintf(at, sizeof at, ", mostly at %s", a->call_site);
    GT_SEEN(w,
            "%.0f host-to-device copies block the CPU until they are done (%.0f of them an "
            "asynchronous copy followed at once by a stream sync%s): %s over the run (%.1f%%), "
            "while it could have queued more work.",
            d->count, d->then_sync, at, gt_adv_ms(a->saving_ms), a->share_pct);
    switch (c->fw) {
    case GT_FW_PYTORCH:
        GT_REMEDY(w,
                  "Use x.to(device, non_blocking=True)%s, and synchronize only where the data "
                  "is needed.",
                  d->pinned_h2d_run ? "" : " from pinned memory (x.pin_memory())");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "jax.device_put is asynchronous: do not block on the transfer "
                     "(block_until_ready) before the step uses it.");
        break;
    case GT_FW_CUPY:
        GT_REMEDY(w, "Copy with arr.set(host, stream=s) on a non-default stream from pinned "
                     "memory, and synchronize only where the data is needed.");
        break;
    default:
        GT_REMEDY(w, "Use cudaMemcpyAsync from pinned memory on a stream of its own, and order "
                     "the work that needs the data with cudaEventRecord + cudaStreamWaitEvent "
                     "instead of a stream sync.");
        break;
    }
}

const gt_rule gt_rule_non_blocking_copy = {"non-blocking-copy", "blocking host-to-device copies",
                                           GT_RULE_PROCESS, find, word};
