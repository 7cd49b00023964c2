/* rule_compilation.c — compilation. A framework's compiler in the process (model_compile.c:
 * torch.compile's Dynamo and Inductor, XLA under JAX; issue 30) is named with its evidence, its
 * first compilation here and the later ones in rule_recompilation.c: a one-time cost of each
 * process start, whose saving is its phase time over the run (what a warm cache can remove at
 * most: Dynamo still traces). Without one: JIT compilation after start-up (model_phases.c's JIT
 * phase: NVRTC, nvJitLink and module-load calls, compiler processes the program started, and the
 * GPU idle gaps they cover), with the GPU waiting for it. The saving is the phase's time, once over
 * the run: a warm compile cache skips the compiling (not the module loads).
 *
 * Compilation that recurs after the steady state began (new shapes, guards that fail, a cache
 * too small) is named with its count and time: it is paid again and again, not once. The
 * remedy is the framework's cache or the build's: torch.compile's and Triton's caches, JAX's
 * persistent compilation cache, CuPy's kernel cache, SASS for this GPU in a native build. */
#include <stdio.h>
#include <string.h>

#include "advice_rule.h"
#include "util.h"

#define COMPILE_MIN_MS                                                                             \
    10.0 /* a JIT phase shorter than this is module loading, not worth a line                      \
          */
#define RECOMPILE_SHARE                                                                            \
    0.05 /* compilation after the steady state began, of the phase: recurring                      \
          */

#define COMPILE_RUN_SHARE                                                                          \
    0.01 /* a framework's first compilation / run: the rule fires from here                        \
          */

enum { SRC_INDUCTOR, SRC_TRITON, SRC_XLA, SRC_CUPY, SRC_PYTORCH, SRC_NATIVE };

typedef struct compile_data {
    double ms, run_ms, calls, call_ms, children, children_ms, late_ms;
    size_t spans, late;
    int source;
    int framework, xla; /* a framework's compiler (n_compilations), XLA's */
    double start_ms;    /* its first compilation's start, into the run */
    unsigned workers;
    double compiler_calls;
} compile_data;

static int inductor_kernels(const gt_proc *p)
{
    for (size_t i = 0; i < p->n_kernels; i++)
        if (p->kernels[i].name && !strncmp(p->kernels[i].name, "triton_", 7))
            return 1;
    return 0;
}

static int source_of(const gt_proc *p, int fw)
{
    if (fw == GT_FW_PYTORCH && inductor_kernels(p))
        return SRC_INDUCTOR;
    if (p->frameworks & GT_FW_TRITON)
        return SRC_TRITON;
    switch (fw) {
    case GT_FW_JAX:
    case GT_FW_TENSORFLOW:
        return SRC_XLA;
    case GT_FW_CUPY:
        return SRC_CUPY;
    case GT_FW_PYTORCH:
        return SRC_PYTORCH;
    default:
        return SRC_NATIVE;
    }
}

