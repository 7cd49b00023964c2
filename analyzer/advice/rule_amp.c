/* rule_amp.c — amp: fp32 convolutions and GEMMs run without tensor cores on a GPU that has them.
 *
 * Their GPU time is measured over the run (cuDNN/cuBLAS calls joined to their kernels, or kernel
 * names when they cannot be joined); its share of the GPU's busy time, applied to the steady
 * step's busy time, gives it per step. The saving is the part tensor cores would not need: 1 -
 * fp32 rate / TF32 rate, from this machine's GEMM rates measured by `gputrace doctor --save`, or
 * half (tensor cores run TF32 at least twice the fp32 rate: an assumption the message states).
 * Matrix-vector products are not counted: tensor cores multiply tiles of two matrices, so cuBLAS
 * never runs a gemv on them, and a product with a dimension of 1 reads each matrix element once,
 * bound by memory rather than math: TF32 or half precision math would not make it faster.
 * Kernels of several streams may run at once, so their times can add up past the GPU's busy
 * time: the share is at most all of it. Thresholds: docs/advice.md. */
#include <stdio.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"
#include "gtrace_api.h"
#include "peaks.h"
#include "textfmt.h"

#define AMP_SHARE 0.20        /* fp32 non-tensor-core conv/GEMM GPU time / GPU busy */
#define AMP_CALL_SHARE 0.5    /* without GPU time: their share of the conv/GEMM calls */
#define AMP_DEFAULT_SPEEDUP 2 /* tensor cores: at least twice the fp32 rate */

typedef struct amp_data {
    double fp32_ms, busy_ms, calls, share_pct, speedup, per_step_ms;
    int cc, inferred, by_calls, doctor, gemms, convs, tf32_gemms;
} amp_data;

/* gemv, a GEMM with m or n of 1 (a matrix times a vector) or k of 1 (an outer product) */
static int gemm_is_matrix_vector(const gt_gemm_agg *g)
{
    return g->m == 1 || g->n == 1 || g->k == 1;
}

static int gemm_is_fp32_plain(const gt_gemm_agg *g)
{
    if (gemm_is_matrix_vector(g))
        return 0;
    if (g->func == GT_FN_cublasSgemm_v2 || g->func == GT_FN_cublasSgemm_v2_64)
        return g->compute_type != 77 && g->compute_type != 74 && g->compute_type != 75;
    return g->atype == 0 &&
           (g->compute_type == 68 || g->compute_type == 69 || g->compute_type == 0);
}

static int kernel_is_fp32_plain(const gt_kernel_agg *k)
{
    if (strstr(k->mangled, "gemv") || strstr(k->mangled, "Gemv")) /* cuBLAS's gemv kernels */
        return 0;
    return !k->tensor_cores && (k->family == GT_KF_GEMM || k->conv_like) &&
           (strstr(k->mangled, "sgemm") || strstr(k->mangled, "scudnn") ||
            strstr(k->mangled, "fp32") || strstr(k->mangled, "_f32"));
}

/* fp32 work without tensor cores: the wrapped calls, else (or when their kernels were not
 * joined to them) the kernels by name. */
