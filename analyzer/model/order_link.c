/* order_link.c — kernels to calls by anchors and launch order (order_link.h). */
#include "order_link.h"

#include <stdlib.h>
#include <string.h>

#include "gtrace_format.h"
#include "util.h"

/* How far past its first possible kernel a launch looks for one of its name when no anchor bounds
 * it: unwrapped libraries' kernels (cuDNN's batch norm) sit in between. */
#define LOOKAHEAD 512
/* A kernel cannot start before its launch or library call began (a link drawn backwards would be
 * invalid). No slack for the CPU and CUPTI clocks: both are CLOCK_REALTIME, and on the H200 the
 * GPU work of 19,700 links (DataLoader and DDP runs) began 5 us or more after its call. */
#define CLOCK_SLACK_NS 0ull
/* How long a launch with no bound after it, and a kernel nobody took, wait (trace time). */
#define UNBOUNDED_WAIT_NS 10000000000ull
/* Decide waiting kernels at most this often (streaming): a pass walks everything that waits. */
#define RESOLVE_EVERY_NS 250000000ull

void gt_olink_init(gt_olinker *o, uint64_t window_ns, gt_olink_paired_fn paired,
                   gt_olink_emit_fn emit, void *ctx)
{
    memset(o, 0, sizeof *o);
    o->window_ns = window_ns;
    o->paired = paired;
    o->emit = emit;
    o->ctx = ctx;
}

void gt_olink_free(gt_olinker *o)
{
    free(o->kernels);
    free(o->launches);
    free(o->anchors);
    free(o->threads);
    free(o->streams);
    free(o->scratch);
    memset(o, 0, sizeof *o);
}

/* Room for one more element; false (and out_of_memory) when memory ran out. */
static bool grow(gt_olinker *o, void **v, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return true;
    size_t c = *cap ? 2 * *cap : 256;
    void *nv = realloc(*v, c * elem);
    if (!nv) {
        o->out_of_memory = true;
        return false;
    }
    *v = nv;
    *cap = c;
    return true;
}

