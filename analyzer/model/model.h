/* model.h — the aggregation pass behind `report`, `diff` and advice.
 *
 * One gt_proc per .gtrace file (a process, a rank). Reading is streaming and memory stays bounded
 * by aggregates: tables keyed by name/function/signature, one array of merged GPU busy intervals
 * (compacted when it grows), the idle gaps, and a fixed number of timeline bins; plus the links of
 * GPU ops to calls (op_link.h) and a compact log of what the steady window counts. Each file is
 * read twice: pass 1 aggregates, links and finds the GPU busy intervals, pass 2 attributes CPU
 * activity to the GPU's idle gaps, GPU time to cuDNN/cuBLAS calls and finds steps; the steady
 * window's figures then come from the log, or, for a file past 1 M records, from a third read of
 * it (model_steady.c: the log would grow with the run). `convert` reads pass 2 along with its own
 * reading.
 * All times are ns on CLOCK_REALTIME (the clock of CPU and CUPTI records alike). */
#ifndef GT_MODEL_H
#define GT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cudnn_names.h" /* op and dtype names, for the model's readers */
#include "gt_reader.h"
#include "gtrace_format.h"
#include "op_link.h"

#define GT_SHORT_KERNEL_NS 10000ull /* kernels shorter than 10 µs count as short */
#define GT_GAP_MIN_NS 20000ull      /* idle gaps shorter than this are launch latency, not kept */
#define GT_BIG_GAP_NS 1000000ull    /* a gap of 1 ms or more is a real stall */
/* A blocking device-to-host copy this small is a read-back of a result (loss.item(), a flag):
 * its time is a wait for the queued GPU work, so it counts as a synchronization. Larger ones are
 * data transfers: their time is mostly the copy itself and shows under copies. */
#define GT_ITEM_COPY_MAX_BYTES (1u << 20)
#define GT_TIMELINE_BINS 200
#define GT_STEP_MIN_COVER 0.5 /* pattern/graph steps must hold half the GPU's busy time */
/* Steps kept at most: past it, consecutive iterations make one step (memory per step is ~100
 * bytes over the analysis; GPUTRACE_STEPS_MAX overrides it, for the tests). */
#define GT_STEPS_MAX (1u << 20)

typedef struct gt_kernel_agg {
    char *name;    /* demangled, readable */
    char *mangled; /* as recorded */
    uint64_t count, total_ns, max_ns, short_count;
    uint64_t unlinked; /* runs that lead to no wrapped call */
    uint64_t first_ns; /* start of its first run */
    int is_nccl, tensor_cores, conv_like;
    int family; /* gt_kernel_family (inferred from the name) */
} gt_kernel_agg;

enum gt_kernel_family {
    GT_KF_NONE = 0,      /* not a convolution/GEMM kernel we recognise */
    GT_KF_IMPLICIT_GEMM, /* cuDNN implicit (precomputed) GEMM */
    GT_KF_WINOGRAD,
    GT_KF_FFT,
    GT_KF_TENSOR_CORE, /* xmma/hmma/sm90 tensor-core kernels */
    GT_KF_GEMM,        /* plain (s/d)gemm without tensor cores */
    GT_KF_CONV_OTHER,  /* a convolution kernel of another family (direct...) */
    GT_KF_COUNT
};
const char *gt_kernel_family_name(int family);
int gt_kernel_family_of(const char *mangled_or_demangled);

typedef struct gt_api_agg {
    uint64_t count, total_ns, max_ns, errors;
    int32_t first_error;
} gt_api_agg;

typedef struct gt_copy_agg { /* one per direction × host memory kind */
    uint64_t count, bytes, gpu_ns;
    uint64_t cpu_count, cpu_ns;           /* wrapped calls */
    uint64_t blocking_count, blocking_ns; /* synchronous calls (the CPU waited) */
    uint32_t top_stack;                   /* call site with most CPU time */
    uint64_t top_stack_ns;
} gt_copy_agg;

typedef struct gt_site_agg { /* sync stalls (and other call-site tallies) per function × stack */
    uint32_t func, stack_id;
    uint64_t count, total_ns, max_ns;
    uint64_t steady_count, steady_ns; /* in the steady window, outside JIT and autotuning */
    int in_autotuner; /* the call site is an autotuner's (cudnn_frontend::time_sorted_plan...):
                         its waits time candidates, they are autotuning's cost, not a stall */
} gt_site_agg;

typedef struct gt_cudnn_choice { /* one engine/algorithm used for an op signature */
    char *text;                  /* "engine 38" or "IMPLICIT_PRECOMP_GEMM" */
    char *notes;                 /* "tensor cores, winograd" */
    int tensor_cores;
    uint64_t execs, gpu_ns, api_ns;
    uint64_t autotune_execs, autotune_ns; /* API + GPU time spent trying this choice */
    uint64_t autotune_gpu_ns;             /* the trials' kernel time alone (0: not joined) */
    uint64_t autotune_last_ns;            /* the end of its last execute flagged as a trial */
} gt_cudnn_choice;

