/* convert_gpu.c — GPU operations: kernels, copies and sets on their stream's track, held one
 * op per stream so that a sync stall can be linked to the op it waited for. */
#include "convert_internal.h"

/* held is the op before next on its stream (next = NULL at the end of the file), placed at
 * held_b (INT64_MAX: not drawn): it is what a sync returning between held's end and next's end
 * waited for. The arrow goes from the op's slice to an instant "waited for" at the stall's end;
 * when the op's slice was moved past that end (all lanes of its stream busy: it begins where a
 * lane frees), the arrow would end before it starts, so it is not drawn, and counted. */
static void cv_resolve_syncs(cv_ctx *c, cv_file *f, cv_stream *s, cv_gpu_op *held,
                             const cv_gpu_op *next, int64_t held_b)
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
            y->active = 0;
            f->syncs_active &= ~(1ull << i);
            resolved = 1;
            if (y->end_ts < held_b) {
                c->st->wait_arrows_undrawn++;
                continue;
            }
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
        }
    }
    if (resolved)
        cv_syncs_update_min(f);
}

/* Emits op (its stream's held op; next: the op after it, NULL at the end of the file), once the
 * syncs that waited for it are resolved against where its slice begins. */
static void cv_emit_gpu(cv_ctx *c, cv_file *f, cv_stream *s, cv_gpu_op *op, const cv_gpu_op *next)
{
    int64_t b, e;
    if (!cv_ts(c, op->start, &b)) {
        cv_resolve_syncs(c, f, s, op, next, INT64_MAX);
        return;
    }
    if (op->end < op->start || !cv_ts(c, op->end, &e))
        e = b;
    int moved;
    int lane = cv_place_lane(&s->lanes, &b, &e, &moved);
    c->st->clamped += (uint64_t)moved;
    cv_resolve_syncs(c, f, s, op, next, b);
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
        cv_arg_s(&x, AN_CONFIG,
                 cv_config_text(&f->configs[CONFIG_KERNEL],
                                (const int64_t[8]){k->grid[0], k->grid[1], k->grid[2], k->block[0],
                                                   k->block[1], k->block[2], k->registers,
                                                   (int64_t)k->static_smem + k->dynamic_smem}));
        if (k->graph_id)
            cv_arg_u(&x, AN_GRAPH_ID, k->graph_id);
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
        cv_arg_u(&x, AN_BYTES, m->bytes);
        /* The name says the host side of HtoD and DtoH ("Memcpy HtoD (pinned)") and which
         * side is the device (DtoD, PtoP: both). */
        int from_dev = m->copy_kind == 2 || m->copy_kind == 8 || m->copy_kind == 10;
        int to_dev = m->copy_kind == 1 || m->copy_kind == 8 || m->copy_kind == 10;
        cv_memory_args(&x, m->src_kind, m->dst_kind,
                       m->copy_kind == 1 || (from_dev && m->src_kind == GT_MEM_DEVICE),
                       m->copy_kind == 2 || (to_dev && m->dst_kind == GT_MEM_DEVICE));
        if (op->end > op->start)
            cv_arg_d(&x, AN_GBPS, (double)m->bytes / (double)(op->end - op->start));
        break;
    }
    default: {
        ev.name = "Memset";
        ev.name_iid = IID_MEMSET;
        cv_set_cat(&ev, CAT_MEMSET);
        cv_arg_u(&x, AN_BYTES, op->r.s.bytes);
        break;
    }
    }
    /* Device and stream are in the track's name ("GPU 0 · stream 7"); the correlation id only
     * when no flow arrow links the op to its call. */
    int drawn = cv_gpu_flow(c, f, op, &ev);
    if (!drawn)
        cv_arg_u(&x, AN_CORRELATION, op->corr);
    if (!drawn && op->corr) { /* its link or its call may come later: remember where it is */
        cv_late_slot *late = cv_late_slot_of(f, op->corr);
        if (late->corr && late->how) /* a link whose call never came: forgotten now */
            f->links_undrawn++;
        *late = (cv_late_slot){.kind = op->kind,
                               .corr = op->corr,
                               .track = ev.track,
                               .seq = ev.seq,
                               .ts = e > b + 1 ? b + 1 : b};
        int how = GT_LINK_NONE;
        uint64_t call = gt_op_links_call(&f->links, op->corr, &how);
        if (call)
            cv_late_pair(c, f, op->corr, call, how);
    }
    ev.args = x.a;
    ev.n_args = x.n;
    for (int i = 0; i < op->n_sync_flows && ev.n_flows < CV_MAX_FLOWS; i++)
        ev.flows[ev.n_flows++] = op->sync_flows[i];
    cv_slice(c, &ev, e, NULL, 0);
    c->st->gpu_ops++;
    cv_busy_add(c, f, d, op->start, op->end);
}

void cv_on_gpu(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    cv_gpu_op op; /* every field is set below; sync_flows is read only up to n_sync_flows */
    op.kind = rec->kind;
    op.n_sync_flows = 0;
    gt_body_copy(&op.r, sizeof op.r, rec);
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
    cv_op_call(f, &op);
    if (!s->has_api_stream && op.how) {
        s->has_api_stream = 1;
        s->api_stream = op.call.stream;
    }
    if (s->held.kind) {
        cv_emit_gpu(c, f, s, &s->held, &op);
    }
    s->held = op;
}

void cv_flush_streams(cv_ctx *c, cv_file *f)
{
    for (size_t i = 0; i < f->n_streams; i++) {
        cv_stream *s = &f->streams[i];
        if (s->held.kind) {
            cv_emit_gpu(c, f, s, &s->held, NULL);
            s->held.kind = 0;
        }
    }
}
