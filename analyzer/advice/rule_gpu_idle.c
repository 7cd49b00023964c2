/* rule_gpu_idle.c — gpu-idle: the GPU idles in gaps of 1 ms or more while the CPU makes no CUDA
 * call, in the steady state (idle in JIT compilation or autotuning is those phases'; the waits
 * after a sync are sync-stall's, but for the CPU work after them that no removal of the sync could
 * hide). The message follows the idle cause with most steady time among those without CUDA calls
 * (model_idle.c): data loading, host work, JIT, or waiting in a collective.
 *
 * The rank that others wait for has its lateness counted by the straggler rule: it is left out
 * here. A rank that waits for a late rank has nothing to fix itself: its finding is a note. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

#define IDLE_SHARE 0.10 /* unexplained idle in gaps >= 1 ms / steady window */

typedef struct idle_data {
    double idle_ms, cause_ms;
    int cause, waits_for_rank, workers, pinned_h2d;
    double late_ms;
    int straggler_rank;
} idle_data;

/* The cause that took most of the steady idle time where the CPU made no CUDA call. */
static int cause_without_calls(const gt_proc *p)
{
    int best = GT_IDLE_UNKNOWN;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (c != GT_IDLE_CUDA_CALL && c != GT_IDLE_COPY &&
            p->steady_idle_cause_ns[c] > p->steady_idle_cause_ns[best])
            best = c;
    return best;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    const gt_straggler *st = &c->run->straggler;
    idle_data *d = data;
    double w = gt_adv_window_ms(p), steps = gt_adv_steps(p);
    double idle = (double)p->steady_idle_unexplained_ns / 1e6 + gt_adv_after_sync_excess_ms(p);
    if (w <= 0 || idle / w < IDLE_SHARE)
        return 0;
    d->cause = cause_without_calls(p);
    d->workers = p->dataloader_workers;
    d->pinned_h2d = p->copies[GT_DIR_H2D][GT_MEM_PINNED].count > 0;
    d->idle_ms = idle / steps;
    d->cause_ms = (double)p->steady_idle_cause_ns[d->cause] / 1e6 / steps;
    gt_adv_ev(a, "idle_ms_per_step", d->idle_ms, "ms");
    gt_adv_ev(a, "idle_share", 100 * idle / w, "%");
    gt_adv_ev(a, "idle_gaps", (double)p->steady_big_gaps, "count");
    gt_adv_ev(a, "largest_gap_ms", (double)p->largest_gap_ns / 1e6, "ms");
    char key[40];
    snprintf(key, sizeof key, "%s_ms_per_step", gt_idle_cause_key(d->cause));
    gt_adv_ev(a, key, d->cause_ms, "ms");
    a->t_ns = p->largest_gap_start_ns ? p->largest_gap_start_ns : p->steady_start_ns;
    if ((d->cause == GT_IDLE_COLLECTIVE || d->cause == GT_IDLE_COLLECTIVE_TRANSFER) && st->found &&
        st->pid != p->hdr.pid) {
        d->waits_for_rank = 1; /* fixed on the late rank: the straggler's saving holds it */
        d->straggler_rank = st->rank;
        d->late_ms = st->lateness_ms;
        gt_adv_impact(a, GT_IMPACT_NOTE);
        return 1;
    }
    double own = d->idle_ms;
    if (st->found && st->pid == p->hdr.pid) /* the straggler's lateness: its rule counts it */
        own -= st->lateness_ms < own ? st->lateness_ms : own;
    gt_adv_saving(a, own, gt_adv_basis(p), GT_POOL_IDLE,
                  "the GPU's idle time in gaps of 1 ms or more while the CPU made no CUDA "
                  "call%s",
                  own < d->idle_ms ? ", less this rank's lateness (the straggler advice)" : "");
    return 1;
}

/* The cause's time counts every gap; the saving leaves out the gaps after a sync (sync-stall's)
 * and a straggler's lateness (straggler's): say so when that makes the two figures differ. */
static const char *cause_note(const idle_data *d)
{
    return d->cause_ms > 1.1 * d->idle_ms ? ", with the gaps after a sync that sync-stall counts"
                                          : "";
}

