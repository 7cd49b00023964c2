/* convert.c — the conversion core behind `gputrace convert`.
 *
 * Reads each .gtrace file once, in file order, and turns records into tracks, slices, flows and
 * counters handed to a sink (Perfetto or JSON). Perfetto sorts by timestamp at import, so
 * packets go out in file order; what must hold in FILE order is kept here: every track is
 * described before its first event, and at equal timestamps the importer keeps file order,
 * which the nesting rules below rely on.
 *
 * Nesting: CPU slices of one thread arrive in end order (a wrapper writes its record when the
 * call returns, so inner calls come first). cv_place_cpu keeps a short stack of finished
 * intervals and makes each new slice either contain, sit inside, or follow them — never
 * partially overlap (clamped and counted otherwise). GPU work of one stream goes on lanes: the
 * stream's own track, and sibling "overlap" tracks only when CUPTI reports real overlap.
 *
 * Memory per file is bounded: thread and stream tables, fixed-size direct-mapped caches for
 * correlations (the oldest entry is forgotten), a bounded live-allocation map, and a ring of
 * GPU-busy bins. */
#include "convert.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert_sink.h"
#include "demangle.h"
#include "gt_reader.h"
#include "gtrace_api.h"
#include "kernel_link.h"
#include "op_link.h"
#include "util.h"
#include "symbolize.h"

/* ------------------------------------------------------------------ sizes and ids */

#define MAX_DONE 64           /* finished intervals remembered per thread track */
#define MAX_NVTX 64           /* open NVTX push ranges per thread */
#define LANES 4               /* a stream's track + 3 overlap tracks */
#define SMALL_OVERLAP_NS 2000 /* CUPTI overlap up to this is clamped on the stream's own track */
#define API_BITS 16
#define LATE_BITS 16
#define LATE_SLOTS (1u << LATE_BITS) /* CUPTI corr id -> a GPU op written before its link */
#define WAIT_SLOTS 4096u             /* our call id -> late ops waiting for the call's slice */
#define WAIT_OPS 4
#define API_SLOTS (1u << API_BITS) /* our corr id -> where its slice is */
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
static const char *const CAT_NAMES[CAT_COUNT] = {"",       "cuda",     "copy",   "sync",   "cudnn",
                                                 "cublas", "memory",   "kernel", "memcpy", "memset",
                                                 "nvtx",   "gputrace", "launch", "advice"};

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
static const char *const ARG_NAMES[AN_END] = {"",
#define CV_ARG_STR(id, str) str,
                                              CV_ARG_NAMES(CV_ARG_STR)
#undef CV_ARG_STR
};
_Static_assert(MAX_SYNCS <= 64, "syncs_active is a 64-bit mask");
_Static_assert(IID_API(GT_FN_MAX) <= IID_STALL(0) && IID_STALL(GT_FN_MAX) <= 1000,
               "name keys overlap");

/* One flow id per arrow: a GPU op's link to its call (by the op's CUPTI correlation id), or a
 * sync stall's link to the GPU op it waited for (by the call's id). */
enum flow_kind { FLOW_OP = 2, FLOW_SYNC = 3 };

/* ------------------------------------------------------------------ state */

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

typedef struct cv_gpu_op {
    uint16_t kind; /* GT_REC_GPU_KERNEL/MEMCPY/MEMSET; 0 = none */
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
} cv_device;

typedef struct cv_api_slot {
    uint64_t corr;
    uint64_t track;
    uint32_t seq;
    uint32_t n_gpu;
    int64_t b, e;
    uint64_t stream;
} cv_api_slot;

/* A GPU op written without a link because the pair that explains it came later in the file
 * (traces recorded before the writer drained the application's rings first): where its begin is,
 * so that the link can still be drawn when the pair, and then the call, arrive. */
typedef struct cv_late_slot {
    uint64_t corr;
    uint64_t track;
    uint32_t seq;
    int64_t ts;
} cv_late_slot;

typedef struct cv_wait_slot { /* our call id -> CUPTI corr ids of its late ops */
    uint64_t external;
    uint64_t corr[WAIT_OPS];
    int n;
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
    int64_t pinned_live;
    int64_t first_ts; /* output clock, for items without a usable time */

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
    cv_wait_slot *wait;
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
} cv_ctx;

/* ------------------------------------------------------------------ small helpers */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Track uuids are handed out in order, unique over the whole output: small numbers are short
 * varints, and every event packet carries one. */
static uint64_t cv_uuid(cv_ctx *c)
{
    return c->next_uuid++;
}

static uint64_t cv_flow_id(const cv_file *f, int kind, uint64_t id)
{
    uint64_t u = mix64(mix64(((uint64_t)f->index << 8) | (uint64_t)kind) ^ id);
    return u ? u : 1;
}

/* Map a CLOCK_REALTIME time to the output clock; 0 when it cannot be represented. */
static int cv_ts(cv_ctx *c, uint64_t real, int64_t *out)
{
    int64_t v;
    if (real == 0 || real > (uint64_t)INT64_MAX ||
        __builtin_add_overflow((int64_t)real, c->offset, &v) || v <= 0) {
        c->st->bad_timestamps++;
        return 0;
    }
    *out = v;
    return 1;
}

static const char *cv_str(cv_file *f, uint32_t id, const char *fallback)
{
    const char *s = id ? gt_reader_string(f->r, id) : NULL;
    return s ? s : fallback;
}

/* Copy a record body into a struct: short (older) bodies leave later fields zero. */
static void cv_body(void *dst, size_t dst_size, const gt_record *rec)
{
    size_t n = rec->body_size < dst_size ? rec->body_size : dst_size;
    memcpy(dst, rec->body, n);
    if (n < dst_size)
        memset((char *)dst + n, 0, dst_size - n);
}

/* Hot-path events: set every scalar field, but leave the flow arrays (read only up to n_flows
 * and n_term_flows) alone — zeroing the whole struct twice per slice showed in the profile. */
static void cv_event_init(cv_event *e, int type, uint64_t track, uint32_t seq, int64_t ts)
{
    e->type = type;
    e->track = track;
    e->seq = seq;
    e->ts = ts;
    e->name = NULL;
    e->name_iid = 0;
    e->cat = NULL;
    e->cat_iid = 0;
    e->args = NULL;
    e->n_args = 0;
    e->n_flows = 0;
    e->n_term_flows = 0;
    e->counter = 0;
    e->dcounter = 0;
    e->counter_is_double = 0;
}

static void cv_emit(cv_ctx *c, const cv_event *e)
{
    if (e->ts > c->max_ts)
        c->max_ts = e->ts;
    c->sink->event(c->sink, e);
    c->st->events++;
}

static void cv_describe(cv_ctx *c, const cv_track_desc *d)
{
    c->sink->track(c->sink, d);
    c->st->events++;
}

/* A complete slice: BEGIN and END back to back (file order matters at equal timestamps). */
static void cv_slice(cv_ctx *c, cv_event *begin, int64_t end_ts, const uint64_t *end_term,
                     int n_end_term)
{
    begin->type = CV_BEGIN;
    cv_emit(c, begin);
    cv_event end;
    cv_event_init(&end, CV_END, begin->track, begin->seq, end_ts);
    for (int i = 0; i < n_end_term && i < CV_MAX_FLOWS; i++)
        end.term_flows[end.n_term_flows++] = end_term[i];
    cv_emit(c, &end);
    c->st->slices++;
}

static void cv_set_cat(cv_event *e, int cat)
{
    e->cat = CAT_NAMES[cat];
    e->cat_iid = IID_CAT((uint64_t)cat);
}

/* Hot-path text without snprintf (its format parsing was a tenth of the conversion time). */
static char *cv_put_i64(char *d, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *d++ = '-';
    while (n)
        *d++ = tmp[--n];
    return d;
}

/* "AxBxC" at d (at most 62 bytes: three 20-digit numbers and two separators); returns its end. */
static char *cv_put_dims(char *d, const int64_t v[3])
{
    d = cv_put_i64(d, v[0]);
    *d++ = 'x';
    d = cv_put_i64(d, v[1]);
    *d++ = 'x';
    return cv_put_i64(d, v[2]);
}

/* "AxBxC" into buf (at least 64 bytes). */
static const char *cv_dims(char *buf, int64_t a, int64_t b, int64_t c)
{
    *cv_put_dims(buf, (const int64_t[3]){a, b, c}) = 0;
    return buf;
}

/* A launch configuration as one argument, "grid 1152x128x1, block 128x1x1, 40 registers,
 * 1024 B shared memory" (v: grid, block, registers, shared memory; a negative count is left
 * out). One interned string per distinct configuration instead of four arguments per event:
 * kernels are a thousand events per step and repeat a few hundred configurations. */
static const char *cv_config_text(cv_config_memo *m, const int64_t v[8])
{
    if (m->valid && !memcmp(m->v, v, sizeof m->v))
        return m->text;
    char *d = cv_put_dims(stpcpy(m->text, "grid "), v);
    d = cv_put_dims(stpcpy(d, ", block "), v + 3);
    if (v[6] >= 0)
        d = stpcpy(cv_put_i64(stpcpy(d, ", "), v[6]), " registers");
    if (v[7] >= 0)
        d = stpcpy(cv_put_i64(stpcpy(d, ", "), v[7]), " B shared memory");
    *d = 0;
    memcpy(m->v, v, sizeof m->v);
    m->valid = 1;
    return m->text;
}

/* Concatenate up to four strings (NULL = none) into buf of cap bytes, truncating. */
static const char *cv_concat(char *buf, size_t cap, const char *a, const char *b, const char *c,
                             const char *d)
{
    const char *parts[4] = {a, b, c, d};
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        for (const char *s = parts[i]; s && *s && n + 1 < cap; s++)
            buf[n++] = *s;
    buf[n] = 0;
    return buf;
}

/* ------------------------------------------------------------------ processes and tracks */

static void cv_describe_process(cv_ctx *c, cv_file *f)
{
    const char *exe = gt_reader_exe(f->r);
    const char *base = strrchr(exe, '/');
    base = base ? base + 1 : exe;
    char name[160];
    if (f->hdr->rank >= 0)
        snprintf(name, sizeof name, "%s (rank %d%s%s)", *base ? base : "process", f->hdr->rank,
                 f->hdr->host[0] ? " on " : "", f->hdr->host[0] ? f->hdr->host : "");
    else
        snprintf(name, sizeof name, "%s", *base ? base : "process");
    name[sizeof name - 1] = 0;
    cv_track_desc d = {.uuid = f->proc_uuid,
                       .seq = f->proc_seq,
                       .kind = CV_TRACK_PROCESS,
                       .name = name,
                       .pid = f->pid_out,
                       .cmdline = gt_reader_cmdline(f->r)};
    /* Ranks sort in rank order in the UI. */
    d.rank_order = f->hdr->rank >= 0 ? f->hdr->rank + 1 : 0;
    cv_describe(c, &d);
}

static void cv_child_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int64_t lane_id,
                           int order)
{
    cv_track_desc d = {.uuid = uuid,
                       .parent = f->proc_uuid,
                       .seq = f->proc_seq,
                       .kind = CV_TRACK_CHILD,
                       .name = name,
                       .pid = f->pid_out,
                       .tid = lane_id,
                       .rank_order = order};
    cv_describe(c, &d);
}

