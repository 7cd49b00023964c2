/* model_phases.c — the phases of a process's timeline (issue 21 item 1): start-up, JIT
 * compilation, compilation (a framework's compiler in the process: model_compile.c), cuDNN
 * autotuning, warm-up, steady state, tear-down.
 *
 * Why. Time outside the steady state is not the program's steady behaviour: a Triton loop's GPU
 * sat idle a second while ptxas and gcc compiled its kernel, a torch.compile run while Inductor
 * compiled, a cudnn.benchmark run 19 s in its first step while cuDNN tried engines. Counting that
 * idle time as "the CPU was busy elsewhere, typically loading data" sends the user to the wrong
 * fix; named, it is a cost the user can weigh (a compile cache, fewer shapes).
 *
 * Evidence, from pass 1: JIT/module-load calls (category JIT: NVRTC, nvJitLink, cuModuleLoad*,
 * cuLibraryLoad*, cuLinkComplete), cuDNN Find calls and autotuning executes of ops that tried
 * several plans (plan finalizations join an autotuning span they touch: building candidate
 * plans is part of the sweep), waits called from an autotuner's frames, and the
 * compiler processes the program started (gt_proc_note: ptxas, gcc... found through the parent
 * chain). Evidence closer than PHASE_BRIDGE_NS is one span: a compilation is a series of steps
 * (lowering in the process, ptxas, gcc for the launcher, the module load) with short CPU work
 * between them, none of which feeds the GPU.
 *
 * The base timeline: start-up until the first GPU work; with steps, warm-up until the steady
 * window, the steady window, tear-down after it; without steps the GPU-active rest is steady and
 * tear-down follows the last GPU work. JIT and autotuning spans after start-up replace the base
 * phase where they lie (autotuning over JIT where both: cuDNN's own runtime compilation during a
 * sweep is the sweep's cost); compilation replaces it anywhere (start-up included), over JIT (a
 * compiler's module loads and ptxas runs are its own) and under autotuning. */
#include "model_phases.h"

#include "model_compile.h"
#include "model_cudnn.h"
#include "model_sample.h"

#define PHASE_BRIDGE_NS 50000000ull        /* 50 ms */
#define PHASE_WEAK_AUTOTUNE GT_PHASE_COUNT /* plan finalization: autotuning only beside a trial */
#define PHASE_GAP_SHARE 0.25 /* a GPU idle gap this much covered by compilation is compilation */

/* ------------------------------------------------------------------ evidence (pass 1) */

static void evidence_add(pass_state *s, int kind, uint64_t a, uint64_t b)
{
    if (b < a)
        return;
    gt_grow((void **)&s->phase_ev, &s->cap_phase_ev, s->n_phase_ev, sizeof *s->phase_ev);
    s->phase_ev[s->n_phase_ev++] = (gt_phase_span){kind, a, b};
}

static int is_context_call(uint32_t f)
{
    return f == GT_FN_cuCtxCreate || f == GT_FN_cuDevicePrimaryCtxRetain;
}

/* A call that compiles or loads code: the JIT category but its context calls (start-up). */
int md_api_is_jit(uint32_t func)
{
    return gt_api_func_category(func) == GT_CAT_JIT && !is_context_call(func);
}

static int is_cudnn_find(uint32_t f)
{
    return f >= GT_FN_cudnnFindConvolutionForwardAlgorithm &&
           f <= GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx;
}

void md_phase_evidence(gt_proc *p, pass_state *s, const gt_record *r)
{
    if (r->kind != GT_REC_API && r->kind != GT_REC_API_CUDNN)
        return;
    gt_rec_api_cudnn c;
    gt_body_copy(&c, sizeof c, r);
    uint64_t a = c.c.t_begin_ns, b = c.c.t_end_ns;
    if (r->kind == GT_REC_API) {
        if (!md_api_is_jit(c.c.func))
            return;
        p->jit_calls++;
        p->jit_call_ns += b > a ? b - a : 0;
        evidence_add(s, GT_PHASE_JIT, a, b);
    } else if (is_cudnn_find(c.c.func)) {
        evidence_add(s, GT_PHASE_AUTOTUNE, a, b);
    } else if (c.cudnn_flags & GT_CUDNN_AUTOTUNE) { /* evidence once its op tried 2+ plans */
        gt_grow((void **)&s->trials, &s->cap_trials, s->n_trials, sizeof *s->trials);
        s->trials[s->n_trials++] = (md_trial){a, b, c.c.func, c.plan_id, c.sig_id};
    } else if (c.c.func == GT_FN_cudnnBackendFinalize) {
        evidence_add(s, PHASE_WEAK_AUTOTUNE, a, b);
    }
}

