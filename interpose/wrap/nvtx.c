/* nvtx.c — NVTX v3 injection: the application's ranges and marks become GT_REC_NVTX records.
 *
 * NVTX v3 is header-only: the first NVTX call in a process dlopens the library named by
 * NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2(nvtxGetExportTable). We fill the
 * CORE and CORE2 callback tables with the functions below; NVTX then calls them directly. When this
 * library is preloaded, the dlopen returns the already-loaded copy, so one recording core serves
 * both. A constructor sets NVTX_INJECTION64_PATH to this library when it is unset, so a plain
 * `LD_PRELOAD=libgputrace.so python train.py` sees torch.cuda.nvtx ranges without more setup.
 *
 * Names: a registered string or domain handle IS its interned string id (the handle is opaque to
 * the application), so those cost nothing per call. Dynamic ASCII messages
 * (torch.cuda.nvtx.range_push passes a fresh Python string each time) go through a lock-free cache
 * keyed by the text's hash; past NAME_CACHE_CAP distinct texts every new one is recorded as "(many
 * names)" so a program that formats a unique message per call cannot grow the string table without
 * bound.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "gt_core.h"

#define NAME_CACHE_SLOTS 8192u /* power of two */
#define NAME_CACHE_CAP 4096u   /* distinct dynamic texts before "(many names)" */
#define MAX_NAME_LEN 256u      /* longer messages are cut (rare; keeps records small) */

/* ---------------------------------------------------------------- name cache */

typedef struct name_slot {
    _Atomic uint64_t hash; /* 0 = empty */
    _Atomic uint32_t id;   /* 0 = being filled */
} name_slot;

static name_slot name_cache[NAME_CACHE_SLOTS];
static _Atomic uint32_t name_cache_used;
static _Atomic uint32_t many_names_id;

static uint64_t text_hash(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    h ^= (uint64_t)len << 56;
    return h ? h : 1;
}

static uint32_t many_names(void)
{
    uint32_t id = atomic_load_explicit(&many_names_id, memory_order_acquire);
    if (!id) {
        id = gt_intern("(many names)");
        atomic_store_explicit(&many_names_id, id, memory_order_release);
    }
    return id;
}

/* The string id of a dynamic message: a hash-table hit costs one hash and a load. */
static uint32_t name_id_of(const char *s)
{
    if (!s)
        return 0;
    size_t len = strnlen(s, MAX_NAME_LEN);
    uint64_t h = text_hash(s, len);
    for (uint32_t probe = 0; probe < 32; probe++) {
        name_slot *slot = &name_cache[(h + probe) & (NAME_CACHE_SLOTS - 1)];
        uint64_t seen = atomic_load_explicit(&slot->hash, memory_order_acquire);
        if (seen == h) {
            uint32_t id = atomic_load_explicit(&slot->id, memory_order_acquire);
            return id ? id : gt_intern_n(s, len); /* another thread is filling it */
        }
        if (seen != 0)
            continue;
        if (atomic_load_explicit(&name_cache_used, memory_order_relaxed) >= NAME_CACHE_CAP)
            return many_names();
        uint64_t expected = 0;
        if (!atomic_compare_exchange_strong(&slot->hash, &expected, h)) {
            if (expected == h)
                probe--; /* someone claimed it for the same text: read it again */
            continue;
        }
        atomic_fetch_add_explicit(&name_cache_used, 1, memory_order_relaxed);
        uint32_t id = gt_intern_n(s, len);
        atomic_store_explicit(&slot->id, id, memory_order_release);
        return id;
    }
    return many_names();
}

/* A forked child writes its own file, which may not hold the parent's string records: forget the
 * cached ids so each text is interned again there. Only the forking thread exists here. */
