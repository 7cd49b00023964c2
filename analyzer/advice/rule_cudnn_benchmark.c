/* rule_cudnn_benchmark.c — cudnn-benchmark: the choice of convolution algorithms, weighed with
 * this run's own numbers, in one of three forms (docs/advice.md):
 *
 *   recurring  autotuning goes on after the steady state began: new signatures keep arriving
 *              (new input shapes), each autotuned again. The saving is autotuning's time; the
 *              message counts the signatures and distinct input shapes, and how many came late.
 *   weighed    autotuning ran once, at the start: its cost in this run against what its winners
 *              gain per step over the heuristics' pick (from the trials' kernels or Find's perf
 *              table) and the break-even step count. Silent when it paid back within the run.
 *   heuristic  no autotuning, static shapes: benchmark mode may pick faster algorithms. Nothing
 *              in the run tells the gain, so the saving is an upper bound: the convolutions' GPU
 *              time per step (severity at most info).
 *
 * Autotuning is known only from its evidence (model_cudnn.c: Find calls, several plans tried
 * per signature, an autotuner's frames): a slow first execution of one plan is first-use cost
 * (rule_first_use.c). The remedy is the framework's: benchmark mode in PyTorch, XLA's autotune
 * level and caches in JAX, TF_CUDNN_USE_AUTOTUNE in TensorFlow, the cuDNN calls in C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"
#include "textfmt.h"

#define BENCH_MIN_EXECS 3       /* an op run this often counts as a static shape */
#define BENCH_STATIC_SHARE 0.8  /* share of ops with static shapes */
#define BENCH_DYNAMIC_OPS 20    /* autotuned signatures ... */
#define BENCH_DYNAMIC_SHARE 0.5 /* ... of which this share ran fewer than BENCH_MIN_EXECS times */
#define BENCH_LATE_MIN 2        /* signatures first autotuned in the steady window: recurring */
#define BENCH_COST_SHARE 0.20   /* autotuning time / run: worth a word when the gain is unknown */
#define TUNER_MIN_SHARE 0.01    /* an autotuning phase without cuDNN calls (XLA's pickers) / run */

enum { FORM_RECURRING, FORM_WEIGHED, FORM_HEURISTIC, FORM_TUNER };

typedef struct bench_data {
    int form;
    size_t ops, autotuned, heuristic, static_ops, rare, late, shapes, late_shapes;
    size_t timed, find_only, trials_on_gpu;
    double cost_ms, run_ms, gain_ms, winners_ms, breakeven, steps, last_late_s, conv_ms;
    int paid, never, known;
    int legacy; /* the legacy API (cudnnFind*, Get_v7) rather than the backend's: a C remedy */
    char chose[160];
} bench_data;

/* What autotuning cost in this run: the autotuning phase when the phases were found, else from
 * the first trial (or Find call) to the end of the last one. */
static double autotune_cost_ms(const gt_proc *p)
{
    if (p->phase_ns[GT_PHASE_AUTOTUNE])
        return (double)p->phase_ns[GT_PHASE_AUTOTUNE] / 1e6;
    uint64_t first = 0, last = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (!op->autotuned || !op->autotune_first_ns)
            continue;
        if (!first || op->autotune_first_ns < first)
            first = op->autotune_first_ns;
        if (op->autotune_last_ns > last)
            last = op->autotune_last_ns;
    }
    double span = last > first ? (double)(last - first) / 1e6 : 0;
    double calls = (double)p->autotune_ns / 1e6;
    return span > calls ? span : calls;
}

/* The input's channels ("32x3x112x112" -> 3), -1 unknown. */
static long channels_of(const char *shape)
{
    const char *x = strchr(shape, 'x');
    return x && x[1] ? strtol(x + 1, NULL, 10) : -1;
}

/* The program's input shapes, as its first convolution sees them: the autotuned forward
 * convolutions whose input has the fewest channels (each layer of one input shape is a
 * signature of its own; the first layer's input is what the program changed). */
static int input_op(const gt_cudnn_opstat *op, long first_channels)
{
    return !op->inferred && op->autotuned && op->x_shape[0] &&
           (op->op_kind == GT_CUDNN_OP_CONV_FWD || op->op_kind == GT_CUDNN_OP_CONV_BIAS_ACT) &&
           channels_of(op->x_shape) == first_channels;
}

