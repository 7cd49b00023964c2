/* convert_perfetto.c — the Perfetto protobuf sink: TracePackets framed as Trace.packet records,
 * streamed to the output file through one large buffer.
 *
 * Two encoders: the cold packets (track descriptors, the clock snapshot) go through protobuf-c's
 * generated code for perfetto_trimmed.proto; TrackEvent packets — nearly all of the output — are
 * written by hand straight into the output buffer, because protobuf-c's generic size + pack
 * walk over descriptors cost more than the rest of the conversion together. The hand encoder
 * writes the same fields with the same numbers as the .proto (tests decode the result with
 * protoc against it), repeated scalars unpacked as Perfetto requires.
 *
 * Per sequence it keeps only: whether the sequence has started (its first packet carries
 * SEQ_INCREMENTAL_STATE_CLEARED), which interned iids were already defined on it (event
 * names and categories one by one; debug-annotation names — a few dozen fixed ones — all at
 * once with the first event that has arguments, so later events need no check per argument;
 * string argument values by a 64-bit hash of their text), and the last timestamp written.
 *
 * Size: a real training step is thousands of packets whose arguments repeat (call-site stacks,
 * kernel names, grid/block, memory kinds) and whose times are microseconds apart. So string
 * values are interned (InternedData.debug_annotation_string_values, a 1–2 byte iid instead of
 * the text), and timestamps are deltas on a sequence-scoped incremental clock (id 64, declared
 * by a ClockSnapshot {64 incremental = BOOTTIME} and TracePacketDefaults.timestamp_clock_id
 * before the sequence's first timestamp), as the Perfetto SDK writes them: 1–3 bytes instead of
 * 9. Events come nearly but not quite in time order on a sequence (a parent call is written
 * after its children; CUPTI reports kernels of one stream that overlap a little), and a delta
 * must not be negative (the Perfetto SDK never writes one; as a varint it would take 10 bytes).
 * So an event behind the default clock (64) takes a second incremental clock (65, 3 more bytes
 * for timestamp_clock_id) that trails it, and only one behind both carries an absolute
 * BOOTTIME timestamp with timestamp_clock_id = 6. */
#include <stdlib.h>
#include <string.h>

#include "convert_sink.h"
#include "util.h"
#include "perfetto_trimmed.pb-c.h"

#define OUT_BUF (1u << 20)
#define MAX_INTERNED (1u << 16) /* large keys per sequence; beyond: names inline */
#define SMALL_NAME_KEYS 4096    /* event-name keys below this (API calls, copies) use a bitmap */
#define SMALL_CAT_KEYS 64
#define HASH_CAT (1ull << 62)  /* tags of category keys in the shared hash of large keys */
#define MAX_STRINGS (1u << 15) /* interned string values per sequence; beyond: inline */
#define MIN_INTERNED_STR 3     /* shorter values are as small inline as by iid */
#define CLOCK_LEAD 64  /* sequence-scoped incremental clocks (64..127): the sequence's default */
#define CLOCK_TRAIL 65 /* ... and one for events behind the default clock */
#define CLOCK_BOOTTIME 6

typedef struct pf_seq {
    int started;
    uint64_t name_bits[SMALL_NAME_KEYS / 64];
    uint64_t cat_bits[SMALL_CAT_KEYS / 64];
    int arg_names_defined; /* all of the sink's arg_names are interned on this sequence */
    uint64_t *iids;        /* large keys: open addressing, 0 = empty */
    uint32_t cap, used;
    /* String argument values: hash of the text -> iid (open addressing, hash 0 = empty). Two
     * texts with the same 64-bit hash would share an iid; with at most MAX_STRINGS values per
     * sequence the chance is below 1e-10, and no text is kept in memory. */
    uint64_t *str_hash;
    uint32_t *str_iid;
    uint32_t str_cap, str_used;
    int clock_declared;     /* the incremental clock and the defaults are written */
    uint64_t default_track; /* TrackEventDefaults.track_uuid (a thread's own sequence), 0 none */
    int64_t last_ts[2];     /* values of CLOCK_LEAD and CLOCK_TRAIL after their last deltas */
} pf_seq;

typedef struct pf_sink {
    cv_sink base;
    pf_seq *seqs;
    uint32_t n_seqs;
    unsigned char *buf;
    size_t used, cap;
} pf_sink;

static void pf_flush(pf_sink *p)
{
    if (p->used && fwrite(p->buf, 1, p->used, p->base.out) != p->used)
        p->base.io_error = 1;
    p->used = 0;
}

