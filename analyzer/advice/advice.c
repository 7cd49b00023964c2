/* advice.c — the advice rules. Every threshold here is listed in docs/advice.md; change both. */
#include "advice.h"
#include "advice_rules.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gtrace_api.h"
#include "peaks.h"
#include "textfmt.h"

/* ------------------------------------------------------------------ thresholds (docs/advice.md) */
#define SYNC_STALL_SHARE 0.05 /* blocking sync time per step / step time */
#define SYNC_STALL_CRITICAL 0.25
#define LOOP_MIN_CALLS 10          /* without steps: calls in the second half that make a loop */
#define SYNC_MIN_CALLS 3           /* a call site blocking this often in the steady window ... */
#define SYNC_MIN_PER_STEP 0.5      /* ... and in at least every other step is a repeated stall */
#define SYNC_EVERY_STEP_SHARE 0.01 /* a site blocking in every step: info from this share */
#define PAGEABLE_SHARE 0.02        /* pageable copy time / steady window */
#define PAGEABLE_WARN_SHARE 0.10
#define NONBLOCK_SHARE 0.01   /* blocking H2D copy time / steady window */
#define AMP_SHARE 0.20        /* fp32 non-tensor-core conv/GEMM GPU time / GPU busy */
#define AMP_SAVING_FACTOR 0.5 /* tensor cores run such work at least 2x faster */
#define ALLOC_PER_STEP 1.0    /* cudaMalloc/cudaFree calls per steady step */
#define ALLOC_MIN_CALLS 3
#define ALLOC_MIN_SHARE 0.02            /* their API time / steady window */
#define PINNED_REF_MIN_BYTES (1u << 20) /* pinned copies this large give a usable bandwidth */
#define IDLE_SHARE 0.10                 /* unexplained idle in gaps >= 1 ms / steady window */
#define SEV_CRITICAL_SHARE 0.25         /* the saving's share: critical from here ... */
#define SEV_WARNING_SHARE 0.05          /* ... warning from here, info below */
/* cudnn-benchmark's thresholds are at the top of advice_cudnn.c, straggler's of advice_ranks.c,
 * launch-bound's of advice_launch.c, compilation's of advice_compile.c */

/* ------------------------------------------------------------------ building items */

static gt_advice *add_item(gt_advice_list *l, const gt_proc *p, const char *id, int severity)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->items = gt_xrealloc(l->items, l->cap * sizeof *l->items);
    }
    gt_advice *a = &l->items[l->n++];
    memset(a, 0, sizeof *a);
    snprintf(a->id, sizeof a->id, "%s", id);
    a->severity = severity;
    a->pid = p ? p->hdr.pid : 0;
    a->rank = p ? p->hdr.rank : -1;
    return a;
}

