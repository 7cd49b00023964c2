/* stacks.c — call-site capture (issue 8): native frames, Python frames, the stack table and the
 * module map that lets the analyzer symbolize offline.
 *
 * Hot path (gt_stack_capture): one unwind, one hash, one probe of a lock-free table; a record is
 * written only the first time a stack is seen. No malloc, no stdio, no lock.
 *
 * Unwinders, best first:
 *   - unw_backtrace from libunwind.so.8, loaded with dlopen on first use so that libgputrace.so
 *     still loads where libunwind is absent (the GPU machine, most users' machines);
 *   - our own DWARF CFI unwinder with a per-pc rule cache (stacks_unwind.c), when libunwind is
 *     absent; a capture whose frames it cannot read goes to
 *   - glibc backtrace() (libgcc's DWARF unwinder, about 5 us at depth 24), called once at init
 *     because its first call dlopens libgcc_s and allocates.
 * GPUTRACE_STACK_UNWINDER=libunwind|cfi|backtrace forces one (tests and the benchmark use it).
 *
 * New modules are found without wrapping dlopen: wrapping it would make libgputrace.so the caller
 * of every dlopen, and glibc resolves $ORIGIN/RUNPATH from the caller, which breaks libraries
 * (cuDNN, torch) that dlopen their siblings by name. Instead each capture asks the loader for its
 * load/unload counters (dl_iterate_phdr stopped after the first module: a lock and one callback)
 * and rescans when they moved. */
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_core.h"
#include "gt_stacks.h"
#include "stacks_internal.h"

#define GT_STACK_MAX_DEPTH 128  /* cap on GPUTRACE_STACK_DEPTH */
#define GT_STACK_SKIP_BUDGET 16 /* frames of our own that may sit above the caller */
#define GT_STACK_SLOTS 65536u   /* distinct stacks per process (power of two) */
#define GT_STACK_PROBES 64
#define GT_MODULES_MAX 2048
#define GT_MODULE_PATH_MAX 512

/* ---------------------------------------------------------------- state */

typedef int (*unwind_fn)(void **pcs, int max);

static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static _Atomic int g_ready;            /* init finished and stacks are on */
static int g_mode;                     /* gt_config.stacks_mode */
static int g_depth;                    /* clamped GPUTRACE_STACK_DEPTH */
static unwind_fn g_unwind;             /* NULL: no unwinder */
static bool g_python = true;           /* GPUTRACE_STACK_PYTHON=0 turns the Python frames off */
static uintptr_t g_self_lo, g_self_hi; /* libgputrace.so's text: frames to skip */

typedef struct stack_slot {
    _Atomic uint64_t hash;  /* 0 = free */
    _Atomic uint32_t id;    /* 0 while the inserting thread is assigning it */
    _Atomic uint32_t state; /* 0 = record not written, 1 = being written, 2 = written */
} stack_slot;
static stack_slot g_slots[GT_STACK_SLOTS];
static _Atomic uint32_t g_next_stack_id = 1;
static _Atomic uint64_t g_table_full; /* captures that found no free slot (returned 0) */

typedef struct noted_module {
    uint64_t base;
    uint64_t size;
    uint64_t name_hash;
} noted_module;
typedef struct pending_module {
    uint64_t base;
    uint64_t size;
    uint64_t name_hash;
    uint32_t build_id_len;
    uint8_t build_id[32];
    char path[GT_MODULE_PATH_MAX];
} pending_module;

static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static noted_module g_noted[GT_MODULES_MAX];
static int g_noted_count;
static pending_module g_pending[64]; /* one scan batch, under g_mod_lock */
static int g_pending_count;
static bool g_pending_overflow;
/* The call-site cache: a cheap key (the first GT_SITE_NATIVE native frames above our own through
 * the CFI rule cache, plus the identity of the Python frames) -> the stack id of a full capture
 * made earlier with that key. A training step captures the same few hundred call sites every
 * step; a hit skips the deep native unwind, the Python names and lines, and the hashing of the
 * whole stack. Two words per slot, checked against each other: a torn or racing write is a miss. */
#define GT_SITE_SLOTS 16384u /* power of two */
#define GT_SITE_NATIVE 8
typedef struct site_slot {
    _Atomic uint64_t key;
    _Atomic uint64_t val; /* stack id in the low 32 bits, the key's high 32 bits above */
} site_slot;
static site_slot g_sites[GT_SITE_SLOTS];
static _Atomic uint64_t g_site_hits, g_site_misses;
static bool g_site_cache = true; /* GPUTRACE_STACK_CACHE=0 turns it off (tests, benchmark) */

