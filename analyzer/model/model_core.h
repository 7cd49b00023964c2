/* model_core.h — the shared core of the model's builders: the pass state (what pass 1 collects
 * for what follows it, the lookups by id), and model_core.c's helpers every builder may call.
 * Each builder declares what the later ones call of it in its own header (model_calls.h ...);
 * model_load.c gives their order. Not for use outside analyzer/model. */
#ifndef GT_MODEL_CORE_H
#define GT_MODEL_CORE_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn_json.h"
#include "cudnn_names.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "id_pages.h"
#include "link_pack.h"
#include "model.h"
#include "op_link.h"
#include "symbolize.h"
#include "u64_log.h"
#include "util.h"

#define INTERVALS_MAX (4u << 20) /* compaction threshold of the GPU busy interval array */
/* INTERVALS_MAX, or GPUTRACE_INTERVALS_MAX (>= 64) where set: the tests reach the threshold with
 * thousands of kernels, not millions. */
size_t md_intervals_max(void);
#define NVTX_RANGES_MAX 200000u
#define MAX_TIDS 256
#define NVTX_DEPTH 64
#define GT_PERF_ALGOS 8 /* legacy algorithms per direction (cudnnConvolution*Algo_t) */
#define MAX_COLL_TIDS 32
#define COLLECTIVES_MAX (4u << 20)

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
    uint64_t first_ns, last_ns; /* first call's begin, last call's end */
    /* the perf table of a Find (times, ms per run, by algorithm) or Get_v7 (its first pick) */
    float perf_ms[GT_PERF_ALGOS];
    uint32_t perf_tables;
    int32_t perf_first_algo;
} raw_cudnn;

typedef struct nvtx_open {
    uint32_t name_id, depth;
    uint64_t t;
    uint32_t domain_id; /* 0 = NVTX's default domain */
} nvtx_open;

typedef struct tid_stack {
    uint32_t tid, depth;
    uint64_t last_h2d_end, last_h2d_stream; /* for copy-then-sync (non_blocking=False) */
    nvtx_open open[NVTX_DEPTH];
} tid_stack;

