/* model.c — read .gtrace files into per-process aggregates (see model.h for the passes). */
#include "model.h"

#include "cudnn_json.h"
#include "cudnn_names.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "demangle.h"
#include "op_link.h"
#include "util.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "symbolize.h"

#define INTERVALS_MAX (4u << 20) /* compaction threshold of the GPU busy interval array */
#define NVTX_RANGES_MAX 200000u
#define MAX_TIDS 256
#define NVTX_DEPTH 64

/* ------------------------------------------------------------------ small utilities */

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

/* ------------------------------------------------------------------ names */

const char *gt_kernel_family_name(int family)
{
    static const char *const names[GT_KF_COUNT] = {
        "-",    "implicit GEMM", "Winograd", "FFT", "tensor cores (xmma/hmma)",
        "GEMM", "direct/other"};
    return family >= 0 && family < GT_KF_COUNT ? names[family] : "?";
}

static int uses_tensor_cores(const char *name)
{
    /* xmma/sm80_ kernels are a template family: "f32f32_f32f32" without tf32 is plain FFMA */
    if (contains_ci(name, "f32f32_f32f32") && !contains_ci(name, "tf32"))
        return 0;
    static const char *const marks[] = {"xmma",     "hmma",   "gmma",  "sm80_",   "sm86_", "sm89_",
                                        "sm90_",    "sm100_", "s1688", "s16816",  "h1688", "h16816",
                                        "tensorop", "i8816",  "_tc_",  "bf16816", "wgmma"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (contains_ci(name, marks[i]))
            return 1;
    return 0;
}

static int conv_like(const char *name)
{
    return contains_ci(name, "conv") || contains_ci(name, "cudnn") || contains_ci(name, "fprop") ||
           contains_ci(name, "dgrad") || contains_ci(name, "wgrad") ||
           contains_ci(name, "winograd") || contains_ci(name, "fft");
}

int gt_kernel_family_of(const char *name)
{
    if (contains_ci(name, "winograd"))
        return GT_KF_WINOGRAD;
    if (contains_ci(name, "fft"))
        return GT_KF_FFT;
    if (uses_tensor_cores(name))
        return GT_KF_TENSOR_CORE;
    if (contains_ci(name, "implicit_convolve") || contains_ci(name, "implicit_gemm") ||
        contains_ci(name, "precomputed") || contains_ci(name, "implicit_precomp"))
        return GT_KF_IMPLICIT_GEMM;
    if (contains_ci(name, "gemm"))
        return GT_KF_GEMM;
    if (conv_like(name))
        return GT_KF_CONV_OTHER;
    return GT_KF_NONE;
}

static const char *legacy_algo_name(int op_kind, int algo)
{
    static const char *const fwd[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    static const char *const bwd_data[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                           "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *const bwd_filter[] = {
        "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    if (algo < 0)
        return "?";
    if ((op_kind == GT_CUDNN_OP_CONV_FWD || op_kind == GT_CUDNN_OP_CONV_BIAS_ACT) && algo < 8)
        return fwd[algo];
    if (op_kind == GT_CUDNN_OP_CONV_BWD_DATA && algo < 6)
        return bwd_data[algo];
    if (op_kind == GT_CUDNN_OP_CONV_BWD_FILTER && algo < 7)
        return bwd_filter[algo];
    return "?";
}

/* ------------------------------------------------------------------ pass state */

typedef struct plan_info {
    gt_rec_cudnn_plan rec;
    uint32_t graph_ord; /* order of first appearance of its op graph */
    char *knobs;        /* "TILE_SIZE=1 STAGES=4" from the plan's JSON, NULL none */
    char *label;        /* signature of a plan that is not a convolution, NULL none */
} plan_info;

typedef struct raw_cudnn { /* wrapped cuDNN calls grouped by what they ran */
    uint32_t func, plan_id, sig_id, flags;
    int32_t algo, math_type;
    uint64_t count, api_ns, gpu_ns;
    uint32_t stack_id;
} raw_cudnn;

typedef struct nvtx_open {
    uint32_t name_id, depth;
    uint64_t t;
} nvtx_open;

typedef struct tid_stack {
    uint32_t tid, depth;
    uint64_t last_h2d_end, last_h2d_stream; /* for copy-then-sync (non_blocking=False) */
    nvtx_open open[NVTX_DEPTH];
} tid_stack;

typedef struct nvtx_name {
    uint32_t name_id;
    int top_level;
    size_t n, cap;
    gt_step *ranges;
} nvtx_name;

typedef struct stack_py {
    uint32_t stack_id, file_id, func_id;
    int32_t line;
    int have_py;
    uint64_t pc0;
} stack_py;

/* What the steady-window figures need of one record, logged in pass 2 (the window is known only
 * after it): kept in file order so that sums come out as a third pass over the file gave them. */
enum steady_kind { SE_ALLOC, SE_SYNC, SE_COPY, SE_COPY_ITEM, SE_KERNEL, SE_CUPTI_SYNC };
typedef struct steady_ev {
    uint64_t t, d;
    uint32_t site; /* index in p->sync_sites, UINT32_MAX none; kernels: 1 if NCCL */
    uint8_t kind;
} steady_ev;

typedef struct pass_state {
    gt_reader *reader;
    steady_ev *sev;
    size_t n_sev, cap_sev;
    int nvtx_steps;    /* steps came from an NVTX range (else maybe from a marker kernel) */
    gt_op_links links; /* GPU op -> call (op_link.h): the rule the converter draws */
    gt_symtab *symtab;
    gt_u64map kern_by_name, site_by_key, link_call, link_how, call_by_corr, raw_by_key, plan_by_id,
        sig_by_id, gemm_by_key, graph_ord, nvtx_by_name, range_open, stack_by_id;
    raw_cudnn *raw;
    size_t n_raw, cap_raw;
    plan_info *plans;
    size_t n_plans, cap_plans;
    gt_rec_cudnn_conv_sig *sigs;
    size_t n_sigs, cap_sigs;
    size_t cap_gemms;
    uint64_t (*iv)[2];
    size_t n_iv, cap_iv;
    uint64_t merge_gap;
    tid_stack *tids;
    size_t n_tids;
    nvtx_name *names;
    size_t n_names, cap_names;
    nvtx_open *ranges_open;
    size_t n_ranges_open, cap_ranges_open;
    size_t nvtx_total;
    stack_py *stacks;
    size_t n_stacks, cap_stacks;
    uint64_t cpu_copy_count[5][6], cpu_copy_bytes[5][6];
    uint64_t cupti_sync_ns, cupti_sync_count;
    uint64_t gpu_memcpy_records;
    uint32_t marker_name_id;
    uint64_t *marker_t;
    size_t n_marker, cap_marker;
} pass_state;

struct gt_stack_name {
    uint32_t id;
    char *where;
};

static void note_time(gt_proc *p, uint64_t a, uint64_t b)
{
    if (!a)
        return;
    if (!p->t_min || a < p->t_min)
        p->t_min = a;
    if (b > p->t_max)
        p->t_max = b;
    if (a > p->t_max)
        p->t_max = a;
}

/* ------------------------------------------------------------------ GPU busy intervals */

static int cmp_iv(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Sort and merge intervals closer than gap ns. */
static void iv_merge(pass_state *s, uint64_t gap)
{
    if (!s->n_iv)
        return;
    qsort(s->iv, s->n_iv, sizeof s->iv[0], cmp_iv);
    size_t w = 0;
    for (size_t i = 1; i < s->n_iv; i++) {
        if (s->iv[i][0] <= s->iv[w][1] + gap) {
            if (s->iv[i][1] > s->iv[w][1])
                s->iv[w][1] = s->iv[i][1];
        } else {
            s->iv[++w][0] = s->iv[i][0];
            s->iv[w][1] = s->iv[i][1];
        }
    }
    s->n_iv = w + 1;
}

static void iv_add(pass_state *s, uint64_t a, uint64_t b)
{
    if (!a || b < a)
        return;
    if (s->n_iv >= INTERVALS_MAX) {
        /* Bound memory: merge overlaps; if that is not enough, also merge ever larger gaps
         * (they are below GT_GAP_MIN_NS for a long time, so kept gaps stay exact). */
        iv_merge(s, s->merge_gap);
        while (s->n_iv > INTERVALS_MAX / 2) {
            s->merge_gap = s->merge_gap ? s->merge_gap * 2 : 1000;
            iv_merge(s, s->merge_gap);
        }
    }
    gt_grow((void **)&s->iv, &s->cap_iv, s->n_iv, sizeof s->iv[0]);
    s->iv[s->n_iv][0] = a;
    s->iv[s->n_iv][1] = b;
    s->n_iv++;
}

/* ------------------------------------------------------------------ pass 1 handlers */

static gt_site_agg *site_for(gt_proc *p, pass_state *s, uint32_t func, uint32_t stack_id)
{
    uint64_t key = ((uint64_t)func << 32) | stack_id;
    uint32_t i = gt_map_get(&s->site_by_key, key);
    if (i == UINT32_MAX) {
        gt_grow((void **)&p->sync_sites, &p->cap_sync_sites, p->n_sync_sites,
                sizeof *p->sync_sites);
        i = (uint32_t)p->n_sync_sites++;
        p->sync_sites[i].func = func;
        p->sync_sites[i].stack_id = stack_id;
        gt_map_put(&s->site_by_key, key, i);
    }
    return &p->sync_sites[i];
}

static void add_sync_stall(gt_proc *p, pass_state *s, const gt_api_common *c)
{
    uint64_t d = c->t_end_ns > c->t_begin_ns ? c->t_end_ns - c->t_begin_ns : 0;
    gt_site_agg *site = site_for(p, s, c->func, c->stack_id);
    site->count++;
    site->total_ns += d;
    if (d > site->max_ns)
        site->max_ns = d;
    p->sync_total_ns += d;
    p->sync_count++;
}

static int sync_blocks(uint32_t kind)
{
    return kind == GT_SYNC_DEVICE || kind == GT_SYNC_STREAM || kind == GT_SYNC_EVENT;
}

static uint8_t host_kind_of(uint8_t dir, uint8_t src_kind, uint8_t dst_kind)
{
    if (dir == GT_DIR_H2D || dir == GT_DIR_H2H)
        return src_kind < 6 ? src_kind : GT_MEM_UNKNOWN;
    if (dir == GT_DIR_D2H)
        return dst_kind < 6 ? dst_kind : GT_MEM_UNKNOWN;
    return GT_MEM_DEVICE;
}

/* A copy the CPU waits for: synchronous calls, and pageable D2H (staged, returns when done). */
static int copy_blocks(const gt_rec_api_memcpy *m, uint8_t hk)
{
    return !m->is_async || (m->direction == GT_DIR_D2H && hk == GT_MEM_PAGEABLE);
}

/* A blocking read-back of a small result (loss.item()): a synchronization, not a data copy. */
static int copy_is_item_like(const gt_rec_api_memcpy *m, uint8_t hk)
{
    return m->direction == GT_DIR_D2H && copy_blocks(m, hk) && m->bytes <= GT_ITEM_COPY_MAX_BYTES;
}

static void on_api_memcpy(gt_proc *p, pass_state *s, const gt_rec_api_memcpy *m, uint64_t d)
{
    uint8_t dir = m->direction <= GT_DIR_D2D ? m->direction : GT_DIR_DEFAULT;
    uint8_t hk = host_kind_of(dir, m->src_kind, m->dst_kind);
    gt_copy_agg *a = &p->copies[dir][hk];
    a->cpu_count++;
    a->cpu_ns += d;
    s->cpu_copy_count[dir][hk]++;
    s->cpu_copy_bytes[dir][hk] += m->bytes;
    if (d > a->top_stack_ns && m->c.stack_id) { /* the costliest call site seen */
        a->top_stack_ns = d;
        a->top_stack = m->c.stack_id;
    }
    if (copy_blocks(m, hk)) {
        a->blocking_count++;
        a->blocking_ns += d;
        if (copy_is_item_like(m, hk)) /* waits for all queued GPU work */
            add_sync_stall(p, s, &m->c);
    }
}

static uint32_t raw_for(pass_state *s, const gt_rec_api_cudnn *c)
{
    uint32_t autotune = c->cudnn_flags & GT_CUDNN_AUTOTUNE;
    uint64_t key = gt_mix64(((uint64_t)c->c.func << 48) ^ ((uint64_t)c->plan_id << 24) ^
                            ((uint64_t)c->sig_id) ^ ((uint64_t)(uint32_t)c->algo << 40) ^
                            ((uint64_t)(uint32_t)c->math_type << 56) ^ ((uint64_t)autotune << 63));
    uint32_t i = gt_map_get(&s->raw_by_key, key);
    if (i != UINT32_MAX)
        return i;
    gt_grow((void **)&s->raw, &s->cap_raw, s->n_raw, sizeof *s->raw);
    i = (uint32_t)s->n_raw++;
    raw_cudnn *r = &s->raw[i];
    r->func = c->c.func;
    r->plan_id = c->plan_id;
    r->sig_id = c->sig_id;
    r->algo = c->algo;
    r->math_type = c->math_type;
    r->flags = c->cudnn_flags;
    r->stack_id = c->c.stack_id;
    gt_map_put(&s->raw_by_key, key, i);
    return i;
}

static void on_api_cudnn(gt_proc *p, pass_state *s, const gt_rec_api_cudnn *c, uint64_t d)
{
    p->cudnn_calls_seen++;
    if (c->c.func == GT_FN_cudnnBackendFinalize ||
        c->c.func == GT_FN_cudnnBackendDestroyDescriptor ||
        c->c.func == GT_FN_cudnnSetConvolutionMathType)
        return;
    uint32_t i = raw_for(s, c);
    s->raw[i].count++;
    s->raw[i].api_ns += d;
    s->raw[i].flags |= c->cudnn_flags & GT_CUDNN_HEURISTIC;
    gt_map_put(&s->call_by_corr, c->c.corr_id, i); /* GPU time joins through external correlation */
}

static void on_api_cublas(gt_proc *p, pass_state *s, const gt_rec_api_cublas *c, uint64_t d)
{
    uint64_t key = gt_mix64(
        (uint64_t)c->c.func ^ gt_mix64((uint64_t)c->m) ^ gt_mix64((uint64_t)c->n << 1) ^
        gt_mix64((uint64_t)c->k << 2) ^ gt_mix64((uint64_t)c->batch << 3) ^
        ((uint64_t)(uint32_t)c->atype << 40) ^ ((uint64_t)(uint32_t)c->compute_type << 48));
    uint32_t i = gt_map_get(&s->gemm_by_key, key);
    if (i == UINT32_MAX) {
        gt_grow((void **)&p->gemms, &s->cap_gemms, p->n_gemms, sizeof *p->gemms);
        i = (uint32_t)p->n_gemms++;
        gt_gemm_agg *g = &p->gemms[i];
        g->func = c->c.func;
        g->m = c->m;
        g->n = c->n;
        g->k = c->k;
        g->batch = c->batch;
        g->atype = c->atype;
        g->compute_type = c->compute_type;
        gt_map_put(&s->gemm_by_key, key, i);
    }
    p->gemms[i].count++;
    p->gemms[i].api_ns += d;
    gt_map_put(&s->call_by_corr, c->c.corr_id, i | 0x80000000u); /* top bit: a GEMM, not cuDNN */
}

static tid_stack *tid_for(pass_state *s, uint32_t tid);

static void on_api(gt_proc *p, pass_state *s, const gt_record *r)
{
    union {
        gt_api_common c;
        gt_rec_api_memcpy memcpy_;
        gt_rec_api_sync sync;
        gt_rec_api_alloc alloc;
        gt_rec_api_cudnn cudnn;
        gt_rec_api_cublas cublas;
        gt_rec_api_launch launch;
    } u;
    gt_body_copy(&u, sizeof u, r);
    const gt_api_common *c = &u.c;
    uint64_t d = c->t_end_ns > c->t_begin_ns ? c->t_end_ns - c->t_begin_ns : 0;
    p->cpu_api_records++;
    note_time(p, c->t_begin_ns, c->t_end_ns);
    if (c->func < 256) {
        gt_api_agg *a = &p->api[c->func];
        a->count++;
        a->total_ns += d;
        if (d > a->max_ns)
            a->max_ns = d;
        enum gt_api_category cat = gt_api_func_category(c->func);
        int cuda = cat != GT_CAT_CUDNN && cat != GT_CAT_CUBLAS;
        int not_ready = cuda && c->result == 600; /* cudaErrorNotReady from Query is normal */
        if (c->result != 0 && !not_ready) {
            if (!a->errors)
                a->first_error = c->result;
            a->errors++;
            if (cuda && (c->result == 209 || c->result == 222))
                p->kernel_image_errors++;
            else if (cuda && c->result == 35)
                p->insufficient_driver_errors++;
            else
                p->other_errors++;
        }
    }
    if (r->kind != GT_REC_API_SYNC && r->kind != GT_REC_API) {
        /* copy-then-sync means the sync comes right after the copy: anything queued in between
         * (a kernel, another copy) makes it an ordinary end-of-work wait */
        tid_stack *t = tid_for(s, r->tid);
        if (t)
            t->last_h2d_end = 0;
    }
    switch (r->kind) {
    case GT_REC_API_LAUNCH:
        p->launches++;
        p->launch_ns += d;
        break;
    case GT_REC_API_MEMCPY: {
        on_api_memcpy(p, s, &u.memcpy_, d);
        tid_stack *t = tid_for(s, r->tid);
        if (t && u.memcpy_.is_async && u.memcpy_.direction == GT_DIR_H2D) {
            t->last_h2d_end = c->t_end_ns;
            t->last_h2d_stream = c->stream;
        }
        break;
    }
    case GT_REC_API_SYNC:
        if (sync_blocks(u.sync.sync_kind)) {
            add_sync_stall(p, s, c);
            /* PyTorch's .to(device) without non_blocking: an async copy, then a stream sync */
            tid_stack *t = tid_for(s, r->tid);
            if (t && t->last_h2d_end && c->t_begin_ns >= t->last_h2d_end &&
                c->t_begin_ns - t->last_h2d_end < 50000 &&
                (u.sync.sync_kind != GT_SYNC_STREAM || c->stream == t->last_h2d_stream)) {
                p->copy_then_sync_count++;
                p->copy_then_sync_ns += d;
                if (!p->copy_then_sync_stack)
                    p->copy_then_sync_stack = c->stack_id;
            }
            if (t)
                t->last_h2d_end = 0;
        }
        break;
    case GT_REC_API_ALLOC:
        p->alloc_calls++;
        p->alloc_ns += d;
        break;
    case GT_REC_API_CUDNN:
        on_api_cudnn(p, s, &u.cudnn, d);
        break;
    case GT_REC_API_CUBLAS:
        on_api_cublas(p, s, &u.cublas, d);
        break;
    default:
        break;
    }
}

static void on_kernel(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k)
{
    uint64_t d = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
    uint32_t i = gt_map_get(&s->kern_by_name, k->name_id);
    if (i == UINT32_MAX) {
        gt_grow((void **)&p->kernels, &p->cap_kernels, p->n_kernels, sizeof *p->kernels);
        i = (uint32_t)p->n_kernels++;
        p->kernels[i].first_ns = k->start_ns;
        gt_map_put(&s->kern_by_name, k->name_id, i);
        /* name_id kept in the mangled pointer slot until strings are resolved */
        p->kernels[i].mangled = (char *)(uintptr_t)k->name_id;
    }
    gt_kernel_agg *a = &p->kernels[i];
    a->count++;
    a->total_ns += d;
    if (d > a->max_ns)
        a->max_ns = d;
    if (k->start_ns < a->first_ns)
        a->first_ns = k->start_ns;
    if (d < GT_SHORT_KERNEL_NS) {
        a->short_count++;
        p->short_kernel_count++;
    }
    p->kernel_count++;
    p->kernel_ns += d;
    iv_add(s, k->start_ns, k->end_ns);
}

static void on_gpu_memcpy(gt_proc *p, pass_state *s, const gt_rec_gpu_memcpy *m)
{
    uint8_t dir;
    switch (m->copy_kind) {
    case 1:
        dir = GT_DIR_H2D;
        break;
    case 2:
        dir = GT_DIR_D2H;
        break;
    case 9:
        dir = GT_DIR_H2H;
        break;
    default:
        dir = GT_DIR_D2D;
        break;
    }
    uint8_t hk = host_kind_of(dir, m->src_kind, m->dst_kind);
    gt_copy_agg *a = &p->copies[dir][hk];
    a->count++;
    a->bytes += m->bytes;
    a->gpu_ns += m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
    s->gpu_memcpy_records++;
    iv_add(s, m->start_ns, m->end_ns);
}

static tid_stack *tid_for(pass_state *s, uint32_t tid)
{
    for (size_t i = 0; i < s->n_tids; i++)
        if (s->tids[i].tid == tid)
            return &s->tids[i];
    if (s->n_tids >= MAX_TIDS)
        return NULL;
    tid_stack *t = &s->tids[s->n_tids++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    return t;
}

static void nvtx_complete(pass_state *s, uint32_t name_id, uint32_t depth, uint64_t a, uint64_t b)
{
    if (!name_id || s->nvtx_total >= NVTX_RANGES_MAX || b < a)
        return;
    uint32_t i = gt_map_get(&s->nvtx_by_name, name_id);
    if (i == UINT32_MAX) {
        size_t cap = s->cap_names;
        gt_grow((void **)&s->names, &cap, s->n_names, sizeof *s->names);
        s->cap_names = cap;
        i = (uint32_t)s->n_names++;
        s->names[i].name_id = name_id;
        gt_map_put(&s->nvtx_by_name, name_id, i);
    }
    nvtx_name *n = &s->names[i];
    if (depth == 0)
        n->top_level = 1;
    gt_grow((void **)&n->ranges, &n->cap, n->n, sizeof *n->ranges);
    n->ranges[n->n].start_ns = a;
    n->ranges[n->n].end_ns = b;
    n->n++;
    s->nvtx_total++;
}

static void on_nvtx(gt_proc *p, pass_state *s, const gt_rec_nvtx *v, uint32_t tid)
{
    note_time(p, v->t_ns, v->t_ns);
    tid_stack *t = tid_for(s, tid);
    switch (v->nvtx_kind) {
    case GT_NVTX_PUSH:
        if (t && t->depth < NVTX_DEPTH)
            t->open[t->depth] = (nvtx_open){v->name_id, t->depth, v->t_ns};
        if (t)
            t->depth++;
        break;
    case GT_NVTX_POP:
        if (t && t->depth > 0) {
            t->depth--;
            if (t->depth < NVTX_DEPTH)
                nvtx_complete(s, t->open[t->depth].name_id, t->depth, t->open[t->depth].t, v->t_ns);
        }
        break;
    case GT_NVTX_RANGE_START: {
        gt_grow((void **)&s->ranges_open, &s->cap_ranges_open, s->n_ranges_open,
                sizeof *s->ranges_open);
        s->ranges_open[s->n_ranges_open] = (nvtx_open){v->name_id, 0, v->t_ns};
        gt_map_put(&s->range_open, v->range_id, (uint32_t)s->n_ranges_open++);
        break;
    }
    case GT_NVTX_RANGE_END: {
        uint32_t i = gt_map_get(&s->range_open, v->range_id);
        if (i != UINT32_MAX)
            nvtx_complete(s, s->ranges_open[i].name_id, 0, s->ranges_open[i].t, v->t_ns);
        break;
    }
    default:
        break;
    }
}

static void on_stack(pass_state *s, const gt_record *r)
{
    if (r->body_size < sizeof(gt_rec_stack))
        return;
    const gt_rec_stack *st = r->body;
    size_t need = sizeof *st + (size_t)st->depth * 8 + (size_t)st->py_depth * 16;
    if (need > r->body_size || gt_map_get(&s->stack_by_id, st->stack_id) != UINT32_MAX)
        return;
    gt_grow((void **)&s->stacks, &s->cap_stacks, s->n_stacks, sizeof *s->stacks);
    stack_py *sp = &s->stacks[s->n_stacks];
    memset(sp, 0, sizeof *sp);
    sp->stack_id = st->stack_id;
    const unsigned char *base = (const unsigned char *)(st + 1);
    if (st->depth)
        memcpy(&sp->pc0, base, 8);
    const unsigned char *py = base + (size_t)st->depth * 8;
    /* Python frames: innermost first; the first one outside the Python library and
     * site-packages is the user's line. Resolved to text after the pass (strings known). */
    for (uint32_t i = 0; i < st->py_depth; i++) {
        uint32_t f[2];
        int32_t line;
        memcpy(f, py + i * 16, 8);
        memcpy(&line, py + i * 16 + 8, 4);
        if (!sp->have_py) { /* keep the innermost as fallback */
            sp->file_id = f[0];
            sp->func_id = f[1];
            sp->line = line;
            sp->have_py = 1;
        }
        const char *file = gt_reader_string(s->reader, f[0]);
        if (file && !strstr(file, "site-packages") && !strstr(file, "/lib/python") &&
            file[0] != '<') {
            sp->file_id = f[0];
            sp->func_id = f[1];
            sp->line = line;
            sp->have_py = 2;
            break;
        }
    }
    gt_map_put(&s->stack_by_id, st->stack_id, (uint32_t)s->n_stacks++);
}

/* Backend plans carry their JSON after the knobs text; the recorder leaves sig_id 0, so the shape
 * key is decoded here, offline (cudnn_json.c). Convolution plans get a conv signature of their own
 * (ids with the top bit set never clash with the recorder's legacy ids). */
static void decode_plan_json(pass_state *s, plan_info *pi, const gt_record *r)
{
    const gt_rec_cudnn_plan *pl = &pi->rec;
    size_t tail = r->body_size > sizeof *pl ? r->body_size - sizeof *pl : 0;
    if (!pl->json_len || (uint64_t)pl->knobs_len + pl->json_len > tail)
        return;
    const char *json = (const char *)r->body + sizeof *pl + pl->knobs_len;
    gt_cudnn_plan_desc d;
    if (gt_cudnn_plan_decode(json, pl->json_len, &d, NULL, 0) != 0)
        return;
    pi->knobs = d.knobs[0] ? gt_xstrdup(d.knobs) : NULL;
    if (pl->sig_id)
        return;
    if (!d.is_conv) {
        pi->label = d.label[0] ? gt_xstrdup(d.label) : NULL;
        return;
    }
    d.sig.sig_id = 0x80000000u | pl->plan_id;
    if (gt_map_get(&s->sig_by_id, d.sig.sig_id) == UINT32_MAX) {
        gt_grow((void **)&s->sigs, &s->cap_sigs, s->n_sigs, sizeof *s->sigs);
        s->sigs[s->n_sigs] = d.sig;
        gt_map_put(&s->sig_by_id, d.sig.sig_id, (uint32_t)s->n_sigs++);
    }
    pi->rec.sig_id = d.sig.sig_id;
    if (pi->rec.op_kind == GT_CUDNN_OP_UNKNOWN)
        pi->rec.op_kind = d.sig.op_kind;
}

/* A link decided (op_link.h), kept for pass 2: which cuDNN call or GEMM a kernel's time is. */
static void link_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    pass_state *s = ctx;
    gt_map_put(&s->link_call, corr, (uint32_t)call);
    gt_map_put(&s->link_how, corr, (uint32_t)how);
}

static void on_record_pass1(gt_proc *p, pass_state *s, const gt_record *r)
{
    gt_op_links_on_record(&s->links, r);
    switch (r->kind) {
    case GT_REC_LOST: {
        gt_rec_lost l;
        gt_body_copy(&l, sizeof l, r);
        p->records_lost += l.count;
        break;
    }
    case GT_REC_CUPTI_STATS: {
        gt_rec_cupti_stats cs;
        gt_body_copy(&cs, sizeof cs, r);
        if (cs.dropped_records > p->cupti_dropped)
            p->cupti_dropped = cs.dropped_records;
        if (cs.overhead_ns > p->cupti_overhead_ns)
            p->cupti_overhead_ns = cs.overhead_ns;
        break;
    }
    case GT_REC_API:
    case GT_REC_API_MEMCPY:
    case GT_REC_API_MEMSET:
    case GT_REC_API_ALLOC:
    case GT_REC_API_LAUNCH:
    case GT_REC_API_SYNC:
    case GT_REC_API_CUDNN:
    case GT_REC_API_CUBLAS:
        on_api(p, s, r);
        break;
    case GT_REC_CUDNN_PLAN: {
        gt_rec_cudnn_plan pl;
        gt_body_copy(&pl, sizeof pl, r);
        if (gt_map_get(&s->plan_by_id, pl.plan_id) != UINT32_MAX)
            break;
        gt_grow((void **)&s->plans, &s->cap_plans, s->n_plans, sizeof *s->plans);
        uint32_t g = gt_map_get(&s->graph_ord, pl.op_graph);
        if (g == UINT32_MAX) {
            g = (uint32_t)s->graph_ord.n;
            gt_map_put(&s->graph_ord, pl.op_graph, g);
        }
        s->plans[s->n_plans] = (plan_info){pl, g, NULL, NULL};
        decode_plan_json(s, &s->plans[s->n_plans], r);
        gt_map_put(&s->plan_by_id, pl.plan_id, (uint32_t)s->n_plans++);
        break;
    }
    case GT_REC_CUDNN_CONV_SIG: {
        gt_rec_cudnn_conv_sig sg;
        gt_body_copy(&sg, sizeof sg, r);
        if (gt_map_get(&s->sig_by_id, sg.sig_id) != UINT32_MAX)
            break;
        gt_grow((void **)&s->sigs, &s->cap_sigs, s->n_sigs, sizeof *s->sigs);
        s->sigs[s->n_sigs] = sg;
        gt_map_put(&s->sig_by_id, sg.sig_id, (uint32_t)s->n_sigs++);
        break;
    }
    case GT_REC_NVTX: {
        gt_rec_nvtx v;
        gt_body_copy(&v, sizeof v, r);
        on_nvtx(p, s, &v, r->tid);
        break;
    }
    case GT_REC_STACK:
        on_stack(s, r);
        gt_symtab_add_record(s->symtab, s->reader, r);
        break;
    case GT_REC_MODULE:
        gt_symtab_add_record(s->symtab, s->reader, r);
        break;
    case GT_REC_GPU_KERNEL: {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        p->gpu_records++;
        note_time(p, k.start_ns, k.end_ns);
        on_kernel(p, s, &k);
        break;
    }
    case GT_REC_GPU_MEMCPY: {
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        p->gpu_records++;
        note_time(p, m.start_ns, m.end_ns);
        on_gpu_memcpy(p, s, &m);
        break;
    }
    case GT_REC_GPU_MEMSET: {
        gt_rec_gpu_memset m;
        gt_body_copy(&m, sizeof m, r);
        p->gpu_records++;
        note_time(p, m.start_ns, m.end_ns);
        iv_add(s, m.start_ns, m.end_ns);
        break;
    }
    case GT_REC_GPU_SYNC: {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        note_time(p, g.start_ns, g.end_ns);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4) { /* CPU-blocking kinds */
            s->cupti_sync_count++;
            s->cupti_sync_ns += g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
        }
        break;
    }
    case GT_REC_GPU_API: {
        gt_rec_gpu_api a;
        gt_body_copy(&a, sizeof a, r);
        p->gpu_api_records++;
        note_time(p, a.start_ns, a.end_ns);
        break;
    }
    default:
        break;
    }
}

/* ------------------------------------------------------------------ end of pass 1 */

static char *demangle_short(const char *mangled)
{
    char *d = gt_demangle(mangled);
    return d ? d : gt_xstrdup(mangled);
}

static void resolve_kernel_names(gt_proc *p, pass_state *s)
{
    for (size_t i = 0; i < p->n_kernels; i++) {
        gt_kernel_agg *k = &p->kernels[i];
        uint32_t id = (uint32_t)(uintptr_t)k->mangled;
        const char *m = gt_reader_string(s->reader, id);
        char buf[32];
        if (!m) {
            snprintf(buf, sizeof buf, "kernel#%u", id);
            m = buf;
        }
        k->mangled = gt_xstrdup(m);
        k->name = demangle_short(m);
        k->is_nccl = contains_ci(m, "nccl");
        k->family = gt_kernel_family_of(m);
        k->tensor_cores = uses_tensor_cores(m);
        k->conv_like = conv_like(m);
        if (k->is_nccl)
            p->nccl_ns += k->total_ns;
    }
}

static void busy_and_gaps(gt_proc *p, pass_state *s)
{
    iv_merge(s, 0);
    if (!s->n_iv)
        return;
    p->gpu_first_ns = s->iv[0][0];
    p->gpu_last_ns = s->iv[s->n_iv - 1][1];
    size_t cap = 0;
    for (size_t i = 0; i < s->n_iv; i++) {
        p->gpu_busy_ns += s->iv[i][1] - s->iv[i][0];
        if (i == 0)
            continue;
        uint64_t a = s->iv[i - 1][1], b = s->iv[i][0];
        if (b - a < GT_GAP_MIN_NS) {
            p->small_gap_ns += b - a;
            p->small_gap_count++;
            continue;
        }
        gt_grow((void **)&p->gaps, &cap, p->n_gaps, sizeof *p->gaps);
        memset(&p->gaps[p->n_gaps], 0, sizeof *p->gaps);
        p->gaps[p->n_gaps].start_ns = a;
        p->gaps[p->n_gaps].end_ns = b;
        p->n_gaps++;
    }
    /* GPU busy % over time */
    uint64_t span = p->gpu_last_ns - p->gpu_first_ns;
    p->bin_origin = p->gpu_first_ns;
    p->bin_ns = span / GT_TIMELINE_BINS + 1;
    for (size_t i = 0; i < s->n_iv; i++) {
        uint64_t a = s->iv[i][0], b = s->iv[i][1];
        while (a < b) {
            size_t bi = (a - p->bin_origin) / p->bin_ns;
            if (bi >= GT_TIMELINE_BINS)
                break;
            uint64_t bend = p->bin_origin + (bi + 1) * p->bin_ns;
            uint64_t e = b < bend ? b : bend;
            p->bins[bi].gpu_busy_ns += e - a;
            a = e;
        }
    }
}

static int cmp_step(const void *a, const void *b)
{
    const gt_step *x = a, *y = b;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Steps from NVTX: a range named like a step, else the most frequent top-level range. */
static int steps_from_nvtx(gt_proc *p, pass_state *s)
{
    nvtx_name *best = NULL;
    int best_named = 0;
    for (size_t i = 0; i < s->n_names; i++) {
        nvtx_name *n = &s->names[i];
        const char *name = gt_reader_string(s->reader, n->name_id);
        int named = name && (contains_ci(name, "step") || contains_ci(name, "iter") ||
                             contains_ci(name, "batch"));
        if (n->n < (named ? 2u : 3u) || (!named && !n->top_level))
            continue;
        if (!best || named > best_named || (named == best_named && n->n > best->n)) {
            best = n;
            best_named = named;
        }
    }
    if (!best)
        return 0;
    p->steps = gt_xrealloc(NULL, best->n * sizeof *p->steps);
    memcpy(p->steps, best->ranges, best->n * sizeof *p->steps);
    p->n_steps = best->n;
    qsort(p->steps, p->n_steps, sizeof *p->steps, cmp_step);
    /* A step lasts from its range's start to the next one's: what happens between two ranges
     * (data loading, logging) is part of the step time a user measures. */
    for (size_t i = 0; i + 1 < p->n_steps; i++)
        if (p->steps[i + 1].start_ns > p->steps[i].end_ns)
            p->steps[i].end_ns = p->steps[i + 1].start_ns;
    const char *name = gt_reader_string(s->reader, best->name_id);
    snprintf(p->step_source, sizeof p->step_source, "NVTX range '%.60s'", name ? name : "?");
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Without NVTX: the step count is the commonest kernel count (most kernels run once a step);
 * the kernel with that count that runs first marks each step's start. */
static void choose_step_marker(gt_proc *p, pass_state *s)
{
    size_t n = 0;
    uint64_t *counts = gt_xrealloc(NULL, (p->n_kernels + 1) * sizeof *counts);
    for (size_t i = 0; i < p->n_kernels; i++)
        if (p->kernels[i].count >= 3)
            counts[n++] = p->kernels[i].count;
    uint64_t best = 0;
    size_t best_run = 0;
    qsort(counts, n, sizeof *counts, cmp_u64);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && counts[j] == counts[i])
            j++;
        if (j - i > best_run) { /* ties keep the smaller count (longer steps) */
            best_run = j - i;
            best = counts[i];
        }
        i = j;
    }
    free(counts);
    if (!best || best_run < 2)
        return;
    const gt_kernel_agg *marker = NULL;
    for (size_t i = 0; i < p->n_kernels; i++)
        if (p->kernels[i].count == best && (!marker || p->kernels[i].first_ns < marker->first_ns))
            marker = &p->kernels[i];
    if (!marker)
        return;
    /* find its name id again */
    for (size_t i = 0; i < s->kern_by_name.cap; i++)
        if (s->kern_by_name.vals[i] == (uint32_t)(marker - p->kernels))
            s->marker_name_id = (uint32_t)s->kern_by_name.keys[i];
    snprintf(p->step_source, sizeof p->step_source, "kernel pattern (%llu× %.50s)",
             (unsigned long long)best, marker->name);
}

/* ------------------------------------------------------------------ pass 2 */

static int api_category_for_gap(const gt_record *r, const gt_api_common *c, uint32_t sync_kind,
                                const gt_rec_api_memcpy *m)
{
    enum gt_api_category cat = gt_api_func_category(c->func);
    if (r->kind == GT_REC_API_SYNC)
        return sync_blocks(sync_kind) ? 0 : 4;
    if (r->kind == GT_REC_API_MEMCPY) {
        uint8_t hk = host_kind_of(m->direction, m->src_kind, m->dst_kind);
        return copy_is_item_like(m, hk) ? 0 : 1;
    }
    if (cat == GT_CAT_LAUNCH || r->kind == GT_REC_API_LAUNCH)
        return 2;
    if (cat == GT_CAT_MEMORY)
        return 3;
    return 4;
}

/* First gap whose end is after t (gaps are sorted and disjoint). */
static size_t gap_lower(const gt_proc *p, uint64_t t)
{
    size_t lo = 0, hi = p->n_gaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->gaps[mid].end_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void attribute_to_gaps(gt_proc *p, int category, uint64_t a, uint64_t b)
{
    for (size_t i = gap_lower(p, a); i < p->n_gaps && p->gaps[i].start_ns < b; i++) {
        gt_gap *g = &p->gaps[i];
        uint64_t lo = a > g->start_ns ? a : g->start_ns, hi = b < g->end_ns ? b : g->end_ns;
        if (hi <= lo)
            continue;
        uint64_t *slot[] = {&g->in_sync_ns, &g->in_copy_ns, &g->in_launch_ns, &g->in_alloc_ns,
                            &g->in_other_api_ns};
        *slot[category] += hi - lo;
        if (category == 0 && b < g->end_ns)
            g->after_sync = 1;
    }
}

/* The wrapped call that launched a kernel as op_link.h decided in pass 1, counted by how it was
 * found; 0 when none was. */
static uint64_t kernel_call_id(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k)
{
    uint32_t call = gt_map_get(&s->link_call, k->corr_id);
    if (call != UINT32_MAX) {
        uint32_t how = gt_map_get(&s->link_how, k->corr_id);
        p->kernels_by_pair += how == GT_LINK_PAIR;
        p->kernels_by_order += how == GT_LINK_ORDER;
        p->kernels_by_time += how == GT_LINK_TIME;
        return call;
    }
    uint32_t agg = gt_map_get(&s->kern_by_name, k->name_id);
    if (agg < p->n_kernels)
        p->kernels[agg].unlinked++;
    return 0;
}

/* The cuDNN call or GEMM (top bit) a kernel's GPU time belongs to, UINT32_MAX for none. */
static uint32_t kernel_call(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k)
{
    uint64_t id = kernel_call_id(p, s, k);
    return id ? gt_map_get(&s->call_by_corr, id) : UINT32_MAX;
}

static void steady_record(gt_proc *p, pass_state *s, const gt_record *r);

static void on_record_pass2(gt_proc *p, pass_state *s, const gt_record *r)
{
    steady_record(p, s, r);
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        union {
            gt_api_common c;
            gt_rec_api_memcpy m;
            gt_rec_api_sync sync;
        } u;
        gt_body_copy(&u, sizeof u, r);
        if (u.c.t_end_ns >= u.c.t_begin_ns && p->n_gaps)
            attribute_to_gaps(p, api_category_for_gap(r, &u.c, u.sync.sync_kind, &u.m),
                              u.c.t_begin_ns, u.c.t_end_ns);
    } else if (r->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        uint64_t d = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
        if (s->marker_name_id && k.name_id == s->marker_name_id) {
            gt_grow((void **)&s->marker_t, &s->cap_marker, s->n_marker, sizeof *s->marker_t);
            s->marker_t[s->n_marker++] = k.start_ns;
        }
        uint32_t call = kernel_call(p, s, &k);
        if (call == UINT32_MAX)
            return;
        if (call & 0x80000000u) {
            if ((call & 0x7fffffffu) < p->n_gemms)
                p->gemms[call & 0x7fffffffu].gpu_ns += d;
        } else if (call < s->n_raw) {
            s->raw[call].gpu_ns += d;
        }
    } else if (r->kind == GT_REC_GPU_SYNC && p->syncs_from_cupti && p->n_gaps) {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4)
            attribute_to_gaps(p, 0, g.start_ns, g.end_ns);
    }
}

/* ------------------------------------------------------------------ pass 3: steady window */

static void steady_log(pass_state *s, int kind, uint64_t t, uint64_t d, uint32_t site)
{
    gt_grow((void **)&s->sev, &s->cap_sev, s->n_sev, sizeof *s->sev);
    s->sev[s->n_sev++] = (steady_ev){.t = t, .d = d, .site = site, .kind = (uint8_t)kind};
}

/* The call site of a blocking call (sites were made in pass 1). */
static uint32_t steady_site(const pass_state *s, const gt_api_common *c)
{
    return gt_map_get(&s->site_by_key, ((uint64_t)c->func << 32) | c->stack_id);
}

/* Pass 2 logs what the steady window will count (see steady_count). */
static void steady_record(gt_proc *p, pass_state *s, const gt_record *r)
{
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        union {
            gt_api_common c;
            gt_rec_api_memcpy m;
            gt_rec_api_sync sync;
        } u;
        gt_body_copy(&u, sizeof u, r);
        uint64_t d = u.c.t_end_ns < u.c.t_begin_ns ? 0 : u.c.t_end_ns - u.c.t_begin_ns;
        if (r->kind == GT_REC_API_ALLOC) {
            steady_log(s, SE_ALLOC, u.c.t_begin_ns, d, UINT32_MAX);
        } else if (r->kind == GT_REC_API_SYNC && sync_blocks(u.sync.sync_kind)) {
            steady_log(s, SE_SYNC, u.c.t_begin_ns, d, steady_site(s, &u.c));
        } else if (r->kind == GT_REC_API_MEMCPY) {
            uint8_t hk = host_kind_of(u.m.direction, u.m.src_kind, u.m.dst_kind);
            steady_log(s, copy_is_item_like(&u.m, hk) ? SE_COPY_ITEM : SE_COPY, u.c.t_begin_ns, d,
                       steady_site(s, &u.c));
        }
    } else if (r->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        uint32_t ki = gt_map_get(&s->kern_by_name, k.name_id);
        steady_log(s, SE_KERNEL, k.start_ns, k.end_ns - k.start_ns,
                   ki < p->n_kernels && p->kernels[ki].is_nccl);
    } else if (r->kind == GT_REC_GPU_SYNC && p->syncs_from_cupti) {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4)
            steady_log(s, SE_CUPTI_SYNC, g.start_ns, g.end_ns - g.start_ns, UINT32_MAX);
    }
}