/* Room for need bytes at p->buf + p->used: flush when full, grow for one huge packet. */
static unsigned char *pf_reserve(pf_sink *p, size_t need)
{
    if (need <= p->cap - p->used)
        return p->buf + p->used;
    pf_flush(p);
    if (need > p->cap) {
        unsigned char *n = realloc(p->buf, need);
        if (!n)
            return NULL;
        p->buf = n;
        p->cap = need;
    }
    return p->buf;
}

static pf_seq *pf_get_seq(pf_sink *p, uint32_t seq)
{
    if (seq >= p->n_seqs) {
        uint32_t n = p->n_seqs ? p->n_seqs : 64;
        while (n <= seq)
            n *= 2;
        pf_seq *s = realloc(p->seqs, n * sizeof *s);
        if (!s)
            return NULL;
        memset(s + p->n_seqs, 0, (n - p->n_seqs) * sizeof *s);
        p->seqs = s;
        p->n_seqs = n;
    }
    return &p->seqs[seq];
}

/* 1 when key is now defined on the sequence (the caller must add it to InternedData when
 * *added), 0 when the table is full and the caller must write the name inline. */
static int pf_intern_large(pf_seq *s, uint64_t key, int *added)
{
    *added = 0;
    if (s->used * 2 >= s->cap) {
        if (s->cap >= MAX_INTERNED) {
            for (uint32_t i = (uint32_t)gt_mix64(key) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
                if (s->iids[i] == key)
                    return 1;
                if (!s->iids[i])
                    return 0;
            }
        }
        uint32_t ncap = s->cap ? s->cap * 2 : 256;
        uint64_t *n = calloc(ncap, sizeof *n);
        if (!n)
            return 0;
        for (uint32_t i = 0; i < s->cap; i++) {
            if (!s->iids[i])
                continue;
            uint32_t j = (uint32_t)gt_mix64(s->iids[i]) & (ncap - 1);
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = s->iids[i];
        }
        free(s->iids);
        s->iids = n;
        s->cap = ncap;
    }
    uint32_t i = (uint32_t)gt_mix64(key) & (s->cap - 1);
    while (s->iids[i]) {
        if (s->iids[i] == key)
            return 1;
        i = (i + 1) & (s->cap - 1);
    }
    s->iids[i] = key;
    s->used++;
    *added = 1;
    return 1;
}

/* Set bit key of bits; *added when it was not set yet. */
static int pf_intern_bit(uint64_t *bits, uint64_t key, int *added)
{
    uint64_t m = 1ull << (key & 63);
    *added = !(bits[key >> 6] & m);
    bits[key >> 6] |= m;
    return 1;
}

static int pf_intern_name(pf_seq *s, uint64_t iid, int *added)
{
    if (iid < SMALL_NAME_KEYS)
        return pf_intern_bit(s->name_bits, iid, added);
    if (iid >= HASH_CAT) { /* outside the name key space: write it inline */
        *added = 0;
        return 0;
    }
    return pf_intern_large(s, iid, added);
}

static int pf_intern_cat(pf_seq *s, uint64_t iid, int *added)
{
    if (iid < SMALL_CAT_KEYS)
        return pf_intern_bit(s->cat_bits, iid, added);
    if (iid >= HASH_CAT) {
        *added = 0;
        return 0;
    }
    return pf_intern_large(s, iid | HASH_CAT, added);
}

/* A 64-bit hash of a string value (words at a time: stacks are kilobytes). Never 0. */
static uint64_t pf_hash_str(const char *str, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xbf58476d1ce4e5b9ull);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, str + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < n; k++)
        tail |= (uint64_t)(unsigned char)str[i + k] << (8 * k);
    h = gt_mix64(h ^ tail ^ gt_mix64(h + n));
    return h ? h : 1;
}

/* The iid of a string value on the sequence (*added: define it in this packet), 0 when the
 * table is full or memory ran out (the caller writes the text inline). */
static uint32_t pf_intern_str(pf_seq *s, uint64_t h, int *added)
{
    *added = 0;
    if (s->str_used * 2 >= s->str_cap) {
        if (s->str_cap >= 2 * MAX_STRINGS)
            goto lookup; /* full: known values still hit */
        uint32_t ncap = s->str_cap ? s->str_cap * 2 : 256;
        uint64_t *nh = calloc(ncap, sizeof *nh);
        uint32_t *ni = malloc(ncap * sizeof *ni);
        if (!nh || !ni) {
            free(nh);
            free(ni);
            goto lookup;
        }
        for (uint32_t i = 0; i < s->str_cap; i++) {
            if (!s->str_hash[i])
                continue;
            uint32_t j = (uint32_t)s->str_hash[i] & (ncap - 1);
            while (nh[j])
                j = (j + 1) & (ncap - 1);
            nh[j] = s->str_hash[i];
            ni[j] = s->str_iid[i];
        }
        free(s->str_hash);
        free(s->str_iid);
        s->str_hash = nh;
        s->str_iid = ni;
        s->str_cap = ncap;
    }
lookup:
    if (!s->str_cap)
        return 0;
    uint32_t i = (uint32_t)h & (s->str_cap - 1);
    while (s->str_hash[i]) {
        if (s->str_hash[i] == h)
            return s->str_iid[i];
        i = (i + 1) & (s->str_cap - 1);
    }
    if (s->str_used * 2 >= s->str_cap)
        return 0;
    s->str_hash[i] = h;
    s->str_iid[i] = ++s->str_used; /* iids 1, 2, ...: 0 means none */
    *added = 1;
    return s->str_iid[i];
}

