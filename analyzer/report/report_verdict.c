/* report_verdict.c — the verdict block at the top of `gputrace report` (issue 21 item 8).
 *
 * The causes are the advice's own (advice_engine.c decided their savings, shares and severities,
 * each on its basis: per steady step, over the steady window, over the run), shown in the lists
 * the advice section shows, in the same order, so the verdict and the tables agree: failures,
 * savings per step and over the run (the list whose first share is larger first), risks; minor
 * findings on one line. When nothing stands out, the verdict names the largest measured idle
 * cause and its share. The phases and the idle causes are read from the model when it filled
 * them (phase_ns, steady_idle_cause_ns); when it did not, the lines say what is known without. */
#include "report_verdict.h"

#include <string.h>

#include "report_out.h"
#include "textfmt.h"
#include "util.h"

#define VERDICT_IDLE_CAUSES 3 /* idle causes named on their line */

static int has_steps(const gt_proc *p)
{
    return gt_adv_has_steps(p);
}

/* The causes in the advice's lists and order; notes and minor findings are not causes. */
void gt_verdict_build(const gt_run *run, const gt_advice_list *adv, gt_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->adv = adv;
    for (size_t i = 0; i < run->n; i++) {
        const gt_proc *p = &run->procs[i];
        if (!gt_proc_has_data(p))
            continue;
        if (!v->p || p->gpu_busy_ns > v->p->gpu_busy_ns) {
            v->other_procs += v->p != NULL;
            v->p = p;
        } else {
            v->other_procs++;
        }
    }
    if (!v->p)
        return;
    int order[GT_GROUP_COUNT];
    gt_advice_group_order(adv, order);
    for (int k = 0; k < GT_GROUP_COUNT; k++)
        for (size_t i = 0; i < adv->n; i++) {
            const gt_advice *a = &adv->items[i];
            int g = gt_advice_group(a);
            if (g != order[k])
                continue;
            if (g == GT_GROUP_MINOR) {
                v->n_minor++;
                continue;
            }
            if ((g == GT_GROUP_OTHER && a->impact != GT_IMPACT_RISK) ||
                v->n_causes >= GT_VERDICT_MAX_CAUSES)
                continue;
            v->causes[v->n_causes++] = (gt_verdict_cause){a, g};
        }
}

/* A line of the verdict stays readable: long texts give way between their tokens (textfmt.h). */
static const char *short_text(const char *text, int max)
{
    return gt_short_name(text, (size_t)max, 0);
}

static const char *command_of(const gt_proc *p)
{
    return short_text(p->cmdline && p->cmdline[0] ? p->cmdline : p->exe ? p->exe : "?", 72);
}

/* "GPU busy 92.3%"; a sampled trace without any window has no GPU figure */
static const char *busy_text(const gt_proc *p)
{
    if (p->gpu_sampled && !p->gpu_window_ns)
        return "GPU busy unknown (not recorded)";
    return gt_fmt("GPU busy %s%s", gt_pct(p->steady_busy_pct),
                  p->gpu_sampled ? " in the sampled windows" : "");
}

static void print_step_line(const gt_proc *p, FILE *out)
{
    if (has_steps(p)) {
        /* the per-step figures below are means (the window's totals over its steps) */
        double mean = gt_adv_step_ms(p);
        fprintf(out, "  steady step  %s (median%s of %zu steps%s, from %s); %s\n",
                gt_dur(p->step_ms_median),
                mean > 1.05 * p->step_ms_median || mean < 0.95 * p->step_ms_median
                    ? gt_fmt("; mean %s", gt_dur(mean))
                    : "",
                p->n_steps - p->warmup_steps,
                p->warmup_steps ? gt_fmt(" after %zu warm-up", p->warmup_steps) : "",
                p->step_source[0] ? short_text(p->step_source, 60) : "?", busy_text(p));
        return;
    }
    fprintf(out,
            "  steady state no steps found%s%s; the second half of the GPU's active time stands "
            "for it: %s\n",
            p->step_why[0] ? ": " : "", p->step_why[0] ? gt_step_why_summary(p->step_why, 100) : "",
            busy_text(p));
}

static int any_phase(const gt_proc *p)
{
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        if (p->phase_ns[k])
            return 1;
    return 0;
}

static const char *duration_text(double ms)
{
    return gt_dur(ms);
}