#define GT_MAX_CHOICES 12
typedef struct gt_cudnn_opstat {
    char *signature; /* "conv_fwd x=64x3x224x224 w=64x3x7x7 y=... float NCHW s2 p3" */
    int op_kind, dtype, legacy;
    int autotuned, heuristic, inferred;
    uint64_t find_calls, find_ns, get_calls, get_ns; /* legacy Find/Get_v7 */
    uint64_t plans;                                  /* backend plans finalized for this op */
    int n_choices;
    gt_cudnn_choice choices[GT_MAX_CHOICES];
    int chosen; /* index of the choice with most real (non-autotune) executions, -1 none */
    uint32_t stack_id;
    /* What autotuning measured of the alternatives (issue 21 item 6), ms per run, -1 unknown:
     * the winner's time and the time of the heuristics' pick (the first candidate a backend
     * autotuner tries; Get_v7's first entry on the legacy path), from cuDNN's Find perf table
     * or the trial executions' kernels. */
    int timed_source;     /* enum gt_timed_source */
    int timed_candidates; /* alternatives with a time */
    double timed_winner_ms, timed_heuristic_ms;
    char timed_winner[40], timed_heuristic[40];
    uint64_t autotune_first_ns, autotune_last_ns; /* first trial or Find begins, last ends */
    int64_t batch;    /* N of the input tensor (x), 0 unknown: diff's per-sample figures */
    char x_shape[48]; /* the input tensor's dims ("32x64x56x56"), "" unknown: shapes over time */
    /* Executes the recorder flagged as trials while the op never tried a second plan (no Find
     * call, no autotuner frame): the first execution of one plan, slow because code is loaded
     * and plans are built on first use, not autotuning (issue 29 item 5). Counted in execs. */
    uint64_t first_use_execs, first_use_ns, first_use_first_ns;
    int autotuner_frames; /* a trial was called from an autotuner (gt_call_site_is_autotuner) */
    /* When its trials ended: the last flagged execute of a candidate it did not choose. Later
     * flagged executes of the chosen plan are ordinary ones an unrelated event marked. */
    uint64_t autotune_trials_end_ns;
} gt_cudnn_opstat;
enum gt_timed_source { GT_TIMED_NONE = 0, GT_TIMED_FIND_TABLE, GT_TIMED_TRIAL_KERNELS };

typedef struct gt_gemm_agg {
    uint32_t func;
    int64_t m, n, k, batch;
    int32_t atype, compute_type;
    uint64_t count, api_ns, gpu_ns;
    /* of gpu_ns, kernels that ran on tensor cores: a handle's math mode (cublasSetMathMode
     * TF32) is not in the call's arguments, its kernels say what ran */
    uint64_t tensor_core_gpu_ns;
} gt_gemm_agg;

/* Unified memory (issue 30): what CUPTI's counters (GT_REC_GPU_UM) and the managed-memory calls
 * tell, per process (model_um.c). A kernel that touches managed memory on the host stalls while
 * the driver services the GPU page fault and migrates the pages on demand: that time, while the
 * GPU was busy, is the stall. */
typedef struct gt_um_stats {
    int counters_on;      /* the recorder had CUPTI's counters on (GT_HDR_UM_COUNTERS) */
    int counters_refused; /* managed memory, but CUPTI refused them (GT_HDR_UM_REFUSED) */
    uint64_t records;
    uint64_t cpu_faults;
    uint64_t gpu_faults, gpu_fault_groups, gpu_fault_ns; /* records, their groups, service time */
    /* migrations [0] host to device, [1] device to host */
    uint64_t migrations[2], migration_bytes[2], migration_ns[2];
    uint64_t demand_bytes[2]; /* on demand: faults and the driver's speculation around them */
    uint64_t user_bytes[2];   /* the program's prefetches (cudaMemPrefetchAsync) */
    uint64_t evicted_bytes;   /* device to host to make room on the GPU */
    uint64_t dtod_bytes;
    uint64_t thrashing, throttling, throttling_ns, remote_maps;
    /* GPU fault service and on-demand host-to-device migration (union) while the GPU was busy */
    uint64_t stall_ns;
    uint64_t steady_stall_ns, steady_gpu_faults; /* the same in the steady window */
    uint64_t first_fault_ns;                     /* the first GPU fault, 0 none */
    /* the calls */
    uint64_t managed_allocs, managed_bytes;
    uint64_t prefetch_calls, prefetch_bytes, advise_calls;
    uint32_t first_alloc_stack; /* call site of the first managed allocation */
} gt_um_stats;

