/* advice_compile.c — compilation and recompilation (issue 30): a framework's compiler in the
 * process (model_compile.c: torch.compile's Dynamo and Inductor, XLA under JAX), named with its
 * evidence, the first compilation apart from the later ones.
 *
 * The first compilation is a one-time cost of each process start: the remedy is to keep the
 * compiler's caches between runs (or to compile less), or to accept it for a long run; its saving
 * is its phase time, over the run (what a warm cache can remove at most: Dynamo still traces).
 * Compilations after the first steps recur with the program's inputs (new shapes recompile):
 * their saving is their phase time too, with the remedy against recompiles. Thresholds in
 * docs/advice.md. */
#include "advice.h"
#include "advice_rules.h"
#include "textfmt.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define COMPILE_RUN_SHARE 0.01 /* compilation / run: the rules fire from here */

static double run_ms(const gt_proc *p)
{
    return gt_proc_duration_ms(p);
}

/* Appends ", TEXT" (or TEXT first) to buf. */
static void part(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void part(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used && used + 2 < cap)
        used += (size_t)snprintf(buf + used, cap - used, ", ");
    va_list ap;
    va_start(ap, fmt);
    if (used < cap)
        vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

/* "torch.compile's Dynamo, AOTAutograd and Inductor in the process (12 CUDA calls from the
 * compiler's frames, 17 compile-worker processes, ...)": the evidence a user can check. */
static const char *evidence_text(const gt_proc *p, int xla)
{
    char parts[200] = "";
    if (p->compile_calls)
        part(parts, sizeof parts, "%llu calls from its frames",
             (unsigned long long)p->compile_calls);
    if (p->compile_workers)
        part(parts, sizeof parts, "%u compile workers", p->compile_workers);
    if (p->jit_calls)
        part(parts, sizeof parts, "%llu module loads", (unsigned long long)p->jit_calls);
    if (p->jit_children)
        part(parts, sizeof parts, "%llu ptxas/gcc runs", (unsigned long long)p->jit_children);
    return gt_fmt("%s in the process: %s",
                  xla ? "XLA's compiler" : "torch.compile (Dynamo, Inductor)", parts);
}

static void first_compilation(const gt_proc *p, gt_advice_list *l, int xla)
{
    double ms = (double)p->compile_first_ns / 1e6, run = run_ms(p);
    if (run <= 0 || ms / run < COMPILE_RUN_SHARE)
        return;
    const gt_compilation *c = &p->compilations[0];
    gt_advice *a = gt_adv_add(l, p, "compilation", gt_adv_severity_for_share(ms / run));
    gt_adv_msg(
        a,
        "Compiling took %s (%s of the run) from %s into the run, %s. A one-time "
        "cost of each process start: %s",
        gt_dur(ms), gt_pct(100 * ms / run), gt_dur_ns((double)(c->start_ns - p->t_min)),
        evidence_text(p, xla),
        xla ? "keep XLA's persistent compilation cache between runs "
              "(jax.config.update(\"jax_compilation_cache_dir\", ...)), or accept it in a long "
              "run."
            : "keep Inductor's caches between runs (TORCHINDUCTOR_CACHE_DIR on lasting storage; "
              "torch.compiler.save_cache_artifacts()/load_cache_artifacts() to move them), compile "
              "less (mode=\"default\" over \"max-autotune\", a smaller compiled region), or "
              "accept it in a long run.");
    gt_adv_ev(a, "compile_ms", ms, "ms");
    gt_adv_ev(a, "compile_share", 100 * ms / run, "%");
    gt_adv_ev(a, "compiler_calls", (double)p->compile_calls, "count");
    gt_adv_ev(a, "compile_workers", p->compile_workers, "count");
    gt_adv_ev(a, "jit_calls", (double)p->jit_calls, "count");
    gt_adv_ev(a, "compiler_processes", (double)p->jit_children, "count");
    gt_adv_ev(a, "gpu_idle_ms", (double)p->phase_idle_ns[GT_PHASE_COMPILE] / 1e6, "ms");
    gt_adv_saving(a, ms, 0);
    a->t_ns = c->start_ns;
}

static void recompilations(const gt_proc *p, gt_advice_list *l, int xla)
{
    double ms = (double)p->recompile_ns / 1e6, run = run_ms(p);
    size_t n = p->n_compilations - 1;
    if (!n || run <= 0 || ms / run < COMPILE_RUN_SHARE)
        return;
    const gt_compilation *c = &p->compilations[1];
    gt_advice *a = gt_adv_add(l, p, "recompilation", gt_adv_severity_for_share(ms / run));
    gt_adv_msg(a,
               "%zu compilation%s after the first one took %s (%s of the run), the "
               "first %s into the run: %s. %s",
               n, n == 1 ? "" : "s", gt_dur(ms), gt_pct(100 * ms / run),
               gt_dur_ns((double)(c->start_ns - p->t_min)),
               xla ? "a jitted function met new input shapes or static arguments (or another "
                     "function was compiled when first called)"
                   : "a compiled function met new input shapes (or another function was "
                     "compiled when first called)",
               xla ? "Pad or bucket the shapes to a few sizes, or mark fewer arguments static."
                   : "Mark the changing dimension dynamic (torch._dynamo.mark_dynamic(x, 0)) or "
                     "compile with dynamic=True, or pad/bucket the shapes to a few sizes; "
                     "TORCH_LOGS=recompiles says why each one happened.");
    gt_adv_ev(a, "recompilations", (double)n, "count");
    gt_adv_ev(a, "recompile_ms", ms, "ms");
    gt_adv_ev(a, "recompile_share", 100 * ms / run, "%");
    gt_adv_ev(a, "first_compile_ms", (double)p->compile_first_ns / 1e6, "ms");
    gt_adv_saving(a, ms, 0);
    a->t_ns = c->start_ns;
}

void gt_adv_rule_compilation(const gt_proc *p, gt_advice_list *l)
{
    if (!p->n_compilations)
        return;
    int xla = gt_proc_remedy_framework(p) == GT_FW_JAX;
    first_compilation(p, l, xla);
    recompilations(p, l, xla);
}