static void cv_counter_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int unit,
                             const char *unit_name)
{
    cv_track_desc d = {.uuid = uuid,
                       .parent = f->proc_uuid,
                       .seq = f->proc_seq,
                       .kind = CV_TRACK_COUNTER,
                       .name = name,
                       .pid = f->pid_out,
                       .unit = unit,
                       .unit_name = unit_name};
    cv_describe(c, &d);
}

static void cv_describe_thread(cv_ctx *c, cv_file *f, cv_thread *t)
{
    char fallback[32];
    const char *name = t->name;
    if (!name[0]) {
        if ((int32_t)t->tid == f->hdr->pid)
            name = "main";
        else {
            snprintf(fallback, sizeof fallback, "thread %u", t->tid);
            name = fallback;
        }
    }
    cv_track_desc d = {.uuid = t->uuid,
                       .seq = t->seq,
                       .kind = CV_TRACK_THREAD,
                       .name = name,
                       .pid = f->pid_out,
                       .tid = (int64_t)t->tid + f->tid_shift};
    cv_describe(c, &d);
    t->described = 1;
}

static cv_thread *cv_thread_get(cv_ctx *c, cv_file *f, uint32_t tid)
{
    if (tid == 0)
        tid = (uint32_t)f->hdr->pid; /* records of gputrace itself: show them on the main thread */
    if (f->last_thread < f->n_threads && f->threads[f->last_thread].tid == tid)
        return &f->threads[f->last_thread];
    for (size_t i = 0; i < f->n_threads; i++)
        if (f->threads[i].tid == tid) {
            f->last_thread = i;
            return &f->threads[i];
        }
    if (f->n_threads == f->cap_threads) {
        size_t n = f->cap_threads ? f->cap_threads * 2 : 16;
        cv_thread *t = realloc(f->threads, n * sizeof *t);
        if (!t)
            return NULL;
        f->threads = t;
        f->cap_threads = n;
    }
    cv_thread *t = &f->threads[f->n_threads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->seq = c->next_seq++;
    t->uuid = cv_uuid(c);
    f->last_thread = f->n_threads++;
    return t;
}

static cv_thread *cv_thread_ready(cv_ctx *c, cv_file *f, uint32_t tid)
{
    cv_thread *t = cv_thread_get(c, f, tid);
    if (t && !t->described)
        cv_describe_thread(c, f, t);
    return t;
}

static cv_device *cv_device_get(cv_ctx *c, cv_file *f, uint32_t device)
{
    for (int i = 0; i < f->n_devices; i++)
        if (f->devices[i].device == device)
            return &f->devices[i];
    if (f->n_devices == MAX_DEVICES)
        return &f->devices[MAX_DEVICES - 1]; /* damaged input: fold the rest together */
    cv_device *d = &f->devices[f->n_devices++];
    memset(d, 0, sizeof *d);
    d->device = device;
    d->seq = c->next_seq++;
    d->mem_uuid = cv_uuid(c);
    d->busy_uuid = cv_uuid(c);
    d->bin0 = -1;
    return d;
}

static cv_stream *cv_stream_get(cv_ctx *c, cv_file *f, uint32_t device, uint32_t stream)
{
    for (size_t i = f->n_streams; i-- > 0;)
        if (f->streams[i].device == device && f->streams[i].stream == stream)
            return &f->streams[i];
    if (f->n_streams == f->cap_streams) {
        size_t n = f->cap_streams ? f->cap_streams * 2 : 16;
        cv_stream *s = realloc(f->streams, n * sizeof *s);
        if (!s)
            return NULL;
        f->streams = s;
        f->cap_streams = n;
    }
    cv_stream *s = &f->streams[f->n_streams++];
    memset(s, 0, sizeof *s);
    s->device = device;
    s->stream = stream;
    s->seq = c->next_seq++;
    for (int l = 0; l < LANES; l++)
        s->lanes.uuid[l] = cv_uuid(c);
    return s;
}

/* ------------------------------------------------------------------ nesting */

/* Make [*b, *e] nest with what this thread track already has. Returns 1 if it had to move. */
static int cv_place_cpu(cv_thread *t, int64_t *b, int64_t *e)
{
    int moved = 0;
    int64_t contained_max_end = 0;
    int tie_begin = 0;
    if (*e < *b)
        *e = *b;
    if (*b < t->floor) {
        *b = t->floor;
        if (*e < *b)
            *e = *b;
        moved = 1;
    }
    while (t->n_done) {
        cv_iv top = t->done[t->n_done - 1];
        if (top.e <= *b) { /* finished before this one began */
            if (top.e > t->floor)
                t->floor = top.e;
            t->n_done--;
            continue;
        }
        if (*b <= top.b && top.e <= *e) { /* this one contains it (inner call came first) */
            if (top.b == *b)
                tie_begin = 1;
            if (top.e > contained_max_end)
                contained_max_end = top.e;
            t->n_done--;
            continue;
        }
        if (top.b <= *b && *e <= top.e) { /* inside it: out-of-order arrival */
            if (*e == top.e && *e > *b && *e - 1 >= contained_max_end)
                (*e)--; /* its END comes later in the file: end strictly before top's */
            break;
        }
        *b = top.e; /* partial overlap: start it where the other ends */
        if (*e < *b)
            *e = *b;
        moved = 1;
    }
    /* A parent that begins exactly with its first child was written after it: at equal
     * timestamps the importer keeps file order, so begin the parent 1 ns earlier when room. */
    if (tie_begin && *b - 1 >= t->floor && (!t->n_done || *b - 1 >= t->done[t->n_done - 1].b))
        (*b)--;
    if (t->n_done == MAX_DONE) {
        memmove(t->done, t->done + 1, (MAX_DONE - 1) * sizeof t->done[0]);
        t->n_done--;
    }
    t->done[t->n_done++] = (cv_iv){*b, *e};
    return moved;
}

/* Pick the lane for [*b, *e]: the stream's own track unless it overlaps by more than a little. */
static int cv_place_lane(cv_lanes *l, int64_t *b, int64_t *e, int *moved)
{
    *moved = 0;
    if (*e < *b)
        *e = *b;
    int lane = -1;
    if (*b >= l->last_end[0]) {
        lane = 0;
    } else if (l->last_end[0] - *b <= SMALL_OVERLAP_NS && *e >= l->last_end[0]) {
        *b = l->last_end[0];
        lane = 0;
        *moved = 1;
    } else {
        for (int i = 1; i < LANES && lane < 0; i++)
            if (*b >= l->last_end[i])
                lane = i;
        if (lane < 0) {
            lane = 0;
            for (int i = 1; i < LANES; i++)
                if (l->last_end[i] < l->last_end[lane])
                    lane = i;
            *b = l->last_end[lane];
            if (*e < *b)
                *e = *b;
            *moved = 1;
        }
    }
    l->last_end[lane] = *e;
    return lane;
}

/* ------------------------------------------------------------------ caches */

/* Correlation ids count up: folding (not hashing) them keeps consecutive ids in consecutive
 * slots, so the caches are written and read like rings (the oldest id is what gets replaced)
 * instead of by random access, which cost a cache miss per record on large traces. */
static size_t cv_corr_slot(uint64_t corr, unsigned bits)
{
    return (size_t)((corr ^ (corr >> bits) ^ (corr >> 2 * bits) ^ (corr >> 3 * bits)) &
                    ((1ull << bits) - 1));
}

static cv_api_slot *cv_api_slot_of(cv_file *f, uint64_t corr)
{
    return &f->api[cv_corr_slot(corr, API_BITS)];
}

static cv_api_slot *cv_api_find(cv_file *f, uint64_t corr)
{
    cv_api_slot *s = cv_api_slot_of(f, corr);
    return corr && s->corr == corr ? s : NULL;
}

static cv_plan_slot *cv_plan_find(cv_file *f, uint32_t id)
{
    cv_plan_slot *s = &f->plans[id & (PLAN_SLOTS - 1)];
    return id && s->plan_id == id ? s : NULL;
}

static cv_sig_slot *cv_sig_find(cv_file *f, uint32_t id)
{
    cv_sig_slot *s = &f->sigs[id & (PLAN_SLOTS - 1)];
    return id && s->sig_id == id ? s : NULL;
}

static const char *cv_kernel_name(cv_file *f, uint32_t id)
{
    if (!id)
        return "(unknown kernel)";
    cv_name_slot *s = &f->names[mix64(id) & (NAME_SLOTS - 1)];
    if (s->id == id && s->name)
        return s->name;
    const char *m = gt_reader_string(f->r, id);
    if (!m)
        return "(unknown kernel)";
    char *d = gt_demangle(m);
    if (!d)
        return m;
    free(s->name);
    s->id = id;
    s->name = d;
    return d;
}

static cv_alloc *cv_alloc_slot(cv_file *f, uint64_t ptr, int create)
{
    if (create && (f->alloc_used + 1) * 2 > f->alloc_cap) {
        if (f->alloc_cap >= MAX_ALLOCS)
            return NULL;
        size_t ncap = f->alloc_cap ? f->alloc_cap * 2 : 1024;
        cv_alloc *n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < f->alloc_cap; i++) {
            if (!f->allocs[i].ptr)
                continue;
            size_t k = mix64(f->allocs[i].ptr) & (ncap - 1);
            while (n[k].ptr)
                k = (k + 1) & (ncap - 1);
            n[k] = f->allocs[i];
        }
        free(f->allocs);
        f->allocs = n;
        f->alloc_cap = ncap;
    }
    if (!f->alloc_cap)
        return NULL;
    size_t k = mix64(ptr) & (f->alloc_cap - 1);
    while (f->allocs[k].ptr) {
        if (f->allocs[k].ptr == ptr)
            return &f->allocs[k];
        k = (k + 1) & (f->alloc_cap - 1);
    }
    if (!create)
        return NULL;
    f->allocs[k].ptr = ptr;
    f->alloc_used++;
    return &f->allocs[k];
}

/* Remove with backward shift so probing chains stay intact. */
static void cv_alloc_remove(cv_file *f, cv_alloc *slot)
{
    size_t mask = f->alloc_cap - 1;
    size_t i = (size_t)(slot - f->allocs);
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (!f->allocs[j].ptr)
            break;
        size_t k = mix64(f->allocs[j].ptr) & mask;
        if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
            f->allocs[i] = f->allocs[j];
            i = j;
        }
    }
    f->allocs[i].ptr = 0;
    f->alloc_used--;
}

/* ------------------------------------------------------------------ counters */

static void cv_counter(cv_ctx *c, uint64_t track, uint32_t seq, int64_t ts, int64_t v, double dv,
                       int is_double)
{
    cv_event e = {.type = CV_COUNTER,
                  .track = track,
                  .seq = seq,
                  .ts = ts,
                  .counter = v,
                  .dcounter = dv,
                  .counter_is_double = is_double};
    cv_emit(c, &e);
    c->st->counters++;
}

