/* convert_tracks.c — Tracks and their descriptors: the process, its threads, GPU streams and their
 * overlap lanes, child and counter tracks; where a slice goes on its track so that every track
 * stays strictly nested. */
#include "convert_internal.h"

void cv_describe_process(cv_ctx *c, cv_file *f)
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

void cv_child_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int64_t lane_id,
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

void cv_side_slice(cv_ctx *c, cv_file *f, cv_side_track *t, const char *track_name, int64_t lane,
                   int order, int64_t ts, int64_t end_ts, const char *name, const char *detail)
{
    if (end_ts <= ts)
        return;
    if (!t->described) {
        t->uuid = cv_uuid(c);
        cv_child_track(c, f, t->uuid, track_name, lane, order);
        t->described = 1;
    }
    cv_args x;
    x.n = 0;
    if (detail)
        cv_arg_s(&x, AN_DETAIL, detail);
    cv_event ev = {
        .track = t->uuid, .seq = f->proc_seq, .ts = ts, .name = name, .args = x.a, .n_args = x.n};
    cv_set_cat(&ev, CAT_GPUTRACE);
    cv_slice(c, &ev, end_ts, NULL, 0);
}

void cv_counter_track(cv_ctx *c, cv_file *f, uint64_t uuid, const char *name, int unit,
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

void cv_describe_thread(cv_ctx *c, cv_file *f, cv_thread *t)
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

cv_thread *cv_thread_ready(cv_ctx *c, cv_file *f, uint32_t tid)
{
    cv_thread *t = cv_thread_get(c, f, tid);
    if (t && !t->described)
        cv_describe_thread(c, f, t);
    return t;
}

cv_device *cv_device_get(cv_ctx *c, cv_file *f, uint32_t device)
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

cv_stream *cv_stream_get(cv_ctx *c, cv_file *f, uint32_t device, uint32_t stream)
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

/* The track remembers MAX_DONE finished intervals; when full it forgets the older half: nothing
 * may begin before the latest end among them any more (a parent of theirs arriving later is
 * clamped, and counted). */
static void cv_forget_oldest(cv_thread *t)
{
    int n = MAX_DONE / 2;
    for (int i = 0; i < n; i++)
        if (t->done[i].e > t->floor)
            t->floor = t->done[i].e;
    memmove(t->done, t->done + n, (size_t)(t->n_done - n) * sizeof t->done[0]);
    t->n_done -= n;
}

/* The innermost finished interval that [b, e] overlaps without one containing the other, -1 when
 * none does. */
static int cv_partial_overlap(const cv_thread *t, int64_t b, int64_t e)
{
    for (int i = t->n_done; i-- > 0;) {
        cv_iv iv = t->done[i];
        bool before = iv.e <= b, contained = b <= iv.b && iv.e <= e;
        bool inside = iv.b <= b && e <= iv.e;
        if (!before && !contained && !inside)
            return i;
    }
    return -1;
}

/* Make [*b, *e] nest with what this thread track already has. Returns 1 if it had to move.
 * Finished intervals that ended before this one began stay remembered: they may be siblings
 * inside a parent that arrives later (a cuDNN call's two module loads come before the call,
 * which must keep its own begin: the arrows to its GPU work start there). */
int cv_place_cpu(cv_thread *t, int64_t *b, int64_t *e)
{
    int moved = 0;
    if (*e < *b)
        *e = *b;
    if (*b < t->floor) {
        *b = t->floor;
        if (*e < *b)
            *e = *b;
        moved = 1;
    }
    for (int i; (i = cv_partial_overlap(t, *b, *e)) >= 0;) {
        *b = t->done[i].e; /* partial overlap: start it where the other ends */
        if (*e < *b)
            *e = *b;
        moved = 1;
    }
    /* Now each interval ended before it, lies inside it (its children: forgotten, it stands for
     * them) or contains it. */
    int kept = 0, tie_begin = 0, innermost = -1;
    int64_t contained_max_end = INT64_MIN, room = t->floor; /* room: where it may begin earliest */
    for (int i = 0; i < t->n_done; i++) {
        cv_iv iv = t->done[i];
        if (iv.e <= *b) {
            room = iv.e > room ? iv.e : room;
        } else if (*b <= iv.b && iv.e <= *e) {
            tie_begin |= iv.b == *b;
            contained_max_end = iv.e > contained_max_end ? iv.e : contained_max_end;
            continue;
        } else {
            room = iv.b > room ? iv.b : room;
            innermost = kept; /* pushed after the ones containing it */
        }
        t->done[kept++] = iv;
    }
    t->n_done = kept;
    /* Inside an interval and ending with it (out-of-order arrival): its END comes later in the
     * file, so it ends strictly before. */
    if (innermost >= 0 && *e == t->done[innermost].e && *e > *b && *e - 1 >= contained_max_end)
        (*e)--;
    /* A parent that begins exactly with its first child was written after it: at equal
     * timestamps the importer keeps file order, so begin the parent 1 ns earlier when room. */
    if (tie_begin && *b - 1 >= room)
        (*b)--;
    if (t->n_done == MAX_DONE)
        cv_forget_oldest(t);
    t->done[t->n_done++] = (cv_iv){*b, *e};
    return moved;
}

/* Pick the lane for [*b, *e]: the stream's own track unless it overlaps by more than a little. */
int cv_place_lane(cv_lanes *l, int64_t *b, int64_t *e, int *moved)
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

void cv_lane_describe(cv_ctx *c, cv_file *f, cv_stream *s, int lane)
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

void cv_misc_instant(cv_ctx *c, cv_file *f, int64_t ts, const char *name, uint64_t iid, int cat,
                     const cv_args *x)
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

void cv_on_thread(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_thread th;
    gt_body_copy(&th, sizeof th, rec);
    cv_thread *t = cv_thread_get(c, f, th.tid);
    if (!t || !th.name_id)
        return;
    snprintf(t->name, sizeof t->name, "%s", cv_str(f, th.name_id, ""));
    cv_describe_thread(c, f, t); /* describing again renames it */
}

int32_t cv_pick_pid(cv_ctx *c, int32_t pid)
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