static void steady_on_site(gt_proc *p, uint32_t site, uint64_t d)
{
    if (site >= p->n_sync_sites)
        return;
    p->sync_sites[site].steady_count++;
    p->sync_sites[site].steady_ns += d;
}

/* The steady window's figures from the log (what a third pass over the file counted). */
static void steady_count(gt_proc *p, const pass_state *s, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < s->n_sev; i++) {
        const steady_ev *e = &s->sev[i];
        if (e->t < lo || e->t >= hi)
            continue;
        double ms = (double)e->d / 1e6;
        switch (e->kind) {
        case SE_ALLOC:
            p->steady_alloc_calls++;
            p->steady_alloc_ns += (uint64_t)(ms * 1e6);
            break;
        case SE_SYNC:
            p->steady_sync_ms_per_step += ms;
            steady_on_site(p, e->site, e->d);
            break;
        case SE_COPY:
        case SE_COPY_ITEM:
            p->steady_copy_ms_per_step += ms;
            if (e->kind == SE_COPY_ITEM) {
                p->steady_sync_ms_per_step += ms;
                steady_on_site(p, e->site, e->d);
            }
            break;
        case SE_KERNEL:
            p->steady_kernels++;
            if (e->d < GT_SHORT_KERNEL_NS)
                p->steady_short_kernels++;
            if (e->site && (int64_t)e->d > 0)
                p->steady_nccl_ms_per_step += ms;
            break;
        default: /* SE_CUPTI_SYNC */
            p->steady_sync_ms_per_step += ms;
            p->steady_cupti_sync_count++;
            p->steady_cupti_sync_ns += (int64_t)e->d > 0 ? e->d : 0;
            break;
        }
    }
}

