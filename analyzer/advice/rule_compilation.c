/* rule_compilation.c — compilation: JIT compilation after start-up (model_phases.c's JIT phase:
 * NVRTC, nvJitLink and module-load calls, compiler processes the program started, and the GPU
 * idle gaps they cover), with the GPU waiting for it. The saving is the phase's time, once over
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

enum { SRC_INDUCTOR, SRC_TRITON, SRC_XLA, SRC_CUPY, SRC_PYTORCH, SRC_NATIVE };

typedef struct compile_data {
    double ms, run_ms, calls, call_ms, children, children_ms, late_ms;
    size_t spans, late;
    int source;
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

static int find(const gt_rule_ctx *c, gt_advice *a, void *data)
{
    const gt_proc *p = c->p;
    compile_data *d = data;
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

static void word(const gt_rule_ctx *c, const gt_advice *a, const void *data, gt_words *w)
{
    const compile_data *d = data;
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

const gt_rule gt_rule_compilation = {"compilation", "JIT compilation while the GPU waits",
                                     GT_RULE_PROCESS, find, word};
