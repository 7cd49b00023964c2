/* model_load.c — the loader: reads .gtrace files into per-process aggregates (model.h gives the
 * passes). It opens each file, hands every record of pass 1 and pass 2 to the builders that use
 * it (on_record_pass1/2: the one dispatch), runs what follows each pass, then what needs the
 * whole run. The builders, in order: each calls the shared core and the builders above it, never
 * one below (its includes say which; tools/check_structure.py checks this list against the
 * calls, so a new builder goes in it, after what it calls):
 *
 *   core      model_core.c      the pass state and lookups, what a record is (a blocking sync, a
 *                               copy's host memory), busy intervals, gaps, bins, accessors
 *   framework model_framework.c which frameworks the process runs: modules, Python files, kernels
 *   compile   model_compile.c   a framework's compiler in the process: its evidence and the
 *                               compilations (the phases builder asks for their spans)
 *   um        model_um.c        unified memory: managed allocations, prefetches, page faults and
 *                               migrations, the kernels' stall on them
 *   calls     model_calls.c     API tables, copies, sync stalls by call site, GEMMs, call stacks
 *   kernels   model_kernels.c   kernel families and names, GPU copies, the call of each kernel
 *   cudnn     model_cudnn.c     cuDNN calls, plans, signatures, engines, autotuning
 *   sample    model_sample.c    GPU sampling's windows: which time was measured, extrapolation
 *   time      model_time.c      NVTX ranges, GPU busy time and idle gaps, the calls in each gap
 *   steps     model_steps*.c    which marker makes the steps (model_steps_internal.h)
 *   phases    model_phases.c    start-up, JIT, compilation, autotuning, warm-up, steady state,
 *                               tear-down
 *   idle      model_idle.c      what the CPU was doing in each gap
 *   steady    model_steady.c    the steady window: warm-up, its figures per step, gap totals
 *   ranks     model_ranks.c     the run: DataLoader workers, collectives across ranks, stragglers
 *   procs     model_procs.c     every process of the run, CUDA or not (.procs lines)
 *
 * Which call caused each GPU op is op_link.c's (kernel_link.c, order_link.c), decided in pass 1
 * and kept in the pass state for pass 2. */
#include "model_calls.h"
#include "model_compile.h"
#include "model_core.h"
#include "model_cudnn.h"
#include "model_framework.h"
#include "model_idle.h"
#include "model_kernels.h"
#include "model_phases.h"
#include "model_procs.h"
#include "model_sample.h"
#include "model_steady.h"
#include "model_steps.h"
#include "model_time.h"
#include "model_um.h"
#include "mem_stats.h"

#include "cli_args.h"

/* A link decided (op_link.h), kept for pass 2: which cuDNN call or GEMM a kernel's time is. */
static void link_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    pass_state *s = ctx;
    gt_link_lag_decided(&s->lag, corr, call);
    md_link_add(s, corr, (uint32_t)call, (uint32_t)how);
}

