/* wrap_unseen.c — calls no wrapper sees, recorded from CUPTI's callbacks (issue 30).
 *
 * nvcc links cudart statically by default: such a program's launches never reach an exported
 * wrapper, so its kernels led to no call (0 of 34 in a cuda-samples-style program on an H200).
 * CUPTI's runtime callbacks do see a static runtime's calls. When CUPTI finds the process runs one
 * (gt_cupti_static_runtime), it hands each launch made outside a wrapped call to this hook, in the
 * application's thread at the call's exit; the hook records it as the launch wrapper would
 * (GT_REC_API_LAUNCH, flagged GT_RF_VIA_CUPTI) and returns the call id CUPTI's callback pairs
 * with the launch's correlation id. Launches carry no call-site stack unless GPUTRACE_STACKS=all,
 * as with the wrappers. Memsets (cudaMemset, cudaMemsetAsync) are recorded and paired the same
 * way, as the set wrappers record them. Allocations and frees (cudaMalloc, cudaFree, ...;
 * cudaMallocManaged by the driver's cuMemAllocManaged under it) are recorded the same way, with
 * their call site, as the allocation wrappers record them. */
#include "gt_wrap.h"

/* The call record's common part of a call no wrapper saw (inside the fast guard), with a call-site
 * stack when stack is set. */
static gt_call unseen_call_begin(const gt_cupti_unseen_call *u, int stack)
{
    return (gt_call){.t_begin = u->t_begin_ns,
                     .corr_id = gt_fast_next_corr_id(),
                     .func = u->func,
                     .device = gt_wrap_tls_device_plus1 ? gt_wrap_tls_device_plus1 - 1 : -1,
                     .stack_id = gt_wrap_stack(stack)};
}

/* An allocation or free of a static runtime: what the allocation wrappers would record. */
static void record_unseen_alloc(const gt_cupti_unseen_call *a)
{
    if (!gt_fast_guard_enter())
        return;
    gt_call c = unseen_call_begin(a, 1);
    gt_record_alloc(&c, a->t_end_ns, (uint16_t)(a->flags | GT_RF_VIA_CUPTI), a->result, a->stream,
                    a->ptr, a->bytes, a->alloc_kind, a->is_free);
    gt_fast_guard_leave();
}

/* A memset of a static runtime: what the set wrappers record (a synchronous one with its call
 * site). Returns its call id, for the pair with the memset's correlation id. */
static uint64_t record_unseen_memset(const gt_cupti_unseen_call *m)
{
    if (!gt_fast_guard_enter())
        return 0;
    gt_call c = unseen_call_begin(m, !m->is_async);
    gt_record_set(&c, m->t_end_ns, (uint16_t)(m->flags | GT_RF_VIA_CUPTI), m->result, m->stream,
                  (const void *)(uintptr_t)m->ptr, m->bytes, m->value, m->is_async);
    gt_fast_guard_leave();
    return c.corr_id;
}

static uint64_t record_unseen_call(const gt_cupti_unseen_call *l)
{
    if (l->is_alloc) {
        record_unseen_alloc(l);
        return 0; /* an allocation puts no work on the GPU: nothing to pair */
    }
    if (l->is_memset)
        return record_unseen_memset(l);
    /* the name first: interning may write a string record, never inside an open record */
    uint32_t name_id = l->symbol && l->symbol[0] ? gt_intern(l->symbol) : 0;
    if (!gt_fast_guard_enter())
        return 0;
    gt_call c = unseen_call_begin(l, gt_wrap_stacks_mode >= GT_STACKS_ALL);
    gt_rec_api_launch *rec = gt_fast_record_begin(
        GT_REC_API_LAUNCH, (uint16_t)(l->flags | GT_RF_VIA_CUPTI), sizeof *rec);
    if (rec) {
        gt_call_fill(&rec->c, &c, l->t_end_ns, l->stream, l->result);
        rec->function = (uint64_t)(uintptr_t)l->function;
        rec->name_id = name_id;
        for (int i = 0; i < 3; i++)
            rec->grid[i] = l->grid[i], rec->block[i] = l->block[i];
        rec->shared_mem = (uint32_t)l->shared_mem;
        rec->graph_exec = 0;
        gt_fast_record_commit(rec);
    }
    gt_fast_guard_leave();
    return rec ? c.corr_id : 0;
}

void gt_wrap_unseen_init(void)
{
    gt_cupti_set_unseen_call_hook(record_unseen_call);
}