static void msg(gt_advice *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg(gt_advice *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
}

static void ev(gt_advice *a, const char *key, double value, const char *unit)
{
    if (a->n_evidence >= GT_ADVICE_MAX_EVIDENCE)
        return;
    gt_evidence *e = &a->evidence[a->n_evidence++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->value = value;
    snprintf(e->unit, sizeof e->unit, "%s", unit);
}

static void saving(gt_advice *a, double ms, int per_step)
{
    a->has_saving = 1;
    a->saving_ms = ms > 0 ? ms : 0;
    a->saving_per_step = per_step;
}

static void site(gt_advice *a, const gt_proc *p, uint32_t stack_id)
{
    const char *s = gt_proc_call_site(p, stack_id);
    if (s)
        snprintf(a->call_site, sizeof a->call_site, "%s", s);
}

static int has_steps(const gt_proc *p)
{
    return p->n_steps >= 2;
}

static double window_ms(const gt_proc *p)
{
    return p->steady_end_ns > p->steady_start_ns
               ? (double)(p->steady_end_ns - p->steady_start_ns) / 1e6
               : 0;
}

/* The time one steady "step" lasts: the median step, or the whole steady window. */
static double step_ms(const gt_proc *p)
{
    return has_steps(p) ? p->step_ms_median : window_ms(p);
}

static const char *per_step_word(const gt_proc *p)
{
    return has_steps(p) ? "per step" : "in the second half of the run";
}

/* For the rules kept in files of their own (advice_rules.h). */
gt_advice *gt_adv_add(gt_advice_list *l, const gt_proc *p, const char *id, int severity)
{
    return add_item(l, p, id, severity);
}

void gt_adv_msg(gt_advice *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
}

void gt_adv_ev(gt_advice *a, const char *key, double value, const char *unit)
{
    ev(a, key, value, unit);
}

void gt_adv_saving(gt_advice *a, double ms, int per_step)
{
    saving(a, ms, per_step);
}

int gt_adv_has_steps(const gt_proc *p)
{
    return has_steps(p);
}

double gt_adv_step_ms(const gt_proc *p)
{
    return step_ms(p);
}

const char *gt_adv_per_step_word(const gt_proc *p)
{
    return per_step_word(p);
}

/* Severity from the saving's share of what it is a saving of (the step, or the run). */
int gt_adv_severity_for_share(double share)
{
    return share >= SEV_CRITICAL_SHARE  ? GT_SEV_CRITICAL
           : share >= SEV_WARNING_SHARE ? GT_SEV_WARNING
                                        : GT_SEV_INFO;
}

/* ------------------------------------------------------------------ sync-stall */

/* A call site repeats when it blocks SYNC_MIN_CALLS+ times in the steady window and in at least
 * every other step; a single wait at the end of a loop is how work should end, not a stall. */
static int site_repeats(const gt_proc *p, uint64_t steady_count)
{
    if (!has_steps(p)) /* one window, no steps: only a loop's worth of waits repeats */
        return steady_count >= LOOP_MIN_CALLS;
    return steady_count >= SYNC_MIN_CALLS &&
           (double)steady_count >= SYNC_MIN_PER_STEP * p->steady_steps;
}

static const gt_site_agg *top_sync_site(const gt_proc *p)
{
    const gt_site_agg *best = NULL;
    for (size_t i = 0; i < p->n_sync_sites; i++)
        if (site_repeats(p, p->sync_sites[i].steady_count) &&
            (!best || p->sync_sites[i].steady_ns > best->steady_ns))
            best = &p->sync_sites[i];
    return best;
}

/* Blocking time per steady step at repeating call sites (CUPTI-only syncs count as one site). */
static double repeated_sync_ms_per_step(const gt_proc *p, uint64_t *calls)
{
    uint64_t ns = 0;
    *calls = 0;
    for (size_t i = 0; i < p->n_sync_sites; i++)
        if (site_repeats(p, p->sync_sites[i].steady_count)) {
            ns += p->sync_sites[i].steady_ns;
            *calls += p->sync_sites[i].steady_count;
        }
    if (site_repeats(p, p->steady_cupti_sync_count)) {
        ns += p->steady_cupti_sync_ns;
        *calls += p->steady_cupti_sync_count;
    }
    return (double)ns / 1e6 / p->steady_steps;
}

/* CPU work without CUDA calls after blocking calls, beyond what the GPU's own work in the steady
 * steps could hide were the waits gone: a loop bound by its CPU (data loading in the training
 * process) that also reads loss.item() idles the GPU for that, not for the sync. */
static double after_sync_excess_ms(const gt_proc *p)
{
    if (!has_steps(p)) /* the reasoning is per step: without steps the window is no loop */
        return 0;
    double busy = p->steady_busy_pct / 100 * window_ms(p);
    double excess = (double)p->steady_after_sync_nocall_ns / 1e6 - busy;
    return excess > 0 ? excess : 0;
}

static void rule_sync_stall(const gt_proc *p, gt_advice_list *l)
{
    uint64_t calls = 0;
    double st = step_ms(p), sync = repeated_sync_ms_per_step(p, &calls);
    const gt_site_agg *top = top_sync_site(p);
    if (st <= 0 || sync <= 0)
        return;
    /* below the stall share, a site that blocks in every single step is still worth naming:
     * it keeps the CPU from running ahead, whatever it costs in this run */
    int every_step = has_steps(p) && top && (double)top->steady_count >= p->steady_steps &&
                     (double)top->steady_ns / 1e6 / p->steady_steps / st >= SYNC_EVERY_STEP_SHARE;
    if (sync / st < SYNC_STALL_SHARE && !every_step)
        return;
    int sev = sync / st >= SYNC_STALL_CRITICAL ? GT_SEV_CRITICAL
              : sync / st >= SYNC_STALL_SHARE  ? GT_SEV_WARNING
                                               : GT_SEV_INFO;
    gt_advice *a = add_item(l, p, "sync-stall", sev);
    const char *fn = top && top->func ? gt_api_func_name(top->func) : "synchronization";
    const char *where = top ? gt_proc_call_site(p, top->stack_id) : NULL;
    char at[300] = "";
    if (where)
        snprintf(at, sizeof at, " at %s", where);
    const char *n_calls = gt_mean((double)calls / p->steady_steps); /* "1", "2.5", "2727" */
    msg(a,
        "The CPU waits for the GPU %s %s (%s of %s) in %s blocking call%s %s, "
        "mostly in %s%s. Each wait drains the launch queue so the GPU idles until new work "
        "arrives: drop per-step torch.cuda.synchronize()/loss.item()/.cpu()/print of GPU tensors, "
        "or do them every N steps.",
        gt_dur(sync), per_step_word(p), gt_pct(100 * sync / st), gt_dur(st), n_calls,
        strcmp(n_calls, "1") ? "s" : "", per_step_word(p), fn ? fn : "?", at);
    ev(a, "sync_ms_per_step", sync, "ms");
    ev(a, "step_ms", st, "ms");
    ev(a, "sync_share", 100 * sync / st, "%");
    ev(a, "sync_calls_per_step", (double)calls / p->steady_steps, "count");
    ev(a, "sync_calls_total", (double)p->sync_count, "count");
    ev(a, "gpu_idle_after_sync_ms_per_step", p->steady_after_sync_idle_ms_per_step, "ms");
    if (top) {
        ev(a, "top_site_ms_per_step", (double)top->steady_ns / 1e6 / p->steady_steps, "ms");
        ev(a, "top_site_calls_per_step", (double)top->steady_count / p->steady_steps, "count");
        site(a, p, top->stack_id);
    }
    /* the GPU idles after each wait, and the CPU could have queued work during it */
    double idle = p->steady_after_sync_idle_ms_per_step - after_sync_excess_ms(p) / p->steady_steps;
    if (sev == GT_SEV_INFO) /* other waits drain the queue anyway: only this site's own wait */
        saving(a, (double)top->steady_ns / 1e6 / p->steady_steps, 1);
    else if (idle > 0) /* 0: the GPU refilled within launch latency (gaps < 20 us untracked) */
        saving(a, idle, has_steps(p));
    a->t_ns = p->steady_start_ns;
}

/* ------------------------------------------------------------------ copies */

static double copy_ms(const gt_proc *p, const gt_copy_agg *c)
{
    return (double)(p->copies_from_gpu ? c->gpu_ns : c->cpu_ns) / 1e6;
}

static double gbps(uint64_t bytes, uint64_t ns)
{
    return ns ? (double)bytes / (double)ns : 0; /* bytes/ns == GB/s */
}

static void rule_pinned_memory(const gt_proc *p, gt_advice_list *l)
{
    const gt_copy_agg *h2d = &p->copies[GT_DIR_H2D][GT_MEM_PAGEABLE];
    const gt_copy_agg *d2h = &p->copies[GT_DIR_D2H][GT_MEM_PAGEABLE];
    uint64_t count = h2d->count + d2h->count, bytes = h2d->bytes + d2h->bytes;
    double ms = copy_ms(p, h2d) + copy_ms(p, d2h);
    double run_ms = gt_proc_duration_ms(p);
    if (!count || run_ms <= 0 || ms / run_ms < PAGEABLE_SHARE)
        return;
    gt_advice *a = add_item(l, p, "pinned-memory",
                            ms / run_ms >= PAGEABLE_WARN_SHARE ? GT_SEV_WARNING : GT_SEV_INFO);
    const gt_copy_agg *pin_h2d = &p->copies[GT_DIR_H2D][GT_MEM_PINNED];
    const gt_copy_agg *pin_d2h = &p->copies[GT_DIR_D2H][GT_MEM_PINNED];
    uint64_t pin_bytes = pin_h2d->bytes + pin_d2h->bytes;
    uint64_t pin_ns =
        p->copies_from_gpu ? pin_h2d->gpu_ns + pin_d2h->gpu_ns : pin_h2d->cpu_ns + pin_d2h->cpu_ns;
    double page_bw = gbps(bytes, (uint64_t)(ms * 1e6));
    double pin_bw = pin_bytes >= PINNED_REF_MIN_BYTES ? gbps(pin_bytes, pin_ns) : 0;
    char pinned_txt[160] = "";
    if (pin_bw > page_bw && pin_bw > 0)
        snprintf(pinned_txt, sizeof pinned_txt,
                 " Pinned copies in this run reached %.1f GB/s, so these would take about %s.",
                 pin_bw, gt_dur((double)bytes / pin_bw / 1e6));
    char machine_txt[200] = ""; /* this machine's own pinned peaks (gputrace doctor --save) */
    double machine_ms =
        gt_peaks_pinned_ms(p, h2d->bytes, d2h->bytes, machine_txt, sizeof machine_txt);
    msg(a,
        "%llu copies from pageable host memory (%.1f MB) took %s (%.1f GB/s, %s of the "
        "run): the driver stages them through a bounce buffer and they cannot overlap compute. "
        "Use pinned memory (DataLoader(pin_memory=True), tensor.pin_memory(), cudaMallocHost)."
        "%s%s",
        (unsigned long long)count, (double)bytes / 1e6, gt_dur(ms), page_bw,
        gt_pct(100 * ms / run_ms), pinned_txt, machine_txt);
    ev(a, "pageable_copies", (double)count, "count");
    ev(a, "pageable_mb", (double)bytes / 1e6, "MB");
    ev(a, "pageable_ms", ms, "ms");
    ev(a, "pageable_gbps", page_bw, "GB/s");
    ev(a, "pageable_share", 100 * ms / run_ms, "%");
    if (pin_bw > 0)
        ev(a, "pinned_gbps_same_run", pin_bw, "GB/s");
    if (machine_ms >= 0)
        ev(a, "pinned_ms_this_machine", machine_ms, "ms");
    if (pin_bw > page_bw && pin_bw > 0)
        saving(a, ms - (double)bytes / pin_bw / 1e6, 0);
    else if (machine_ms >= 0 && machine_ms < ms)
        saving(a, ms - machine_ms, 0);
    site(a, p, h2d->top_stack ? h2d->top_stack : d2h->top_stack);
    a->t_ns = p->steady_start_ns;
}

static void rule_non_blocking_copy(const gt_proc *p, gt_advice_list *l)
{
    uint64_t blocking_ns = 0, blocking_count = 0;
    uint32_t stack = 0;
    for (int k = 0; k < 6; k++) {
        const gt_copy_agg *c = &p->copies[GT_DIR_H2D][k];
        blocking_ns += c->blocking_ns;
        blocking_count += c->blocking_count;
        if (!stack)
            stack = c->top_stack;
    }
    /* PyTorch's non_blocking=False is an async copy followed by a stream synchronize */
    blocking_ns += p->copy_then_sync_ns;
    blocking_count += p->copy_then_sync_count;
    double run_ms = gt_proc_duration_ms(p), ms = (double)blocking_ns / 1e6;
    if (!blocking_count || run_ms <= 0 || ms / run_ms < NONBLOCK_SHARE)
        return;
    gt_advice *a = add_item(l, p, "non-blocking-copy", GT_SEV_INFO);
    msg(a,
        "%llu host-to-device copies blocked the CPU for %s (%s of the run) while it could "
        "have queued more work. Copy from pinned memory with tensor.to(device, non_blocking=True) "
        "or cudaMemcpyAsync, and synchronize only where the data is needed.",
        (unsigned long long)blocking_count, gt_dur(ms), gt_pct(100 * ms / run_ms));
    ev(a, "blocking_copies", (double)blocking_count, "count");
    ev(a, "blocking_ms", ms, "ms");
    ev(a, "copy_then_sync", (double)p->copy_then_sync_count, "count");
    ev(a, "share", 100 * ms / run_ms, "%");
    saving(a, ms, 0);
    site(a, p, stack ? stack : p->copy_then_sync_stack);
    a->t_ns = p->steady_start_ns;
}

/* ------------------------------------------------------------------ launch-bound, gpu-idle */

/* The cause that took most of the steady idle time where the CPU made no CUDA call. */
static int idle_cause_without_calls(const gt_proc *p)
{
    int best = GT_IDLE_UNKNOWN;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (c != GT_IDLE_CUDA_CALL && c != GT_IDLE_COPY &&
            p->steady_idle_cause_ns[c] > p->steady_idle_cause_ns[best])
            best = c;
    return best;
}

/* What the CPU did instead, and what to do about it, by cause (model_idle.c). */
static void gpu_idle_message(const gt_run *run, const gt_proc *p, gt_advice *a, int cause,
                             double per, double share)
{
    const char *head = "The GPU sat idle";
    const gt_straggler *st = &run->straggler;
    switch (cause) {
    case GT_IDLE_COLLECTIVE_TRANSFER:
        msg(a,
            "%s %s %s (%s of the time) in collectives while the data moved, every rank "
            "there (gloo copies GPU tensors through host memory and sums them over TCP): NCCL "
            "for GPU tensors, fewer and larger buckets (DDP bucket_cap_mb), or less data "
            "(gradient compression hooks, bf16 gradients).",
            head, gt_dur(per), per_step_word(p), gt_pct(share));
        break;
    case GT_IDLE_COLLECTIVE:
        if (st->found && st->pid == p->hdr.pid) /* the last rank: never said to be waiting */
            msg(a,
                "%s %s %s (%s of the time) in collectives: this rank arrives last "
                "(see straggler), the time is the collectives' own.",
                head, gt_dur(per), per_step_word(p), gt_pct(share));
        else if (st->found)
            msg(a,
                "%s %s %s (%s of the time) waiting in a collective: this rank reaches "
                "them early and waits for rank %d, %s late per step (see straggler). Make "
                "that rank faster; nothing to fix here.",
                head, gt_dur(per), per_step_word(p), gt_pct(share), st->rank,
                gt_dur(st->lateness_ms));
        else
            msg(a,
                "%s %s %s (%s of the time) waiting in a collective (gloo or NCCL) for "
                "the other ranks: look at the rank that arrives last, or overlap communication "
                "with computation (DDP bucket sizes, NCCL instead of gloo for GPU tensors).",
                head, gt_dur(per), per_step_word(p), gt_pct(share));
        break;
    case GT_IDLE_COMPILE:
        msg(a,
            "%s %s %s (%s of the time) while a compiler ran in the process (see "
            "compilation).",
            head, gt_dur(per), per_step_word(p), gt_pct(share));
        break;
    case GT_IDLE_JIT:
        msg(a,
            "%s %s %s (%s of the time) while the CPU compiled kernels or loaded modules "
            "(JIT). Cache compiled kernels, compile once before the loop, keep shapes static.",
            head, gt_dur(per), per_step_word(p), gt_pct(share));
        break;
    case GT_IDLE_DATA_LOADING:
        msg(a,
            "%s %s %s (%s of the time) in gaps of 1 ms or more while the CPU loaded data "
            "(%s). Use DataLoader(num_workers>0, pin_memory=True, prefetch_factor), move "
            "preprocessing to the GPU, or overlap it with the previous step.",
            head, gt_dur(per), per_step_word(p), gt_pct(share),
            p->dataloader_workers ? "DataLoader workers run beside it"
                                  : "each gap ends with a batch copied to the GPU");
        break;
    default:
        msg(a,
            "%s %s %s (%s of the time) in gaps of 1 ms or more while the CPU made no "
            "CUDA call and no data loading was seen: host work (Python, logging, metrics, "
            "checkpoints). Profile the CPU side (py-spy, torch.profiler), move that work to the "
            "GPU, or overlap it with the previous step.",
            head, gt_dur(per), per_step_word(p), gt_pct(share));
        break;
    }
}

static void rule_gpu_idle(const gt_run *run, const gt_proc *p, gt_advice_list *l)
{
    double w = window_ms(p);
    double idle = (double)p->steady_idle_unexplained_ns / 1e6 + after_sync_excess_ms(p);
    if (w <= 0 || idle / w < IDLE_SHARE)
        return;
    int cause = idle_cause_without_calls(p);
    int waits = cause == GT_IDLE_COLLECTIVE || cause == GT_IDLE_COLLECTIVE_TRANSFER;
    gt_advice *a = add_item(l, p, "gpu-idle", waits ? GT_SEV_INFO : GT_SEV_WARNING);
    double per = idle / p->steady_steps;
    gpu_idle_message(run, p, a, cause, per, 100 * idle / w);
    ev(a, "idle_ms_per_step", per, "ms");
    ev(a, "idle_share", 100 * idle / w, "%");
    ev(a, "idle_gaps", (double)p->steady_big_gaps, "count");
    ev(a, "largest_gap_ms", (double)p->largest_gap_ns / 1e6, "ms");
    char key[40];
    snprintf(key, sizeof key, "%s_ms_per_step", gt_idle_cause_key(cause));
    ev(a, key, (double)p->steady_idle_cause_ns[cause] / 1e6 / p->steady_steps, "ms");
    if (!waits) /* a waiting rank gains when the straggler is fixed: counted there */
        saving(a, per, has_steps(p));
    a->t_ns = p->largest_gap_start_ns ? p->largest_gap_start_ns : p->steady_start_ns;
}

/* ------------------------------------------------------------------ amp */

static int max_cc(const gt_proc *p)
{
    int best = 0;
    for (int i = 0; i < GT_MAX_DEVICES && i < p->hdr.runtime.device_count; i++) {
        int cc = p->hdr.runtime.devices[i].cc_major * 10 + p->hdr.runtime.devices[i].cc_minor;
        if (cc > best)
            best = cc;
    }
    return best;
}

static int gemm_is_fp32_plain(const gt_gemm_agg *g)
{
    if (g->func == GT_FN_cublasSgemm_v2 || g->func == GT_FN_cublasSgemm_v2_64)
        return g->compute_type != 77 && g->compute_type != 74 && g->compute_type != 75;
    return g->atype == 0 &&
           (g->compute_type == 68 || g->compute_type == 69 || g->compute_type == 0);
}

static int kernel_is_fp32_plain(const gt_kernel_agg *k)
{
    return !k->tensor_cores && (k->family == GT_KF_GEMM || k->conv_like) &&
           (strstr(k->mangled, "sgemm") || strstr(k->mangled, "scudnn") ||
            strstr(k->mangled, "fp32") || strstr(k->mangled, "_f32"));
}

static void rule_amp(const gt_proc *p, gt_advice_list *l)
{
    int cc = max_cc(p);
    if (cc < 70)
        return;
    double fp32_ms = 0, fp32_calls = 0, all_calls = 0, inferred = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || op->chosen < 0)
            continue;
        const gt_cudnn_choice *c = &op->choices[op->chosen];
        all_calls += (double)c->execs;
        if (op->dtype == 0 && !c->tensor_cores) {
            fp32_ms += (double)c->gpu_ns / 1e6;
            fp32_calls += (double)c->execs;
        }
    }
    for (size_t i = 0; i < p->n_gemms; i++) {
        all_calls += (double)p->gemms[i].count;
        if (gemm_is_fp32_plain(&p->gemms[i])) {
            fp32_ms += (double)p->gemms[i].gpu_ns / 1e6;
            fp32_calls += (double)p->gemms[i].count;
        }
    }
    /* nothing wrapped, or fp32 calls whose kernels were not joined to them (no external
     * correlation records): judge the kernels by name */
    if ((!p->cudnn_calls_seen && !p->n_gemms) || (fp32_calls > 0 && fp32_ms == 0))
        for (size_t i = 0; i < p->n_kernels; i++)
            if (kernel_is_fp32_plain(&p->kernels[i])) {
                fp32_ms += (double)p->kernels[i].total_ns / 1e6;
                inferred = 1;
            }
    double busy_ms = (double)p->gpu_busy_ns / 1e6;
    int by_time = busy_ms > 0 && fp32_ms / busy_ms >= AMP_SHARE;
    int by_calls = fp32_ms == 0 && all_calls > 0 && fp32_calls / all_calls >= 0.5;
    if (!by_time && !by_calls)
        return;
    gt_advice *a = add_item(l, p, "amp", by_time ? GT_SEV_WARNING : GT_SEV_INFO);
    msg(a,
        "%s fp32 convolutions/GEMMs run without tensor cores on a compute capability %d.%d GPU "
        "(%s, %s of GPU busy time%s). Use mixed precision (torch.autocast with "
        "bfloat16/float16) or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
        "torch.backends.cudnn.allow_tf32 = True; cublasSetMathMode CUBLAS_TF32_TENSOR_OP_MATH).",
        inferred ? "Judging by kernel names (inferred)," : "cuDNN/cuBLAS report that", cc / 10,
        cc % 10, gt_dur(fp32_ms), gt_pct(busy_ms > 0 ? 100 * fp32_ms / busy_ms : 0),
        by_calls ? "; GPU time not attributed" : "");
    ev(a, "fp32_no_tensor_core_ms", fp32_ms, "ms");
    ev(a, "gpu_busy_ms", busy_ms, "ms");
    ev(a, "fp32_calls", fp32_calls, "count");
    ev(a, "compute_capability", cc / 10.0, "");
    if (fp32_ms > 0)
        saving(a, fp32_ms * AMP_SAVING_FACTOR, 0);
    a->t_ns = p->steady_start_ns;
}