/* What the CPU did during an idle gap of the GPU, by kind (gt_gap_ns). */
enum gt_gap_part {
    GT_GAP_SYNC,      /* in CUDA calls: blocking syncs (and read-back copies) */
    GT_GAP_COPY,      /* copies */
    GT_GAP_LAUNCH,    /* launches */
    GT_GAP_ALLOC,     /* allocations */
    GT_GAP_OTHER_API, /* other CUDA calls */
    /* covered by a CPU collective (a gloo thread between handing its data over and taking the
     * result back) */
    GT_GAP_COLLECTIVE,
    GT_GAP_JIT, /* of the CUDA calls' time, JIT or module loading calls */
    /* of GT_GAP_COLLECTIVE, the part after the last rank arrived: the data moving, every rank
     * there (model_ranks.c matches the collectives; 0 when they were not matched) */
    GT_GAP_TRANSFER,
    /* between GPU records of one pageable copy (its CPU-side staging through the driver's bounce
     * buffer), whether or not a wrapper saw the copy's call */
    GT_GAP_STAGING,
    GT_GAP_PARTS
};

/* An idle period of the GPU and what the CPU did meanwhile. 64 bytes: a long run keeps millions
 * (112 before the parts were narrowed). */
typedef struct gt_gap {
    uint64_t start_ns, end_ns;
    /* ns >> shift, by enum gt_gap_part (read gt_gap_ns, write gt_gap_set/gt_gap_add): exact while
     * each is under 2^32 ns (4.29 s); a longer one makes the gap's shift grow, the parts then
     * exact to 2^shift ns (2 ns for up to 8.6 s, 1 µs for over an hour) */
    uint32_t part[GT_GAP_PARTS];
    uint8_t shift;
    uint8_t after_sync;    /* began when a blocking call returned */
    uint8_t ends_with_h2d; /* the GPU work that ends it is a host-to-device copy (a batch) */
    int8_t cause;          /* enum gt_idle_cause, the one that took most of the gap */
    int8_t phase; /* enum gt_phase_kind the gap falls in (the one covering most of the gap) */
} gt_gap;

uint64_t gt_gap_ns(const gt_gap *g, int part);
void gt_gap_set(gt_gap *g, int part, uint64_t ns);
void gt_gap_add(gt_gap *g, int part, uint64_t ns);

typedef struct gt_bin {
    uint64_t gpu_busy_ns;
    uint64_t covered_ns; /* GPU sampling: the part of the bin inside a window (else unused) */
} gt_bin;

typedef struct gt_step {
    uint64_t start_ns, end_ns;
} gt_step;

/* Where the steps came from, best first (issue 21 item 2): the program's own markers before
 * repeating launch patterns before none. */
enum gt_step_source_kind {
    GT_STEPSRC_NONE = 0,
    GT_STEPSRC_USER,           /* --step-range NAME */
    GT_STEPSRC_PROFILER_STEP,  /* torch.profiler's ProfilerStep#N ranges */
    GT_STEPSRC_NVTX,           /* an NVTX range of the default or a user domain */
    GT_STEPSRC_PROFILER_RANGE, /* cudaProfilerStart/Stop windows */
    GT_STEPSRC_GRAPH_LAUNCH,   /* repeated CUDA graph launches */
    GT_STEPSRC_KERNEL_PATTERN, /* a repeating launch pattern (one kernel repeated included) */
    GT_STEPSRC_CALL_PATTERN,   /* GPU-sampled trace: a repeating pattern of the calls */
    GT_STEPSRC_ITERATION_WAIT, /* the wait after an operation run once an iteration */
};

/* Phases of a process's timeline (issue 21 item 1). The spans are disjoint, in time order, and
 * cover [t_min, t_max]; time outside the steady state is reported by phase name, never as idle
 * blamed on data loading. */
enum gt_phase_kind {
    GT_PHASE_STARTUP = 0, /* process start to the first GPU work: context creation, module loads */
    GT_PHASE_JIT,         /* JIT compilation and module loading (NVRTC, nvJitLink, cuModuleLoad*,
                             compiler children such as ptxas/nvcc/gcc) after start-up */
    GT_PHASE_COMPILE,     /* a framework's compiler in the process (torch.compile's Dynamo and
                             Inductor, XLA): its frames at CUDA calls, its compile workers, and the
                             JIT and idle time around them (model_compile.c) */
    GT_PHASE_AUTOTUNE,    /* cuDNN autotuning (Find calls, benchmark-mode trials) */
    GT_PHASE_WARMUP,      /* steps before the steady state */
    GT_PHASE_STEADY,   /* the steady window (the whole GPU-active run when no steps were found) */
    GT_PHASE_TEARDOWN, /* after the last step / the last GPU work */
    GT_PHASE_COUNT
};
typedef struct gt_phase_span {
    int kind; /* enum gt_phase_kind */
    uint64_t start_ns, end_ns;
} gt_phase_span;
/* One compilation by a framework's compiler in the process (model_compile.c). */
typedef struct gt_compilation {
    uint64_t start_ns, end_ns;
    uint64_t phase_ns; /* its time in the compilation phase */
} gt_compilation;
const char *gt_phase_name(int kind); /* "start-up", "JIT compilation", "cuDNN autotuning", ... */
const char *gt_phase_key(int kind);  /* "startup", "jit", "compile", ...: JSON keys */
/* Compilation, JIT and autotuning: time the report names by its phase, never as the steady
 * state's idle time. */
int gt_phase_is_named_cost(int kind);

