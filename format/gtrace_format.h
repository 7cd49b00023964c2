/* gtrace_format.h — the on-disk layout of a .gtrace file (format version 1.x).
 *
 * Shared by the recorder (libgputrace.so) and the analyzer. Everything is little-endian on the
 * machines we support; the header carries an endianness mark so a reader can refuse a foreign file.
 * docs/format.md is the prose specification; keep both in step.
 *
 * File  = header (header_size bytes) followed by chunks until end of file.
 * Chunk = gt_chunk_header + payload_len bytes of records. CRC32 (zlib) covers the payload.
 * Record = gt_record_header + body; size counts the header and is a multiple of 8.
 * Unknown record kinds are skipped by size and counted, so new kinds never break old readers.
 * A minor version bump adds kinds or appends fields at the end of a body (readers take
 * min(size, known) bytes); a major bump is incompatible and refused.
 */
#ifndef GTRACE_FORMAT_H
#define GTRACE_FORMAT_H

#include <stddef.h> /* offsetof */
#include <stdint.h>

#define GT_MAGIC "GPUTRACE" /* 8 bytes, no NUL stored */
#define GT_VERSION_MAJOR 1
#define GT_VERSION_MINOR                                                                           \
    5 /* 1.2: GT_REC_END, GT_HDR_END_RECORD, GT_HDR_OTHER_PROFILER;                                \
         1.3: gt_rec_end counts interrupted and nested calls; GT_REC_CAPTURE, GT_REC_FLIGHT,       \
         GT_HDR_HW_TRACE, GT_HDR_CAPTURE_WINDOWS, GT_HDR_FLIGHT_RECORDER, GT_HDR_GPU_SAMPLED;      \
         1.4: GT_REC_GPU_UM, GT_RF_VIA_CUPTI, GT_HDR_UM_COUNTERS, GT_HDR_UM_REFUSED;               \
         1.5: gt_rec_end counts the GPU calls made before CUPTI was attached */
#define GT_ENDIAN_MARK 0x01020304u
#define GT_CHUNK_MAGIC 0x4B435447u /* "GTCK" read as little-endian u32 */
#define GT_MAX_DEVICES 16
#define GT_MAX_CHUNK_PAYLOAD (64u << 20) /* a reader treats larger lengths as damage */

/* ---------------------------------------------------------------- header */

typedef struct gt_device_info {
    char name[64];
    int32_t ordinal;
    int32_t cc_major;
    int32_t cc_minor;
    int32_t sm_count;
    uint64_t total_mem_bytes;
} gt_device_info; /* 88 bytes */

/* Versions found at run time. Zero means "not seen". The recorder rewrites the header in place
 * (pwrite, header_crc32 recomputed) when these become known, so a file always has them once the
 * application initialised CUDA, even if the process was killed later. */
typedef struct gt_runtime_info {
    int32_t driver_version;       /* cudaDriverGetVersion, e.g. 13000 */
    int32_t runtime_version;      /* cudaRuntimeGetVersion */
    int32_t cudnn_version;        /* cudnnGetVersion, e.g. 91900 */
    int32_t cudnn_cudart_version; /* cudnnGetCudartVersion */
    int32_t cublas_version;
    int32_t cupti_version; /* cuptiGetVersion */
    int32_t device_count;
    uint32_t cupti_state; /* enum gt_cupti_state */
    gt_device_info devices[GT_MAX_DEVICES];
} gt_runtime_info;

enum gt_cupti_state {
    GT_CUPTI_UNKNOWN = 0,
    GT_CUPTI_ACTIVE = 1,
    GT_CUPTI_NOT_FOUND = 2,        /* libcupti could not be loaded */
    GT_CUPTI_OTHER_SUBSCRIBER = 3, /* torch.profiler, nsys... held CUPTI */
    GT_CUPTI_NO_DEVICE = 4,        /* no driver or no GPU */
    GT_CUPTI_DISABLED = 5,         /* GPUTRACE_CUPTI=0 */
    GT_CUPTI_FAILED = 6,
};

/* Fixed part of the header. Followed by: u32 exe_len, exe bytes, u32 cmdline_len, cmdline bytes
 * (arguments separated by NUL), zero padding to a multiple of 8. header_size counts it all. */