static void on_record_pass1(gt_proc *p, pass_state *s, const gt_record *r)
{
    gt_link_lag_record(&s->lag, r);
    gt_op_links_on_record(&s->links, r);
    md_phase_evidence(p, s, r);
    switch (r->kind) {
    case GT_REC_LOST: {
        gt_rec_lost l;
        gt_body_copy(&l, sizeof l, r);
        p->records_lost += l.count;
        p->lost_by_reason[l.reason < 8 ? l.reason : 0] += l.count;
        break;
    }
    case GT_REC_END:
        md_phase_end_record(p, r);
        break;
    case GT_REC_CAPTURE:
        md_sample_on_capture(s, r);
        break;
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
    case GT_REC_API_CUBLAS: {
        gt_api_common c;
        gt_body_copy(&c, sizeof c, r);
        md_steps_on_api(s, &c);
        if (r->kind == GT_REC_API_MEMCPY) {
            gt_rec_api_memcpy m;
            gt_body_copy(&m, sizeof m, r);
            md_steps_on_copy_call(s, &m);
        }
        md_on_api(p, s, r);
        md_um_on_api(p, r);
        if (r->kind == GT_REC_API_CUDNN)
            md_on_api_cudnn(p, s, r);
        md_link_call_seen(s, c.corr_id); /* after the builders: a library call is known now */
        /* the calls stand in for the GPU records of a sampled trace, and make the steps of a
         * loop whose GPU work interleaves (threads or streams of their own) */
        md_steps_on_call(s, r);
        if (p->hdr.flags & GT_HDR_GPU_SAMPLED)
            md_sample_on_call(s, r->kind, &c);
        break;
    }
    case GT_REC_CUDNN_PLAN:
        md_on_cudnn_plan(s, r);
        break;
    case GT_REC_CUDNN_PERF:
        md_on_cudnn_perf(s, r);
        break;
    case GT_REC_CUDNN_CONV_SIG:
        md_on_cudnn_sig(s, r);
        break;
    case GT_REC_NVTX: {
        gt_rec_nvtx v;
        gt_body_copy(&v, sizeof v, r);
        md_on_nvtx(p, s, &v, r->tid);
        /* the library a range names (steps' table) tells the framework */
        md_framework_on_nvtx_library(
            p, gt_step_library(v.domain_id ? gt_reader_string(s->reader, v.domain_id) : NULL,
                               v.name_id ? gt_reader_string(s->reader, v.name_id) : NULL));
        break;
    }
    case GT_REC_THREAD:
        md_idle_on_thread(s, r);
        break;
    case GT_REC_STACK:
        md_on_stack(p, s, r);
        gt_symtab_add_record(s->symtab, s->reader, r);
        break;
    case GT_REC_MODULE: {
        gt_rec_module m;
        gt_body_copy(&m, sizeof m, r);
        md_framework_on_module(p, gt_reader_string(s->reader, m.path_id));
        gt_symtab_add_record(s->symtab, s->reader, r);
        break;
    }
    case GT_REC_GPU_KERNEL: {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        p->gpu_records++;
        md_note_time(p, k.start_ns, k.end_ns);
        md_on_kernel(p, s, &k);
        md_steps_on_kernel(s, &k);
        break;
    }
    case GT_REC_GPU_MEMCPY: {
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        p->gpu_records++;
        md_note_time(p, m.start_ns, m.end_ns);
        md_on_gpu_memcpy(p, s, &m);
        md_steps_on_memcpy(s, &m);
        break;
    }
    case GT_REC_GPU_MEMSET: {
        gt_rec_gpu_memset m;
        gt_body_copy(&m, sizeof m, r);
        p->gpu_records++;
        md_note_time(p, m.start_ns, m.end_ns);
        md_iv_add(s, m.start_ns, m.end_ns);
        break;
    }
    case GT_REC_GPU_SYNC: {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        md_note_time(p, g.start_ns, g.end_ns);
        md_steps_on_gpu_sync(s, &g);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4) { /* CPU-blocking kinds */
            s->cupti_sync_count++;
            s->cupti_sync_ns += g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
        }
        break;
    }
    case GT_REC_GPU_UM:
        md_um_on_gpu(p, s, r);
        break;
    case GT_REC_GPU_API: {
        gt_rec_gpu_api a;
        gt_body_copy(&a, sizeof a, r);
        p->gpu_api_records++;
        md_note_time(p, a.start_ns, a.end_ns);
        break;
    }
    default:
        break;
    }
}