/* ------------------------------------------------------------------ cuDNN ops */

static void sig_text(const gt_rec_cudnn_conv_sig *g, int op_kind, char *out, size_t cap)
{
    gt_cudnn_sig_label(g, op_kind, out, cap); /* shared with the plan JSON decoder */
}

/* Key of a plan without a conv signature: its JSON label, else its graph's order (one run only). */
static void plan_fallback_text(const plan_info *pl, int op_kind, char *out, size_t cap)
{
    if (pl->label)
        snprintf(out, cap, "%s", pl->label);
    else
        snprintf(out, cap, "%s %s graph#%u", gt_cudnn_op_name(op_kind),
                 gt_cudnn_dtype_name((int)pl->rec.dtype), pl->graph_ord);
}

static int legacy_op_of(uint32_t func)
{
    switch (func) {
    case GT_FN_cudnnConvolutionForward:
    case GT_FN_cudnnFindConvolutionForwardAlgorithm:
    case GT_FN_cudnnFindConvolutionForwardAlgorithmEx:
    case GT_FN_cudnnGetConvolutionForwardAlgorithm_v7:
        return GT_CUDNN_OP_CONV_FWD;
    case GT_FN_cudnnConvolutionBiasActivationForward:
        return GT_CUDNN_OP_CONV_BIAS_ACT;
    case GT_FN_cudnnConvolutionBackwardData:
    case GT_FN_cudnnFindConvolutionBackwardDataAlgorithm:
    case GT_FN_cudnnFindConvolutionBackwardDataAlgorithmEx:
    case GT_FN_cudnnGetConvolutionBackwardDataAlgorithm_v7:
        return GT_CUDNN_OP_CONV_BWD_DATA;
    case GT_FN_cudnnConvolutionBackwardFilter:
    case GT_FN_cudnnFindConvolutionBackwardFilterAlgorithm:
    case GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx:
    case GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7:
        return GT_CUDNN_OP_CONV_BWD_FILTER;
    default:
        return GT_CUDNN_OP_UNKNOWN;
    }
}