static gt_olink_thread *thread_of(gt_olinker *o, uint32_t tid)
{
    for (size_t i = 0; i < o->n_threads; i++)
        if (o->threads[i].tid == tid)
            return &o->threads[i];
    if (!grow(o, (void **)&o->threads, o->n_threads, &o->cap_threads, sizeof *o->threads))
        return NULL;
    gt_olink_thread *t = &o->threads[o->n_threads++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->first_open = o->n_launches;
    return t;
}

static void note_time(gt_olinker *o, uint64_t t)
{
    if (t > o->newest_ns)
        o->newest_ns = t;
}

/* ------------------------------------------------------------------ input */

static void on_launch(gt_olinker *o, const gt_record *r)
{
    gt_rec_api_launch a;
    gt_body_copy(&a, sizeof a, r);
    if (r->body_size < sizeof a.c || a.c.result != 0 || a.graph_exec)
        return; /* failed launches put nothing on the GPU; graph launches are paired */
    gt_olink_thread *t = thread_of(o, r->tid);
    if (!t || !grow(o, (void **)&o->launches, o->n_launches, &o->cap_launches, sizeof *o->launches))
        return;
    gt_olink_launch *l = &o->launches[o->n_launches++];
    *l = (gt_olink_launch){.t_begin = a.c.t_begin_ns,
                           .call_id = a.c.corr_id,
                           .lo = t->last_anchor,
                           .stream = a.c.stream,
                           .name_id = a.name_id,
                           .tid = r->tid,
                           .device = a.c.device};
    memcpy(l->grid, a.grid, sizeof l->grid);
    memcpy(l->block, a.block, sizeof l->block);
    note_time(o, a.c.t_end_ns);
}

/* An anchor on a thread closes the id range of the launches before it on that thread. */
static void close_launches(gt_olinker *o, gt_olink_thread *t, uint64_t corr)
{
    for (size_t i = t->first_open; i < o->n_launches; i++)
        if (o->launches[i].tid == t->tid && !o->launches[i].hi)
            o->launches[i].hi = corr;
    t->first_open = o->n_launches;
    t->last_anchor = corr;
}

/* A blocking cudaDeviceSynchronize returned: the kernels of its thread's earlier launches on that
 * device have ended, so they started before its end (launch_ready). */
static void on_sync(gt_olinker *o, const gt_record *r)
{
    gt_rec_api_sync s;
    gt_body_copy(&s, sizeof s, r);
    if (r->body_size < sizeof s.c || s.sync_kind != GT_SYNC_DEVICE || s.c.result != 0 ||
        s.c.device < 0)
        return;
    /* Newest first: on one thread the array is in time order (sorted by begin, new ones
     * appended), and a launch already synced had every earlier one of its device synced too. */
    for (size_t i = o->n_launches; i-- > 0;) {
        gt_olink_launch *l = &o->launches[i];
        if (l->tid != r->tid || l->device != s.c.device || l->t_begin >= s.c.t_begin_ns)
            continue;
        if (l->synced_ns)
            break;
        l->synced_ns = s.c.t_end_ns;
    }
    note_time(o, s.c.t_end_ns);
}

static gt_olink_anchor *anchor_of_call(gt_olinker *o, uint64_t call_id)
{
    for (size_t i = o->n_anchors; i-- > 0;) /* the begin was added recently */
        if (o->anchors[i].call_id == call_id)
            return &o->anchors[i];
    return NULL;
}

static void on_anchor(gt_olinker *o, const gt_record *r, const gt_rec_gpu_ext_corr *e)
{
    gt_olink_thread *t = thread_of(o, r->tid);
    if (!t)
        return;
    close_launches(o, t, e->corr_id);
    if (e->ext_kind == GT_EXT_CORR_KIND_ANCHOR_END) {
        gt_olink_anchor *a = anchor_of_call(o, e->external_id);
        if (a && e->corr_id > a->begin) {
            a->end = e->corr_id;
            a->seen_ns = o->newest_ns;
        }
        return;
    }
    if (!grow(o, (void **)&o->anchors, o->n_anchors, &o->cap_anchors, sizeof *o->anchors))
        return;
    size_t i = o->n_anchors++; /* keep them sorted by begin: threads interleave a little */
    while (i > 0 && o->anchors[i - 1].begin > e->corr_id) {
        o->anchors[i] = o->anchors[i - 1];
        i--;
    }
    o->anchors[i] = (gt_olink_anchor){.call_id = e->external_id,
                                      .begin = e->corr_id,
                                      .seen_ns = o->newest_ns,
                                      .device = -1,
                                      .tid = r->tid};
}

/* An anchored library call's own record (written when it returned, after its end anchor): its
 * times, so that work that began before it is not linked to it, and its handle's stream. The
 * begin anchor is among the latest few (a call's record follows its anchors closely). */
static void on_library_call(gt_olinker *o, const gt_record *r)
{
    gt_api_common c;
    gt_body_copy(&c, sizeof c, r);
    if (r->body_size < sizeof c || !c.corr_id)
        return;
    for (size_t i = o->n_anchors, seen = 0; i-- > 0 && seen < 256; seen++) {
        gt_olink_anchor *a = &o->anchors[i];
        if (a->call_id == c.corr_id && a->tid == r->tid) {
            a->t_begin = c.t_begin_ns;
            a->t_end = c.t_end_ns > c.t_begin_ns ? c.t_end_ns : c.t_begin_ns;
            a->stream = c.stream;
            a->device = c.device;
            return;
        }
    }
}

/* A callback pair (a copy, a set, a graph launch; every launch in the reference mode), written
 * by the calling thread inside its call: a bound for that thread's launches like an anchor. A
 * launch's own pair comes before its launch record, hence the inclusive lower bound. */
static void on_pair(gt_olinker *o, const gt_record *r, const gt_rec_gpu_ext_corr *e)
{
    gt_olink_thread *t = thread_of(o, r->tid);
    if (t)
        close_launches(o, t, e->corr_id);
}

static void on_kernel(gt_olinker *o, const gt_record *r)
{
    gt_rec_gpu_kernel k;
    gt_body_copy(&k, sizeof k, r);
    if (k.queued_ns || !k.corr_id)
        return; /* linked by its queued time (kernel_link.h) */
    if (!grow(o, (void **)&o->kernels, o->n_kernels, &o->cap_kernels, sizeof *o->kernels))
        return;
    gt_olink_kernel *g = &o->kernels[o->n_kernels++];
    *g = (gt_olink_kernel){.corr = k.corr_id,
                           .start = k.start_ns,
                           .name_id = k.name_id,
                           .device = k.device,
                           .context = k.context,
                           .stream = k.stream};
    memcpy(g->grid, k.grid, sizeof g->grid);
    memcpy(g->block, k.block, sizeof g->block);
    note_time(o, k.start_ns);
    if (k.start_ns > o->newest_kernel_ns)
        o->newest_kernel_ns = k.start_ns;
}

/* ------------------------------------------------------------------ streams */

/* The default streams' handles: 0 (the legacy stream, or the thread's own when the program was
 * built with per-thread default streams), cudaStreamLegacy (1), cudaStreamPerThread (2). */
static bool default_handle(uint64_t handle)
{
    return handle <= 2;
}

/* What launches showed the handle to be (cudaStreamPerThread: on that thread), NULL not known.
 * The device tells the default handles of several devices apart (a device not known, -1, is
 * any: a created stream's handle is of one device). */
static gt_olink_stream *stream_of(const gt_olinker *o, uint64_t handle, int32_t device,
                                  uint32_t tid)
{
    uint32_t key_tid = handle == 2 ? tid : 0;
    for (size_t i = 0; i < o->n_streams; i++) {
        gt_olink_stream *s = &o->streams[i];
        if (s->handle == handle && s->tid == key_tid &&
            (s->device == device || s->device < 0 || device < 0))
            return s;
    }
    return NULL;
}

/* Launch l took kernel k by order: l's handle is k's stream. A handle seen on another stream
 * before was destroyed and made again (the latest counts), or, a default one, is per-thread. */
static void learn_stream(gt_olinker *o, const gt_olink_launch *l, const gt_olink_kernel *k)
{
    gt_olink_stream *s = stream_of(o, l->stream, l->device, l->tid);
    if (!s) {
        if (!o->streams) {
            o->streams = malloc(GT_OLINK_MAX_STREAMS * sizeof *o->streams);
            if (!o->streams) {
                o->out_of_memory = true;
                return;
            }
        }
        size_t i = o->n_streams < GT_OLINK_MAX_STREAMS ? o->n_streams++
                                                       : o->next_stream++ % GT_OLINK_MAX_STREAMS;
        s = &o->streams[i];
        *s = (gt_olink_stream){.handle = l->stream,
                               .tid = l->stream == 2 ? l->tid : 0,
                               .device = l->device,
                               .context = k->context,
                               .stream = k->stream};
        return;
    }
    if (s->context == k->context && s->stream == k->stream)
        return;
    s->varies |= default_handle(l->stream);
    s->context = k->context;
    s->stream = k->stream;
}

/* ------------------------------------------------------------------ deciding */

static int by_corr(const void *a, const void *b)
{
    const gt_olink_kernel *x = a, *y = b;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static int by_begin(const void *a, const void *b)
{
    const gt_olink_launch *x = a, *y = b;
    if (x->t_begin != y->t_begin)
        return (x->t_begin > y->t_begin) - (x->t_begin < y->t_begin);
    return (x->call_id > y->call_id) - (x->call_id < y->call_id);
}

/* The most calls a kernel is told apart among (more: ambiguous). */
#define MAX_HOLDERS 16

/* The ended anchored calls holding corr: how many (the first MAX_HOLDERS in held), and *open
 * when a call that has not ended yet may still hold it. */
static size_t anchored_calls(const gt_olinker *o, uint64_t corr, const gt_olink_anchor **held,
                             bool *open)
{
    *open = false;
    size_t lo = 0, hi = o->n_anchors; /* first anchor with begin >= corr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->anchors[mid].begin < corr)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    /* Library calls on several threads may overlap: look back over a few begins. */
    for (size_t i = lo, seen = 0; i-- > 0 && seen < 64; seen++) {
        const gt_olink_anchor *a = &o->anchors[i];
        if (!a->end)
            *open = true;
        else if (corr < a->end && n++ < MAX_HOLDERS)
            held[n - 1] = a;
    }
    return n;
}

static bool config_equal(const gt_olink_launch *l, const gt_olink_kernel *k)
{
    for (int i = 0; i < 3; i++)
        if ((int64_t)l->grid[i] != k->grid[i] || (int64_t)l->block[i] != k->block[i])
            return false;
    return true;
}

/* A binary search over one of the linker's sorted arrays: the first element whose field is at
 * least value. */
#define DEFINE_FIRST_AT_LEAST(name, array, count, field)                                           \
    static size_t name(const gt_olinker *o, uint64_t value)                                        \
    {                                                                                              \
        size_t lo = 0, hi = o->count;                                                              \
        while (lo < hi) {                                                                          \
            size_t mid = lo + (hi - lo) / 2;                                                       \
            if (o->array[mid].field < value)                                                       \
                lo = mid + 1;                                                                      \
            else                                                                                   \
                hi = mid;                                                                          \
        }                                                                                          \
        return lo;                                                                                 \
    }

/* The first kernel whose correlation id is at least corr; the first launch (sorted by begin)
 * that began at t or later. */
DEFINE_FIRST_AT_LEAST(first_kernel_from, kernels, n_kernels, corr)
DEFINE_FIRST_AT_LEAST(first_launch_from, launches, n_launches, t_begin)

/* The first free kernel from id `from` on (below the launch's upper bound, or within LOOKAHEAD)
 * that did not start before the launch and that match accepts. */
static gt_olink_kernel *first_free(gt_olinker *o, const gt_olink_launch *l, uint64_t from,
                                   bool (*match)(const gt_olink_launch *, const gt_olink_kernel *))
{
    size_t scanned = 0;
    for (size_t i = first_kernel_from(o, from); i < o->n_kernels; i++) {
        gt_olink_kernel *k = &o->kernels[i];
        if (l->hi && k->corr >= l->hi)
            break;
        if (!l->hi && ++scanned > LOOKAHEAD)
            break;
        if (!k->done && k->checked && k->start + CLOCK_SLACK_NS >= l->t_begin && match(l, k))
            return k;
    }
    return NULL;
}

static bool name_equal(const gt_olink_launch *l, const gt_olink_kernel *k)
{
    return l->name_id && k->name_id == l->name_id;
}

/* The kernel of launch l: the first free one of its name from the bound before it (inclusive)
 * and after its thread's previous kernel, below the bound after it; else (the wrapper could not
 * name it as CUPTI does) the first of its grid and block. */
static gt_olink_kernel *kernel_of_launch(gt_olinker *o, const gt_olink_launch *l,
                                         const gt_olink_thread *t)
{
    uint64_t from = l->lo > t->last_match ? l->lo : t->last_match + 1;
    gt_olink_kernel *k = first_free(o, l, from, name_equal);
    return k ? k : first_free(o, l, from, config_equal);
}

static void link(gt_olinker *o, gt_olink_kernel *k, uint64_t call_id, uint64_t *counter)
{
    k->done = 1;
    (*counter)++;
    o->emit(o->ctx, k->corr, call_id);
}

/* Whether another thread launched, while the anchored call a ran, a kernel of k's name whose ids
 * may hold k's: CUPTI numbers every thread's calls from one counter, so that launch's kernel
 * carries an id between a's anchors too. A library does not launch through the wrapped runtime,
 * so the kernel of that name is the launch's. */
static bool other_thread_launched(const gt_olinker *o, const gt_olink_anchor *a,
                                  const gt_olink_kernel *k)
{
    for (size_t i = first_launch_from(o, a->t_begin); i < o->n_launches; i++) {
        const gt_olink_launch *l = &o->launches[i];
        if (l->t_begin > a->t_end)
            break;
        if (l->tid != a->tid && name_equal(l, k) && l->lo <= k->corr &&
            (!l->hi || k->corr < l->hi) && k->start + CLOCK_SLACK_NS >= l->t_begin)
            return true;
    }
    return false;
}

enum holder {
    HOLDER_UNKNOWN, /* its record, or what its stream is, not read yet */
    HOLDER_MATCH,   /* on the kernel's stream */
    HOLDER_OTHER,   /* on another stream */
    HOLDER_MAYBE,   /* a default stream that is per-thread: may or may not be the kernel's */
    HOLDER_LATER,   /* began after the kernel started */
};

/* Whether the kernel k inside call a's anchors may be a's, by time and stream. */
static enum holder holder_of(const gt_olinker *o, const gt_olink_anchor *a,
                             const gt_olink_kernel *k)
{
    if (!a->t_begin)
        return HOLDER_UNKNOWN;
    if (k->start + CLOCK_SLACK_NS < a->t_begin)
        return HOLDER_LATER;
    const gt_olink_stream *s = stream_of(o, a->stream, a->device, a->tid);
    if (!s)
        return HOLDER_UNKNOWN;
    if (s->varies)
        return HOLDER_MAYBE;
    return s->context == k->context && s->stream == k->stream ? HOLDER_MATCH : HOLDER_OTHER;
}

/* A kernel inside the anchors of call a: whether it is a's. Unknown until a's record is read.
 * Not by stream: whole-file, what the launches teach comes after the anchored kernels are taken
 * (a kernel inside one call's anchors does not wait for it, as one inside several does). */
static bool anchored_kernel_is_calls(gt_olinker *o, const gt_olink_anchor *a, gt_olink_kernel *k)
{
    if (!a->t_begin)
        return true;
    if (k->start + CLOCK_SLACK_NS < a->t_begin)
        o->st.before_call++;
    else if (other_thread_launched(o, a, k))
        o->st.other_thread++;
    else
        return true;
    k->unanchored = 1; /* left to the launches; unlinked and counted if none takes it */
    return false;
}

/* A kernel inside the anchors of n calls of several threads at once (a kernel's id is between
 * the anchors of every call running when the library launched it). A launch of its name on
 * another thread during one of them made it (left to the launch, as for one call); else it is the
 * call's whose stream is its stream, once every other is known not to be on it. decide: stop
 * waiting for what holders' streams are (the end, or UNBOUNDED_WAIT_NS after it started). */
static void take_among(gt_olinker *o, gt_olink_kernel *k, const gt_olink_anchor **held, size_t n,
                       bool open, bool decide)
{
    if (n > MAX_HOLDERS) {
        k->done = 2;
        o->st.ambiguous++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (held[i]->t_begin && other_thread_launched(o, held[i], k)) {
            o->st.other_thread++;
            k->unanchored = 1;
            return;
        }
    enum holder h[MAX_HOLDERS];
    const gt_olink_anchor *match = NULL;
    size_t matches = 0, unknown = 0, maybe = 0, other = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = holder_of(o, held[i], k);
        if (h[i] == HOLDER_MATCH)
            match = held[i], matches++;
    }
    for (size_t i = 0; i < n; i++) {
        /* Two handles alive at once are two streams (the default ones aside): a holder whose
         * stream is not known is not on the kernel's if its handle is not the match's. */
        if ((h[i] == HOLDER_UNKNOWN || h[i] == HOLDER_MAYBE) && match && held[i]->t_begin &&
            !default_handle(match->stream) && held[i]->stream != match->stream)
            h[i] = HOLDER_OTHER;
        unknown += h[i] == HOLDER_UNKNOWN;
        maybe += h[i] == HOLDER_MAYBE;
        other += h[i] == HOLDER_OTHER;
    }
    if (matches > 1 || maybe || (unknown && decide)) {
        k->done = 2; /* on one stream, or not known: not told apart */
        o->st.ambiguous++;
    } else if (unknown) {
        k->done = 4;
    } else if (match) {
        link(o, k, match->call_id, &o->st.by_stream);
    } else if (open && other) {
        k->done = 3; /* a call that has not ended may be on its stream */
    } else {
        if (other)
            o->st.other_stream++;
        else
            o->st.before_call++;
        k->unanchored = 1;
    }
}

/* Kernels inside anchors, and those already paired, are taken out before launches are matched;
 * one that an anchored call still running may hold waits (done 3) for the next pass, one inside
 * several calls' anchors whose streams are not all known yet (done 4) for take_waiting. Returns
 * how many wait for streams. */
static size_t take_anchored(gt_olinker *o, uint64_t horizon, bool final)
{
    size_t waiting = 0;
    for (size_t i = 0; i < o->n_kernels; i++) {
        gt_olink_kernel *k = &o->kernels[i];
        if (k->done || k->unanchored || (!final && k->start > horizon))
            continue;
        k->checked = 1;
        if (k->corr > o->max_checked_corr)
            o->max_checked_corr = k->corr;
        if (o->paired && o->paired(o->ctx, k->corr)) {
            k->done = 2; /* linked by its pair, counted by the caller */
            continue;
        }
        bool open;
        const gt_olink_anchor *held[MAX_HOLDERS];
        size_t n = anchored_calls(o, k->corr, held, &open);
        open = open && !final;
        if (n > 1) {
            take_among(o, k, held, n, open, false); /* the launches first teach what they can */
            waiting += k->done == 4;
        } else if (n == 1) {
            if (anchored_kernel_is_calls(o, held[0], k))
                link(o, k, held[0]->call_id, &o->st.by_anchor);
        } else if (open) {
            k->done = 3; /* waits for its library call's end: not a launch candidate this pass */
        }
    }
    return waiting;
}

/* After the launches were matched (and taught streams): the kernels waiting for the streams of
 * the calls holding them are decided, or wait on, at most UNBOUNDED_WAIT_NS after they started. */
static void take_waiting(gt_olinker *o, uint64_t horizon, bool final)
{
    for (size_t i = 0; i < o->n_kernels; i++) {
        gt_olink_kernel *k = &o->kernels[i];
        if (k->done != 4)
            continue;
        k->done = 0;
        bool open;
        const gt_olink_anchor *held[MAX_HOLDERS];
        size_t n = anchored_calls(o, k->corr, held, &open);
        take_among(o, k, held, n, open && !final, final || k->start + UNBOUNDED_WAIT_NS <= horizon);
    }
}

/* Whether every kernel that may be l's has been read. Bounded (an anchor or pair after it on its
 * thread): once a kernel above the bound has started a window before the newest time read, the
 * kernels below it have started too (one stream runs in order) and been read. Unbounded (no
 * anchor or pair since, e.g. a program of plain launches between two copies): after
 * UNBOUNDED_WAIT_NS of trace time. */
static bool launch_ready(const gt_olinker *o, const gt_olink_launch *l, uint64_t horizon)
{
    if (l->t_begin + o->window_ns > horizon)
        return false;
    if (l->hi && o->max_checked_corr >= l->hi)
        return true;
    /* synced: its kernel started before synced_ns; one that started a window later was read,
     * and the kernels are looked up a window behind the newest time */
    if (l->synced_ns && l->synced_ns + o->window_ns <= horizon &&
        o->newest_kernel_ns >= l->synced_ns + o->window_ns)
        return true;
    return l->t_begin + UNBOUNDED_WAIT_NS <= horizon;
}

static void match_launches(gt_olinker *o, uint64_t horizon, bool final)
{
    size_t kept = 0;
    for (size_t i = 0; i < o->n_launches; i++) {
        gt_olink_launch *l = &o->launches[i];
        bool ready = final || launch_ready(o, l, horizon);
        if (ready) {
            gt_olink_thread *t = thread_of(o, l->tid);
            gt_olink_kernel *k = t ? kernel_of_launch(o, l, t) : NULL;
            if (k) {
                link(o, k, l->call_id, &o->st.by_order);
                learn_stream(o, l, k);
                t->last_match = k->corr;
            } else {
                o->st.launches_no_kernel++;
            }
            continue;
        }
        o->launches[kept++] = *l;
    }
    o->n_launches = kept;
    /* Indices moved: each thread's first launch still without hi, for close_launches. */
    for (size_t i = 0; i < o->n_threads; i++)
        o->threads[i].first_open = kept;
    for (size_t i = kept; i-- > 0;) {
        gt_olink_launch *l = &o->launches[i];
        gt_olink_thread *t = l->hi ? NULL : thread_of(o, l->tid);
        if (t)
            t->first_open = i;
    }
}

/* Kernels decided or too old leave; anchors no kernel can fall in any more leave. */
static void compact(gt_olinker *o, uint64_t horizon, bool final)
{
    size_t kept = 0;
    uint64_t wait_lo = UINT64_MAX, wait_hi = 0; /* ids of kernels waiting for streams */
    for (size_t i = 0; i < o->n_kernels; i++) {
        gt_olink_kernel *k = &o->kernels[i];
        /* not while its library call runs, nor while it waits for streams (take_waiting) */
        bool waits_for_anchor = k->done == 3 || k->done == 4;
        if (k->done == 4) {
            wait_lo = k->corr < wait_lo ? k->corr : wait_lo;
            wait_hi = k->corr > wait_hi ? k->corr : wait_hi;
        }
        if (waits_for_anchor)
            k->done = 0;
        bool expired =
            final || (!waits_for_anchor && k->start + UNBOUNDED_WAIT_NS + o->window_ns <= horizon);
        if (!k->done && expired)
            o->st.kernels_no_call++;
        if (!k->done && !expired)
            o->kernels[kept++] = *k;
    }
    o->n_kernels = kept;
    /* An anchored call's kernels may start seconds after it (a deep launch queue) and their
     * records reach the file a flush later still: anchors stay until a kernel above the call's
     * end was looked up and three windows passed, or UNBOUNDED_WAIT_NS did. */
    size_t a_kept = 0;
    for (size_t i = 0; i < o->n_anchors; i++) {
        gt_olink_anchor *a = &o->anchors[i];
        if (!a->seen_ns) /* read before any time was: from now on */
            a->seen_ns = o->newest_ns;
        bool passed =
            a->end && o->max_checked_corr > a->end && a->seen_ns + 3 * o->window_ns <= horizon;
        bool stale = a->seen_ns + UNBOUNDED_WAIT_NS <= horizon;
        bool holds_waiting = a->begin < wait_hi && (!a->end || a->end > wait_lo);
        if (!final && ((!passed && !stale) || holds_waiting))
            o->anchors[a_kept++] = *a;
    }
    o->n_anchors = a_kept;
}

/* Sorts v[sorted..n) and merges it into the sorted v[0..sorted): what waits stays sorted between
 * passes, so a pass costs the new records, not everything that waits. */
static bool sort_tail(gt_olinker *o, void *v, size_t sorted, size_t n, size_t elem,
                      int (*cmp)(const void *, const void *))
{
    if (n <= sorted)
        return true; /* nothing new (also: no qsort on an empty, possibly NULL, array) */
    char *base = v;
    qsort(base + sorted * elem, n - sorted, elem, cmp);
    if (!sorted || sorted == n || cmp(base + (sorted - 1) * elem, base + sorted * elem) <= 0)
        return true;
    if (n * elem > o->scratch_bytes) {
        void *s = realloc(o->scratch, n * elem);
        if (!s) {
            o->out_of_memory = true;
            qsort(base, n, elem, cmp);
            return false;
        }
        o->scratch = s;
        o->scratch_bytes = n * elem;
    }
    char *out = o->scratch;
    size_t i = 0, j = sorted, k = 0;
    while (i < sorted && j < n) {
        bool left = cmp(base + i * elem, base + j * elem) <= 0;
        memcpy(out + k++ * elem, base + (left ? i++ : j++) * elem, elem);
    }
    memcpy(out + k * elem, base + i * elem, (sorted - i) * elem);
    k += sorted - i;
    memcpy(out + k * elem, base + j * elem, (n - j) * elem);
    memcpy(base, out, n * elem);
    return true;
}

static void resolve(gt_olinker *o, bool final)
{
    uint64_t horizon = o->newest_ns > o->window_ns ? o->newest_ns - o->window_ns : 0;
    if (!final && !horizon)
        return;
    sort_tail(o, o->kernels, o->kernels_sorted, o->n_kernels, sizeof *o->kernels, by_corr);
    /* Launches in time order across threads; on one thread that is also their record order. */
    sort_tail(o, o->launches, o->launches_sorted, o->n_launches, sizeof *o->launches, by_begin);
    size_t waiting = take_anchored(o, horizon, final);
    match_launches(o, horizon, final);
    if (waiting)
        take_waiting(o, horizon, final);
    compact(o, horizon, final);
    o->kernels_sorted = o->n_kernels;
    o->launches_sorted = o->n_launches;
    o->resolved_at = o->newest_ns;
}

void gt_olink_on_record(gt_olinker *o, const gt_record *r)
{
    switch (r->kind) {
    case GT_REC_API_LAUNCH:
        on_launch(o, r);
        break;
    case GT_REC_GPU_EXT_CORR: {
        gt_rec_gpu_ext_corr e;
        gt_body_copy(&e, sizeof e, r);
        if (e.ext_kind == GT_EXT_CORR_KIND_ANCHOR_BEGIN ||
            e.ext_kind == GT_EXT_CORR_KIND_ANCHOR_END)
            on_anchor(o, r, &e);
        else if (e.ext_kind == GT_EXT_CORR_KIND_OURS && e.corr_id)
            on_pair(o, r, &e);
        break;
    }
    case GT_REC_GPU_KERNEL:
        on_kernel(o, r);
        break;
    case GT_REC_API_CUDNN:
    case GT_REC_API_CUBLAS:
        on_library_call(o, r);
        break;
    case GT_REC_API_SYNC:
        on_sync(o, r);
        break;
    default:
        return;
    }
    if (o->window_ns && o->newest_ns >= o->resolved_at + RESOLVE_EVERY_NS)
        resolve(o, false);
}

void gt_olink_finish(gt_olinker *o)
{
    resolve(o, true);
}
