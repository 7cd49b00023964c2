/* wrap_pinned.c — is a host pointer pinned, pageable or managed?
 *
 * Our own table of page-locked and managed ranges (from cudaHostAlloc, cudaMallocHost,
 * cudaHostRegister, cudaMallocManaged; removed on free/unregister) answers first. It is an array
 * sorted by base address, searched by bisection without a lock: writers (rare: allocations and
 * frees) take a mutex among themselves and bump a sequence number around each change (odd while
 * changing); a reader that saw the number move or odd searches again. Every field is an atomic,
 * so a reader racing a writer reads stale values, never torn ones, and then retries.
 * Pointers not in the table (memory pinned before we were loaded, by a library we do not see, or
 * plain malloc) are asked of the real cudaPointerGetAttributes once per 64 KiB region, cached in a
 * small direct-mapped table that any change of the pinned table clears. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <string.h>

#include "gt_wrap.h"

#define PINNED_SLOTS 4096
#define CACHE_SLOTS 1024
#define CACHE_SHIFT 16 /* 64 KiB regions */

typedef struct pinned_range {
    _Atomic uint64_t base;
    _Atomic uint64_t end;
    _Atomic uint8_t kind;
} pinned_range;

static pinned_range ranges[PINNED_SLOTS]; /* [0, count) sorted by base */
static _Atomic uint32_t count;
static _Atomic uint64_t seq; /* odd while a writer changes the array */
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool table_full_warned;

/* Cache entry: region number << 3 | kind | 4 (the 4 marks "valid"), 0 = empty. */
static _Atomic uint64_t attr_cache[CACHE_SLOTS];
static gt_sym sym_pointer_attrs = GT_SYM_INIT("cudaPointerGetAttributes", GT_LIB_CUDART);

void gt_classify_forget(void)
{
    for (int i = 0; i < CACHE_SLOTS; i++)
        atomic_store_explicit(&attr_cache[i], 0, memory_order_relaxed);
}

#define LOAD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define STORE(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

static void range_copy(uint32_t to, uint32_t from)
{
    STORE(ranges[to].base, LOAD(ranges[from].base));
    STORE(ranges[to].end, LOAD(ranges[from].end));
    STORE(ranges[to].kind, LOAD(ranges[from].kind));
}

