/* convert_flows.c — Flows: every link op_link.h decides is drawn as one arrow with both ends, from
 * an instant in the call's slice to the GPU op (or to an instant on it when the op was written
 * first); the call cache and the late-op ring that let a link be drawn when it comes late. */
#include "convert_internal.h"

#include <stdint.h>

uint64_t cv_flow_id(const cv_file *f, int kind, uint64_t id)
{
    uint64_t u = gt_mix64(gt_mix64(((uint64_t)f->index << 8) | (uint64_t)kind) ^ id);
    return u ? u : 1;
}

/* The flow id of the arrow to one GPU op. The correlation id alone is not enough: the kernels of
 * one cudaGraphLaunch share it, and Perfetto drops all but one arrow of a repeated id. Where the
 * op lies (its track and its time) tells them apart. */
uint64_t cv_op_flow_id(const cv_file *f, uint64_t corr, uint64_t where, uint64_t when)
{
    return cv_flow_id(f, FLOW_OP, corr ^ gt_mix64(when ^ gt_mix64(where)));
}

/* Ids count up: a ring by the id's low bits holds any run of consecutive ids as long as the ring
 * (convert_lag.c sizes it from the lag of the file), and is written and read in order instead of
 * by random access, which cost a cache miss per record on large traces. The lookups are on the hot
 * path: `inline` as in convert_events.c. */
inline cv_api_slot *cv_api_slot_of(cv_file *f, uint64_t corr)
{
    return &f->api[corr & f->api_mask];
}

inline cv_api_slot *cv_api_find(cv_file *f, uint64_t corr)
{
    cv_api_slot *s = cv_api_slot_of(f, corr);
    return corr && s->corr == corr ? s : NULL;
}

inline cv_late_slot *cv_late_slot_of(cv_file *f, uint64_t corr)
{
    return &f->late[corr & f->late_mask];
}

inline cv_decided_slot *cv_decided_slot_of(cv_file *f, uint64_t corr)
{
    return &f->decided[corr & f->decided_mask];
}

inline void cv_late_call(cv_ctx *c, cv_file *f, uint64_t call)
{
    if (call && f->n_waiting)
        cv_late_call_waiting(c, f, call);
}

/* An instant inside the call's slice, 1 ns after its begin, that starts flow id: every arrow from
 * a call starts at one, so that an arrow is written only once its other end is known (a flow id
 * on the call's own slice would start arrows that nothing may end). Not at the slice's middle: a
 * long call (a plan's first execute, an autotuning sweep) has kernels running before its middle,
 * and a flow must not end before it starts. */
static void cv_anchor(cv_ctx *c, const cv_api_slot *api, uint64_t id)
{
    cv_event a = {.type = CV_INSTANT,
                  .track = api->track,
                  .seq = api->seq,
                  .ts = api->e > api->b ? api->b + 1 : api->b,
                  .name = "GPU work",
                  .name_iid = IID_GPU_WORK};
    cv_set_cat(&a, CAT_LAUNCH);
    a.flows[a.n_flows++] = id;
    cv_emit(c, &a);
    c->st->instants++;
}

/* One arrow is drawn: count it, and a kernel's by how its link was found (the report counts the
 * same kernels the same way: convert.real compares them on every trace). */
static void cv_count_arrow(cv_ctx *c, int how, int kind)
{
    c->st->flows++;
    if (kind != GT_REC_GPU_KERNEL)
        return;
    if (how == GT_LINK_TIME)
        c->st->linked_by_time++;
    else if (how == GT_LINK_ORDER)
        c->st->linked_by_order++;
    else if (how == GT_LINK_PAIR)
        c->st->linked_by_pair++;
}

/* The link of an op written before its link was decided (or before its call's slice): an
 * instant at the op's begin, on the op's GPU track, ends the flow from an anchor in the call. */
static void cv_late_draw(cv_ctx *c, cv_file *f, cv_api_slot *api, cv_late_slot *late)
{
    uint64_t id = cv_op_flow_id(f, late->corr, late->track, (uint64_t)late->ts);
    cv_anchor(c, api, id);
    cv_event g = {.type = CV_INSTANT,
                  .track = late->track,
                  .seq = late->seq,
                  .ts = late->ts,
                  .name = "from call",
                  .name_iid = IID_LATE};
    cv_set_cat(&g, CAT_LAUNCH);
    g.term_flows[g.n_term_flows++] = id;
    cv_emit(c, &g);
    c->st->instants++;
    cv_count_arrow(c, late->how, late->kind);
    api->n_gpu++;
    late->corr = 0;
    late->how = 0;
}

