/* convert_internal.h — what the parts of the converter share: sizes, interning keys, argument
 * names, the per-file and per-run state, and the functions one part calls in another (listed by
 * the file that defines them; no logic here). Not for use outside convert*.c. */
#ifndef GT_CONVERT_INTERNAL_H
#define GT_CONVERT_INTERNAL_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "convert_sink.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "op_link.h"
#include "symbolize.h"
#include "util.h"

#define MAX_DONE 64           /* finished intervals remembered per thread track */
#define MAX_NVTX 64           /* open NVTX push ranges per thread */
#define LANES 4               /* a stream's track + 3 overlap tracks */
#define SMALL_OVERLAP_NS 2000 /* CUPTI overlap up to this is clamped on the stream's own track */
/* The link caches are rings by id, sized per file from the lag the file shows (convert_lag.c):
 * at least 1 << *_MIN_BITS slots, at most 1 << *_MAX_BITS (links further apart than that are
 * counted as not drawn). */
#define API_MIN_BITS 16     /* our call id -> where its slice is (48 bytes a slot) */
#define API_MAX_BITS 23     /* 400 MB */
#define LATE_MIN_BITS 16    /* CUPTI corr id -> a GPU op written before its link (40 bytes) */
#define LATE_MAX_BITS 23    /* 320 MB */
#define DECIDED_MIN_BITS 14 /* CUPTI corr id -> the call of a link decided before its op */
#define DECIDED_MAX_BITS 23 /* 512 MB */
#define WAIT_MIN_BITS 12    /* our call id -> late ops waiting for the call's slice (2 MB) */
#define WAIT_MAX_BITS 16    /* 34 MB */
#define WAIT_OPS 64         /* ops of one call that may wait (a cuDNN call launches dozens) */
#define WAIT_PROBES 8       /* slots a call may take, so that calls sharing a hash keep theirs */
#define PLAN_SLOTS 4096
#define NAME_SLOTS 4096       /* demangled kernel names */
#define RANGE_SLOTS 1024      /* open NVTX start/end ranges */
#define MAX_SYNCS 64          /* sync calls waiting for the GPU op they waited for (<= 64) */
#define MAX_ALLOCS (1u << 20) /* live allocations tracked for the memory counters */
#define MAX_DEVICES 64
#define BIN_NS 10000000ll /* GPU busy %: 10 ms bins */
#define BIN_RING 1024
#define STACK_FRAMES 24             /* frames shown in a slice's "stack" argument */
#define STACK_TEXT_MAX 2048         /* bytes of that argument */
#define STACK_TEXT_SLOTS (1u << 16) /* distinct stacks whose text is kept per file */
/* cuDNN descriptor bookkeeping (Finalize/Destroy of descriptors that are not plans or engine
 * heuristics) is a few hundred calls per step of well under a microsecond each: runs of them
 * become one slice. A call is folded when it is shorter than FOLD_CALL_NS and begins at most
 * FOLD_GAP_NS after the previous one ended (so the slice is mostly busy, never a long idle). */
#define FOLD_MAX 16
#define FOLD_CALL_NS 10000
#define FOLD_GAP_NS 10000

/* Interning keys: API names, stall names, memcpy names, fixed names, kernel names by string id.
 * Categories are a key space of their own (Perfetto interns event names and categories apart);
 * small keys are the cheap ones for the sink (bitmaps instead of a hash). */
#define IID_API(f) (1ull + (f))
#define IID_STALL(f) (300ull + (f))
#define IID_MEMCPY(k, s, d) (1000ull + ((uint64_t)((k)&15) << 6) + (((s)&7) << 3) + ((d)&7))
#define IID_MEMSET 2000ull
#define IID_GPU_WORK 2001ull
#define IID_LOST 2002ull
#define IID_FOLD 2003ull
#define IID_LATE 2004ull
#define IID_WAITED 2005ull
#define IID_UM(kind) (2010ull + (kind)) /* unified-memory events by gt_um_kind (< 16) */
#define IID_KERNEL(id) ((1ull << 32) | (id))
#define IID_CAT(c) ((uint64_t)(c))