typedef struct nvtx_name {
    uint32_t name_id, domain_id;
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
enum steady_kind {
    SE_ALLOC,
    SE_SYNC,
    SE_COPY,
    SE_COPY_ITEM,
    SE_KERNEL,
    SE_CUPTI_SYNC,
    SE_LAUNCH,
    SE_COPY_PAGEABLE_H2D, /* a copy call from pageable memory; site holds its KiB */
    SE_COPY_PAGEABLE_D2H, /* to pageable memory (not a read-back of a result) */
    SE_GPU_PAGEABLE_H2D,  /* the same copies as the GPU ran them (CUPTI), site: KiB */
    SE_GPU_PAGEABLE_D2H,
};
typedef struct steady_ev {
    uint64_t t, d;
    uint32_t site; /* index in p->sync_sites, UINT32_MAX none; kernels: 1 if NCCL */
    uint8_t kind;
} steady_ev;

/* A cuDNN execute the recorder flagged as an autotuning trial (model_phases.c): autotuning's
 * evidence only once its op is known to have tried several plans, and only until its trials
 * ended (md_cudnn_trials_end). */
typedef struct md_trial {
    uint64_t a, b;
    uint32_t func, plan_id, sig_id;
} md_trial;

/* Past this many records a file's steady log is not kept: the steady window's figures come from
 * a third read of the file (model_steady.c), so that memory does not grow with the run.
 * GPUTRACE_STEADY_LOG_MAX overrides it (the tests make a small trace take the third read). */
#define MD_STEADY_LOG_MAX_RECORDS 1000000ull

/* Idle gaps merged into busy time to bound memory (md_iv_add): in all, and over time in buckets
 * that double in width as the run grows (MD_MERGED_BUCKETS of them: a megabyte), so that the busy
 * time and the idle between kernels of any window can be given back (md_merged_in). */
#define MD_MERGED_BUCKETS 65536
typedef struct md_merged_bucket {
    uint64_t ns, gaps;
} md_merged_bucket;
typedef struct md_merged {
    uint64_t ns, gaps;         /* in all */
    uint64_t origin, width;    /* bucket i: [origin + i * width, + width); width 0: none yet */
    md_merged_bucket *buckets; /* MD_MERGED_BUCKETS */
    size_t n;                  /* buckets up to the last one used */
} md_merged;

typedef struct pass_state {
    gt_reader *reader;
    steady_ev *sev;
    size_t n_sev, cap_sev;
    /* the file is past the steady log's limit: pass 2 logs only the waits at an autotuner's call
     * sites (the phases' evidence), the steady figures come from a third read */
    int steady_reread;
    /* The links pass 2 needs a call for (a cuDNN call's or a GEMM's kernels), sorted by corr
     * and packed (link_pack.h); the decisions since the last compaction, as they came, in
     * links_v; how every other GPU op was linked is 2 bits in link_how, and calls_seen says which
     * calls pass 1 has read (a link whose call is not read yet waits). Memory: about 3 bytes a
     * library kernel, a quarter byte any other GPU op, an eighth a call (16 bytes a GPU op
     * before, 16 a library kernel and three times that while merging after). links_packed is
     * allocated with its first link: lookups through a const pass state move its cache. */
    md_link *links_v;
    size_t n_links_v, cap_links_v, n_links_waiting; /* waiting: left by the last compaction */
    size_t links_tail_max, link_pack_memory; /* 0: the defaults (model_core.c; tests set less) */
    md_link_pack *links_packed;
    md_pagebits link_how, calls_seen;
    md_pagebits call_agg; /* md_call_agg; call_by_corr holds the ids past 32 bits only */
    gt_op_links links;    /* GPU op -> call (op_link.h): the rule the converter draws */
    gt_link_lag lag;      /* and how far apart its evidence is (for the converter's caches) */
    gt_symtab *symtab;
    gt_u64map kern_by_name, site_by_key, call_by_corr, raw_by_key, plan_by_id, sig_by_id,
        gemm_by_key, graph_ord, nvtx_by_name, range_open, stack_by_id;
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
    md_merged merged; /* the idle time merging by merge_gap took, over time (gt_proc) */
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
    /* what the step choice reads (model_steps.c) */
    const gt_model_options *opts;
    struct step_op *ops; /* GPU kernels and copies in pass 1, for repeating patterns */
    size_t n_ops, cap_ops;
    /* past STEP_OPS_MAX, on disk: time, key of each GPU op; time, key, thread of each call (a
     * pattern found in the first ones is carried over the rest: model_steps_pattern.c) */
    gt_u64_log ops_tail, calls_tail;
    uint64_t ops_cut, calls_cut; /* the time from which they go there (0: none yet) */
    struct step_op
        *calls;          /* GPU sampling: the calls a pattern may repeat (model_steps_pattern.c) */
    uint32_t *call_tids; /* each call's thread */
    size_t n_calls, cap_calls, cap_call_tids;
    gt_u64map call_names;               /* a launch's key -> its kernel's name id */
    struct graph_kernel *graph_kernels; /* kernels launched by CUDA graphs */
    size_t n_graph_kernels, cap_graph_kernels;
    uint64_t *prof_start, *prof_stop; /* cudaProfilerStart/Stop calls */
    size_t n_prof_start, cap_prof_start, n_prof_stop, cap_prof_stop;
    uint32_t marker_name_id;
    uint64_t *marker_t;
    size_t n_marker, cap_marker;
    /* collective threads (gloo...) by name, and when each finished handing data over (pass 2) */
    uint32_t coll_tid[MAX_COLL_TIDS];
    uint64_t coll_pending[MAX_COLL_TIDS];
    uint8_t coll_copying[MAX_COLL_TIDS];      /* its last call was a copy (a result taken back) */
    uint64_t coll_copy_stream[MAX_COLL_TIDS]; /* ... on this stream */
    size_t n_coll_tids;
    /* calls of the other threads on a stream, in processes with collective threads (pass 2):
     * the program handing data to a collective (model_idle.c); [0] the call's end, [1] stream */
    uint64_t (*handovers)[2];
    size_t n_handovers, cap_handovers;
    size_t cap_collectives;
    /* pass 2: by busy interval, whether a blocking call returned in the gap before it (a small
     * gap after one is the wait's): md_note_blocking */
    uint64_t *gap_after_wait;
    uint64_t (*staging)[2]; /* between GPU records of one pageable copy (model_idle.c) */
    size_t n_staging, cap_staging;
    uint64_t staging_corr, staging_end;       /* the pageable copy in progress: its last record */
    uint64_t staging_between, staging_pieces; /* its time between pieces, its pieces */
    int staging_d2h;
    /* compilation (model_compile.c): stacks with a compiler's frame (by stack id), and the
     * calls made with one (pass 2) */
    gt_u64map compiler_stacks;
    gt_phase_span *compile_ev;
    size_t n_compile_ev, cap_compile_ev;
    gt_phase_span *phase_ev; /* JIT and autotuning evidence (model_phases.c) */
    size_t n_phase_ev, cap_phase_ev;
    md_trial *trials; /* flagged trials, confirmed once the cuDNN ops are built */
    size_t n_trials, cap_trials;
    const gt_run *run;        /* the run being loaded (its process notes), NULL none */
    uint64_t (*sample_sw)[2]; /* GPU sampling's switches: time, on (model_sample.c) */
    size_t n_sample_sw, cap_sample_sw;
    gt_u64_log submits;   /* GPU sampling: when each call that gives the GPU work began */
    uint64_t (*um_iv)[2]; /* unified memory's stall intervals (model_um.c) */
    size_t n_um_iv, cap_um_iv;
    uint64_t *um_fault_t; /* GPU page faults' starts */
    size_t n_um_fault_t, cap_um_fault_t;
} pass_state;

struct gt_stack_name {
    uint32_t id;
    char *where;
};

/* model_core.c: what a record is */
int md_contains_ci(const char *hay, const char *needle);
int md_sync_blocks(uint32_t kind);
uint8_t md_host_kind_of(uint8_t dir, uint8_t src_kind, uint8_t dst_kind);
/* A copy the CPU waits for: synchronous calls, and pageable D2H (staged, returns when done). */
int md_copy_blocks(const gt_rec_api_memcpy *m, uint8_t hk);
int md_copy_is_item_like(const gt_rec_api_memcpy *m, uint8_t hk);
int md_cmp_u64(const void *a, const void *b);
/* Sort plain numbers in place (heapsort): qsort's merge sort takes a copy of the array. */
void md_sort_u64(uint64_t *v, size_t n);

/* model_core.c: the arrays several builders fill */
void md_note_time(gt_proc *p, uint64_t a, uint64_t b);
tid_stack *md_tid_for(pass_state *s, uint32_t tid);
void md_iv_add(pass_state *s, uint64_t a, uint64_t b);
void md_iv_merge(pass_state *s, uint64_t gap); /* sort, merge intervals closer than gap ns */
/* Sort [begin, end) intervals and merge those closer than gap: returns how many are left. The
 * idle time between intervals merged that way, and where, go to *merged (NULL: not counted;
 * overlapping or touching intervals make no gap). */
size_t md_merge_intervals(uint64_t (*iv)[2], size_t n, uint64_t gap, md_merged *merged);
/* Of the merged idle, the part a window holds (ns and gaps): inside(p, x, y) says how much of
 * [x, y) the window holds, and a bucket partly inside counts by that share. */
typedef uint64_t (*md_span_fn)(const gt_proc *p, uint64_t x, uint64_t y);
void md_merged_in(const gt_proc *p, const md_merged *m, md_span_fn inside, uint64_t *ns,
                  uint64_t *gaps);
void md_gap_add(gt_proc *p, size_t *cap, uint64_t a, uint64_t b); /* or a small gap */
/* A gap's copy time: a pageable copy's staging between its GPU records is the copy's, its call
 * seen or not. */
uint64_t md_gap_copy_ns(const gt_gap *g);
void md_bins_add(gt_proc *p, uint64_t a, uint64_t b, int covered);
/* The first of n intervals sorted by time and disjoint (gaps, windows, phases...) that ends after
 * t, or n: one binary search for every such array. */
size_t md_first_ending_after(const void *v, size_t n, size_t stride, size_t end_offset, uint64_t t);
#define MD_FIRST_ENDING_AFTER(arr, n, t)                                                           \
    md_first_ending_after((arr), (n), sizeof *(arr), offsetof(__typeof__(*(arr)), end_ns), (t))
size_t md_gap_lower(const gt_proc *p, uint64_t t); /* first gap whose end is after t */

/* model_core.c: the links pass 1 decided. Add in any order, and say which calls were read
 * (after the builders saw them: a cuDNN call or a GEMM then has its md_call_agg); after
 * md_links_sort each op has the last decision made for it (as a map's overwrite gave).
 * md_link_of: how the op was linked (GT_LINK_*, 0 none) and, for a cuDNN call's or a GEMM's
 * kernel, its call (else *call stays UINT32_MAX). */
void md_link_add(pass_state *s, uint64_t corr, uint32_t call, uint32_t how);
void md_link_call_seen(pass_state *s, uint64_t call);
void md_links_sort(pass_state *s);
int md_link_of(pass_state *s, uint64_t corr, uint32_t *call);
void md_links_free(pass_state *s);
size_t md_links_kept(const pass_state *s); /* links kept with their call, after md_links_sort */
/* The cuDNN aggregate (raw index) or GEMM (| 0x80000000) a library call joins, by its
 * correlation id: set by the builders as they read the call, asked for by the links (4 bytes a
 * call id in pages that may go to disk, id_pages.h; a map held every call before, ~36 bytes
 * each). md_call_agg: UINT32_MAX for none. */
void md_call_agg_set(pass_state *s, uint64_t call, uint32_t agg);
uint32_t md_call_agg(pass_state *s, uint64_t call);

#endif