static _Atomic uint64_t g_seen_adds; /* dlpi_adds/dlpi_subs at the last complete scan */
static _Atomic uint64_t g_seen_subs;

/* ---------------------------------------------------------------- hashing */

/* Combines one more word into a running hash. Not the analyzer's mix64 (a one-word finalizer,
 * analyzer/): the injected library links nothing of analyzer/ and keeps its few helpers here. */
static uint64_t mix64(uint64_t h, uint64_t w)
{
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 31);
}

static uint64_t hash_bytes(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ---------------------------------------------------------------- module map */

static void read_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) * ph, pending_module *m)
{
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
    const unsigned char *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
        size_t name_sz = (n->n_namesz + 3u) & ~3u;
        size_t desc_sz = (n->n_descsz + 3u) & ~3u;
        const unsigned char *name = p + sizeof *n;
        const unsigned char *desc = name + name_sz;
        if (desc + desc_sz > end)
            return;
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0) {
            m->build_id_len = n->n_descsz > sizeof m->build_id ? sizeof m->build_id : n->n_descsz;
            memcpy(m->build_id, desc, m->build_id_len);
            return;
        }
        p = desc + desc_sz;
    }
}

static bool module_already_noted(uint64_t base, uint64_t size, uint64_t name_hash)
{
    for (int i = 0; i < g_noted_count; i++)
        if (g_noted[i].base == base && g_noted[i].size == size && g_noted[i].name_hash == name_hash)
            return true;
    return false;
}

/* Runs with the loader's lock held: copies what it needs and calls nothing of ours that could
 * take a lock or write a record. */
static int collect_module(struct dl_phdr_info *info, size_t info_size, void *first_flag)
{
    (void)info_size;
    bool *first = first_flag;
    bool is_main = *first;
    *first = false;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    if (strstr(name, "linux-vdso") || info->dlpi_phnum == 0)
        return 0;
    uint64_t hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > hi)
            hi = ph->p_vaddr + ph->p_memsz;
    }
    if (hi == 0)
        return 0;
    char exe[GT_MODULE_PATH_MAX];
    if (name[0] == '\0') {
        if (!is_main)
            return 0;
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (n <= 0)
            return 0;
        exe[n] = '\0';
        name = exe;
    }
    uint64_t base = info->dlpi_addr;
    uint64_t name_hash = hash_bytes(name);
    if (module_already_noted(base, hi, name_hash))
        return 0;
    if (g_pending_count == (int)(sizeof g_pending / sizeof g_pending[0])) {
        g_pending_overflow = true;
        return 0;
    }
    pending_module *m = &g_pending[g_pending_count++];
    memset(m, 0, sizeof *m);
    m->base = base;
    m->size = hi;
    m->name_hash = name_hash;
    size_t len = strnlen(name, sizeof m->path - 1);
    memcpy(m->path, name, len);
    m->path[len] = '\0';
    for (const ElfW(Phdr) *ph = info->dlpi_phdr; ph < info->dlpi_phdr + info->dlpi_phnum; ph++)
        if (ph->p_type == PT_NOTE && m->build_id_len == 0)
            read_build_id(info, ph, m);
    return 0;
}

static bool write_module_record(const pending_module *m)
{
    uint32_t path_id = gt_intern(m->path);
    if (path_id == 0)
        return false;
    gt_rec_module *rec = gt_record_begin(GT_REC_MODULE, 0, sizeof *rec);
    if (!rec)
        return false;
    rec->base = m->base;
    rec->size = m->size;
    rec->path_id = path_id;
    rec->build_id_len = m->build_id_len;
    memcpy(rec->build_id, m->build_id, sizeof rec->build_id);
    gt_record_commit(rec);
    return true;
}

typedef struct loader_counts {
    uint64_t adds;
    uint64_t subs;
} loader_counts;