static void on_record_pass2(gt_proc *p, pass_state *s, const gt_record *r)
{
    md_steady_record(p, s, r);
    if (r->kind >= GT_REC_API && r->kind <= GT_REC_API_CUBLAS) {
        union {
            gt_api_common c;
            gt_rec_api_memcpy m;
            gt_rec_api_sync sync;
        } u;
        gt_body_copy(&u, sizeof u, r);
        int category = md_api_category_for_gap(r, &u.c, u.sync.sync_kind, &u.m);
        if (u.c.t_end_ns >= u.c.t_begin_ns && p->n_gaps)
            md_attribute_to_gaps(p, category, u.c.t_begin_ns, u.c.t_end_ns);
        if (category == 0)
            md_note_blocking(s, u.c.t_begin_ns, u.c.t_end_ns);
        int blocking = (r->kind == GT_REC_API_SYNC && md_sync_blocks(u.sync.sync_kind)) ||
                       (r->kind == GT_REC_API_MEMCPY && !u.m.is_async);
        md_idle_on_api(p, s, r, &u.c, blocking);
        md_compile_on_api(p, s, &u.c);
    } else if (r->kind == GT_REC_GPU_MEMCPY) {
        gt_rec_gpu_memcpy m;
        gt_body_copy(&m, sizeof m, r);
        md_idle_on_gpu_memcpy(p, s, &m);
    } else if (r->kind == GT_REC_GPU_KERNEL) {
        gt_rec_gpu_kernel k;
        gt_body_copy(&k, sizeof k, r);
        uint32_t ki = gt_map_get(&s->kern_by_name, k.name_id);
        md_idle_on_kernel(p, s, &k, ki < p->n_kernels && p->kernels[ki].is_nccl);
        uint64_t d = k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
        uint32_t call = md_kernel_call(p, s, &k);
        if (call == UINT32_MAX)
            return;
        if (call & 0x80000000u) {
            if ((call & 0x7fffffffu) < p->n_gemms) {
                gt_gemm_agg *g = &p->gemms[call & 0x7fffffffu];
                g->gpu_ns += d;
                if (ki < p->n_kernels && p->kernels[ki].tensor_cores)
                    g->tensor_core_gpu_ns += d;
            }
        } else if (call < s->n_raw) {
            s->raw[call].gpu_ns += d;
        }
    } else if (r->kind == GT_REC_GPU_SYNC && p->syncs_from_cupti && p->n_gaps) {
        gt_rec_gpu_sync g;
        gt_body_copy(&g, sizeof g, r);
        if (g.sync_type == 1 || g.sync_type == 3 || g.sync_type == 4) {
            md_attribute_to_gaps(p, 0, g.start_ns, g.end_ns);
            md_note_blocking(s, g.start_ns, g.end_ns);
        }
    }
}

static int read_all(gt_reader *r, void (*fn)(gt_proc *, pass_state *, const gt_record *),
                    gt_proc *p, pass_state *s)
{
    gt_record rec;
    while (gt_reader_next(r, &rec))
        fn(p, s, &rec);
    return 0;
}

static void free_pass(pass_state *s)
{
    gt_u64map *maps[] = {&s->kern_by_name, &s->site_by_key, &s->call_by_corr, &s->raw_by_key,
                         &s->plan_by_id,   &s->sig_by_id,   &s->gemm_by_key,  &s->graph_ord,
                         &s->nvtx_by_name, &s->range_open,  &s->stack_by_id,  &s->compiler_stacks};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        gt_map_free(maps[i]);
    gt_op_links_free(&s->links);
    md_links_free(s);
    free(s->raw);
    for (size_t i = 0; i < s->n_plans; i++) {
        free(s->plans[i].knobs);
        free(s->plans[i].label);
    }
    free(s->plans);
    free(s->sigs);
    free(s->iv);
    free(s->merged.buckets);
    free(s->tids);
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i].ranges);
    free(s->names);
    free(s->ranges_open);
    free(s->stacks);
    md_steps_free(s);
    free(s->sev);
    free(s->handovers);
    free(s->staging);
    free(s->gap_after_wait);
    free(s->compile_ev);
    free(s->phase_ev);
    free(s->um_iv);
    free(s->um_fault_t);
    free(s->trials);
    free(s->sample_sw);
    gt_u64_log_free(&s->submits);
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

/* Sync sites inside an autotuner: their waits are the trials' (before the phases, which take
 * them as evidence of autotuning, and the steady counts, which leave them out). */
static void mark_autotuner_sites(gt_proc *p)
{
    for (size_t i = 0; i < p->n_sync_sites; i++)
        p->sync_sites[i].in_autotuner =
            gt_call_site_is_autotuner(gt_proc_call_site(p, p->sync_sites[i].stack_id));
}