static void forget_names_after_fork(void)
{
    for (uint32_t i = 0; i < NAME_CACHE_SLOTS; i++) {
        atomic_store_explicit(&name_cache[i].hash, 0, memory_order_relaxed);
        atomic_store_explicit(&name_cache[i].id, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&name_cache_used, 0, memory_order_relaxed);
    atomic_store_explicit(&many_names_id, 0, memory_order_relaxed);
}

/* Wide messages are rare (Windows habits); narrow them to ASCII, '?' for the rest. */
static uint32_t name_id_of_wide(const wchar_t *w)
{
    if (!w)
        return 0;
    char buf[MAX_NAME_LEN + 1];
    size_t n = 0;
    for (; n < MAX_NAME_LEN && w[n]; n++)
        buf[n] = (w[n] > 0 && w[n] < 128) ? (char)w[n] : '?';
    buf[n] = '\0';
    return name_id_of(buf);
}

static uint32_t handle_id(const void *handle)
{
    return (uint32_t)(uintptr_t)handle;
}

static uint32_t name_id_of_attributes(const nvtxEventAttributes_t *a)
{
    if (!a)
        return 0;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        return name_id_of(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
        return name_id_of_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
        return handle_id(a->message.registered);
    default:
        return 0;
    }
}

static uint32_t color_of(const nvtxEventAttributes_t *a)
{
    return (a && a->colorType == NVTX_COLOR_ARGB) ? a->color : 0;
}

/* ---------------------------------------------------------------- records */

static _Thread_local int push_depth; /* for the return values NVTX defines */
static _Atomic uint64_t next_range_id = 1;

static void record_nvtx(uint32_t kind, uint32_t name_id, uint32_t domain_id, uint32_t color,
                        uint64_t range_id)
{
    gt_rec_nvtx *rec = gt_record_begin(GT_REC_NVTX, 0, sizeof *rec);
    if (!rec)
        return;
    rec->t_ns = gt_now_ns();
    rec->range_id = range_id;
    rec->nvtx_kind = kind;
    rec->name_id = name_id;
    rec->domain_id = domain_id;
    rec->color = color;
    gt_record_commit(rec);
}

/* Every callback: record only as the outermost gputrace call on an application thread. The name
 * is interned inside the guard so gputrace's own lock never sees a nested recording. */
#define WITH_GUARD(stmt)                                                                           \
    do {                                                                                           \
        if (gt_guard_enter()) {                                                                    \
            stmt;                                                                                  \
            gt_guard_leave();                                                                      \
        }                                                                                          \
    } while (0)

static int push(uint32_t domain, uint32_t name_id_arg, const nvtxEventAttributes_t *a,
                const char *ascii)
{
    WITH_GUARD({
        uint32_t id = a ? name_id_of_attributes(a) : (ascii ? name_id_of(ascii) : name_id_arg);
        record_nvtx(GT_NVTX_PUSH, id, domain, color_of(a), 0);
    });
    return push_depth++;
}

static int pop(uint32_t domain)
{
    WITH_GUARD(record_nvtx(GT_NVTX_POP, 0, domain, 0, 0));
    if (push_depth <= 0)
        return -1;
    return --push_depth;
}

static void mark(uint32_t domain, const nvtxEventAttributes_t *a, const char *ascii)
{
    WITH_GUARD({
        uint32_t id = a ? name_id_of_attributes(a) : name_id_of(ascii);
        record_nvtx(GT_NVTX_MARK, id, domain, color_of(a), 0);
    });
}

static nvtxRangeId_t range_start(uint32_t domain, const nvtxEventAttributes_t *a, const char *ascii)
{
    uint64_t range = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
    WITH_GUARD({
        uint32_t id = a ? name_id_of_attributes(a) : name_id_of(ascii);
        record_nvtx(GT_NVTX_RANGE_START, id, domain, color_of(a), range);
    });
    return range;
}

static void range_end(uint32_t domain, nvtxRangeId_t range)
{
    WITH_GUARD(record_nvtx(GT_NVTX_RANGE_END, 0, domain, 0, range));
}

/* ---------------------------------------------------------------- CORE callbacks */

static void cb_mark_ex(const nvtxEventAttributes_t *a)
{
    mark(0, a, NULL);
}
static void cb_mark_a(const char *m)
{
    mark(0, NULL, m);
}
static void cb_mark_w(const wchar_t *m)
{
    WITH_GUARD(record_nvtx(GT_NVTX_MARK, name_id_of_wide(m), 0, 0, 0));
}
static nvtxRangeId_t cb_range_start_ex(const nvtxEventAttributes_t *a)
{
    return range_start(0, a, NULL);
}
static nvtxRangeId_t cb_range_start_a(const char *m)
{
    return range_start(0, NULL, m);
}
static nvtxRangeId_t cb_range_start_w(const wchar_t *m)
{
    uint64_t range = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
    WITH_GUARD(record_nvtx(GT_NVTX_RANGE_START, name_id_of_wide(m), 0, 0, range));
    return range;
}
static void cb_range_end(nvtxRangeId_t id)
{
    range_end(0, id);
}
static int cb_range_push_ex(const nvtxEventAttributes_t *a)
{
    return push(0, 0, a, NULL);
}
static int cb_range_push_a(const char *m)
{
    return push(0, 0, NULL, m);
}
static int cb_range_push_w(const wchar_t *m)
{
    uint32_t id = 0;
    WITH_GUARD(id = name_id_of_wide(m));
    return push(0, id, NULL, NULL);
}
static int cb_range_pop(void)
{
    return pop(0);
}

/* Thread names go both into a GT_REC_THREAD (how every thread is named) and an NVTX record whose
 * range_id carries the OS thread id it names (it may be another thread). */
static void name_thread(uint32_t os_tid, uint32_t name_id)
{
    if (!name_id)
        return;
    gt_rec_thread thread = {.tid = os_tid, .name_id = name_id, .t_start_ns = gt_now_ns()};
    gt_record_write(GT_REC_THREAD, 0, &thread, sizeof thread);
    record_nvtx(GT_NVTX_NAME_THREAD, name_id, 0, 0, os_tid);
}
static void cb_name_os_thread_a(uint32_t tid, const char *name)
{
    WITH_GUARD(name_thread(tid, name_id_of(name)));
}
static void cb_name_os_thread_w(uint32_t tid, const wchar_t *name)
{
    WITH_GUARD(name_thread(tid, name_id_of_wide(name)));
}

/* ---------------------------------------------------------------- CORE2 (domain) callbacks */

static uint32_t domain_id(nvtxDomainHandle_t d)
{
    return handle_id(d);
}

static void cb_domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    mark(domain_id(d), a, NULL);
}
static nvtxRangeId_t cb_domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return range_start(domain_id(d), a, NULL);
}
static void cb_domain_range_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    range_end(domain_id(d), id);
}
static int cb_domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    return push(domain_id(d), 0, a, NULL);
}
static int cb_domain_range_pop(nvtxDomainHandle_t d)
{
    return pop(domain_id(d));
}