void md_phase_end_record(gt_proc *p, const gt_record *r)
{
    gt_rec_end e;
    gt_body_copy(&e, sizeof e, r);
    p->end_ns = e.t_begin_ns ? e.t_begin_ns : e.t_ns;
}

/* ------------------------------------------------------------------ compiler children */

static int name_is(const char *base, const char *const *names)
{
    for (; *names; names++)
        if (!strcmp(base, *names))
            return 1;
    return 0;
}

int gt_exe_is_compiler(const char *exe)
{
    static const char *const names[] = {
        "ptxas",         "nvcc", "cicc", "nvlink", "fatbinary", "cudafe++",
        "nvptxcompiler", "cc",   "c++",  "cc1",    "cc1plus",   "as",
        "collect2",      "ld",   "lld",  "ld.bfd", "ld.gold",   "ld.lld",
        "cpp",           "llc",  "opt",  NULL};
    if (!exe || !*exe)
        return 0;
    const char *slash = strrchr(exe, '/');
    const char *base = slash ? slash + 1 : exe;
    if (name_is(base, names) || strstr(base, "gcc") || strstr(base, "g++") || strstr(base, "clang"))
        return 1;
    /* target-prefixed tools: x86_64-linux-gnu-ld.bfd, aarch64-linux-gnu-as */
    const char *dash = strrchr(base, '-');
    return dash && name_is(dash + 1, names);
}

static const gt_proc_note *note_by_pid(const gt_run *run, const char *host, int32_t pid,
                                       uint64_t before)
{
    const gt_proc_note *best = NULL;
    for (size_t i = 0; i < run->n_notes; i++) {
        const gt_proc_note *n = &run->notes[i];
        if (n->pid != pid || strcmp(n->host, host) || (before && n->start_ns > before))
            continue;
        if (!best || n->start_ns > best->start_ns) /* the latest start before: pids are reused */
            best = n;
    }
    return best;
}

/* Whether the process note n descends from pid (same host), through the chain of known parents. */
static int descends_from(const gt_run *run, const gt_proc_note *n, int32_t pid)
{
    for (int depth = 0; n && depth < 32; depth++) {
        if (n->ppid == pid)
            return 1;
        if (n->ppid <= 1)
            return 0;
        n = note_by_pid(run, n->host, n->ppid, n->start_ns);
    }
    return 0;
}

static void children_evidence(gt_proc *p, pass_state *s)
{
    const gt_run *run = s->run;
    if (!run || !p->host)
        return;
    uint64_t born = p->hdr.start_realtime_ns, died = p->end_ns ? p->end_ns : p->t_max;
    for (size_t i = 0; i < run->n_notes; i++) {
        const gt_proc_note *n = &run->notes[i];
        if (!n->compiler || !n->end_ns || n->end_ns <= n->start_ns || strcmp(n->host, p->host) ||
            n->pid == p->hdr.pid || n->start_ns < born || (died && n->start_ns > died) ||
            !descends_from(run, n, p->hdr.pid))
            continue;
        p->jit_children++;
        p->jit_children_ns += n->end_ns - n->start_ns;
        evidence_add(s, GT_PHASE_JIT, n->start_ns, n->end_ns);
    }
}

/* ------------------------------------------------------------------ spans */

static int cmp_span(const void *x, const void *y)
{
    const gt_phase_span *a = x, *b = y;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns ? 1 : 0;
}