/* The steady log's limit in records (GPUTRACE_STEADY_LOG_MAX, else MD_STEADY_LOG_MAX_RECORDS). */
static uint64_t steady_log_max(void)
{
    const char *e = getenv("GPUTRACE_STEADY_LOG_MAX");
    char *end = NULL;
    unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
    return e && *e && end && !*end ? (uint64_t)v : MD_STEADY_LOG_MAX_RECORDS;
}

/* What only the step choice reads (the kernels' order, the NVTX ranges...): freed once the steps
 * are chosen, before pass 2 adds its own arrays. */
static void free_step_inputs(pass_state *s)
{
    md_steps_free(s);
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i].ranges);
    free(s->names);
    free(s->ranges_open);
    gt_map_free(&s->nvtx_by_name);
    gt_map_free(&s->range_open);
    s->names = NULL;
    s->ranges_open = NULL;
    s->n_names = s->n_ranges_open = s->cap_names = s->cap_ranges_open = 0;
}

/* Pass 1 and what it decides (kernel names, stacks, busy intervals and gaps, the steps:
 * model_steps.c); the pass state stays in p->priv for pass 2. */
static void load_pass1(gt_proc *p, gt_reader *r, const gt_model_options *opts)
{
    pass_state *s = gt_xrealloc(NULL, sizeof *s);
    memset(s, 0, sizeof *s);
    p->priv = s;
    s->reader = r;
    s->opts = opts;
    s->tids = gt_xrealloc(NULL, MAX_TIDS * sizeof *s->tids);
    s->symtab = gt_symtab_new();
    gt_op_links_init(&s->links, p->hdr.flags, link_decided, s); /* out of memory: no links */
    read_all(r, on_record_pass1, p, s);
    gt_op_links_finish(&s->links);
    md_links_sort(s);
    p->kernels_ambiguous = s->links.ambiguous;
    p->kernels_by_stream = s->links.by_stream;
    p->kernels_other_stream = s->links.other_stream;
    /* Every link is decided and kept in link_call: the linker's tables (launches and kernels
     * waiting, its slots) would only add to the peak of pass 2. */
    gt_op_links_free(&s->links);
    memset(&s->links, 0, sizeof s->links);
    p->link_lag = s->lag;
    const gt_reader_stats *st = gt_reader_get_stats(r);
    p->chunks_damaged = st->chunks_damaged;
    p->chunk_seq_gaps = st->chunk_seq_gaps;
    p->truncated = st->truncated;
    p->unknown_records = st->unknown_kinds;
    p->records = st->records;
    p->damaged = st->chunks_damaged || st->chunk_seq_gaps || st->truncated;
    p->calls_not_recorded = st->end.lost_after_end + st->end.calls_interrupted;
    p->end_reason = st->ended ? st->end.reason : 0;
    p->calls_before_cupti = st->end.calls_before_cupti;

    md_resolve_kernel_names(p, s);
    md_resolve_stacks(p, s);
    md_framework_finish(p);
    md_sample_windows(p, s);
    md_busy(p, s);
    copies_finish(p, s);
    if (!p->sync_count && s->cupti_sync_count) { /* no wrapper saw syncs (static cudart, JAX) */
        p->syncs_from_cupti = 1;
        p->sync_count = s->cupti_sync_count;
        p->sync_total_ns = s->cupti_sync_ns;
    }
    md_choose_steps(p, s);
    free_step_inputs(s);
    md_gaps(p, s);
    md_gap_to_last_step(p);
    /* A long file: its steady figures from a third read rather than a log of every launch,
     * kernel, sync and copy. The phases' evidence from the log (waits at an autotuner's call
     * sites) is still logged in pass 2, so the sites are marked now. */
    s->steady_reread = p->records > steady_log_max();
    if (s->steady_reread)
        mark_autotuner_sites(p);
    md_memory_stats(p, s, "pass 1");
}

void gt_proc_pass2_record(gt_proc *p, const gt_record *r)
{
    if (p->priv)
        on_record_pass2(p, p->priv, r);
}

/* After pass 2: cuDNN ops, the steps' figures and the steady window. complete: pass 2
 * read the whole file (else the steady window's figures stay 0, as when a rewind failed). */
