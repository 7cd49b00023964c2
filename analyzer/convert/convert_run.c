/* convert_run.c — the driver of `gputrace convert`: inputs, one file's record loop and its dispatch
 * to the parts, advice, the output's end. The parts (convert_internal.h lists what they share):
 * convert_events.c (how an event reaches the sink), convert_tracks.c (tracks, descriptors,
 * placement), convert_cpu.c (CPU slices), convert_gpu.c (GPU operations), convert_flows.c (arrows
 * and the caches by correlation id), convert_nvtx.c, convert_counters.c, convert_stacks.c (call
 * sites), convert_args.c (arguments and their texts), convert_sample.c (GPU sampling's gaps),
 * convert_budget.c (--max-mb); the sinks convert_perfetto.c and convert_json.c encode. Links are
 * decided by op_link.c, not here.
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
#include "convert_internal.h"

#include <errno.h>

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
    case GT_REC_GPU_UM:
        cv_on_um(c, f, rec);
        break;
    case GT_REC_CAPTURE:
        cv_on_capture(c, f, rec); /* GPU sampling's windows: mark the time between them */
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

/* A phase of the timeline (model_phases.c): a slice on the process's "gputrace phases" track. */
static void cv_phase_emit(cv_ctx *c, cv_file *f, const gt_convert_advice *item)
{
    int64_t ts, end_ts;
    if (!cv_ts(c, item->t_ns, &ts) || !cv_ts(c, item->end_ns, &end_ts) || end_ts <= ts)
        return;
    cv_side_slice(c, f, &f->phases, "gputrace phases", 2000002, -3, ts, end_ts, item->title,
                  item->detail);
}

static void cv_advice_emit(void *ctx, const gt_convert_advice *item)
{
    cv_ctx *c = ctx;
    cv_file *f = c->f;
    if (!item || !item->title)
        return;
    if (item->end_ns > item->t_ns) {
        cv_phase_emit(c, f, item);
        return;
    }
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
        cv_arg_s(&x, AN_DETAIL, item->detail);
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

/* The link caches, as large as the file's lag asks (convert_lag.c; the smallest sizes when it
 * cannot be measured). */
static int cv_file_alloc(cv_file *f)
{
    gt_link_lag lag;
    const gt_convert_opts *o = f->ctx_opts;
    if ((!o->link_lag || o->link_lag(o->record_ctx, f->index, gt_reader_path(f->r), &lag) != 0) &&
        cv_measure_lag(&f->src, &lag) != 0)
        memset(&lag, 0, sizeof lag);
    f->api_mask = (1ull << cv_ring_bits(lag.call_span, API_MIN_BITS, API_MAX_BITS)) - 1;
    f->late_mask = (1ull << cv_ring_bits(lag.late_span, LATE_MIN_BITS, LATE_MAX_BITS)) - 1;
    f->decided_mask =
        (1ull << cv_ring_bits(lag.decided_span, DECIDED_MIN_BITS, DECIDED_MAX_BITS)) - 1;
    f->wait_mask = (1ull << cv_ring_bits(lag.ahead_span, WAIT_MIN_BITS, WAIT_MAX_BITS)) - 1;
    f->api = calloc(f->api_mask + 1, sizeof *f->api);
    f->late = calloc(f->late_mask + 1, sizeof *f->late);
    f->decided = calloc(f->decided_mask + 1, sizeof *f->decided);
    f->wait = calloc(f->wait_mask + 1, sizeof *f->wait);
    f->plans = calloc(PLAN_SLOTS, sizeof *f->plans);
    f->sigs = calloc(PLAN_SLOTS, sizeof *f->sigs);
    f->names = calloc(NAME_SLOTS, sizeof *f->names);
    f->open_ranges = calloc(RANGE_SLOTS, sizeof *f->open_ranges);
    return f->api && f->late && f->decided && f->wait && f->plans && f->sigs && f->names &&
                   f->open_ranges
               ? 0
               : -1;
}

static void cv_file_free(cv_file *f)
{
    if (f->names)
        for (size_t i = 0; i < NAME_SLOTS; i++)
            free(f->names[i].name);
    free(f->api);
    free(f->late);
    free(f->decided);
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

/* Ops whose link was decided but whose call's slice never came (or was forgotten) at the end. */
static void cv_count_undrawn(cv_file *f)
{
    for (size_t i = 0; i <= f->late_mask; i++) {
        const cv_late_slot *l = &f->late[i];
        if (l->corr && l->how)
            f->links_undrawn++;
    }
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

static void cv_mark_left_out(cv_ctx *c, cv_file *f);

/* opts.note (convert --ranks): once, at the first file's start, whatever --max-mb keeps. */
static void cv_note(cv_ctx *c, cv_file *f)
{
    if (!c->opts->note || f->index != 0)
        return;
    cv_args x;
    x.n = 0;
    cv_arg_s(&x, AN_DETAIL, c->opts->note);
    c->unfiltered = 1;
    cv_misc_instant(c, f, f->first_ts, "ranks chosen by convert --ranks", 0, CAT_GPUTRACE, &x);
    c->unfiltered = 0;
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
    cv_note(c, &f);
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
    cv_mark_left_out(c, &f);
    gt_op_links_finish(&f.links);
    cv_fold_flush_all(c, &f);
    cv_flush_streams(c, &f);
    cv_count_undrawn(&f); /* after the ops each stream held */
    cv_close_ranges(c, &f);
    cv_sample_finish(c, &f);
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
    c->st->link_not_anchored += f.links.not_anchored;
    c->st->link_by_stream += f.links.by_stream;
    c->st->link_other_stream += f.links.other_stream;
    c->st->links_undrawn += f.links_undrawn;

    for (size_t i = 0; i < f.n_threads; i++)
        c->sink->seq_end(c->sink, f.threads[i].seq);
    for (int i = 0; i < f.n_devices; i++)
        c->sink->seq_end(c->sink, f.devices[i].seq);
    for (size_t i = 0; i < f.n_streams; i++)
        c->sink->seq_end(c->sink, f.streams[i].seq);
    cv_file_free(&f);
    c->f = NULL;
}

/* --max-mb: a marker at the start of every span left out, on the process's "gputrace" track. */
static void cv_mark_left_out(cv_ctx *c, cv_file *f)
{
    const gt_convert_opts *o = c->opts;
    if (!o->n_keep)
        return;
    c->unfiltered = 1;
    for (size_t i = 0; i <= o->n_keep; i++) {
        uint64_t lo = i ? o->keep[i - 1].hi_ns : (uint64_t)f->hdr->start_realtime_ns;
        uint64_t hi = i < o->n_keep ? o->keep[i].lo_ns : 0; /* 0: to the end */
        int64_t ts;
        if (hi && hi <= lo)
            continue;
        if (!cv_ts(c, lo, &ts))
            continue;
        cv_args x;
        x.n = 0;
        if (hi)
            cv_arg_u(&x, AN_SPAN_NS, hi - lo);
        if (o->left_out_why)
            cv_arg_s(&x, AN_DETAIL, o->left_out_why);
        cv_misc_instant(c, f, ts,
                        hi ? "left out by convert --max-mb (the report covers it)"
                           : "left out from here to the end by convert --max-mb (the report "
                             "covers it)",
                        0, CAT_GPUTRACE, &x);
    }
    c->unfiltered = 0;
}

/* Advice of every file, then the end of their process sequences. */
static void cv_advice_all(cv_ctx *c)
{
    c->unfiltered = 1; /* the advice covers the whole run, whatever --max-mb left out */
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
