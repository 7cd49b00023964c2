/* model_compile.c — a framework's compiler running in the process (issue 30): torch.compile's
 * Dynamo (tracing the Python), AOTAutograd and Inductor (lowering, code generation, benchmarks
 * of its choices, the first compile of each Triton kernel), XLA's compiler under JAX.
 *
 * Why. A torch.compile(mode="reduce-overhead") run spent 20 of its 24 s compiling, with the GPU
 * idle; named "warm-up", it gave no advice. Compilation is a cost the user can act on (the
 * compile caches, a mode that compiles less, dynamic shapes against recompiles) or accept as a
 * one-time cost, and its idle time is not the steady state's.
 *
 * Evidence: CUDA calls made with a compiler's Python frame on the stack (Inductor's pattern
 * passes copy constants to the GPU, its pad_mm pass and autotuner time GEMMs and Triton configs;
 * the frames that run only while compiling are listed in COMPILER_FRAMES — Dynamo's eval_frame,
 * AOTAutograd's runtime wrappers, Inductor's output code and CUDA graph trees run at every step and
 * are not evidence); the compile-worker processes the process started (Inductor's pool, its
 * command line names the parent: the pool starts when Inductor first compiles); and, in a process
 * with such evidence, the JIT evidence (module loads, ptxas children) beside it. Evidence joins
 * into one compilation across the silent time between (Inductor's lowering makes no CUDA call for
 * seconds) while no step of the program begins and the GPU stays idle most of the time; a GPU
 * idle gap that compilation covers for a quarter, or in which a compilation begins, is the
 * compilation's: Dynamo traces the Python before the first call of the compiler is seen. The first
 * compilation is told apart from the later ones (recompiles after new input shapes, or a function
 * compiled when first called later in the run). */
#include "model_compile.h"

#define COMPILE_BRIDGE_NS 50000000ull /* evidence this close is one compilation, always */
#define COMPILE_BRIDGE_BUSY 0.5       /* farther apart: one while the GPU is busy less than this */
#define COMPILE_GAP_SHARE 0.25 /* a GPU idle gap this much covered by compilation is all of it */

/* ------------------------------------------------------------------ compiler frames */

typedef struct frame_rule {
    const char *file;      /* a part of the frame's file path */
    const char *only;      /* the function name must contain this (NULL: any) */
    const char *except[3]; /* ... and none of these */
    unsigned framework;
} frame_rule;

#define TC (GT_FW_TORCH_COMPILE | GT_FW_PYTORCH)
static const frame_rule COMPILER_FRAMES[] = {
    {"torch/_dynamo/convert_frame.py", NULL, {NULL}, TC},
    {"torch/_dynamo/symbolic_convert.py", NULL, {NULL}, TC},
    {"torch/_dynamo/output_graph.py", NULL, {NULL}, TC},
    {"torch/_dynamo/variables/", NULL, {NULL}, TC},
    {"torch/_functorch/_aot_autograd/graph_compile.py", NULL, {NULL}, TC},
    {"torch/_functorch/_aot_autograd/dispatch_and_compile_graph.py", NULL, {NULL}, TC},
    {"torch/_functorch/_aot_autograd/collect_metadata_analysis.py", NULL, {NULL}, TC},
    {"torch/_functorch/partitioners.py", NULL, {NULL}, TC},
    /* compile_fx.py also holds the wrappers that run the compiled code at every step */
    {"torch/_inductor/compile_fx.py", NULL, {"cudagraphify", "align_inputs", NULL}, TC},
    {"torch/_inductor/graph.py", NULL, {NULL}, TC},
    {"torch/_inductor/scheduler.py", NULL, {NULL}, TC},
    {"torch/_inductor/lowering.py", NULL, {NULL}, TC},
    {"torch/_inductor/ir.py", NULL, {NULL}, TC},
    {"torch/_inductor/codegen/", NULL, {NULL}, TC},
    {"torch/_inductor/fx_passes/", NULL, {NULL}, TC},
    {"torch/_inductor/pattern_matcher.py", NULL, {NULL}, TC},
    {"torch/_inductor/select_algorithm.py", NULL, {NULL}, TC},
    {"torch/_inductor/autotune_process.py", NULL, {NULL}, TC},
    {"torch/_inductor/codecache.py", NULL, {NULL}, TC},
    {"torch/_inductor/async_compile.py", NULL, {NULL}, TC},
    {"torch/_inductor/kernel/", NULL, {NULL}, TC},
    {"torch/_inductor/constant_folding.py", NULL, {NULL}, TC},
    {"torch/_inductor/freezing.py", NULL, {NULL}, TC},
    {"torch/_inductor/runtime/benchmarking.py", NULL, {NULL}, TC},
    /* the launcher runs every step; its autotuning of configs at a kernel's first run does not */
    {"torch/_inductor/runtime/triton_heuristics.py", "benchmark_all_configs", {NULL}, TC},
    {"torch/_inductor/runtime/triton_heuristics.py", "autotune_to_one_config", {NULL}, TC},
    {"torch/_inductor/runtime/triton_heuristics.py", "precompile", {NULL}, TC},
    {"jax/_src/compiler.py", NULL, {NULL}, GT_FW_JAX},
    {"jax/_src/interpreters/mlir.py", NULL, {NULL}, GT_FW_JAX},
};

