/* gt_cupti_records.c — activity buffers for CUPTI and their conversion into GT_REC_GPU_* records.
 *
 * Buffers are 4 MB (what Kineto and the measurements used), recycled through a small free list,
 * with a cap on the total (GPUTRACE_CUPTI_MB). A refused request makes CUPTI drop records; it
 * counts them and we write the count as GT_REC_LOST (reason CUPTI_CAP when refusals happened, else
 * CUPTI_DROPPED). Completed buffers are converted on the thread that completes them: CUPTI's own
 * worker, or whoever called cuptiActivityFlushAll (the writer thread, or the exiting thread). No
 * lock of ours is held while calling CUPTI or while waiting for room in the trace. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gt_core.h"
#include "gt_cupti_internal.h"

#define BUFFER_BYTES (4u << 20)
#define FREE_LIST_MAX 64
#define WAIT_MS 200 /* how long a completed buffer may wait for room in the trace */

atomic_bool gt_cupti_kernels_seen;
atomic_bool gt_cupti_queued_expected;
atomic_bool gt_cupti_queued_missing;
atomic_bool gt_cupti_records_seen;
_Thread_local bool gt_cupti_tl_we_flush;
static _Thread_local bool tl_marked_internal;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static void *free_list[FREE_LIST_MAX];
static int free_count;
static uint64_t bytes_allocated;

static atomic_uint_fast64_t stat_dropped, stat_completed, stat_refused, stat_converted,
    stat_overhead;

void gt_cupti_arm_exit_flush(void); /* gt_cupti.c */

/* The first context a kernel ran in, +1 (0: none yet), and whether another one was seen. */
static atomic_uint_fast32_t first_context;
static atomic_bool other_context;

/* Per kernel record: a plain load when the context is the one seen first (the usual case). */
static void note_context(uint32_t context)
{
    uint_fast32_t seen = atomic_load_explicit(&first_context, memory_order_relaxed);
    if (seen == context + 1)
        return;
    if (!seen &&
        atomic_compare_exchange_strong_explicit(&first_context, &seen, context + 1,
                                                memory_order_relaxed, memory_order_relaxed))
        return;
    if (seen != context + 1)
        atomic_store_explicit(&other_context, true, memory_order_relaxed);
}

bool gt_cupti_records_many_contexts(void)
{
    return atomic_load(&other_context);
}

static void *take_buffer(void)
{
    void *buf = NULL;
    uint64_t cap = (uint64_t)gt_core_config()->cupti_mb << 20;
    pthread_mutex_lock(&pool_lock);
    if (free_count > 0) {
        buf = free_list[--free_count];
    } else if (bytes_allocated + BUFFER_BYTES <= cap) {
        bytes_allocated += BUFFER_BYTES;
        pthread_mutex_unlock(&pool_lock);
        buf = aligned_alloc(8, BUFFER_BYTES); /* CUPTI wants 8-byte alignment */
        if (buf)
            return buf;
        pthread_mutex_lock(&pool_lock);
        bytes_allocated -= BUFFER_BYTES;
    }
    pthread_mutex_unlock(&pool_lock);
    return buf;
}

static void give_back(void *buf)
{
    pthread_mutex_lock(&pool_lock);
    if (free_count < FREE_LIST_MAX) {
        free_list[free_count++] = buf;
        buf = NULL;
    } else {
        bytes_allocated -= BUFFER_BYTES;
    }
    pthread_mutex_unlock(&pool_lock);
    free(buf);
}

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *max_records = 0; /* fill the buffer */
    *buffer = take_buffer();
    *size = *buffer ? BUFFER_BYTES : 0;
    if (!*buffer)
        atomic_fetch_add(&stat_refused, 1);
    /* CUPTI asks for a buffer once the CUDA runtime is up: a good moment to put our exit flush
     * ahead of the runtime's teardown. */
    gt_cupti_arm_exit_flush();
}

/* ---------------------------------------------------------------- kernel name cache */