/* Merges the spans of one kind (sorted) closer than PHASE_BRIDGE_NS; returns the new count. */
static size_t merge_kind(gt_phase_span *v, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && v[i].start_ns <= v[out - 1].end_ns + PHASE_BRIDGE_NS) {
            if (v[i].end_ns > v[out - 1].end_ns)
                v[out - 1].end_ns = v[i].end_ns;
        } else {
            v[out++] = v[i];
        }
    }
    return out;
}

/* The evidence of one kind, sorted and merged, in a new array. */
static size_t spans_of(const pass_state *s, int kind, gt_phase_span **out)
{
    size_t n = 0;
    gt_phase_span *v = gt_xcalloc(s->n_phase_ev + 1, sizeof *v);
    for (size_t i = 0; i < s->n_phase_ev; i++)
        if (s->phase_ev[i].kind == kind)
            v[n++] = s->phase_ev[i];
    qsort(v, n, sizeof *v, cmp_span);
    *out = v;
    return merge_kind(v, n);
}

/* Plan finalizations that touch an autotuning span join it (and may bridge two). */
static size_t autotune_spans(const pass_state *s, gt_phase_span **out)
{
    gt_phase_span *weak, *strong;
    size_t nw = spans_of(s, PHASE_WEAK_AUTOTUNE, &weak),
           ns = spans_of(s, GT_PHASE_AUTOTUNE, &strong);
    gt_phase_span *v = gt_xcalloc(ns + nw + 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < ns; i++)
        v[n++] = strong[i];
    /* A weak span (finalizations closer than the bridge, merged) joins the strong spans it
     * touches, and may fill the time between them (building the next candidates), but is
     * clipped to a bridge beyond the first and last of them: finalizations go on every step
     * where PyTorch builds plans, and they would carry the autotuning over the whole steady
     * state (bench_resnet_short: its last 17 steps inside an 8.5 s "autotuning"). */
    for (size_t i = 0, f = 0; i < nw && ns; i++) {
        while (f < ns && strong[f].end_ns + PHASE_BRIDGE_NS < weak[i].start_ns)
            f++;
        size_t l = f;
        while (l < ns && strong[l].start_ns <= weak[i].end_ns + PHASE_BRIDGE_NS)
            l++;
        if (l == f) /* no strong span near it */
            continue;
        uint64_t a =
            strong[f].start_ns > PHASE_BRIDGE_NS ? strong[f].start_ns - PHASE_BRIDGE_NS : 0;
        uint64_t b = strong[l - 1].end_ns + PHASE_BRIDGE_NS;
        a = weak[i].start_ns > a ? weak[i].start_ns : a;
        b = weak[i].end_ns < b ? weak[i].end_ns : b;
        if (b > a)
            v[n++] = (gt_phase_span){GT_PHASE_AUTOTUNE, a, b};
    }
    qsort(v, n, sizeof *v, cmp_span);
    n = merge_kind(v, n);
    free(weak);
    free(strong);
    *out = v;
    return n;
}

/* A GPU idle gap that JIT compilation covers for PHASE_GAP_SHARE or more is compilation whole:
 * the compiler's children and the module load are only the visible part of a compile, whose
 * front end (Triton's lowering to PTX) runs in the process itself, just before, with no call to
 * show for it (a framework compiler's gaps: model_compile.c). */
static size_t absorb_gaps(const gt_proc *p, gt_phase_span **v, size_t n)
{
    gt_phase_span *add = NULL;
    size_t n_add = 0, cap_add = 0, j = 0;
    for (size_t i = 0; i < p->n_gaps; i++) {
        const gt_gap *g = &p->gaps[i];
        uint64_t len = g->end_ns - g->start_ns, covered_ns = 0;
        if (len < GT_BIG_GAP_NS)
            continue;
        while (j < n && (*v)[j].end_ns <= g->start_ns)
            j++;
        for (size_t k = j; k < n && (*v)[k].start_ns < g->end_ns; k++) {
            uint64_t a = (*v)[k].start_ns > g->start_ns ? (*v)[k].start_ns : g->start_ns;
            uint64_t b = (*v)[k].end_ns < g->end_ns ? (*v)[k].end_ns : g->end_ns;
            covered_ns += b > a ? b - a : 0;
        }
        if ((double)covered_ns < PHASE_GAP_SHARE * (double)len)
            continue;
        gt_grow((void **)&add, &cap_add, n_add, sizeof *add);
        add[n_add++] = (gt_phase_span){GT_PHASE_JIT, g->start_ns, g->end_ns};
    }
    if (!n_add)
        return n;
    *v = gt_xrealloc(*v, (n + n_add) * sizeof **v);
    memcpy(*v + n, add, n_add * sizeof *add);
    free(add);
    qsort(*v, n + n_add, sizeof **v, cmp_span);
    return merge_kind(*v, n + n_add);
}

