/* rule_pinned_memory.c — pinned-memory: copies from or to pageable host memory in the steady
 * state. The driver stages them through a bounce buffer, so they run at a fraction of the link's
 * rate and the CPU waits for them (a pageable device-to-host copy returns when it is done).
 *
 * Per steady step when most of their time lies in the steady window, else over the run (a phase
 * of pageable copies the step finder took for warm-up is still the run's cost). The saving is
 * their time less what the same bytes take from pinned memory, at the best pinned
 * rate the trace or the machine tells, in this order (the message says which): this machine's
 * pinned peaks measured by `gputrace doctor --save`; the pinned copies of the same run (1 MB or
 * more); the nominal rate of the GPU generation's link. Thresholds: docs/advice.md. */
#include <stdio.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"
#include "peaks.h"
#include "textfmt.h"

#define PAGEABLE_MIN_SHARE 0.01           /* pageable copy time / steady window */
#define PINNED_REF_MIN_BYTES (1ull << 20) /* pinned copies this large give a usable rate */

enum { SRC_DOCTOR, SRC_SAME_RUN, SRC_NOMINAL };

typedef struct pinned_data {
    double count, mb, ms, gbps; /* per step (or window) */
    double pinned_gbps[2];      /* H2D, D2H */
    int source;
    int h2d, d2h;       /* directions present */
    int pinned_h2d_run; /* pinned host-to-device copies exist: pinning is already in use */
    int workers;
    int over_run; /* the figures are the whole run's (most pageable copies lie outside the
                     steady window), not per step */
} pinned_data;

static double gbps(uint64_t bytes, uint64_t ns)
{
    return ns ? (double)bytes / (double)ns : 0; /* bytes/ns == GB/s */
}

/* The pinned rate per direction, and where it comes from. */
static int pinned_rates(const gt_proc *p, double out[2])
{
    gt_peaks k;
    if (gt_peaks_for_proc(p, &k) == 0 && k.copies_gbps[GT_PEAK_H2D_PINNED] > 0 &&
        k.copies_gbps[GT_PEAK_D2H_PINNED] > 0) {
        out[0] = k.copies_gbps[GT_PEAK_H2D_PINNED];
        out[1] = k.copies_gbps[GT_PEAK_D2H_PINNED];
        return SRC_DOCTOR;
    }
    const gt_copy_agg *h = &p->copies[GT_DIR_H2D][GT_MEM_PINNED],
                      *d = &p->copies[GT_DIR_D2H][GT_MEM_PINNED];
    uint64_t hn = p->copies_from_gpu ? h->gpu_ns : h->cpu_ns,
             dn = p->copies_from_gpu ? d->gpu_ns : d->cpu_ns;
    if (h->bytes + d->bytes >= PINNED_REF_MIN_BYTES) {
        double both = gbps(h->bytes + d->bytes, hn + dn);
        out[0] = h->bytes >= PINNED_REF_MIN_BYTES ? gbps(h->bytes, hn) : both;
        out[1] = d->bytes >= PINNED_REF_MIN_BYTES ? gbps(d->bytes, dn) : both;
        if (out[0] > 0 && out[1] > 0)
            return SRC_SAME_RUN;
    }
    /* nominal, a little under the link's raw rate: PCIe 5.0 x16 from Hopper on, 4.0 for
     * Ampere, 3.0 before */
    int cc = gt_adv_max_cc(p);
    out[0] = out[1] = cc >= 90 ? 50.0 : cc >= 80 ? 25.0 : 12.0;
    return SRC_NOMINAL;
}

/* The pageable copies to weigh: the steady window's, per step, when most of the run's pageable
 * copy time lies there; else the whole run's (a first phase of pageable copies that the step
 * finder took for warm-up, or copies with no steps around them), over the run. */