static void print_phases_line(const gt_proc *p, FILE *out)
{
    double run_ms = gt_proc_duration_ms(p);
    if (!any_phase(p)) { /* phases not computed: the run and the GPU's active span */
        fprintf(out, "  run          %s; GPU active %s of it, busy %s of that\n",
                duration_text(run_ms),
                duration_text((double)(p->gpu_last_ns - p->gpu_first_ns) / 1e6),
                gt_pct(gt_proc_busy_pct(p)));
        return;
    }
    fprintf(out, "  phases       %s:", duration_text(run_ms));
    int first = 1;
    for (int k = 0; k < GT_PHASE_COUNT; k++) {
        if (!p->phase_ns[k])
            continue;
        double ms = (double)p->phase_ns[k] / 1e6;
        fprintf(out, "%s %s %s (%s)", first ? "" : ",", gt_phase_name(k), duration_text(ms),
                gt_pct(run_ms > 0 ? 100 * ms / run_ms : 0));
        first = 0;
    }
    fputc('\n', out);
}

static int any_idle_cause(const gt_proc *p)
{
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (gt_adv_idle_cause_ms(p, c) > 0)
            return 1;
    return 0;
}

/* "of the 38.7 ms step" / "of the 5.4 s steady window" */
static const char *base_text(const gt_proc *p)
{
    return gt_fmt("of the %s %s", gt_dur(gt_adv_step_ms(p)),
                  has_steps(p) ? "step" : "steady window");
}

/* The idle cause with the largest steady time, -1 when none was measured. */
static int top_idle_cause(const gt_proc *p, const int *used)
{
    int best = -1;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if ((!used || !used[c]) && gt_adv_idle_cause_ms(p, c) > 0 &&
            (best < 0 || gt_adv_idle_cause_ms(p, c) > gt_adv_idle_cause_ms(p, best)))
            best = c;
    return best;
}

/* The steady GPU idle time, what it is a share of, and its causes, largest first (the figures
 * every advice rule uses: gt_adv_idle_ms). NCCL kernels spinning for a late rank keep their GPU
 * busy: said apart, not as idle. */
static void print_idle_line(const gt_proc *p, FILE *out)
{
    if (p->gpu_sampled && (p->gpu_per_step_unavailable || !p->gpu_window_ns)) {
        fprintf(out, "  GPU idle     unavailable: %s\n",
                p->gpu_window_ns ? "no whole step lies inside a sampled window"
                                 : "no sampled window was recorded");
        return;
    }
    const char *per = has_steps(p) ? " per step" : "";
    double idle = gt_adv_idle_ms(p), st = gt_adv_step_ms(p);
    fprintf(out, "  GPU idle     %s%s %s (%s)", gt_dur(idle), per, base_text(p),
            gt_pct(st > 0 ? 100 * idle / st : 0));
    int used[GT_IDLE_CAUSE_COUNT] = {0};
    for (int n = 0; n < VERDICT_IDLE_CAUSES && any_idle_cause(p); n++) {
        int best = top_idle_cause(p, used);
        if (best < 0)
            break;
        used[best] = 1;
        fprintf(out, "%s %s %s", n ? "," : ", by cause:", gt_idle_cause_name(best),
                gt_dur(gt_adv_idle_cause_ms(p, best)));
    }
    if (p->steady_nccl_wait_ns)
        fprintf(out, "; NCCL kernels spin %s%s waiting for a late rank",
                gt_dur((double)p->steady_nccl_wait_ns / 1e6 / gt_adv_steps(p)), per);
    fputc('\n', out);
}

static const char *group_label(const gt_verdict *v, int g)
{
    switch (g) {
    case GT_GROUP_FAILURE:
        return "failing";
    case GT_GROUP_STEP:
        for (size_t i = 0; i < v->n_causes; i++)
            if (v->causes[i].group == g && v->causes[i].advice->basis == GT_BASIS_STEP)
                return "per step";
        return "per window";
    case GT_GROUP_RUN:
        return "over the run";
    default:
        return "also";
    }
}

static void print_cause(const gt_verdict *v, size_t i, FILE *out, int color)
{
    const gt_advice *a = v->causes[i].advice;
    const char *words = gt_advice_what(a->id);
    int first_of_group = !i || v->causes[i - 1].group != v->causes[i].group;
    fprintf(out, "  %-13s%zu. %s%s%s%s%s", first_of_group ? group_label(v, v->causes[i].group) : "",
            i + 1, gt_sev_color(a->severity, color), a->id, gt_color_reset(color),
            words[0] ? ": " : "", words);
    if (a->has_saving)
        fprintf(out, " -- %s", gt_advice_saving_text(a));
    if (a->call_site[0])
        fprintf(out, " -- at %.80s", a->call_site);
    const char *who = gt_advice_who(a);
    if ((v->other_procs || a->n_procs > 1) && who[0])
        fprintf(out, " (%s)", who);
    fputc('\n', out);
}

