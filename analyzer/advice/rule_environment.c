/* rule_environment.c — environment: what is wrong around the program rather than in it. Five
 * findings, each a rule of the table with the id "environment": mixed CUDA majors between cuDNN
 * and the runtime (a risk), calls failing for want of a kernel image (a failure), a driver older
 * than the runtime (a failure when calls failed, else a risk), CUPTI unavailable (a note), and a
 * trace with lost records (a risk to every figure). None has a time to save: their severity
 * follows from their impact (advice_engine.c). */
#include <stdio.h>

#include "advice_rule.h"
#include "util.h"

typedef struct env_data {
    int cc;
} env_data;

/* ------------------------------------------------------------------ mixed CUDA majors */

static int find_cuda_major(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_runtime_info *rt = &c->p->hdr.runtime;
    (void)data;
    if (rt->cudnn_cudart_version <= 0 || rt->runtime_version <= 0 ||
        rt->cudnn_cudart_version / 1000 == rt->runtime_version / 1000)
        return 0;
    gt_adv_impact(a, GT_IMPACT_RISK);
    gt_adv_ev(a, "cudnn_cudart_version", rt->cudnn_cudart_version, "");
    gt_adv_ev(a, "runtime_version", rt->runtime_version, "");
    a->t_ns = c->p->t_min;
    return 1;
}

static void word_cuda_major(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const gt_runtime_info *rt = &c->p->hdr.runtime;
    (void)a, (void)data;
    GT_SEEN(w,
            "cuDNN %d.%d was built for CUDA %d (cudnnGetCudartVersion %d) but the program uses "
            "CUDA runtime %d.%d: mixed CUDA majors can fail or fall back to slow paths.",
            rt->cudnn_version / 10000, (rt->cudnn_version / 100) % 100,
            rt->cudnn_cudart_version / 1000, rt->cudnn_cudart_version, rt->runtime_version / 1000,
            (rt->runtime_version % 1000) / 10);
    GT_REMEDY(w,
              "Install the cuDNN build for CUDA %d (`gputrace doctor` lists every cuDNN the "
              "loader finds).",
              rt->runtime_version / 1000);
}

/* ------------------------------------------------------------------ no kernel image */

static int find_kernel_image(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    env_data *d = data;
    if (!c->p->kernel_image_errors)
        return 0;
    d->cc = gt_adv_max_cc(c->p);
    gt_adv_impact(a, GT_IMPACT_FAILURE);
    gt_adv_ev(a, "kernel_image_errors", c->p->kernel_image_errors, "count");
    gt_adv_ev(a, "compute_capability", d->cc / 10.0, "");
    a->t_ns = c->p->t_min;
    return 1;
}

static void word_kernel_image(const gt_rule_ctx *c, const gt_advice *a, const void *data,
                              gt_words *w)
{
    const env_data *d = data;
    (void)a;
    GT_SEEN(w,
            "%d CUDA calls failed with 'no kernel image for this device' (or an unsupported PTX "
            "version): the binary has no code for this GPU (compute capability %d.%d).",
            c->p->kernel_image_errors, d->cc / 10, d->cc % 10);
    if (c->fw == GT_FW_NATIVE)
        GT_REMEDY(w, "Rebuild with -gencode arch=compute_%d,code=sm_%d.", d->cc, d->cc);
    else
        GT_REMEDY(w,
                  "Install a build of %s for this GPU (or rebuild its extensions with "
                  "-gencode arch=compute_%d,code=sm_%d).",
                  gt_framework_name(c->fw), d->cc, d->cc);
}

/* ------------------------------------------------------------------ driver */

static int find_driver(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_runtime_info *rt = &c->p->hdr.runtime;
    (void)data;
    int older = rt->driver_version > 0 && rt->runtime_version > 0 &&
                rt->driver_version / 1000 < rt->runtime_version / 1000;
    if (!c->p->insufficient_driver_errors && !older)
        return 0;
    gt_adv_impact(a, c->p->insufficient_driver_errors ? GT_IMPACT_FAILURE : GT_IMPACT_RISK);
    gt_adv_ev(a, "driver_version", rt->driver_version, "");
    gt_adv_ev(a, "runtime_version", rt->runtime_version, "");
    gt_adv_ev(a, "insufficient_driver_errors", c->p->insufficient_driver_errors, "count");
    a->t_ns = c->p->t_min;
    return 1;
}

static void word_driver(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const gt_runtime_info *rt = &c->p->hdr.runtime;
    (void)a, (void)data;
    GT_SEEN(w, "The driver supports CUDA %d.%d but the program's runtime is %d.%d%s.",
            rt->driver_version / 1000, (rt->driver_version % 1000) / 10, rt->runtime_version / 1000,
            (rt->runtime_version % 1000) / 10,
            c->p->insufficient_driver_errors ? " (calls failed with cudaErrorInsufficientDriver)"
                                             : "");
    GT_REMEDY(w, "Update the driver or use a runtime it supports.");
}