/* Handles are string ids: registration is rare, so intern directly (no guard needed: gt_intern
 * records nothing of the application's). A failed intern gives a NULL handle, which NVTX treats
 * as "no name" / the default domain. */
static nvtxStringHandle_t cb_domain_register_string_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)(s ? gt_intern_n(s, strnlen(s, MAX_NAME_LEN)) : 0);
}
static nvtxStringHandle_t cb_domain_register_string_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    return (nvtxStringHandle_t)(uintptr_t)name_id_of_wide(s);
}
static nvtxDomainHandle_t cb_domain_create_a(const char *name)
{
    return (nvtxDomainHandle_t)(uintptr_t)(name ? gt_intern_n(name, strnlen(name, MAX_NAME_LEN))
                                                : 0);
}
static nvtxDomainHandle_t cb_domain_create_w(const wchar_t *name)
{
    return (nvtxDomainHandle_t)(uintptr_t)name_id_of_wide(name);
}
static void cb_domain_destroy(nvtxDomainHandle_t d)
{
    (void)d;
}

/* ---------------------------------------------------------------- injection entry point */

typedef struct callback_entry {
    unsigned int cbid;
    NvtxFunctionPointer fn;
} callback_entry;

#define CB(id, fn)                                                                                 \
    {                                                                                              \
        id, (NvtxFunctionPointer)(void (*)(void))(fn)                                              \
    }

static const callback_entry CORE_CALLBACKS[] = {
    CB(NVTX_CBID_CORE_MarkEx, cb_mark_ex),
    CB(NVTX_CBID_CORE_MarkA, cb_mark_a),
    CB(NVTX_CBID_CORE_MarkW, cb_mark_w),
    CB(NVTX_CBID_CORE_RangeStartEx, cb_range_start_ex),
    CB(NVTX_CBID_CORE_RangeStartA, cb_range_start_a),
    CB(NVTX_CBID_CORE_RangeStartW, cb_range_start_w),
    CB(NVTX_CBID_CORE_RangeEnd, cb_range_end),
    CB(NVTX_CBID_CORE_RangePushEx, cb_range_push_ex),
    CB(NVTX_CBID_CORE_RangePushA, cb_range_push_a),
    CB(NVTX_CBID_CORE_RangePushW, cb_range_push_w),
    CB(NVTX_CBID_CORE_RangePop, cb_range_pop),
    CB(NVTX_CBID_CORE_NameOsThreadA, cb_name_os_thread_a),
    CB(NVTX_CBID_CORE_NameOsThreadW, cb_name_os_thread_w),
};