/* The frameworks in a process (model_framework.c), a bitmask: what the advice words its
 * remedies for, from its loaded modules, the Python frames of its stacks, NVTX, its kernels'
 * names and its compile workers. GT_FW_PYTHON: a Python interpreter; GT_FW_NATIVE: none (a C/C++
 * program). */
enum gt_framework {
    GT_FW_PYTORCH = 1u << 0,
    GT_FW_TORCH_COMPILE = 1u << 1, /* torch.compile: Dynamo/Inductor frames, workers, kernels */
    GT_FW_TRITON = 1u << 2,
    GT_FW_CUPY = 1u << 3,
    GT_FW_JAX = 1u << 4, /* XLA through JAX */
    GT_FW_TENSORFLOW = 1u << 5,
    GT_FW_PYTHON = 1u << 6,
    GT_FW_NATIVE = 1u << 7,
    GT_FW_COUNT = 8
};
const char *gt_framework_name(unsigned bit); /* "PyTorch", "torch.compile", ..., "CUDA C/C++" */
const char *gt_framework_key(unsigned bit);  /* "pytorch", "torch_compile", ..., "cuda": JSON */

/* What the CPU was doing while the GPU sat idle (issue 21 item 3), one cause per gap. */
enum gt_idle_cause {
    GT_IDLE_CUDA_CALL = 0, /* inside a CUDA call (sync, launch, allocation...) other than a copy */
    GT_IDLE_COPY,          /* inside a copy call, or a pageable copy's CPU-side staging */
    GT_IDLE_JIT,           /* JIT compilation or module loading */
    GT_IDLE_COMPILE,       /* a framework's compiler in the process (GT_PHASE_COMPILE) */
    GT_IDLE_COLLECTIVE,    /* waiting in a collective (NCCL, or a CPU collective such as gloo) for
                              a later rank; the whole collective when the ranks were not matched */
    GT_IDLE_COLLECTIVE_TRANSFER, /* in a matched CPU collective after the last rank arrived */
    GT_IDLE_DATA_LOADING,        /* Python work with no CUDA call while DataLoader workers exist */
    GT_IDLE_HOST_WORK,           /* the CPU made no CUDA call, no sign of data loading */
    GT_IDLE_UNKNOWN,
    GT_IDLE_CAUSE_COUNT
};
const char *gt_idle_cause_name(int cause);
const char *gt_idle_cause_key(int cause); /* "cuda_call", "collective"...: JSON keys */

/* A collective as one rank saw it: when the rank reached it and when it was done. NCCL: a kernel
 * (it starts when the rank's stream gets there, ends when every rank has arrived and the data
 * moved). CPU collectives (gloo): a collective thread's wait, from the end of the blocking call
 * that waited for the rank's data on the host to the start of the copy that takes the result
 * back. A rank reaches it when its program has handed the data over AND the data is on the host:
 * the program hands over on its own threads, with a last call on the collective's stream (the
 * stream waits for the caller's work, the tensors are copied to the host on it); the collective
 * thread's blocking call then waits for that copy, so its end is the arrival. A rank that only
 * receives (a broadcast's other ranks) has no data to wait for and its collective thread makes no
 * blocking call: it arrives at the handover (model_idle.c). */
enum gt_collective_kind { GT_COLL_NCCL = 0, GT_COLL_CPU = 1 };
typedef struct gt_collective {
    uint64_t arrive_ns, done_ns;
    int kind;
    uint64_t last_arrive_ns; /* the last rank's arrival when matched across ranks, else 0 */
    uint64_t stream;         /* CPU: the stream its result is copied back on, else 0 */
    uint64_t handover_ns;    /* CPU: the program's handover (above), 0 unknown or NCCL */
} gt_collective;

/* What the last rank at a collective did instead (model_ranks.c): its time from the previous
 * collective, which every rank left together, to its arrival, by what it was doing, beyond what
 * the other ranks (their median) did in that time. */
enum gt_late_what {
    GT_LATE_GPU = 0,      /* its GPU was busy (more GPU work, a slower or shared GPU) */
    GT_LATE_CUDA_CALL,    /* in CUDA calls: syncs, copies, launches, allocations */
    GT_LATE_DATA_LOADING, /* no CUDA call, then a batch copied to the GPU; or DataLoader workers */
    GT_LATE_HOST_WORK,    /* no CUDA call: CPU work, or sleeping/waiting (indistinguishable
                             without CPU samples) */
    GT_LATE_COMPILE,      /* compilation, JIT or autotuning */
    GT_LATE_COLLECTIVE,   /* in other collectives */
    GT_LATE_COUNT
};
const char *gt_late_what_name(int what); /* "CPU work without CUDA calls", ... */
const char *gt_late_what_key(int what);  /* "host_work", ...: JSON keys */

/* The rank that reaches the collectives last (model_ranks.c). Each collective is matched across
 * ranks (the collectives a process group runs are the same, in the same order, on every rank:
 * the one that ends nearest in time); at each, the rank that arrives last is late by its arrival
 * after the median of the others', and the others wait for it. A rank's lateness in a step is the
 * sum over the step's collectives where it arrived last; the straggler is the rank with the most
 * lateness in the steady window. Figures are per steady step of the first rank's steps (per_step),
 * else over the steady window. */
