/* report_verdict.c — the verdict block at the top of `gputrace report` (issue 21 item 8).
 *
 * Savings come per steady step or over the whole run (gt_advice.saving_per_step), so causes are
 * ranked by their share: a per-step saving over the steady step, a run saving over the run. The
 * phases and the idle causes are read from the model when it filled them (phase_ns,
 * steady_idle_cause_ns); when it did not, the lines say what is known without them. */
#include "report_verdict.h"

#include <string.h>

#include "report_out.h"
#include "textfmt.h"
#include "util.h"

#define VERDICT_IDLE_CAUSES 3 /* idle causes named on their line */

static int has_steps(const gt_proc *p)
{
    return p->n_steps >= 2;
}

static double steady_step_ms(const gt_proc *p)
{
    if (has_steps(p))
        return p->step_ms_median;
    return p->steady_end_ns > p->steady_start_ns
               ? (double)(p->steady_end_ns - p->steady_start_ns) / 1e6
               : 0;
}

static const gt_proc *proc_of(const gt_run *run, const gt_advice *a)
{
    for (size_t i = 0; i < run->n; i++)
        if (a->pid && run->procs[i].hdr.pid == a->pid && gt_proc_has_data(&run->procs[i]))
            return &run->procs[i];
    return NULL;
}

/* The saving as a share of what it is a saving of: the steady step, or the run. */
static double saving_share(const gt_run *run, const gt_verdict *v, const gt_advice *a)
{
    if (!a->has_saving)
        return -1;
    const gt_proc *p = proc_of(run, a);
    if (!p)
        p = v->p;
    double base = a->saving_per_step ? steady_step_ms(p) : gt_proc_duration_ms(p);
    return base > 0 ? 100.0 * a->saving_ms / base : -1;
}

static int cause_before(const gt_verdict_cause *x, const gt_verdict_cause *y)
{
    if ((x->share_pct >= 0) != (y->share_pct >= 0))
        return x->share_pct >= 0;
    if (x->share_pct != y->share_pct)
        return x->share_pct > y->share_pct;
    return x->advice->severity > y->advice->severity;
}

void gt_verdict_build(const gt_run *run, const gt_advice_list *adv, gt_verdict *v)
{
    memset(v, 0, sizeof *v);
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
    for (size_t i = 0; i < adv->n; i++) { /* insertion sort, keeping the best ones */
        gt_verdict_cause c = {&adv->items[i], saving_share(run, v, &adv->items[i])};
        size_t at = v->n_causes;
        while (at > 0 && cause_before(&c, &v->causes[at - 1]))
            at--;
        if (at >= GT_VERDICT_MAX_CAUSES)
            continue;
        size_t n = v->n_causes < GT_VERDICT_MAX_CAUSES ? v->n_causes : GT_VERDICT_MAX_CAUSES - 1;
        memmove(&v->causes[at + 1], &v->causes[at], (n - at) * sizeof v->causes[0]);
        v->causes[at] = c;
        v->n_causes = n + 1;
    }
}