enum cv_cat {
    CAT_CUDA = 1,
    CAT_COPY,
    CAT_SYNC,
    CAT_CUDNN,
    CAT_CUBLAS,
    CAT_MEMORY,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_NVTX,
    CAT_GPUTRACE,
    CAT_LAUNCH,
    CAT_ADVICE,
    CAT_COUNT
};
extern const char *const CAT_NAMES[CAT_COUNT];

/* Argument (debug-annotation) names. The Perfetto sink interns them all by their index here. */
#define CV_ARG_NAMES(X)                                                                            \
    X(AN_BYTES, "bytes")                                                                           \
    X(AN_DIRECTION, "direction")                                                                   \
    X(AN_SRC_MEMORY, "src_memory")                                                                 \
    X(AN_DST_MEMORY, "dst_memory")                                                                 \
    X(AN_ASYNC, "async")                                                                           \
    X(AN_VALUE, "value")                                                                           \
    X(AN_PTR, "ptr")                                                                               \
    X(AN_KERNEL, "kernel")                                                                         \
    X(AN_CONFIG, "config")                                                                         \
    X(AN_STALL_NS, "stall_ns")                                                                     \
    X(AN_EVENT, "event")                                                                           \
    X(AN_MNK, "mnk")                                                                               \
    X(AN_BATCH, "batch")                                                                           \
    X(AN_TRANSA, "transa")                                                                         \
    X(AN_TRANSB, "transb")                                                                         \
    X(AN_COMPUTE_TYPE, "compute_type")                                                             \
    X(AN_STREAM, "stream")                                                                         \
    X(AN_DEVICE, "device")                                                                         \
    X(AN_RESULT, "result")                                                                         \
    X(AN_CORR_ID, "corr_id")                                                                       \
    X(AN_GRAPH_ID, "graph_id")                                                                     \
    X(AN_CORRELATION, "correlation")                                                               \
    X(AN_GBPS, "GB/s")                                                                             \
    X(AN_CUDNN_OP, "cudnn_op")                                                                     \
    X(AN_ENGINE, "engine")                                                                         \
    X(AN_ALGORITHM, "algorithm")                                                                   \
    X(AN_NOTES, "notes")                                                                           \
    X(AN_SHAPE, "shape")                                                                           \
    X(AN_MATH_TYPE, "math_type")                                                                   \
    X(AN_WORKSPACE_BYTES, "workspace_bytes")                                                       \
    X(AN_AUTOTUNE, "autotune")                                                                     \
    X(AN_COUNT, "count")                                                                           \
    X(AN_BUSY_NS, "busy_ns")                                                                       \
    X(AN_CALLS, "calls")                                                                           \
    X(AN_REASON, "reason")                                                                         \
    X(AN_TID, "tid")                                                                               \
    X(AN_SPAN_NS, "span_ns")                                                                       \
    X(AN_DETAIL, "detail")                                                                         \
    X(AN_CALL_SITE, "call_site")                                                                   \
    X(AN_STACK, "stack")

enum cv_arg_name {
    AN_NONE,
#define CV_ARG_ENUM(id, str) id,
    CV_ARG_NAMES(CV_ARG_ENUM)
#undef CV_ARG_ENUM
        AN_END
};
extern const char *const ARG_NAMES[AN_END];
_Static_assert(MAX_SYNCS <= 64, "syncs_active is a 64-bit mask");
_Static_assert(IID_API(GT_FN_MAX) <= IID_STALL(0) && IID_STALL(GT_FN_MAX) <= 1000,
               "name keys overlap");

/* One flow id per arrow: a GPU op's link to its call (by the op's CUPTI correlation id), or a
 * sync stall's link to the GPU op it waited for (by the call's id). */
enum flow_kind { FLOW_OP = 2, FLOW_SYNC = 3 };

typedef struct cv_iv {
    int64_t b, e;
} cv_iv;

/* A run of foldable calls not yet written (see FOLD_MAX): kept whole so that a run that ends up
 * alone, or that something on the thread would cut, is written call by call as before. */
typedef struct cv_fold {
    int n;
    gt_rec_api_cudnn calls[FOLD_MAX];
} cv_fold;