static int is_find(uint32_t f)
{
    return f >= GT_FN_cudnnFindConvolutionForwardAlgorithm &&
           f <= GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx;
}

static int is_get(uint32_t f)
{
    return f >= GT_FN_cudnnGetConvolutionForwardAlgorithm_v7 &&
           f <= GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7;
}

static gt_cudnn_opstat *op_for(gt_proc *p, size_t *cap, const char *signature, int op_kind)
{
    for (size_t i = 0; i < p->n_cudnn; i++)
        if (!strcmp(p->cudnn[i].signature, signature))
            return &p->cudnn[i];
    gt_grow((void **)&p->cudnn, cap, p->n_cudnn, sizeof *p->cudnn);
    gt_cudnn_opstat *op = &p->cudnn[p->n_cudnn++];
    memset(op, 0, sizeof *op);
    op->signature = gt_xstrdup(signature);
    op->op_kind = op_kind;
    op->dtype = -1;
    op->chosen = -1;
    return op;
}

static gt_cudnn_choice *choice_for(gt_cudnn_opstat *op, const char *text, const char *notes, int tc)
{
    for (int i = 0; i < op->n_choices; i++) /* backend notes carry the knobs: a config each */
        if (!strcmp(op->choices[i].text, text) && !strcmp(op->choices[i].notes, notes))
            return &op->choices[i];
    int i = op->n_choices < GT_MAX_CHOICES ? op->n_choices++ : GT_MAX_CHOICES - 1;
    gt_cudnn_choice *c = &op->choices[i];
    if (!c->text) {
        c->text = gt_xstrdup(text);
        c->notes = gt_xstrdup(notes);
        c->tensor_cores = tc;
    }
    return c;
}