static void cv_busy_flush_bin(cv_ctx *c, cv_file *f, cv_device *d)
{
    int64_t ts;
    uint32_t *bin = &d->bins[d->bin0 % BIN_RING];
    double pct = 100.0 * (double)*bin / (double)BIN_NS;
    if (pct > 100.0)
        pct = 100.0; /* concurrent streams: busy means at least one stream had work */
    if (cv_ts(c, (uint64_t)(d->bin0 * BIN_NS), &ts)) {
        if (!d->busy_described) {
            char name[48];
            snprintf(name, sizeof name, "GPU %u busy %%", d->device);
            cv_counter_track(c, f, d->busy_uuid, name, CV_UNIT_NONE, "%");
            d->busy_described = 1;
        }
        cv_counter(c, d->busy_uuid, d->seq, ts, 0, pct, 1);
    }
    *bin = 0;
    d->bin0++;
}

/* Add GPU work [start, end) (realtime) to the device's 10 ms bins, writing bins that fell out
 * of the window. Work older than the window is dropped from the busy counter only. */
static void cv_busy_add(cv_ctx *c, cv_file *f, cv_device *d, uint64_t start, uint64_t end)
{
    if (end <= start || start > (uint64_t)INT64_MAX || end > (uint64_t)INT64_MAX)
        return;
    int64_t first = (int64_t)start / BIN_NS, last = ((int64_t)end - 1) / BIN_NS;
    if (last - first > BIN_RING)
        first = last - BIN_RING; /* a kernel longer than the window: keep its tail */
    if (d->bin0 < 0)
        d->bin0 = first;
    if (last - d->bin0 >= 4 * BIN_RING) { /* long idle: write the window, then jump */
        for (int i = 0; i < BIN_RING; i++)
            cv_busy_flush_bin(c, f, d);
        d->bin0 = last - BIN_RING + 1;
    }
    while (last - d->bin0 >= BIN_RING)
        cv_busy_flush_bin(c, f, d);
    for (int64_t i = first; i <= last; i++) {
        if (i < d->bin0)
            continue;
        int64_t lo = i * BIN_NS, hi = lo + BIN_NS;
        int64_t s = (int64_t)start > lo ? (int64_t)start : lo;
        int64_t e = (int64_t)end < hi ? (int64_t)end : hi;
        uint32_t *bin = &d->bins[i % BIN_RING];
        uint64_t v = (uint64_t)*bin + (uint64_t)(e - s);
        *bin = v > (uint64_t)BIN_NS * 4 ? (uint32_t)BIN_NS * 4 : (uint32_t)v;
    }
}

static void cv_busy_finish(cv_ctx *c, cv_file *f, cv_device *d)
{
    if (d->bin0 < 0)
        return;
    int64_t last = d->bin0 + BIN_RING - 1;
    while (last > d->bin0 && d->bins[last % BIN_RING] == 0)
        last--;
    while (d->bin0 <= last)
        cv_busy_flush_bin(c, f, d);
    cv_busy_flush_bin(c, f, d); /* a closing bin brings the counter back to 0 */
}

static void cv_alloc_record(cv_ctx *c, cv_file *f, const gt_rec_api_alloc *a, int64_t ts)
{
    if (a->c.result != 0 || !a->ptr)
        return;
    int pinned = a->alloc_kind == GT_ALLOC_HOST_PINNED || a->alloc_kind == GT_ALLOC_HOST_REGISTERED;
    uint32_t device = a->c.device < 0 ? 0 : (uint32_t)a->c.device;
    cv_alloc *slot = cv_alloc_slot(f, a->ptr, !a->is_free);
    if (!a->is_free) {
        if (!slot) {
            f->allocs_untracked++;
            return;
        }
        if (slot->bytes) /* the same pointer again without a free we saw: replace it */
            (slot->pinned ? &f->pinned_live : &cv_device_get(c, f, slot->device)->mem_live)[0] -=
                (int64_t)slot->bytes;
        slot->bytes = a->bytes;
        slot->device = device;
        slot->pinned = (uint32_t)pinned;
    } else {
        if (!slot)
            return; /* freeing something allocated before recording started */
        pinned = (int)slot->pinned;
        device = slot->device;
    }
    int64_t delta = a->is_free ? -(int64_t)slot->bytes : (int64_t)slot->bytes;
    if (a->is_free)
        cv_alloc_remove(f, slot);
    if (pinned) {
        f->pinned_live += delta;
        if (!f->pinned_described) {
            cv_counter_track(c, f, f->pinned_uuid, "pinned host memory", CV_UNIT_BYTES, NULL);
            f->pinned_described = 1;
        }
        cv_counter(c, f->pinned_uuid, f->proc_seq, ts, f->pinned_live, 0, 0);
    } else {
        cv_device *d = cv_device_get(c, f, device);
        d->mem_live += delta;
        if (!d->mem_described) {
            char name[48];
            snprintf(name, sizeof name, "GPU %u memory allocated", d->device);
            cv_counter_track(c, f, d->mem_uuid, name, CV_UNIT_BYTES, NULL);
            d->mem_described = 1;
        }
        cv_counter(c, d->mem_uuid, d->seq, ts, d->mem_live, 0, 0);
    }
}

/* ------------------------------------------------------------------ CPU side */

typedef struct cv_args {
    cv_arg a[CV_MAX_ARGS];
    int n;
    char buf[4][128];
} cv_args;

static void arg_i(cv_args *x, enum cv_arg_name name, int64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_INT, .v.i = v};
}
static void arg_u(cv_args *x, enum cv_arg_name name, uint64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_UINT, .v.u = v};
}
static void arg_p(cv_args *x, enum cv_arg_name name, uint64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_PTR, .v.u = v};
}
static void arg_s(cv_args *x, enum cv_arg_name name, const char *v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_STR, .v.s = v};
}
static void arg_d(cv_args *x, enum cv_arg_name name, double v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_DOUBLE, .v.d = v};
}

/* ------------------------------------------------------------------ call sites */

/* The file's stack table and module maps, read in one pass of their own when the first record
 * with a stack shows up: symbolizing resolves every stack kept so far at once (ELF symbols and
 * one addr2line per module), so feeding stacks as they stream by would redo that for each new
 * stack. Files without stacks never get here. */
static int cv_syms_ready(cv_file *f)
{
    if (f->syms_state)
        return f->syms_state > 0;
    f->syms_state = -1;
    if (f->ctx_opts->symtab) { /* read already by whoever reads along: no third read */
        f->syms = f->ctx_opts->symtab(f->ctx_opts->record_ctx, f->index, f->src.path);
        if (f->syms) {
            f->syms_borrowed = 1;
            f->syms_state = 1;
            return 1;
        }
    }
    gt_reader *r = NULL;
    char err[512];
    int rc = f->src.path ? gt_reader_open(f->src.path, &r, err, sizeof err)
                         : gt_reader_open_mem(f->src.mem, f->src.len, &r, err, sizeof err);
    if (rc != GT_OPEN_OK)
        return 0;
    gt_symtab *st = gt_symtab_new();
    if (gt_symtab_load(st, r) > 0) {
        f->syms = st;
        f->syms_state = 1;
    } else {
        gt_symtab_free(st);
    }
    gt_reader_close(r);
    return f->syms_state > 0;
}

/* A native frame known only by its module and offset. */
static int cv_frame_bare(const gt_frame *fr)
{
    return !fr->python && !fr->function && fr->module;
}

/* Innermost first, one frame per line, at most STACK_FRAMES lines and STACK_TEXT_MAX bytes;
 * "..." ends a stack that goes on (or was cut when recorded). A run of bare frames of one
 * module (a library without symbols here: libtorch recorded on another machine) takes one
 * line, so the Python frames above it still fit. NULL when the stack has no frames. */
static char *cv_stack_format(gt_symtab *st, uint32_t id)
{
    enum { FETCH = 256 };
    gt_frame *fr = malloc(FETCH * sizeof *fr);
    char *text = malloc(STACK_TEXT_MAX);
    int n = fr && text ? gt_symbolize_stack(st, id, fr, FETCH) : 0;
    if (n <= 0) {
        free(fr);
        free(text);
        return NULL;
    }
    size_t used = 0;
    int lines = 0, i = 0;
    char line[600];
    while (i < n && lines < STACK_FRAMES) {
        size_t len = gt_frame_format(&fr[i], line, 512);
        int run = 1;
        while (cv_frame_bare(&fr[i]) && i + run < n && cv_frame_bare(&fr[i + run]) &&
               strcmp(fr[i + run].module, fr[i].module) == 0)
            run++;
        if (len >= 512)
            len = 511;
        if (run > 1)
            len += (size_t)snprintf(line + len, sizeof line - len, " +%d more", run - 1);
        if (used + len + 1 + 4 >= STACK_TEXT_MAX) /* room for "\n..." and the NUL */
            break;
        if (used)
            text[used++] = '\n';
        memcpy(text + used, line, len);
        used += len;
        lines++;
        i += run;
    }
    if (i < n || gt_symtab_stack_truncated(st, id)) {
        memcpy(text + used, used ? "\n..." : "...", used ? 4 : 3);
        used += used ? 4 : 3;
    }
    text[used] = '\0';
    free(fr);
    return text;
}

/* The cached texts of stack id; NULL when the table is full or memory ran out. */
static cv_stack_text *cv_stack_text_of(cv_file *f, uint32_t id)
{
    if (f->stack_text_used * 2 >= f->stack_text_cap) {
        if (f->stack_text_cap >= STACK_TEXT_SLOTS)
            goto lookup; /* full: known stacks still hit, new ones go without */
        uint32_t ncap = f->stack_text_cap ? f->stack_text_cap * 2 : 256;
        cv_stack_text *n = calloc(ncap, sizeof *n);
        if (!n)
            goto lookup;
        for (uint32_t i = 0; i < f->stack_text_cap; i++) {
            cv_stack_text *o = &f->stack_texts[i];
            if (!o->id)
                continue;
            uint32_t j = (uint32_t)mix64(o->id) & (ncap - 1);
            while (n[j].id)
                j = (j + 1) & (ncap - 1);
            n[j] = *o;
        }
        free(f->stack_texts);
        f->stack_texts = n;
        f->stack_text_cap = ncap;
    }
lookup:
    if (!f->stack_text_cap)
        return NULL;
    uint32_t i = (uint32_t)mix64(id) & (f->stack_text_cap - 1);
    for (uint32_t probes = 0; probes < f->stack_text_cap; probes++) {
        cv_stack_text *e = &f->stack_texts[i];
        if (e->id == id)
            return e;
        if (!e->id) {
            if (f->stack_text_used * 2 >= f->stack_text_cap)
                return NULL;
            e->id = id;
            e->site = gt_symtab_callsite(f->syms, id);
            e->text = cv_stack_format(f->syms, id);
            f->stack_text_used++;
            return e;
        }
        i = (i + 1) & (f->stack_text_cap - 1);
    }
    return NULL;
}

/* "call_site" and "stack" arguments of a slice whose record points at a stack. A stack the
 * table does not hold (a damaged file) leaves the slice without them. */
static void cv_stack_args(cv_file *f, uint32_t stack_id, cv_args *x)
{
    if (!cv_syms_ready(f))
        return;
    cv_stack_text *t = cv_stack_text_of(f, stack_id);
    if (!t)
        return;
    if (t->site)
        arg_s(x, AN_CALL_SITE, t->site);
    if (t->text)
        arg_s(x, AN_STACK, t->text);
}

