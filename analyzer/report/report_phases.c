/* report_phases.c — the phases of a process (model_phases.c) in the report: one line of text
 * naming the time outside the steady state ("JIT compilation 2.1 s, cuDNN autotuning 19 s") and
 * the JSON's "phases" (every span) and "phase_totals" (per kind its total, the GPU's idle time
 * in it, how many spans; and the JIT evidence). */
#include <string.h>

#include "report_out.h"
#include "textfmt.h"

static void print_duration(FILE *out, uint64_t ns)
{
    fputs(gt_dur_ns((double)ns), out);
}

void gt_phases_print(const gt_proc *p, FILE *out)
{
    if (!p->n_phases)
        return;
    fprintf(out, "  phases   ");
    int first = 1;
    for (int k = 0; k < GT_PHASE_COUNT; k++) {
        if (!p->phase_ns[k])
            continue;
        fprintf(out, "%s %s ", first ? "" : ",", gt_phase_name(k));
        first = 0;
        print_duration(out, p->phase_ns[k]);
        if (p->phase_idle_ns[k] >= GT_BIG_GAP_NS && k != GT_PHASE_STEADY) {
            fprintf(out, " (GPU idle ");
            print_duration(out, p->phase_idle_ns[k]);
            fprintf(out, ")");
        }
    }
    fprintf(out, "\n");
    if (p->n_compilations) {
        fprintf(out, "  compile  %s: the first compilation ",
                gt_framework_name(gt_proc_remedy_framework(p) == GT_FW_JAX ? GT_FW_JAX
                                                                           : GT_FW_TORCH_COMPILE));
        print_duration(out, p->compile_first_ns);
        fprintf(out, " at ");
        print_duration(out, p->compilations[0].start_ns - p->t_min);
        fprintf(out, " into the run, %s (",
                gt_counted((double)(p->n_compilations - 1), "recompilation", "recompilations"));
        print_duration(out, p->recompile_ns);
        fprintf(out, "); %s from the compiler's frames, %s\n",
                gt_counted((double)p->compile_calls, "CUDA call", "CUDA calls"),
                gt_counted((double)p->compile_workers, "compile worker process",
                           "compile worker processes"));
    }
    if (p->jit_calls || p->jit_children) {
        fprintf(out, "  JIT      %s (",
                gt_counted((double)p->jit_calls, "compile/module-load call",
                           "compile/module-load calls"));
        print_duration(out, p->jit_call_ns);
        fprintf(out, "), %s (",
                gt_counted((double)p->jit_children, "compiler process", "compiler processes"));
        print_duration(out, p->jit_children_ns);
        fprintf(out, ")\n");
    }
    uint64_t named = 0;
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        named += gt_phase_is_named_cost(k) ? p->phase_idle_ns[k] : 0;
    if (named >= GT_BIG_GAP_NS)
        fprintf(out, "           GPU idle in compilation, JIT compilation and autotuning is not "
                     "counted as the steady state's idle time\n");
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* The part of [a, b) inside the spans of phase kind. */
static uint64_t in_phase(const gt_proc *p, int kind, uint64_t a, uint64_t b)
{
    uint64_t ns = 0;
    for (size_t i = 0; i < p->n_phases; i++)
        if (p->phases[i].kind == kind)
            ns += overlap(a, b, p->phases[i].start_ns, p->phases[i].end_ns);
    return ns;
}

/* What the GPU did in phase kind, for the HTML page's bar per phase: the time it was in use at
 * all (between its first and last work), and in that time the idle gaps of GT_GAP_MIN_NS and
 * more by the cause that took most of each gap (model_idle.c); the rest is busy or in shorter
 * gaps. */
static void phase_gpu_json(json_t *o, const gt_proc *p, int kind)
{
    uint64_t ns[GT_IDLE_CAUSE_COUNT] = {0};
    for (size_t i = 0; i < p->n_gaps; i++)
        if (p->gaps[i].cause >= 0 && p->gaps[i].cause < GT_IDLE_CAUSE_COUNT)
            ns[p->gaps[i].cause] += in_phase(p, kind, p->gaps[i].start_ns, p->gaps[i].end_ns);
    json_t *by = json_object();
    for (int c = 0; c < GT_IDLE_CAUSE_COUNT; c++)
        if (ns[c])
            json_object_set_new(by, gt_idle_cause_key(c), json_real((double)ns[c] / 1e6));
    uint64_t active =
        p->gpu_last_ns > p->gpu_first_ns ? in_phase(p, kind, p->gpu_first_ns, p->gpu_last_ns) : 0;
    json_object_set_new(o, "gpu_active_ms", json_real((double)active / 1e6));
    json_object_set_new(o, "gpu_gaps_by_cause", by);
}

void gt_phases_json_add(json_t *o, const gt_proc *p)
{
    json_t *spans = json_array(), *totals = json_object();
    for (size_t i = 0; i < p->n_phases; i++) {
        const gt_phase_span *s = &p->phases[i];
        json_array_append_new(
            spans, json_pack("{s:s, s:s, s:I, s:I, s:f}", "kind", gt_phase_key(s->kind), "name",
                             gt_phase_name(s->kind), "start_ns", (json_int_t)s->start_ns, "end_ns",
                             (json_int_t)s->end_ns, "ms", (double)(s->end_ns - s->start_ns) / 1e6));
    }
    for (int k = 0; k < GT_PHASE_COUNT; k++) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_phases; i++)
            n += p->phases[i].kind == k;
        json_object_set_new(totals, gt_phase_key(k),
                            json_pack("{s:s, s:f, s:f, s:I}", "name", gt_phase_name(k), "ms",
                                      (double)p->phase_ns[k] / 1e6, "gpu_idle_ms",
                                      (double)p->phase_idle_ns[k] / 1e6, "spans", (json_int_t)n));
        phase_gpu_json(json_object_get(totals, gt_phase_key(k)), p, k);
    }
    json_object_set_new(totals, "jit_evidence",
                        json_pack("{s:I, s:f, s:I, s:f}", "calls", (json_int_t)p->jit_calls,
                                  "calls_ms", (double)p->jit_call_ns / 1e6, "compiler_processes",
                                  (json_int_t)p->jit_children, "compiler_ms",
                                  (double)p->jit_children_ns / 1e6));
    json_t *comps = json_array();
    for (size_t i = 0; i < p->n_compilations; i++)
        json_array_append_new(comps, json_pack("{s:I, s:I, s:f}", "start_ns",
                                               (json_int_t)p->compilations[i].start_ns, "end_ns",
                                               (json_int_t)p->compilations[i].end_ns, "ms",
                                               (double)p->compilations[i].phase_ns / 1e6));
    unsigned fw = gt_proc_remedy_framework(p) == GT_FW_JAX ? GT_FW_JAX : GT_FW_TORCH_COMPILE;
    json_object_set_new(
        totals, "compile_evidence",
        json_pack("{s:o, s:I, s:f, s:i, s:o, s:f, s:I, s:f}", "framework",
                  p->n_compilations ? json_string(gt_framework_key(fw)) : json_null(),
                  "compiler_calls", (json_int_t)p->compile_calls, "compiler_calls_ms",
                  (double)p->compile_call_ns / 1e6, "compile_workers", (int)p->compile_workers,
                  "compilations", comps, "first_ms", (double)p->compile_first_ns / 1e6,
                  "recompiles", (json_int_t)(p->n_compilations ? p->n_compilations - 1 : 0),
                  "recompile_ms", (double)p->recompile_ns / 1e6));
    json_object_set_new(o, "phases", spans);
    json_object_set_new(o, "phase_totals", totals);
}