typedef struct gt_file_header {
    char magic[8];
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size;
    uint32_t endian_mark;
    uint32_t header_crc32; /* CRC32 of header_size bytes with this field taken as 0 */
    int32_t pid;
    int32_t ppid;
    int64_t start_realtime_ns;  /* CLOCK_REALTIME at start: the clock of every timestamp */
    int64_t start_monotonic_ns; /* CLOCK_MONOTONIC at the same instant */
    int64_t start_boottime_ns;  /* CLOCK_BOOTTIME at the same instant (Perfetto's clock) */
    int32_t rank;               /* RANK / SLURM_PROCID / ... ; -1 when unset */
    int32_t local_rank;         /* -1 when unset */
    int32_t world_size;         /* -1 when unset */
    uint32_t flags;             /* GT_HDR_* */
    char host[64];
    gt_runtime_info runtime;
} gt_file_header;

enum gt_header_flags {
    GT_HDR_FORKED_CHILD = 1u << 0,  /* written by a child after fork (no CUDA/CUPTI in it) */
    GT_HDR_STATIC_CUDART = 1u << 1, /* kernels seen but no runtime wrapper fired */
    /* Kernel launches are linked by anchors and launch order (GPUTRACE_CUPTI_LINK=order): no
     * queued time, no callback pair per launch; the analyzer matches them (order_link.h). */
    GT_HDR_ORDER_LINKS = 1u << 2,
    /* The recorder ends the file with a GT_REC_END when it ends the trace itself (exit, a fatal
     * signal, a write failure). Set from 1.2 on: a file with the flag and no GT_REC_END ended
     * abnormally (SIGKILL, a crash that left no time to flush, a hang); a file without the flag
     * (older recorders) cannot tell. */
    GT_HDR_END_RECORD = 1u << 3,
    /* Another tool (torch.profiler, nsys...) asked CUPTI for its callbacks while gputrace held them
     * and was refused: that tool recorded no GPU activity. */
    GT_HDR_OTHER_PROFILER = 1u << 4,
    /* 1.3: CUPTI took kernel timestamps from the GPU's hardware events
     * (cuptiActivityEnableHWTrace, Blackwell and later); without it, CUPTI's own instrumentation
     * stamped them (the fallback everywhere else). */
    GT_HDR_HW_TRACE = 1u << 5,
    /* 1.3: recording ran only in capture windows (GPUTRACE_CAPTURE other than all): GT_REC_CAPTURE
     * records say when each window opened and closed; outside them nothing was recorded. */
    GT_HDR_CAPTURE_WINDOWS = 1u << 6,
    /* 1.3: a flight recorder's file (GPUTRACE_FLIGHT_RECORDER): the application's records come
     * only from the last seconds before each GT_REC_FLIGHT record (a trigger, the exit, a fatal
     * signal); older ones were evicted on purpose, counted there, not lost. */
    GT_HDR_FLIGHT_RECORDER = 1u << 7,
    /* 1.3: GPU activity sampled (GPUTRACE_SAMPLE): the calls are recorded all along, CUPTI's
     * records only in windows, which GT_REC_CAPTURE records of source GT_CAPTURE_SRC_SAMPLE open
     * and close; GPU figures cover the windows only (scale them, and say so). */
    GT_HDR_GPU_SAMPLED = 1u << 8,
    /* 1.4: CUPTI's unified-memory counters were on (page faults, migrations: GT_REC_GPU_UM), from
     * the first managed allocation (GPUTRACE_UM=auto) or from the start (on). A file without it
     * says nothing about unified memory; with it and no GT_REC_GPU_UM, there was none. */
    GT_HDR_UM_COUNTERS = 1u << 9,
    /* 1.4: managed memory was allocated but CUPTI refused the unified-memory counters (an
     * unsupported platform or device, MPS): faults and migrations are unknown */
    GT_HDR_UM_REFUSED = 1u << 10,
};

/* ---------------------------------------------------------------- chunks */

typedef struct gt_chunk_header {
    uint32_t magic; /* GT_CHUNK_MAGIC */
    uint32_t payload_len;
    uint32_t seq; /* 0,1,2... per file: a gap means chunks were lost */
    uint32_t crc32;
    uint32_t record_count;
    uint32_t tid;  /* thread that produced the records (0: gputrace itself) */
} gt_chunk_header; /* 24 bytes */