static unsigned compiler_frame(const char *file, const char *func)
{
    if (!file)
        return 0;
    for (size_t i = 0; i < sizeof COMPILER_FRAMES / sizeof *COMPILER_FRAMES; i++) {
        const frame_rule *r = &COMPILER_FRAMES[i];
        if (!strstr(file, r->file) || (r->only && (!func || !strstr(func, r->only))))
            continue;
        int excluded = 0;
        for (int k = 0; k < 3 && r->except[k]; k++)
            excluded |= func && strstr(func, r->except[k]) != NULL;
        if (!excluded)
            return r->framework;
    }
    return 0;
}

/* Pass 1, each Python frame of a stack record: a compiler's frame marks the stack. */
void md_compile_on_stack_frame(gt_proc *p, pass_state *s, uint32_t stack_id, const char *file,
                               const char *func)
{
    unsigned fw = compiler_frame(file, func);
    if (!fw)
        return;
    p->frameworks |= fw;
    gt_map_put(&s->compiler_stacks, stack_id, 1);
}

/* Pass 2 (every stack is known by then), a wrapped call made with a compiler's frame. */
void md_compile_on_api(gt_proc *p, pass_state *s, const gt_api_common *c)
{
    if (!c->stack_id || gt_map_get(&s->compiler_stacks, c->stack_id) == UINT32_MAX ||
        c->t_end_ns < c->t_begin_ns)
        return;
    p->compile_calls++;
    p->compile_call_ns += c->t_end_ns - c->t_begin_ns;
    gt_grow((void **)&s->compile_ev, &s->cap_compile_ev, s->n_compile_ev, sizeof *s->compile_ev);
    s->compile_ev[s->n_compile_ev++] =
        (gt_phase_span){GT_PHASE_COMPILE, c->t_begin_ns, c->t_end_ns};
}

/* ------------------------------------------------------------------ compile workers */

static const gt_proc_note *parent_note(const gt_run *run, const gt_proc_note *n)
{
    for (size_t i = 0; i < run->n_notes; i++)
        if (run->notes[i].pid == n->ppid && !strcmp(run->notes[i].host, n->host))
            return &run->notes[i];
    return NULL;
}

/* A note of Inductor's pool working for pid: it names pid as its parent, or descends from one
 * that does (the workers the pool forks keep its command line). */
static int compile_worker_of(const gt_run *run, const gt_proc_note *n, int32_t pid)
{
    for (int depth = 0; n && depth < 8; depth++, n = parent_note(run, n))
        if (n->compile_parent == pid)
            return 1;
    return 0;
}

/* The run's compile workers of this process: their count, and when the first started. */
void md_compile_workers(gt_proc *p, const pass_state *s)
{
    const gt_run *run = s->run;
    if (!run || !p->host)
        return;
    for (size_t i = 0; i < run->n_notes; i++) {
        const gt_proc_note *n = &run->notes[i];
        if (n->pid == p->hdr.pid || strcmp(n->host, p->host) ||
            !compile_worker_of(run, n, p->hdr.pid))
            continue;
        p->compile_workers++;
        if (n->start_ns && (!p->compile_pool_start_ns || n->start_ns < p->compile_pool_start_ns))
            p->compile_pool_start_ns = n->start_ns;
    }
    if (p->compile_workers)
        p->frameworks |= TC;
}

/* ------------------------------------------------------------------ spans */

typedef struct evidence {
    uint64_t a, b;
    int compiles; /* a compiler's (1) or JIT evidence (0) */
} evidence;