static void pf_write_packet(pf_sink *p, Perfetto__Protos__TracePacket *pkt)
{
    size_t len = perfetto__protos__trace_packet__get_packed_size(pkt);
    unsigned char *dst = pf_reserve(p, len + 16);
    if (!dst) {
        p->base.io_error = 1;
        return;
    }
    size_t n = 0;
    dst[n++] = 0x0A; /* Trace.packet, field 1, length-delimited */
    for (uint64_t v = len;; v >>= 7) {
        if (v < 0x80) {
            dst[n++] = (unsigned char)v;
            break;
        }
        dst[n++] = (unsigned char)(v | 0x80);
    }
    n += perfetto__protos__trace_packet__pack(pkt, dst + n);
    p->used += n;
    p->base.bytes += n;
    p->base.events++;
}

/* The sequence's packet flags: NEEDS_INCREMENTAL_STATE when asked, CLEARED on its first. */
static uint32_t pf_flags(pf_seq *s, int needs_state)
{
    uint32_t flags =
        needs_state ? PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE
                    : 0;
    if (s && !s->started) {
        s->started = 1;
        flags |= PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    }
    return flags;
}

/* Stamp the sequence id and, on the first packet of a sequence, the cleared flag. */
static void pf_stamp(pf_sink *p, Perfetto__Protos__TracePacket *pkt, uint32_t seq, int needs_state)
{
    pkt->optional_trusted_packet_sequence_id_case =
        PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
    pkt->trusted_packet_sequence_id = seq;
    uint32_t flags = pf_flags(pf_get_seq(p, seq), needs_state);
    if (flags) {
        pkt->has_sequence_flags = 1;
        pkt->sequence_flags = flags;
    }
}

static void pf_track(cv_sink *sink, const cv_track_desc *d)
{
    pf_sink *p = (pf_sink *)sink;
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    char *cmdline = (char *)(d->cmdline ? d->cmdline : "");
    td.has_uuid = 1;
    td.uuid = d->uuid;
    if (d->parent) {
        td.has_parent_uuid = 1;
        td.parent_uuid = d->parent;
    }
    switch (d->kind) {
    case CV_TRACK_PROCESS:
        pd.has_pid = 1;
        pd.pid = d->pid;
        pd.process_name = (char *)d->name;
        if (*cmdline) {
            pd.n_cmdline = 1;
            pd.cmdline = &cmdline;
        }
        td.process = &pd;
        break;
    case CV_TRACK_THREAD:
        thd.has_pid = 1;
        thd.pid = d->pid;
        thd.has_tid = 1;
        thd.tid = d->tid;
        thd.thread_name = (char *)d->name;
        td.thread = &thd;
        break;
    case CV_TRACK_COUNTER:
        if (d->unit) {
            cd.has_unit = 1;
            cd.unit = (Perfetto__Protos__CounterDescriptor__Unit)d->unit;
        }
        cd.unit_name = (char *)d->unit_name;
        td.counter = &cd;
        __attribute__((fallthrough)); /* counters are named like child tracks */
    default:
        td.static_or_dynamic_name_case =
            PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
        td.name = (char *)d->name;
        if (d->rank_order) {
            td.has_sibling_order_rank = 1;
            td.sibling_order_rank = d->rank_order;
        }
        break;
    }
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    pkt.track_descriptor = &td;
    pf_stamp(p, &pkt, d->seq, 0);
    pf_write_packet(p, &pkt);
    /* A thread's sequence carries only its own track's events: make it the default (declared
     * with the clock), so they need no track_uuid. */
    pf_seq *s = pf_get_seq(p, d->seq);
    if (d->kind == CV_TRACK_THREAD && s && !s->clock_declared)
        s->default_track = d->uuid;
}

/* ------------------------------------------------------------------ hand-written encoder */