typedef struct gt_record_header {
    uint16_t kind;
    uint16_t flags;
    uint32_t size; /* header + body, multiple of 8 */
} gt_record_header;

/* ---------------------------------------------------------------- record kinds */

enum gt_record_kind {
    GT_REC_PAD = 0, /* filler, skipped */
    GT_REC_STRING = 1,
    GT_REC_LOST = 2,
    GT_REC_CLOCK_SYNC = 3,
    GT_REC_THREAD = 4,
    GT_REC_END = 5, /* the end of the trace: the last chunk of a file the recorder ended (1.2) */
    GT_REC_CAPTURE = 6, /* a capture window opened or closed (1.3, GPUTRACE_CAPTURE) */
    GT_REC_FLIGHT = 7,  /* the flight recorder wrote what it held (1.3) */
    /* CPU side: wrapped calls (interpose/) */
    GT_REC_API = 10,        /* a call with no specific arguments */
    GT_REC_API_MEMCPY = 11, /* copies */
    GT_REC_API_MEMSET = 12,
    GT_REC_API_ALLOC = 13, /* allocations and frees, device and host */
    GT_REC_API_LAUNCH = 14,
    GT_REC_API_SYNC = 15,
    GT_REC_API_CUDNN = 16, /* a cuDNN call: legacy conv or backend execute/finalize */
    GT_REC_API_CUBLAS = 17,
    GT_REC_CUDNN_PLAN = 20,     /* a decoded backend execution plan, once per plan */
    GT_REC_CUDNN_CONV_SIG = 21, /* a legacy convolution signature, once per distinct signature */
    GT_REC_CUDNN_PERF = 22,     /* the perf table returned by Find/Get_v7 */
    GT_REC_NVTX = 30,
    GT_REC_STACK = 40, /* call-site stacks (issue 8) */
    GT_REC_MODULE = 41,
    /* GPU side: CUPTI activity (cupti/) */
    GT_REC_GPU_KERNEL = 50,
    GT_REC_GPU_MEMCPY = 51,
    GT_REC_GPU_MEMSET = 52,
    GT_REC_GPU_SYNC = 53,
    GT_REC_GPU_EXT_CORR = 54,
    GT_REC_GPU_API = 55, /* CUPTI runtime/driver API records */
    GT_REC_CUPTI_STATS = 56,
    GT_REC_GPU_UM = 57, /* a unified-memory counter: page fault, migration, thrashing (1.4) */
    GT_REC_KIND_MAX = 64,
};

/* Record flags (gt_record_header.flags) */
enum gt_record_flags {
    GT_RF_PTDS = 1u << 0,      /* called through a _ptds/_ptsz entry point */
    GT_RF_VIA_DLSYM = 1u << 1, /* wrapper reached through an interposed dlsym/GetProcAddress */
    GT_RF_TRUNCATED = 1u << 2, /* a variable-length field was cut to fit */
    GT_RF_DRIVER = 1u << 3,    /* a driver API (cu*) entry point */
    /* 1.4: a call no wrapper saw (a static runtime's kernel launch), recorded from CUPTI's callback
     * at its exit; its times are the callback's, its call id is paired like a wrapped call's */
    GT_RF_VIA_CUPTI = 1u << 4,
};

/* ---- bookkeeping records */

typedef struct gt_rec_string { /* defines string id (>=1) once per file, before any use */
    uint32_t id;
    uint32_t len; /* bytes that follow, no NUL */
    /* char bytes[len]; */
} gt_rec_string;

typedef struct gt_rec_lost { /* "count records of this thread were dropped between t_first and
                                t_last" */
    uint64_t count;
    uint64_t t_first_ns;
    uint64_t t_last_ns;
    uint32_t reason; /* enum gt_lost_reason */
    uint32_t lost_tid;
} gt_rec_lost;

enum gt_lost_reason {
    GT_LOST_BUFFER_FULL = 1,   /* a thread's ring was full */
    GT_LOST_CUPTI_DROPPED = 2, /* CUPTI reported dropped activity records */
    GT_LOST_CUPTI_CAP = 3,     /* GPUTRACE_CUPTI_MB reached: no buffer given to CUPTI */
    GT_LOST_TOO_LARGE = 4,     /* a record larger than a ring */
    GT_LOST_WRITE_FAILED = 5,  /* records that could not be written (ENOSPC, EFBIG...) */
    GT_LOST_NOT_FLUSHED = 6,   /* recorded, but the final flush ran out of time (fatal signal) */
};