static void print_minor(const gt_verdict *v, FILE *out)
{
    int n = 0;
    fprintf(out, "  minor        ");
    for (size_t i = 0; i < v->adv->n; i++) {
        const gt_advice *a = &v->adv->items[i];
        if (gt_advice_group(a) != GT_GROUP_MINOR)
            continue;
        if (n++ == 4) {
            fprintf(out, ", ...");
            break;
        }
        fprintf(out, "%s%s %s", n > 1 ? ", " : "", a->id,
                a->share_pct < 0.1 ? "<0.1%" : gt_pct(a->share_pct));
    }
    fprintf(out, " (each under %.0f%%)\n", GT_ADVICE_MINOR_PCT);
}

/* No cause stands out: the largest idle cause measured, with its share, is still the answer to
 * "why is my GPU idle". */
static void print_no_cause(const gt_verdict *v, FILE *out)
{
    const gt_proc *p = v->p;
    int c = top_idle_cause(p, NULL);
    double st = gt_adv_step_ms(p);
    const char *lead = v->n_minor ? "none above 1%" : "no rule fired";
    if (c < 0 || st <= 0) {
        fprintf(out, "  causes       %s; %s\n", lead, busy_text(p));
        return;
    }
    double ms = gt_adv_idle_cause_ms(p, c);
    fprintf(out, "  causes       %s; the largest idle cause is %s: %s%s %s (%s)\n", lead,
            gt_idle_cause_name(c), gt_dur(ms), has_steps(p) ? " per step" : "", base_text(p),
            gt_pct(100 * ms / st));
}

int gt_verdict_print(const gt_verdict *v, FILE *out, int color)
{
    if (!v->p)
        return 0;
    const gt_proc *p = v->p;
    int lines = 4;
    fprintf(out, "%s== verdict: %s, %s ==%s\n", gt_bold(color), gt_proc_label(p), command_of(p),
            gt_color_reset(color));
    print_step_line(p, out);
    lines += gt_sample_verdict_line(p, out); /* GPUTRACE_SAMPLE: the windows behind the figures */
    print_phases_line(p, out);
    print_idle_line(p, out);
    if (v->other_procs) {
        fprintf(out, "  (the process with the most GPU time; %zu other process%s below)\n",
                v->other_procs, v->other_procs == 1 ? "" : "es");
        lines++;
    }
    uint64_t lost = p->records_lost + p->cupti_dropped;
    if (lost || p->damaged || p->calls_before_cupti) { /* figures below are lower bounds */
        const char *late = p->calls_before_cupti
                               ? gt_fmt("%llu calls' GPU work not recorded (CUPTI attached late)",
                                        (unsigned long long)p->calls_before_cupti)
                               : "";
        fprintf(out, "  incomplete   %s%s%s%s: the figures are lower bounds\n",
                lost || p->damaged ? gt_fmt("%llu records lost", (unsigned long long)lost) : "",
                p->damaged ? ", file damaged" : "", (lost || p->damaged) && late[0] ? ", " : "",
                late);
        lines++;
    }
    int time_causes = 0;
    for (size_t i = 0; i < v->n_causes; i++)
        time_causes += v->causes[i].group == GT_GROUP_STEP || v->causes[i].group == GT_GROUP_RUN;
    if (!time_causes && lines < GT_VERDICT_MAX_LINES) {
        print_no_cause(v, out);
        lines++;
    }
    int room = GT_VERDICT_MAX_LINES - lines - (v->n_minor ? 1 : 0);
    for (size_t i = 0; i < v->n_causes && (int)i < room; i++, lines++)
        print_cause(v, i, out, color);
    if (v->n_minor && lines < GT_VERDICT_MAX_LINES) {
        print_minor(v, out);
        lines++;
    }
    return lines;
}

static json_t *verdict_json(const gt_verdict *v, const gt_proc *p);

static json_t *phases_json(const gt_proc *p)
{
    json_t *arr = json_array();
    double run_ms = gt_proc_duration_ms(p);
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        if (p->phase_ns[k])
            json_array_append_new(
                arr, json_pack("{s:s, s:f, s:f}", "phase", gt_phase_name(k), "ms",
                               (double)p->phase_ns[k] / 1e6, "share_pct",
                               run_ms > 0 ? 100 * (double)p->phase_ns[k] / 1e6 / run_ms : 0.0));
    return arr;
}