/* ------------------------------------------------------------------ alloc-in-loop */

static void rule_alloc_in_loop(const gt_proc *p, gt_advice_list *l)
{
    double w = window_ms(p);
    if (p->steady_alloc_calls < (has_steps(p) ? ALLOC_MIN_CALLS : LOOP_MIN_CALLS) ||
        p->steady_alloc_per_step < ALLOC_PER_STEP || w <= 0 ||
        (double)p->steady_alloc_ns / 1e6 / w < ALLOC_MIN_SHARE)
        return;
    gt_advice *a = add_item(l, p, "alloc-in-loop", GT_SEV_WARNING);
    double ms = (double)p->steady_alloc_ns / 1e6 / p->steady_steps;
    msg(a,
        "%s cudaMalloc/cudaFree calls %s in the steady state (%s). cudaFree synchronizes "
        "the device and allocation is slow: allocate once outside the loop, reuse buffers, or use "
        "a caching/stream-ordered allocator (cudaMallocAsync).",
        gt_mean(p->steady_alloc_per_step), per_step_word(p), gt_dur(ms));
    ev(a, "alloc_calls_per_step", p->steady_alloc_per_step, "count");
    ev(a, "alloc_ms_per_step", ms, "ms");
    ev(a, "alloc_calls_steady", (double)p->steady_alloc_calls, "count");
    ev(a, "alloc_share", 100 * (double)p->steady_alloc_ns / 1e6 / w, "%");
    saving(a, ms, has_steps(p));
    a->t_ns = p->steady_start_ns;
}