typedef struct gt_rec_clock_sync { /* the same instant on several clocks */
    uint64_t realtime_ns;
    uint64_t monotonic_ns;
    uint64_t boottime_ns;
    uint64_t cupti_ns; /* cuptiGetTimestamp, 0 when CUPTI is not active */
} gt_rec_clock_sync;

/* The end of the trace, written once as the last chunk by the recorder. lost is the number of
 * records the recorder counted as lost up to here, the sum of the file's GT_REC_LOST counts (and
 * what its exit line said). lost_after_end counts the calls made after the end (by destructors
 * that run after gputrace's exit handler, or by threads still running while a fatal signal ends
 * the process): they are not recorded; the recorder rewrites this chunk in place (same size, new
 * CRC) as they come, so it may still be rewritten when the process dies. */
typedef struct gt_rec_end {
    uint64_t
        t_begin_ns;   /* when the end began: exit began, the signal was handled, a write failed */
    uint64_t t_ns;    /* when this record was written */
    uint64_t records; /* records written before this chunk */
    uint64_t lost;
    uint64_t lost_after_end;
    uint32_t reason; /* enum gt_end_reason */
    int32_t signal;  /* the signal that ended the process (GT_END_SIGNAL), else 0 */
    /* 1.3: calls a thread made while gputrace was already at work on that thread. Interrupted: a
     * signal handler called CUDA while the thread was inside gputrace's own bookkeeping (its record
     * half written): not recorded, counted as lost. Nested: a call made during another wrapped
     * call's real function (a library calling a wrapped function, or a signal handler that
     * interrupted it): not recorded, by design; the outer call covers its time. */
    uint64_t calls_interrupted;
    uint64_t calls_nested;
    /* 1.5: calls that give the GPU work (launches, copies, memsets, cuBLAS/cuDNN calls that run
     * kernels) made while CUPTI was due but not attached yet: its start was still under way when a
     * bounded wait for it ran out (a loaded machine), or had not begun. The calls are recorded;
     * their kernels, copies and memsets are not (CUPTI never saw them). */
    uint64_t calls_before_cupti;
} gt_rec_end;
/* A 1.2 end record ends before calls_interrupted, a 1.3/1.4 one before calls_before_cupti. */
#define GT_REC_END_SIZE_1_2 (offsetof(gt_rec_end, calls_interrupted))
#define GT_REC_END_SIZE_1_3 (offsetof(gt_rec_end, calls_before_cupti))

enum gt_end_reason {
    GT_END_EXIT = 1,         /* exit, _exit, return from main, or the library unloaded */
    GT_END_SIGNAL = 2,       /* a fatal signal whose default action ended the process */
    GT_END_WRITE_FAILED = 3, /* the file could not be written (full disk, file size limit) */
};

/* A capture window opened (on = 1) or closed (on = 0) at t_ns: GPUTRACE_CAPTURE=profiler-api,
 * signal or trigger-file. Between a close and the next open nothing of the application was
 * recorded (on purpose: not a loss); a window still open at the end of the file ran to the end. */
typedef struct gt_rec_capture {
    uint64_t t_ns;
    uint32_t on;
    uint32_t source; /* enum gt_capture_source */
} gt_rec_capture;

enum gt_capture_source {
    GT_CAPTURE_SRC_PROFILER_API = 1, /* cudaProfilerStart / cudaProfilerStop */
    GT_CAPTURE_SRC_SIGNAL = 2,       /* the capture signal (SIGUSR2 by default) toggled it */
    GT_CAPTURE_SRC_TRIGGER_FILE = 3, /* the trigger file appeared / was removed */
    GT_CAPTURE_SRC_SAMPLE = 4, /* GPUTRACE_SAMPLE: CUPTI's records on (1) or off (0); the calls
                                * are recorded all along */
};

/* The flight recorder (GPUTRACE_FLIGHT_RECORDER) wrote the chunks it held: they follow this record
 * in the file. Before them the application's chunks of the window were dropped on purpose, the
 * oldest first, when older than window_ns or past the memory cap: the evicted counts (since the
 * start of the trace) are not losses. Strings, thread names, stacks, modules and cuDNN plans are
 * never evicted (they are written as they come). */