static int shape_seen(const gt_proc *p, size_t upto, const char *shape, long first_channels,
                      int late_only)
{
    for (size_t j = 0; j < upto; j++) {
        const gt_cudnn_opstat *o = &p->cudnn[j];
        if (input_op(o, first_channels) && !strcmp(o->x_shape, shape) &&
            (!late_only || o->autotune_first_ns >= p->steady_start_ns))
            return 1;
    }
    return 0;
}

static void count_shapes(const gt_proc *p, bench_data *d)
{
    long first = -1;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        long c = channels_of(p->cudnn[i].x_shape);
        if (input_op(&p->cudnn[i], c) && c > 0 && (first < 0 || c < first))
            first = c;
    }
    for (size_t i = 0; first > 0 && i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (!input_op(op, first))
            continue;
        d->shapes += !shape_seen(p, i, op->x_shape, first, 0);
        d->late_shapes +=
            op->autotune_first_ns >= p->steady_start_ns && !shape_seen(p, i, op->x_shape, first, 1);
    }
}

/* The signatures autotuned, and those first autotuned in the steady window. */
static void count_ops(const gt_proc *p, bench_data *d)
{
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred)
            continue;
        uint64_t execs = 0;
        for (int c = 0; c < op->n_choices; c++) {
            execs += op->choices[c].execs;
            d->conv_ms += (double)op->choices[c].gpu_ns / 1e6;
        }
        d->ops++;
        d->legacy |= op->legacy;
        d->heuristic += op->heuristic && !op->autotuned;
        d->static_ops += execs >= BENCH_MIN_EXECS;
        if (!op->autotuned)
            continue;
        d->autotuned++;
        d->rare += execs < BENCH_MIN_EXECS;
        if (op->autotune_first_ns < p->steady_start_ns)
            continue;
        d->late++;
        double at = (double)(op->autotune_first_ns - p->t_min) / 1e9;
        if (at > d->last_late_s)
            d->last_late_s = at;
    }
    count_shapes(p, d);
}

/* The per-step gain over the heuristics' pick, from the alternatives' own timings. */
static void benchmark_gain(const gt_proc *p, bench_data *d)
{
    double steps = gt_adv_has_steps(p) ? (double)p->n_steps : 1;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || !op->autotuned)
            continue;
        for (int c = 0; c < op->n_choices; c++)
            if (op->choices[c].autotune_gpu_ns) {
                d->trials_on_gpu++;
                break;
            }
        if (op->timed_source == GT_TIMED_NONE || op->timed_winner_ms < 0 || op->chosen < 0)
            continue;
        double runs = (double)op->choices[op->chosen].execs / steps;
        d->winners_ms += op->timed_winner_ms * runs;
        if (op->timed_heuristic_ms < 0) {
            d->find_only++;
            continue;
        }
        d->timed++;
        d->gain_ms += (op->timed_heuristic_ms - op->timed_winner_ms) * runs;
    }
}

/* What the heuristics chose, most signatures first: "engine 67 x12, engine 38 x5, ...". */
static int heuristic_op(const gt_cudnn_opstat *op)
{
    return !op->inferred && !op->autotuned && op->heuristic && op->chosen >= 0;
}

static void heuristic_choices(const gt_proc *p, char *out, size_t cap)
{
    const char *names[3] = {0};
    size_t counts[3] = {0}, used = 0, others = 0;
    out[0] = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        if (!heuristic_op(&p->cudnn[i]))
            continue;
        const char *text = p->cudnn[i].choices[p->cudnn[i].chosen].text;
        size_t seen = 0, n = 0; /* count each distinct text once, at its first op */
        for (size_t j = 0; j < i && !seen; j++)
            seen = heuristic_op(&p->cudnn[j]) &&
                   !strcmp(p->cudnn[j].choices[p->cudnn[j].chosen].text, text);
        if (seen)
            continue;
        for (size_t j = i; j < p->n_cudnn; j++)
            n += heuristic_op(&p->cudnn[j]) &&
                 !strcmp(p->cudnn[j].choices[p->cudnn[j].chosen].text, text);
        int k = 3;
        while (k > 0 && (!names[k - 1] || n > counts[k - 1]))
            k--;
        if (k >= 3) {
            others++;
            continue;
        }
        others += names[2] != NULL;
        for (int m = 2; m > k; m--)
            names[m] = names[m - 1], counts[m] = counts[m - 1];
        names[k] = text, counts[k] = n;
    }
    for (int k = 0; k < 3 && names[k] && used < cap; k++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s x%zu", k ? ", " : "", names[k],
                                 counts[k]);
    if (others && used < cap)
        snprintf(out + used, cap - used, ", %zu other choice%s", others, others == 1 ? "" : "s");
}