static void cv_stack_texts_free(cv_file *f)
{
    for (uint32_t i = 0; i < f->stack_text_cap; i++)
        free(f->stack_texts[i].text);
    free(f->stack_texts);
    if (!f->syms_borrowed)
        gt_symtab_free(f->syms);
}

static const char *cv_op_name(uint32_t op)
{
    static const char *const names[] = {
        "unknown",       "conv_fwd", "conv_bwd_data", "conv_bwd_filter",
        "conv_bias_act", "matmul",   "other"};
    return op < sizeof names / sizeof names[0] ? names[op] : "unknown";
}

static void cv_notes_text(uint64_t notes, char *buf, size_t cap)
{
    static const char *const names[] = {"tensor_core",
                                        "down_convert_inputs",
                                        "reduced_precision_reduction",
                                        "fft",
                                        "nondeterministic",
                                        "winograd",
                                        "winograd_4x4",
                                        "winograd_6x6",
                                        "winograd_13x13",
                                        "strict_nan_prop"};
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(notes & (1ull << i)))
            continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n ? "," : "", names[i]);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
}

static void cv_cudnn_args(cv_file *f, const gt_rec_api_cudnn *r, cv_args *x)
{
    cv_plan_slot *plan = cv_plan_find(f, r->plan_id);
    uint32_t sig_id = r->sig_id ? r->sig_id : plan ? plan->sig_id : 0;
    cv_sig_slot *sig = cv_sig_find(f, sig_id);
    uint32_t op = plan ? plan->op_kind : sig ? sig->op_kind : 0;
    if (plan || sig)
        arg_s(x, AN_CUDNN_OP, cv_op_name(op));
    if (plan && plan->engine >= 0)
        arg_i(x, AN_ENGINE, plan->engine);
    if (r->algo >= 0 && (r->sig_id || !plan))
        arg_i(x, AN_ALGORITHM, r->algo);
    if (plan && plan->numerical_notes) {
        cv_notes_text(plan->numerical_notes, x->buf[0], sizeof x->buf[0]);
        arg_s(x, AN_NOTES, x->buf[0]);
    }
    if (sig)
        arg_s(x, AN_SHAPE, sig->text);
    if (r->math_type >= 0)
        arg_i(x, AN_MATH_TYPE, r->math_type);
    if (r->workspace_bytes)
        arg_u(x, AN_WORKSPACE_BYTES, r->workspace_bytes);
    if (r->cudnn_flags & GT_CUDNN_AUTOTUNE)
        arg_s(x, AN_AUTOTUNE, "candidate of an autotuning sweep");
}

/* src_memory and dst_memory, leaving out a side whose kind the direction or the event's name
 * already says (a DtoD copy of device memory needs neither): 0.7 M copies a step in DDP. */
static void cv_memory_args(cv_args *x, uint8_t src, uint8_t dst, int src_said, int dst_said)
{
    if (!src_said)
        arg_s(x, AN_SRC_MEMORY, gt_mem_kind_name(src));
    if (!dst_said)
        arg_s(x, AN_DST_MEMORY, gt_mem_kind_name(dst));
}

static void cv_syncs_update_min(cv_file *f)
{
    f->syncs_min_end = UINT64_MAX;
    for (uint64_t m = f->syncs_active; m; m &= m - 1) {
        const cv_sync *y = &f->syncs[__builtin_ctzll(m)];
        if (y->end_real < f->syncs_min_end)
            f->syncs_min_end = y->end_real;
    }
}

static int cv_blocking_sync(uint32_t kind)
{
    return kind == GT_SYNC_DEVICE || kind == GT_SYNC_STREAM || kind == GT_SYNC_EVENT;
}

static void cv_fold_flush(cv_ctx *c, cv_file *f, cv_thread *t, uint64_t cut_real);

/* ------------------------------------------------------------------ late links */

static cv_late_slot *cv_late_slot_of(cv_file *f, uint64_t corr)
{
    return &f->late[cv_corr_slot(corr, LATE_BITS)];
}

static cv_wait_slot *cv_wait_slot_of(cv_file *f, uint64_t call)
{
    return &f->wait[mix64(call) & (WAIT_SLOTS - 1)];
}

/* An instant inside the call's slice, 1 ns after its begin, that starts flow id: every arrow from
 * a call starts at one, so that an arrow is written only once its other end is known (a flow id
 * on the call's own slice would start arrows that nothing may end). Not at the slice's middle: a
 * long call (a plan's first execute, an autotuning sweep) has kernels running before its middle,
 * and a flow must not end before it starts. */
static void cv_anchor(cv_ctx *c, const cv_api_slot *api, uint64_t id)
{
    cv_event a = {.type = CV_INSTANT,
                  .track = api->track,
                  .seq = api->seq,
                  .ts = api->e > api->b ? api->b + 1 : api->b,
                  .name = "GPU work",
                  .name_iid = IID_GPU_WORK};
    cv_set_cat(&a, CAT_LAUNCH);
    a.flows[a.n_flows++] = id;
    cv_emit(c, &a);
    c->st->instants++;
}

/* One arrow is drawn: count it by how the link was found. */
static void cv_count_arrow(cv_ctx *c, int how)
{
    c->st->flows++;
    if (how == GT_LINK_TIME)
        c->st->linked_by_time++;
    else if (how == GT_LINK_ORDER)
        c->st->linked_by_order++;
}

/* The link of an op written before its link was decided (or before its call's slice): an
 * instant at the op's begin, on the op's GPU track, ends the flow from an anchor in the call. */
static void cv_late_draw(cv_ctx *c, cv_file *f, cv_api_slot *api, cv_late_slot *late)
{
    uint64_t id = cv_flow_id(f, FLOW_OP, late->corr);
    cv_anchor(c, api, id);
    cv_event g = {.type = CV_INSTANT,
                  .track = late->track,
                  .seq = late->seq,
                  .ts = late->ts,
                  .name = "from call",
                  .name_iid = IID_LATE};
    cv_set_cat(&g, CAT_LAUNCH);
    g.term_flows[g.n_term_flows++] = id;
    cv_emit(c, &g);
    c->st->instants++;
    int how = GT_LINK_NONE;
    gt_op_links_call(&f->links, late->corr, &how);
    cv_count_arrow(c, how);
    api->n_gpu++;
    late->corr = 0;
}

/* A pair (CUPTI corr -> our call) arrived: draw the link of the op it explains if that op was
 * written already, now or once the call's slice is written. */
static void cv_late_pair(cv_ctx *c, cv_file *f, uint64_t corr, uint64_t call)
{
    cv_late_slot *late = cv_late_slot_of(f, corr);
    if (!corr || !call || late->corr != corr)
        return;
    cv_api_slot *api = cv_api_find(f, call);
    if (api) {
        cv_late_draw(c, f, api, late);
        return;
    }
    cv_wait_slot *w = cv_wait_slot_of(f, call);
    if (w->external != call)
        *w = (cv_wait_slot){.external = call};
    if (w->n < WAIT_OPS)
        w->corr[w->n++] = corr;
}

/* The call's slice is written: draw the links of its ops that came before it. */
static void cv_late_call(cv_ctx *c, cv_file *f, uint64_t call)
{
    cv_wait_slot *w = cv_wait_slot_of(f, call);
    cv_api_slot *api = cv_api_find(f, call);
    if (!call || w->external != call || !api)
        return;
    for (int i = 0; i < w->n; i++) {
        cv_late_slot *late = cv_late_slot_of(f, w->corr[i]);
        if (late->corr == w->corr[i])
            cv_late_draw(c, f, api, late);
    }
    *w = (cv_wait_slot){0};
}

