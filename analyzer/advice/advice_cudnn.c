/* advice_cudnn.c — the cudnn-benchmark rule (docs/advice.md): benchmark mode weighed with this
 * run's own numbers. Autotuning's cost in this run against what its winners gain per step over
 * the heuristics' pick, from the alternatives' timings (the trials' kernels or Find's perf
 * table), and the break-even step count; no figure of another model is quoted. Every threshold
 * here is listed in docs/advice.md; change both. */
#include "advice.h"
#include "advice_rules.h"
#include "textfmt.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ thresholds (docs/advice.md) */
#define BENCH_MIN_EXECS 3       /* an op run this often counts as a static shape */
#define BENCH_STATIC_SHARE 0.8  /* share of ops with static shapes */
#define BENCH_DYNAMIC_OPS 20    /* autotuned signatures ... */
#define BENCH_DYNAMIC_SHARE 0.5 /* ... of which this share ran fewer than BENCH_MIN_EXECS times */
#define BENCH_COST_SHARE 0.20   /* autotuning time / run duration */

/* ------------------------------------------------------------------ cudnn-benchmark */

/* What autotuning cost in this run: the autotuning phase when the phases were found, else from
 * the first trial (or Find call) to the end of the last one: plan building and the trials' own
 * synchronizations lie between, and the CPU time of the trial calls alone misses them. */
static double autotune_cost_ms(const gt_proc *p)
{
    if (p->phase_ns[GT_PHASE_AUTOTUNE])
        return (double)p->phase_ns[GT_PHASE_AUTOTUNE] / 1e6;
    uint64_t first = 0, last = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (!op->autotune_first_ns)
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

typedef struct bench_gain {
    size_t timed, autotuned, find_only; /* find_only: timed, but no heuristic pick recorded */
    size_t trials_on_gpu;               /* ops whose trials' kernels were joined to them */
    double gain_ms_per_step;            /* heuristic pick's time - winner's, × runs per step */
    double winners_ms_per_step;
} bench_gain;

/* The per-step gain over the heuristics' pick, from the alternatives' own timings. */
static bench_gain benchmark_gain(const gt_proc *p)
{
    bench_gain g = {0};
    double steps = gt_adv_has_steps(p) ? (double)p->n_steps : 1;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || !op->autotuned)
            continue;
        g.autotuned++;
        for (int c = 0; c < op->n_choices; c++)
            if (op->choices[c].autotune_gpu_ns) {
                g.trials_on_gpu++;
                break;
            }
        if (op->timed_source == GT_TIMED_NONE || op->timed_winner_ms < 0 || op->chosen < 0)
            continue;
        double runs = (double)op->choices[op->chosen].execs / steps;
        g.winners_ms_per_step += op->timed_winner_ms * runs;
        if (op->timed_heuristic_ms < 0) {
            g.find_only++;
            continue;
        }
        g.timed++;
        g.gain_ms_per_step += (op->timed_heuristic_ms - op->timed_winner_ms) * runs;
    }
    return g;
}