typedef struct gt_straggler {
    int found;                   /* >= 2 ranks with matched collectives */
    int rank, pid, kind;         /* kind: enum gt_collective_kind */
    size_t rounds, last_in;      /* steady steps with matched collectives, those it was last in */
    size_t collectives, last_at; /* matched steady collectives, those it arrived last at */
    int per_step;                /* 1: per steady step; 0: over the steady window */
    double lateness_ms;          /* its lateness per step (median over the steps) */
    double period_ms;            /* the step (median), or the steady window */
    double others_wait_ms;       /* per step, the mean over the other ranks of their wait for it */
    double instead_ms[GT_LATE_COUNT]; /* per step, what it did instead beyond the others */
} gt_straggler;

typedef struct gt_proc {
    /* identity and run info */
    char *path, *exe, *cmdline, *host;
    gt_file_header hdr;
    int open_status; /* gt_open_status */
    char open_error[256];
    int damaged; /* CRC failures, sequence gaps, truncation */
    uint64_t chunks_damaged, chunk_seq_gaps, unknown_records, records;
    int truncated;
    uint64_t records_lost;      /* GT_REC_LOST counts */
    uint64_t lost_by_reason[8]; /* the same by enum gt_lost_reason (0: other) */
    uint64_t
        calls_not_recorded; /* counted by the end record: after the end, from signal handlers */
    uint32_t end_reason;    /* enum gt_end_reason, 0 without an end record */
    /* calls that gave the GPU work before CUPTI was attached (end record, 1.5): recorded, but their
     * kernels, copies and memsets are not in the trace */
    uint64_t calls_before_cupti;
    uint64_t cupti_dropped, cupti_overhead_ns;
    gt_link_lag link_lag;  /* pass 1: how far apart calls, ops and links are (op_link.h) */
    uint64_t t_min, t_max; /* over all timestamps */
    uint64_t cpu_api_records, gpu_records, gpu_api_records;

    /* CPU side */
    gt_api_agg api[256];
    uint64_t launches, launch_ns;
    gt_copy_agg copies[5][6]; /* [gt_memcpy_dir][host gt_mem_kind] */
    int copies_from_gpu;      /* copy table GPU times come from CUPTI records */
    gt_site_agg *sync_sites;
    size_t n_sync_sites, cap_sync_sites;
    uint64_t sync_total_ns,
        sync_count;       /* blocking synchronizations, incl. synchronous D2H copies */
    int syncs_from_cupti; /* no wrapper saw them: CUPTI sync records */
    uint64_t alloc_calls, alloc_ns;
    gt_um_stats um; /* unified memory: managed allocations, faults, migrations (model_um.c) */
    int32_t kernel_image_errors, insufficient_driver_errors, other_errors;

    /* GPU side */
    gt_kernel_agg *kernels;
    size_t n_kernels, cap_kernels;
    uint64_t kernel_count, kernel_ns, short_kernel_count, nccl_ns;
    uint64_t kernel_ns_by_device[GT_MAX_DEVICES]; /* CUDA device ordinal: which GPU it used */
    /* linked to their call: callback pair, anchors and launch order (order_link.h), queued time */
    uint64_t kernels_by_pair, kernels_by_order, kernels_by_time;
    /* unlinked kernels that calls on several threads at once could each have launched (their
     * bounds overlap: CUPTI numbers every thread's calls from one counter; op_link.h) */
    uint64_t kernels_ambiguous;
    /* of those linked by order, kernels of calls on several threads at once told apart by their
     * stream; kernels inside library calls' anchors on none of their streams (order_link.h) */
    uint64_t kernels_by_stream, kernels_other_stream;
    uint64_t gpu_first_ns, gpu_last_ns, gpu_busy_ns;
    gt_gap *gaps;
    size_t n_gaps;
    uint64_t small_gap_ns, small_gap_count; /* gaps shorter than GT_GAP_MIN_NS */
    /* A run of more GPU busy intervals than the model keeps (md_intervals_max(): a long,
     * launch-bound run): to bound memory, idle gaps of up to merged_gap_max_ns were merged into
     * busy intervals. Counted, and where they fell (to within merged_placed_ns): the busy time,
     * the timeline and the steady window's figures give them back as short idle gaps. */
    uint64_t merged_idle_ns, merged_idle_gaps, merged_gap_max_ns, intervals_max;
    uint64_t merged_placed_ns; /* where they fell is known to within this */

    /* libraries */
    gt_cudnn_opstat *cudnn;
    size_t n_cudnn;
    int cudnn_calls_seen; /* wrapped cuDNN calls; 0 with convolution kernels => inferred table */
    uint64_t autotune_ns; /* all autotuning: Find calls, autotune executes */
    gt_gemm_agg *gemms;
    size_t n_gemms;

    /* time structure */
    gt_bin bins[GT_TIMELINE_BINS];
    uint64_t bin_ns, bin_origin;
    gt_step *steps;
    size_t n_steps;
    char step_source[128]; /* "NVTX range 'train_step'", "kernel pattern: <name>", "" */
    int step_source_kind;  /* enum gt_step_source_kind */
    char step_why[512];    /* why this marker: "the program's own NVTX range; 'cub::...' is a
                              library range", or why none was usable */
    /* iterations a step holds: 0 or 1, or more where the run has more than the analysis keeps
     * (GT_STEPS_MAX: a tiny loop of hours would make tens of millions) */
    size_t step_iterations;
    size_t warmup_steps;
    double step_ms_median, step_ms_min, step_ms_mean_steady;
    double warmup_ms_total;
    uint64_t steady_start_ns, steady_end_ns;
    /* per-step figures over the steady window (or the whole run when no steps were found) */
    double steady_sync_ms_per_step, steady_copy_ms_per_step, steady_alloc_per_step, steady_busy_pct,
        steady_nccl_ms_per_step, steady_idle_unexplained_ms_per_step,
        steady_after_sync_idle_ms_per_step, steady_short_idle_ms_per_step;
    double steady_cpu_elsewhere_ms_per_step; /* GPU idle, CPU made no call (any gap >= 20 us) */
    double steady_steps; /* steps in the steady window (1 when no steps were found) */
    /* the steady figures came from a third read of the file (past the steady log's limit,
     * model_steady.c): the same figures, in memory that does not grow with the run */
    int steady_reread;
    uint64_t largest_gap_start_ns, largest_gap_ns;    /* the largest unexplained steady gap */
    uint64_t copy_then_sync_count, copy_then_sync_ns; /* async H2D copy + immediate stream sync */
    uint32_t copy_then_sync_stack;
    uint64_t steady_alloc_calls, steady_alloc_ns, steady_kernels, steady_short_kernels;
    uint64_t steady_idle_unexplained_ns, steady_big_gaps;
    uint64_t after_sync_idle_ns; /* GPU idle time in gaps that began with a blocking call */
    /* launch-latency gaps (< GT_GAP_MIN_NS) in which a blocking call returned, steady window:
     * the drained queue waiting for the next launch (model_time.c) */
    uint64_t steady_after_sync_small_ns;
    /* GPU idle while the CPU was launching (gaps < GT_GAP_MIN_NS, and the part of gaps < 1 ms not
     * spent in sync, copy, allocation or other non-launch calls), whole run */
    uint64_t launch_idle_ns;
    /* launch-bound, steady window (model_time.c): the gaps that hold launch idle (per step, the
     * idle itself is steady_short_idle_ms_per_step), the kernels' GPU time, the launch calls a
     * wrapper saw and their CPU time, and the launch entry point with most calls (0 none) */
    double steady_launch_gaps_per_step;
    uint64_t steady_kernel_ns, steady_launch_calls, steady_launch_call_ns;
    uint32_t launch_func;
    uint64_t steady_cupti_sync_count, steady_cupti_sync_ns; /* CUPTI-only syncs (no call site) */
    /* copies from/to pageable host memory in the steady window ([0] H2D, [1] D2H; results read
     * back, loss.item(), are syncs): the GPU's time for them when CUPTI recorded copies, else
     * their calls' time, and their bytes (KiB-rounded) */
    uint64_t steady_pageable_count[2], steady_pageable_ns[2], steady_pageable_bytes[2];
    uint64_t idle_unexplained_ns, idle_sync_ns, idle_copy_ns, idle_launch_ns, idle_alloc_ns,
        idle_other_ns; /* whole run, gaps >= GT_GAP_MIN_NS */

    /* phases and idle causes (issue 21 items 1 and 3) */
    gt_phase_span *phases;
    size_t n_phases;
    uint64_t phase_ns[GT_PHASE_COUNT]; /* total time in each phase */
    /* GPU idle in gaps >= GT_GAP_MIN_NS while the CPU made no CUDA call, by phase: what the
     * steady state's idle figures leave out lies in the other phases */
    uint64_t phase_idle_ns[GT_PHASE_COUNT];
    uint64_t jit_calls, jit_call_ns;        /* JIT/module-load calls (NVRTC, cuModuleLoad*...) */
    uint64_t jit_children, jit_children_ns; /* compiler processes (ptxas, gcc...) it started */
    /* in-process compilation (model_compile.c): CUDA calls made with a compiler's frame on the
     * stack (Dynamo, AOTAutograd, Inductor, XLA), the compile-worker processes it started
     * (Inductor's pool), and the compilations: spans of the compilation phase that lie apart
     * (separated by a step or by the GPU busy most of the time between); the first is the first
     * compilation, the later ones recompile (or compile a function first called later). */
    uint64_t compile_calls, compile_call_ns;
    uint32_t compile_workers;
    uint64_t compile_pool_start_ns; /* the first worker's start, 0 none */
    gt_compilation *compilations;   /* in time order */
    size_t n_compilations;
    uint64_t compile_first_ns, recompile_ns; /* phase time of the first, of the later ones */
    uint64_t end_ns; /* when the recorder ended the trace (GT_REC_END), 0 unknown */
    uint64_t idle_cause_ns[GT_IDLE_CAUSE_COUNT];        /* GPU idle time by cause, whole run */
    uint64_t steady_idle_cause_ns[GT_IDLE_CAUSE_COUNT]; /* the same in the steady window */
    gt_collective *collectives; /* in time order of their end (model_idle.c) */
    size_t n_collectives;
    uint64_t collectives_dropped; /* past the model's cap (COLLECTIVES_MAX), not kept */
    uint64_t steady_small_gap_ns; /* gaps < GT_GAP_MIN_NS inside the steady window */
    /* NCCL kernels spinning for a late rank (model_ranks.c), counted in idle_cause_ns too */
    uint64_t nccl_wait_ns, steady_nccl_wait_ns;
    /* at the matched steady collectives (model_ranks.c), per straggler step: this rank's lateness
     * where it arrived last, and its own wait for later ranks; collectives it was last at */
    double coll_late_ms_per_step, coll_wait_ms_per_step;
    size_t coll_last_at, coll_matched;
    int dataloader_workers; /* forked children of this process running the same program */
    /* in gaps >= GT_BIG_GAP_NS that began with a blocking call, steady window: the time no thread
     * made a CUDA call nor waited in a collective (the CPU's own work after the wait) */
    uint64_t steady_after_sync_nocall_ns;

    /* GPU sampling (GPUTRACE_SAMPLE, GT_HDR_GPU_SAMPLED; model_sample.c): CUPTI recorded only in
     * windows, so every GPU figure is over the windows; time outside them is not GPU idle. */
    int gpu_sampled;
    gt_step *gpu_windows; /* from the CAPTURE records of source 4, clipped to [t_min, t_max] */
    size_t n_gpu_windows;
    uint64_t gpu_window_ns; /* their total */
    uint64_t gpu_span_ns;   /* the windows' part of [gpu_first, gpu_last] (busy % is over it) */
    /* Whole-run GPU totals ≈ ×this (1 unsampled): the calls that give the GPU work over those
     * inside the windows (gpu_extrapolation_by_calls), else run time over window time. */
    double gpu_extrapolation;
    int gpu_extrapolation_by_calls;
    /* The steady window's part the GPU's per-step figures come from: the steady steps that lie
     * wholly inside a window (without steps: the steady window's part inside windows). The
     * steady GPU ns figures above (idle, causes, kernels) are scaled to the whole steady window
     * (×steady_steps / steady_gpu_steps), so per step and shares read as for a full trace. */
    gt_step *steady_gpu;
    size_t n_steady_gpu;
    uint64_t steady_gpu_ns;
    double steady_gpu_steps;      /* 0 with sampling and no whole steady step in a window */
    size_t gpu_steps;             /* steps (of all) wholly inside a window */
    int gpu_per_step_unavailable; /* sampled, steps found, none wholly inside a window */

    /* frameworks (enum gt_framework bits) and the library or file that told the first one */
    unsigned frameworks, frameworks_nvtx;
    char framework_evidence[96];
    /* the JIT and autotuning phases' time inside the steady window: its figures leave it out */
    uint64_t steady_named_phase_ns;

    /* call sites: stack id -> "train.py:57 (train)" or "#12" */
    struct gt_stack_name *stacks;
    size_t n_stacks, cap_stacks;

    void *priv; /* pass-time state */
} gt_proc;