static void cv_api_emit(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    union {
        gt_rec_api api;
        gt_rec_api_memcpy cp;
        gt_rec_api_memset set;
        gt_rec_api_alloc al;
        gt_rec_api_launch ln;
        gt_rec_api_sync sy;
        gt_rec_api_cudnn dn;
        gt_rec_api_cublas bl;
    } u;
    if (rec->body_size < sizeof(gt_api_common))
        return;
    cv_body(&u, sizeof u, rec);
    const gt_api_common *a = &u.api.c;
    int64_t b, e;
    if (!cv_ts(c, a->t_begin_ns, &b))
        return;
    if (a->t_end_ns < a->t_begin_ns || !cv_ts(c, a->t_end_ns, &e))
        e = b;
    cv_thread *t = cv_thread_ready(c, f, rec->tid);
    if (!t)
        return;
    if (t->fold.n)
        cv_fold_flush(c, f, t, a->t_begin_ns);
    if (cv_place_cpu(t, &b, &e))
        c->st->clamped++;

    const char *fname = gt_api_func_name(a->func);
    char fbuf[32], sbuf[96];
    if (!fname) {
        snprintf(fbuf, sizeof fbuf, "api#%u", a->func);
        fname = fbuf;
    }
    enum gt_api_category cat = gt_api_func_category(a->func);
    cv_event ev;
    cv_event_init(&ev, CV_BEGIN, t->uuid, t->seq, b);
    ev.name = fname;
    ev.name_iid = a->func < GT_FN_MAX ? IID_API(a->func) : 0;
    cv_args x;
    x.n = 0;
    cv_sync *sync = NULL;
    cv_set_cat(&ev, CAT_CUDA);
    switch (rec->kind) {
    case GT_REC_API_MEMCPY:
        cv_set_cat(&ev, CAT_COPY);
        arg_u(&x, AN_BYTES, u.cp.bytes);
        arg_s(&x, AN_DIRECTION, gt_memcpy_dir_name(u.cp.direction));
        int from_dev = u.cp.direction == GT_DIR_D2H || u.cp.direction == GT_DIR_D2D;
        int to_dev = u.cp.direction == GT_DIR_H2D || u.cp.direction == GT_DIR_D2D;
        cv_memory_args(&x, u.cp.src_kind, u.cp.dst_kind, from_dev && u.cp.src_kind == GT_MEM_DEVICE,
                       to_dev && u.cp.dst_kind == GT_MEM_DEVICE);
        if (u.cp.is_async && !strstr(fname, "Async")) /* the name says it otherwise */
            arg_i(&x, AN_ASYNC, u.cp.is_async);
        break;
    case GT_REC_API_MEMSET:
        cv_set_cat(&ev, CAT_COPY);
        arg_u(&x, AN_BYTES, u.set.bytes);
        arg_i(&x, AN_VALUE, u.set.value);
        break;
    case GT_REC_API_ALLOC:
        cv_set_cat(&ev, CAT_MEMORY);
        arg_u(&x, AN_BYTES, u.al.bytes);
        arg_p(&x, AN_PTR, u.al.ptr);
        break;
    case GT_REC_API_LAUNCH:
        cv_set_cat(&ev, CAT_LAUNCH);
        if (u.ln.name_id)
            arg_s(&x, AN_KERNEL, cv_kernel_name(f, u.ln.name_id));
        arg_s(&x, AN_CONFIG,
              cv_config_text(&f->configs[CONFIG_LAUNCH],
                             (const int64_t[8]){u.ln.grid[0], u.ln.grid[1], u.ln.grid[2],
                                                u.ln.block[0], u.ln.block[1], u.ln.block[2], -1,
                                                u.ln.shared_mem ? (int64_t)u.ln.shared_mem : -1}));
        break;
    case GT_REC_API_SYNC:
        cv_set_cat(&ev, CAT_SYNC);
        if (cv_blocking_sync(u.sy.sync_kind)) {
            ev.name = cv_concat(sbuf, sizeof sbuf, fname, " (stall)", NULL, NULL);
            ev.name_iid = a->func < GT_FN_MAX ? IID_STALL(a->func) : 0;
            arg_u(&x, AN_STALL_NS, (uint64_t)(e - b));
            /* The GPU op it waited for links here when it arrives (see cv_resolve_syncs). */
            if (u.sy.sync_kind != GT_SYNC_EVENT)
                sync = &f->syncs[f->sync_next++ % MAX_SYNCS];
        }
        if (u.sy.event)
            arg_p(&x, AN_EVENT, u.sy.event);
        break;
    case GT_REC_API_CUDNN:
        cv_set_cat(&ev, CAT_CUDNN);
        cv_cudnn_args(f, &u.dn, &x);
        break;
    case GT_REC_API_CUBLAS:
        cv_set_cat(&ev, CAT_CUBLAS);
        arg_s(&x, AN_MNK, cv_dims(x.buf[1], u.bl.m, u.bl.n, u.bl.k));
        if (u.bl.batch > 1)
            arg_i(&x, AN_BATCH, u.bl.batch);
        arg_i(&x, AN_TRANSA, u.bl.transa);
        arg_i(&x, AN_TRANSB, u.bl.transb);
        if (u.bl.compute_type >= 0)
            arg_i(&x, AN_COMPUTE_TYPE, u.bl.compute_type);
        break;
    default:
        if (cat == GT_CAT_MEMORY)
            cv_set_cat(&ev, CAT_MEMORY);
        break;
    }
    /* Only what is not the default: a real step has thousands of calls, and their output bytes
     * are what issue 5 counts. Device 0 and success (result 0) go without an argument; the
     * correlation id only on calls that make GPU work (it names what the flow arrows link). */
    int makes_work = gt_op_link_makes_work(cat, a->func);
    if (rec->kind != GT_REC_API_ALLOC || a->stream)
        arg_p(&x, AN_STREAM, a->stream);
    if (a->device > 0)
        arg_i(&x, AN_DEVICE, a->device);
    if (a->result != 0)
        arg_i(&x, AN_RESULT, a->result);
    if (makes_work)
        arg_u(&x, AN_CORR_ID, a->corr_id);
    if (a->stack_id)
        cv_stack_args(f, a->stack_id, &x);
    ev.args = x.a;
    ev.n_args = x.n;
    cv_slice(c, &ev, e, NULL, 0);
    if (sync)
        *sync =
            (cv_sync){.active = 1,
                      .device = a->device < 0 ? 0 : (uint32_t)a->device,
                      .device_wide = u.sy.sync_kind == GT_SYNC_DEVICE,
                      .api_stream = a->stream,
                      .end_real = a->t_end_ns,
                      .flow = cv_flow_id(f, FLOW_SYNC, a->corr_id ? a->corr_id : rec->file_offset),
                      .track = t->uuid,
                      .seq = t->seq,
                      .end_ts = e > b ? e - 1 : e};
    if (sync) {
        f->syncs_active |= 1ull << (sync - f->syncs);
        cv_syncs_update_min(f);
    }

    if (a->corr_id) {
        cv_api_slot *s = cv_api_slot_of(f, a->corr_id);
        *s = (cv_api_slot){.corr = a->corr_id,
                           .track = t->uuid,
                           .seq = t->seq,
                           .b = b,
                           .e = e,
                           .stream = a->stream};
        cv_late_call(c, f, a->corr_id);
    }
    if (rec->kind == GT_REC_API_ALLOC)
        cv_alloc_record(c, f, &u.al, e);
}

/* ------------------------------------------------------------------ folded bookkeeping */

enum { DESC_ENGINEHEUR = 4, DESC_EXECUTION_PLAN = 5 }; /* cudnnBackendDescriptorType_t */

/* cv_ts without counting a failure: a call that cannot be mapped is not folded. */
static int cv_ts_ok(const cv_ctx *c, uint64_t real)
{
    int64_t v;
    return real && real <= (uint64_t)INT64_MAX &&
           !__builtin_add_overflow((int64_t)real, c->offset, &v) && v > 0;
}

/* A call folded into "cuDNN descriptor bookkeeping": short, successful, no call site, and no
 * argument of its own (no plan, shape, algorithm...), so folding loses only its exact times.
 * Plans and engine heuristics stay apart: their Finalize is where cuDNN builds and chooses. */
static int cv_foldable(const cv_ctx *c, const gt_record *rec, gt_rec_api_cudnn *dn)
{
    if (rec->kind != GT_REC_API_CUDNN || rec->body_size < sizeof(gt_api_common))
        return 0;
    cv_body(dn, sizeof *dn, rec);
    const gt_api_common *a = &dn->c;
    if (a->func != GT_FN_cudnnBackendFinalize && a->func != GT_FN_cudnnBackendDestroyDescriptor)
        return 0;
    if (dn->desc_type == DESC_ENGINEHEUR || dn->desc_type == DESC_EXECUTION_PLAN)
        return 0;
    if (a->result || a->stack_id || a->t_end_ns < a->t_begin_ns ||
        a->t_end_ns - a->t_begin_ns >= FOLD_CALL_NS)
        return 0;
    if (dn->plan_id || dn->sig_id || dn->algo >= 0 || dn->math_type >= 0 || dn->workspace_bytes ||
        dn->cudnn_flags)
        return 0;
    return cv_ts_ok(c, a->t_begin_ns) && cv_ts_ok(c, a->t_end_ns);
}

/* Whether dn continues the thread's pending run (same device and stream, shortly after). */
static int cv_fold_extends(const cv_fold *fo, const gt_rec_api_cudnn *dn)
{
    if (!fo->n)
        return 1;
    const gt_api_common *first = &fo->calls[0].c, *last = &fo->calls[fo->n - 1].c;
    return fo->n < FOLD_MAX && dn->c.device == first->device && dn->c.stream == first->stream &&
           dn->c.t_begin_ns >= last->t_end_ns && dn->c.t_begin_ns - last->t_end_ns <= FOLD_GAP_NS;
}

/* The run as the calls it is made of (a run of one, or one something else would cut). */
static void cv_fold_emit_calls(cv_ctx *c, cv_file *f, cv_thread *t)
{
    int n = t->fold.n;
    t->fold.n = 0; /* cv_api_emit flushes a pending run first: there is none now */
    for (int i = 0; i < n; i++) {
        gt_rec_api_cudnn body = t->fold.calls[i];
        gt_record r = {
            .kind = GT_REC_API_CUDNN, .body_size = sizeof body, .body = &body, .tid = t->tid};
        cv_api_emit(c, f, &r);
    }
}

/* "8 cudnnBackendDestroyDescriptor, 3 cudnnBackendFinalize" (the kinds that are in the run). */
static const char *cv_fold_calls_text(char *buf, int n_destroy, int n_finalize)
{
    char *d = buf;
    if (n_destroy) {
        d = cv_put_i64(d, n_destroy);
        d = stpcpy(d, " cudnnBackendDestroyDescriptor");
    }
    if (n_finalize) {
        d = stpcpy(d, n_destroy ? ", " : "");
        d = cv_put_i64(d, n_finalize);
        d = stpcpy(d, " cudnnBackendFinalize");
    }
    *d = 0;
    return buf;
}

static void cv_fold_emit_slice(cv_ctx *c, cv_file *f, cv_thread *t)
{
    const cv_fold *fo = &t->fold;
    int64_t b, e;
    cv_ts(c, fo->calls[0].c.t_begin_ns, &b); /* both checked by cv_foldable */
    cv_ts(c, fo->calls[fo->n - 1].c.t_end_ns, &e);
    if (cv_place_cpu(t, &b, &e))
        c->st->clamped++;
    uint64_t busy = 0;
    int n_destroy = 0;
    for (int i = 0; i < fo->n; i++) {
        busy += fo->calls[i].c.t_end_ns - fo->calls[i].c.t_begin_ns;
        n_destroy += fo->calls[i].c.func == GT_FN_cudnnBackendDestroyDescriptor;
    }
    cv_event ev;
    cv_event_init(&ev, CV_BEGIN, t->uuid, t->seq, b);
    ev.name = "cuDNN descriptor bookkeeping";
    ev.name_iid = IID_FOLD;
    cv_set_cat(&ev, CAT_CUDNN);
    cv_args x;
    x.n = 0;
    arg_u(&x, AN_COUNT, (uint64_t)fo->n);
    arg_u(&x, AN_BUSY_NS, busy);
    arg_s(&x, AN_CALLS, cv_fold_calls_text(x.buf[0], n_destroy, fo->n - n_destroy));
    arg_p(&x, AN_STREAM, fo->calls[0].c.stream);
    if (fo->calls[0].c.device > 0)
        arg_i(&x, AN_DEVICE, fo->calls[0].c.device);
    ev.args = x.a;
    ev.n_args = x.n;
    cv_slice(c, &ev, e, NULL, 0);
    for (int i = 0; i < fo->n; i++) { /* GPU work of a folded call (none expected) links here */
        const gt_api_common *a = &fo->calls[i].c;
        if (a->corr_id)
            *cv_api_slot_of(f, a->corr_id) = (cv_api_slot){.corr = a->corr_id,
                                                           .track = t->uuid,
                                                           .seq = t->seq,
                                                           .b = b,
                                                           .e = e,
                                                           .stream = a->stream};
    }
    t->fold.n = 0;
}

/* Write the thread's pending run before anything else on its track. cut_real is the begin of
 * what comes next (0: nothing): if it begins inside the run (a parent written after its
 * children), the run is written call by call so the parent keeps its own begin. */
static void cv_fold_flush(cv_ctx *c, cv_file *f, cv_thread *t, uint64_t cut_real)
{
    const cv_fold *fo = &t->fold;
    if (!fo->n)
        return;
    int cut = cut_real > fo->calls[0].c.t_begin_ns && cut_real < fo->calls[fo->n - 1].c.t_end_ns;
    if (fo->n == 1 || cut)
        cv_fold_emit_calls(c, f, t);
    else
        cv_fold_emit_slice(c, f, t);
}

static void cv_fold_flush_all(cv_ctx *c, cv_file *f)
{
    for (size_t i = 0; i < f->n_threads; i++)
        cv_fold_flush(c, f, &f->threads[i], 0);
}

/* NVTX ranges still open at the end of the file (a push whose pop was never recorded: NCCL's
 * ncclCommInitRankConfig, a process killed inside a range) end with the file's last event, so
 * that every slice ends. */
static void cv_close_ranges(cv_ctx *c, cv_file *f)
{
    for (size_t i = 0; i < f->n_threads; i++) {
        cv_thread *t = &f->threads[i];
        while (t->n_nvtx > 0) {
            int64_t b = t->nvtx_b[--t->n_nvtx];
            cv_event end = {.type = CV_END,
                            .track = t->uuid,
                            .seq = t->seq,
                            .ts = c->max_ts > b ? c->max_ts : b};
            cv_emit(c, &end);
            c->st->slices++;
        }
    }
}