static const gt_rec_cudnn_conv_sig *sig_get(pass_state *s, uint32_t id)
{
    uint32_t i = id ? gt_map_get(&s->sig_by_id, id) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : &s->sigs[i];
}

static void build_cudnn_ops(gt_proc *p, pass_state *s)
{
    size_t cap = 0;
    char sig[256], text[96], notes[320];
    for (size_t i = 0; i < s->n_raw; i++) {
        raw_cudnn *r = &s->raw[i];
        uint32_t pi = r->plan_id ? gt_map_get(&s->plan_by_id, r->plan_id) : UINT32_MAX;
        const plan_info *pl = pi == UINT32_MAX ? NULL : &s->plans[pi];
        int op_kind = pl ? (int)pl->rec.op_kind : legacy_op_of(r->func);
        const gt_rec_cudnn_conv_sig *g = sig_get(s, pl ? pl->rec.sig_id : r->sig_id);
        if (g)
            sig_text(g, op_kind, sig, sizeof sig);
        else if (pl)
            plan_fallback_text(pl, op_kind, sig, sizeof sig);
        else
            snprintf(sig, sizeof sig, "%s sig#%u", gt_cudnn_op_name(op_kind), r->sig_id);
        gt_cudnn_opstat *op = op_for(p, &cap, sig, op_kind);
        op->dtype = g ? g->dtype : pl ? (int)pl->rec.dtype : op->dtype;
        if (!op->stack_id)
            op->stack_id = r->stack_id;
        if (is_find(r->func)) {
            op->autotuned = 1;
            op->legacy = 1;
            op->find_calls += r->count;
            op->find_ns += r->api_ns + r->gpu_ns;
            p->autotune_ns += r->api_ns;
            continue;
        }
        if (is_get(r->func)) {
            op->heuristic = 1;
            op->legacy = 1;
            op->get_calls += r->count;
            op->get_ns += r->api_ns;
            continue;
        }
        int tc;
        if (pl) {
            gt_cudnn_notes_text(pl->rec.numerical_notes, 1, notes, sizeof notes);
            snprintf(text, sizeof text, "engine %lld", (long long)pl->rec.engine_global_index);
            tc = (int)(pl->rec.numerical_notes & 1u);
            size_t u = strlen(notes);
            if (tc && pl->rec.dtype == 0) /* float data on tensor cores runs as TF32 */
                u += (size_t)snprintf(notes + u, sizeof notes - u, " (TF32)");
            if (pl->knobs && u < sizeof notes) /* the engine config: same engine, other knobs */
                snprintf(notes + u, sizeof notes - u, "%s%s", u ? "; " : "", pl->knobs);
        } else {
            op->legacy = 1;
            tc = r->math_type == 1 || r->math_type == 2;
            const char *an = legacy_algo_name(op_kind, r->algo);
            const char *family = strstr(an, "WINOGRAD") ? "Winograd"
                                 : strstr(an, "FFT")    ? "FFT"
                                                        : "";
            snprintf(text, sizeof text, "%s", an);
            snprintf(notes, sizeof notes, "%s%s%s", tc ? "tensor-op math" : "",
                     tc && family[0] ? ", " : "", family);
        }
        gt_cudnn_choice *c = choice_for(op, text, notes, tc);
        if (r->flags & GT_CUDNN_AUTOTUNE) {
            op->autotuned = 1;
            c->autotune_execs += r->count;
            c->autotune_ns += r->api_ns + r->gpu_ns;
            p->autotune_ns += r->api_ns;
        } else {
            c->execs += r->count;
            c->gpu_ns += r->gpu_ns;
            c->api_ns += r->api_ns;
        }
        if (r->flags & GT_CUDNN_HEURISTIC)
            op->heuristic = 1;
    }
    /* plans per op (several plans of one op = autotuning candidates) */
    for (size_t i = 0; i < s->n_plans; i++) {
        const plan_info *pl = &s->plans[i];
        const gt_rec_cudnn_conv_sig *g = sig_get(s, pl->rec.sig_id);
        if (g)
            sig_text(g, (int)pl->rec.op_kind, sig, sizeof sig);
        else
            plan_fallback_text(pl, (int)pl->rec.op_kind, sig, sizeof sig);
        for (size_t j = 0; j < p->n_cudnn; j++)
            if (!strcmp(p->cudnn[j].signature, sig))
                p->cudnn[j].plans++;
    }
    for (size_t i = 0; i < p->n_cudnn; i++) {
        gt_cudnn_opstat *op = &p->cudnn[i];
        uint64_t best = 0;
        for (int j = 0; j < op->n_choices; j++)
            if (op->choices[j].execs > best) {
                best = op->choices[j].execs;
                op->chosen = j;
            }
        if (op->legacy && !op->autotuned && op->n_choices)
            op->heuristic = 1; /* legacy conv without Find: the app picked an algorithm itself */
    }
}