typedef struct gt_rec_flight {
    uint64_t window_ns;       /* GPUTRACE_FLIGHT_RECORDER in ns */
    uint64_t t_from_ns;       /* when the oldest chunk written now was taken (0: none held) */
    uint64_t t_ns;            /* when this was written */
    uint64_t records;         /* application records written now (they follow) */
    uint64_t evicted_chunks;  /* since the start of the trace */
    uint64_t evicted_records; /* since the start of the trace */
    uint32_t reason;          /* enum gt_flight_reason */
    uint32_t reserved;
} gt_rec_flight;

enum gt_flight_reason {
    GT_FLIGHT_EXIT = 1,    /* the process ended (exit) */
    GT_FLIGHT_TRIGGER = 2, /* the capture signal or the trigger file */
    GT_FLIGHT_SIGNAL = 3,  /* a fatal signal (a crash, SIGTERM...) */
};

typedef struct gt_rec_thread { /* names a thread; written once per thread and on rename */
    uint32_t tid;
    uint32_t name_id;
    uint64_t t_start_ns;
} gt_rec_thread;

/* ---- CPU side: wrapped API calls. Every API record starts with gt_api_common. */

typedef struct gt_api_common {
    uint64_t t_begin_ns; /* CLOCK_REALTIME */
    uint64_t t_end_ns;
    uint64_t corr_id;  /* our id; pushed to CUPTI as external correlation CUSTOM2 */
    uint64_t stream;   /* cudaStream_t as an integer, 0 = legacy default */
    uint32_t func;     /* enum gt_api_func (gtrace_api.def) */
    int32_t result;    /* return code, passed back unchanged to the app */
    int32_t device;    /* current device, -1 unknown */
    uint32_t stack_id; /* GT_REC_STACK id, 0 = none */
} gt_api_common;       /* 48 bytes */

typedef struct gt_rec_api {
    gt_api_common c;
} gt_rec_api;

enum gt_memcpy_dir { /* same values as cudaMemcpyKind */
                     GT_DIR_H2H = 0,
                     GT_DIR_H2D = 1,
                     GT_DIR_D2H = 2,
                     GT_DIR_D2D = 3,
                     GT_DIR_DEFAULT = 4,
};
enum gt_mem_kind { /* host/device memory classification, shared by CPU and GPU records */
                   GT_MEM_UNKNOWN = 0,
                   GT_MEM_PAGEABLE = 1,
                   GT_MEM_PINNED = 2,
                   GT_MEM_DEVICE = 3,
                   GT_MEM_ARRAY = 4,
                   GT_MEM_MANAGED = 5,
};

typedef struct gt_rec_api_memcpy {
    gt_api_common c;
    uint64_t bytes;
    uint64_t dst;
    uint64_t src;
    uint8_t direction; /* gt_memcpy_dir, resolved (never DEFAULT when pointers are classified) */
    uint8_t src_kind;  /* gt_mem_kind */
    uint8_t dst_kind;
    uint8_t is_async;
    int32_t peer_device; /* for Peer copies, else -1 */
} gt_rec_api_memcpy;

typedef struct gt_rec_api_memset {
    gt_api_common c;
    uint64_t ptr;
    uint64_t bytes;
    int32_t value;
    uint8_t is_async;
    uint8_t pad[3];
} gt_rec_api_memset;

enum gt_alloc_kind {
    GT_ALLOC_DEVICE = 1,
    GT_ALLOC_DEVICE_ASYNC = 2,
    GT_ALLOC_MANAGED = 3,
    GT_ALLOC_HOST_PINNED = 4,
    GT_ALLOC_HOST_REGISTERED = 5,
    GT_ALLOC_PITCH = 6,
};

typedef struct gt_rec_api_alloc {
    gt_api_common c;
    uint64_t ptr;        /* allocated or freed pointer */
    uint64_t bytes;      /* 0 for frees where unknown; the analyzer pairs frees with allocations */
    uint32_t alloc_kind; /* gt_alloc_kind */
    uint32_t is_free;
} gt_rec_api_alloc;

typedef struct gt_rec_api_launch {
    gt_api_common c;
    uint64_t function; /* host function / cudaKernel_t / CUfunction pointer */
    uint32_t name_id;  /* mangled kernel name, 0 when unknown */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shared_mem;
    uint64_t graph_exec; /* cudaGraphLaunch: the graph exec handle */
} gt_rec_api_launch;