static void cv_on_api(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_api_cudnn dn;
    if (!cv_foldable(c, rec, &dn)) {
        cv_api_emit(c, f, rec);
        return;
    }
    cv_thread *t = cv_thread_ready(c, f, rec->tid);
    if (!t)
        return;
    if (!cv_fold_extends(&t->fold, &dn))
        cv_fold_flush(c, f, t, dn.c.t_begin_ns);
    t->fold.calls[t->fold.n++] = dn;
}

/* ------------------------------------------------------------------ NVTX */

static void cv_on_nvtx(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_nvtx n;
    cv_body(&n, sizeof n, rec);
    int64_t ts;
    if (!cv_ts(c, n.t_ns, &ts))
        return;
    cv_thread *t = cv_thread_ready(c, f, rec->tid);
    if (!t)
        return;
    if (t->fold.n)
        cv_fold_flush(c, f, t, n.t_ns);
    const char *domain = n.domain_id ? cv_str(f, n.domain_id, "nvtx") : "nvtx";
    cv_event ev = {.track = t->uuid,
                   .seq = t->seq,
                   .ts = ts,
                   .cat = domain,
                   .name = cv_str(f, n.name_id, "(unnamed range)")};
    if (!n.domain_id)
        ev.cat_iid = IID_CAT(CAT_NVTX);
    /* Everything finished on the thread ends before a new range opens or an open one closes. */
    int64_t latest = t->floor;
    for (int i = 0; i < t->n_done; i++)
        if (t->done[i].e > latest)
            latest = t->done[i].e;
    switch (n.nvtx_kind) {
    case GT_NVTX_PUSH:
        if (t->n_nvtx == MAX_NVTX) {
            t->nvtx_overflow++;
            return;
        }
        if (ts < latest) {
            ts = latest;
            c->st->clamped++;
        }
        ev.ts = ts;
        ev.type = CV_BEGIN;
        cv_emit(c, &ev);
        t->nvtx_b[t->n_nvtx++] = ts;
        t->n_done = 0;
        t->floor = ts;
        break;
    case GT_NVTX_POP: {
        if (t->nvtx_overflow) {
            t->nvtx_overflow--;
            return;
        }
        if (!t->n_nvtx)
            return; /* a pop without its push (recording began inside the range) */
        if (ts < latest) {
            ts = latest;
            c->st->clamped++;
        }
        cv_event end = {.type = CV_END, .track = t->uuid, .seq = t->seq, .ts = ts};
        cv_emit(c, &end);
        c->st->slices++;
        int64_t b = t->nvtx_b[--t->n_nvtx];
        t->n_done = 0;
        t->done[t->n_done++] = (cv_iv){b, ts};
        t->floor = t->n_nvtx ? t->nvtx_b[t->n_nvtx - 1] : b;
        break;
    }
    case GT_NVTX_MARK: {
        int64_t e = ts;
        if (cv_place_cpu(t, &ts, &e))
            c->st->clamped++;
        ev.ts = ts;
        ev.type = CV_INSTANT;
        cv_emit(c, &ev);
        c->st->instants++;
        break;
    }
    case GT_NVTX_RANGE_START: {
        cv_range_slot *s = &f->open_ranges[mix64(n.range_id) & (RANGE_SLOTS - 1)];
        *s = (cv_range_slot){.range_id = n.range_id ? n.range_id : 1,
                             .b = ts,
                             .name_id = n.name_id,
                             .domain_id = n.domain_id};
        break;
    }
    case GT_NVTX_RANGE_END: {
        cv_range_slot *s = &f->open_ranges[mix64(n.range_id) & (RANGE_SLOTS - 1)];
        if (!n.range_id || s->range_id != n.range_id)
            return;
        int64_t b = s->b, e = ts;
        int moved;
        int lane = cv_place_lane(&f->ranges, &b, &e, &moved);
        c->st->clamped += (uint64_t)moved;
        if (!f->ranges.described[lane]) {
            char name[48];
            snprintf(name, sizeof name, lane ? "NVTX ranges #%d" : "NVTX ranges", lane + 1);
            cv_child_track(c, f, f->ranges.uuid[lane], name, 3000000 + lane, 0);
            f->ranges.described[lane] = 1;
        }
        ev.track = f->ranges.uuid[lane];
        ev.seq = f->proc_seq;
        ev.ts = b;
        ev.name = cv_str(f, s->name_id, "(unnamed range)");
        ev.cat = s->domain_id ? cv_str(f, s->domain_id, "nvtx") : "nvtx";
        ev.cat_iid = s->domain_id ? 0 : IID_CAT(CAT_NVTX);
        cv_slice(c, &ev, e, NULL, 0);
        s->range_id = 0;
        break;
    }
    case GT_NVTX_NAME_THREAD:
        if (n.name_id) {
            snprintf(t->name, sizeof t->name, "%s", cv_str(f, n.name_id, ""));
            cv_describe_thread(c, f, t);
        }
        break;
    default:
        break;
    }
}

/* ------------------------------------------------------------------ GPU side */

static void cv_lane_describe(cv_ctx *c, cv_file *f, cv_stream *s, int lane)
{
    char name[64];
    if (lane)
        snprintf(name, sizeof name, "GPU %u \xc2\xb7 stream %u (overlap %d)", s->device, s->stream,
                 lane);
    else
        snprintf(name, sizeof name, "GPU %u \xc2\xb7 stream %u", s->device, s->stream);
    int64_t lane_id = 1000000 + (int64_t)(s->device % 1000) * 1000 + (s->stream % 250) * 4 + lane;
    cv_child_track(c, f, s->lanes.uuid[lane], name, lane_id,
                   1000 + (int)(s->device % 1000) * 1000 + (int)(s->stream % 250) * 4 + lane);
    s->lanes.described[lane] = 1;
}

/* The arrow from the call that caused this GPU op, when its link is decided and the call's slice
 * is written: from an anchor in the call's slice to the op's slice. Returns 0 when it cannot be
 * drawn yet (the op is then remembered as a late one). */
static int cv_gpu_flow(cv_ctx *c, cv_file *f, const cv_gpu_op *op, cv_event *ev)
{
    int how = GT_LINK_NONE;
    uint64_t call = gt_op_links_call(&f->links, op->corr, &how);
    cv_api_slot *api = call ? cv_api_find(f, call) : NULL;
    if (!api)
        return 0;
    uint64_t id = cv_flow_id(f, FLOW_OP, op->corr);
    cv_anchor(c, api, id);
    ev->term_flows[ev->n_term_flows++] = id;
    api->n_gpu++;
    cv_count_arrow(c, how);
    return 1;
}

static const char *cv_copy_kind_name(uint8_t k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof names / sizeof names[0] ? names[k] : "Unknown";
}

static void cv_emit_gpu(cv_ctx *c, cv_file *f, cv_stream *s, cv_gpu_op *op)
{
    int64_t b, e;
    if (!cv_ts(c, op->start, &b))
        return;
    if (op->end < op->start || !cv_ts(c, op->end, &e))
        e = b;
    int moved;
    int lane = cv_place_lane(&s->lanes, &b, &e, &moved);
    c->st->clamped += (uint64_t)moved;
    if (!s->lanes.described[lane])
        cv_lane_describe(c, f, s, lane);
    cv_device *d = cv_device_get(c, f, s->device);
    cv_event ev;
    cv_event_init(&ev, CV_BEGIN, s->lanes.uuid[lane], s->seq, b);
    cv_args x;
    x.n = 0;
    char name[64];
    switch (op->kind) {
    case GT_REC_GPU_KERNEL: {
        const gt_rec_gpu_kernel *k = &op->r.k;
        ev.name = cv_kernel_name(f, k->name_id);
        ev.name_iid = k->name_id ? IID_KERNEL(k->name_id) : 0;
        cv_set_cat(&ev, CAT_KERNEL);
        arg_s(&x, AN_CONFIG,
              cv_config_text(&f->configs[CONFIG_KERNEL],
                             (const int64_t[8]){k->grid[0], k->grid[1], k->grid[2], k->block[0],
                                                k->block[1], k->block[2], k->registers,
                                                (int64_t)k->static_smem + k->dynamic_smem}));
        if (k->graph_id)
            arg_u(&x, AN_GRAPH_ID, k->graph_id);
        break;
    }
    case GT_REC_GPU_MEMCPY: {
        const gt_rec_gpu_memcpy *m = &op->r.m;
        uint8_t host = m->copy_kind == 2 ? m->dst_kind : m->src_kind;
        if (m->copy_kind == 1 || m->copy_kind == 2) {
            cv_concat(name, sizeof name, "Memcpy ", cv_copy_kind_name(m->copy_kind), " (",
                      gt_mem_kind_name(host));
            cv_concat(name + strlen(name), sizeof name - strlen(name), ")", NULL, NULL, NULL);
        } else {
            cv_concat(name, sizeof name, "Memcpy ", cv_copy_kind_name(m->copy_kind), NULL, NULL);
            host = 0;
        }
        ev.name = name;
        ev.name_iid = IID_MEMCPY(m->copy_kind, host, 0);
        cv_set_cat(&ev, CAT_MEMCPY);
        arg_u(&x, AN_BYTES, m->bytes);
        /* The name says the host side of HtoD and DtoH ("Memcpy HtoD (pinned)") and which
         * side is the device (DtoD, PtoP: both). */
        int from_dev = m->copy_kind == 2 || m->copy_kind == 8 || m->copy_kind == 10;
        int to_dev = m->copy_kind == 1 || m->copy_kind == 8 || m->copy_kind == 10;
        cv_memory_args(&x, m->src_kind, m->dst_kind,
                       m->copy_kind == 1 || (from_dev && m->src_kind == GT_MEM_DEVICE),
                       m->copy_kind == 2 || (to_dev && m->dst_kind == GT_MEM_DEVICE));
        if (op->end > op->start)
            arg_d(&x, AN_GBPS, (double)m->bytes / (double)(op->end - op->start));
        break;
    }
    default: {
        ev.name = "Memset";
        ev.name_iid = IID_MEMSET;
        cv_set_cat(&ev, CAT_MEMSET);
        arg_u(&x, AN_BYTES, op->r.s.bytes);
        break;
    }
    }
    /* Device and stream are in the track's name ("GPU 0 · stream 7"); the correlation id only
     * when no flow arrow links the op to its call. */
    int drawn = cv_gpu_flow(c, f, op, &ev);
    if (!drawn)
        arg_u(&x, AN_CORRELATION, op->corr);
    if (!drawn && op->corr) { /* its link or its call may come later: remember where it is */
        *cv_late_slot_of(f, op->corr) = (cv_late_slot){
            .corr = op->corr, .track = ev.track, .seq = ev.seq, .ts = e > b + 1 ? b + 1 : b};
        uint64_t call = gt_op_links_call(&f->links, op->corr, NULL);
        if (call)
            cv_late_pair(c, f, op->corr, call);
    }
    ev.args = x.a;
    ev.n_args = x.n;
    for (int i = 0; i < op->n_sync_flows && ev.n_flows < CV_MAX_FLOWS; i++)
        ev.flows[ev.n_flows++] = op->sync_flows[i];
    cv_slice(c, &ev, e, NULL, 0);
    c->st->gpu_ops++;
    cv_busy_add(c, f, d, op->start, op->end);
}