/* ------------------------------------------------------------------ environment */

/* What to do about the losses, by their main cause: a bigger buffer helps only when a buffer was
 * full; a write failure needs disk space, a signal's cut-off flush a gentler end. */
static const char *loss_remedy(const gt_proc *p)
{
    const uint64_t *by = p->lost_by_reason;
    uint64_t ring = by[GT_LOST_BUFFER_FULL] + by[GT_LOST_TOO_LARGE];
    uint64_t cupti = by[GT_LOST_CUPTI_DROPPED] + by[GT_LOST_CUPTI_CAP] + p->cupti_dropped;
    uint64_t write = by[GT_LOST_WRITE_FAILED], flush = by[GT_LOST_NOT_FLUSHED];
    if (write >= ring && write >= cupti && write >= flush && write)
        return "the trace file could not be written (full disk or a file size limit): free space, "
               "point GPUTRACE_DIR at a larger file system, or record a shorter run.";
    if (flush > ring && flush > cupti)
        return "a fatal signal ended the process before everything was written: end it with "
               "SIGTERM/SIGINT rather than SIGKILL, or record a shorter run.";
    if (cupti > ring)
        return "raise GPUTRACE_CUPTI_MB or record a shorter run.";
    if (ring)
        return "raise GPUTRACE_BUFFER_KB or record a shorter run.";
    return "record again; if it recurs, raise GPUTRACE_BUFFER_KB / GPUTRACE_CUPTI_MB.";
}

