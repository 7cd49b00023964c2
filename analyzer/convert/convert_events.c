/* convert_events.c — how an event reaches the sink: track uuids, the output clock, the event's
 * fields, --max-mb's kept windows, slices as a BEGIN and an END back to back, categories. Every
 * part of the converter writes through these; they are the hot path (one or more per record).
 * Their definitions say `inline`: with convert_internal.h's plain declarations they are ordinary
 * external functions (C11 6.7.4), and the word lets the link-time optimizer this stage is built
 * with (analyzer/CMakeLists.txt) inline them into the other files as when they were defined in
 * the header. */
#include "convert_internal.h"

const char *const CAT_NAMES[CAT_COUNT] = {"",       "cuda",     "copy",   "sync",   "cudnn",
                                          "cublas", "memory",   "kernel", "memcpy", "memset",
                                          "nvtx",   "gputrace", "launch", "advice"};

/* Track uuids are handed out in order, unique over the whole output: small numbers are short
 * varints, and every event packet carries one. */
inline uint64_t cv_uuid(cv_ctx *c)
{
    return c->next_uuid++;
}

/* Map a CLOCK_REALTIME time to the output clock; 0 when it cannot be represented. */
inline int cv_ts(cv_ctx *c, uint64_t real, int64_t *out)
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

/* Hot-path events: set every scalar field, but leave the flow arrays (read only up to n_flows
 * and n_term_flows) alone — zeroing the whole struct twice per slice showed in the profile. */
inline void cv_event_init(cv_event *e, int type, uint64_t track, uint32_t seq, int64_t ts)
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

/* --max-mb: the kept window that holds output time ts, n_keep when none does. */
static inline size_t cv_window(const cv_ctx *c, int64_t ts)
{
    const gt_convert_opts *o = c->opts;
    size_t lo = 0, hi = o->n_keep; /* the first window ending after ts */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((int64_t)o->keep[mid].hi_ns + c->offset <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->n_keep && (int64_t)o->keep[lo].lo_ns + c->offset <= ts ? lo : o->n_keep;
}

/* --max-mb: whether an event at output time ts is in a kept window (always, without windows). */
static inline int cv_kept(const cv_ctx *c, int64_t ts)
{
    const gt_convert_opts *o = c->opts;
    if (!o->n_keep || c->unfiltered)
        return 1;
    return cv_window(c, ts) < o->n_keep;
}

inline void cv_emit(cv_ctx *c, const cv_event *e)
{
    if ((e->type == CV_INSTANT || e->type == CV_COUNTER) && !cv_kept(c, e->ts)) {
        c->st->left_out++;
        return;
    }
    if (e->ts > c->max_ts)
        c->max_ts = e->ts;
    uint64_t before = c->sink->bytes;
    c->sink->event(c->sink, e);
    c->st->events++;
    if (c->opts->keep_bytes) { /* --max-mb measures the steps it chose */
        size_t w = cv_window(c, e->ts);
        if (w < c->opts->n_keep)
            c->opts->keep_bytes[w] += c->sink->bytes - before;
    }
}

void cv_describe(cv_ctx *c, const cv_track_desc *d)
{
    c->sink->track(c->sink, d);
    c->st->events++;
}

/* A complete slice: BEGIN and END back to back (file order matters at equal timestamps). */
inline void cv_slice(cv_ctx *c, cv_event *begin, int64_t end_ts, const uint64_t *end_term,
                     int n_end_term)
{
    if (!cv_kept(c, begin->ts)) { /* --max-mb: whole slices, by where they begin */
        c->st->left_out++;
        return;
    }
    begin->type = CV_BEGIN;
    cv_emit(c, begin);
    cv_event end;
    cv_event_init(&end, CV_END, begin->track, begin->seq, end_ts);
    for (int i = 0; i < n_end_term && i < CV_MAX_FLOWS; i++)
        end.term_flows[end.n_term_flows++] = end_term[i];
    cv_emit(c, &end);
    c->st->slices++;
}

inline void cv_set_cat(cv_event *e, int cat)
{
    e->cat = CAT_NAMES[cat];
    e->cat_iid = IID_CAT((uint64_t)cat);
}