/* Writers: under ranges_lock, between write_begin and write_end. */
static void write_begin(void)
{
    atomic_store_explicit(&seq, LOAD(seq) + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* odd seq visible before any change */
}
static void write_end(void)
{
    atomic_store_explicit(&seq, LOAD(seq) + 1, memory_order_release);
}

/* First index whose base is > p (under the lock or inside a read section). */
static uint32_t upper_bound(uint64_t p, uint32_t n)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (LOAD(ranges[mid].base) <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void gt_pinned_add(uint64_t base, uint64_t bytes, uint8_t kind)
{
    if (!base || !bytes)
        return;
    pthread_mutex_lock(&ranges_lock);
    uint32_t n = LOAD(count);
    bool stored = n < PINNED_SLOTS;
    if (stored) {
        uint32_t at = upper_bound(base, n);
        if (at > 0 && LOAD(ranges[at - 1].base) == base)
            at--; /* re-registered: replace */
        bool replace = at < n && LOAD(ranges[at].base) == base;
        write_begin();
        if (!replace) {
            for (uint32_t i = n; i > at; i--)
                range_copy(i, i - 1);
            STORE(count, n + 1);
        }
        STORE(ranges[at].base, base);
        STORE(ranges[at].end, base + bytes);
        STORE(ranges[at].kind, kind);
        write_end();
    }
    pthread_mutex_unlock(&ranges_lock);
    if (!stored && !atomic_exchange(&table_full_warned, true))
        gt_warn("more than %d pinned host ranges: later ones are classified by the CUDA runtime",
                PINNED_SLOTS);
    gt_classify_forget();
}

uint64_t gt_pinned_remove(uint64_t base)
{
    uint64_t bytes = 0;
    if (!base)
        return 0;
    pthread_mutex_lock(&ranges_lock);
    uint32_t n = LOAD(count), at = upper_bound(base, n);
    if (at > 0 && LOAD(ranges[at - 1].base) == base) {
        at--;
        bytes = LOAD(ranges[at].end) - base;
        write_begin();
        for (uint32_t i = at; i + 1 < n; i++)
            range_copy(i, i + 1);
        STORE(count, n - 1);
        write_end();
    }
    pthread_mutex_unlock(&ranges_lock);
    gt_classify_forget();
    return bytes;
}

/* This thread's last hit: a program copies from the same few staging buffers over and over. It
 * holds while seq has not moved (no range was added or removed since). */
static __thread struct {
    uint64_t seq, base, end;
    uint8_t kind;
} last_hit __attribute__((tls_model("initial-exec")));

/* The kind of the range holding p, or GT_MEM_UNKNOWN. Lock-free: O(log n) plus a retry when a
 * writer moved the array meanwhile. */
static uint8_t table_lookup(uint64_t p)
{
    uint64_t s0 = atomic_load_explicit(&seq, memory_order_acquire);
    if (s0 == last_hit.seq && p >= last_hit.base && p < last_hit.end)
        return last_hit.kind;
    for (;; s0 = atomic_load_explicit(&seq, memory_order_acquire)) {
        if (s0 & 1)
            continue;
        uint32_t n = LOAD(count), at = upper_bound(p, n < PINNED_SLOTS ? n : PINNED_SLOTS);
        uint64_t base = 0, end = 0;
        uint8_t k = GT_MEM_UNKNOWN;
        if (at > 0) {
            base = LOAD(ranges[at - 1].base);
            end = LOAD(ranges[at - 1].end);
            k = LOAD(ranges[at - 1].kind);
        }
        atomic_thread_fence(memory_order_acquire); /* the reads above before the re-check */
        if (LOAD(seq) != s0)
            continue;
        if (p >= end)
            return GT_MEM_UNKNOWN;
        last_hit.seq = s0, last_hit.base = base, last_hit.end = end, last_hit.kind = k;
        return k;
    }
}

static uint8_t ask_runtime(const void *p)
{
    typedef cudaError_t (*fn_t)(struct cudaPointerAttributes *, const void *);
    fn_t real = (fn_t)gt_sym_get(&sym_pointer_attrs);
    if (!real)
        return GT_MEM_UNKNOWN;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    if (real(&a, p) != cudaSuccess)
        return GT_MEM_PAGEABLE; /* CUDA < 11 said "invalid" for malloc */
    switch (a.type) {
    case cudaMemoryTypeHost:
        return GT_MEM_PINNED;
    case cudaMemoryTypeDevice:
        return GT_MEM_DEVICE;
    case cudaMemoryTypeManaged:
        return GT_MEM_MANAGED;
    default:
        return GT_MEM_PAGEABLE;
    }
}

uint8_t gt_classify_ptr(const void *ptr)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!p)
        return GT_MEM_UNKNOWN;
    uint8_t k = table_lookup(p);
    if (k)
        return k;
    uint64_t region = p >> CACHE_SHIFT;
    uint32_t slot = (uint32_t)((region * 0x9E3779B97F4A7C15ull) >> 54) % CACHE_SLOTS;
    uint64_t e = atomic_load_explicit(&attr_cache[slot], memory_order_relaxed);
    if (e && (e >> 3) == region)
        return (uint8_t)(e & 3);
    k = ask_runtime(ptr);
    /* Regions straddling a pinned and a pageable block would be cached wrong; pinned blocks of our
     * table never get here, and what the runtime pins on its own is page-aligned large blocks. */
    if (k != GT_MEM_UNKNOWN && k != GT_MEM_MANAGED && k <= 3)
        atomic_store_explicit(&attr_cache[slot], (region << 3) | 4u | k, memory_order_relaxed);
    return k;
}