/* Autotuning ran: weigh its cost in this run against what its winners gain per step. */
static void benchmark_weighed(const gt_proc *p, gt_advice_list *l, const bench_gain *g,
                              double cost_ms)
{
    double run_ms = gt_proc_duration_ms(p), steps = gt_adv_has_steps(p) ? (double)p->n_steps : 0;
    int known = g->timed > 0;
    if (!known && (run_ms <= 0 || cost_ms / run_ms < BENCH_COST_SHARE))
        return;
    int never = known && g->gain_ms_per_step <= 0;
    double breakeven = known && !never ? cost_ms / g->gain_ms_per_step : 0;
    int paid = known && !never && steps > 0 && steps >= breakeven;
    if (paid && cost_ms / run_ms < BENCH_COST_SHARE)
        return; /* it paid back in this run and cost little: nothing to say */
    gt_advice *a =
        gt_adv_add(l, p, "cudnn-benchmark",
                   never && cost_ms / run_ms >= BENCH_COST_SHARE ? GT_SEV_WARNING : GT_SEV_INFO);
    char head[200], tail[360];
    snprintf(head, sizeof head,
             "cuDNN autotuning cost %s in this run, %s of its %s, for %zu "
             "convolution signatures.",
             gt_dur(cost_ms), gt_pct(run_ms > 0 ? 100 * cost_ms / run_ms : 0), gt_dur(run_ms),
             g->autotuned);
    if (never)
        snprintf(tail, sizeof tail,
                 " In its own timings the winners are no faster than the heuristics' first pick "
                 "(%s%s per step over %zu timed signatures), so that time never comes back: "
                 "set torch.backends.cudnn.benchmark = False.",
                 -g->gain_ms_per_step > 0 ? "+" : "", gt_dur(-g->gain_ms_per_step), g->timed);
    else if (known)
        snprintf(tail, sizeof tail,
                 " In its own timings the winners save %s per step over the heuristics' "
                 "first pick (%zu timed signatures): it pays back after %.0f steps%s.%s",
                 gt_dur(g->gain_ms_per_step), g->timed, breakeven,
                 steps > 0 ? gt_fmt(" (this run: %.0f steps)", steps) : "",
                 paid ? ""
                      : " Runs shorter than that are faster with "
                        "torch.backends.cudnn.benchmark = False.");
    else
        snprintf(tail, sizeof tail,
                 "%s The gain per step over the heuristics' pick is not in this trace (%s): record "
                 "the run once with torch.backends.cudnn.benchmark = False and compare the steady "
                 "step with gputrace diff; autotuning pays when the gain per step times the steps "
                 "exceeds %s.",
                 g->find_only ? gt_fmt(" The algorithms it chose take %s %s.",
                                       gt_dur(g->winners_ms_per_step),
                                       gt_adv_has_steps(p) ? "per step" : "in the run")
                              : "",
                 g->find_only       ? "Find timed the algorithms, but no Get_v7 call recorded the "
                                      "heuristics' pick"
                 : g->trials_on_gpu ? "the program runs algorithms the trials did not time"
                                    : "the trials' kernels were not joined to their calls",
                 gt_dur(cost_ms));
    gt_adv_msg(a, "%s%s", head, tail);
    gt_adv_ev(a, "autotune_cost_ms", cost_ms, "ms");
    gt_adv_ev(a, "autotune_share", run_ms > 0 ? 100 * cost_ms / run_ms : 0, "%");
    gt_adv_ev(a, "autotune_call_ms", (double)p->autotune_ns / 1e6, "ms");
    gt_adv_ev(a, "autotuned_signatures", (double)g->autotuned, "count");
    gt_adv_ev(a, "timed_signatures", (double)g->timed, "count");
    if (known)
        gt_adv_ev(a, "gain_ms_per_step", g->gain_ms_per_step, "ms");
    if (breakeven > 0)
        gt_adv_ev(a, "break_even_steps", breakeven, "count");
    if (steps > 0)
        gt_adv_ev(a, "steps", steps, "count");
    gt_adv_ev(a, "steady_step_ms", gt_adv_step_ms(p), "ms");
    if (never)
        gt_adv_saving(a, cost_ms, 0);
    else if (known && !paid && steps > 0)
        gt_adv_saving(a, cost_ms - g->gain_ms_per_step * steps, 0);
    a->t_ns = p->gpu_first_ns;
}

/* What the heuristics chose, most signatures first: "engine 67 x12, engine 38 x5, ...". */
static void heuristic_choices(const gt_proc *p, char *out, size_t cap)
{
    const char *names[3] = {0};
    size_t counts[3] = {0}, used = 0, others = 0;
    out[0] = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred || op->autotuned || !op->heuristic || op->chosen < 0)
            continue;
        const char *text = op->choices[op->chosen].text;
        size_t seen = 0; /* count each distinct text once, at its first op */
        for (size_t j = 0; j < i && !seen; j++)
            seen = !p->cudnn[j].inferred && !p->cudnn[j].autotuned && p->cudnn[j].heuristic &&
                   p->cudnn[j].chosen >= 0 &&
                   !strcmp(p->cudnn[j].choices[p->cudnn[j].chosen].text, text);
        if (seen)
            continue;
        size_t n = 0;
        for (size_t j = i; j < p->n_cudnn; j++)
            n += !p->cudnn[j].inferred && !p->cudnn[j].autotuned && p->cudnn[j].heuristic &&
                 p->cudnn[j].chosen >= 0 &&
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
    for (int k = 0; k < 3 && names[k]; k++)
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s x%zu",
                                 k ? ", " : "", names[k], counts[k]);
    if (others && used < cap)
        snprintf(out + used, cap - used, ", %zu other choice%s", others, others == 1 ? "" : "s");
}