/* The base phase at time t (no JIT or autotuning). */
static int base_kind(const gt_proc *p, uint64_t t)
{
    if (!p->gpu_first_ns || t < p->gpu_first_ns)
        return GT_PHASE_STARTUP;
    if (p->n_steps >= 2) {
        if (t < p->steady_start_ns)
            return GT_PHASE_WARMUP;
        return t < p->steady_end_ns ? GT_PHASE_STEADY : GT_PHASE_TEARDOWN;
    }
    return t < p->gpu_last_ns ? GT_PHASE_STEADY : GT_PHASE_TEARDOWN;
}

/* The overlay kind covering [t, ...) from a sorted, disjoint list, -1 none; *i advances. */
static int covered(const gt_phase_span *v, size_t n, size_t *i, uint64_t t)
{
    while (*i < n && v[*i].end_ns <= t)
        (*i)++;
    return *i < n && v[*i].start_ns <= t ? v[*i].kind : -1;
}

static void add_point(uint64_t **pts, size_t *n, size_t *cap, uint64_t t, uint64_t lo, uint64_t hi)
{
    if (t < lo || t > hi)
        return;
    gt_grow((void **)pts, cap, *n, sizeof **pts);
    (*pts)[(*n)++] = t;
}

static void push_span(gt_proc *p, size_t *cap, int kind, uint64_t a, uint64_t b)
{
    if (b <= a)
        return;
    if (p->n_phases && p->phases[p->n_phases - 1].kind == kind &&
        p->phases[p->n_phases - 1].end_ns == a) {
        p->phases[p->n_phases - 1].end_ns = b;
        return;
    }
    gt_grow((void **)&p->phases, cap, p->n_phases, sizeof *p->phases);
    p->phases[p->n_phases++] = (gt_phase_span){kind, a, b};
}

/* The overlays of the base timeline, highest priority first. */
enum { OV_TUNE, OV_COMPILE, OV_JIT, OV_COUNT };
typedef struct overlay {
    const gt_phase_span *v;
    size_t n, at;
} overlay;

static void build_spans(gt_proc *p, overlay ov[OV_COUNT])
{
    uint64_t lo = p->t_min, hi = p->t_max;
    uint64_t *pts = NULL;
    size_t n = 0, cap = 0;
    uint64_t base[] = {
        lo, hi, p->gpu_first_ns, p->gpu_last_ns, p->steady_start_ns, p->steady_end_ns};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        add_point(&pts, &n, &cap, base[i], lo, hi);
    for (int o = 0; o < OV_COUNT; o++)
        for (size_t i = 0; i < ov[o].n; i++) {
            add_point(&pts, &n, &cap, ov[o].v[i].start_ns, lo, hi);
            add_point(&pts, &n, &cap, ov[o].v[i].end_ns, lo, hi);
        }
    qsort(pts, n, sizeof *pts, md_cmp_u64);
    size_t span_cap = 0;
    for (size_t k = 0; k + 1 < n; k++) {
        uint64_t a = pts[k], b = pts[k + 1];
        if (b == a)
            continue;
        int kind = base_kind(p, a), over[OV_COUNT];
        for (int o = 0; o < OV_COUNT; o++)
            over[o] = covered(ov[o].v, ov[o].n, &ov[o].at, a);
        /* start-up's own module loads and compiles stay in it; a framework's compiler does not */
        if (over[OV_COMPILE] >= 0 && (kind == GT_PHASE_STARTUP || over[OV_TUNE] < 0))
            kind = GT_PHASE_COMPILE;
        else if (kind != GT_PHASE_STARTUP)
            kind = over[OV_TUNE] >= 0 ? over[OV_TUNE] : over[OV_JIT] >= 0 ? over[OV_JIT] : kind;
        push_span(p, &span_cap, kind, a, b);
    }
    free(pts);
}

