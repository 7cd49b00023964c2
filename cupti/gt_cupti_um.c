/* gt_cupti_um.c — CUPTI's unified-memory counters: page faults on either side, migrations each way
 * with their bytes, thrashing and throttling (issue 30: a cudaMallocManaged program showed none of
 * them). They become GT_REC_GPU_UM records (gt_cupti_records.c).
 *
 * When. CUPTI documents cuptiActivityConfigureUnifiedMemoryCounter as callable once the driver is
 * initialised, before the kind is enabled, and gives faults and migrations only for managed
 * memory. So by default (GPUTRACE_UM=auto) nothing is asked until the process's first managed
 * allocation: a program without managed memory pays nothing. Migrations happen at first touch,
 * after the allocation returned, so switching on at the allocation's exit loses none of them. The
 * allocation is seen by the driver callback on cuMemAllocManaged (every runtime, static ones
 * included, allocates through it) and by the cudaMallocManaged wrapper (when callbacks are off);
 * GPUTRACE_UM=on asks at attach (retried once the driver is up), off never.
 *
 * A CUPTI that refuses (an unsupported platform, a device without the counters, MPS) is said once,
 * and the header flag GT_HDR_UM_REFUSED tells the report that faults and migrations are unknown,
 * not absent. No lock of ours is held around the CUPTI calls. */
#include "gt_core.h"
#include "gt_cupti.h"
#include "gt_cupti_internal.h"

enum { UM_IDLE, UM_WANTED, UM_ENABLING, UM_ON, UM_REFUSED };
static atomic_int um_state = UM_IDLE;
static atomic_bool managed_seen;

/* The counters asked for: what the report and the advice use, most important first (a CUPTI that
 * refuses the whole list is asked again for the first four). */
static const CUpti_ActivityUnifiedMemoryCounterKind UM_KINDS[] = {
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD,
};
#define N_UM_KINDS (sizeof UM_KINDS / sizeof *UM_KINDS)
#define N_UM_CORE 4

static CUptiResult configure(uint32_t n)
{
    CUpti_ActivityUnifiedMemoryCounterConfig cfg[N_UM_KINDS];
    for (uint32_t i = 0; i < n; i++)
        cfg[i] = (CUpti_ActivityUnifiedMemoryCounterConfig){
            .scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE,
            .kind = UM_KINDS[i],
            .deviceId = 0, /* scope and device are ignored since CUDA 7.0 */
            .enable = 1};
    return GT_CUPTI_CALL(gt_cupti.ActivityConfigureUnifiedMemoryCounter(cfg, n));
}

static void refuse(CUptiResult r)
{
    atomic_store(&um_state, UM_REFUSED);
    if (!atomic_load(&managed_seen))
        return; /* GPUTRACE_UM=on in a program without managed memory: nothing to miss */
    gt_core_set_header_flag(GT_HDR_UM_REFUSED);
    gt_warn("managed memory is in use but CUPTI refused its unified-memory counters (%s): page "
            "faults and migrations are not recorded",
            gt_cupti_result_string(r));
}

/* Ask CUPTI now. Only the thread that takes the WANTED (or IDLE) state asks. */
static void try_enable(int from)
{
    if (!atomic_compare_exchange_strong(&um_state, &from, UM_ENABLING))
        return;
    if (!gt_cupti.ActivityConfigureUnifiedMemoryCounter) {
        refuse(CUPTI_ERROR_NOT_SUPPORTED);
        return;
    }
    CUptiResult r = configure(N_UM_KINDS);
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_NOT_INITIALIZED)
        r = configure(N_UM_CORE); /* a CUPTI that knows the main counters only */
    if (r == CUPTI_SUCCESS)
        r = GT_CUPTI_CALL(gt_cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER));
    if (r == CUPTI_ERROR_NOT_INITIALIZED) { /* the driver is not up yet: the writer retries */
        atomic_store(&um_state, UM_WANTED);
        return;
    }
    if (r != CUPTI_SUCCESS) {
        refuse(r);
        return;
    }
    atomic_store(&um_state, UM_ON);
    gt_core_set_header_flag(GT_HDR_UM_COUNTERS);
    gt_debug("unified-memory counters on (%s)",
             atomic_load(&managed_seen) ? "managed memory allocated" : "GPUTRACE_UM=on");
}

void gt_cupti_note_managed_memory(void)
{
    if (atomic_load_explicit(&managed_seen, memory_order_relaxed) ||
        atomic_exchange(&managed_seen, true))
        return;
    if (gt_core_config()->um_mode == GT_UM_OFF)
        return;
    int idle = UM_IDLE;
    atomic_compare_exchange_strong(&um_state, &idle, UM_WANTED);
    if (gt_cupti_is_attached())
        try_enable(UM_WANTED);
    else if (atomic_load(&um_state) == UM_REFUSED) /* refused before this allocation */
        refuse(CUPTI_ERROR_NOT_SUPPORTED);
}

void gt_cupti_um_attached(void)
{
    int st = atomic_load(&um_state);
    if (st == UM_ON) { /* attached again after a detach: the kind was reset with CUPTI */
        atomic_store(&um_state, UM_WANTED);
        st = UM_WANTED;
    }
    if (st == UM_IDLE && gt_core_config()->um_mode == GT_UM_ON) {
        atomic_store(&um_state, UM_WANTED);
        st = UM_WANTED;
    }
    if (st == UM_WANTED)
        try_enable(UM_WANTED);
}

void gt_cupti_um_periodic(void)
{
    if (atomic_load(&um_state) == UM_WANTED && gt_cupti_is_attached())
        try_enable(UM_WANTED);
}

bool gt_cupti_um_on(void)
{
    return atomic_load(&um_state) == UM_ON;
}

void gt_cupti_um_reset_after_fork(void)
{
    atomic_store(&um_state, UM_IDLE);
    atomic_store(&managed_seen, false);
}