static void load_finish(gt_proc *p, int complete)
{
    pass_state *s = p->priv;
    if (!s)
        return;
    md_memory_stats(p, s, "pass 2");
    md_build_cudnn_ops(p, s);
    md_launch_entry(p);
    if (!p->cudnn_calls_seen)
        md_build_inferred_ops(p);
    md_analyse_steps(p);

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
    md_sample_steady(p, lo, hi); /* the steady window's part the GPU figures come from */
    mark_autotuner_sites(p);
    md_phases(p,
              s); /* before the gap totals: idle in JIT or autotuning is not the steady state's */
    uint64_t in_phase[GT_PHASE_COUNT];
    md_phase_overlaps(p, lo, hi, in_phase);
    p->steady_named_phase_ns = 0;
    for (int k = 0; k < GT_PHASE_COUNT; k++)
        p->steady_named_phase_ns += gt_phase_is_named_cost(k) ? in_phase[k] : 0;
    md_idle_finish(p, s); /* before the gap totals too: a pageable copy's staging is its own */
    md_gap_totals(p, s, lo, hi);
    md_um_finish(p, s, lo, hi);
    if (hi > lo && complete && s->steady_reread) {
        p->steady_reread = md_steady_reread(p, s, lo, hi) == 0;
    } else if (hi > lo && complete) {
        md_steady_count(p, s, lo, hi);
        md_after_sync_small_gaps(p, s, lo, hi);
    }
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
static gt_reader *proc_open(gt_proc *p, const char *path, const gt_model_options *opts)
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
    load_pass1(p, r, opts);
    return r;
}

static void run_note(gt_run *run, gt_proc *p, int verbose)
{
    if (p->open_status != GT_OPEN_OK) {
        run->any_not_trace = 1;
        if (verbose)
            fprintf(stderr, "%s: %s\n", gt_cli_prefix(), p->open_error);
        return;
    }
    if (p->damaged) {
        run->any_damaged = 1;
        if (verbose)
            fprintf(stderr,
                    "%s: %s is damaged (%llu bad chunks, %llu missing, %s); reporting "
                    "what could be read\n",
                    gt_cli_prefix(), p->path, (unsigned long long)p->chunks_damaged,
                    (unsigned long long)p->chunk_seq_gaps,
                    p->truncated ? "truncated" : "not truncated");
    }
}

/* pass2: 1 = read pass 2 here (a second read of each file); 0 = the caller feeds it. */
static int run_load(gt_run *run, const char *const *paths, int n, int verbose, int pass2)
{
    gt_model_options opts = run->opts; /* the caller's choices survive the reset */
    memset(run, 0, sizeof *run);
    run->opts = opts;
    size_t cnt = 0;
    char **list = gt_expand_paths(paths, n, &cnt, verbose ? "" : NULL);
    run->procs = gt_xcalloc(cnt + 1, sizeof *run->procs);
    md_run_notes(run, paths, n, list, cnt);
    int ok = 0;
    for (size_t i = 0; i < cnt; i++) {
        gt_proc *p = &run->procs[run->n++];
        gt_reader *r = proc_open(p, list[i], &run->opts);
        md_run_note_proc(run, run->n - 1, p);
        if (r) {
            ((pass_state *)p->priv)->run = run;
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
    md_run_notes_finish(run);
    if (pass2)
        gt_run_cross_process(run);
    if (!cnt && verbose)
        fprintf(stderr, "%s: no .gtrace files found\n", gt_cli_prefix());
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

void gt_run_drop_gaps(gt_run *run)
{
    for (size_t i = 0; i < run->n; i++) {
        free(run->procs[i].gaps);
        run->procs[i].gaps = NULL;
        run->procs[i].n_gaps = 0;
    }
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
        free(p->collectives);
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
        free(p->phases);
        free(p->compilations);
        free(p->gpu_windows);
        free(p->steady_gpu);
        for (size_t k = 0; k < p->n_stacks; k++)
            free(p->stacks[k].where);
        free(p->stacks);
    }
    free(run->procs);
    md_run_notes_free(run);
    memset(run, 0, sizeof *run);
}