static int cmp_evidence(const void *x, const void *y)
{
    const evidence *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* GPU busy time in [a, b]: the part of the GPU's active span not in a kept gap. */
static uint64_t gpu_busy_in(const gt_proc *p, uint64_t a, uint64_t b)
{
    uint64_t lo = a > p->gpu_first_ns ? a : p->gpu_first_ns;
    uint64_t hi = b < p->gpu_last_ns ? b : p->gpu_last_ns;
    if (hi <= lo)
        return 0;
    uint64_t idle = 0;
    for (size_t i = md_gap_lower(p, lo); i < p->n_gaps && p->gaps[i].start_ns < hi; i++) {
        uint64_t x = p->gaps[i].start_ns > lo ? p->gaps[i].start_ns : lo;
        uint64_t y = p->gaps[i].end_ns < hi ? p->gaps[i].end_ns : hi;
        idle += y > x ? y - x : 0;
    }
    return hi - lo > idle ? hi - lo - idle : 0;
}

static int step_starts_in(const gt_proc *p, uint64_t a, uint64_t b)
{
    size_t lo = 0, hi = p->n_steps;
    while (lo < hi) { /* first step starting after a */
        size_t mid = (lo + hi) / 2;
        if (p->steps[mid].start_ns <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->n_steps && p->steps[lo].start_ns < b;
}

/* Whether the process stayed in one compilation from a to b. */
static int same_compilation(const gt_proc *p, uint64_t a, uint64_t b)
{
    if (p->n_steps >= 2 && step_starts_in(p, a, b))
        return 0;
    return (double)gpu_busy_in(p, a, b) < COMPILE_BRIDGE_BUSY * (double)(b - a);
}

/* The compiler's and JIT evidence in time order; NULL when the process shows no compiler. */
static evidence *all_evidence(const gt_proc *p, const pass_state *s, const gt_phase_span *jit,
                              size_t nj, size_t *n)
{
    *n = 0;
    if (!s->n_compile_ev && !p->compile_pool_start_ns)
        return NULL;
    evidence *v = gt_xcalloc(s->n_compile_ev + nj + 2, sizeof *v);
    for (size_t i = 0; i < s->n_compile_ev; i++)
        v[(*n)++] = (evidence){s->compile_ev[i].start_ns, s->compile_ev[i].end_ns, 1};
    if (p->compile_pool_start_ns)
        v[(*n)++] = (evidence){p->compile_pool_start_ns, p->compile_pool_start_ns, 1};
    for (size_t i = 0; i < nj; i++)
        v[(*n)++] = (evidence){jit[i].start_ns, jit[i].end_ns, 0};
    qsort(v, *n, sizeof *v, cmp_evidence);
    return v;
}

/* Evidence joined into compilations; only those holding a compiler's evidence are kept. A
 * compilation begins with the compiler's own evidence: JIT evidence before it joins only when
 * close (COMPILE_BRIDGE_NS), so a module load of the program's own (cuRAND's, at its first random
 * numbers) does not pull the silent time before the compiler into the compilation. */
static size_t group(const gt_proc *p, const evidence *v, size_t n, gt_compilation *out)
{
    size_t m = 0;
    int compiles = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t end = m ? out[m - 1].end_ns : 0;
        int joins = m && (v[i].a <= end + COMPILE_BRIDGE_NS ||
                          (compiles && same_compilation(p, end, v[i].a)));
        if (joins) {
            if (v[i].b > out[m - 1].end_ns)
                out[m - 1].end_ns = v[i].b;
            compiles |= v[i].compiles;
            continue;
        }
        if (m && !compiles)
            m--; /* JIT alone: left to the JIT phase */
        out[m++] = (gt_compilation){v[i].a, v[i].b, 0};
        compiles = v[i].compiles;
    }
    if (m && !compiles)
        m--;
    return m;
}

/* GPU idle gaps that are the compilation's: covered for COMPILE_GAP_SHARE, or one in which a
 * compilation begins (the front end ran before the first evidence). They widen it. */
static void absorb_gaps(const gt_proc *p, gt_compilation *c, size_t n)
{
    for (size_t i = 0; i < p->n_gaps; i++) {
        const gt_gap *g = &p->gaps[i];
        uint64_t len = g->end_ns - g->start_ns, covered = 0;
        if (len < GT_BIG_GAP_NS)
            continue;
        for (size_t k = 0; k < n; k++) {
            uint64_t a = c[k].start_ns > g->start_ns ? c[k].start_ns : g->start_ns;
            uint64_t b = c[k].end_ns < g->end_ns ? c[k].end_ns : g->end_ns;
            covered += b > a ? b - a : 0;
            int begins =
                c[k].start_ns > g->start_ns && c[k].start_ns <= g->end_ns + COMPILE_BRIDGE_NS;
            if (begins || (double)covered >= COMPILE_GAP_SHARE * (double)len) {
                c[k].start_ns = c[k].start_ns < g->start_ns ? c[k].start_ns : g->start_ns;
                c[k].end_ns = c[k].end_ns > g->end_ns ? c[k].end_ns : g->end_ns;
                break;
            }
        }
    }
}

/* The compilations of the process (p->compilations) and their spans for the phases (*out, kind
 * GT_PHASE_COMPILE, sorted and disjoint); 0 when it shows no compiler. */
size_t md_compile_spans(gt_proc *p, const pass_state *s, const gt_phase_span *jit, size_t nj,
                        gt_phase_span **out)
{
    size_t n = 0;
    *out = NULL;
    evidence *v = all_evidence(p, s, jit, nj, &n);
    if (!v)
        return 0;
    gt_compilation *c = gt_xcalloc(n + 1, sizeof *c);
    size_t m = group(p, v, n, c);
    free(v);
    absorb_gaps(p, c, m);
    size_t k = 0; /* absorbing may make two touch: one compilation */
    for (size_t i = 0; i < m; i++) {
        if (k && c[i].start_ns <= c[k - 1].end_ns) {
            if (c[i].end_ns > c[k - 1].end_ns)
                c[k - 1].end_ns = c[i].end_ns;
        } else {
            c[k++] = c[i];
        }
    }
    p->compilations = c;
    p->n_compilations = k;
    *out = gt_xcalloc(k + 1, sizeof **out);
    for (size_t i = 0; i < k; i++)
        (*out)[i] = (gt_phase_span){GT_PHASE_COMPILE, c[i].start_ns, c[i].end_ns};
    return k;
}