/* When no cuDNN call was seen, list convolution kernels by inferred family (issue 10). */
static void build_inferred_ops(gt_proc *p)
{
    size_t cap = 0;
    char sig[160];
    for (size_t i = 0; i < p->n_kernels; i++) {
        const gt_kernel_agg *k = &p->kernels[i];
        if (!k->conv_like || k->is_nccl)
            continue;
        snprintf(sig, sizeof sig, "kernel %.140s", k->name);
        gt_cudnn_opstat *op = op_for(p, &cap, sig, GT_CUDNN_OP_UNKNOWN);
        op->inferred = 1;
        const char *fam = gt_kernel_family_name(k->family);
        if (k->family == GT_KF_TENSOR_CORE && (contains_ci(k->mangled, "implicit_gemm") ||
                                               contains_ci(k->mangled, "implicit_precomp")))
            fam = "implicit GEMM on tensor cores";
        gt_cudnn_choice *c =
            choice_for(op, fam, k->tensor_cores ? "tensor cores" : "", k->tensor_cores);
        c->execs += k->count;
        c->gpu_ns += k->total_ns;
        op->chosen = 0;
    }
}

/* ------------------------------------------------------------------ steps and steady state */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void analyse_steps(gt_proc *p)
{
    size_t n = p->n_steps;
    if (n < 2)
        return;
    double *d = gt_xrealloc(NULL, n * sizeof *d), *tail = gt_xrealloc(NULL, n * sizeof *tail);
    for (size_t i = 0; i < n; i++)
        d[i] = (double)(p->steps[i].end_ns - p->steps[i].start_ns) / 1e6;
    size_t h = n / 2;
    memcpy(tail, d + h, (n - h) * sizeof *d);
    double ref = median(tail, n - h);
    /* warm-up: leading steps clearly slower than the steady reference */
    size_t w = 0;
    while (w < n - 1 && d[w] > ref * 1.5 && w < n / 2 + 1)
        w++;
    p->warmup_steps = w;
    p->warmup_ms_total = 0;
    for (size_t i = 0; i < w; i++)
        p->warmup_ms_total += d[i];
    size_t ns = n - w;
    memcpy(tail, d + w, ns * sizeof *d);
    double sum = 0, mn = tail[0];
    for (size_t i = 0; i < ns; i++) {
        sum += tail[i];
        if (tail[i] < mn)
            mn = tail[i];
    }
    p->step_ms_mean_steady = sum / (double)ns;
    p->step_ms_min = mn;
    p->step_ms_median = median(tail, ns);
    p->steady_start_ns = p->steps[w].start_ns;
    p->steady_end_ns = p->steps[n - 1].end_ns;
    free(d);
    free(tail);
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t lo, uint64_t hi)
{
    uint64_t x = a > lo ? a : lo, y = b < hi ? b : hi;
    return y > x ? y - x : 0;
}