/* The framework whose terms a launch or compilation remedy uses: torch.compile, JAX, CuPy,
 * Triton (its own kernels, not Inductor's), PyTorch, else 0 (CUDA C/C++). */
unsigned gt_proc_remedy_framework(const gt_proc *p);

/* Choices the user makes for the analysis; set before loading (gt_run_load keeps them). */
typedef struct gt_model_options {
    const char *step_range; /* --step-range NAME: the NVTX range that is a step, NULL = choose */
} gt_model_options;

/* A process of the run as its trace's header or a line of the recorder's per-host
 * gputrace-<host>.procs file tells it (a process that ends without CUDA activity leaves only the
 * line): what the parent chains and the compiler children's JIT time are found from. */
typedef struct gt_proc_note {
    int32_t pid, ppid;
    uint64_t start_ns, end_ns; /* CLOCK_REALTIME; end 0 when unknown */
    char *exe, *host;
    int quiet;     /* no CUDA activity: a .procs line, or a trace without CUDA records */
    int compiler;  /* ptxas, nvcc, cicc, gcc, cc1, ld...: its time is JIT of its CUDA ancestor */
    char *cmdline; /* its trace's command line ("" from a .procs line) */
    /* the compile-worker parent it names (Inductor's "compile_worker ... --parent=PID"), else 0 */
    int32_t compile_parent;
    int pending; /* a trace whose header is read only when it is loaded */
} gt_proc_note;

