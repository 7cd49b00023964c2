/* advice_engine.c — runs the rules of advice_table.c and decides, in one place for all of them,
 * what their findings mean (docs/advice.md, "Saving and severity"):
 *
 *   1. no double counting: the time a saving comes out of (enum gt_saving_pool: the steady step's
 *      GPU idle or busy time, its CPU time in calls, the run's autotuning or JIT phase, the rest
 *      of the run) is handed out once per process, estimates before upper bounds, largest saving
 *      first; a finding whose time an earlier one already holds keeps only what is left
 *      (saving_before_ms says how much it had);
 *   2. the share: the saving over what it is a saving of (the mean steady step, the steady window
 *      when no steps were found, or the run), never above 100%;
 *   3. the severity, from that share (>= 25% critical, >= 5% warning, else info; an upper bound
 *      alone at most info) or, for findings without a time, from their impact (a failure is
 *      critical, a risk a warning, a note info); under 1% the finding is minor (folded);
 *   4. the wording, once the figures are final;
 *   5. the same finding on several ranks (same rule, call site and basis) merged into one item
 *      naming the ranks, with the figures of the rank where it costs most;
 *   6. the order: severity, then share. */
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "advice_rule.h"
#include "util.h"

typedef struct found {
    gt_advice a;
    const gt_rule *rule;
    const gt_proc *p;
    int merged_into; /* -1, or the index of the item this one was merged into */
    alignas(16) unsigned char data[GT_RULE_DATA_MAX];
} found;

typedef struct found_list {
    found *v;
    size_t n, cap;
} found_list;

static const gt_proc *proc_by_pid(const gt_run *run, int pid)
{
    for (size_t i = 0; pid && i < run->n; i++)
        if (run->procs[i].hdr.pid == pid && gt_proc_has_data(&run->procs[i]))
            return &run->procs[i];
    return NULL;
}

static found *next_slot(found_list *fl, const gt_rule *rule, const gt_proc *p)
{
    gt_grow((void **)&fl->v, &fl->cap, fl->n, sizeof *fl->v);
    found *f = &fl->v[fl->n];
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->p = p;
    f->merged_into = -1;
    snprintf(f->a.id, sizeof f->a.id, "%s", rule->id);
    f->a.pid = p ? p->hdr.pid : 0;
    f->a.rank = p ? p->hdr.rank : -1;
    f->a.t_ns = p ? p->steady_start_ns : 0;
    f->a.share_pct = -1;
    f->a.framework = p ? gt_proc_framework(p) : GT_FW_NATIVE;
    return f;
}

static gt_rule_ctx ctx_of(const gt_run *run, const gt_proc *p)
{
    return (gt_rule_ctx){run, p, p ? gt_proc_framework(p) : GT_FW_NATIVE};
}

static void run_rules(const gt_run *run, found_list *fl)
{
    for (size_t r = 0; r < gt_n_rules; r++) {
        const gt_rule *rule = gt_rules[r];
        if (rule->scope == GT_RULE_RUN) {
            found *f = next_slot(fl, rule, NULL);
            gt_rule_ctx c = ctx_of(run, NULL);
            if (rule->find(&c, &f->a, f->data)) {
                f->p = proc_by_pid(run, f->a.pid);
                f->a.framework = f->p ? gt_proc_framework(f->p) : GT_FW_NATIVE;
                fl->n++;
            }
            continue;
        }
        for (size_t i = 0; i < run->n; i++) {
            const gt_proc *p = &run->procs[i];
            if (p->open_status != 0 || (rule->scope == GT_RULE_PROCESS && !gt_proc_has_data(p)))
                continue;
            found *f = next_slot(fl, rule, p);
            gt_rule_ctx c = ctx_of(run, p);
            fl->n += rule->find(&c, &f->a, f->data) != 0;
        }
    }
}

/* ------------------------------------------------------------------ 1. pools */

typedef struct pools {
    double step[GT_POOL_COUNT], step_total; /* per step (or over the steady window) */
    double run[GT_POOL_COUNT], run_total;   /* over the run */
} pools;

