/* cupti_floor.c — the least a CUPTI kernel tracer can do, to measure what CUPTI itself costs
 * (issue 18 item 2): a CUDA injection library (CUDA_INJECTION64_PATH=libcupti_floor.so) that
 * registers buffers, enables the kernel kind and counts the records it gets back. Nothing of
 * gputrace runs, so a launch loop under it shows the floor that gputrace's own kernel recording
 * is measured against (tools/bench/launch_overhead.py, configs floor_*).
 *
 * Environment:
 *   CUPTI_FLOOR_LIB        the libcupti to load when the process has none mapped yet
 *   CUPTI_FLOOR_KINDS      "kernel" (default) or "none" (buffers registered, no kind)
 *   CUPTI_FLOOR_OFF_MS     after this many ms, disable the kind (and flush)
 *   CUPTI_FLOOR_FINALIZE   1: after disabling, also detach CUPTI (cuptiFinalize)
 * At exit it prints "cupti_floor: N records, M dropped" on stderr. */

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FLOOR_BUFFER_BYTES (4u << 20)

typedef CUptiResult (*register_fn)(CUpti_BuffersCallbackRequestFunc,
                                   CUpti_BuffersCallbackCompleteFunc);
typedef CUptiResult (*kind_fn)(CUpti_ActivityKind);
typedef CUptiResult (*flush_fn)(uint32_t);
typedef CUptiResult (*next_fn)(uint8_t *, size_t, CUpti_Activity **);
typedef CUptiResult (*dropped_fn)(CUcontext, uint32_t, size_t *);
typedef CUptiResult (*finalize_fn)(void);

static struct {
    register_fn register_callbacks;
    kind_fn enable, disable;
    flush_fn flush_all;
    next_fn next_record;
    dropped_fn dropped;
    finalize_fn finalize;
} cupti;

static atomic_ullong records_seen, records_dropped;
static atomic_bool detached;

static void CUPTIAPI on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = aligned_alloc(8, FLOOR_BUFFER_BYTES);
    *size = *buffer ? FLOOR_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid)
{
    CUpti_Activity *rec = NULL;
    unsigned long long n = 0;
    while (valid && cupti.next_record(buffer, valid, &rec) == CUPTI_SUCCESS)
        n++;
    atomic_fetch_add(&records_seen, n);
    size_t dropped = 0;
    if (cupti.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
        atomic_fetch_add(&records_dropped, dropped);
    (void)size;
    free(buffer);
}

static void *open_cupti(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    const char *path = getenv("CUPTI_FLOOR_LIB");
    if (!h && path && path[0])
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    return h;
}

static int resolve(void *h)
{
    cupti.register_callbacks = (register_fn)dlsym(h, "cuptiActivityRegisterCallbacks");
    cupti.enable = (kind_fn)dlsym(h, "cuptiActivityEnable");
    cupti.disable = (kind_fn)dlsym(h, "cuptiActivityDisable");
    cupti.flush_all = (flush_fn)dlsym(h, "cuptiActivityFlushAll");
    cupti.next_record = (next_fn)dlsym(h, "cuptiActivityGetNextRecord");
    cupti.dropped = (dropped_fn)dlsym(h, "cuptiActivityGetNumDroppedRecords");
    cupti.finalize = (finalize_fn)dlsym(h, "cuptiFinalize");
    return cupti.register_callbacks && cupti.enable && cupti.disable && cupti.flush_all &&
           cupti.next_record && cupti.dropped && cupti.finalize;
}

static void print_counts(void)
{
    if (cupti.flush_all && !atomic_load(&detached))
        cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "cupti_floor: %llu records, %llu dropped\n",
            (unsigned long long)atomic_load(&records_seen),
            (unsigned long long)atomic_load(&records_dropped));
}

/* Switching the kind off later shows whether a disabled kind leaves CUPTI's per-launch work
 * behind, and detaching whether cuptiFinalize removes it. */
static void *switch_off_later(void *arg)
{
    long ms = (long)(intptr_t)arg;
    usleep((useconds_t)ms * 1000);
    cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    const char *fin = getenv("CUPTI_FLOOR_FINALIZE");
    if (fin && fin[0] == '1') {
        atomic_store(&detached, true);
        CUptiResult r = cupti.finalize();
        fprintf(stderr, "cupti_floor: finalized after %ld ms (%d)\n", ms, (int)r);
    } else {
        fprintf(stderr, "cupti_floor: kind disabled after %ld ms\n", ms);
    }
    return NULL;
}

int InitializeInjection(void)
{
    void *h = open_cupti();
    if (!h || !resolve(h)) {
        fprintf(stderr, "cupti_floor: no usable libcupti (set CUPTI_FLOOR_LIB)\n");
        return 1;
    }
    if (cupti.register_callbacks(on_buffer_request, on_buffer_complete) != CUPTI_SUCCESS)
        return 1;
    const char *kinds = getenv("CUPTI_FLOOR_KINDS");
    if (!kinds || strcmp(kinds, "none") != 0) {
        CUptiResult r = cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        if (r != CUPTI_SUCCESS)
            fprintf(stderr, "cupti_floor: cuptiActivityEnable failed (%d)\n", (int)r);
    }
    atexit(print_counts);
    const char *off = getenv("CUPTI_FLOOR_OFF_MS");
    if (off && off[0]) {
        pthread_t t;
        if (pthread_create(&t, NULL, switch_off_later, (void *)(intptr_t)atol(off)) == 0)
            pthread_detach(t);
    }
    return 1;
}
