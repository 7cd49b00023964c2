/* model_calls.c — CPU calls in pass 1: API tables, copies by direction and memory kind, sync
 * stalls by call site, cuBLAS GEMM shapes, call-site stacks (resolved to text after the pass).
 * A cuDNN call's own figures are model_cudnn.c's: the loader gives it the record after this. */
#include "model_calls.h"

#include "model_compile.h"
#include "model_framework.h"
#include "model_um.h"

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

static void on_api_memcpy(gt_proc *p, pass_state *s, const gt_rec_api_memcpy *m, uint64_t d)
{
    uint8_t dir = m->direction <= GT_DIR_D2D ? m->direction : GT_DIR_DEFAULT;
    uint8_t hk = md_host_kind_of(dir, m->src_kind, m->dst_kind);
    gt_copy_agg *a = &p->copies[dir][hk];
    a->cpu_count++;
    a->cpu_ns += d;
    s->cpu_copy_count[dir][hk]++;
    s->cpu_copy_bytes[dir][hk] += m->bytes;
    if (d > a->top_stack_ns && m->c.stack_id) { /* the costliest call site seen */
        a->top_stack_ns = d;
        a->top_stack = m->c.stack_id;
    }
    if (md_copy_blocks(m, hk)) {
        a->blocking_count++;
        a->blocking_ns += d;
        if (md_copy_is_item_like(m, hk)) /* waits for all queued GPU work */
            add_sync_stall(p, s, &m->c);
    }
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
    md_call_agg_set(s, c->c.corr_id, i | 0x80000000u); /* top bit: a GEMM, not cuDNN */
}

void md_on_api(gt_proc *p, pass_state *s, const gt_record *r)
{
    union {
        gt_api_common c;
        gt_rec_api_memcpy memcpy_;
        gt_rec_api_sync sync;
        gt_rec_api_alloc alloc;
        gt_rec_api_cublas cublas;
        gt_rec_api_launch launch;
    } u;
    gt_body_copy(&u, sizeof u, r);
    const gt_api_common *c = &u.c;
    uint64_t d = c->t_end_ns > c->t_begin_ns ? c->t_end_ns - c->t_begin_ns : 0;
    p->cpu_api_records++;
    md_note_time(p, c->t_begin_ns, c->t_end_ns);
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
        tid_stack *t = md_tid_for(s, r->tid);
        if (t)
            t->last_h2d_end = 0;
    }
    switch (r->kind) {
    case GT_REC_API_LAUNCH:
        p->launches++;
        p->launch_ns += d;
        break;
    case GT_REC_API_MEMCPY: {
        if (md_um_is_prefetch(c->func)) /* a migration: model_um.c counts it */
            break;
        on_api_memcpy(p, s, &u.memcpy_, d);
        tid_stack *t = md_tid_for(s, r->tid);
        if (t && u.memcpy_.is_async && u.memcpy_.direction == GT_DIR_H2D) {
            t->last_h2d_end = c->t_end_ns;
            t->last_h2d_stream = c->stream;
        }
        break;
    }
    case GT_REC_API_SYNC:
        if (md_sync_blocks(u.sync.sync_kind)) {
            add_sync_stall(p, s, c);
            /* PyTorch's .to(device) without non_blocking: an async copy, then a stream sync */
            tid_stack *t = md_tid_for(s, r->tid);
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
    case GT_REC_API_CUBLAS:
        on_api_cublas(p, s, &u.cublas, d);
        break;
    default:
        break;
    }
}

void md_on_stack(gt_proc *p, pass_state *s, const gt_record *r)
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
        md_framework_on_python_file(p, file);
        md_compile_on_stack_frame(p, s, st->stack_id, file, gt_reader_string(s->reader, f[1]));
        if (sp->have_py == 2)
            continue; /* the user's line is found: the frames above still tell the framework */
        if (file && !strstr(file, "site-packages") && !strstr(file, "/lib/python") &&
            file[0] != '<') {
            sp->file_id = f[0];
            sp->func_id = f[1];
            sp->line = line;
            sp->have_py = 2;
        }
    }
    gt_map_put(&s->stack_by_id, st->stack_id, (uint32_t)s->n_stacks++);
}

/* After pass 1 (strings known): each stack as the report shows its call site. */
void md_resolve_stacks(gt_proc *p, pass_state *s)
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

/* The launch entry point with most calls (the launch path: the runtime's __cudaLaunchKernel, the
 * driver's cuLaunchKernel/cuLaunchKernelEx of Triton and CuPy, cudaGraphLaunch), 0 none seen. */
void md_launch_entry(gt_proc *p)
{
    p->launch_func = 0;
    for (uint32_t f = 1; f < 256; f++) {
        int launch = gt_api_func_category(f) == GT_CAT_LAUNCH || f == GT_FN_cuLaunchKernel ||
                     f == GT_FN_cuLaunchKernelEx;
        if (launch && p->api[f].count && p->api[f].count > p->api[p->launch_func].count)
            p->launch_func = f;
    }
}

/* A call site inside an autotuner (cudnn_frontend's time_sorted_plan, cudnnFind, XLA's algorithm
 * pickers): the calls builder's, so that cuDNN and time, which come after it, may ask. */
int gt_call_site_is_autotuner(const char *site)
{
    static const char *const names[] = {
        "time_sorted_plan", "autotun",          "cudnnFind", "AlgorithmPicker",
        "algorithm_picker", "algorithm-picker", NULL};
    for (int i = 0; site && names[i]; i++)
        if (md_contains_ci(site, names[i]))
            return 1;
    return 0;
}