/* Where the call of a link decided before its op is, for the op when it is read. */
static void cv_decided_keep(cv_file *f, uint64_t corr, const cv_api_slot *api, int how)
{
    *cv_decided_slot_of(f, corr) = (cv_decided_slot){.corr = corr, .how = how, .call = *api};
}

/* A pair (CUPTI corr -> our call) arrived: draw the link of the op it explains if that op was
 * written already, now or once the call's slice is written. */
cv_wait_slot *cv_wait_find(cv_file *f, uint64_t call, int create)
{
    size_t h = gt_mix64(call), empty = SIZE_MAX;
    for (size_t i = 0; i < WAIT_PROBES; i++) {
        cv_wait_slot *w = &f->wait[(h + i) & f->wait_mask];
        if (w->external == call)
            return w;
        if (!w->external && empty == SIZE_MAX)
            empty = (h + i) & f->wait_mask;
    }
    if (!create)
        return NULL;
    cv_wait_slot *w = &f->wait[empty != SIZE_MAX ? empty : h & f->wait_mask];
    /* Every probe taken: the oldest call there gives up its waiting ops (their late slots count
     * them as not drawn, or the links of ops not read yet are lost with the decided slots'). */
    if (!w->external)
        f->n_waiting++;
    *w = (cv_wait_slot){.external = call};
    return w;
}

/* A link decided (corr -> call): drawn now if the op and the call's slice are both known; else
 * what is known is kept until the rest comes (the op in its late slot, the call's slice in a
 * decided slot, a call not read yet in a wait slot). */
void cv_late_pair(cv_ctx *c, cv_file *f, uint64_t corr, uint64_t call, int how)
{
    if (!corr || !call)
        return;
    cv_late_slot *late = cv_late_slot_of(f, corr);
    int written = late->corr == corr;
    if (written)
        late->how = (uint16_t)how;
    cv_api_slot *api = cv_api_find(f, call);
    if (api) {
        if (written)
            cv_late_draw(c, f, api, late);
        else
            cv_decided_keep(f, corr, api, how);
        return;
    }
    cv_wait_slot *w = cv_wait_find(f, call, 1);
    if (w->n < WAIT_OPS) {
        w->how[w->n] = (uint8_t)how;
        w->corr[w->n++] = corr;
    }
}

/* The call's slice is written: draw the links of its ops that came before it. */
void cv_late_call_waiting(cv_ctx *c, cv_file *f, uint64_t call)
{
    cv_wait_slot *w = cv_wait_find(f, call, 0);
    cv_api_slot *api = w ? cv_api_find(f, call) : NULL;
    if (!api)
        return;
    for (uint32_t i = 0; i < w->n; i++) {
        cv_late_slot *late = cv_late_slot_of(f, w->corr[i]);
        if (late->corr == w->corr[i])
            cv_late_draw(c, f, api, late);
        else /* its op is not read yet */
            cv_decided_keep(f, w->corr[i], api, w->how[i]);
    }
    *w = (cv_wait_slot){0};
    f->n_waiting--;
}

/* On reading a GPU op: the call's slice of its link, when both are known already (kept in the op,
 * which may be written much later: each stream holds its last op). */
void cv_op_call(cv_file *f, cv_gpu_op *op)
{
    op->how = GT_LINK_NONE;
    if (!op->corr)
        return;
    const cv_decided_slot *d = cv_decided_slot_of(f, op->corr);
    if (d->corr == op->corr) {
        op->how = d->how;
        op->call = d->call;
        return;
    }
    int how = GT_LINK_NONE;
    uint64_t call = gt_op_links_call(&f->links, op->corr, &how);
    const cv_api_slot *api = call ? cv_api_find(f, call) : NULL;
    if (api) {
        op->how = how;
        op->call = *api;
    }
}

/* The arrow from the call that caused this GPU op, when its link is decided and the call's slice
 * is written: from an anchor in the call's slice to the op's slice. Returns 0 when it cannot be
 * drawn yet (the op is then remembered as a late one). */
int cv_gpu_flow(cv_ctx *c, cv_file *f, const cv_gpu_op *op, cv_event *ev)
{
    cv_gpu_op now;
    if (!op->how) { /* its link may have been decided while it was held */
        now = *op;
        cv_op_call(f, &now);
        op = &now;
    }
    if (!op->how)
        return 0;
    uint64_t id = cv_op_flow_id(f, op->corr, ((uint64_t)op->device << 32) | op->stream, op->start);
    cv_anchor(c, &op->call, id);
    ev->term_flows[ev->n_term_flows++] = id;
    cv_count_arrow(c, op->how, op->kind);
    return 1;
}

/* A link decided (op_link.h): drawn now if its op was written already, else when the op is. */
void cv_link_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    cv_ctx *c = ctx;
    cv_late_pair(c, c->f, corr, call, how);
}
