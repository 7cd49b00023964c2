/* convert_nvtx.c — NVTX: push/pop ranges on their thread, start/end ranges on the process's
 * range lanes. */
#include "convert_internal.h"

/* NVTX ranges still open at the end of the file (a push whose pop was never recorded: NCCL's
 * ncclCommInitRankConfig, a process killed inside a range) end with the file's last event, so
 * that every slice ends. */
void cv_close_ranges(cv_ctx *c, cv_file *f)
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

void cv_on_nvtx(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_nvtx n;
    gt_body_copy(&n, sizeof n, rec);
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
        cv_range_slot *s = &f->open_ranges[gt_mix64(n.range_id) & (RANGE_SLOTS - 1)];
        *s = (cv_range_slot){.range_id = n.range_id ? n.range_id : 1,
                             .b = ts,
                             .name_id = n.name_id,
                             .domain_id = n.domain_id};
        break;
    }
    case GT_NVTX_RANGE_END: {
        cv_range_slot *s = &f->open_ranges[gt_mix64(n.range_id) & (RANGE_SLOTS - 1)];
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
