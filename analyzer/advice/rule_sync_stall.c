/* rule_sync_stall.c — sync-stall: the CPU waits for the GPU at the same call site step after step,
 * and the GPU then idles until the CPU has queued new work (docs/advice.md).
 *
 * The saving is the GPU's idle time after those waits, not the waits: a wait that leaves the GPU
 * busy (another stream's copies kept it going, the queue did not drain) costs nothing, whatever
 * its length, and is said so. Waits inside JIT compilation or autotuning, or at an autotuner's
 * call site (cudnn_frontend::time_sorted_plan), are those phases' cost: the model leaves them
 * out of the steady counts (model_time.c). */
#include <stdio.h>
#include <string.h>

#include "advice_rule.h"
#include "textfmt.h"
#include "util.h"
#include "gtrace_api.h"

#define SYNC_MIN_SHARE 0.01   /* repeated blocking time per step / step */
#define LOOP_MIN_CALLS 10     /* without steps: waits in the steady window that make a loop */
#define SYNC_MIN_CALLS 3      /* a call site blocking this often in the steady window ... */
#define SYNC_MIN_PER_STEP 0.5 /* ... and in at least every other step repeats */
#define SYNC_BUSY_SHARE 0.1   /* idle after the waits under this share of them: little to save */

typedef struct sync_data {
    double sync_ms, calls, idle_ms;
    const char *fn;
    int gpu_stayed_busy;
} sync_data;

/* A site repeats when it blocks SYNC_MIN_CALLS+ times in the steady window and in at least every
 * other step; a single wait at the end of a loop is how work should end, not a stall. */
static int site_repeats(const gt_proc *p, uint64_t steady_count)
{
    if (!gt_adv_has_steps(p))
        return steady_count >= LOOP_MIN_CALLS;
    return steady_count >= SYNC_MIN_CALLS &&
           (double)steady_count >= SYNC_MIN_PER_STEP * p->steady_steps;
}

static const gt_site_agg *top_site(const gt_proc *p)
{
    const gt_site_agg *best = NULL;
    for (size_t i = 0; i < p->n_sync_sites; i++) {
        const gt_site_agg *s = &p->sync_sites[i];
        if (!s->in_autotuner && site_repeats(p, s->steady_count) &&
            (!best || s->steady_ns > best->steady_ns))
            best = s;
    }
    return best;
}

/* Blocking time per steady step at repeating call sites (CUPTI-only syncs count as one site). */
static double repeated_ms_per_step(const gt_proc *p, double *calls)
{
    uint64_t ns = 0, n = 0;
    for (size_t i = 0; i < p->n_sync_sites; i++)
        if (!p->sync_sites[i].in_autotuner && site_repeats(p, p->sync_sites[i].steady_count)) {
            ns += p->sync_sites[i].steady_ns;
            n += p->sync_sites[i].steady_count;
        }
    if (site_repeats(p, p->steady_cupti_sync_count)) {
        ns += p->steady_cupti_sync_ns;
        n += p->steady_cupti_sync_count;
    }
    *calls = (double)n / gt_adv_steps(p);
    return (double)ns / 1e6 / gt_adv_steps(p);
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    sync_data *d = data;
    double st = gt_adv_step_ms(p);
    d->sync_ms = repeated_ms_per_step(p, &d->calls);
    if (st <= 0 || d->sync_ms <= 0 || d->sync_ms / st < SYNC_MIN_SHARE)
        return 0;
    const gt_site_agg *top = top_site(p);
    d->fn = top && top->func ? gt_api_func_name(top->func) : NULL;
    if (top)
        gt_adv_site(a, p, top->stack_id);
    /* the GPU idles after each wait until new work arrives: the gaps that began with a wait,
     * launch latency included (a drained queue waits for the next launch every time) */
    d->idle_ms = p->steady_after_sync_idle_ms_per_step +
                 (double)p->steady_after_sync_small_ns / 1e6 / gt_adv_steps(p) -
                 gt_adv_after_sync_excess_ms(p) / gt_adv_steps(p);
    if (d->idle_ms < 0)
        d->idle_ms = 0;
    d->gpu_stayed_busy = d->idle_ms < SYNC_BUSY_SHARE * d->sync_ms;
    gt_adv_ev(a, "sync_ms_per_step", d->sync_ms, "ms");
    gt_adv_ev(a, "step_ms", st, "ms");
    gt_adv_ev(a, "sync_share", 100 * d->sync_ms / st, "%");
    gt_adv_ev(a, "sync_calls_per_step", d->calls, "count");
    gt_adv_ev(a, "sync_calls_total", (double)p->sync_count, "count");
    gt_adv_ev(a, "gpu_idle_after_sync_ms_per_step", d->idle_ms, "ms");
    if (top) {
        gt_adv_ev(a, "top_site_ms_per_step", (double)top->steady_ns / 1e6 / gt_adv_steps(p), "ms");
        gt_adv_ev(a, "top_site_calls_per_step", (double)top->steady_count / gt_adv_steps(p),
                  "count");
    }
    gt_adv_saving(a, d->idle_ms, gt_adv_basis(p), GT_POOL_IDLE,
                  "the GPU's idle time after the waits until the CPU queued new work, launch "
                  "latency included");
    return 1;
}