/* A framework's compiler: its first compilation. */
static int find_framework(const gt_proc *p, gt_advice *a, compile_data *d)
{
    d->framework = 1;
    d->xla = gt_proc_remedy_framework(p) == GT_FW_JAX;
    d->ms = (double)p->compile_first_ns / 1e6;
    d->run_ms = gt_proc_duration_ms(p);
    if (d->run_ms <= 0 || d->ms / d->run_ms < COMPILE_RUN_SHARE)
        return 0;
    const gt_compilation *first = &p->compilations[0];
    d->start_ms = (double)(first->start_ns - p->t_min) / 1e6;
    d->compiler_calls = (double)p->compile_calls;
    d->workers = p->compile_workers;
    d->calls = (double)p->jit_calls;
    d->children = (double)p->jit_children;
    gt_adv_ev(a, "compile_ms", d->ms, "ms");
    gt_adv_ev(a, "compile_share", 100 * d->ms / d->run_ms, "%");
    gt_adv_ev(a, "compiler_calls", d->compiler_calls, "count");
    gt_adv_ev(a, "compile_workers", d->workers, "count");
    gt_adv_ev(a, "jit_calls", d->calls, "count");
    gt_adv_ev(a, "compiler_processes", d->children, "count");
    gt_adv_ev(a, "gpu_idle_ms", (double)p->phase_idle_ns[GT_PHASE_COMPILE] / 1e6, "ms");
    gt_adv_saving(a, d->ms, GT_BASIS_RUN, GT_POOL_COMPILE,
                  "the first compilation's time in the compilation phase: a warm cache removes "
                  "at most that");
    a->t_ns = first->start_ns;
    return 1;
}

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    compile_data *d = data;
    if (p->n_compilations)
        return find_framework(p, a, d);
    d->ms = (double)p->phase_ns[GT_PHASE_JIT] / 1e6;
    d->run_ms = gt_proc_duration_ms(p);
    if (d->ms < COMPILE_MIN_MS || d->run_ms <= 0)
        return 0;
    uint64_t first = 0;
    for (size_t i = 0; i < p->n_phases; i++) {
        const gt_phase_span *s = &p->phases[i];
        if (s->kind != GT_PHASE_JIT)
            continue;
        d->spans++;
        first = first ? first : s->start_ns;
        /* the first compilation is the first, wherever it lies; one in the steady state after
         * it is a recompile */
        if (d->spans > 1 && s->start_ns >= p->steady_start_ns && p->steady_start_ns) {
            d->late++;
            d->late_ms += (double)(s->end_ns - s->start_ns) / 1e6;
        }
    }
    if (d->late_ms < COMPILE_MIN_MS || d->late_ms < RECOMPILE_SHARE * d->ms)
        d->late = 0, d->late_ms = 0; /* a module load in the steady state, not a recompile */
    d->calls = (double)p->jit_calls;
    d->call_ms = (double)p->jit_call_ns / 1e6;
    d->children = (double)p->jit_children;
    d->children_ms = (double)p->jit_children_ns / 1e6;
    d->source = source_of(p, c->fw);
    gt_adv_ev(a, "jit_ms", d->ms, "ms");
    gt_adv_ev(a, "jit_share", 100 * d->ms / d->run_ms, "%");
    gt_adv_ev(a, "jit_spans", (double)d->spans, "count");
    gt_adv_ev(a, "jit_calls", d->calls, "count");
    gt_adv_ev(a, "compiler_processes", d->children, "count");
    gt_adv_ev(a, "recompiles", (double)d->late, "count");
    gt_adv_ev(a, "recompile_ms", d->late_ms, "ms");
    gt_adv_saving(a, d->ms, GT_BASIS_RUN, GT_POOL_JIT,
                  "the JIT compilation phase's time: a warm cache skips the compiling");
    a->t_ns = first ? first : p->gpu_first_ns;
    return 1;
}

static void remedy(const compile_data *d, gt_words *w)
{
    switch (d->source) {
    case SRC_INDUCTOR:
        GT_REMEDY(w,
                  "%sKeep torch.compile's caches across runs (TORCHINDUCTOR_CACHE_DIR, "
                  "TORCHINDUCTOR_FX_GRAPH_CACHE=1), or compile less: mode=\"default\" instead "
                  "of \"max-autotune\", or compile only the hot module.",
                  d->late ? "For the recompiles: torch.compile(dynamic=True) or "
                            "torch._dynamo.mark_dynamic on the changing dimension "
                            "(TORCH_LOGS=recompiles says why). "
                          : "");
        break;
    case SRC_TRITON:
        GT_REMEDY(w,
                  "%sTriton caches compiled kernels in ~/.triton/cache (TRITON_CACHE_DIR): "
                  "keep it across runs and containers, and warm it before timing.",
                  d->late ? "Each new constexpr value or specialization compiles again: keep "
                            "them fixed. "
                          : "");
        break;
    case SRC_XLA:
        GT_REMEDY(w,
                  "%sKeep compilations across runs with the persistent compilation cache "
                  "(jax.config.update(\"jax_compilation_cache_dir\", PATH)); "
                  "XLA_FLAGS=--xla_gpu_autotune_level=0 shortens compiles that autotune.",
                  d->late ? "jit recompiles for every new shape, dtype or static argument: pad "
                            "or bucket the shapes. "
                          : "");
        break;
    case SRC_CUPY:
        GT_REMEDY(w, "CuPy caches compiled kernels in ~/.cupy/kernel_cache (CUPY_CACHE_DIR): "
                     "keep it across runs and warm it before timing.");
        break;
    case SRC_PYTORCH:
        GT_REMEDY(w, "It is paid on first use, once per process: warm up before timing; "
                     "CUDA_MODULE_LOADING=EAGER moves the module loads to start-up, and the "
                     "driver's JIT cache (CUDA_CACHE_PATH, CUDA_CACHE_MAXSIZE) kept across runs "
                     "saves the compiling.");
        break;
    default:
        GT_REMEDY(w, "Build SASS for this GPU (-gencode arch=compute_XX,code=sm_XX) so the "
                     "driver does not JIT PTX, keep its JIT cache (CUDA_CACHE_PATH, "
                     "CUDA_CACHE_MAXSIZE), and cache NVRTC's output (the cubin) across runs.");
        break;
    }
}

