/* rule_alloc_in_loop.c — alloc-in-loop: cudaMalloc/cudaFree in the steady state. Allocation is
 * slow and cudaFree synchronizes the device; the saving is the calls' own time per step.
 * Thresholds: docs/advice.md. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"
#include "textfmt.h"

#define ALLOC_PER_STEP 1.0 /* cudaMalloc/cudaFree calls per steady step */
#define ALLOC_MIN_CALLS 3  /* in the steady window (LOOP_MIN_CALLS without steps) */
#define LOOP_MIN_CALLS 10
#define ALLOC_MIN_SHARE 0.02 /* their API time / steady window */

typedef struct alloc_data {
    double per_step, ms;
} alloc_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    alloc_data *d = data;
    double w = gt_adv_window_ms(p);
    if (p->steady_alloc_calls < (gt_adv_has_steps(p) ? ALLOC_MIN_CALLS : LOOP_MIN_CALLS) ||
        p->steady_alloc_per_step < ALLOC_PER_STEP || w <= 0 ||
        (double)p->steady_alloc_ns / 1e6 / w < ALLOC_MIN_SHARE)
        return 0;
    d->per_step = p->steady_alloc_per_step;
    d->ms = (double)p->steady_alloc_ns / 1e6 / gt_adv_steps(p);
    gt_adv_ev(a, "alloc_calls_per_step", d->per_step, "count");
    gt_adv_ev(a, "alloc_ms_per_step", d->ms, "ms");
    gt_adv_ev(a, "alloc_calls_steady", (double)p->steady_alloc_calls, "count");
    gt_adv_ev(a, "alloc_share", 100 * (double)p->steady_alloc_ns / 1e6 / w, "%");
    gt_adv_saving(a, d->ms, gt_adv_basis(p), GT_POOL_CPU, "the allocation calls' own time");
    return 1;
}

static const char *remedy(int fw)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        return "PyTorch's caching allocator reuses memory unless it is emptied or fragmented: drop "
               "torch.cuda.empty_cache() from the loop, or set "
               "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.";
    case GT_FW_JAX:
        return "XLA allocates from its own pool unless told not to: unset "
               "XLA_PYTHON_CLIENT_ALLOCATOR=platform (and XLA_PYTHON_CLIENT_PREALLOCATE=false if "
               "memory allows).";
    case GT_FW_CUPY:
        return "Keep CuPy's memory pool (the default; cupy.cuda.set_allocator(None) turns it "
               "off) and free arrays outside the loop.";
    default:
        return "Allocate once outside the loop and reuse the buffers, or allocate "
               "stream-ordered from a pool (cudaMallocAsync / cudaFreeAsync).";
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const alloc_data *d = data;
    const gt_proc *p = c->p;
    (void)a;
    GT_SEEN(w,
            "%s cudaMalloc/cudaFree call%s %s in the steady state take %s %s; cudaFree "
            "synchronizes the device.",
            gt_mean(d->per_step), strcmp(gt_mean(d->per_step), "1") ? "s" : "", gt_adv_per(p),
            gt_adv_ms(d->ms), gt_adv_per(p));
    GT_REMEDY(w, "%s", remedy(c->fw));
}

const gt_rule gt_rule_alloc_in_loop = {"alloc-in-loop", "cudaMalloc/cudaFree in the loop",
                                       GT_RULE_PROCESS, find, word};