#define NAME_SLOTS 8192
static struct {
    const char *ptr;
    uint32_t id;
} name_cache[NAME_SLOTS];
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;

/* CUPTI shares one name string among all records of a kernel, so the pointer is the key. */
static uint32_t kernel_name_id(const char *name)
{
    if (!name)
        return 0;
    size_t h = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull >> 51; /* 13 bits */
    pthread_mutex_lock(&name_lock);
    for (size_t i = 0; i < 16; i++) {
        size_t slot = (h + i) & (NAME_SLOTS - 1);
        if (name_cache[slot].ptr == name) {
            uint32_t id = name_cache[slot].id;
            pthread_mutex_unlock(&name_lock);
            return id;
        }
        if (!name_cache[slot].ptr)
            break;
    }
    pthread_mutex_unlock(&name_lock);
    uint32_t id = gt_intern(name);
    if (!id)
        return 0;
    pthread_mutex_lock(&name_lock);
    for (size_t i = 0; i < 16; i++) {
        size_t slot = (h + i) & (NAME_SLOTS - 1);
        if (!name_cache[slot].ptr || name_cache[slot].ptr == name) {
            name_cache[slot].ptr = name;
            name_cache[slot].id = id;
            break;
        }
    } /* a full neighbourhood just means this name is interned again next time (same id) */
    pthread_mutex_unlock(&name_lock);
    return id;
}

/* ---------------------------------------------------------------- conversion */

static uint8_t mem_kind(uint32_t cupti_kind)
{
    switch (cupti_kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
        return GT_MEM_PAGEABLE;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
        return GT_MEM_PINNED;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
        return GT_MEM_DEVICE;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
        return GT_MEM_ARRAY;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
        return GT_MEM_MANAGED;
    default:
        return GT_MEM_UNKNOWN;
    }
}

#define BEGIN(type, kind) type *out = gt_record_begin_wait((kind), 0, sizeof(type), WAIT_MS)

static void put_kernel(const CUpti_ActivityKernel10 *k)
{
    uint32_t name_id = kernel_name_id(k->name);
    BEGIN(gt_rec_gpu_kernel, GT_REC_GPU_KERNEL);
    if (!out)
        return;
    out->start_ns = k->start;
    out->end_ns = k->end;
    out->corr_id = gt_cupti_corr(k->correlationId);
    out->graph_id = k->graphId;
    out->grid_id = (uint64_t)k->gridId;
    out->name_id = name_id;
    out->device = k->deviceId;
    out->context = k->contextId;
    note_context(k->contextId);
    out->stream = k->streamId;
    out->grid[0] = k->gridX, out->grid[1] = k->gridY, out->grid[2] = k->gridZ;
    out->block[0] = k->blockX, out->block[1] = k->blockY, out->block[2] = k->blockZ;
    out->registers = k->registersPerThread;
    out->static_smem = (uint32_t)k->staticSharedMemory;
    out->dynamic_smem = (uint32_t)k->dynamicSharedMemory;
    out->pad = 0;
    out->queued_ns = k->queued == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->queued;
    if (!out->queued_ns && !k->graphId &&
        atomic_load_explicit(&gt_cupti_queued_expected, memory_order_relaxed))
        atomic_store_explicit(&gt_cupti_queued_missing, true, memory_order_relaxed);
    out->submitted_ns = k->submitted == CUPTI_TIMESTAMP_UNKNOWN ? 0 : k->submitted;
    gt_record_commit(out);
}

static void put_memcpy(const CUpti_ActivityMemcpy6 *m)
{
    BEGIN(gt_rec_gpu_memcpy, GT_REC_GPU_MEMCPY);
    if (!out)
        return;
    out->start_ns = m->start;
    out->end_ns = m->end;
    out->corr_id = gt_cupti_corr(m->correlationId);
    out->bytes = m->bytes;
    out->graph_id = m->graphId;
    out->device = m->deviceId;
    out->context = m->contextId;
    out->stream = m->streamId;
    out->src_device = out->dst_device = m->deviceId;
    out->copy_kind = m->copyKind;
    out->src_kind = mem_kind(m->srcKind);
    out->dst_kind = mem_kind(m->dstKind);
    out->is_async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
    gt_record_commit(out);
}