static void data_loading_remedy(const idle_data *d, int fw, gt_words *w)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        if (d->workers)
            GT_REMEDY(w,
                      "The %d DataLoader workers do not keep up: more workers, a larger "
                      "prefetch_factor, cheaper transforms, or decoding on the GPU (DALI).",
                      d->workers);
        else
            GT_REMEDY(w,
                      "Load in worker processes: DataLoader(num_workers=N%s, "
                      "persistent_workers=True), or move the preprocessing to the GPU.",
                      d->pinned_h2d ? "" : ", pin_memory=True");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "Prefetch batches in a background thread (tf.data or grain with prefetch) "
                     "and jax.device_put the next batch before the step.");
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "Let tf.data overlap it: .map(..., num_parallel_calls=tf.data.AUTOTUNE) "
                     "and .prefetch(tf.data.AUTOTUNE).");
        break;
    default:
        GT_REMEDY(w, "Load the next batch while the GPU works on this one: a loader thread "
                     "filling pinned buffers, copied with cudaMemcpyAsync on a stream of its "
                     "own.");
        break;
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const idle_data *d = data;
    const gt_proc *p = c->p;
    char head[128];
    snprintf(head, sizeof head, "The GPU sits idle %s %s in gaps of 1 ms or more",
             gt_adv_ms(d->idle_ms), gt_adv_per(p));
    switch (d->cause) {
    case GT_IDLE_COLLECTIVE_TRANSFER:
        if (!d->waits_for_rank) {
            GT_SEEN(w,
                    "%s in collectives while the data moved, every rank there (%s %s; gloo "
                    "copies GPU tensors through host memory and sums them over TCP).",
                    head, gt_adv_ms(d->cause_ms), gt_adv_per(p));
            GT_REMEDY(w, "NCCL for GPU tensors, fewer and larger buckets (DDP bucket_cap_mb), or "
                         "less data (gradient compression hooks, bf16 gradients).");
            break;
        }
        /* fall through */
    case GT_IDLE_COLLECTIVE:
        if (d->waits_for_rank) {
            GT_SEEN(w,
                    "%s, waiting in a collective: this rank arrives early and waits for rank %d, "
                    "%s late per step (see the straggler advice).",
                    head, d->straggler_rank, gt_adv_ms(d->late_ms));
            GT_REMEDY(w, "Make that rank faster; nothing to fix on this one.");
        } else if (c->run->straggler.found && c->run->straggler.pid == p->hdr.pid) {
            /* the last rank: never said to be waiting */
            GT_SEEN(w,
                    "%s in collectives (%s %s): this rank arrives last (see the straggler "
                    "advice), the time is the collectives' own.",
                    head, gt_adv_ms(d->cause_ms), gt_adv_per(p));
            GT_REMEDY(w, "See the straggler advice for what this rank did before arriving.");
        } else {
            GT_SEEN(w, "%s, waiting in a collective (%s %s) for the other ranks.", head,
                    gt_adv_ms(d->cause_ms), gt_adv_per(p));
            GT_REMEDY(w, "%s",
                      c->fw == GT_FW_PYTORCH
                          ? "Overlap communication with computation (DDP bucket sizes, "
                            "gradient accumulation with no_sync()), or use NCCL "
                            "instead of gloo for GPU tensors."
                          : "Overlap communication with computation, or communicate "
                            "less often.");
        }
        break;
    case GT_IDLE_COMPILE:
        GT_SEEN(w, "%s while a compiler ran in the process (%s %s; see the compilation advice).",
                head, gt_adv_ms(d->cause_ms), gt_adv_per(p));
        GT_REMEDY(w, "Compile before the loop and keep input shapes fixed, so nothing compiles "
                     "inside it.");
        break;
    case GT_IDLE_JIT:
        GT_SEEN(w, "%s while the CPU compiles kernels or loads modules (%s %s).", head,
                gt_adv_ms(d->cause_ms), gt_adv_per(p));
        GT_REMEDY(w, "Compile before the loop and keep input shapes fixed, so nothing compiles "
                     "inside it.");
        break;
    case GT_IDLE_DATA_LOADING:
        GT_SEEN(w, "%s while the CPU loads data (data loading in all: %s %s%s; %s).", head,
                gt_adv_ms(d->cause_ms), gt_adv_per(p), cause_note(d),
                d->workers ? gt_fmt("%d DataLoader workers run beside it", d->workers)
                           : "each gap ends with a batch copied to the GPU");
        data_loading_remedy(d, c->fw, w);
        break;
    default:
        GT_SEEN(w,
                "%s while the CPU makes no CUDA call and loads no data (host work in all: %s "
                "%s%s): Python code, logging, metrics or checkpoints.",
                head, gt_adv_ms(d->cause_ms), gt_adv_per(p), cause_note(d));
        GT_REMEDY(w, "%s",
                  c->fw == GT_FW_NATIVE
                      ? "Profile the CPU side (perf, Nsight Systems' CPU sampling), "
                        "then move that work off the loop or overlap it with the GPU."
                      : "Profile the CPU side (py-spy, torch.profiler, cProfile), then "
                        "move that work off the step or overlap it with the GPU.");
        break;
    }
    (void)a;
}

const gt_rule gt_rule_gpu_idle = {"gpu-idle", "the GPU idles while the CPU works elsewhere",
                                  GT_RULE_PROCESS, find, word};