static int read_loader_counts(struct dl_phdr_info *info, size_t info_size, void *arg)
{
    loader_counts *c = arg;
    if (info_size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    return 1; /* the counters are the same on every entry: stop after the first */
}

/* Writes GT_REC_MODULE for every module not written yet. Cold: at the first capture and when the
 * loader's counters moved. Safe to call from any application thread. */
GT_EXPORT void gt_stacks_note_modules(void)
{
    loader_counts before = {0, 0};
    dl_iterate_phdr(read_loader_counts, &before);
    pthread_mutex_lock(&g_mod_lock);
    bool complete = true;
    do {
        g_pending_count = 0;
        g_pending_overflow = false;
        bool first = true;
        dl_iterate_phdr(collect_module, &first);
        for (int i = 0; i < g_pending_count; i++) {
            const pending_module *m = &g_pending[i];
            if (g_noted_count == GT_MODULES_MAX || !write_module_record(m)) {
                complete = false; /* retried at the next capture */
                continue;
            }
            g_noted[g_noted_count++] = (noted_module){m->base, m->size, m->name_hash};
        }
    } while (g_pending_overflow && complete);
    pthread_mutex_unlock(&g_mod_lock);
    if (complete) {
        atomic_store_explicit(&g_seen_adds, before.adds, memory_order_relaxed);
        atomic_store_explicit(&g_seen_subs, before.subs, memory_order_relaxed);
    }
}

static void note_modules_if_loader_changed(void)
{
    loader_counts now = {0, 0};
    dl_iterate_phdr(read_loader_counts, &now);
    if (now.adds != atomic_load_explicit(&g_seen_adds, memory_order_relaxed) ||
        now.subs != atomic_load_explicit(&g_seen_subs, memory_order_relaxed)) {
        if (now.subs != atomic_load_explicit(&g_seen_subs, memory_order_relaxed))
            memset(g_sites, 0, sizeof g_sites); /* an unloaded module's pcs may be reused */
        gt_stacks_note_modules();
        if (g_python)
            gt_py_resolve(); /* a dlopen may have brought libpython in */
    }
}

/* ---------------------------------------------------------------- init */

static int unwind_with_backtrace(void **pcs, int max)
{
    return backtrace(pcs, max);
}

static int unwind_with_cfi_only(void **pcs, int max) /* tests: no fallback hiding a failure */
{
    int n = gt_unwind_cfi(pcs, max);
    return n >= 0 ? n : 0;
}

static int unwind_with_cfi(void **pcs, int max)
{
    int n = gt_unwind_cfi(pcs, max);
    return n >= 0 ? n : backtrace(pcs, max);
}

static int (*g_unw_backtrace)(void **pcs, int max);

static int unwind_with_libunwind(void **pcs, int max)
{
    int n = g_unw_backtrace(pcs, max);
    if (n > 0)
        return n;
    n = gt_unwind_cfi(pcs, max); /* libunwind could not start (it needs a pipe, for one) */
    return n > 0 ? n : backtrace(pcs, max);
}

static void choose_unwinder(void)
{
    const char *want = getenv("GPUTRACE_STACK_UNWINDER");
    if (want && (want[0] == '\0' || strcmp(want, "auto") == 0))
        want = NULL;
    if (want && strcmp(want, "libunwind") != 0 && strcmp(want, "cfi") != 0 &&
        strcmp(want, "cfi-only") != 0 && strcmp(want, "backtrace") != 0) {
        gt_warn("GPUTRACE_STACK_UNWINDER=%s is not auto, libunwind, cfi or backtrace; using auto",
                want);
        want = NULL;
    }
    bool libunwind_allowed = !want || strcmp(want, "libunwind") == 0;
    if (libunwind_allowed) {
        /* RTLD_LOCAL: its _Unwind_* must not replace libgcc's for the application. */
        void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
        if (h)
            *(void **)&g_unw_backtrace = dlsym(h, "unw_backtrace");
        if (g_unw_backtrace) {
            g_unwind = unwind_with_libunwind;
            gt_debug("stacks: native frames through libunwind");
            return;
        }
        if (want && strcmp(want, "libunwind") == 0)
            gt_warn("GPUTRACE_STACK_UNWINDER=libunwind but libunwind.so.8 could not be loaded; "
                    "using gputrace's own unwinder");
    }
    void *warm[4];
    backtrace(warm, 4); /* first call loads libgcc_s and allocates: do it here, not in a wrapper */
    if (want && strcmp(want, "backtrace") == 0) {
        g_unwind = unwind_with_backtrace;
        gt_debug("stacks: native frames through glibc backtrace()");
    } else if (want && strcmp(want, "cfi-only") == 0) {
        g_unwind = unwind_with_cfi_only;
    } else {
        g_unwind = unwind_with_cfi;
        gt_debug("stacks: native frames through gputrace's CFI unwinder");
    }
}

static void find_own_text(void)
{
    Dl_info di;
    if (dladdr((void *)&find_own_text, &di) == 0 || !di.dli_fbase)
        return;
    const ElfW(Ehdr) *eh = di.dli_fbase;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    uintptr_t bias = (uintptr_t)di.dli_fbase; /* our .so: first PT_LOAD has vaddr 0 */
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
            continue;
        if (bias + ph[i].p_vaddr < lo)
            lo = bias + ph[i].p_vaddr;
        if (bias + ph[i].p_vaddr + ph[i].p_memsz > hi)
            hi = bias + ph[i].p_vaddr + ph[i].p_memsz;
    }
    if (hi > lo) {
        g_self_lo = lo;
        g_self_hi = hi;
    }
}