static int pageable_figures(const gt_proc *p, pinned_data *d, uint64_t bytes[2], uint64_t *ns,
                            uint64_t count[2])
{
    const gt_copy_agg *h = &p->copies[GT_DIR_H2D][GT_MEM_PAGEABLE],
                      *t = &p->copies[GT_DIR_D2H][GT_MEM_PAGEABLE];
    uint64_t run_ns = p->copies_from_gpu ? h->gpu_ns + t->gpu_ns : h->cpu_ns + t->cpu_ns;
    uint64_t steady_ns = p->steady_pageable_ns[0] + p->steady_pageable_ns[1];
    d->over_run = !steady_ns || (double)steady_ns < 0.5 * (double)run_ns;
    if (!d->over_run) {
        for (int k = 0; k < 2; k++) {
            bytes[k] = p->steady_pageable_bytes[k];
            count[k] = p->steady_pageable_count[k];
        }
        *ns = steady_ns;
        return gt_adv_basis(p);
    }
    bytes[0] = h->bytes, bytes[1] = t->bytes;
    count[0] = h->count, count[1] = t->count;
    *ns = run_ns;
    return GT_BASIS_RUN;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    pinned_data *d = data;
    uint64_t b[2], n[2], ns;
    int basis = pageable_figures(p, d, b, &ns, n);
    double base = basis == GT_BASIS_RUN ? gt_proc_duration_ms(p) : gt_adv_window_ms(p);
    double steps = basis == GT_BASIS_RUN ? 1 : gt_adv_steps(p);
    if (!ns || !(b[0] + b[1]) || base <= 0 || (double)ns / 1e6 / base < PAGEABLE_MIN_SHARE)
        return 0;
    d->h2d = n[0] > 0;
    d->d2h = n[1] > 0;
    d->count = (double)(n[0] + n[1]) / steps;
    d->mb = (double)(b[0] + b[1]) / 1e6 / steps;
    d->ms = (double)ns / 1e6 / steps;
    d->gbps = gbps(b[0] + b[1], ns);
    d->source = pinned_rates(p, d->pinned_gbps);
    d->pinned_h2d_run = p->copies[GT_DIR_H2D][GT_MEM_PINNED].count > 0;
    d->workers = p->dataloader_workers;
    double pinned_ms =
        ((double)b[0] / d->pinned_gbps[0] + (double)b[1] / d->pinned_gbps[1]) / 1e6 / steps;
    static const char *const sources[] = {
        "this machine's pinned peaks, measured by gputrace doctor", "the pinned copies of this run",
        "the link's nominal rate (no pinned copies of 1 MB or "
        "more in this run; gputrace doctor --save measures it)"};
    gt_adv_saving(a, d->ms - pinned_ms, basis, GT_POOL_CPU,
                  "their time less the same bytes at %.1f GB/s H2D, %.1f GB/s D2H: %s",
                  d->pinned_gbps[0], d->pinned_gbps[1], sources[d->source]);
    const gt_copy_agg *h2d = &p->copies[GT_DIR_H2D][GT_MEM_PAGEABLE],
                      *d2h = &p->copies[GT_DIR_D2H][GT_MEM_PAGEABLE];
    gt_adv_site(a, p, d2h->top_stack_ns > h2d->top_stack_ns ? d2h->top_stack : h2d->top_stack);
    gt_adv_ev(a, d->over_run ? "pageable_copies" : "pageable_copies_per_step", d->count, "count");
    gt_adv_ev(a, d->over_run ? "pageable_mb" : "pageable_mb_per_step", d->mb, "MB");
    gt_adv_ev(a, d->over_run ? "pageable_ms" : "pageable_ms_per_step", d->ms, "ms");
    gt_adv_ev(a, "pageable_gbps", d->gbps, "GB/s");
    gt_adv_ev(a, "pinned_gbps_h2d", d->pinned_gbps[0], "GB/s");
    gt_adv_ev(a, "pinned_gbps_d2h", d->pinned_gbps[1], "GB/s");
    if (d->source == SRC_DOCTOR) /* the same bytes at this machine's pinned peaks */
        gt_adv_ev(a, "pinned_ms_this_machine", pinned_ms, "ms");
    gt_adv_ev(a,
              d->source == SRC_DOCTOR     ? "pinned_rate_from_doctor"
              : d->source == SRC_SAME_RUN ? "pinned_rate_from_this_run"
                                          : "pinned_rate_nominal",
              1, "");
    return 1;
}

