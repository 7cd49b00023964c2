/* rule_cudnn_inferred.c — cudnn-inferred: convolution kernels ran but no cuDNN call was seen (the
 * framework reaches cuDNN through its own pointers: XLA, TensorFlow), so their algorithms are
 * inferred from kernel names. A note: nothing to save, it says how far the cuDNN table can be
 * trusted. */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"
#include "textfmt.h"

typedef struct inferred_data {
    double fam_ms[GT_KF_COUNT];
} inferred_data;

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    inferred_data *d = data;
    if (p->cudnn_calls_seen)
        return 0;
    double total = 0;
    for (size_t i = 0; i < p->n_kernels; i++) {
        const gt_kernel_agg *k = &p->kernels[i];
        if (!k->conv_like || k->is_nccl)
            continue;
        d->fam_ms[k->family] += (double)k->total_ns / 1e6;
        total += (double)k->total_ns / 1e6;
    }
    if (total <= 0)
        return 0;
    static const char *const keys[GT_KF_COUNT] = {"none_ms",      "implicit_gemm_ms", "winograd_ms",
                                                  "fft_ms",       "tensor_cores_ms",  "gemm_ms",
                                                  "other_conv_ms"};
    for (int f = 1; f < GT_KF_COUNT; f++)
        if (d->fam_ms[f] > 0)
            gt_adv_ev(a, keys[f], d->fam_ms[f], "ms");
    gt_adv_impact(a, GT_IMPACT_NOTE);
    a->t_ns = p->gpu_first_ns;
    return 1;
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const inferred_data *d = data;
    (void)a;
    char parts[400] = "";
    size_t used = 0;
    for (int f = 1; f < GT_KF_COUNT; f++)
        if (d->fam_ms[f] > 0 && used < sizeof parts)
            used += (size_t)snprintf(parts + used, sizeof parts - used, "%s%s %s", used ? ", " : "",
                                     gt_kernel_family_name(f), gt_dur(d->fam_ms[f]));
    GT_SEEN(w,
            "No cuDNN call was seen (%s reaches cuDNN through its own pointers), so the "
            "convolutions' algorithms are inferred from kernel names: %s.",
            c->fw == GT_FW_JAX          ? "XLA"
            : c->fw == GT_FW_TENSORFLOW ? "TensorFlow"
                                        : "the framework",
            parts);
}

const gt_rule gt_rule_cudnn_inferred = {
    "cudnn-inferred", "cuDNN algorithms inferred from kernel names", GT_RULE_PROCESS, find, word};