static int find_recurring(const gt_proc *p, gt_advice *a, bench_data *d)
{
    int dynamic = d->autotuned >= BENCH_DYNAMIC_OPS &&
                  (double)d->rare / (double)d->autotuned >= BENCH_DYNAMIC_SHARE;
    if (d->late < BENCH_LATE_MIN && !dynamic)
        return 0;
    d->form = FORM_RECURRING;
    gt_adv_ev(a, "autotuned_signatures", (double)d->autotuned, "count");
    gt_adv_ev(a, "input_shapes", (double)d->shapes, "count");
    gt_adv_ev(a, "late_signatures", (double)d->late, "count");
    gt_adv_ev(a, "late_input_shapes", (double)d->late_shapes, "count");
    gt_adv_ev(a, "rarely_used_signatures", (double)d->rare, "count");
    gt_adv_ev(a, "autotune_cost_ms", d->cost_ms, "ms");
    gt_adv_saving(a, d->cost_ms, GT_BASIS_RUN, GT_POOL_AUTOTUNE,
                  "the autotuning phase's time: with fixed shapes or without benchmark mode it "
                  "does not recur");
    (void)p;
    return 1;
}

static int find_weighed(const gt_proc *p, gt_advice *a, bench_data *d)
{
    benchmark_gain(p, d);
    d->form = FORM_WEIGHED;
    d->known = d->timed > 0;
    d->never = d->known && d->gain_ms <= 0;
    d->steps = gt_adv_has_steps(p) ? (double)p->n_steps : 0;
    d->breakeven = d->known && !d->never ? d->cost_ms / d->gain_ms : 0;
    d->paid = d->known && !d->never && d->steps > 0 && d->steps >= d->breakeven;
    if (d->paid || (!d->known && (d->run_ms <= 0 || d->cost_ms / d->run_ms < BENCH_COST_SHARE)))
        return 0; /* it paid back in this run, or cost little and nothing tells the gain */
    gt_adv_ev(a, "autotune_cost_ms", d->cost_ms, "ms");
    gt_adv_ev(a, "autotune_share", d->run_ms > 0 ? 100 * d->cost_ms / d->run_ms : 0, "%");
    gt_adv_ev(a, "autotune_call_ms", (double)p->autotune_ns / 1e6, "ms");
    gt_adv_ev(a, "autotuned_signatures", (double)d->autotuned, "count");
    gt_adv_ev(a, "timed_signatures", (double)d->timed, "count");
    if (d->known)
        gt_adv_ev(a, "gain_ms_per_step", d->gain_ms, "ms");
    if (d->breakeven > 0)
        gt_adv_ev(a, "break_even_steps", d->breakeven, "count");
    if (d->steps > 0)
        gt_adv_ev(a, "steps", d->steps, "count");
    if (d->never)
        gt_adv_saving(a, d->cost_ms, GT_BASIS_RUN, GT_POOL_AUTOTUNE,
                      "the autotuning phase's time: its winners gain nothing per step");
    else if (d->known && d->steps > 0)
        gt_adv_saving(a, d->cost_ms - d->gain_ms * d->steps, GT_BASIS_RUN, GT_POOL_AUTOTUNE,
                      "the autotuning phase's time less its winners' gain over this run's %.0f "
                      "steps",
                      d->steps);
    else
        gt_adv_saving(a, d->cost_ms, GT_BASIS_RUN, GT_POOL_AUTOTUNE,
                      "the autotuning phase's time (the winners' gain per step is not in this "
                      "trace: it comes back only where gain x steps exceeds it)");
    return 1;
}

static int find_heuristic(const gt_proc *p, gt_advice *a, bench_data *d)
{
    if (!d->heuristic || (double)d->static_ops / (double)d->ops < BENCH_STATIC_SHARE)
        return 0;
    d->form = FORM_HEURISTIC;
    heuristic_choices(p, d->chose, sizeof d->chose);
    gt_adv_ev(a, "heuristic_signatures", (double)d->heuristic, "count");
    gt_adv_ev(a, "signatures", (double)d->ops, "count");
    gt_adv_ev(a, "static_signatures", (double)d->static_ops, "count");
    double busy = (double)p->gpu_busy_ns / 1e6;
    if (d->conv_ms <= 0 || busy <= 0) { /* kernels not joined to their calls: no bound */
        gt_adv_impact(a, GT_IMPACT_NOTE);
        return 1;
    }
    double per_step = d->conv_ms / busy * gt_adv_busy_ms(p);
    gt_adv_ev(a, "conv_gpu_ms", d->conv_ms, "ms");
    gt_adv_ev(a, "conv_gpu_ms_per_step", per_step, "ms");
    gt_adv_bound(a, per_step, gt_adv_basis(p), GT_POOL_BUSY,
                 "at most the convolutions' GPU time in the steady step: nothing in this run "
                 "tells the gain");
    return 1;
}

