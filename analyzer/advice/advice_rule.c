/* advice_rule.c — what every rule uses to fill its item (evidence, saving, call site) and to
 * measure the steady state the same way as the others (advice_rule.h). */
#include "advice_rule.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

void gt_adv_ev(gt_advice *a, const char *key, double value, const char *unit)
{
    if (a->n_evidence >= GT_ADVICE_MAX_EVIDENCE)
        return;
    gt_evidence *e = &a->evidence[a->n_evidence++];
    snprintf(e->key, sizeof e->key, "%s", key);
    e->value = value;
    snprintf(e->unit, sizeof e->unit, "%s", unit);
}

static void saving_v(gt_advice *a, double ms, int basis, int pool, int bound, const char *source,
                     va_list ap)
{
    a->impact = GT_IMPACT_TIME;
    a->has_saving = 1;
    a->saving_ms = ms > 0 ? ms : 0;
    a->basis = basis;
    a->pool = pool;
    a->saving_bound = bound;
    vsnprintf(a->saving_source, sizeof a->saving_source, source, ap);
}

void gt_adv_saving(gt_advice *a, double ms, int basis, int pool, const char *source, ...)
{
    va_list ap;
    va_start(ap, source);
    saving_v(a, ms, basis, pool, 0, source, ap);
    va_end(ap);
}

void gt_adv_bound(gt_advice *a, double ms, int basis, int pool, const char *source, ...)
{
    va_list ap;
    va_start(ap, source);
    saving_v(a, ms, basis, pool, 1, source, ap);
    va_end(ap);
}

void gt_adv_impact(gt_advice *a, int impact)
{
    a->impact = impact;
    a->has_saving = 0;
    a->basis = GT_BASIS_NONE;
}

void gt_adv_site(gt_advice *a, const gt_proc *p, uint32_t stack_id)
{
    const char *s = gt_proc_call_site(p, stack_id);
    if (s)
        snprintf(a->call_site, sizeof a->call_site, "%s", s);
}

int gt_adv_has_steps(const gt_proc *p)
{
    return p->n_steps >= 2;
}

double gt_adv_steps(const gt_proc *p)
{
    return p->steady_steps > 0 ? p->steady_steps : 1;
}

double gt_adv_window_ms(const gt_proc *p)
{
    if (p->steady_end_ns <= p->steady_start_ns)
        return 0;
    uint64_t w = p->steady_end_ns - p->steady_start_ns;
    w -= p->steady_named_phase_ns < w ? p->steady_named_phase_ns : w;
    return (double)w / 1e6;
}

/* The mean, not the median: the per-step figures are the steady window's totals over its steps,
 * so only the mean bounds them (a rare long step raises both). */
double gt_adv_step_ms(const gt_proc *p)
{
    if (!gt_adv_has_steps(p))
        return gt_adv_window_ms(p);
    double mean = gt_adv_window_ms(p) / gt_adv_steps(p);
    return mean > 0 ? mean : p->step_ms_median;
}

int gt_adv_basis(const gt_proc *p)
{
    return gt_adv_has_steps(p) ? GT_BASIS_STEP : GT_BASIS_WINDOW;
}

const char *gt_adv_per(const gt_proc *p)
{
    return gt_adv_has_steps(p) ? "per step" : "in the steady window";
}

const char *gt_adv_ms(double ms)
{
    return gt_advice_ms_text(ms);
}

const char *gt_adv_base_words(const gt_proc *p)
{
    if (gt_adv_has_steps(p))
        return gt_fmt("the %s step", gt_adv_ms(gt_adv_step_ms(p)));
    return gt_fmt("the %s steady window", gt_adv_ms(gt_adv_window_ms(p)));
}

double gt_adv_idle_ms(const gt_proc *p)
{
    uint64_t idle = 0;
    int any = 0;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++) {
        idle += p->steady_idle_cause_ns[c];
        any |= p->steady_idle_cause_ns[c] != 0;
    }
    uint64_t spin = p->steady_nccl_wait_ns; /* counted as collective wait: the GPU was busy */
    idle -= spin < idle ? spin : idle;
    double st = gt_adv_step_ms(p);
    double ms = any ? (double)idle / 1e6 / gt_adv_steps(p) : st * (1 - p->steady_busy_pct / 100);
    return ms < st ? ms : st;
}

double gt_adv_idle_cause_ms(const gt_proc *p, int cause)
{
    uint64_t ns = p->steady_idle_cause_ns[cause];
    if (cause == GT_IDLE_COLLECTIVE)
        ns -= p->steady_nccl_wait_ns < ns ? p->steady_nccl_wait_ns : ns;
    return (double)ns / 1e6 / gt_adv_steps(p);
}

double gt_adv_busy_ms(const gt_proc *p)
{
    double st = gt_adv_step_ms(p), busy = st * p->steady_busy_pct / 100;
    return busy < st ? busy : st;
}

void gt_say(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
}

int gt_adv_max_cc(const gt_proc *p)
{
    int best = 0;
    for (int i = 0; i < GT_MAX_DEVICES && i < p->hdr.runtime.device_count; i++) {
        int cc = p->hdr.runtime.devices[i].cc_major * 10 + p->hdr.runtime.devices[i].cc_minor;
        best = cc > best ? cc : best;
    }
    return best;
}

double gt_adv_after_sync_excess_ms(const gt_proc *p)
{
    if (!gt_adv_has_steps(p))
        return 0;
    double busy = p->steady_busy_pct / 100 * gt_adv_window_ms(p);
    double excess = (double)p->steady_after_sync_nocall_ns / 1e6 - busy;
    return excess > 0 ? excess : 0;
}