enum gt_sync_kind {
    GT_SYNC_DEVICE = 1,
    GT_SYNC_STREAM = 2,
    GT_SYNC_EVENT = 3,
    GT_SYNC_STREAM_WAIT_EVENT = 4,
    GT_SYNC_STREAM_QUERY = 5,
    GT_SYNC_EVENT_QUERY = 6,
    GT_SYNC_EVENT_RECORD = 7,
};

typedef struct gt_rec_api_sync {
    gt_api_common c; /* t_end - t_begin of a blocking kind is the sync stall */
    uint64_t event;
    uint32_t sync_kind; /* gt_sync_kind */
    uint32_t pad;
} gt_rec_api_sync;

enum gt_cudnn_flags {
    GT_CUDNN_AUTOTUNE = 1u << 0,  /* this execute was one candidate of an autotuning sweep */
    GT_CUDNN_HEURISTIC = 1u << 1, /* plan chosen by heuristics (one plan for its op graph) */
};

typedef struct gt_rec_api_cudnn {
    gt_api_common c;
    uint64_t handle;
    uint64_t plan;     /* backend: execution plan descriptor pointer */
    uint32_t plan_id;  /* GT_REC_CUDNN_PLAN id, 0 = none */
    uint32_t sig_id;   /* GT_REC_CUDNN_CONV_SIG id (legacy), 0 = none */
    int32_t algo;      /* legacy algorithm, -1 = n/a */
    int32_t math_type; /* cudnnMathType_t, -1 = unknown */
    uint64_t workspace_bytes;
    uint32_t cudnn_flags; /* gt_cudnn_flags */
    uint32_t desc_type;   /* Finalize/Destroy: cudnnBackendDescriptorType_t, else 0 */
} gt_rec_api_cudnn;

typedef struct gt_rec_cudnn_plan { /* once per distinct plan pointer life */
    uint64_t plan;
    uint32_t plan_id;
    uint32_t op_kind;            /* enum gt_cudnn_op */
    int64_t engine_global_index; /* -1 unknown */
    uint64_t numerical_notes;    /* bit i = cudnnBackendNumericalNote_t value i */
    uint64_t behavior_notes;
    uint64_t workspace_bytes;
    uint64_t op_graph;  /* operation graph pointer: several plans for one graph = autotuning */
    uint32_t dtype;     /* cudnnDataType_t of the main input, -1 unknown */
    uint32_t sig_id;    /* conv signature (GT_REC_CUDNN_CONV_SIG) decoded from the plan, 0 none */
    uint32_t knobs_len; /* bytes of "KNOB=value,..." text that follows */
    uint32_t json_len;  /* bytes of the plan's JSON representation that follow the knobs */
    /* char knobs[knobs_len]; char json[json_len]; */
} gt_rec_cudnn_plan;

enum gt_cudnn_op {
    GT_CUDNN_OP_UNKNOWN = 0,
    GT_CUDNN_OP_CONV_FWD = 1,
    GT_CUDNN_OP_CONV_BWD_DATA = 2,
    GT_CUDNN_OP_CONV_BWD_FILTER = 3,
    GT_CUDNN_OP_CONV_BIAS_ACT = 4,
    GT_CUDNN_OP_MATMUL = 5,
    GT_CUDNN_OP_OTHER = 6,
};

typedef struct gt_rec_cudnn_conv_sig { /* a convolution's shape, once per distinct signature */
    uint32_t sig_id;
    uint32_t op_kind; /* gt_cudnn_op */
    int32_t nb_dims;  /* tensor rank, 4 or 5 */
    int32_t dtype;    /* cudnnDataType_t of x */
    int32_t compute_dtype;
    int32_t format; /* cudnnTensorFormat_t of the filter (NCHW=0, NHWC=1), -1 unknown */
    int32_t math_type;
    int32_t groups;
    int32_t x_dims[5], x_strides[5];
    int32_t w_dims[5];
    int32_t y_dims[5], y_strides[5];
    int32_t pad[3], stride[3], dilation[3];
    int32_t conv_mode; /* CUDNN_CONVOLUTION / CUDNN_CROSS_CORRELATION */
} gt_rec_cudnn_conv_sig;