void md_phase_overlaps(const gt_proc *p, uint64_t a, uint64_t b, uint64_t out[GT_PHASE_COUNT])
{
    memset(out, 0, GT_PHASE_COUNT * sizeof *out);
    size_t lo = MD_FIRST_ENDING_AFTER(p->phases, p->n_phases, a);
    for (size_t i = lo; i < p->n_phases && p->phases[i].start_ns < b; i++) {
        uint64_t x = p->phases[i].start_ns > a ? p->phases[i].start_ns : a;
        uint64_t y = p->phases[i].end_ns < b ? p->phases[i].end_ns : b;
        if (y > x)
            out[p->phases[i].kind] += y - x;
    }
}

/* The phases' time in [a, b]'s part of the steady GPU window (md_phase_overlaps for each piece). */
static void steady_gpu_phase_overlaps(const gt_proc *p, uint64_t a, uint64_t b,
                                      uint64_t out[GT_PHASE_COUNT])
{
    memset(out, 0, GT_PHASE_COUNT * sizeof *out);
    for (size_t i = MD_FIRST_ENDING_AFTER(p->steady_gpu, p->n_steady_gpu, a);
         i < p->n_steady_gpu && p->steady_gpu[i].start_ns < b; i++) {
        uint64_t x = a > p->steady_gpu[i].start_ns ? a : p->steady_gpu[i].start_ns;
        uint64_t y = b < p->steady_gpu[i].end_ns ? b : p->steady_gpu[i].end_ns;
        if (y <= x)
            continue;
        uint64_t part[GT_PHASE_COUNT];
        md_phase_overlaps(p, x, y, part);
        for (int k = 0; k < GT_PHASE_COUNT; k++)
            out[k] += part[k];
    }
}

/* The part of [a, b] in the steady window's GPU-measured part (the steady steps inside sampled
 * windows when sampled), less what lies in JIT compilation, compilation or autotuning there: that
 * time is its phase's, and every steady figure leaves it out alike (idle, its causes, launch
 * latency, busy time). part, when given, gets the phases' overlaps. */
static uint64_t steady_part(const gt_proc *p, uint64_t a, uint64_t b)
{
    return md_steady_outside_phases(p, a, b, NULL);
}

void md_merged_in_steady(const gt_proc *p, const md_merged *m, uint64_t *ns, uint64_t *gaps)
{
    md_merged_in(p, m, steady_part, ns, gaps);
}

uint64_t md_steady_outside_phases(const gt_proc *p, uint64_t a, uint64_t b,
                                  uint64_t part[GT_PHASE_COUNT])
{
    uint64_t mine[GT_PHASE_COUNT];
    part = part ? part : mine;
    memset(part, 0, GT_PHASE_COUNT * sizeof *part);
    uint64_t ov = gt_proc_steady_gpu_overlap(p, a, b);
    if (!ov || !p->n_phases)
        return ov;
    if (p->gpu_sampled) { /* the steady window's part in whole steps inside windows */
        steady_gpu_phase_overlaps(p, a, b, part);
    } else {
        uint64_t x = a > p->steady_start_ns ? a : p->steady_start_ns;
        uint64_t y = b < p->steady_end_ns ? b : p->steady_end_ns;
        md_phase_overlaps(p, x, y < x ? x : y, part);
    }
    uint64_t named = 0;
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        named += gt_phase_is_named_cost(k) ? part[k] : 0;
    return named < ov ? ov - named : 0;
}