static void remedy(const pinned_data *d, int fw, gt_words *w)
{
    switch (fw) {
    case GT_FW_PYTORCH: /* DataLoader(pin_memory=True) only where the run shows no pinning */
        GT_REMEDY(w, "Copy through pinned memory: %s%s%s.",
                  !d->h2d                           ? ""
                  : d->pinned_h2d_run || d->workers ? "x.pin_memory() before x.to(device, "
                                                      "non_blocking=True) for these inputs"
                                                    : "DataLoader(pin_memory=True) or "
                                                      "x.pin_memory(), then x.to(device, "
                                                      "non_blocking=True)",
                  d->h2d && d->d2h ? "; " : "",
                  d->d2h ? "for results, copy into a buffer allocated once with torch.empty(..., "
                           "pin_memory=True) (buf.copy_(x, non_blocking=True))"
                         : "");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "Stage host arrays in pinned memory (a sharding with "
                     "memory_kind=\"pinned_host\"), or overlap the transfers with compute "
                     "(jax.device_put the next batch before the step).");
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "Let tf.data prefetch to the GPU "
                     "(dataset.apply(tf.data.experimental.prefetch_to_device(\"/gpu:0\"))), which "
                     "copies from pinned buffers.");
        break;
    case GT_FW_CUPY:
        GT_REMEDY(w, "Allocate the host buffers pinned (cupyx.empty_pinned / "
                     "cupy.cuda.alloc_pinned_memory) and copy with arr.set(host, stream=s) / "
                     "arr.get(stream=s, out=pinned).");
        break;
    default:
        GT_REMEDY(w, "Allocate the host buffers with cudaHostAlloc/cudaMallocHost (or pin "
                     "existing ones with cudaHostRegister) and copy with cudaMemcpyAsync.");
        break;
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const pinned_data *d = data;
    const gt_proc *p = c->p;
    char at[300] = "";
    if (a->call_site[0])
        snprintf(at, sizeof at, ", mostly at %s", a->call_site);
    char rate[160];
    if (d->source == SRC_DOCTOR)
        snprintf(rate, sizeof rate,
                 "On this machine pinned copies reach %.1f GB/s H2D and %.1f GB/s D2H (gputrace "
                 "doctor)",
                 d->pinned_gbps[0], d->pinned_gbps[1]);
    else
        snprintf(rate, sizeof rate, "Pinned copies reach %.1f GB/s (%s)",
                 d->h2d ? d->pinned_gbps[0] : d->pinned_gbps[1],
                 d->source == SRC_SAME_RUN ? "this run's pinned copies"
                                           : "the link's nominal rate, not measured");
    GT_SEEN(w,
            "%s cop%s %s pageable host memory %s (%.1f MB%s) take %s at %.1f GB/s: the "
            "driver stages them through a bounce buffer. %s, so pinned they would take %s less.",
            gt_mean(d->count), strcmp(gt_mean(d->count), "1") ? "ies" : "y",
            d->h2d && d->d2h ? "from and to"
            : d->h2d         ? "from"
                             : "to",
            d->over_run ? "over the run" : gt_adv_per(p), d->mb, at, gt_adv_ms(d->ms), d->gbps,
            rate, gt_adv_ms(a->saving_ms));
    remedy(d, c->fw, w);
}

const gt_rule gt_rule_pinned_memory = {"pinned-memory", "copies from pageable host memory",
                                       GT_RULE_PROCESS, find, word};