/* "12 calls from its frames, 17 compile workers, ...": the evidence a user can check. */
static void word_framework(const compile_data *d, const gt_advice *a, gt_words *w)
{
    char parts[200] = "";
    size_t u = 0;
    if (d->compiler_calls > 0)
        u += (size_t)snprintf(parts + u, sizeof parts - u, "%.0f calls from its frames",
                              d->compiler_calls);
    if (d->workers && u < sizeof parts)
        u += (size_t)snprintf(parts + u, sizeof parts - u, "%s%u compile workers", u ? ", " : "",
                              d->workers);
    if (d->calls > 0 && u < sizeof parts)
        u += (size_t)snprintf(parts + u, sizeof parts - u, "%s%.0f module loads", u ? ", " : "",
                              d->calls);
    if (d->children > 0 && u < sizeof parts)
        snprintf(parts + u, sizeof parts - u, "%s%.0f ptxas/gcc runs", u ? ", " : "", d->children);
    GT_SEEN(w, "%s took %s (%.0f%% of the run) from %s into the run, in the process: %s.",
            d->xla ? "XLA's compilation" : "torch.compile's compilation (Dynamo, Inductor)",
            gt_adv_ms(d->ms), a->share_pct, gt_adv_ms(d->start_ms), parts);
    if (d->xla)
        GT_REMEDY(w, "A one-time cost of each process start: keep XLA's persistent compilation "
                     "cache between runs (jax.config.update(\"jax_compilation_cache_dir\", ...)), "
                     "or accept it in a long run.");
    else
        GT_REMEDY(w, "A one-time cost of each process start: keep Inductor's caches between runs "
                     "(TORCHINDUCTOR_CACHE_DIR on lasting storage; "
                     "torch.compiler.save_cache_artifacts()/load_cache_artifacts() to move them), "
                     "compile less (mode=\"default\" over \"max-autotune\", a smaller compiled "
                     "region), or accept it in a long run.");
}

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const compile_data *d = data;
    if (d->framework) {
        word_framework(d, a, w);
        return;
    }
    static const char *const who[] = {
        "torch.compile's compilation (Dynamo, Inductor, Triton)",
        "Triton's compilation",
        "XLA's compilation",
        "CuPy's kernel compilation",
        "Module loading and run-time compilation (CUDA lazy loading, NVRTC, cuDNN's "
        "runtime-compiled engines)",
        "JIT compilation by the driver or NVRTC"};
    char parts[200] = "";
    size_t u = 0;
    if (d->calls > 0)
        u += (size_t)snprintf(parts + u, sizeof parts - u, "%.0f compile/module-load calls, %s",
                              d->calls, gt_adv_ms(d->call_ms));
    if (d->children > 0 && u < sizeof parts)
        snprintf(parts + u, sizeof parts - u, "%s%.0f compiler processes, %s", u ? "; " : "",
                 d->children, gt_adv_ms(d->children_ms));
    char late[160] = "";
    if (d->late)
        snprintf(late, sizeof late,
                 " It recurs: %zu compilation%s began after the steady state, %s of it.", d->late,
                 d->late == 1 ? "" : "s", gt_adv_ms(d->late_ms));
    GT_SEEN(w, "%s took %s of the %s run (%.0f%%) while the GPU waited, in %zu span%s%s%s%s.%s",
            who[d->source], gt_adv_ms(d->ms), gt_adv_ms(d->run_ms), a->share_pct, d->spans,
            d->spans == 1 ? "" : "s", parts[0] ? " (" : "", parts, parts[0] ? ")" : "", late);
    (void)c;
    remedy(d, w);
}

const gt_rule gt_rule_compilation = {"compilation", "compilation while the GPU waits",
                                     GT_RULE_PROCESS, find, word};