typedef struct cv_thread {
    uint32_t tid;
    uint32_t seq;
    uint64_t uuid;
    int described;
    char name[64];
    cv_iv done[MAX_DONE];
    int n_done;
    int64_t floor; /* nothing on this track may begin before it */
    int64_t nvtx_b[MAX_NVTX];
    int n_nvtx;
    uint32_t nvtx_overflow;
    cv_fold fold;
} cv_thread;

typedef struct cv_lanes {
    uint64_t uuid[LANES];
    int described[LANES];
    int64_t last_end[LANES];
} cv_lanes;

typedef struct cv_api_slot {
    uint64_t corr;
    uint64_t track;
    uint32_t seq;
    uint32_t n_gpu;
    int64_t b, e;
    uint64_t stream;
} cv_api_slot;

typedef struct cv_gpu_op {
    uint16_t kind; /* GT_REC_GPU_KERNEL/MEMCPY/MEMSET; 0 = none */
    int how;       /* its link (enum gt_link_how), when its call's slice was known on reading it */
    cv_api_slot call; /* that slice (how != 0): the op may be written long after (held) */
    union {
        gt_rec_gpu_kernel k;
        gt_rec_gpu_memcpy m;
        gt_rec_gpu_memset s;
    } r;
    uint64_t start, end, corr;
    uint32_t device, stream;
    uint64_t sync_flows[CV_MAX_FLOWS];
    int n_sync_flows;
} cv_gpu_op;

typedef struct cv_stream {
    uint32_t device, stream;
    /* A sequence of its own: its ops come in time order, so each timestamp is a short delta
     * from the previous one (ops of several streams interleaved on one sequence would jump
     * back and forth, and every jump back costs an absolute timestamp). */
    uint32_t seq;
    cv_lanes lanes;
    int has_api_stream;
    uint64_t api_stream; /* the cudaStream_t the application used, learned from correlations */
    cv_gpu_op held;      /* emitted when the next op arrives: it may be what a sync waited for */
} cv_stream;

typedef struct cv_device {
    uint32_t device;
    uint32_t seq;
    uint64_t mem_uuid, busy_uuid;
    int mem_described, busy_described;
    int64_t mem_live;
    int64_t bin0; /* index of the first bin not yet written, -1 before any work */
    uint32_t bins[BIN_RING];
    cv_lanes um;     /* "GPU n · unified memory": its faults and migrations (convert_um.c) */
    uint32_t um_seq; /* their sequence, 0 before the first */
} cv_device;

/* A GPU op written without a link because the pair that explains it came later in the file
 * (traces recorded before the writer drained the application's rings first): where its begin is,
 * so that the link can still be drawn when the pair, and then the call, arrive. */
typedef struct cv_late_slot {
    uint64_t corr;
    uint64_t track;
    uint32_t seq;
    uint16_t kind; /* GT_REC_GPU_KERNEL/MEMCPY/MEMSET */
    uint16_t how;  /* its link once decided (its call's slice not known then), 0 before */
    int64_t ts;
} cv_late_slot;

/* A link decided before its GPU op was read (a callback pair, or a call that came after the
 * pair): where the call's slice is, for the op when it comes. */
typedef struct cv_decided_slot {
    uint64_t corr; /* CUPTI correlation id, 0 = empty */
    int how;
    cv_api_slot call;
} cv_decided_slot;

typedef struct cv_wait_slot { /* our call id -> CUPTI corr ids of its late ops */
    uint64_t external;
    uint64_t corr[WAIT_OPS];
    uint8_t how[WAIT_OPS]; /* each link's enum gt_link_how */
    uint32_t n;
} cv_wait_slot;

typedef struct cv_plan_slot {
    uint32_t plan_id, op_kind;
    int64_t engine;
    uint64_t numerical_notes;
    uint32_t sig_id;
} cv_plan_slot;

typedef struct cv_sig_slot {
    uint32_t sig_id, op_kind;
    char text[112];
} cv_sig_slot;

typedef struct cv_name_slot {
    uint32_t id;
    char *name;
} cv_name_slot;

typedef struct cv_range_slot {
    uint64_t range_id;
    int64_t b;
    uint32_t name_id, domain_id;
} cv_range_slot;