/* Idle-gap figures for the whole run and for the steady window. */
static void gap_totals(gt_proc *p, pass_state *s, uint64_t lo, uint64_t hi)
{
    uint64_t steady_unexpl = 0, steady_after_sync = 0, steady_short = 0, steady_cpu = 0;
    int cpu_seen = p->cpu_api_records || p->gpu_api_records;
    for (size_t i = 0; i < p->n_gaps; i++) {
        gt_gap *g = &p->gaps[i];
        uint64_t len = g->end_ns - g->start_ns;
        uint64_t sum =
            g->in_sync_ns + g->in_copy_ns + g->in_launch_ns + g->in_alloc_ns + g->in_other_api_ns;
        uint64_t unexpl = sum < len ? len - sum : 0;
        /* Launch-bound idle: a short gap not after a sync, less the time the CPU spent in calls
         * that are not launches. Without any CPU record only launch-latency gaps (< 20 us, below)
         * can be put down to launching. */
        uint64_t other = g->in_sync_ns + g->in_copy_ns + g->in_alloc_ns + g->in_other_api_ns;
        uint64_t launch_part =
            (len < GT_BIG_GAP_NS && !g->after_sync && cpu_seen && other < len) ? len - other : 0;
        p->launch_idle_ns += launch_part;
        p->idle_sync_ns += g->in_sync_ns;
        p->idle_copy_ns += g->in_copy_ns;
        p->idle_launch_ns += g->in_launch_ns;
        p->idle_alloc_ns += g->in_alloc_ns;
        p->idle_other_ns += g->in_other_api_ns;
        p->idle_unexplained_ns += unexpl;
        if (g->after_sync)
            p->after_sync_idle_ns += len;
        uint64_t ov = overlap(g->start_ns, g->end_ns, lo, hi);
        if (ov && len) {
            if (len >= GT_BIG_GAP_NS && !g->after_sync) {
                steady_unexpl += unexpl * ov / len;
                p->steady_big_gaps++;
                if (unexpl > p->largest_gap_ns) {
                    p->largest_gap_ns = unexpl;
                    p->largest_gap_start_ns = g->start_ns;
                }
            }
            steady_short += launch_part * ov / len;
            if (g->after_sync)
                steady_after_sync += ov;
            steady_cpu += unexpl * ov / len;
        }
    }
    p->steady_idle_unexplained_ns = steady_unexpl;
    uint64_t busy = 0;
    for (size_t i = 0; i < s->n_iv; i++) {
        busy += overlap(s->iv[i][0], s->iv[i][1], lo, hi);
        /* gaps below GT_GAP_MIN_NS are not kept: count them here */
        if (i && s->iv[i][0] - s->iv[i - 1][1] < GT_GAP_MIN_NS)
            steady_short += overlap(s->iv[i - 1][1], s->iv[i][0], lo, hi);
    }
    p->launch_idle_ns += p->small_gap_ns;
    double steps = p->steady_steps;
    p->steady_short_idle_ms_per_step = (double)steady_short / 1e6 / steps;
    p->steady_cpu_elsewhere_ms_per_step = (double)steady_cpu / 1e6 / steps;
    p->steady_busy_pct = hi > lo ? 100.0 * (double)busy / (double)(hi - lo) : 0;
    p->steady_idle_unexplained_ms_per_step = (double)steady_unexpl / 1e6 / steps;
    p->steady_after_sync_idle_ms_per_step = (double)steady_after_sync / 1e6 / steps;
}

/* ------------------------------------------------------------------ driver */

static int read_all(gt_reader *r, void (*fn)(gt_proc *, pass_state *, const gt_record *),
                    gt_proc *p, pass_state *s)
{
    gt_record rec;
    while (gt_reader_next(r, &rec))
        fn(p, s, &rec);
    return 0;
}

static void resolve_stacks(gt_proc *p, pass_state *s)
{
    p->stacks = gt_xrealloc(NULL, (s->n_stacks + 1) * sizeof *p->stacks);
    for (size_t i = 0; i < s->n_stacks; i++) {
        const stack_py *sp = &s->stacks[i];
        char buf[512];
        const char *site = gt_symtab_callsite(s->symtab, sp->stack_id);
        if (site) { /* symbolize.c: innermost user frame, Python or native */
            snprintf(buf, sizeof buf, "%s", site);
        } else if (sp->have_py) {
            const char *file = gt_reader_string(s->reader, sp->file_id);
            const char *func = gt_reader_string(s->reader, sp->func_id);
            snprintf(buf, sizeof buf, "%s:%d (%s)", file ? file : "?", sp->line, func ? func : "?");
        } else {
            snprintf(buf, sizeof buf, "stack #%u (pc 0x%llx)", sp->stack_id,
                     (unsigned long long)sp->pc0);
        }
        p->stacks[i].id = sp->stack_id;
        p->stacks[i].where = gt_xstrdup(buf);
    }
    p->n_stacks = s->n_stacks;
}

const char *gt_proc_call_site(const gt_proc *p, uint32_t stack_id)
{
    if (!stack_id)
        return NULL;
    for (size_t i = 0; i < p->n_stacks; i++)
        if (p->stacks[i].id == stack_id)
            return p->stacks[i].where;
    return NULL;
}

static void free_pass(pass_state *s)
{
    gt_u64map *maps[] = {&s->kern_by_name, &s->site_by_key, &s->link_call,    &s->link_how,
                         &s->call_by_corr, &s->raw_by_key,  &s->plan_by_id,   &s->sig_by_id,
                         &s->gemm_by_key,  &s->graph_ord,   &s->nvtx_by_name, &s->range_open,
                         &s->stack_by_id};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        gt_map_free(maps[i]);
    gt_op_links_free(&s->links);
    free(s->raw);
    for (size_t i = 0; i < s->n_plans; i++) {
        free(s->plans[i].knobs);
        free(s->plans[i].label);
    }
    free(s->plans);
    free(s->sigs);
    free(s->iv);
    free(s->tids);
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i].ranges);
    free(s->names);
    free(s->ranges_open);
    free(s->stacks);
    free(s->marker_t);
    free(s->sev);
    if (s->symtab)
        gt_symtab_free(s->symtab);
}

static void copies_finish(gt_proc *p, pass_state *s)
{
    /* Byte counts and GPU times come from CUPTI when it recorded copies, else from the calls. */
    p->copies_from_gpu = s->gpu_memcpy_records > 0;
    if (p->copies_from_gpu)
        return;
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 6; k++) {
            p->copies[d][k].count = s->cpu_copy_count[d][k];
            p->copies[d][k].bytes = s->cpu_copy_bytes[d][k];
        }
}

/* Pass 1 and what it decides (kernel names, stacks, busy intervals and gaps, NVTX steps or the
 * kernel that marks steps); the pass state stays in p->priv for pass 2. */