static double ms_of(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void pools_of(const gt_proc *p, pools *k)
{
    memset(k, 0, sizeof *k);
    double st = gt_adv_step_ms(p), run = gt_proc_duration_ms(p);
    k->step[GT_POOL_IDLE] = gt_adv_idle_ms(p);
    k->step[GT_POOL_BUSY] = gt_adv_busy_ms(p);
    k->step[GT_POOL_CPU] = st;
    k->step_total = st;
    /* without the phases (not computed) a phase's cost is bounded by the run alone */
    k->run[GT_POOL_AUTOTUNE] =
        p->phase_ns[GT_PHASE_AUTOTUNE] ? ms_of(p->phase_ns[GT_PHASE_AUTOTUNE]) : run;
    k->run[GT_POOL_JIT] = p->phase_ns[GT_PHASE_JIT] ? ms_of(p->phase_ns[GT_PHASE_JIT]) : run;
    k->run[GT_POOL_COMPILE] =
        p->phase_ns[GT_PHASE_COMPILE] ? ms_of(p->phase_ns[GT_PHASE_COMPILE]) : run;
    k->run[GT_POOL_RUN] = run;
    k->run_total = run;
}

/* Estimates before upper bounds (a bound takes what the estimates left), then largest first. */
static int cmp_saving(const void *x, const void *y)
{
    const found *a = *(const found *const *)x, *b = *(const found *const *)y;
    if (a->a.saving_bound != b->a.saving_bound)
        return a->a.saving_bound - b->a.saving_bound;
    if (a->a.saving_ms != b->a.saving_ms)
        return a->a.saving_ms < b->a.saving_ms ? 1 : -1;
    return a < b ? -1 : a > b; /* table order among equals */
}

/* The findings of one process, largest saving first, each taking what is left of its pool. */
static void apportion(const gt_proc *p, found_list *fl)
{
    size_t n = 0;
    found **mine = gt_xcalloc(fl->n + 1, sizeof *mine);
    for (size_t i = 0; i < fl->n; i++)
        if (fl->v[i].p == p && fl->v[i].a.has_saving)
            mine[n++] = &fl->v[i];
    qsort(mine, n, sizeof *mine, cmp_saving);
    pools k;
    pools_of(p, &k);
    for (size_t i = 0; i < n; i++) {
        gt_advice *a = &mine[i]->a;
        int on_run = a->basis == GT_BASIS_RUN;
        int pool = a->pool >= 0 && a->pool < GT_POOL_COUNT ? a->pool : GT_POOL_RUN;
        if (on_run && pool < GT_POOL_AUTOTUNE) /* step pools have no meaning over the run */
            pool = GT_POOL_RUN;
        double *left = on_run ? &k.run[pool] : &k.step[pool];
        double *total = on_run ? &k.run_total : &k.step_total;
        double avail = *left < *total ? *left : *total;
        if (avail < 0)
            avail = 0;
        if (a->saving_ms > avail) {
            a->saving_before_ms = a->saving_ms;
            a->saving_ms = avail;
        }
        *left -= a->saving_ms;
        *total -= a->saving_ms;
        if (!on_run && pool != GT_POOL_CPU) /* GPU idle or busy time is step time too */
            k.step[GT_POOL_CPU] -= a->saving_ms;
    }
    free(mine);
}

/* ------------------------------------------------------------------ 2, 3. share and severity */

static double base_of(const gt_proc *p, int basis)
{
    if (!p)
        return 0;
    if (basis == GT_BASIS_RUN)
        return gt_proc_duration_ms(p);
    return basis == GT_BASIS_STEP ? gt_adv_step_ms(p) : gt_adv_window_ms(p);
}

static int severity_of(const gt_advice *a)
{
    switch (a->impact) {
    case GT_IMPACT_FAILURE:
        return GT_SEV_CRITICAL;
    case GT_IMPACT_RISK:
        return GT_SEV_WARNING;
    case GT_IMPACT_NOTE:
        return GT_SEV_INFO;
    default:
        break;
    }
    if (a->saving_bound || a->share_pct < GT_ADVICE_WARNING_PCT)
        return GT_SEV_INFO;
    return a->share_pct >= GT_ADVICE_CRITICAL_PCT ? GT_SEV_CRITICAL : GT_SEV_WARNING;
}

static void weigh(found *f)
{
    gt_advice *a = &f->a;
    if (a->impact == GT_IMPACT_TIME && a->has_saving) {
        a->base_ms = base_of(f->p, a->basis);
        a->share_pct = a->base_ms > 0 ? 100 * a->saving_ms / a->base_ms : 0;
        if (a->share_pct > 100)
            a->share_pct = 100;
        a->minor = a->share_pct < GT_ADVICE_MINOR_PCT;
    } else {
        a->impact = a->impact == GT_IMPACT_TIME ? GT_IMPACT_NOTE : a->impact;
        a->has_saving = 0;
        a->basis = GT_BASIS_NONE;
        a->share_pct = -1;
    }
    a->severity = severity_of(a);
}

/* ------------------------------------------------------------------ 4. wording */

static void word(const gt_run *run, found *f)
{
    gt_words w;
    memset(&w, 0, sizeof w);
    gt_rule_ctx c = ctx_of(run, f->p);
    f->rule->word(&c, &f->a, f->data, &w);
    snprintf(f->a.remedy, sizeof f->a.remedy, "%s", w.remedy);
    size_t n = strlen(w.seen);
    memcpy(f->a.message, w.seen, n + 1); /* the sentence whole; the remedy cut if both do not fit */
    if (w.remedy[0] && n + 1 < sizeof f->a.message) {
        f->a.message[n] = ' ';
        gt_say(f->a.message + n + 1, sizeof f->a.message - n - 1, "%s", w.remedy);
    }
}

/* ------------------------------------------------------------------ 5. ranks */

static int same_finding(const found *x, const found *y)
{
    return x->p && y->p && x->p->hdr.rank != y->p->hdr.rank && x->p->hdr.rank >= 0 &&
           y->p->hdr.rank >= 0 && !strcmp(x->a.id, y->a.id) &&
           !strcmp(x->a.call_site, y->a.call_site) && x->a.basis == y->a.basis &&
           x->a.impact == y->a.impact;
}

static double share_key(const gt_advice *a)
{
    return a->share_pct >= 0 ? a->share_pct : -1;
}

static void sort_ranks(gt_advice *a)
{
    for (int i = 1; i < a->n_procs; i++)
        for (int j = i; j > 0 && a->ranks[j] < a->ranks[j - 1]; j--) {
            int r = a->ranks[j], p = a->pids[j];
            a->ranks[j] = a->ranks[j - 1], a->pids[j] = a->pids[j - 1];
            a->ranks[j - 1] = r, a->pids[j - 1] = p;
        }
}

/* Each group of the same finding on several ranks becomes its costliest member, naming them all
 * and what the others measured. */
static void merge_ranks(found_list *fl)
{
    for (size_t i = 0; i < fl->n; i++) {
        found *rep = &fl->v[i];
        if (rep->merged_into >= 0 || !rep->p || rep->p->hdr.rank < 0)
            continue;
        for (size_t j = i + 1; j < fl->n; j++) /* the costliest member stands for the group */
            if (fl->v[j].merged_into < 0 && same_finding(rep, &fl->v[j]) &&
                share_key(&fl->v[j].a) > share_key(&rep->a)) {
                found tmp = *rep;
                *rep = fl->v[j];
                fl->v[j] = tmp;
            }
        gt_advice *a = &rep->a;
        a->n_procs = 1;
        a->pids[0] = a->pid;
        a->ranks[0] = a->rank;
        char others[240] = "";
        size_t used = 0;
        for (size_t j = i + 1; j < fl->n; j++) {
            found *o = &fl->v[j];
            if (o->merged_into >= 0 || !same_finding(rep, o) || a->n_procs >= GT_ADVICE_MAX_PROCS)
                continue;
            o->merged_into = (int)i;
            a->pids[a->n_procs] = o->a.pid;
            a->ranks[a->n_procs++] = o->a.rank;
            if (o->a.has_saving && used < sizeof others)
                used += (size_t)snprintf(others + used, sizeof others - used, "%srank %d %s",
                                         used ? ", " : "", o->a.rank, gt_adv_ms(o->a.saving_ms));
        }
        if (a->n_procs < 2)
            continue;
        sort_ranks(a);
        size_t len = strlen(a->message);
        snprintf(a->message + len, sizeof a->message - len,
                 " Seen on %s; the figures are rank %d's%s%s%s.", gt_advice_who(a), a->rank,
                 others[0] ? " (saving elsewhere: " : "", others, others[0] ? ")" : "");
    }
}

/* ------------------------------------------------------------------ 6. order */

static int cmp_advice(const void *x, const void *y)
{
    const gt_advice *a = x, *b = y;
    if (a->severity != b->severity)
        return b->severity - a->severity;
    if (share_key(a) != share_key(b))
        return share_key(a) < share_key(b) ? 1 : -1;
    if (a->impact != b->impact)
        return a->impact - b->impact;
    int c = strcmp(a->id, b->id);
    return c ? c : a->pid - b->pid;
}

void gt_advice_from_run(const gt_run *run, gt_advice_list *out)
{
    found_list fl = {0};
    run_rules(run, &fl);
    for (size_t i = 0; i < run->n; i++)
        if (gt_proc_has_data(&run->procs[i]))
            apportion(&run->procs[i], &fl);
    for (size_t i = 0; i < fl.n; i++)
        weigh(&fl.v[i]);
    for (size_t i = 0; i < fl.n; i++)
        word(run, &fl.v[i]);
    merge_ranks(&fl);
    size_t start = out->n;
    for (size_t i = 0; i < fl.n; i++) {
        if (fl.v[i].merged_into >= 0)
            continue;
        gt_grow((void **)&out->items, &out->cap, out->n, sizeof *out->items);
        out->items[out->n++] = fl.v[i].a;
    }
    if (out->n > start)
        qsort(out->items + start, out->n - start, sizeof *out->items, cmp_advice);
    free(fl.v);
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