/* Evidence known only after pass 2 and the cuDNN ops: the flagged trials of ops that really
 * tried several plans, until their last trial of a plan they did not choose (a single flagged
 * plan is a first execution; the chosen plan flagged later, by an event PyTorch recorded for
 * another reason, an ordinary execution), and the waits of call sites
 * inside an autotuner (cudnn_frontend::time_sorted_plan synchronizes around each candidate). */
static void autotune_evidence(gt_proc *p, pass_state *s)
{
    for (size_t i = 0; i < s->n_trials; i++) {
        const md_trial *t = &s->trials[i];
        if (t->a <= md_cudnn_trials_end(p, s, t->func, t->plan_id, t->sig_id))
            evidence_add(s, GT_PHASE_AUTOTUNE, t->a, t->b);
    }
    for (size_t i = 0; i < s->n_sev; i++) {
        const steady_ev *e = &s->sev[i];
        if ((e->kind == SE_SYNC || e->kind == SE_COPY_ITEM) && e->site < p->n_sync_sites &&
            p->sync_sites[e->site].in_autotuner)
            evidence_add(s, GT_PHASE_AUTOTUNE, e->t, e->t + e->d);
    }
}

/* After the phases: each compilation's time in the compilation phase (autotuning evidence in it
 * keeps its own phase), the first one's and the later ones' (the compilations: model_compile.c). */
static void compilation_times(gt_proc *p)
{
    p->compile_first_ns = p->recompile_ns = 0;
    for (size_t i = 0; i < p->n_compilations; i++) {
        uint64_t ov[GT_PHASE_COUNT];
        md_phase_overlaps(p, p->compilations[i].start_ns, p->compilations[i].end_ns, ov);
        p->compilations[i].phase_ns = ov[GT_PHASE_COMPILE];
        if (i == 0)
            p->compile_first_ns = ov[GT_PHASE_COMPILE];
        else
            p->recompile_ns += ov[GT_PHASE_COMPILE];
    }
}

void md_phases(gt_proc *p, pass_state *s)
{
    children_evidence(p, s);
    autotune_evidence(p, s);
    md_compile_workers(p, s);
    if (p->t_max <= p->t_min)
        return;
    gt_phase_span *jit, *tune, *comp;
    size_t nj = spans_of(s, GT_PHASE_JIT, &jit), nt = autotune_spans(s, &tune);
    size_t nc = md_compile_spans(p, s, jit, nj, &comp);
    nj = absorb_gaps(p, &jit, nj);
    overlay layers[OV_COUNT] = {{tune, nt, 0}, {comp, nc, 0}, {jit, nj, 0}};
    build_spans(p, layers);
    free(jit);
    free(tune);
    free(comp);
    for (size_t i = 0; i < p->n_phases; i++)
        p->phase_ns[p->phases[i].kind] += p->phases[i].end_ns - p->phases[i].start_ns;
    uint64_t ov[GT_PHASE_COUNT];
    for (size_t i = 0; i < p->n_gaps; i++) {
        gt_gap *g = &p->gaps[i];
        md_phase_overlaps(p, g->start_ns, g->end_ns, ov);
        int best = base_kind(p, g->start_ns);
        for (int k = 0; k < GT_PHASE_COUNT; k++)
            if (ov[k] > ov[best])
                best = k;
        g->phase = best;
    }
    compilation_times(p);
}

const char *gt_phase_key(int kind)
{
    static const char *const keys[GT_PHASE_COUNT] = {"startup", "jit",    "compile", "autotune",
                                                     "warmup",  "steady", "teardown"};
    return kind >= 0 && kind < GT_PHASE_COUNT ? keys[kind] : "?";
}

int gt_phase_is_named_cost(int kind)
{
    return kind == GT_PHASE_JIT || kind == GT_PHASE_COMPILE || kind == GT_PHASE_AUTOTUNE;
}

const char *gt_phase_name(int kind)
{
    static const char *const names[GT_PHASE_COUNT] = {
        "start-up", "JIT compilation", "compilation", "cuDNN autotuning",
        "warm-up",  "steady state",    "tear-down"};
    return kind >= 0 && kind < GT_PHASE_COUNT ? names[kind] : "?";
}