typedef struct gt_run {
    gt_proc *procs;
    size_t n;
    int any_not_trace, any_damaged;
    gt_model_options opts;
    gt_straggler straggler; /* across ranks, set by gt_run_cross_process */
    gt_proc_note *notes;    /* every process known (traces and .procs lines of the run folders) */
    size_t n_notes;
} gt_run;

/* True for the executables whose run is compilation (ptxas, nvcc, gcc, cc1, ld...). */
int gt_exe_is_compiler(const char *exe);

/* Load files (folders are expanded to the *.gtrace files they contain, sorted). Errors per file are
 * kept in procs[i].open_status/open_error; returns 0 when at least one trace could be read, -1
 * otherwise (messages already printed to stderr when verbose). */
int gt_run_load(gt_run *run, const char *const *paths, int n, int verbose);
void gt_run_free(gt_run *run);
/* Frees each process's idle gaps (n_gaps becomes 0): for a caller that needs only the figures the
 * load made of them (diff: steps, tables, advice), not the gaps themselves — a long run's gaps are
 * its largest array (64 bytes each, one or more a step). */
void gt_run_drop_gaps(gt_run *run);

/* The same in steps, for a caller that reads each file once more anyway (convert): gt_run_open
 * reads pass 1 of every file; the caller then gives each readable file's records, all of them
 * in file order, to gt_proc_pass2_record, and calls gt_proc_finish (pass2_complete 0 when it
 * could not read the file to its end: the steady-window figures then stay 0). */
