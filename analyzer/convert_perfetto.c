/* convert_perfetto.c — the Perfetto protobuf sink: TracePackets encoded with protobuf-c (from
 * perfetto_trimmed.proto) and framed as Trace.packet records, streamed to the output file.
 *
 * Per sequence it keeps only: whether the sequence has started (its first packet carries
 * SEQ_INCREMENTAL_STATE_CLEARED) and which interned iids were already defined on it. */
#include <stdlib.h>
#include <string.h>

#include "convert_sink.h"
#include "perfetto_trimmed.pb-c.h"

#define OUT_BUF (1u << 20)
#define MAX_INTERNED (1u << 16) /* per sequence; beyond that names are written inline */

typedef struct pf_seq {
    int started;
    uint64_t *iids; /* open addressing, 0 = empty */
    uint32_t cap, used;
} pf_seq;

typedef struct pf_sink {
    cv_sink base;
    pf_seq *seqs;
    uint32_t n_seqs;
    unsigned char *buf;
    size_t used;
    unsigned char *scratch;
    size_t scratch_cap;
} pf_sink;

static void pf_flush(pf_sink *p)
{
    if (p->used && fwrite(p->buf, 1, p->used, p->base.out) != p->used)
        p->base.io_error = 1;
    p->used = 0;
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

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* 1 when iid is now defined on the sequence (the caller must add it to InternedData when
 * *added), 0 when the table is full and the caller must write the name inline. */
static int pf_intern(pf_seq *s, uint64_t iid, int *added)
{
    *added = 0;
    if (s->used * 2 >= s->cap) {
        if (s->cap >= MAX_INTERNED) {
            for (uint32_t i = (uint32_t)mix64(iid) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
                if (s->iids[i] == iid)
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
            uint32_t j = (uint32_t)mix64(s->iids[i]) & (ncap - 1);
            while (n[j])
                j = (j + 1) & (ncap - 1);
            n[j] = s->iids[i];
        }
        free(s->iids);
        s->iids = n;
        s->cap = ncap;
    }
    uint32_t i = (uint32_t)mix64(iid) & (s->cap - 1);
    while (s->iids[i]) {
        if (s->iids[i] == iid)
            return 1;
        i = (i + 1) & (s->cap - 1);
    }
    s->iids[i] = iid;
    s->used++;
    *added = 1;
    return 1;
}

static void pf_write_packet(pf_sink *p, Perfetto__Protos__TracePacket *pkt)
{
    size_t len = perfetto__protos__trace_packet__get_packed_size(pkt);
    if (len + 16 > OUT_BUF - p->used)
        pf_flush(p);
    unsigned char *dst;
    int big = len + 16 > OUT_BUF;
    if (big) {
        if (p->scratch_cap < len + 16) {
            free(p->scratch);
            p->scratch = malloc(len + 16);
            p->scratch_cap = p->scratch ? len + 16 : 0;
            if (!p->scratch) {
                p->base.io_error = 1;
                return;
            }
        }
        dst = p->scratch;
    } else {
        dst = p->buf + p->used;
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
    if (big) {
        if (fwrite(dst, 1, n, p->base.out) != n)
            p->base.io_error = 1;
    } else {
        p->used += n;
    }
    p->base.bytes += n;
    p->base.events++;
}

/* Stamp the sequence id and, on the first packet of a sequence, the cleared flag. */
static void pf_stamp(pf_sink *p, Perfetto__Protos__TracePacket *pkt, uint32_t seq, int needs_state)
{
    pkt->optional_trusted_packet_sequence_id_case =
        PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
    pkt->trusted_packet_sequence_id = seq;
    pf_seq *s = pf_get_seq(p, seq);
    uint32_t flags = needs_state ? PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE : 0;
    if (s && !s->started) {
        s->started = 1;
        flags |= PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    }
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
        td.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
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
}

static void pf_fill_arg(Perfetto__Protos__DebugAnnotation *da, const cv_arg *a)
{
    perfetto__protos__debug_annotation__init(da);
    da->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME;
    da->name = (char *)a->name;
    switch (a->type) {
    case CV_ARG_INT:
        da->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
        da->int_value = a->v.i;
        break;
    case CV_ARG_UINT:
        da->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        da->uint_value = a->v.u;
        break;
    case CV_ARG_PTR:
        da->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
        da->pointer_value = a->v.u;
        break;
    case CV_ARG_DOUBLE:
        da->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
        da->double_value = a->v.d;
        break;
    default:
        da->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
        da->string_value = (char *)(a->v.s ? a->v.s : "");
        break;
    }
}

static void pf_event(cv_sink *sink, const cv_event *e)
{
    pf_sink *p = (pf_sink *)sink;
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventCategory ec = PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
    Perfetto__Protos__EventName *enp = &en;
    Perfetto__Protos__EventCategory *ecp = &ec;
    Perfetto__Protos__DebugAnnotation da[CV_MAX_ARGS];
    Perfetto__Protos__DebugAnnotation *dap[CV_MAX_ARGS];
    uint64_t cat_iid = 0;
    int uses_state = 0, added;
    pf_seq *s = pf_get_seq(p, e->seq);

    pkt.has_timestamp = 1;
    pkt.timestamp = (uint64_t)e->ts;
    te.has_type = 1;
    te.type = (Perfetto__Protos__TrackEvent__Type)e->type;
    te.has_track_uuid = 1;
    te.track_uuid = e->track;
    if (e->name && e->type != CV_END) {
        if (e->name_iid && s && pf_intern(s, e->name_iid, &added)) {
            te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
            te.name_iid = e->name_iid;
            uses_state = 1;
            if (added) {
                en.has_iid = 1;
                en.iid = e->name_iid;
                en.name = (char *)e->name;
                in.n_event_names = 1;
                in.event_names = &enp;
            }
        } else {
            te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
            te.name = (char *)e->name;
        }
    }
    char *cat = (char *)e->cat;
    if (e->cat && e->type != CV_END && e->type != CV_COUNTER) {
        if (e->cat_iid && s && pf_intern(s, e->cat_iid, &added)) {
            cat_iid = e->cat_iid;
            te.n_category_iids = 1;
            te.category_iids = &cat_iid;
            uses_state = 1;
            if (added) {
                ec.has_iid = 1;
                ec.iid = e->cat_iid;
                ec.name = (char *)e->cat;
                in.n_event_categories = 1;
                in.event_categories = &ecp;
            }
        } else {
            te.n_categories = 1;
            te.categories = &cat;
        }
    }
    int n_args = e->n_args < CV_MAX_ARGS ? e->n_args : CV_MAX_ARGS;
    for (int i = 0; i < n_args; i++) {
        pf_fill_arg(&da[i], &e->args[i]);
        dap[i] = &da[i];
    }
    te.n_debug_annotations = (size_t)n_args;
    te.debug_annotations = dap;
    te.n_flow_ids = (size_t)e->n_flows;
    te.flow_ids = (uint64_t *)e->flows;
    te.n_terminating_flow_ids = (size_t)e->n_term_flows;
    te.terminating_flow_ids = (uint64_t *)e->term_flows;
    if (e->type == CV_COUNTER) {
        if (e->counter_is_double) {
            te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_DOUBLE_COUNTER_VALUE;
            te.double_counter_value = e->dcounter;
        } else {
            te.counter_value_field_case = PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
            te.counter_value = e->counter;
        }
    }
    if (in.n_event_names || in.n_event_categories)
        pkt.interned_data = &in;
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
    pkt.track_event = &te;
    pf_stamp(p, &pkt, e->seq, uses_state);
    pf_write_packet(p, &pkt);
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
    for (uint32_t i = 0; i < p->n_seqs; i++)
        free(p->seqs[i].iids);
    free(p->seqs);
    free(p->buf);
    free(p->scratch);
    free(p);
}

cv_sink *cv_sink_perfetto(FILE *out)
{
    pf_sink *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->buf = malloc(OUT_BUF);
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