/* Wire tags (field number << 3 | wire type) of the fields the hot path writes; numbers from
 * perfetto_trimmed.proto. Varint-encoded tags above 15 take two bytes. */
enum {
    WT_VARINT = 0,
    WT_I64 = 1,
    WT_LEN = 2,
    TAG_TRACE_PACKET = 1 << 3 | WT_LEN,
    TAG_TIMESTAMP = 8 << 3 | WT_VARINT,
    TAG_TIMESTAMP_CLOCK_ID = 58 << 3 | WT_VARINT,
    TAG_CLOCK_SNAPSHOT = 6 << 3 | WT_LEN,
    TAG_TRACE_PACKET_DEFAULTS = 59 << 3 | WT_LEN,
    /* ClockSnapshot, ClockSnapshot.Clock, TracePacketDefaults */
    TAG_CS_CLOCKS = 1 << 3 | WT_LEN,
    TAG_CLOCK_ID = 1 << 3 | WT_VARINT,
    TAG_CLOCK_TIMESTAMP = 2 << 3 | WT_VARINT,
    TAG_CLOCK_IS_INCREMENTAL = 3 << 3 | WT_VARINT,
    TAG_DEFAULTS_CLOCK_ID = 58 << 3 | WT_VARINT,
    TAG_DEFAULTS_TRACK_EVENT = 11 << 3 | WT_LEN,
    TAG_TE_DEFAULTS_TRACK_UUID = 11 << 3 | WT_VARINT,
    TAG_SEQ_ID = 10 << 3 | WT_VARINT,
    TAG_TRACK_EVENT = 11 << 3 | WT_LEN,
    TAG_INTERNED_DATA = 12 << 3 | WT_LEN,
    TAG_SEQ_FLAGS = 13 << 3 | WT_VARINT,
    /* InternedData */
    TAG_ID_EVENT_CATEGORIES = 1 << 3 | WT_LEN,
    TAG_ID_EVENT_NAMES = 2 << 3 | WT_LEN,
    TAG_ID_DEBUG_ANNOTATION_NAMES = 3 << 3 | WT_LEN,
    TAG_ID_DEBUG_ANNOTATION_STRING_VALUES = 29 << 3 | WT_LEN,
    /* EventName, EventCategory, DebugAnnotationName */
    TAG_INTERNED_IID = 1 << 3 | WT_VARINT,
    TAG_INTERNED_NAME = 2 << 3 | WT_LEN,
    /* TrackEvent */
    TAG_TE_CATEGORY_IIDS = 3 << 3 | WT_VARINT,
    TAG_TE_DEBUG_ANNOTATIONS = 4 << 3 | WT_LEN,
    TAG_TE_TYPE = 9 << 3 | WT_VARINT,
    TAG_TE_NAME_IID = 10 << 3 | WT_VARINT,
    TAG_TE_TRACK_UUID = 11 << 3 | WT_VARINT,
    TAG_TE_CATEGORIES = 22 << 3 | WT_LEN,
    TAG_TE_NAME = 23 << 3 | WT_LEN,
    TAG_TE_COUNTER_VALUE = 30 << 3 | WT_VARINT,
    TAG_TE_DOUBLE_COUNTER_VALUE = 44 << 3 | WT_I64,
    TAG_TE_FLOW_IDS = 47 << 3 | WT_I64,
    TAG_TE_TERMINATING_FLOW_IDS = 48 << 3 | WT_I64,
    /* DebugAnnotation */
    TAG_DA_NAME_IID = 1 << 3 | WT_VARINT,
    TAG_DA_UINT = 3 << 3 | WT_VARINT,
    TAG_DA_INT = 4 << 3 | WT_VARINT,
    TAG_DA_DOUBLE = 5 << 3 | WT_I64,
    TAG_DA_STRING = 6 << 3 | WT_LEN,
    TAG_DA_STRING_IID = 17 << 3 | WT_VARINT,
    TAG_DA_POINTER = 7 << 3 | WT_VARINT,
    TAG_DA_NAME = 10 << 3 | WT_LEN,
};

/* Worst-case bytes of one field's framing: a two-byte tag and a 10-byte varint. */
#define FIELD_MAX 12