/* An autotuning phase with no cuDNN call behind it: an autotuner's own ranges (XLA's GEMM and
 * convolution algorithm pickers) or frames. Its time is the saving, the gain unknown. */
static int find_tuner(const gt_proc *p, gt_advice *a, bench_data *d)
{
    d->cost_ms = (double)p->phase_ns[GT_PHASE_AUTOTUNE] / 1e6;
    if (d->run_ms <= 0 || d->cost_ms < TUNER_MIN_SHARE * d->run_ms)
        return 0;
    d->form = FORM_TUNER;
    gt_adv_ev(a, "autotune_cost_ms", d->cost_ms, "ms");
    gt_adv_ev(a, "autotune_share", 100 * d->cost_ms / d->run_ms, "%");
    gt_adv_saving(a, d->cost_ms, GT_BASIS_RUN, GT_POOL_AUTOTUNE,
                  "the autotuning phase's time (an autotuner's own ranges or frames)");
    return 1;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    bench_data *d = data;
    count_ops(p, d);
    d->run_ms = gt_proc_duration_ms(p);
    a->t_ns = p->gpu_first_ns;
    if (!d->ops)
        return find_tuner(p, a, d);
    d->cost_ms = autotune_cost_ms(p);
    a->t_ns = p->gpu_first_ns;
    if (d->autotuned)
        return find_recurring(p, a, d) || find_weighed(p, a, d);
    return find_heuristic(p, a, d);
}

/* ------------------------------------------------------------------ wording */

static void remedy_recurring(int fw, int legacy, gt_words *w)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        GT_REMEDY(w, "Pad or bucket the inputs to a few fixed shapes, or leave benchmark mode "
                     "off for changing shapes (torch.backends.cudnn.benchmark = False).");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "XLA compiles and autotunes each new shape: pad or bucket the inputs to a "
                     "few shapes; XLA_FLAGS=--xla_gpu_autotune_level=0 skips autotuning, and a "
                     "persistent cache (jax_compilation_cache_dir) keeps it across runs.");
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "Pad or bucket the inputs to a few shapes, or turn cuDNN autotuning off "
                     "(TF_CUDNN_USE_AUTOTUNE=0).");
        break;
    default:
        GT_REMEDY(w,
                  "Keep the %s per shape and reuse it, pad the inputs to a few shapes, or "
                  "take the heuristics' pick (%s) for shapes that come once.",
                  legacy ? "cudnnFind* result" : "timed engine config (a plan cache)",
                  legacy ? "cudnnGetConvolution*Algorithm_v7"
                         : "the first engine config of CUDNN_HEUR_MODE_A");
        break;
    }
}

static void remedy_off(int fw, int legacy, gt_words *w, const char *why)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        GT_REMEDY(w, "%s: torch.backends.cudnn.benchmark = False.", why);
        break;
    case GT_FW_JAX:
        GT_REMEDY(w,
                  "%s: XLA_FLAGS=--xla_gpu_autotune_level=0, or keep the results across runs "
                  "(jax_compilation_cache_dir, --xla_gpu_per_fusion_autotune_cache_dir).",
                  why);
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "%s: TF_CUDNN_USE_AUTOTUNE=0.", why);
        break;
    default:
        if (legacy)
            GT_REMEDY(w,
                      "%s: call cudnnGetConvolution*Algorithm_v7 (heuristics) instead of "
                      "cudnnFind*, or keep the Find results across runs.",
                      why);
        else
            GT_REMEDY(w,
                      "%s: finalize the heuristics' first engine config (CUDNN_HEUR_MODE_A) "
                      "instead of timing the candidates, or keep the timed choice per shape "
                      "across runs.",
                      why);
        break;
    }
}