typedef struct cv_sync {
    int active;
    uint32_t device;
    int device_wide;
    uint64_t api_stream;
    uint64_t end_real;
    uint64_t flow;
    uint64_t track; /* the stall's slice: its end receives the arrow once the op is known */
    uint32_t seq;
    int64_t end_ts;
} cv_sync;

typedef struct cv_alloc {
    uint64_t ptr; /* 0 = empty */
    uint64_t bytes;
    uint32_t device;
    uint32_t pinned;
} cv_alloc;

/* The last launch configuration text of launches or of kernels: they repeat the same one. */
typedef struct cv_config_memo {
    int64_t v[8]; /* grid, block, registers, shared memory */
    int valid;
    char text[192];
} cv_config_memo;

enum { CONFIG_LAUNCH, CONFIG_KERNEL };

/* The symbolized text of one call-site stack, kept for every slice that carries it. */
typedef struct cv_stack_text {
    uint32_t id;      /* stack id, 0 = empty slot */
    const char *site; /* innermost user frame (owned by the symtab), NULL when none */
    char *text;       /* whole stack, one frame per line, NULL when it has no frames */
} cv_stack_text;

/* Where a file came from, so its stack table can be read in a pass of its own. */
typedef struct cv_source {
    const char *path;
    const void *mem;
    size_t len;
} cv_source;

/* A gputrace track of the process (phases, GPU not recorded...), described on first use. */
typedef struct cv_side_track {
    uint64_t uuid;
    int described;
} cv_side_track;

typedef struct cv_file {
    int index;
    gt_reader *r;
    const gt_convert_opts *ctx_opts;
    gt_op_links links; /* which call caused each GPU op (op_link.h): drawn as arrows */
    cv_source src;
    const gt_file_header *hdr;
    int32_t pid_out;
    int64_t tid_shift;
    uint32_t proc_seq;
    uint64_t proc_uuid;
    uint64_t misc_uuid, advice_uuid, pinned_uuid;
    int misc_described, advice_described, pinned_described;
    cv_side_track phases, not_sampled; /* model_phases.c's phases; GPU sampling's gaps */
    cv_side_track um_cpu;              /* CPU page faults on managed memory (convert_um.c) */
    int64_t pinned_live;
    int64_t first_ts; /* output clock, for items without a usable time */
    /* GPU sampling (convert_sample.c): when CUPTI's records went off, 0 while on */
    uint64_t sample_off_ns;
    int sample_seen;

    cv_thread *threads;
    size_t n_threads, cap_threads;
    size_t last_thread;
    cv_stream *streams;
    size_t n_streams, cap_streams;
    cv_device devices[MAX_DEVICES];
    int n_devices;
    cv_lanes ranges; /* NVTX start/end ranges of the process */

    cv_api_slot *api;
    cv_late_slot *late;
    cv_decided_slot *decided;
    cv_wait_slot *wait;
    uint64_t api_mask, late_mask, decided_mask, wait_mask; /* ring sizes - 1 (convert_lag.c) */
    uint32_t n_waiting;                                    /* wait slots in use */
    uint64_t links_undrawn; /* links decided whose arrow could not be drawn (caches full) */
    cv_plan_slot *plans;
    cv_sig_slot *sigs;
    cv_name_slot *names;
    cv_range_slot *open_ranges;
    cv_sync syncs[MAX_SYNCS];
    unsigned sync_next;
    uint64_t syncs_active;  /* bit i: syncs[i].active (a GPU op checks only those) */
    uint64_t syncs_min_end; /* the earliest end_real among them */
    /* (MAX_SYNCS <= 64, asserted below) */
    cv_config_memo configs[CONFIG_KERNEL + 1];
    cv_alloc *allocs;
    size_t alloc_cap, alloc_used;
    uint64_t allocs_untracked;
    /* Call sites: loaded on the first record that has a stack (0 not yet, 1 ready, -1 none). */
    int syms_state;
    gt_symtab *syms;
    int syms_borrowed; /* the reader-along's (the model's): not ours to free */
    cv_stack_text *stack_texts;
    uint32_t stack_text_cap, stack_text_used;
} cv_file;

/* What is left of a converted file for its advice, written once every file was read (advice is
 * decided over the whole run) on the file's process sequence, kept open until then. */