/* ------------------------------------------------------------------ CUPTI */

static int find_cupti(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    int st = c->p->hdr.runtime.cupti_state;
    (void)data;
    if (st != GT_CUPTI_OTHER_SUBSCRIBER && st != GT_CUPTI_NOT_FOUND && st != GT_CUPTI_FAILED)
        return 0;
    gt_adv_impact(a, GT_IMPACT_NOTE);
    gt_adv_ev(a, "cupti_state", st, "");
    a->t_ns = c->p->t_min;
    return 1;
}

static void word_cupti(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    int st = c->p->hdr.runtime.cupti_state;
    (void)a, (void)data;
    GT_SEEN(w,
            "CUPTI was %s: the trace has no GPU-side records, so busy time, kernels and copy "
            "bandwidth are missing.",
            st == GT_CUPTI_OTHER_SUBSCRIBER ? "held by another tool"
            : st == GT_CUPTI_NOT_FOUND      ? "not found"
                                            : "not usable");
    GT_REMEDY(w, "%s",
              st == GT_CUPTI_OTHER_SUBSCRIBER
                  ? "Run without torch.profiler, nsys or ncu at the same time."
                  : "Put libcupti.so on LD_LIBRARY_PATH.");
}

/* ------------------------------------------------------------------ incomplete trace */

/* What to do about the losses, by their main cause: a bigger buffer helps only when a buffer was
 * full; a write failure needs disk space, a signal's cut-off flush a gentler end. */
static const char *loss_remedy(const gt_proc *p)
{
    const uint64_t *by = p->lost_by_reason;
    uint64_t ring = by[GT_LOST_BUFFER_FULL] + by[GT_LOST_TOO_LARGE];
    uint64_t cupti = by[GT_LOST_CUPTI_DROPPED] + by[GT_LOST_CUPTI_CAP] + p->cupti_dropped;
    uint64_t write = by[GT_LOST_WRITE_FAILED], flush = by[GT_LOST_NOT_FLUSHED];
    if (p->calls_before_cupti > ring + cupti + write + flush)
        return "CUPTI's start outlasted gputrace's wait for it (a loaded machine): record again "
               "when the machine is less busy.";
    if (write >= ring && write >= cupti && write >= flush && write)
        return "The trace file could not be written (full disk or a file size limit): free "
               "space, point GPUTRACE_DIR at a larger file system, or record a shorter run.";
    if (flush > ring && flush > cupti)
        return "A fatal signal ended the process before everything was written: end it with "
               "SIGTERM/SIGINT rather than SIGKILL, or record a shorter run.";
    if (cupti > ring)
        return "Raise GPUTRACE_CUPTI_MB or record a shorter run.";
    if (ring)
        return "Raise GPUTRACE_BUFFER_KB or record a shorter run.";
    return "Record again; if it recurs, raise GPUTRACE_BUFFER_KB / GPUTRACE_CUPTI_MB.";
}

static int find_incomplete(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    (void)data;
    uint64_t lost = p->records_lost + p->cupti_dropped;
    if (!lost && !p->damaged && !p->calls_before_cupti)
        return 0;
    gt_adv_impact(a, GT_IMPACT_RISK);
    gt_adv_ev(a, "records_lost", (double)lost, "count");
    gt_adv_ev(a, "calls_before_cupti", (double)p->calls_before_cupti, "count");
    gt_adv_ev(a, "chunks_damaged", (double)(p->chunks_damaged + p->chunk_seq_gaps), "count");
    a->t_ns = p->t_min;
    return 1;
}

static void word_incomplete(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const gt_proc *p = c->p;
    (void)a, (void)data;
    GT_SEEN(w,
            "The trace is incomplete: %llu records were lost while recording and %llu chunks are "
            "damaged or missing%s%s. Numbers below are lower bounds.",
            (unsigned long long)(p->records_lost + p->cupti_dropped),
            (unsigned long long)(p->chunks_damaged + p->chunk_seq_gaps),
            p->truncated ? " (file truncated)" : "",
            p->calls_before_cupti
                ? gt_fmt("; %llu calls gave the GPU work before CUPTI was attached: their kernels, "
                         "copies and memsets are not in the trace",
                         (unsigned long long)p->calls_before_cupti)
                : "");
    GT_REMEDY(w, "%s", loss_remedy(p));
}

#define ENV_RULE(name, find_fn, word_fn)                                                           \
    const gt_rule name = {"environment", "the environment", GT_RULE_PROCESS_ANY, find_fn, word_fn}
ENV_RULE(gt_rule_env_cuda_major, find_cuda_major, word_cuda_major);
ENV_RULE(gt_rule_env_kernel_image, find_kernel_image, word_kernel_image);
ENV_RULE(gt_rule_env_driver, find_driver, word_driver);
ENV_RULE(gt_rule_env_cupti, find_cupti, word_cupti);
ENV_RULE(gt_rule_env_incomplete, find_incomplete, word_incomplete);