static void rule_environment(const gt_proc *p, gt_advice_list *l)
{
    const gt_runtime_info *rt = &p->hdr.runtime;
    if (rt->cudnn_cudart_version > 0 && rt->runtime_version > 0 &&
        rt->cudnn_cudart_version / 1000 != rt->runtime_version / 1000) {
        gt_advice *a = add_item(l, p, "environment", GT_SEV_WARNING);
        msg(a,
            "cuDNN %d.%d was built for CUDA %d (cudnnGetCudartVersion %d) but the program uses "
            "CUDA runtime %d.%d: mixed CUDA majors can fail or fall back to slow paths. Install "
            "the cuDNN build for CUDA %d (`gputrace doctor` lists every cuDNN the loader finds).",
            rt->cudnn_version / 10000, (rt->cudnn_version / 100) % 100,
            rt->cudnn_cudart_version / 1000, rt->cudnn_cudart_version, rt->runtime_version / 1000,
            (rt->runtime_version % 1000) / 10, rt->runtime_version / 1000);
        ev(a, "cudnn_cudart_version", rt->cudnn_cudart_version, "");
        ev(a, "runtime_version", rt->runtime_version, "");
        a->t_ns = p->t_min;
    }
    if (p->kernel_image_errors) {
        gt_advice *a = add_item(l, p, "environment", GT_SEV_CRITICAL);
        int cc = max_cc(p);
        msg(a,
            "%d CUDA calls failed with 'no kernel image for this device' (or an unsupported PTX "
            "version): the binary has no code for this GPU (compute capability %d.%d). Rebuild "
            "with -gencode arch=compute_%d,code=sm_%d (or install a build that supports it).",
            p->kernel_image_errors, cc / 10, cc % 10, cc, cc);
        ev(a, "kernel_image_errors", p->kernel_image_errors, "count");
        ev(a, "compute_capability", cc / 10.0, "");
        a->t_ns = p->t_min;
    }
    if (p->insufficient_driver_errors || (rt->driver_version > 0 && rt->runtime_version > 0 &&
                                          rt->driver_version / 1000 < rt->runtime_version / 1000)) {
        gt_advice *a = add_item(l, p, "environment",
                                p->insufficient_driver_errors ? GT_SEV_CRITICAL : GT_SEV_WARNING);
        msg(a,
            "The driver supports CUDA %d.%d but the program's runtime is %d.%d%s: update the "
            "driver or use a runtime it supports.",
            rt->driver_version / 1000, (rt->driver_version % 1000) / 10, rt->runtime_version / 1000,
            (rt->runtime_version % 1000) / 10,
            p->insufficient_driver_errors ? " (calls failed with cudaErrorInsufficientDriver)"
                                          : "");
        ev(a, "driver_version", rt->driver_version, "");
        ev(a, "runtime_version", rt->runtime_version, "");
        ev(a, "insufficient_driver_errors", p->insufficient_driver_errors, "count");
        a->t_ns = p->t_min;
    }
    if (rt->cupti_state == GT_CUPTI_OTHER_SUBSCRIBER || rt->cupti_state == GT_CUPTI_NOT_FOUND ||
        rt->cupti_state == GT_CUPTI_FAILED) {
        gt_advice *a = add_item(l, p, "environment", GT_SEV_INFO);
        msg(a,
            "CUPTI was %s: the trace has no GPU-side records, so busy time, kernels and copy "
            "bandwidth are missing.%s",
            rt->cupti_state == GT_CUPTI_OTHER_SUBSCRIBER ? "held by another tool"
            : rt->cupti_state == GT_CUPTI_NOT_FOUND      ? "not found"
                                                         : "not usable",
            rt->cupti_state == GT_CUPTI_OTHER_SUBSCRIBER
                ? " Run without torch.profiler, nsys or ncu at the same time."
                : " Put libcupti.so on LD_LIBRARY_PATH.");
        ev(a, "cupti_state", rt->cupti_state, "");
        a->t_ns = p->t_min;
    }
    uint64_t lost = p->records_lost + p->cupti_dropped;
    if (lost || p->damaged) {
        gt_advice *a = add_item(l, p, "environment", GT_SEV_WARNING);
        msg(a,
            "The trace is incomplete: %llu records were lost while recording and %llu chunks are "
            "damaged or missing%s. Numbers below are lower bounds; %s",
            (unsigned long long)lost, (unsigned long long)(p->chunks_damaged + p->chunk_seq_gaps),
            p->truncated ? " (file truncated)" : "", loss_remedy(p));
        ev(a, "records_lost", (double)lost, "count");
        ev(a, "chunks_damaged", (double)(p->chunks_damaged + p->chunk_seq_gaps), "count");
        a->t_ns = p->t_min;
    }
}