/* held is the op before next on its stream (next = NULL at the end of the file): it is what a
 * sync returning between held's end and next's end waited for. */
static void cv_resolve_syncs(cv_ctx *c, cv_file *f, cv_stream *s, cv_gpu_op *held,
                             const cv_gpu_op *next)
{
    /* A sync resolves only when next ends after it returned: skip the scan while next ends
     * before every pending sync (the common case: syncs of later steps are queued). */
    if (next && next->end <= f->syncs_min_end)
        return;
    uint64_t resolved = 0;
    for (uint64_t m = f->syncs_active; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        cv_sync *y = &f->syncs[i];
        if (!y->active || y->device != s->device)
            continue;
        if (!y->device_wide && !(s->has_api_stream && s->api_stream == y->api_stream))
            continue;
        if (held->end <= y->end_real && (!next || next->end > y->end_real) &&
            held->n_sync_flows < CV_MAX_FLOWS) {
            held->sync_flows[held->n_sync_flows++] = y->flow;
            cv_event w = {.type = CV_INSTANT,
                          .track = y->track,
                          .seq = y->seq,
                          .ts = y->end_ts,
                          .name = "waited for",
                          .name_iid = IID_WAITED};
            cv_set_cat(&w, CAT_SYNC);
            w.term_flows[w.n_term_flows++] = y->flow;
            cv_emit(c, &w);
            c->st->instants++;
            c->st->flows++;
            y->active = 0;
            f->syncs_active &= ~(1ull << i);
            resolved = 1;
        }
    }
    if (resolved)
        cv_syncs_update_min(f);
}

/* A link decided (op_link.h): drawn now if its op was written already, else when the op is. */
static void cv_link_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    cv_ctx *c = ctx;
    (void)how;
    cv_late_pair(c, c->f, corr, call);
}

static void cv_on_gpu(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    cv_gpu_op op; /* every field is set below; sync_flows is read only up to n_sync_flows */
    op.kind = rec->kind;
    op.n_sync_flows = 0;
    cv_body(&op.r, sizeof op.r, rec);
    switch (rec->kind) {
    case GT_REC_GPU_KERNEL:
        op.start = op.r.k.start_ns, op.end = op.r.k.end_ns, op.corr = op.r.k.corr_id;
        op.device = op.r.k.device, op.stream = op.r.k.stream;
        break;
    case GT_REC_GPU_MEMCPY:
        op.start = op.r.m.start_ns, op.end = op.r.m.end_ns, op.corr = op.r.m.corr_id;
        op.device = op.r.m.device, op.stream = op.r.m.stream;
        break;
    default:
        op.start = op.r.s.start_ns, op.end = op.r.s.end_ns, op.corr = op.r.s.corr_id;
        op.device = op.r.s.device, op.stream = op.r.s.stream;
        break;
    }
    cv_stream *s = cv_stream_get(c, f, op.device, op.stream);
    if (!s)
        return;
    if (!s->has_api_stream) {
        cv_api_slot *api = cv_api_find(f, gt_op_links_call(&f->links, op.corr, NULL));
        if (api) {
            s->has_api_stream = 1;
            s->api_stream = api->stream;
        }
    }
    if (s->held.kind) {
        cv_resolve_syncs(c, f, s, &s->held, &op);
        cv_emit_gpu(c, f, s, &s->held);
    }
    s->held = op;
}

static void cv_flush_streams(cv_ctx *c, cv_file *f)
{
    for (size_t i = 0; i < f->n_streams; i++) {
        cv_stream *s = &f->streams[i];
        if (s->held.kind) {
            cv_resolve_syncs(c, f, s, &s->held, NULL);
            cv_emit_gpu(c, f, s, &s->held);
            s->held.kind = 0;
        }
    }
}

/* ------------------------------------------------------------------ bookkeeping records */

static void cv_misc_instant(cv_ctx *c, cv_file *f, int64_t ts, const char *name, uint64_t iid,
                            int cat, const cv_args *x)
{
    if (!f->misc_described) {
        cv_child_track(c, f, f->misc_uuid, "gputrace", 2000000, -1);
        f->misc_described = 1;
    }
    cv_event ev = {.type = CV_INSTANT,
                   .track = f->misc_uuid,
                   .seq = f->proc_seq,
                   .ts = ts,
                   .name = name,
                   .name_iid = iid};
    cv_set_cat(&ev, cat);
    if (x) {
        ev.args = x->a;
        ev.n_args = x->n;
    }
    cv_emit(c, &ev);
    c->st->instants++;
}

static void cv_on_lost(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_lost l;
    cv_body(&l, sizeof l, rec);
    c->st->lost_records += l.count;
    int64_t ts;
    if (!cv_ts(c, l.t_first_ns, &ts)) {
        c->st->bad_timestamps--; /* not dropped: shown at the start instead */
        ts = f->first_ts;
    }
    static const char *const reasons[] = {"?",
                                          "thread buffer full",
                                          "CUPTI dropped records",
                                          "CUPTI buffer cap reached",
                                          "record too large",
                                          "write failed"};
    cv_args x;
    x.n = 0;
    arg_u(&x, AN_COUNT, l.count);
    arg_s(&x, AN_REASON, l.reason < 6 ? reasons[l.reason] : "?");
    arg_u(&x, AN_TID, l.lost_tid);
    if (l.t_last_ns > l.t_first_ns)
        arg_u(&x, AN_SPAN_NS, l.t_last_ns - l.t_first_ns);
    cv_misc_instant(c, f, ts, "records lost", IID_LOST, CAT_GPUTRACE, &x);
}

static void cv_on_sig(cv_file *f, const gt_record *rec)
{
    gt_rec_cudnn_conv_sig g;
    cv_body(&g, sizeof g, rec);
    if (!g.sig_id)
        return;
    cv_sig_slot *s = &f->sigs[g.sig_id & (PLAN_SLOTS - 1)];
    s->sig_id = g.sig_id;
    s->op_kind = g.op_kind;
    int nd = g.nb_dims < 1 ? 1 : g.nb_dims > 5 ? 5 : g.nb_dims;
    char *p = s->text;
    size_t cap = sizeof s->text;
    const int32_t *dims[3] = {g.x_dims, g.w_dims, g.y_dims};
    const char *lab[3] = {"x=", " w=", " y="};
    for (int k = 0; k < 3; k++) {
        int w = snprintf(p, cap, "%s", lab[k]);
        for (int i = 0; i < nd && w >= 0 && (size_t)w < cap; i++)
            w += snprintf(p + w, cap - (size_t)w, i ? "x%d" : "%d", dims[k][i]);
        if (w < 0 || (size_t)w >= cap)
            break;
        p += w;
        cap -= (size_t)w;
    }
}

static void cv_on_plan(cv_file *f, const gt_record *rec)
{
    gt_rec_cudnn_plan pl;
    cv_body(&pl, sizeof pl, rec);
    if (!pl.plan_id)
        return;
    cv_plan_slot *s = &f->plans[pl.plan_id & (PLAN_SLOTS - 1)];
    *s = (cv_plan_slot){.plan_id = pl.plan_id,
                        .op_kind = pl.op_kind,
                        .engine = pl.engine_global_index,
                        .numerical_notes = pl.numerical_notes,
                        .sig_id = pl.sig_id};
}

static void cv_on_thread(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_thread th;
    cv_body(&th, sizeof th, rec);
    cv_thread *t = cv_thread_get(c, f, th.tid);
    if (!t || !th.name_id)
        return;
    snprintf(t->name, sizeof t->name, "%s", cv_str(f, th.name_id, ""));
    cv_describe_thread(c, f, t); /* describing again renames it */
}

static void cv_on_record(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    switch (rec->kind) {
    case GT_REC_LOST:
        cv_on_lost(c, f, rec);
        break;
    case GT_REC_THREAD:
        cv_on_thread(c, f, rec);
        break;
    case GT_REC_API:
    case GT_REC_API_MEMCPY:
    case GT_REC_API_MEMSET:
    case GT_REC_API_ALLOC:
    case GT_REC_API_LAUNCH:
    case GT_REC_API_SYNC:
    case GT_REC_API_CUDNN:
    case GT_REC_API_CUBLAS:
        cv_on_api(c, f, rec);
        gt_op_links_on_record(&f->links, rec); /* after the slice: a link may name it at once */
        break;
    case GT_REC_CUDNN_PLAN:
        cv_on_plan(f, rec);
        break;
    case GT_REC_CUDNN_CONV_SIG:
        cv_on_sig(f, rec);
        break;
    case GT_REC_NVTX:
        cv_on_nvtx(c, f, rec);
        break;
    case GT_REC_GPU_KERNEL:
    case GT_REC_GPU_MEMCPY:
    case GT_REC_GPU_MEMSET:
        gt_op_links_on_record(&f->links, rec);
        cv_on_gpu(c, f, rec);
        break;
    case GT_REC_GPU_EXT_CORR:
        gt_op_links_on_record(&f->links, rec);
        break;
    case GT_REC_STRING:
    case GT_REC_CLOCK_SYNC: /* one mapping per file: the header's snapshot */
    case GT_REC_CUDNN_PERF:
    case GT_REC_STACK:
    case GT_REC_MODULE:
    case GT_REC_GPU_SYNC: /* the wrapped sync call shows the stall on its thread */
    case GT_REC_GPU_API:
    case GT_REC_CUPTI_STATS:
        break;
    default:
        c->st->unknown_records++;
        break;
    }
}

/* ------------------------------------------------------------------ one file */

static void cv_advice_emit(void *ctx, const gt_convert_advice *item)
{
    cv_ctx *c = ctx;
    cv_file *f = c->f;
    if (!item || !item->title)
        return;
    int64_t ts;
    if (!item->t_ns || !cv_ts(c, item->t_ns, &ts))
        ts = f->first_ts;
    if (!f->advice_described) {
        cv_child_track(c, f, f->advice_uuid, "gputrace advice", 2000001, -2);
        f->advice_described = 1;
    }
    cv_args x;
    x.n = 0;
    if (item->detail)
        arg_s(&x, AN_DETAIL, item->detail);
    cv_event ev = {.type = CV_INSTANT,
                   .track = f->advice_uuid,
                   .seq = f->proc_seq,
                   .ts = ts,
                   .name = item->title,
                   .args = x.a,
                   .n_args = x.n};
    cv_set_cat(&ev, CAT_ADVICE);
    cv_emit(c, &ev);
    c->st->instants++;
}

static int32_t cv_pick_pid(cv_ctx *c, int32_t pid)
{
    int32_t out = pid > 0 ? pid : 1;
    for (int tries = 0; tries < 512; tries++) {
        int used = 0;
        for (size_t i = 0; i < c->n_pids; i++)
            used |= c->pids_used[i] == out;
        if (!used)
            break;
        out = (int32_t)(((int64_t)out + (1 << 22)) % 0x7fffffff); /* above Linux pid_max */
    }
    if (c->n_pids == c->cap_pids) {
        size_t n = c->cap_pids ? c->cap_pids * 2 : 16;
        int32_t *p = realloc(c->pids_used, n * sizeof *p);
        if (!p)
            return out;
        c->pids_used = p;
        c->cap_pids = n;
    }
    c->pids_used[c->n_pids++] = out;
    return out;
}