static double fp32_work(const gt_proc *p, amp_data *d, double *all_calls)
{
    double ms = 0;
    *all_calls = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || op->chosen < 0)
            continue;
        const gt_cudnn_choice *c = &op->choices[op->chosen];
        *all_calls += (double)c->execs;
        if (op->dtype == 0 && !c->tensor_cores) {
            ms += (double)c->gpu_ns / 1e6;
            d->calls += (double)c->execs;
            d->convs++;
        }
    }
    for (size_t i = 0; i < p->n_gemms; i++) {
        *all_calls += (double)p->gemms[i].count;
        d->tf32_gemms += p->gemms[i].compute_type == 77;
        /* what ran: a TF32 math mode set on the handle shows only in the kernels */
        const gt_gemm_agg *g = &p->gemms[i];
        if (gemm_is_fp32_plain(g) && (!g->gpu_ns || g->tensor_core_gpu_ns < g->gpu_ns)) {
            ms += (double)(g->gpu_ns - g->tensor_core_gpu_ns) / 1e6;
            d->calls += (double)g->count;
            d->gemms++;
        } else if (g->tensor_core_gpu_ns) {
            d->tf32_gemms++;
        }
    }
    if ((!p->cudnn_calls_seen && !p->n_gemms) || (d->calls > 0 && ms == 0))
        for (size_t i = 0; i < p->n_kernels; i++)
            if (kernel_is_fp32_plain(&p->kernels[i])) {
                ms += (double)p->kernels[i].total_ns / 1e6;
                d->inferred = 1;
                d->gemms += p->kernels[i].family == GT_KF_GEMM;
                d->convs += p->kernels[i].family != GT_KF_GEMM;
            }
    return ms;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    amp_data *d = data;
    d->cc = gt_adv_max_cc(p);
    if (d->cc < 70)
        return 0;
    double all_calls;
    d->fp32_ms = fp32_work(p, d, &all_calls);
    d->busy_ms = (double)p->gpu_busy_ns / 1e6;
    int by_time = d->busy_ms > 0 && d->fp32_ms / d->busy_ms >= AMP_SHARE;
    d->by_calls =
        !by_time && d->fp32_ms == 0 && all_calls > 0 && d->calls / all_calls >= AMP_CALL_SHARE;
    if (!by_time && !d->by_calls)
        return 0;
    gt_peaks k;
    d->speedup = AMP_DEFAULT_SPEEDUP;
    if (gt_peaks_for_proc(p, &k) == 0 && k.gemm_tflops[GT_PEAK_FP32] > 0 &&
        k.gemm_tflops[GT_PEAK_TF32] > k.gemm_tflops[GT_PEAK_FP32]) {
        d->speedup = k.gemm_tflops[GT_PEAK_TF32] / k.gemm_tflops[GT_PEAK_FP32];
        d->doctor = 1;
    }
    double share = by_time ? d->fp32_ms / d->busy_ms : d->calls / all_calls;
    if (share > 1) /* their kernels ran at once on several streams */
        share = 1;
    d->share_pct = 100 * share;
    d->per_step_ms = share * gt_adv_busy_ms(p);
    double saving = d->per_step_ms * (1 - 1 / d->speedup);
    const char *rate = d->doctor ? gt_fmt("this machine's TF32 GEMM rate is %.1fx its fp32 rate "
                                          "(gputrace doctor)",
                                          d->speedup)
                                 : "tensor cores run TF32 at least 2x the fp32 rate (assumed; "
                                   "gputrace doctor --save measures this machine's)";
    if (by_time)
        gt_adv_saving(a, saving, gt_adv_basis(p), GT_POOL_BUSY,
                      "their share of the GPU's busy time (%.0f%%) in the steady step, less the "
                      "part tensor cores need: %s",
                      d->share_pct, rate);
    else /* no GPU time for them: their share of the calls bounds it */
        gt_adv_bound(a, saving, gt_adv_basis(p), GT_POOL_BUSY,
                     "at most their share of the calls (%.0f%%) of the steady step's GPU busy "
                     "time, less the part tensor cores need: %s",
                     d->share_pct, rate);
    gt_adv_ev(a, "fp32_no_tensor_core_ms", d->fp32_ms, "ms");
    gt_adv_ev(a, "gpu_busy_ms", d->busy_ms, "ms");
    gt_adv_ev(a, "fp32_share", d->share_pct, "%");
    gt_adv_ev(a, "fp32_ms_per_step", d->per_step_ms, "ms");
    gt_adv_ev(a, "fp32_calls", d->calls, "count");
    gt_adv_ev(a, "tensor_core_speedup", d->speedup, "");
    gt_adv_ev(a, "compute_capability", d->cc / 10.0, "");
    return 1;
}

static void remedy(const amp_data *d, int fw, gt_words *w)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        GT_REMEDY(w,
                  "Use mixed precision (torch.autocast(\"cuda\", dtype=torch.bfloat16)) or allow "
                  "TF32%s%s%s.",
                  d->gemms && !d->tf32_gemms ? " for matmuls (torch.set_float32_matmul_precision("
                                               "\"high\"))"
                                             : "",
                  d->gemms && !d->tf32_gemms && d->convs ? " and" : "",
                  d->convs ? " for convolutions (torch.backends.cudnn.allow_tf32 = True)" : "");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "Let XLA use TF32 (jax.default_matmul_precision(\"tensorfloat32\"), or drop "
                     "precision=\"highest\"), or keep parameters and activations in bfloat16.");
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "Enable TF32 (tf.config.experimental.enable_tensor_float_32_execution(True)) "
                     "or mixed precision (tf.keras.mixed_precision.set_global_policy("
                     "\"mixed_bfloat16\")).");
        break;
    case GT_FW_CUPY:
        GT_REMEDY(w, "Allow TF32 (CUPY_TF32=1) or compute in float16/bfloat16 arrays.");
        break;
    default:
        GT_REMEDY(w, "Allow TF32: cublasSetMathMode(handle, CUBLAS_TF32_TENSOR_OP_MATH) or "
                     "cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32; "
                     "cudnnSetConvolutionMathType(desc, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION); "
                     "or compute in half/bfloat16.");
        break;
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const amp_data *d = data;
    const gt_proc *p = c->p;
    (void)a;
    if (d->by_calls)
        GT_SEEN(w,
                "%.0f%% of the convolution/GEMM calls run fp32 without tensor cores on a compute "
                "capability %d.%d GPU (their GPU time is not attributed).",
                d->share_pct, d->cc / 10, d->cc % 10);
    else
        GT_SEEN(w,
                "%s fp32 convolutions/GEMMs run without tensor cores on a compute capability %d.%d "
                "GPU: %s over the run, %s of its GPU busy time%s, about %s %s.",
                d->inferred ? "Judging by kernel names," : "cuDNN/cuBLAS report that", d->cc / 10,
                d->cc % 10, gt_dur(d->fp32_ms), gt_pct(d->share_pct),
                d->fp32_ms > d->busy_ms ? " (their kernels ran at once on several streams)" : "",
                gt_adv_ms(d->per_step_ms), gt_adv_per(p));
    remedy(d, c->fw, w);
}

const gt_rule gt_rule_amp = {"amp", "fp32 math without tensor cores", GT_RULE_PROCESS, find, word};
