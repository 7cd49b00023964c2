/* convert_cpu.c — CPU slices: one per wrapped call, with its arguments; sync stalls; runs of
 * short cuDNN descriptor calls folded into one "bookkeeping" slice; records lost. */
#include "convert_internal.h"

void cv_syncs_update_min(cv_file *f)
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
    gt_body_copy(&u, sizeof u, rec);
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
        cv_arg_u(&x, AN_BYTES, u.cp.bytes);
        cv_arg_s(&x, AN_DIRECTION, gt_memcpy_dir_name(u.cp.direction));
        int from_dev = u.cp.direction == GT_DIR_D2H || u.cp.direction == GT_DIR_D2D;
        int to_dev = u.cp.direction == GT_DIR_H2D || u.cp.direction == GT_DIR_D2D;
        cv_memory_args(&x, u.cp.src_kind, u.cp.dst_kind, from_dev && u.cp.src_kind == GT_MEM_DEVICE,
                       to_dev && u.cp.dst_kind == GT_MEM_DEVICE);
        if (u.cp.is_async && !strstr(fname, "Async")) /* the name says it otherwise */
            cv_arg_i(&x, AN_ASYNC, u.cp.is_async);
        break;
    case GT_REC_API_MEMSET:
        cv_set_cat(&ev, CAT_COPY);
        cv_arg_u(&x, AN_BYTES, u.set.bytes);
        cv_arg_i(&x, AN_VALUE, u.set.value);
        break;
    case GT_REC_API_ALLOC:
        cv_set_cat(&ev, CAT_MEMORY);
        cv_arg_u(&x, AN_BYTES, u.al.bytes);
        cv_arg_p(&x, AN_PTR, u.al.ptr);
        break;
    case GT_REC_API_LAUNCH:
        cv_set_cat(&ev, CAT_LAUNCH);
        if (u.ln.name_id)
            cv_arg_s(&x, AN_KERNEL, cv_kernel_name(f, u.ln.name_id));
        cv_arg_s(
            &x, AN_CONFIG,
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
            cv_arg_u(&x, AN_STALL_NS, (uint64_t)(e - b));
            /* The GPU op it waited for links here when it arrives (see cv_resolve_syncs). */
            if (u.sy.sync_kind != GT_SYNC_EVENT)
                sync = &f->syncs[f->sync_next++ % MAX_SYNCS];
        }
        if (u.sy.event)
            cv_arg_p(&x, AN_EVENT, u.sy.event);
        break;
    case GT_REC_API_CUDNN:
        cv_set_cat(&ev, CAT_CUDNN);
        cv_cudnn_args(f, &u.dn, &x);
        break;
    case GT_REC_API_CUBLAS:
        cv_set_cat(&ev, CAT_CUBLAS);
        cv_arg_s(&x, AN_MNK, cv_dims(x.buf[1], u.bl.m, u.bl.n, u.bl.k));
        if (u.bl.batch > 1)
            cv_arg_i(&x, AN_BATCH, u.bl.batch);
        cv_arg_i(&x, AN_TRANSA, u.bl.transa);
        cv_arg_i(&x, AN_TRANSB, u.bl.transb);
        if (u.bl.compute_type >= 0)
            cv_arg_i(&x, AN_COMPUTE_TYPE, u.bl.compute_type);
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
        cv_arg_p(&x, AN_STREAM, a->stream);
    if (a->device > 0)
        cv_arg_i(&x, AN_DEVICE, a->device);
    if (a->result != 0)
        cv_arg_i(&x, AN_RESULT, a->result);
    if (makes_work)
        cv_arg_u(&x, AN_CORR_ID, a->corr_id);
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
    gt_body_copy(dn, sizeof *dn, rec);
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
    cv_arg_u(&x, AN_COUNT, (uint64_t)fo->n);
    cv_arg_u(&x, AN_BUSY_NS, busy);
    cv_arg_s(&x, AN_CALLS, cv_fold_calls_text(x.buf[0], n_destroy, fo->n - n_destroy));
    cv_arg_p(&x, AN_STREAM, fo->calls[0].c.stream);
    if (fo->calls[0].c.device > 0)
        cv_arg_i(&x, AN_DEVICE, fo->calls[0].c.device);
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
void cv_fold_flush(cv_ctx *c, cv_file *f, cv_thread *t, uint64_t cut_real)
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

void cv_fold_flush_all(cv_ctx *c, cv_file *f)
{
    for (size_t i = 0; i < f->n_threads; i++)
        cv_fold_flush(c, f, &f->threads[i], 0);
}

void cv_on_api(cv_ctx *c, cv_file *f, const gt_record *rec)
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

void cv_on_lost(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_lost l;
    gt_body_copy(&l, sizeof l, rec);
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
    cv_arg_u(&x, AN_COUNT, l.count);
    cv_arg_s(&x, AN_REASON, l.reason < 6 ? reasons[l.reason] : "?");
    cv_arg_u(&x, AN_TID, l.lost_tid);
    if (l.t_last_ns > l.t_first_ns)
        cv_arg_u(&x, AN_SPAN_NS, l.t_last_ns - l.t_first_ns);
    cv_misc_instant(c, f, ts, "records lost", IID_LOST, CAT_GPUTRACE, &x);
}