static void put_memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *m)
{
    BEGIN(gt_rec_gpu_memcpy, GT_REC_GPU_MEMCPY);
    if (!out)
        return;
    out->start_ns = m->start;
    out->end_ns = m->end;
    out->corr_id = gt_cupti_corr(m->correlationId);
    out->bytes = m->bytes;
    out->graph_id = m->graphId;
    out->device = m->deviceId;
    out->context = m->contextId;
    out->stream = m->streamId;
    out->src_device = m->srcDeviceId;
    out->dst_device = m->dstDeviceId;
    out->copy_kind = m->copyKind;
    out->src_kind = mem_kind(m->srcKind);
    out->dst_kind = mem_kind(m->dstKind);
    out->is_async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
    gt_record_commit(out);
}

static void put_memset(const CUpti_ActivityMemset4 *m)
{
    BEGIN(gt_rec_gpu_memset, GT_REC_GPU_MEMSET);
    if (!out)
        return;
    out->start_ns = m->start;
    out->end_ns = m->end;
    out->corr_id = gt_cupti_corr(m->correlationId);
    out->bytes = m->bytes;
    out->device = m->deviceId;
    out->context = m->contextId;
    out->stream = m->streamId;
    out->value = m->value;
    out->mem_kind = mem_kind(m->memoryKind);
    out->is_async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
    gt_record_commit(out);
}

static void put_sync(const CUpti_ActivitySynchronization2 *s)
{
    BEGIN(gt_rec_gpu_sync, GT_REC_GPU_SYNC);
    if (!out)
        return;
    out->start_ns = s->start;
    out->end_ns = s->end;
    out->corr_id = gt_cupti_corr(s->correlationId);
    out->event = s->cudaEventId;
    out->sync_type = (uint32_t)s->type;
    out->context = s->contextId;
    out->stream = s->streamId; /* CUPTI_SYNCHRONIZATION_INVALID_VALUE for context syncs */
    gt_record_commit(out);
}

static void put_ext_corr(const CUpti_ActivityExternalCorrelation *e)
{
    BEGIN(gt_rec_gpu_ext_corr, GT_REC_GPU_EXT_CORR);
    if (!out)
        return;
    out->external_id = e->externalId;
    out->corr_id = gt_cupti_corr(e->correlationId);
    out->ext_kind = (uint32_t)e->externalKind;
    gt_record_commit(out);
}

static void put_api(const CUpti_ActivityAPI *a)
{
    BEGIN(gt_rec_gpu_api, GT_REC_GPU_API);
    if (!out)
        return;
    out->start_ns = a->start;
    out->end_ns = a->end;
    out->corr_id = gt_cupti_corr(a->correlationId);
    out->cbid = a->cbid;
    out->domain = (uint32_t)a->kind;
    out->tid = a->threadId;
    out->result = (int32_t)a->returnValue;
    gt_record_commit(out);
}

/* CUPTI documents end as meaningless for these kinds: they are instants. */
static bool um_is_instant(uint32_t kind)
{
    return kind == GT_UM_CPU_FAULT || kind == GT_UM_THRASHING || kind == GT_UM_REMOTE_MAP;
}

static void put_um(const CUpti_ActivityUnifiedMemoryCounter3 *u)
{
    BEGIN(gt_rec_gpu_um, GT_REC_GPU_UM);
    if (!out)
        return;
    out->um_kind = (uint32_t)u->counterKind;
    out->start_ns = u->start;
    out->end_ns = um_is_instant(out->um_kind) || u->end < u->start ? 0 : u->end;
    out->address = u->address;
    out->value = u->value;
    out->src_id = u->srcId;
    out->dst_id = u->dstId;
    out->flags = u->flags;
    gt_record_commit(out);
}