/* ------------------------------------------------------------------ cudnn-inferred (issue 10) */

static void rule_cudnn_inferred(const gt_proc *p, gt_advice_list *l)
{
    if (p->cudnn_calls_seen)
        return;
    double fam_ms[GT_KF_COUNT] = {0}, total = 0;
    for (size_t i = 0; i < p->n_kernels; i++) {
        const gt_kernel_agg *k = &p->kernels[i];
        if (!k->conv_like || k->is_nccl)
            continue;
        fam_ms[k->family] += (double)k->total_ns / 1e6;
        total += (double)k->total_ns / 1e6;
    }
    if (total <= 0)
        return;
    gt_advice *a = add_item(l, p, "cudnn-inferred", GT_SEV_INFO);
    char parts[400] = "";
    size_t used = 0;
    for (int f = 1; f < GT_KF_COUNT; f++)
        if (fam_ms[f] > 0) {
            used += (size_t)snprintf(parts + used, used < sizeof parts ? sizeof parts - used : 0,
                                     "%s%s %s", used ? ", " : "", gt_kernel_family_name(f),
                                     gt_dur(fam_ms[f]));
            static const char *const keys[GT_KF_COUNT] = {
                "none_ms",         "implicit_gemm_ms", "winograd_ms",  "fft_ms",
                "tensor_cores_ms", "gemm_ms",          "other_conv_ms"};
            const char *key = keys[f];
            ev(a, key, fam_ms[f], "ms");
        }
    msg(a,
        "No cuDNN call was seen (the framework reaches cuDNN through its own pointers, e.g. "
        "JAX/XLA or TensorFlow), so the algorithms are inferred from kernel names: %s.",
        parts);
    a->t_ns = p->gpu_first_ns;
}