static void forget_after_fork(void)
{
    /* The child writes a new file: every stack and module must be written again there. */
    memset(g_slots, 0, sizeof g_slots);
    memset(g_sites, 0, sizeof g_sites);
    atomic_store(&g_next_stack_id, 1);
    pthread_mutex_init(&g_mod_lock, NULL);
    g_noted_count = 0;
    atomic_store(&g_seen_adds, 0);
    atomic_store(&g_seen_subs, 0);
    gt_py_forget();
}

static void init_stacks(void)
{
    const gt_config *cfg = gt_core_config();
    g_mode = cfg ? cfg->stacks_mode : GT_STACKS_ADVICE;
    g_depth = cfg ? (int)cfg->stack_depth : 24;
    if (g_depth > GT_STACK_MAX_DEPTH) {
        gt_warn("GPUTRACE_STACK_DEPTH=%d: stacks keep at most %d frames; using %d", g_depth,
                GT_STACK_MAX_DEPTH, GT_STACK_MAX_DEPTH);
        g_depth = GT_STACK_MAX_DEPTH;
    }
    if (g_mode == 0 || g_depth <= 0)
        return;
    choose_unwinder();
    find_own_text();
    g_python = !cfg || cfg->stack_python != GT_STACK_PYTHON_OFF;
    gt_py_allow_without_gil(!cfg || cfg->stack_python != GT_STACK_PYTHON_GIL);
    g_site_cache = !cfg || cfg->stack_cache;
    if (g_python)
        gt_py_resolve();
    gt_core_on_fork_child(forget_after_fork);
    gt_stacks_note_modules();
    atomic_store_explicit(&g_ready, 1, memory_order_release);
}

/* ---------------------------------------------------------------- the stack table */

static stack_slot *find_or_insert(uint64_t hash, bool *inserted)
{
    *inserted = false;
    for (uint32_t probe = 0; probe < GT_STACK_PROBES; probe++) {
        stack_slot *s = &g_slots[(hash + probe) & (GT_STACK_SLOTS - 1)];
        uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&s->hash, &expected, hash)) {
                atomic_store_explicit(&s->id, atomic_fetch_add(&g_next_stack_id, 1),
                                      memory_order_release);
                *inserted = true;
                return s;
            }
            cur = expected;
        }
        if (cur == hash)
            return s;
    }
    return NULL;
}

static uint32_t slot_id(stack_slot *s)
{
    uint32_t id;
    /* Another thread won the insert and is between its CAS and its fetch_add: a few cycles. */
    while ((id = atomic_load_explicit(&s->id, memory_order_acquire)) == 0)
        ;
    return id;
}

static void write_stack_record(stack_slot *s, uint32_t id, void *const *pcs, int n,
                               const gt_py_frame *py, int npy, bool truncated)
{
    uint32_t expected = 0;
    if (!atomic_compare_exchange_strong(&s->state, &expected, 1))
        return; /* written, or being written by another thread */
    uint32_t body = (uint32_t)(sizeof(gt_rec_stack) + (size_t)n * sizeof(uint64_t) +
                               (size_t)npy * sizeof(gt_py_frame));
    gt_rec_stack *rec = gt_record_begin(GT_REC_STACK, truncated ? GT_RF_TRUNCATED : 0, body);
    if (!rec) {
        atomic_store(&s->state, 0); /* buffer full: the next capture of this stack retries */
        return;
    }
    rec->stack_id = id;
    rec->depth = (uint32_t)n;
    rec->py_depth = (uint32_t)npy;
    uint64_t *out = (uint64_t *)(rec + 1);
    for (int i = 0; i < n; i++)
        out[i] = (uint64_t)(uintptr_t)pcs[i];
    if (npy)
        memcpy(out + n, py, (size_t)npy * sizeof *py);
    gt_record_commit(rec);
    atomic_store(&s->state, 2);
}

/* ---------------------------------------------------------------- capture */