static json_t *idle_json(const gt_proc *p)
{
    json_t *o = json_object();
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (gt_adv_idle_cause_ms(p, c) > 0)
            json_object_set_new(o, gt_idle_cause_name(c), json_real(gt_adv_idle_cause_ms(p, c)));
    return o;
}

static json_t *cause_json(const gt_advice *a, int group)
{
    const char *basis = gt_saving_basis_name(a->basis);
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:b, s:o, s:i, s:i, s:s}", "id", a->id,
        "severity", gt_severity_name(a->severity), "what", gt_advice_what(a->id), "list",
        gt_advice_group_name(group), "estimated_saving_ms",
        a->has_saving ? json_real(a->saving_ms) : json_null(), "saving_basis",
        basis ? json_string(basis) : json_null(), "share_pct",
        a->share_pct >= 0 ? json_real(a->share_pct) : json_null(), "base_ms",
        a->has_saving ? json_real(a->base_ms) : json_null(), "saving_bound", a->saving_bound,
        "call_site", a->call_site[0] ? json_string(a->call_site) : json_null(), "pid", a->pid,
        "rank", a->rank, "who", gt_advice_who(a));
    return o;
}

static json_t *causes_json(const gt_verdict *v)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < v->n_causes; i++)
        json_array_append_new(arr, cause_json(v->causes[i].advice, v->causes[i].group));
    return arr;
}

static json_t *minor_json(const gt_verdict *v)
{
    json_t *arr = json_array();
    for (size_t i = 0; v->adv && i < v->adv->n; i++)
        if (gt_advice_group(&v->adv->items[i]) == GT_GROUP_MINOR)
            json_array_append_new(arr, cause_json(&v->adv->items[i], GT_GROUP_MINOR));
    return arr;
}

/* The largest measured idle cause: what the verdict names when no cause stands out. */
static json_t *largest_idle_json(const gt_proc *p)
{
    int c = top_idle_cause(p, NULL);
    double st = gt_adv_step_ms(p);
    if (c < 0 || st <= 0)
        return json_null();
    double ms = gt_adv_idle_cause_ms(p, c);
    return json_pack("{s:s, s:f, s:f}", "cause", gt_idle_cause_name(c), "ms_per_step", ms,
                     "share_pct", 100 * ms / st);
}

json_t *gt_verdict_json(const gt_verdict *v)
{
    if (!v->p)
        return json_null();
    const gt_proc *p = v->p;
    json_t *o = verdict_json(v, p);
    if (o && p->gpu_sampled) /* only then: a full trace's verdict stays as it was */
        json_object_set_new(o, "gpu_sampling", gt_sample_verdict_json(p));
    return o;
}

static json_t *verdict_json(const gt_verdict *v, const gt_proc *p)
{
    json_t *o = json_pack("{s:i, s:i, s:o, s:s, s:I, s:I, s:f, s:f, s:f, s:o, s:o, s:o, s:I}",
                          "pid", p->hdr.pid, "rank", p->hdr.rank, "step_ms",
                          has_steps(p) ? json_real(p->step_ms_median) : json_null(), "step_source",
                          p->step_source, "steps", (json_int_t)p->n_steps, "warmup_steps",
                          (json_int_t)p->warmup_steps, "steady_busy_pct", p->steady_busy_pct,
                          "busy_pct", gt_proc_busy_pct(p), "duration_ms", gt_proc_duration_ms(p),
                          "phases", phases_json(p), "steady_idle_ms_per_step", idle_json(p),
                          "causes", causes_json(v), "other_processes", (json_int_t)v->other_procs);
    /* what the per-step figures are a share of: the mean steady step, or the steady window */
    json_object_set_new(o, "step_mean_ms",
                        has_steps(p) ? json_real(gt_adv_step_ms(p)) : json_null());
    json_object_set_new(o, "steady_window_ms", json_real(gt_adv_window_ms(p)));
    json_object_set_new(o, "steady_idle_ms", json_real(gt_adv_idle_ms(p)));
    json_object_set_new(o, "nccl_spin_ms_per_step",
                        json_real((double)p->steady_nccl_wait_ns / 1e6 / gt_adv_steps(p)));
    json_object_set_new(o, "minor", minor_json(v));
    json_object_set_new(o, "largest_idle_cause", largest_idle_json(p));
    return o;
}
