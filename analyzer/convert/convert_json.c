/* convert_json.c — the Chrome trace-event JSON sink (for tools that only read that format).
 * Tracks become pid/tid pairs (child and counter tracks get the lane id the core chose), slices
 * B/E events, flows s/f events bound to the enclosing slice. Streamed: one event per line. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "convert_sink.h"

typedef struct js_track {
    uint64_t uuid; /* 0 = empty slot */
    int32_t pid;
    int64_t tid;
    char *name; /* counters: the series name */
} js_track;

typedef struct js_sink {
    cv_sink base;
    js_track *tracks;
    size_t cap, used;
    int first;
} js_sink;

static void js_puts(js_sink *j, const char *s)
{
    size_t n = strlen(s);
    if (fwrite(s, 1, n, j->base.out) != n)
        j->base.io_error = 1;
    j->base.bytes += n;
}

static void js_str(js_sink *j, const char *s)
{
    FILE *f = j->base.out;
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') {
            putc('\\', f);
            putc(*p, f);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p);
        } else {
            putc(*p, f);
        }
    }
    putc('"', f);
}

static uint64_t js_hash(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

static js_track *js_find(js_sink *j, uint64_t uuid, int create)
{
    if (create && (j->used + 1) * 2 > j->cap) {
        size_t ncap = j->cap ? j->cap * 2 : 256;
        js_track *n = calloc(ncap, sizeof *n);
        if (!n)
            return NULL;
        for (size_t i = 0; i < j->cap; i++) {
            if (!j->tracks[i].uuid)
                continue;
            size_t k = js_hash(j->tracks[i].uuid) & (ncap - 1);
            while (n[k].uuid)
                k = (k + 1) & (ncap - 1);
            n[k] = j->tracks[i];
        }
        free(j->tracks);
        j->tracks = n;
        j->cap = ncap;
    }
    if (!j->cap)
        return NULL;
    size_t k = js_hash(uuid) & (j->cap - 1);
    while (j->tracks[k].uuid) {
        if (j->tracks[k].uuid == uuid)
            return &j->tracks[k];
        k = (k + 1) & (j->cap - 1);
    }
    if (!create)
        return NULL;
    j->tracks[k].uuid = uuid;
    j->used++;
    return &j->tracks[k];
}

static void js_begin_event(js_sink *j)
{
    js_puts(j, j->first ? "\n" : ",\n");
    j->first = 0;
    j->base.events++;
}

static void js_meta(js_sink *j, const char *what, int32_t pid, int64_t tid, const char *name)
{
    js_begin_event(j);
    fprintf(j->base.out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId32, what, pid);
    if (tid >= 0)
        fprintf(j->base.out, ",\"tid\":%" PRId64, tid);
    fputs(",\"args\":{\"name\":", j->base.out);
    js_str(j, name);
    fputs("}}", j->base.out);
}

static void js_track_cb(cv_sink *sink, const cv_track_desc *d)
{
    js_sink *j = (js_sink *)sink;
    js_track *t = js_find(j, d->uuid, 1);
    if (!t)
        return;
    t->pid = d->pid;
    t->tid = d->tid;
    free(t->name);
    t->name = strdup(d->name ? d->name : "");
    switch (d->kind) {
    case CV_TRACK_PROCESS:
        js_meta(j, "process_name", d->pid, -1, d->name);
        break;
    case CV_TRACK_THREAD:
    case CV_TRACK_CHILD:
        js_meta(j, "thread_name", d->pid, d->tid, d->name);
        break;
    default:
        break;
    }
}

static void js_ts(js_sink *j, int64_t ts)
{
    fprintf(j->base.out, "%" PRId64 ".%03d", ts / 1000, (int)(ts % 1000));
}

static void js_args(js_sink *j, const cv_event *e)
{
    FILE *f = j->base.out;
    fputs(",\"args\":{", f);
    for (int i = 0; i < e->n_args; i++) {
        const cv_arg *a = &e->args[i];
        if (i)
            putc(',', f);
        js_str(j, a->name);
        putc(':', f);
        switch (a->type) {
        case CV_ARG_INT:
            fprintf(f, "%" PRId64, a->v.i);
            break;
        case CV_ARG_UINT:
            fprintf(f, "%" PRIu64, a->v.u);
            break;
        case CV_ARG_PTR:
            fprintf(f, "\"0x%" PRIx64 "\"", a->v.u);
            break;
        case CV_ARG_DOUBLE:
            fprintf(f, "%.6g", a->v.d);
            break;
        default:
            js_str(j, a->v.s);
            break;
        }
    }
    putc('}', f);
}

static void js_flow(js_sink *j, const js_track *t, int64_t ts, uint64_t id, int end)
{
    js_begin_event(j);
    fprintf(j->base.out,
            "{\"ph\":\"%s\",\"name\":\"flow\",\"cat\":\"flow\",\"id\":\"0x%" PRIx64
            "\",\"pid\":%" PRId32 ",\"tid\":%" PRId64 ",\"ts\":",
            end ? "f\",\"bp\":\"e" : "s", id, t->pid, t->tid);
    js_ts(j, ts);
    putc('}', j->base.out);
}

static void js_event(cv_sink *sink, const cv_event *e)
{
    js_sink *j = (js_sink *)sink;
    js_track *t = js_find(j, e->track, 0);
    if (!t)
        return;
    FILE *f = j->base.out;
    js_begin_event(j);
    if (e->type == CV_COUNTER) {
        fputs("{\"ph\":\"C\",\"name\":", f);
        js_str(j, t->name);
        fprintf(f, ",\"pid\":%" PRId32 ",\"ts\":", t->pid);
        js_ts(j, e->ts);
        if (e->counter_is_double)
            fprintf(f, ",\"args\":{\"value\":%.4f}}", e->dcounter);
        else
            fprintf(f, ",\"args\":{\"value\":%" PRId64 "}}", e->counter);
        return;
    }
    const char *ph = e->type == CV_BEGIN ? "B" : e->type == CV_END ? "E" : "i";
    fprintf(f, "{\"ph\":\"%s\",\"pid\":%" PRId32 ",\"tid\":%" PRId64 ",\"ts\":", ph, t->pid,
            t->tid);
    js_ts(j, e->ts);
    if (e->type != CV_END) {
        fputs(",\"name\":", f);
        js_str(j, e->name);
        if (e->cat) {
            fputs(",\"cat\":", f);
            js_str(j, e->cat);
        }
    }
    if (e->type == CV_INSTANT)
        fputs(",\"s\":\"t\"", f);
    if (e->n_args)
        js_args(j, e);
    putc('}', f);
    for (int i = 0; i < e->n_flows; i++)
        js_flow(j, t, e->ts, e->flows[i], 0);
    for (int i = 0; i < e->n_term_flows; i++)
        js_flow(j, t, e->ts, e->term_flows[i], 1);
}

static void js_clock(cv_sink *sink, uint32_t seq, uint64_t realtime_ns, uint64_t boottime_ns)
{
    (void)sink, (void)seq, (void)realtime_ns, (void)boottime_ns; /* JSON has no clock domains */
}

static void js_seq_end(cv_sink *sink, uint32_t seq)
{
    (void)sink, (void)seq;
}

static int js_finish(cv_sink *sink)
{
    js_sink *j = (js_sink *)sink;
    js_puts(j, "\n],\"displayTimeUnit\":\"ns\"}\n");
    if (ferror(j->base.out) || fflush(j->base.out) != 0)
        j->base.io_error = 1;
    long pos = ftell(j->base.out); /* fprintf'd bytes were not counted one by one */
    if (pos > 0)
        j->base.bytes = (uint64_t)pos;
    return j->base.io_error ? -1 : 0;
}

static void js_destroy(cv_sink *sink)
{
    js_sink *j = (js_sink *)sink;
    for (size_t i = 0; i < j->cap; i++)
        free(j->tracks[i].name);
    free(j->tracks);
    free(j);
}

cv_sink *cv_sink_json(FILE *out)
{
    js_sink *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->base.track = js_track_cb;
    j->base.event = js_event;
    j->base.clock = js_clock;
    j->base.seq_end = js_seq_end;
    j->base.finish = js_finish;
    j->base.destroy = js_destroy;
    j->base.out = out;
    j->first = 1;
    js_puts(j, "{\"traceEvents\":[");
    return &j->base;
}