/* The full capture: unwind, Python frames, hash, table. *written: its record is in the trace. */
static uint32_t capture_full(bool *written)
{
    *written = false;
    void *raw[GT_STACK_MAX_DEPTH + GT_STACK_SKIP_BUDGET + 1];
    int want = g_depth + GT_STACK_SKIP_BUDGET + 1;
    int n = g_unwind(raw, want);
    int skip = 0;
    while (skip < n && (uintptr_t)raw[skip] >= g_self_lo && (uintptr_t)raw[skip] < g_self_hi)
        skip++;
    void **pcs = raw + skip;
    n -= skip;
    bool truncated = n > g_depth;
    if (truncated)
        n = g_depth;

    gt_py_frame py[GT_STACK_MAX_DEPTH];
    bool py_truncated = false;
    int npy = g_python ? gt_py_capture(py, g_depth, &py_truncated) : 0;
    truncated = truncated || py_truncated;
    if (n <= 0 && npy <= 0)
        return 0;

    uint64_t h = mix64((uint64_t)n, (uint64_t)npy);
    for (int i = 0; i < n; i++)
        h = mix64(h, (uint64_t)(uintptr_t)pcs[i]);
    for (int i = 0; i < npy; i++)
        h = mix64(h, ((uint64_t)py[i].file_id << 32 | py[i].func_id) ^
                         ((uint64_t)(uint32_t)py[i].line << 17));
    if (h == 0)
        h = 1;
    bool inserted;
    stack_slot *s = find_or_insert(h, &inserted);
    if (!s) {
        atomic_fetch_add_explicit(&g_table_full, 1, memory_order_relaxed);
        return 0;
    }
    uint32_t id = slot_id(s);
    if (atomic_load_explicit(&s->state, memory_order_acquire) != 2)
        write_stack_record(s, id, pcs, n, py, npy, truncated);
    *written = atomic_load_explicit(&s->state, memory_order_acquire) == 2;
    return id;
}

/* The call-site key of this capture; false when it cannot be made cheaply (then no caching). */
static bool site_key(uint64_t *key)
{
    void *raw[GT_STACK_SKIP_BUDGET + GT_SITE_NATIVE + 1];
    int n = gt_unwind_cfi(raw, GT_STACK_SKIP_BUDGET + GT_SITE_NATIVE + 1);
    if (n <= 0)
        return false;
    int skip = 0;
    while (skip < n && (uintptr_t)raw[skip] >= g_self_lo && (uintptr_t)raw[skip] < g_self_hi)
        skip++;
    if (skip == n)
        return false;
    int end = skip + GT_SITE_NATIVE < n ? skip + GT_SITE_NATIVE : n;
    uint64_t h = mix64(0x5173u, (uint64_t)(end - skip));
    for (int i = skip; i < end; i++)
        h = mix64(h, (uint64_t)(uintptr_t)raw[i]);
    if (g_python && !gt_py_key(&h, g_depth))
        return false;
    *key = h ? h : 1;
    return true;
}

static site_slot *site_slot_of(uint64_t key)
{
    return &g_sites[(key ^ key >> 29) & (GT_SITE_SLOTS - 1)];
}

static uint32_t site_lookup(uint64_t key)
{
    site_slot *s = site_slot_of(key);
    uint64_t val = atomic_load_explicit(&s->val, memory_order_acquire);
    if (atomic_load_explicit(&s->key, memory_order_acquire) != key || (val >> 32) != (key >> 32))
        return 0;
    return (uint32_t)val;
}

static void site_store(uint64_t key, uint32_t id)
{
    site_slot *s = site_slot_of(key);
    atomic_store_explicit(&s->key, key, memory_order_release);
    atomic_store_explicit(&s->val, (key >> 32) << 32 | id, memory_order_release);
}

GT_EXPORT uint32_t gt_stack_capture(int reason)
{
    pthread_once(&g_init_once, init_stacks);
    if (!atomic_load_explicit(&g_ready, memory_order_acquire) || reason > g_mode || !g_unwind)
        return 0;
    note_modules_if_loader_changed();
    uint64_t key = 0;
    bool keyed = g_site_cache && site_key(&key);
    if (keyed) {
        uint32_t id = site_lookup(key);
        if (id) {
            atomic_fetch_add_explicit(&g_site_hits, 1, memory_order_relaxed);
            return id;
        }
        atomic_fetch_add_explicit(&g_site_misses, 1, memory_order_relaxed);
    }
    bool written;
    uint32_t id = capture_full(&written);
    if (keyed && id && written)
        site_store(key, id);
    return id;
}