void gt_adv_rule_cudnn_benchmark(const gt_proc *p, gt_advice_list *l)
{
    size_t ops = 0, heuristic = 0, autotuned = 0, static_ops = 0, rare_autotuned = 0;
    double conv_ms = 0;
    for (size_t i = 0; i < p->n_cudnn; i++) {
        const gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->inferred)
            continue;
        uint64_t execs = 0;
        for (int c = 0; c < op->n_choices; c++) {
            execs += op->choices[c].execs;
            conv_ms += (double)op->choices[c].gpu_ns / 1e6;
        }
        ops++;
        heuristic += op->heuristic && !op->autotuned;
        autotuned += op->autotuned;
        static_ops += execs >= BENCH_MIN_EXECS;
        rare_autotuned += op->autotuned && execs < BENCH_MIN_EXECS;
    }
    if (!ops)
        return;
    double cost_ms = autotune_cost_ms(p);
    if (autotuned >= BENCH_DYNAMIC_OPS &&
        (double)rare_autotuned / (double)autotuned >= BENCH_DYNAMIC_SHARE) {
        gt_advice *a = gt_adv_add(l, p, "cudnn-benchmark", GT_SEV_WARNING);
        gt_adv_msg(
            a,
            "cuDNN autotuned %zu convolution signatures and %zu of them ran fewer than %d times: "
            "input shapes keep changing, so benchmark mode keeps paying for autotuning (%s "
            "in this run). Set torch.backends.cudnn.benchmark = False, or pad/bucket inputs to a "
            "few shapes.",
            autotuned, rare_autotuned, BENCH_MIN_EXECS, gt_dur(cost_ms));
        gt_adv_ev(a, "autotuned_signatures", (double)autotuned, "count");
        gt_adv_ev(a, "rarely_used_signatures", (double)rare_autotuned, "count");
        gt_adv_ev(a, "autotune_ms", (double)p->autotune_ns / 1e6, "ms");
        gt_adv_ev(a, "autotune_cost_ms", cost_ms, "ms");
        gt_adv_saving(a, cost_ms, 0);
        a->t_ns = p->gpu_first_ns;
        return;
    }
    if (autotuned) {
        bench_gain g = benchmark_gain(p);
        benchmark_weighed(p, l, &g, cost_ms);
        return;
    }
    if (heuristic && (double)static_ops / (double)ops >= BENCH_STATIC_SHARE) {
        gt_advice *a = gt_adv_add(l, p, "cudnn-benchmark", GT_SEV_INFO);
        double per_step = conv_ms / (gt_adv_has_steps(p) ? (double)p->n_steps : 1);
        char conv_txt[200] = "";
        if (conv_ms > 0)
            snprintf(conv_txt, sizeof conv_txt,
                     " Convolutions take %s of GPU time %s here (%s of the step): the "
                     "most benchmark mode could save.",
                     gt_dur(per_step), gt_adv_has_steps(p) ? "per step" : "in the run",
                     gt_pct(100 * per_step /
                            (gt_adv_has_steps(p) ? gt_adv_step_ms(p) : gt_proc_duration_ms(p))));
        char chose[160];
        heuristic_choices(p, chose, sizeof chose);
        gt_adv_msg(a,
                   "cuDNN picked the algorithm of %zu of %zu convolution signatures by heuristics "
                   "(%s), and the shapes are static (%zu of %zu ran %d+ times). Benchmark mode "
                   "(torch.backends.cudnn.benchmark = True; cudnnFind* in C) times each "
                   "signature's candidates once at start and may pick faster ones; this run cannot "
                   "tell the gain.%s Record a run with it: its report weighs autotuning's cost "
                   "against the gain per step (break-even step count).",
                   heuristic, ops, chose, static_ops, ops, BENCH_MIN_EXECS, conv_txt);
        gt_adv_ev(a, "heuristic_signatures", (double)heuristic, "count");
        gt_adv_ev(a, "signatures", (double)ops, "count");
        gt_adv_ev(a, "static_signatures", (double)static_ops, "count");
        if (conv_ms > 0) { /* 0: kernels not joined to their calls (no external correlation) */
            gt_adv_ev(a, "conv_gpu_ms", conv_ms, "ms");
            gt_adv_ev(a, "conv_gpu_ms_per_step", per_step, "ms");
        }
        a->t_ns = p->gpu_first_ns;
    }
}