int gt_run_open(gt_run *run, const char *const *paths, int n, int verbose);
void gt_proc_pass2_record(gt_proc *p, const gt_record *r);
void gt_proc_finish(gt_proc *p, int pass2_complete);
/* What needs every process of the run (model_ranks.c): DataLoader workers, idle causes that
 * depend on them, collectives matched across ranks (run->straggler, NCCL wait). gt_run_load
 * calls it; a caller of gt_run_open calls it once every process is finished. */
void gt_run_cross_process(gt_run *run);
/* The call-site table pass 1 read (valid until gt_proc_finish), NULL when none. */
struct gt_symtab *gt_proc_symtab(gt_proc *p);

/* Helpers shared by report, diff and advice. */
const char *gt_proc_call_site(const gt_proc *p, uint32_t stack_id); /* NULL when unknown */
double gt_proc_duration_ms(const gt_proc *p);
double gt_proc_busy_pct(const gt_proc *p); /* GPU busy over [gpu_first, gpu_last] (windows) */
/* GPU sampling: the windows' share of the run in % (100 when not sampled), and the time in ms the
 * GPU figures cover (the windows' time; the run's duration when not sampled). */
double gt_proc_gpu_coverage_pct(const gt_proc *p);
double gt_proc_gpu_covered_ms(const gt_proc *p);
/* A whole-run total from GPU records as the report shows it: extrapolated by the windows. */
double gt_proc_gpu_total(const gt_proc *p, double in_windows);
/* "≈ " / "" and " (extrapolated ×4.0 from 3 windows covering 25% of the run)" / "" */
const char *gt_proc_estimate_mark(const gt_proc *p);
const char *gt_proc_extrapolation_note(const gt_proc *p);
/* The part of [a, b] in the steady window's GPU-measured part (the steady window unsampled). */
uint64_t gt_proc_steady_gpu_overlap(const gt_proc *p, uint64_t a, uint64_t b);
int gt_proc_has_data(const gt_proc *p);
int gt_proc_rank(const gt_proc *p);       /* hdr.rank, or -1 */
int gt_proc_gpu_device(const gt_proc *p); /* the device of most kernel time, or -1 */
/* The framework the program is written against (one enum gt_framework bit): PyTorch before
 * JAX, TensorFlow, CuPy, Triton (which run beside PyTorch), plain Python, native. */
unsigned gt_proc_framework(const gt_proc *p);
/* Whether a call site's text names an autotuner (cudnn_frontend::time_sorted_plan, cudnnFind*,
 * XLA's autotuners and algorithm pickers): its calls time candidates. */
int gt_call_site_is_autotuner(const char *site);
/* enum gt_step_source_kind as the JSON report names it: "nvtx", "graph_launch"... */
const char *gt_step_source_kind_name(int kind);
/* In step_why, before the markers that were not taken and why ("'cub::DeviceReduce::Sum' is a
 * library range (CCCL)"). */
#define GT_STEP_WHY_NOT_USED "not used: "
/* step_why for one line: the markers not used left out (the steps section has them), a reason over
 * max characters cut at a word outside any parenthesis, with "..." (gt_fmt's buffer). */
const char *gt_step_why_summary(const char *why, size_t max);
/* --step-range NAME (run->opts.step_range) found in at least one process of the run, or not
 * asked for: 1; else 0 after a message on stderr ("gputrace report: --step-range 'x': no NVTX
 * range of that name in any trace (ranges: 'train_step' x20)"), for the caller to exit 2. */
int gt_run_step_range_check(const gt_run *run);
/* The library an NVTX range belongs to by its domain or name ("CCCL", "XLA", "PyTorch"), NULL when
 * it may be the program's own: a library's ranges are never steps. */
const char *gt_step_library(const char *domain, const char *name);

#endif