static void convert_record(const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        atomic_store_explicit(&gt_cupti_kernels_seen, true, memory_order_relaxed);
        put_kernel((const CUpti_ActivityKernel10 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        put_memcpy((const CUpti_ActivityMemcpy6 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        put_memcpy_p2p((const CUpti_ActivityMemcpyPtoP4 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        put_memset((const CUpti_ActivityMemset4 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        put_sync((const CUpti_ActivitySynchronization2 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        put_ext_corr((const CUpti_ActivityExternalCorrelation *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
        put_api((const CUpti_ActivityAPI *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
        put_um((const CUpti_ActivityUnifiedMemoryCounter3 *)rec);
        break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const CUpti_ActivityOverhead3 *o = (const CUpti_ActivityOverhead3 *)rec;
        if (o->end > o->start)
            atomic_fetch_add(&stat_overhead, o->end - o->start);
        return;
    }
    default:
        return;
    }
    atomic_fetch_add(&stat_converted, 1);
}

static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                         size_t size, size_t valid)
{
    (void)size;
    /* CUPTI's own worker thread: keep whatever it does out of the trace. A thread that called
     * FlushAll itself (the writer, or the exiting application thread) stays as it is. */
    if (!gt_cupti_tl_we_flush && !tl_marked_internal) {
        gt_guard_mark_internal_thread();
        tl_marked_internal = true;
    }
    if (buffer && valid > 0) {
        atomic_store_explicit(&gt_cupti_records_seen, true, memory_order_relaxed);
        CUpti_Activity *rec = NULL;
        while (gt_cupti.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
            convert_record(rec);
    }
    size_t dropped = 0;
    if (gt_cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&stat_dropped, dropped);
    if (buffer) {
        atomic_fetch_add(&stat_completed, 1);
        give_back(buffer);
    }
}

CUptiResult gt_cupti_register_buffers(void)
{
    return GT_CUPTI_CALL(
        gt_cupti.ActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed));
}

/* ---------------------------------------------------------------- statistics */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_dropped, last_refused, last_completed, last_converted, last_t_ns;

void gt_cupti_write_stats(bool force)
{
    size_t dropped = 0; /* records dropped outside any buffer callback */
    if (gt_cupti.ActivityGetNumDroppedRecords && gt_cupti_is_attached() &&
        gt_cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&stat_dropped, dropped);

    pthread_mutex_lock(&stats_lock);
    uint64_t now = gt_now_ns();
    gt_rec_cupti_stats st = {
        .t_ns = now,
        .dropped_records = atomic_load(&stat_dropped),
        .buffers_completed = atomic_load(&stat_completed),
        .buffers_refused = atomic_load(&stat_refused),
        .records_converted = atomic_load(&stat_converted),
        .overhead_ns = atomic_load(&stat_overhead),
    };
    if (st.dropped_records > last_dropped) {
        gt_rec_lost lost = {
            .count = st.dropped_records - last_dropped,
            .t_first_ns = last_t_ns ? last_t_ns : now,
            .t_last_ns = now,
            .reason = st.buffers_refused > last_refused ? GT_LOST_CUPTI_CAP : GT_LOST_CUPTI_DROPPED,
        };
        gt_record_write(GT_REC_LOST, 0, &lost, sizeof lost);
    }
    bool changed = st.dropped_records != last_dropped || st.buffers_refused != last_refused ||
                   st.buffers_completed != last_completed || st.records_converted != last_converted;
    if (changed || force)
        gt_record_write(GT_REC_CUPTI_STATS, 0, &st, sizeof st);
    last_dropped = st.dropped_records;
    last_refused = st.buffers_refused;
    last_completed = st.buffers_completed;
    last_converted = st.records_converted;
    last_t_ns = now;
    pthread_mutex_unlock(&stats_lock);
}

/* After fork only the forking thread exists: the locks may be held by threads that are gone. */
void gt_cupti_records_reset_after_fork(void)
{
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&name_lock, NULL);
    pthread_mutex_init(&stats_lock, NULL);
}