/* What each rule is about, in a few words: the verdict names the cause, the advice says more. */
static const char *cause_words(const char *id)
{
    static const char *const words[][2] = {
        {"sync-stall", "the CPU waits for the GPU"},
        {"pinned-memory", "copies from pageable host memory"},
        {"non-blocking-copy", "blocking host-to-device copies"},
        {"launch-bound", "the GPU waits for kernel launches"},
        {"gpu-idle", "the GPU idles while the CPU works elsewhere"},
        {"amp", "fp32 math without tensor cores"},
        {"alloc-in-loop", "cudaMalloc/cudaFree in the loop"},
        {"cudnn-benchmark", "cuDNN algorithm choice / autotuning"},
        {"cudnn-inferred", "cuDNN algorithms inferred from kernel names"},
        {"straggler", "one rank holds the others back"},
        {"compilation", "the program compiles in the process (one-time)"},
        {"recompilation", "the program compiles again after the first steps"},
        {"environment", "the environment"},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(words[i][0], id))
            return words[i][1];
    return "";
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
        fprintf(out, "  steady step  %s (median of %zu steps%s, from %s); %s\n",
                gt_dur(p->step_ms_median), p->n_steps - p->warmup_steps,
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
        if (p->steady_idle_cause_ns[c])
            return 1;
    return 0;
}

static void print_idle_line(const gt_proc *p, FILE *out)
{
    if (p->gpu_sampled && (p->gpu_per_step_unavailable || !p->gpu_window_ns)) {
        fprintf(out, "  GPU idle     unavailable: %s\n",
                p->gpu_window_ns ? "no whole step lies inside a sampled window"
                                 : "no sampled window was recorded");
        return;
    }
    const char *per = has_steps(p) ? " per step" : "";
    double steps = p->steady_steps > 0 ? p->steady_steps : 1;
    if (!any_idle_cause(p)) { /* causes not computed: the steady idle time alone */
        double idle = steady_step_ms(p) * (1 - p->steady_busy_pct / 100);
        if (has_steps(p))
            fprintf(out, "  GPU idle     %s per step in the steady state\n", gt_dur(idle));
        else
            fprintf(out, "  GPU idle     %s of the %s steady window\n", gt_dur(idle),
                    gt_dur(steady_step_ms(p)));
        return;
    }
    int used[GT_IDLE_CAUSE_COUNT] = {0};
    fprintf(out, "  GPU idle     by cause in the steady state:");
    for (int n = 0; n < VERDICT_IDLE_CAUSES; n++) {
        int best = -1;
        for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
            if (!used[c] && p->steady_idle_cause_ns[c] &&
                (best < 0 || p->steady_idle_cause_ns[c] > p->steady_idle_cause_ns[best]))
                best = c;
        if (best < 0)
            break;
        used[best] = 1;
        fprintf(out, "%s %s %s%s", n ? "," : "", gt_idle_cause_name(best),
                gt_dur((double)p->steady_idle_cause_ns[best] / 1e6 / steps), per);
    }
    fputc('\n', out);
}

static void print_cause(const gt_verdict *v, size_t i, FILE *out, int color)
{
    const gt_advice *a = v->causes[i].advice;
    const char *words = cause_words(a->id);
    fprintf(out, "  %zu. %s%s%s%s%s", i + 1, gt_sev_color(a->severity, color), a->id,
            gt_color_reset(color), words[0] ? ": " : "", words);
    if (a->has_saving && v->causes[i].share_pct >= 0)
        fprintf(out, " -- saves about %s %s (%s)", gt_dur(a->saving_ms),
                a->saving_per_step ? "per step" : "over the run", gt_pct(v->causes[i].share_pct));
    else
        fprintf(out, " -- saving not estimated");
    if (a->call_site[0])
        fprintf(out, " -- at %s", a->call_site);
    if (v->other_procs && a->pid)
        fprintf(out, " (%s)", a->rank >= 0 ? gt_fmt("rank %d", a->rank) : gt_fmt("pid %d", a->pid));
    fputc('\n', out);
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
    if (lost || p->damaged) { /* figures below are lower bounds: say so before them */
        fprintf(out, "  incomplete   %llu records lost%s: the figures are lower bounds\n",
                (unsigned long long)lost, p->damaged ? ", file damaged" : "");
        lines++;
    }
    if (!v->n_causes) {
        fprintf(out, "  causes       none found: no advice\n");
        return lines + 1;
    }
    for (size_t i = 0; i < v->n_causes && lines < GT_VERDICT_MAX_LINES; i++, lines++)
        print_cause(v, i, out, color);
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
    double steps = p->steady_steps > 0 ? p->steady_steps : 1;
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (p->steady_idle_cause_ns[c])
            json_object_set_new(o, gt_idle_cause_name(c),
                                json_real((double)p->steady_idle_cause_ns[c] / 1e6 / steps));
    return o;
}

static json_t *causes_json(const gt_verdict *v)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < v->n_causes; i++) {
        const gt_advice *a = v->causes[i].advice;
        double share = v->causes[i].share_pct;
        json_array_append_new(
            arr,
            json_pack("{s:s, s:s, s:s, s:o, s:s, s:o, s:o, s:i, s:i}", "id", a->id, "severity",
                      gt_severity_name(a->severity), "what", cause_words(a->id),
                      "estimated_saving_ms", a->has_saving ? json_real(a->saving_ms) : json_null(),
                      "saving_basis", a->saving_per_step ? "per_step" : "run", "share_pct",
                      share >= 0 ? json_real(share) : json_null(), "call_site",
                      a->call_site[0] ? json_string(a->call_site) : json_null(), "pid", a->pid,
                      "rank", a->rank));
    }
    return arr;
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
    return json_pack("{s:i, s:i, s:o, s:s, s:I, s:I, s:f, s:f, s:f, s:o, s:o, s:o, s:I}", "pid",
                     p->hdr.pid, "rank", p->hdr.rank, "step_ms",
                     has_steps(p) ? json_real(p->step_ms_median) : json_null(), "step_source",
                     p->step_source, "steps", (json_int_t)p->n_steps, "warmup_steps",
                     (json_int_t)p->warmup_steps, "steady_busy_pct", p->steady_busy_pct, "busy_pct",
                     gt_proc_busy_pct(p), "duration_ms", gt_proc_duration_ms(p), "phases",
                     phases_json(p), "steady_idle_ms_per_step", idle_json(p), "causes",
                     causes_json(v), "other_processes", (json_int_t)v->other_procs);
}