typedef struct cv_done {
    int index;
    char *path;
    int32_t pid, pid_out;
    uint64_t proc_uuid, advice_uuid;
    uint32_t proc_seq;
    int64_t first_ts;
} cv_done;

typedef struct cv_ctx {
    const gt_convert_opts *opts;
    gt_convert_stats *st;
    cv_sink *sink;
    int64_t offset; /* output = realtime + offset */
    int have_clock;
    uint32_t next_seq;
    uint64_t next_uuid;
    int32_t *pids_used;
    size_t n_pids, cap_pids;
    cv_file *f;    /* the file being converted */
    cv_done *done; /* files converted, waiting for their advice */
    size_t n_done, cap_done;
    int64_t max_ts; /* latest timestamp written for the file being converted */
    int unfiltered; /* advice and --max-mb markers: shown whatever opts->keep says */
} cv_ctx;

typedef struct cv_args {
    cv_arg a[CV_MAX_ARGS];
    int n;
    char buf[4][128];
} cv_args;

enum { DESC_ENGINEHEUR = 4, DESC_EXECUTION_PLAN = 5 }; /* cudnnBackendDescriptorType_t */

/* convert_events.c: how an event reaches the sink (the hot path, one or more per record) */
uint64_t cv_uuid(cv_ctx *c);                       /* the next track uuid */
int cv_ts(cv_ctx *c, uint64_t real, int64_t *out); /* CLOCK_REALTIME to the output clock */
void cv_event_init(cv_event *e, int type, uint64_t track, uint32_t seq, int64_t ts);
void cv_emit(cv_ctx *c, const cv_event *e); /* unless --max-mb leaves it out */
void cv_describe(cv_ctx *c, const cv_track_desc *d);
/* A complete slice: BEGIN and END back to back (file order matters at equal timestamps). */
void cv_slice(cv_ctx *c, cv_event *begin, int64_t end_ts, const uint64_t *end_term, int n_end_term);
void cv_set_cat(cv_event *e, int cat);

/* convert_flows.c: flow ids, and the caches by correlation id */
uint64_t cv_flow_id(const cv_file *f, int kind, uint64_t id);
uint64_t cv_op_flow_id(const cv_file *f, uint64_t corr, uint64_t where, uint64_t when);
cv_api_slot *cv_api_slot_of(cv_file *f, uint64_t corr);
cv_api_slot *cv_api_find(cv_file *f, uint64_t corr); /* NULL unless the slot holds corr */
cv_late_slot *cv_late_slot_of(cv_file *f, uint64_t corr);
cv_decided_slot *cv_decided_slot_of(cv_file *f, uint64_t corr);
/* The wait slot of call (NULL when none); create: take a free one among its probes, else the
 * first (its ops are then never drawn: counted in links_undrawn). */
cv_wait_slot *cv_wait_find(cv_file *f, uint64_t call, int create);
/* The call's slice is written: draw the links of its ops that came before it (the common case,
 * nothing waits, is checked in cv_late_call before cv_late_call_waiting). */
void cv_late_call(cv_ctx *c, cv_file *f, uint64_t call);
void cv_late_call_waiting(cv_ctx *c, cv_file *f, uint64_t call);
void cv_late_pair(cv_ctx *c, cv_file *f, uint64_t corr, uint64_t call, int how);
void cv_op_call(cv_file *f, cv_gpu_op *op); /* its call's slice, when known on reading it */
int cv_gpu_flow(cv_ctx *c, cv_file *f, const cv_gpu_op *op, cv_event *ev);
void cv_link_decided(void *ctx, uint64_t corr, uint64_t call, int how);

/* convert_lag.c */
int cv_measure_lag(const cv_source *src, gt_link_lag *out);
unsigned cv_ring_bits(uint64_t span, unsigned min_bits, unsigned max_bits);

