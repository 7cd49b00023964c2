/* wrap_pinned.c — is a host pointer pinned, pageable or managed?
 *
 * Our own table of page-locked and managed ranges (from cudaHostAlloc, cudaMallocHost,
 * cudaHostRegister, cudaMallocManaged; removed on free/unregister) answers first: a read-mostly array
 * scanned without locks (writers take a mutex among themselves; readers see a slot's end before its
 * base, so a half-written slot is never matched). Pointers not in the table (memory pinned before
 * we were loaded, by a library we do not see, or plain malloc) are asked of the real
 * cudaPointerGetAttributes once per 64 KiB region, cached in a small direct-mapped table that any
 * change of the pinned table clears. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <string.h>

#include "gt_wrap.h"

#define PINNED_SLOTS 4096
#define CACHE_SLOTS 1024
#define CACHE_SHIFT 16 /* 64 KiB regions */

typedef struct pinned_slot {
    _Atomic uint64_t base; /* 0: free */
    _Atomic uint64_t end;
    _Atomic uint8_t kind;
} pinned_slot;

static pinned_slot slots[PINNED_SLOTS];
static _Atomic uint32_t slots_high; /* slots [0, high) may be in use */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool table_full_warned;

/* Cache entry: region number << 3 | kind | 4 (the 4 marks "valid"), 0 = empty. */
static _Atomic uint64_t attr_cache[CACHE_SLOTS];
static gt_sym sym_pointer_attrs = GT_SYM_INIT("cudaPointerGetAttributes", GT_LIB_CUDART);

void gt_classify_forget(void) {
    for (int i = 0; i < CACHE_SLOTS; i++) atomic_store_explicit(&attr_cache[i], 0, memory_order_relaxed);
}

void gt_pinned_add(uint64_t base, uint64_t bytes, uint8_t kind) {
    if (!base || !bytes) return;
    pthread_mutex_lock(&slots_lock);
    uint32_t high = atomic_load_explicit(&slots_high, memory_order_relaxed);
    uint32_t i = 0;
    while (i < high && atomic_load_explicit(&slots[i].base, memory_order_relaxed)) i++;
    if (i < PINNED_SLOTS) {
        atomic_store_explicit(&slots[i].kind, kind, memory_order_relaxed);
        atomic_store_explicit(&slots[i].end, base + bytes, memory_order_relaxed);
        atomic_store_explicit(&slots[i].base, base, memory_order_release);
        if (i == high) atomic_store_explicit(&slots_high, high + 1, memory_order_release);
    }
    pthread_mutex_unlock(&slots_lock);
    if (i >= PINNED_SLOTS && !atomic_exchange(&table_full_warned, true))
        gt_warn("more than %d pinned host ranges: later ones are classified by the CUDA runtime",
                PINNED_SLOTS);
    gt_classify_forget();
}

uint64_t gt_pinned_remove(uint64_t base) {
    uint64_t bytes = 0;
    if (!base) return 0;
    pthread_mutex_lock(&slots_lock);
    uint32_t high = atomic_load_explicit(&slots_high, memory_order_relaxed);
    for (uint32_t i = 0; i < high; i++) {
        if (atomic_load_explicit(&slots[i].base, memory_order_relaxed) == base) {
            bytes = atomic_load_explicit(&slots[i].end, memory_order_relaxed) - base;
            atomic_store_explicit(&slots[i].base, 0, memory_order_release);
            break;
        }
    }
    pthread_mutex_unlock(&slots_lock);
    gt_classify_forget();
    return bytes;
}

static uint8_t table_lookup(uint64_t p) {
    uint32_t high = atomic_load_explicit(&slots_high, memory_order_acquire);
    for (uint32_t i = 0; i < high; i++) {
        uint64_t b = atomic_load_explicit(&slots[i].base, memory_order_acquire);
        if (b && p >= b && p < atomic_load_explicit(&slots[i].end, memory_order_relaxed))
            return atomic_load_explicit(&slots[i].kind, memory_order_relaxed);
    }
    return GT_MEM_UNKNOWN;
}

static uint8_t ask_runtime(const void *p) {
    typedef cudaError_t (*fn_t)(struct cudaPointerAttributes *, const void *);
    fn_t real = (fn_t)gt_sym_get(&sym_pointer_attrs);
    if (!real) return GT_MEM_UNKNOWN;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    if (real(&a, p) != cudaSuccess) return GT_MEM_PAGEABLE; /* CUDA < 11 said "invalid" for malloc */
    switch (a.type) {
    case cudaMemoryTypeHost: return GT_MEM_PINNED;
    case cudaMemoryTypeDevice: return GT_MEM_DEVICE;
    case cudaMemoryTypeManaged: return GT_MEM_MANAGED;
    default: return GT_MEM_PAGEABLE;
    }
}

uint8_t gt_classify_ptr(const void *ptr) {
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!p) return GT_MEM_UNKNOWN;
    uint8_t k = table_lookup(p);
    if (k) return k;
    uint64_t region = p >> CACHE_SHIFT;
    uint32_t slot = (uint32_t)((region * 0x9E3779B97F4A7C15ull) >> 54) % CACHE_SLOTS;
    uint64_t e = atomic_load_explicit(&attr_cache[slot], memory_order_relaxed);
    if (e && (e >> 3) == region) return (uint8_t)(e & 3);
    k = ask_runtime(ptr);
    /* Regions straddling a pinned and a pageable block would be cached wrong; pinned blocks of our
     * table never get here, and what the runtime pins on its own is page-aligned large blocks. */
    if (k != GT_MEM_UNKNOWN && k != GT_MEM_MANAGED && k <= 3)
        atomic_store_explicit(&attr_cache[slot], (region << 3) | 4u | k, memory_order_relaxed);
    return k;
}