/* ------------------------------------------------------------------ entry points */

static int cmp_advice(const void *a, const void *b)
{
    const gt_advice *x = a, *y = b;
    if (x->severity != y->severity)
        return y->severity - x->severity;
    double sx = x->has_saving ? x->saving_ms : -1, sy = y->has_saving ? y->saving_ms : -1;
    if (sx != sy)
        return sx < sy ? 1 : -1;
    return strcmp(x->id, y->id);
}

void gt_advice_from_run(const gt_run *run, gt_advice_list *out)
{
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (p->open_status != 0)
            continue;
        rule_environment(p, out);
        if (!gt_proc_has_data(p))
            continue;
        rule_sync_stall(p, out);
        rule_pinned_memory(p, out);
        rule_non_blocking_copy(p, out);
        gt_adv_rule_launch_bound(p, out);
        gt_adv_rule_compilation(p, out);
        rule_gpu_idle(run, p, out);
        rule_amp(p, out);
        rule_alloc_in_loop(p, out);
        gt_adv_rule_cudnn_benchmark(p, out);
        rule_cudnn_inferred(p, out);
    }
    gt_adv_rule_straggler(run, out);
    if (out->n)
        qsort(out->items, out->n, sizeof *out->items, cmp_advice);
}

int gt_advice_compute(const char *const *paths, int n, gt_advice_list *out)
{
    gt_run run = {0};
    if (gt_run_load(&run, paths, n, 0) != 0) {
        gt_run_free(&run);
        return -1;
    }
    gt_advice_from_run(&run, out);
    gt_run_free(&run);
    return 0;
}

void gt_advice_list_free(gt_advice_list *list)
{
    free(list->items);
    memset(list, 0, sizeof *list);
}

const char *gt_severity_name(int severity)
{
    switch (severity) {
    case GT_SEV_CRITICAL:
        return "critical";
    case GT_SEV_WARNING:
        return "warning";
    default:
        return "info";
    }
}

int gt_severity_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "info"))
        return GT_SEV_INFO;
    if (!strcmp(name, "warning") || !strcmp(name, "warn"))
        return GT_SEV_WARNING;
    if (!strcmp(name, "critical") || !strcmp(name, "crit"))
        return GT_SEV_CRITICAL;
    return -1;
}