static const char *remedy(int fw)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        return "Drop the per-step torch.cuda.synchronize(), loss.item(), .cpu() or print of a GPU "
               "tensor, or do it every N steps (accumulate the loss on the GPU).";
    case GT_FW_JAX:
        return "Drop the per-step block_until_ready(), float(x), jax.device_get or np.asarray of "
               "a device array, or do it every N steps.";
    case GT_FW_TENSORFLOW:
        return "Drop the per-step .numpy(), float(x) or tf.print of a GPU tensor, or do it every "
               "N steps.";
    case GT_FW_CUPY:
        return "Drop the per-iteration stream.synchronize(), .get(), cupy.asnumpy or float(x), or "
               "do it every N iterations.";
    case GT_FW_NATIVE:
        return "Drop the per-step cudaDeviceSynchronize/cudaStreamSynchronize or the cudaMemcpy of "
               "a result, or do it every N steps; order work between streams with "
               "cudaEventRecord + cudaStreamWaitEvent, which do not block the CPU.";
    default:
        return "Drop the per-step synchronization (a sync call, or reading a GPU result on the "
               "CPU), or do it every N steps.";
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const sync_data *d = data;
    const gt_proc *p = c->p;
    char at[320] = "";
    if (d->fn || a->call_site[0])
        snprintf(at, sizeof at, ", mostly %s%s%s", d->fn ? d->fn : "a wait",
                 a->call_site[0] ? " at " : "", a->call_site);
    if (d->gpu_stayed_busy) {
        GT_SEEN(w,
                "The CPU waits for the GPU %s %s (%s of %s) in %s blocking call%s%s, but the "
                "GPU idles only %s after them: it is busy while the CPU waits and new work "
                "reaches it within launch latency, so removing the waits saves little here.",
                gt_adv_ms(d->sync_ms), gt_adv_per(p), gt_pct(100 * d->sync_ms / gt_adv_step_ms(p)),
                gt_adv_base_words(p), gt_mean(d->calls), strcmp(gt_mean(d->calls), "1") ? "s" : "",
                at, gt_adv_ms(d->idle_ms));
        return;
    }
    GT_SEEN(w,
            "The CPU waits for the GPU %s %s in %s blocking call%s%s; after each wait the GPU "
            "sits idle until new work arrives, %s %s (%s of %s).",
            gt_adv_ms(d->sync_ms), gt_adv_per(p), gt_mean(d->calls),
            strcmp(gt_mean(d->calls), "1") ? "s" : "", at, gt_adv_ms(a->saving_ms), gt_adv_per(p),
            gt_pct(a->share_pct), gt_adv_base_words(p));
    GT_REMEDY(w, "%s", remedy(c->fw));
}

const gt_rule gt_rule_sync_stall = {"sync-stall", "the CPU waits for the GPU", GT_RULE_PROCESS,
                                    find, word};