static const callback_entry CORE2_CALLBACKS[] = {
    CB(NVTX_CBID_CORE2_DomainMarkEx, cb_domain_mark_ex),
    CB(NVTX_CBID_CORE2_DomainRangeStartEx, cb_domain_range_start_ex),
    CB(NVTX_CBID_CORE2_DomainRangeEnd, cb_domain_range_end),
    CB(NVTX_CBID_CORE2_DomainRangePushEx, cb_domain_range_push_ex),
    CB(NVTX_CBID_CORE2_DomainRangePop, cb_domain_range_pop),
    CB(NVTX_CBID_CORE2_DomainRegisterStringA, cb_domain_register_string_a),
    CB(NVTX_CBID_CORE2_DomainRegisterStringW, cb_domain_register_string_w),
    CB(NVTX_CBID_CORE2_DomainCreateA, cb_domain_create_a),
    CB(NVTX_CBID_CORE2_DomainCreateW, cb_domain_create_w),
    CB(NVTX_CBID_CORE2_DomainDestroy, cb_domain_destroy),
};

static int fill_module(const NvtxExportTableCallbacks *etc, NvtxCallbackModule module,
                       const callback_entry *entries, size_t count)
{
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!etc->GetModuleFunctionTable(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (entries[i].cbid < size && table[entries[i].cbid])
            *table[entries[i].cbid] = entries[i].fn;
    return 1;
}

GT_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    if (!get_export_table)
        return 0;
    const NvtxExportTableCallbacks *etc = get_export_table(NVTX_ETID_CALLBACKS);
    if (!etc || etc->struct_size < sizeof *etc || !etc->GetModuleFunctionTable)
        return 0;
    const NvtxExportTableVersionInfo *version = get_export_table(NVTX_ETID_VERSIONINFO);
    if (version && version->struct_size >= sizeof *version && version->SetInjectionNvtxVersion)
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    if (!fill_module(etc, NVTX_CB_MODULE_CORE, CORE_CALLBACKS,
                     sizeof CORE_CALLBACKS / sizeof CORE_CALLBACKS[0]))
        return 0;
    /* CORE2 (domains) is optional: an old NVTX without it still gets the core ranges. */
    fill_module(etc, NVTX_CB_MODULE_CORE2, CORE2_CALLBACKS,
                sizeof CORE2_CALLBACKS / sizeof CORE2_CALLBACKS[0]);
    static atomic_flag hooked = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&hooked))
        gt_core_on_fork_child(forget_names_after_fork);
    gt_debug("NVTX injection attached (NVTX version %u)", version ? version->version : 0u);
    return 1;
}

/* The same entry under the name NVTX uses for an already-loaded tool (experimental in NVTX). */
GT_EXPORT int InitializeInjectionNvtx2Preinject(NvtxGetExportTableFunc_t get_export_table)
{
    return InitializeInjectionNvtx2(get_export_table);
}

/* Runs before the other constructors of this library: NVTX reads the variable at the first NVTX
 * call, which may come from any later constructor. Never overrides a tool the user chose.
 * GPUTRACE_NVTX=0 (or false, no, off) leaves NVTX alone; the core warns about other values when
 * it reads its configuration (here it is not loaded yet). */
__attribute__((constructor(101))) static void set_nvtx_injection_path(void)
{
    const char *nvtx = getenv("GPUTRACE_NVTX");
    if (getenv("NVTX_INJECTION64_PATH") || (nvtx && *nvtx && gt_parse_bool_value(nvtx) == 0))
        return;
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)&InitializeInjectionNvtx2, &info) || !info.dli_fname)
        return;
    char path[PATH_MAX];
    if (!realpath(info.dli_fname, path))
        return;
    setenv("NVTX_INJECTION64_PATH", path, 0);
}