typedef struct gt_cudnn_perf_entry {
    int32_t algo;
    int32_t status;
    float time_ms;
    uint32_t pad;
    uint64_t memory;
    int32_t determinism;
    int32_t math_type;
} gt_cudnn_perf_entry; /* 32 bytes */

typedef struct gt_rec_cudnn_perf { /* follows the GT_REC_API_CUDNN of the Find/Get call */
    uint64_t corr_id;              /* of that call */
    uint32_t sig_id;
    uint32_t count;
    /* gt_cudnn_perf_entry entries[count]; */
} gt_rec_cudnn_perf;

typedef struct gt_rec_api_cublas {
    gt_api_common c;
    uint64_t handle;
    int64_t m, n, k;
    int64_t batch; /* 1 unless batched */
    int32_t transa, transb;
    int32_t atype, btype, ctype; /* cudaDataType_t, -1 unknown */
    int32_t compute_type;        /* cublasComputeType_t, -1 unknown */
} gt_rec_api_cublas;

enum gt_nvtx_kind {
    GT_NVTX_PUSH = 1,
    GT_NVTX_POP = 2,
    GT_NVTX_MARK = 3,
    GT_NVTX_RANGE_START = 4,
    GT_NVTX_RANGE_END = 5,
    GT_NVTX_NAME_THREAD = 6,
};

typedef struct gt_rec_nvtx {
    uint64_t t_ns;
    uint64_t range_id;  /* start/end ranges; 0 otherwise */
    uint32_t nvtx_kind; /* gt_nvtx_kind */
    uint32_t name_id;   /* message, 0 for pop/end */
    uint32_t domain_id; /* domain name, 0 = default */
    uint32_t color;
} gt_rec_nvtx;

typedef struct gt_rec_stack { /* a call-site stack, once per distinct stack */
    uint32_t stack_id;
    uint32_t depth;    /* native frames */
    uint32_t py_depth; /* Python frames that follow the native ones */
    uint32_t pad;
    /* uint64_t pcs[depth]; then py_depth × {u32 file_id, u32 func_id, i32 line, u32 pad} */
} gt_rec_stack;

typedef struct gt_rec_module { /* a loaded module, for offline symbolization */
    uint64_t base;
    uint64_t size;
    uint32_t path_id;
    uint32_t build_id_len;
    uint8_t build_id[32];
} gt_rec_module;

/* ---- GPU side: CUPTI activity. Times are CUPTI timestamps on CLOCK_REALTIME. */

typedef struct gt_rec_gpu_kernel {
    uint64_t start_ns, end_ns;
    uint64_t corr_id; /* CUPTI correlation id */
    uint64_t graph_id;
    uint64_t grid_id;
    uint32_t name_id; /* mangled name */
    uint32_t device, context, stream;
    int32_t grid[3], block[3];
    uint32_t registers;
    uint32_t static_smem, dynamic_smem;
    uint32_t pad;
    /* 1.1: when the launch was queued and submitted (CLOCK_REALTIME ns; 0 unknown) */
    uint64_t queued_ns, submitted_ns;
} gt_rec_gpu_kernel;

typedef struct gt_rec_gpu_memcpy {
    uint64_t start_ns, end_ns;
    uint64_t corr_id;
    uint64_t bytes;
    uint64_t graph_id;
    uint32_t device, context, stream;
    uint32_t src_device, dst_device;
    uint8_t copy_kind; /* CUpti_ActivityMemcpyKind: HTOD=1, DTOH=2, ..., DTOD=8, PTOP=10 */
    uint8_t src_kind;  /* gt_mem_kind */
    uint8_t dst_kind;
    uint8_t is_async;
} gt_rec_gpu_memcpy;

typedef struct gt_rec_gpu_memset {
    uint64_t start_ns, end_ns;
    uint64_t corr_id;
    uint64_t bytes;
    uint32_t device, context, stream;
    uint32_t value;
    uint8_t mem_kind;
    uint8_t is_async;
    uint8_t pad[6];
} gt_rec_gpu_memset;

typedef struct gt_rec_gpu_sync {
    uint64_t start_ns, end_ns;
    uint64_t corr_id;
    uint64_t event;
    uint32_t sync_type; /* CUpti_ActivitySynchronizationType */
    uint32_t context, stream;
    uint32_t pad;
} gt_rec_gpu_sync;