static void remedy_on(int fw, int legacy, gt_words *w)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        GT_REMEDY(w, "Try torch.backends.cudnn.benchmark = True and record again: its report "
                     "weighs autotuning's cost against the gain per step.");
        break;
    case GT_FW_JAX:
        GT_REMEDY(w, "XLA autotunes convolutions by default: check XLA_FLAGS for "
                     "--xla_gpu_autotune_level=0 and raise it.");
        break;
    case GT_FW_TENSORFLOW:
        GT_REMEDY(w, "TensorFlow autotunes by default: unset TF_CUDNN_USE_AUTOTUNE=0.");
        break;
    default:
        GT_REMEDY(w, "Time each signature's candidates once (%s) and keep the winner.",
                  legacy ? "cudnnFindConvolution*Algorithm"
                         : "execute each engine config of the heuristics' list and keep the "
                           "fastest plan");
        break;
    }
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const bench_data *d = data;
    const gt_proc *p = c->p;
    if (d->form == FORM_RECURRING) {
        GT_SEEN(w,
                "cuDNN autotuned %zu convolution signatures for %zu input shapes (the first "
                "convolution's); %zu signatures (%zu shapes) first came after the steady state "
                "began%s: every new input shape "
                "autotunes again. Autotuning took %s of the %s run (%.0f%%).",
                d->autotuned, d->shapes, d->late, d->late_shapes,
                d->late ? gt_fmt(", the last %.1f s into the run", d->last_late_s) : "",
                gt_adv_ms(d->cost_ms), gt_adv_ms(d->run_ms),
                d->run_ms > 0 ? 100 * d->cost_ms / d->run_ms : 0);
        remedy_recurring(c->fw, d->legacy, w);
    } else if (d->form == FORM_WEIGHED) {
        char head[240], tail[360] = "";
        snprintf(head, sizeof head,
                 "cuDNN autotuning took %s of the %s run (%.0f%%) for %zu convolution "
                 "signatures.",
                 gt_adv_ms(d->cost_ms), gt_adv_ms(d->run_ms),
                 d->run_ms > 0 ? 100 * d->cost_ms / d->run_ms : 0, d->autotuned);
        if (d->never)
            snprintf(tail, sizeof tail,
                     " In its own timings the winners are no faster than the heuristics' first "
                     "pick (%s%s per step over %zu timed signatures): that time never comes "
                     "back.",
                     -d->gain_ms > 0 ? "+" : "", gt_dur(-d->gain_ms), d->timed);
        else if (d->known)
            snprintf(tail, sizeof tail,
                     " In its own timings the winners save %s per step over the heuristics' "
                     "first pick (%zu timed signatures): it pays back after %.0f steps%s.",
                     gt_dur(d->gain_ms), d->timed, d->breakeven,
                     d->steps > 0 ? gt_fmt(" (this run: %.0f steps)", d->steps)
                                  : " (this run has no steps)");
        else
            snprintf(tail, sizeof tail,
                     " The gain per step over the heuristics' pick is not in this trace (%s).",
                     d->find_only       ? "Find timed the algorithms, but no Get_v7 call "
                                          "recorded the heuristics' pick"
                     : d->trials_on_gpu ? "the program runs algorithms the trials did not time"
                                        : "the trials' kernels were not joined to their calls");
        GT_SEEN(w, "%s%s", head, tail);
        remedy_off(c->fw, d->legacy, w,
                   d->never   ? "Autotuning gains nothing here"
                   : d->known ? "Runs shorter than the break-even are faster without it"
                              : "Record once without autotuning and compare the steady step "
                                "(gputrace diff); to drop it");
    } else if (d->form == FORM_TUNER) {
        GT_SEEN(w, "%s took %s of the %s run (%.0f%%), marked by the autotuner's own ranges.",
                c->fw == GT_FW_JAX || c->fw == GT_FW_TENSORFLOW ? "XLA's autotuning" : "Autotuning",
                gt_adv_ms(d->cost_ms), gt_adv_ms(d->run_ms), 100 * d->cost_ms / d->run_ms);
        remedy_off(c->fw, d->legacy, w, "It is paid again at every compilation");
    } else {
        GT_SEEN(w,
                "cuDNN picked the algorithms of %zu of %zu convolution signatures by heuristics "
                "(%s) and the shapes are static (%zu of %zu ran %d+ times)%s.",
                d->heuristic, d->ops, d->chose, d->static_ops, d->ops, BENCH_MIN_EXECS,
                a->has_saving ? gt_fmt("; convolutions take %s %s, the most autotuning could "
                                       "save",
                                       gt_adv_ms(a->saving_ms), gt_adv_per(p))
                              : "");
        remedy_on(c->fw, d->legacy, w);
    }
}

const gt_rule gt_rule_cudnn_benchmark = {"cudnn-benchmark", "cuDNN algorithm choice / autotuning",
                                         GT_RULE_PROCESS, find, word};