/* convert_args.c */
const char *cv_str(cv_file *f, uint32_t id, const char *fallback); /* a string of the file */
void cv_arg_i(cv_args *x, enum cv_arg_name name, int64_t v);
void cv_arg_u(cv_args *x, enum cv_arg_name name, uint64_t v);
void cv_arg_p(cv_args *x, enum cv_arg_name name, uint64_t v);
void cv_arg_s(cv_args *x, enum cv_arg_name name, const char *v);
void cv_arg_d(cv_args *x, enum cv_arg_name name, double v);
char *cv_put_i64(char *d, int64_t v);
const char *cv_dims(char *buf, int64_t a, int64_t b, int64_t c);
const char *cv_config_text(cv_config_memo *m, const int64_t v[8]);
const char *cv_concat(char *buf, size_t cap, const char *a, const char *b, const char *c,
                      const char *d);
const char *cv_kernel_name(cv_file *f, uint32_t id);
void cv_cudnn_args(cv_file *f, const gt_rec_api_cudnn *r, cv_args *x);
void cv_memory_args(cv_args *x, uint8_t src, uint8_t dst, int src_said, int dst_said);
const char *cv_copy_kind_name(uint8_t k);
void cv_on_sig(cv_file *f, const gt_record *rec);
void cv_on_plan(cv_file *f, const gt_record *rec);

/* convert_tracks.c */
void cv_describe_process(cv_ctx *c, cv_file *f);
void cv_child_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int64_t lane_id,
                    int order);
/* A slice [ts, end_ts] named name with a "detail" argument on side track t (name, lane, order
 * describe it the first time). */
void cv_side_slice(cv_ctx *c, cv_file *f, cv_side_track *t, const char *track_name, int64_t lane,
                   int order, int64_t ts, int64_t end_ts, const char *name, const char *detail);
void cv_counter_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int unit,
                      const char *unit_name);
void cv_describe_thread(cv_ctx *c, cv_file *f, cv_thread *t);
cv_thread *cv_thread_ready(cv_ctx *c, cv_file *f, uint32_t tid);
cv_device *cv_device_get(cv_ctx *c, cv_file *f, uint32_t device);
cv_stream *cv_stream_get(cv_ctx *c, cv_file *f, uint32_t device, uint32_t stream);
int cv_place_cpu(cv_thread *t, int64_t *b, int64_t *e);
int cv_place_lane(cv_lanes *l, int64_t *b, int64_t *e, int *moved);
void cv_lane_describe(cv_ctx *c, cv_file *f, cv_stream *s, int lane);
void cv_misc_instant(cv_ctx *c, cv_file *f, int64_t ts, const char *name, uint64_t iid, int cat,
                     const cv_args *x);
void cv_on_thread(cv_ctx *c, cv_file *f, const gt_record *rec);
int32_t cv_pick_pid(cv_ctx *c, int32_t pid);

/* convert_counters.c */
void cv_busy_add(cv_ctx *c, cv_file *f, cv_device *d, uint64_t start, uint64_t end);
void cv_busy_finish(cv_ctx *c, cv_file *f, cv_device *d);
void cv_alloc_record(cv_ctx *c, cv_file *f, const gt_rec_api_alloc *a, int64_t ts);

/* convert_stacks.c */
void cv_stack_args(cv_file *f, uint32_t stack_id, cv_args *x);
void cv_stack_texts_free(cv_file *f);

/* convert_cpu.c */
void cv_syncs_update_min(cv_file *f);
void cv_fold_flush(cv_ctx *c, cv_file *f, cv_thread *t, uint64_t cut_real);
void cv_fold_flush_all(cv_ctx *c, cv_file *f);
void cv_on_api(cv_ctx *c, cv_file *f, const gt_record *rec);
void cv_on_lost(cv_ctx *c, cv_file *f, const gt_record *rec);

/* convert_nvtx.c */
void cv_close_ranges(cv_ctx *c, cv_file *f);
void cv_on_nvtx(cv_ctx *c, cv_file *f, const gt_record *rec);

/* convert_gpu.c */
void cv_on_gpu(cv_ctx *c, cv_file *f, const gt_record *rec);
void cv_flush_streams(cv_ctx *c, cv_file *f);

/* convert_sample.c (GPUTRACE_SAMPLE) */
void cv_on_capture(cv_ctx *c, cv_file *f, const gt_record *rec);
/* convert_um.c */
void cv_on_um(cv_ctx *c, cv_file *f, const gt_record *rec);
void cv_sample_finish(cv_ctx *c, cv_file *f);

#endif