static int cv_file_alloc(cv_file *f)
{
    f->api = calloc(API_SLOTS, sizeof *f->api);
    f->late = calloc(LATE_SLOTS, sizeof *f->late);
    f->wait = calloc(WAIT_SLOTS, sizeof *f->wait);
    f->plans = calloc(PLAN_SLOTS, sizeof *f->plans);
    f->sigs = calloc(PLAN_SLOTS, sizeof *f->sigs);
    f->names = calloc(NAME_SLOTS, sizeof *f->names);
    f->open_ranges = calloc(RANGE_SLOTS, sizeof *f->open_ranges);
    return f->api && f->late && f->wait && f->plans && f->sigs && f->names && f->open_ranges ? 0
                                                                                             : -1;
}

static void cv_file_free(cv_file *f)
{
    if (f->names)
        for (size_t i = 0; i < NAME_SLOTS; i++)
            free(f->names[i].name);
    free(f->api);
    free(f->late);
    free(f->wait);
    free(f->plans);
    free(f->sigs);
    free(f->names);
    free(f->open_ranges);
    free(f->allocs);
    gt_op_links_free(&f->links);
    free(f->threads);
    free(f->streams);
    cv_stack_texts_free(f);
}

static void cv_progress(cv_ctx *c, const char *path, const gt_record *rec)
{
    const gt_reader_stats *rs = gt_reader_get_stats(c->f->r);
    double pct = rs->bytes_total ? 100.0 * (double)rec->file_offset / (double)rs->bytes_total : 0;
    fprintf(stderr, "\rgputrace convert: %s %5.1f%% (%" PRIu64 " records)\033[K", path, pct,
            c->st->records);
}

static void cv_warn_damage(cv_ctx *c, const char *path, const gt_reader_stats *rs)
{
    int damaged = rs->chunks_damaged || rs->chunk_seq_gaps || rs->truncated;
    if (!damaged)
        return;
    c->st->damaged = 1;
    if (c->opts->quiet)
        return;
    fprintf(stderr,
            "gputrace convert: warning: %s is damaged at offset %" PRIu64 " (%" PRIu64
            " damaged chunks skipped, %" PRIu64 " missing, %s); converted what was "
            "readable\n",
            path, rs->first_damage_offset, rs->chunks_damaged, rs->chunk_seq_gaps,
            rs->truncated ? "truncated" : "not truncated");
}

static void cv_convert_file(cv_ctx *c, gt_reader *r, int index, cv_source src)
{
    cv_file f;
    memset(&f, 0, sizeof f);
    f.index = index;
    f.r = r;
    f.ctx_opts = c->opts;
    f.src = src;
    f.hdr = gt_reader_header(r);
    const char *path = gt_reader_path(r);
    c->f = &f;
    if (gt_op_links_init(&f.links, f.hdr->flags, cv_link_decided, c) != 0 ||
        cv_file_alloc(&f) != 0) {
        fprintf(stderr, "gputrace convert: out of memory for %s\n", path);
        cv_file_free(&f);
        c->st->damaged = 1;
        return;
    }
    if (!c->have_clock) {
        /* The first file's snapshot maps every file: realtime is the one clock that several
         * processes and hosts share (NTP), BOOTTIME is Perfetto's. */
        c->have_clock = 1;
        if (f.hdr->start_realtime_ns > 0 && f.hdr->start_boottime_ns > 0)
            c->offset = f.hdr->start_boottime_ns - f.hdr->start_realtime_ns;
    }
    f.proc_seq = c->next_seq++;
    f.proc_uuid = cv_uuid(c);
    f.misc_uuid = cv_uuid(c);
    f.advice_uuid = cv_uuid(c);
    f.pinned_uuid = cv_uuid(c);
    for (int l = 0; l < LANES; l++)
        f.ranges.uuid[l] = cv_uuid(c);
    f.pid_out = cv_pick_pid(c, f.hdr->pid);
    f.tid_shift = (int64_t)f.pid_out - f.hdr->pid;
    if (index == 0 && c->offset && f.hdr->start_realtime_ns > 0)
        c->sink->clock(c->sink, f.proc_seq, (uint64_t)f.hdr->start_realtime_ns,
                       (uint64_t)f.hdr->start_boottime_ns);
    if (!cv_ts(c, (uint64_t)f.hdr->start_realtime_ns, &f.first_ts)) {
        c->st->bad_timestamps--;
        f.first_ts = 1;
    }
    cv_describe_process(c, &f);
    c->max_ts = 0;

    gt_record rec;
    while (gt_reader_next(r, &rec) == 1) {
        c->st->records++;
        if (c->opts->on_record)
            c->opts->on_record(c->opts->record_ctx, index, path, &rec);
        cv_on_record(c, &f, &rec);
        if (c->opts->progress && (c->st->records & ((1u << 20) - 1)) == 0)
            cv_progress(c, path, &rec);
    }
    gt_op_links_finish(&f.links);
    cv_fold_flush_all(c, &f);
    cv_flush_streams(c, &f);
    cv_close_ranges(c, &f);
    for (int i = 0; i < f.n_devices; i++)
        cv_busy_finish(c, &f, &f.devices[i]);
    if (c->opts->on_file_end)
        c->opts->on_file_end(c->opts->record_ctx, index, path, 1);
    gt_grow((void **)&c->done, &c->cap_done, c->n_done, sizeof *c->done);
    c->done[c->n_done++] = (cv_done){.index = index,
                                     .path = gt_xstrdup(path),
                                     .pid = f.hdr->pid,
                                     .pid_out = f.pid_out,
                                     .proc_uuid = f.proc_uuid,
                                     .advice_uuid = f.advice_uuid,
                                     .proc_seq = f.proc_seq,
                                     .first_ts = f.first_ts};

    const gt_reader_stats *rs = gt_reader_get_stats(r);
    if (rs->lost_records && !c->opts->quiet)
        fprintf(stderr,
                "gputrace convert: %s: %" PRIu64 " records were lost while recording "
                "(shown as \"records lost\" on the gputrace track)\n",
                path, rs->lost_records);
    if (f.allocs_untracked && !c->opts->quiet)
        fprintf(stderr,
                "gputrace convert: %s: %" PRIu64 " allocations not tracked in the memory "
                "counters (too many live allocations)\n",
                path, f.allocs_untracked);
    cv_warn_damage(c, path, rs);
    c->st->unknown_records += rs->unknown_kinds;
    c->st->link_ambiguous += f.links.ambiguous;

    for (size_t i = 0; i < f.n_threads; i++)
        c->sink->seq_end(c->sink, f.threads[i].seq);
    for (int i = 0; i < f.n_devices; i++)
        c->sink->seq_end(c->sink, f.devices[i].seq);
    for (size_t i = 0; i < f.n_streams; i++)
        c->sink->seq_end(c->sink, f.streams[i].seq);
    cv_file_free(&f);
    c->f = NULL;
}

/* ------------------------------------------------------------------ inputs */

/* Advice of every file, then the end of their process sequences. */
static void cv_advice_all(cv_ctx *c)
{
    for (size_t i = 0; i < c->n_done; i++) {
        cv_done *d = &c->done[i];
        cv_file f;
        memset(&f, 0, sizeof f);
        f.index = d->index;
        f.pid_out = d->pid_out;
        f.proc_uuid = d->proc_uuid;
        f.advice_uuid = d->advice_uuid;
        f.proc_seq = d->proc_seq;
        f.first_ts = d->first_ts;
        c->f = &f;
        if (c->opts->advice)
            c->opts->advice(c->opts->advice_ctx, d->index, d->path, d->pid, cv_advice_emit, c);
        c->f = NULL;
        c->sink->seq_end(c->sink, d->proc_seq);
        free(d->path);
    }
    free(c->done);
    c->done = NULL;
    c->n_done = c->cap_done = 0;
}

static int cv_finish(cv_ctx *c, int opened)
{
    cv_advice_all(c);
    if (c->opts->progress)
        fprintf(stderr, "\r\033[K");
    int io = c->sink->finish(c->sink);
    c->st->bytes_out = c->sink->bytes;
    c->sink->destroy(c->sink);
    free(c->pids_used);
    if (io != 0) {
        fprintf(stderr, "gputrace convert: cannot write the output: %s\n", strerror(errno));
        return 2;
    }
    if (!opened || c->st->not_trace)
        return 2;
    return c->st->damaged ? 1 : 0;
}

static int cv_begin(cv_ctx *c, FILE *out, const gt_convert_opts *opts, gt_convert_stats *st)
{
    static const gt_convert_opts defaults = {0};
    memset(c, 0, sizeof *c);
    memset(st, 0, sizeof *st);
    c->opts = opts ? opts : &defaults;
    c->st = st;
    c->next_seq = 1;
    c->next_uuid = 1;
    c->sink = c->opts->format == GT_CONVERT_JSON ? cv_sink_json(out) : cv_sink_perfetto(out);
    if (!c->sink)
        return -1;
    c->sink->arg_names = ARG_NAMES;
    c->sink->n_arg_names = AN_END;
    return 0;
}

int gt_convert_run(const char *const *paths, int n_paths, FILE *out, const gt_convert_opts *opts,
                   gt_convert_stats *stats)
{
    gt_convert_stats local;
    gt_convert_stats *st = stats ? stats : &local;
    cv_ctx c;
    if (cv_begin(&c, out, opts, st) != 0)
        return 2;
    size_t n_in = 0;
    char **in = gt_expand_paths(paths, n_paths, &n_in, "convert");
    int opened = 0;
    for (size_t i = 0; i < n_in; i++) {
        gt_reader *r = NULL;
        char err[512];
        int rc = gt_reader_open(in[i], &r, err, sizeof err);
        if (rc != GT_OPEN_OK) {
            fprintf(stderr, "gputrace convert: %s\n", err);
            st->not_trace = 1;
            continue;
        }
        cv_convert_file(&c, r, opened++, (cv_source){.path = in[i]});
        st->files++;
        gt_reader_close(r);
    }
    gt_paths_free(in, n_in);
    if (!opened && !c.opts->quiet)
        fprintf(stderr, "gputrace convert: no readable trace among the inputs\n");
    return cv_finish(&c, opened);
}

int gt_convert_mem(const void *const *bufs, const size_t *lens, int n, FILE *out,
                   const gt_convert_opts *opts, gt_convert_stats *stats)
{
    gt_convert_stats local;
    gt_convert_stats *st = stats ? stats : &local;
    cv_ctx c;
    if (cv_begin(&c, out, opts, st) != 0)
        return 2;
    int opened = 0;
    for (int i = 0; i < n; i++) {
        gt_reader *r = NULL;
        char err[512];
        if (gt_reader_open_mem(bufs[i], lens[i], &r, err, sizeof err) != GT_OPEN_OK) {
            if (!c.opts->quiet)
                fprintf(stderr, "gputrace convert: %s\n", err);
            st->not_trace = 1;
            continue;
        }
        cv_convert_file(&c, r, opened++, (cv_source){.mem = bufs[i], .len = lens[i]});
        st->files++;
        gt_reader_close(r);
    }
    return cv_finish(&c, opened);
}
