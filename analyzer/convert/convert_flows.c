/* convert_flows.c — Flows: every link op_link.h decides is drawn as one arrow with both ends, from
 * an instant in the call's slice to the GPU op (or to an instant on it when the op was written
 * first); the call cache and the late-op ring that let a link be drawn when it comes late. */
#include "convert_internal.h"

#include <stdint.h>

/* Correlation ids count up: folding (not hashing) them keeps consecutive ids in consecutive
 * slots, so the caches are written and read like rings (the oldest id is what gets replaced)
 * instead of by random access, which cost a cache miss per record on large traces. The lookups are
 * on the hot path: `inline` as in convert_events.c. */
inline size_t cv_corr_slot(uint64_t corr, unsigned bits)
{
    return (size_t)((corr ^ (corr >> bits) ^ (corr >> 2 * bits) ^ (corr >> 3 * bits)) &
                    ((1ull << bits) - 1));
}

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

inline cv_api_slot *cv_api_slot_of(cv_file *f, uint64_t corr)
{
    return &f->api[cv_corr_slot(corr, API_BITS)];
}

inline cv_api_slot *cv_api_find(cv_file *f, uint64_t corr)
{
    cv_api_slot *s = cv_api_slot_of(f, corr);
    return corr && s->corr == corr ? s : NULL;
}

inline cv_late_slot *cv_late_slot_of(cv_file *f, uint64_t corr)
{
    return &f->late[cv_corr_slot(corr, LATE_BITS)];
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
    int how = GT_LINK_NONE;
    gt_op_links_call(&f->links, late->corr, &how);
    cv_count_arrow(c, how, late->kind);
    api->n_gpu++;
    late->corr = 0;
}

/* A pair (CUPTI corr -> our call) arrived: draw the link of the op it explains if that op was
 * written already, now or once the call's slice is written. */
cv_wait_slot *cv_wait_find(cv_file *f, uint64_t call, int create)
{
    size_t h = gt_mix64(call), empty = SIZE_MAX;
    for (size_t i = 0; i < WAIT_PROBES; i++) {
        cv_wait_slot *w = &f->wait[(h + i) & (WAIT_SLOTS - 1)];
        if (w->external == call)
            return w;
        if (!w->external && empty == SIZE_MAX)
            empty = (h + i) & (WAIT_SLOTS - 1);
    }
    if (!create)
        return NULL;
    cv_wait_slot *w = &f->wait[empty != SIZE_MAX ? empty : h & (WAIT_SLOTS - 1)];
    if (w->external) /* every probe taken: the oldest call there gives up its waiting ops */
        f->links_undrawn += w->n;
    else
        f->n_waiting++;
    *w = (cv_wait_slot){.external = call};
    return w;
}

void cv_late_pair(cv_ctx *c, cv_file *f, uint64_t corr, uint64_t call)
{
    cv_late_slot *late = cv_late_slot_of(f, corr);
    if (!corr || !call || late->corr != corr)
        return;
    cv_api_slot *api = cv_api_find(f, call);
    if (api) {
        cv_late_draw(c, f, api, late);
        return;
    }
    cv_wait_slot *w = cv_wait_find(f, call, 1);
    if (w->n < WAIT_OPS)
        w->corr[w->n++] = corr;
    else
        f->links_undrawn++;
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
    }
    *w = (cv_wait_slot){0};
    f->n_waiting--;
}

/* The arrow from the call that caused this GPU op, when its link is decided and the call's slice
 * is written: from an anchor in the call's slice to the op's slice. Returns 0 when it cannot be
 * drawn yet (the op is then remembered as a late one). */
int cv_gpu_flow(cv_ctx *c, cv_file *f, const cv_gpu_op *op, cv_event *ev)
{
    int how = GT_LINK_NONE;
    uint64_t call = gt_op_links_call(&f->links, op->corr, &how);
    cv_api_slot *api = call ? cv_api_find(f, call) : NULL;
    if (!api)
        return 0;
    uint64_t id = cv_op_flow_id(f, op->corr, ((uint64_t)op->device << 32) | op->stream, op->start);
    cv_anchor(c, api, id);
    ev->term_flows[ev->n_term_flows++] = id;
    api->n_gpu++;
    cv_count_arrow(c, how, op->kind);
    return 1;
}

/* A link decided (op_link.h): drawn now if its op was written already, else when the op is. */
void cv_link_decided(void *ctx, uint64_t corr, uint64_t call, int how)
{
    cv_ctx *c = ctx;
    (void)how;
    cv_late_pair(c, c->f, corr, call);
}