static inline unsigned char *put_varint(unsigned char *d, uint64_t v)
{
    while (v >= 0x80) {
        *d++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *d++ = (unsigned char)v;
    return d;
}

static inline size_t varint_size(uint64_t v)
{
    return 1 + (size_t)(63 - __builtin_clzll(v | 1)) / 7; /* 7 bits per byte */
}

static inline unsigned char *put_tag(unsigned char *d, unsigned tag)
{
    return put_varint(d, tag);
}

static inline unsigned char *put_fixed64(unsigned char *d, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(d, &v, 8); /* the wire is little-endian too */
#else
    for (int i = 0; i < 8; i++)
        d[i] = (unsigned char)(v >> (8 * i));
#endif
    return d + 8;
}

static inline unsigned char *put_string(unsigned char *d, unsigned tag, const char *s, size_t n)
{
    d = put_varint(put_tag(d, tag), n);
    memcpy(d, s, n);
    return d + n;
}

/* A length-delimited field whose size is known only once written: one length byte is reserved
 * (nearly every nested message here is < 128 bytes); longer bodies are moved up. The buffer
 * must have FIELD_MAX spare bytes per open field. */
static inline unsigned char *open_len(unsigned char *d, unsigned tag)
{
    return put_tag(d, tag) + 1;
}

static inline unsigned char *close_len(unsigned char *body, unsigned char *end)
{
    size_t n = (size_t)(end - body);
    if (n < 0x80) {
        body[-1] = (unsigned char)n;
        return end;
    }
    size_t k = varint_size(n);
    memmove(body + k - 1, body, n);
    put_varint(body - 1, n);
    return end + k - 1;
}

/* An InternedData entry (EventName, EventCategory, DebugAnnotationName share the layout). */
static unsigned char *put_interned(unsigned char *d, unsigned tag, uint64_t iid, const char *s,
                                   size_t n)
{
    d = put_tag(d, tag);
    d = put_varint(d, 1 + varint_size(iid) + 1 + varint_size(n) + n);
    d = put_varint(put_tag(d, TAG_INTERNED_IID), iid);
    return put_string(d, TAG_INTERNED_NAME, s, n);
}

enum { NAME_NONE, NAME_INLINE, NAME_IID, NAME_IID_NEW };

/* What pf_event decided before writing: names interned or inline, and string lengths. */
typedef struct pf_plan {
    int name, cat;
    size_t name_len, cat_len;
    unsigned char arg_name[CV_MAX_ARGS];
    size_t arg_name_len[CV_MAX_ARGS], arg_str_len[CV_MAX_ARGS];
    uint32_t arg_str_iid[CV_MAX_ARGS]; /* 0: the value is written inline */
    uint32_t arg_str_new;              /* bit i: arg i's value is interned by this packet */
    int n_args;
    size_t bound; /* bytes the packet can take at most */
    int uses_state;
    int new_arg_names; /* this packet interns all argument names */
    int default_track; /* the event is on its sequence's default track: no track_uuid */
} pf_plan;

static int pf_plan_name(pf_seq *s, uint64_t iid, int is_cat, const char *str, size_t *len,
                        pf_plan *pl)
{
    int added = 0;
    if (!str)
        return NAME_NONE;
    int interned =
        iid && s && (is_cat ? pf_intern_cat(s, iid, &added) : pf_intern_name(s, iid, &added));
    if (interned)
        pl->uses_state = 1;
    if (interned && !added)
        return NAME_IID; /* defined earlier on this sequence: the string is not needed */
    *len = strlen(str);
    pl->bound += *len + 3 * FIELD_MAX;
    return interned ? NAME_IID_NEW : NAME_INLINE;
}

static void pf_plan_event(const pf_sink *p, pf_seq *s, const cv_event *e, pf_plan *pl)
{
    pl->uses_state = 0;
    pl->new_arg_names = 0;
    pl->arg_str_new = 0;
    pl->default_track = s && s->clock_declared && s->default_track == e->track;
    pl->bound = 16 * FIELD_MAX + 10 * (size_t)(e->n_flows + e->n_term_flows);
    pl->name = pl->cat = NAME_NONE;
    pl->name_len = pl->cat_len = 0;
    if (e->type != CV_END)
        pl->name = pf_plan_name(s, e->name_iid, 0, e->name, &pl->name_len, pl);
    if (e->type != CV_END && e->type != CV_COUNTER)
        pl->cat = pf_plan_name(s, e->cat_iid, 1, e->cat, &pl->cat_len, pl);
    pl->n_args = e->n_args < CV_MAX_ARGS ? e->n_args : CV_MAX_ARGS;
    for (int i = 0; i < pl->n_args; i++) {
        const cv_arg *a = &e->args[i];
        pl->bound += 4 * FIELD_MAX;
        if (a->name_iid && a->name_iid < p->base.n_arg_names && s) {
            pl->arg_name[i] = NAME_IID;
            pl->uses_state = 1;
            if (!s->arg_names_defined) {
                s->arg_names_defined = 1;
                pl->new_arg_names = 1;
                for (uint32_t k = 1; k < p->base.n_arg_names; k++)
                    pl->bound +=
                        3 * FIELD_MAX + strlen(p->base.arg_names[k] ? p->base.arg_names[k] : "");
            }
        } else {
            pl->arg_name[i] = NAME_INLINE;
            pl->arg_name_len[i] = strlen(a->name ? a->name : "");
            pl->bound += pl->arg_name_len[i];
        }
        pl->arg_str_iid[i] = 0;
        if (a->type == CV_ARG_STR) {
            size_t n = strlen(a->v.s ? a->v.s : "");
            pl->arg_str_len[i] = n;
            pl->bound += n;
            if (s && n >= MIN_INTERNED_STR) {
                int added;
                pl->arg_str_iid[i] = pf_intern_str(s, pf_hash_str(a->v.s, n), &added);
                if (pl->arg_str_iid[i]) {
                    pl->uses_state = 1;
                    pl->arg_str_new |= (uint32_t)added << i;
                    pl->bound += 3 * FIELD_MAX;
                }
            }
        }
    }
}

static unsigned char *pf_put_interned_data(const pf_sink *p, unsigned char *d, const cv_event *e,
                                           const pf_plan *pl)
{
    if (pl->name != NAME_IID_NEW && pl->cat != NAME_IID_NEW && !pl->new_arg_names &&
        !pl->arg_str_new)
        return d;
    unsigned char *body = open_len(d, TAG_INTERNED_DATA);
    d = body;
    if (pl->cat == NAME_IID_NEW)
        d = put_interned(d, TAG_ID_EVENT_CATEGORIES, e->cat_iid, e->cat, pl->cat_len);
    if (pl->name == NAME_IID_NEW)
        d = put_interned(d, TAG_ID_EVENT_NAMES, e->name_iid, e->name, pl->name_len);
    if (pl->new_arg_names)
        for (uint32_t i = 1; i < p->base.n_arg_names; i++) {
            const char *n = p->base.arg_names[i] ? p->base.arg_names[i] : "";
            d = put_interned(d, TAG_ID_DEBUG_ANNOTATION_NAMES, i, n, strlen(n));
        }
    for (uint32_t m = pl->arg_str_new; m; m &= m - 1) { /* InternedString: 1 iid, 2 str */
        int i = __builtin_ctz(m);
        d = put_interned(d, TAG_ID_DEBUG_ANNOTATION_STRING_VALUES, pl->arg_str_iid[i],
                         e->args[i].v.s, pl->arg_str_len[i]);
    }
    return close_len(body, d);
}

/* One DebugAnnotation. Without a string it is at most 2 + 11 + 11 bytes, so its one length
 * byte is patched in place; with one, close_len moves it up when it is 128 bytes or more. */
static inline unsigned char *pf_put_arg(unsigned char *d, const cv_arg *a, int name_state,
                                        size_t name_len, size_t str_len, uint32_t str_iid)
{
    unsigned char *body = open_len(d, TAG_TE_DEBUG_ANNOTATIONS);
    d = body;
    if (name_state == NAME_INLINE)
        d = put_string(d, TAG_DA_NAME, a->name ? a->name : "", name_len);
    else
        d = put_varint(put_tag(d, TAG_DA_NAME_IID), a->name_iid);
    switch (a->type) {
    case CV_ARG_INT:
        d = put_varint(put_tag(d, TAG_DA_INT), (uint64_t)a->v.i);
        break;
    case CV_ARG_UINT:
        d = put_varint(put_tag(d, TAG_DA_UINT), a->v.u);
        break;
    case CV_ARG_PTR:
        d = put_varint(put_tag(d, TAG_DA_POINTER), a->v.u);
        break;
    case CV_ARG_DOUBLE: {
        uint64_t bits;
        memcpy(&bits, &a->v.d, sizeof bits);
        d = put_fixed64(put_tag(d, TAG_DA_DOUBLE), bits);
        break;
    }
    default:
        if (str_iid) {
            d = put_varint(put_tag(d, TAG_DA_STRING_IID), str_iid);
            break;
        }
        d = put_string(d, TAG_DA_STRING, a->v.s ? a->v.s : "", str_len);
        return close_len(body, d);
    }
    if (name_state == NAME_INLINE)
        return close_len(body, d);
    body[-1] = (unsigned char)(d - body);
    return d;
}

static unsigned char *pf_put_track_event(unsigned char *d, const cv_event *e, const pf_plan *pl)
{
    unsigned char *body = open_len(d, TAG_TRACK_EVENT);
    d = body;
    d = put_varint(put_tag(d, TAG_TE_TYPE), (uint64_t)e->type);
    if (!pl->default_track)
        d = put_varint(put_tag(d, TAG_TE_TRACK_UUID), e->track);
    if (pl->name == NAME_INLINE)
        d = put_string(d, TAG_TE_NAME, e->name, pl->name_len);
    else if (pl->name != NAME_NONE)
        d = put_varint(put_tag(d, TAG_TE_NAME_IID), e->name_iid);
    if (pl->cat == NAME_INLINE)
        d = put_string(d, TAG_TE_CATEGORIES, e->cat, pl->cat_len);
    else if (pl->cat != NAME_NONE)
        d = put_varint(put_tag(d, TAG_TE_CATEGORY_IIDS), e->cat_iid);
    for (int i = 0; i < pl->n_args; i++)
        d = pf_put_arg(d, &e->args[i], pl->arg_name[i], pl->arg_name_len[i], pl->arg_str_len[i],
                       pl->arg_str_iid[i]);
    /* Repeated fixed64, one tag per value: never packed (Perfetto reads them unpacked only). */
    for (int i = 0; i < e->n_flows && i < CV_MAX_FLOWS; i++)
        d = put_fixed64(put_tag(d, TAG_TE_FLOW_IDS), e->flows[i]);
    for (int i = 0; i < e->n_term_flows && i < CV_MAX_FLOWS; i++)
        d = put_fixed64(put_tag(d, TAG_TE_TERMINATING_FLOW_IDS), e->term_flows[i]);
    if (e->type == CV_COUNTER) {
        if (e->counter_is_double) {
            uint64_t bits;
            memcpy(&bits, &e->dcounter, sizeof bits);
            d = put_fixed64(put_tag(d, TAG_TE_DOUBLE_COUNTER_VALUE), bits);
        } else {
            d = put_varint(put_tag(d, TAG_TE_COUNTER_VALUE), (uint64_t)e->counter);
        }
    }
    return close_len(body, d);
}

static unsigned char *pf_put_clock(unsigned char *d, uint32_t id, uint64_t ts, int incremental)
{
    unsigned char *body = open_len(d, TAG_CS_CLOCKS);
    d = put_varint(put_tag(body, TAG_CLOCK_ID), id);
    d = put_varint(put_tag(d, TAG_CLOCK_TIMESTAMP), ts);
    if (incremental)
        d = put_varint(put_tag(d, TAG_CLOCK_IS_INCREMENTAL), 1);
    return close_len(body, d);
}

/* Before the first timestamp of a sequence: one packet that makes the sequence-scoped clocks
 * 64 and 65 incremental and equal to BOOTTIME at ts, and 64 the sequence's default clock. The
 * importer converts timestamps in file order while reading, so it must come before every
 * user. */
static void pf_declare_clock(pf_sink *p, pf_seq *s, uint32_t seq, int64_t ts)
{
    unsigned char *start = pf_reserve(p, 16 * FIELD_MAX);
    if (!start) {
        p->base.io_error = 1;
        return;
    }
    unsigned char *body = open_len(start, TAG_TRACE_PACKET);
    unsigned char *d = put_varint(put_tag(body, TAG_SEQ_ID), seq);
    uint32_t flags = pf_flags(s, 0);
    if (flags)
        d = put_varint(put_tag(d, TAG_SEQ_FLAGS), flags);
    unsigned char *defaults = open_len(d, TAG_TRACE_PACKET_DEFAULTS);
    d = put_varint(put_tag(defaults, TAG_DEFAULTS_CLOCK_ID), CLOCK_LEAD);
    if (s->default_track) {
        unsigned char *te = open_len(d, TAG_DEFAULTS_TRACK_EVENT);
        d = close_len(te, put_varint(put_tag(te, TAG_TE_DEFAULTS_TRACK_UUID), s->default_track));
    }
    d = close_len(defaults, d);
    unsigned char *snap = open_len(d, TAG_CLOCK_SNAPSHOT);
    d = pf_put_clock(snap, CLOCK_LEAD, (uint64_t)ts, 1);
    d = pf_put_clock(d, CLOCK_TRAIL, (uint64_t)ts, 1);
    d = pf_put_clock(d, CLOCK_BOOTTIME, (uint64_t)ts, 0);
    d = close_len(snap, d);
    d = close_len(body, d);
    size_t n = (size_t)(d - start);
    p->used += n;
    p->base.bytes += n;
    s->clock_declared = 1;
    s->last_ts[0] = s->last_ts[1] = ts;
}

/* The packet's time: a delta on the default clock, else on the trailing one, else absolute. */
static unsigned char *pf_put_timestamp(unsigned char *d, pf_seq *s, int64_t ts)
{
    if (s && s->clock_declared && ts >= s->last_ts[0]) {
        d = put_varint(put_tag(d, TAG_TIMESTAMP), (uint64_t)(ts - s->last_ts[0]));
        s->last_ts[0] = ts;
        return d;
    }
    if (s && s->clock_declared && ts >= s->last_ts[1]) {
        d = put_varint(put_tag(d, TAG_TIMESTAMP_CLOCK_ID), CLOCK_TRAIL);
        d = put_varint(put_tag(d, TAG_TIMESTAMP), (uint64_t)(ts - s->last_ts[1]));
        s->last_ts[1] = ts;
        return d;
    }
    d = put_varint(put_tag(d, TAG_TIMESTAMP_CLOCK_ID), CLOCK_BOOTTIME);
    return put_varint(put_tag(d, TAG_TIMESTAMP), (uint64_t)ts);
}

static void pf_event(cv_sink *sink, const cv_event *e)
{
    pf_sink *p = (pf_sink *)sink;
    pf_seq *s = pf_get_seq(p, e->seq);
    if (s && !s->clock_declared)
        pf_declare_clock(p, s, e->seq, e->ts);
    pf_plan pl;
    pf_plan_event(p, s, e, &pl);
    unsigned char *start = pf_reserve(p, pl.bound);
    if (!start) {
        p->base.io_error = 1;
        return;
    }
    unsigned char *body = open_len(start, TAG_TRACE_PACKET);
    unsigned char *d = body;
    d = pf_put_timestamp(d, s, e->ts);
    d = put_varint(put_tag(d, TAG_SEQ_ID), e->seq);
    uint32_t flags = pf_flags(s, pl.uses_state);
    if (flags)
        d = put_varint(put_tag(d, TAG_SEQ_FLAGS), flags);
    d = pf_put_interned_data(p, d, e, &pl);
    d = pf_put_track_event(d, e, &pl);
    d = close_len(body, d);
    size_t n = (size_t)(d - start);
    p->used += n;
    p->base.bytes += n;
    p->base.events++;
}

static void pf_clock(cv_sink *sink, uint32_t seq, uint64_t realtime_ns, uint64_t boottime_ns)
{
    pf_sink *p = (pf_sink *)sink;
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
    Perfetto__Protos__ClockSnapshot__Clock c[2] = {PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT,
                                                   PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__INIT};
    Perfetto__Protos__ClockSnapshot__Clock *cp[2] = {&c[0], &c[1]};
    c[0].has_clock_id = c[1].has_clock_id = 1;
    c[0].clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_REALTIME;
    c[1].clock_id = PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME;
    c[0].has_timestamp = c[1].has_timestamp = 1;
    c[0].timestamp = realtime_ns;
    c[1].timestamp = boottime_ns;
    cs.n_clocks = 2;
    cs.clocks = cp;
    pkt.has_timestamp = 1;
    pkt.timestamp = boottime_ns;
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
    pkt.clock_snapshot = &cs;
    pf_stamp(p, &pkt, seq, 0);
    pf_write_packet(p, &pkt);
}

static void pf_seq_end(cv_sink *sink, uint32_t seq)
{
    pf_sink *p = (pf_sink *)sink;
    if (seq < p->n_seqs) {
        free(p->seqs[seq].iids);
        p->seqs[seq].iids = NULL;
        p->seqs[seq].cap = p->seqs[seq].used = 0;
        free(p->seqs[seq].str_hash);
        free(p->seqs[seq].str_iid);
        p->seqs[seq].str_hash = NULL;
        p->seqs[seq].str_iid = NULL;
        p->seqs[seq].str_cap = p->seqs[seq].str_used = 0;
    }
}

static int pf_finish(cv_sink *sink)
{
    pf_sink *p = (pf_sink *)sink;
    pf_flush(p);
    if (fflush(p->base.out) != 0)
        p->base.io_error = 1;
    return p->base.io_error ? -1 : 0;
}

static void pf_destroy(cv_sink *sink)
{
    pf_sink *p = (pf_sink *)sink;
    for (uint32_t i = 0; i < p->n_seqs; i++) {
        free(p->seqs[i].iids);
        free(p->seqs[i].str_hash);
        free(p->seqs[i].str_iid);
    }
    free(p->seqs);
    free(p->buf);
    free(p);
}

cv_sink *cv_sink_perfetto(FILE *out)
{
    pf_sink *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->buf = malloc(OUT_BUF);
    p->cap = OUT_BUF;
    if (!p->buf) {
        free(p);
        return NULL;
    }
    p->base.track = pf_track;
    p->base.event = pf_event;
    p->base.clock = pf_clock;
    p->base.seq_end = pf_seq_end;
    p->base.finish = pf_finish;
    p->base.destroy = pf_destroy;
    p->base.out = out;
    return &p->base;
}