static void load_pass1(gt_proc *p, gt_reader *r)
{
    pass_state *s = gt_xrealloc(NULL, sizeof *s);
    memset(s, 0, sizeof *s);
    p->priv = s;
    s->reader = r;
    s->tids = gt_xrealloc(NULL, MAX_TIDS * sizeof *s->tids);
    s->symtab = gt_symtab_new();
    gt_op_links_init(&s->links, p->hdr.flags, link_decided, s); /* out of memory: no links */
    read_all(r, on_record_pass1, p, s);
    gt_op_links_finish(&s->links);
    const gt_reader_stats *st = gt_reader_get_stats(r);
    p->chunks_damaged = st->chunks_damaged;
    p->chunk_seq_gaps = st->chunk_seq_gaps;
    p->truncated = st->truncated;
    p->unknown_records = st->unknown_kinds;
    p->records = st->records;
    p->damaged = st->chunks_damaged || st->chunk_seq_gaps || st->truncated;

    resolve_kernel_names(p, s);
    resolve_stacks(p, s);
    busy_and_gaps(p, s);
    copies_finish(p, s);
    if (!p->sync_count && s->cupti_sync_count) { /* no wrapper saw syncs (static cudart, JAX) */
        p->syncs_from_cupti = 1;
        p->sync_count = s->cupti_sync_count;
        p->sync_total_ns = s->cupti_sync_ns;
    }
    s->nvtx_steps = steps_from_nvtx(p, s);
    if (!s->nvtx_steps)
        choose_step_marker(p, s);
}

void gt_proc_pass2_record(gt_proc *p, const gt_record *r)
{
    if (p->priv)
        on_record_pass2(p, p->priv, r);
}

/* After pass 2: steps from the marker kernel, cuDNN ops, the steady window. complete: pass 2
 * read the whole file (else the steady window's figures stay 0, as when a rewind failed). */
static void load_finish(gt_proc *p, int complete)
{
    pass_state *s = p->priv;
    if (!s)
        return;
    if (!s->nvtx_steps && s->n_marker >= 3)
        qsort(s->marker_t, s->n_marker, sizeof *s->marker_t, cmp_u64);
    /* A kernel pattern marks training steps only when the steps span most of the GPU's active
     * time; a pattern inside one of several loops (one conv layer's iterations, autotuning trials)
     * is not the program's step. */
    if (!s->nvtx_steps && s->n_marker >= 3 &&
        (double)(s->marker_t[s->n_marker - 1] - s->marker_t[0]) <
            GT_STEP_MIN_COVER * (double)(p->gpu_last_ns - p->gpu_first_ns))
        s->n_marker = 0;
    if (!s->nvtx_steps && s->n_marker >= 3) {
        p->n_steps = s->n_marker - 1;
        p->steps = gt_xrealloc(NULL, p->n_steps * sizeof *p->steps);
        for (size_t i = 0; i < p->n_steps; i++)
            p->steps[i] = (gt_step){s->marker_t[i], s->marker_t[i + 1]};
    } else if (!s->nvtx_steps) {
        p->step_source[0] = 0;
    }
    build_cudnn_ops(p, s);
    if (!p->cudnn_calls_seen)
        build_inferred_ops(p);
    analyse_steps(p);

    /* Without steps the second half of the GPU-active span stands for the steady state
     * (start-up allocations and autotuning are in the first half), counted as one step. */
    uint64_t lo = p->n_steps >= 2 ? p->steady_start_ns
                                  : p->gpu_first_ns + (p->gpu_last_ns - p->gpu_first_ns) / 2;
    uint64_t hi = p->n_steps >= 2 ? p->steady_end_ns : p->gpu_last_ns;
    if (p->n_steps < 2) {
        p->steady_start_ns = lo;
        p->steady_end_ns = hi;
    }
    p->steady_steps = p->n_steps >= 2 ? (double)(p->n_steps - p->warmup_steps) : 1.0;
    gap_totals(p, s, lo, hi);
    if (hi > lo && complete)
        steady_count(p, s, lo, hi);
    double steps = p->steady_steps;
    p->steady_nccl_ms_per_step /= steps;
    p->steady_sync_ms_per_step /= steps;
    p->steady_copy_ms_per_step /= steps;
    p->steady_alloc_per_step = (double)p->steady_alloc_calls / steps;
    free_pass(s);
    free(s);
    p->priv = NULL;
}

/* Open a file and read its pass 1; returns the reader (NULL when it is no readable trace). */
static gt_reader *proc_open(gt_proc *p, const char *path)
{
    gt_reader *r = NULL;
    p->path = gt_xstrdup(path);
    p->open_status = gt_reader_open(path, &r, p->open_error, sizeof p->open_error);
    if (p->open_status != GT_OPEN_OK) {
        if (!p->open_error[0])
            snprintf(p->open_error, sizeof p->open_error, "%s: cannot read", path);
        return NULL;
    }
    p->hdr = *gt_reader_header(r);
    p->hdr.host[sizeof p->hdr.host - 1] = 0;
    for (int i = 0; i < GT_MAX_DEVICES; i++)
        p->hdr.runtime.devices[i].name[sizeof p->hdr.runtime.devices[i].name - 1] = 0;
    p->exe = gt_xstrdup(gt_reader_exe(r));
    p->cmdline = gt_xstrdup(gt_reader_cmdline(r));
    p->host = gt_xstrdup(p->hdr.host);
    load_pass1(p, r);
    return r;
}

static void run_note(gt_run *run, gt_proc *p, int verbose)
{
    if (p->open_status != GT_OPEN_OK) {
        run->any_not_trace = 1;
        if (verbose)
            fprintf(stderr, "gputrace: %s\n", p->open_error);
        return;
    }
    if (p->damaged) {
        run->any_damaged = 1;
        if (verbose)
            fprintf(stderr,
                    "gputrace: %s is damaged (%llu bad chunks, %llu missing, %s); reporting "
                    "what could be read\n",
                    p->path, (unsigned long long)p->chunks_damaged,
                    (unsigned long long)p->chunk_seq_gaps,
                    p->truncated ? "truncated" : "not truncated");
    }
}

/* pass2: 1 = read pass 2 here (a second read of each file); 0 = the caller feeds it. */
static int run_load(gt_run *run, const char *const *paths, int n, int verbose, int pass2)
{
    memset(run, 0, sizeof *run);
    size_t cnt = 0;
    char **list = gt_expand_paths(paths, n, &cnt, verbose ? "" : NULL);
    run->procs = gt_xcalloc(cnt + 1, sizeof *run->procs);
    int ok = 0;
    for (size_t i = 0; i < cnt; i++) {
        gt_proc *p = &run->procs[run->n++];
        gt_reader *r = proc_open(p, list[i]);
        if (r) {
            ((pass_state *)p->priv)->reader = NULL; /* pass 2 reads no strings */
            if (pass2) {
                int rewound = gt_reader_rewind(r) == 0;
                if (rewound)
                    read_all(r, on_record_pass2, p, p->priv);
                load_finish(p, rewound);
            }
            gt_reader_close(r);
            ok++;
        }
        run_note(run, p, verbose);
    }
    gt_paths_free(list, cnt);
    if (!cnt && verbose)
        fprintf(stderr, "gputrace: no .gtrace files found\n");
    return ok ? 0 : -1;
}

int gt_run_load(gt_run *run, const char *const *paths, int n, int verbose)
{
    return run_load(run, paths, n, verbose, 1);
}

int gt_run_open(gt_run *run, const char *const *paths, int n, int verbose)
{
    return run_load(run, paths, n, verbose, 0);
}

struct gt_symtab *gt_proc_symtab(gt_proc *p)
{
    return p->priv ? ((pass_state *)p->priv)->symtab : NULL;
}

void gt_proc_finish(gt_proc *p, int pass2_complete)
{
    load_finish(p, pass2_complete);
}

void gt_run_free(gt_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        gt_proc *p = &run->procs[i];
        if (p->priv) { /* opened, never finished */
            free_pass(p->priv);
            free(p->priv);
        }
        free(p->path);
        free(p->exe);
        free(p->cmdline);
        free(p->host);
        for (size_t k = 0; k < p->n_kernels; k++) {
            free(p->kernels[k].name);
            free(p->kernels[k].mangled);
        }
        free(p->kernels);
        free(p->sync_sites);
        free(p->gaps);
        for (size_t k = 0; k < p->n_cudnn; k++) {
            free(p->cudnn[k].signature);
            for (int c = 0; c < p->cudnn[k].n_choices; c++) {
                free(p->cudnn[k].choices[c].text);
                free(p->cudnn[k].choices[c].notes);
            }
        }
        free(p->cudnn);
        free(p->gemms);
        free(p->steps);
        for (size_t k = 0; k < p->n_stacks; k++)
            free(p->stacks[k].where);
        free(p->stacks);
    }
    free(run->procs);
    memset(run, 0, sizeof *run);
}

/* ------------------------------------------------------------------ small queries */

double gt_proc_duration_ms(const gt_proc *p)
{
    return p->t_max > p->t_min ? (double)(p->t_max - p->t_min) / 1e6 : 0;
}

double gt_proc_busy_pct(const gt_proc *p)
{
    uint64_t span = p->gpu_last_ns - p->gpu_first_ns;
    return span ? 100.0 * (double)p->gpu_busy_ns / (double)span : 0;
}

int gt_proc_has_data(const gt_proc *p)
{
    return p->open_status == GT_OPEN_OK && (p->cpu_api_records || p->gpu_records);
}

int gt_proc_rank(const gt_proc *p)
{
    return p->hdr.rank;
}