/* The external-correlation kind gputrace uses: CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2. */
#define GT_EXT_CORR_KIND_OURS 5u
/* GPUTRACE_CUPTI_LINK=order: the correlation ids of two cheap runtime calls made just before and
 * just after the real cuDNN/cuBLAS call external_id; the library's kernels carry ids between them
 * (CUPTI numbers all API calls from one counter). Not pairs: no GPU work has these ids. */
#define GT_EXT_CORR_KIND_ANCHOR_BEGIN 101u
#define GT_EXT_CORR_KIND_ANCHOR_END 102u

typedef struct gt_rec_gpu_ext_corr { /* CUPTI corr_id belongs to our call external_id */
    uint64_t external_id;
    uint64_t corr_id;
    uint32_t ext_kind; /* CUpti_ExternalCorrelationKind */
    uint32_t pad;
} gt_rec_gpu_ext_corr;

typedef struct gt_rec_gpu_api {
    uint64_t start_ns, end_ns;
    uint64_t corr_id;
    uint32_t cbid;   /* CUpti_runtime_api_trace_cbid or CUpti_driver_api_trace_cbid */
    uint32_t domain; /* 4 = driver, 5 = runtime (CUpti_ActivityKind) */
    uint32_t tid;
    int32_t result;
} gt_rec_gpu_api;

/* A unified-memory event, as CUPTI's UNIFIED_MEMORY_COUNTER record tells it (1.4). */
enum gt_um_kind {                       /* the values of CUpti_ActivityUnifiedMemoryCounterKind */
                  GT_UM_HTOD = 1,       /* bytes migrated host to device */
                  GT_UM_DTOH = 2,       /* bytes migrated device to host */
                  GT_UM_CPU_FAULT = 3,  /* a CPU page fault on managed memory */
                  GT_UM_GPU_FAULT = 4,  /* GPU page faults (a group for one page) */
                  GT_UM_THRASHING = 5,  /* a region bouncing between processors */
                  GT_UM_THROTTLING = 6, /* the driver held a processor's faults back */
                  GT_UM_REMOTE_MAP = 7, /* a region mapped remotely instead of migrated */
                  GT_UM_DTOD = 8,       /* bytes migrated device to device */
};
enum gt_um_cause { /* migrations' flags: CUpti_ActivityUnifiedMemoryMigrationCause */
                   GT_UM_CAUSE_UNKNOWN = 0,
                   GT_UM_CAUSE_USER = 1,      /* the program's prefetch (cudaMemPrefetchAsync) */
                   GT_UM_CAUSE_COHERENCE = 2, /* on demand: a CPU or GPU page fault */
                   GT_UM_CAUSE_PREFETCH = 3,  /* the driver's speculation around a fault */
                   GT_UM_CAUSE_EVICTION = 4,  /* evicted from the GPU to make room */
                   GT_UM_CAUSE_ACCESS_COUNTERS = 5,
};
#define GT_UM_CPU_ID 0xffffffffu /* src_id / dst_id of the CPU */

typedef struct gt_rec_gpu_um {
    uint64_t start_ns,
        end_ns;              /* end 0 for the instant kinds (CPU faults, thrashing, remote maps) */
    uint64_t address;        /* the (first) page's virtual address */
    uint64_t value;          /* bytes (migrations, thrashing, remote maps), fault groups (GPU
                                faults), the faulting instruction's address (CPU faults) */
    uint32_t um_kind;        /* enum gt_um_kind */
    uint32_t src_id, dst_id; /* device ordinals, GT_UM_CPU_ID for the CPU; a GPU fault's device is
                                src_id */
    uint32_t flags;          /* migrations: enum gt_um_cause; GPU and CPU faults: the access
                                (1 read, 2 write, 3 atomic, 4 prefetch); remote maps: the cause */
} gt_rec_gpu_um;

typedef struct gt_rec_cupti_stats {
    uint64_t t_ns;
    uint64_t dropped_records; /* cuptiActivityGetNumDroppedRecords, summed */
    uint64_t buffers_completed;
    uint64_t buffers_refused; /* requests refused by the GPUTRACE_CUPTI_MB cap */
    uint64_t records_converted;
    uint64_t overhead_ns; /* CUPTI OVERHEAD activity, summed */
} gt_rec_cupti_stats;

#endif /* GTRACE_FORMAT_H */
