/* gt_resolve.c — real-symbol resolution for every wrapper (see gt_resolve.h). */
#include "gt_resolve.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "gt_core.h"

/* ------------------------------------------------------------------ the real dlsym
 * We export dlsym and dlvsym ourselves, so a call to either from this library binds to our own
 * wrapper. The C library's definitions are found by reading its dynamic symbol table (GNU hash),
 * which needs no symbol lookup at all: no recursion, no dependence on glibc-private names. */

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static _Atomic(dlsym_fn) real_dlsym_ptr;
static _Atomic(dlvsym_fn) real_dlvsym_ptr;

struct elf_lookup {
    const char *name;
    void *found;
};

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    /* ld.so relocates these entries in place on most targets, not on all: accept both. */
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

/* The default (non-hidden) definition of name in one loaded object, via its GNU hash table. */
static void *elf_find_default(const struct dl_phdr_info *info, const char *name)
{
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnuhash = NULL;
    const ElfW(Half) *versym = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            gnuhash = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_VERSYM:
            versym = (const ElfW(Half) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab || !gnuhash)
        return NULL;
    uint32_t nbuckets = gnuhash[0], symoffset = gnuhash[1], bloom_size = gnuhash[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnuhash + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t h = gnu_hash(name);
    if (nbuckets == 0)
        return NULL;
    uint32_t idx = buckets[h % nbuckets];
    if (idx < symoffset)
        return NULL;
    for (;; idx++) {
        uint32_t ch = chain[idx - symoffset];
        if ((ch | 1) == (h | 1) && strcmp(strtab + symtab[idx].st_name, name) == 0 &&
            symtab[idx].st_shndx != SHN_UNDEF && !(versym && (versym[idx] & 0x8000)))
            return (void *)(info->dlpi_addr + symtab[idx].st_value);
        if (ch & 1)
            break;
    }
    return NULL;
}

static int find_in_libc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct elf_lookup *l = data;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libc.so", 7) != 0 && strncmp(base, "libdl.so", 8) != 0)
        return 0;
    l->found = elf_find_default(info, l->name);
    return l->found != NULL;
}

static void *libc_symbol(const char *name)
{
    struct elf_lookup l = {name, NULL};
    dl_iterate_phdr(find_in_libc, &l);
    return l.found;
}

void *gt_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym_ptr, memory_order_acquire);
    if (!f) {
        f = (dlsym_fn)libc_symbol("dlsym");
        if (!f)
            return NULL;
        atomic_store_explicit(&real_dlsym_ptr, f, memory_order_release);
    }
    return f(handle, name);
}

void *gt_real_dlvsym(void *handle, const char *name, const char *version)
{
    dlvsym_fn f = atomic_load_explicit(&real_dlvsym_ptr, memory_order_acquire);
    if (!f) {
        f = (dlvsym_fn)libc_symbol("dlvsym");
        if (!f)
            return NULL;
        atomic_store_explicit(&real_dlvsym_ptr, f, memory_order_release);
    }
    return f(handle, name, version);
}

/* Exposed for the RTLD_NEXT trampolines in wrap_dlsym.c (they jump, keeping the caller). */
void *gt_real_dlsym_address(void)
{
    if (!atomic_load(&real_dlsym_ptr))
        atomic_store(&real_dlsym_ptr, (dlsym_fn)libc_symbol("dlsym"));
    return (void *)atomic_load(&real_dlsym_ptr);
}
void *gt_real_dlvsym_address(void)
{
    if (!atomic_load(&real_dlvsym_ptr))
        atomic_store(&real_dlvsym_ptr, (dlvsym_fn)libc_symbol("dlvsym"));
    return (void *)atomic_load(&real_dlvsym_ptr);
}

/* ------------------------------------------------------------------ libraries */

static const char *const lib_sonames[GT_LIB_COUNT][3] = {
    [GT_LIB_CUDART] = {"libcudart.so.13", "libcudart.so.12", NULL},
    [GT_LIB_CUDNN] = {"libcudnn.so.9", "libcudnn.so.8", NULL},
    [GT_LIB_CUBLAS] = {"libcublas.so.13", "libcublas.so.12", NULL},
    [GT_LIB_CUBLASLT] = {"libcublasLt.so.13", "libcublasLt.so.12", NULL},
    [GT_LIB_CUDA] = {"libcuda.so.1", NULL, NULL},
    [GT_LIB_NVRTC] = {"libnvrtc.so.13", "libnvrtc.so.12", NULL},
    [GT_LIB_NVJITLINK] = {"libnvJitLink.so.13", "libnvJitLink.so.12", NULL},
};
/* File-name stems: "libcudnn.so" matches libcudnn.so.9.19.0 but not libcudnn_graph.so.9. */
static const char *const lib_stems[GT_LIB_COUNT] = {
    [GT_LIB_CUDART] = "libcudart.so",       [GT_LIB_CUDNN] = "libcudnn.so",
    [GT_LIB_CUBLAS] = "libcublas.so",       [GT_LIB_CUBLASLT] = "libcublasLt.so",
    [GT_LIB_CUDA] = "libcuda.so",           [GT_LIB_NVRTC] = "libnvrtc.so",
    [GT_LIB_NVJITLINK] = "libnvJitLink.so",
};

static const char *path_base(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

int gt_lib_of_path(const char *path)
{
    if (!path)
        return -1;
    const char *base = path_base(path);
    for (int i = 0; i < GT_LIB_COUNT; i++)
        if (strncmp(base, lib_stems[i], strlen(lib_stems[i])) == 0)
            return i;
    return -1;
}

static bool is_cuda_lib_name(const char *path)
{
    const char *base = path_base(path);
    static const char *const prefixes[] = {"libcudart", "libcudnn", "libcublas", "libcuda.",
                                           "libcupti",  "libnv",    "libcuda_"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

bool gt_addr_in_cuda_lib(const void *addr)
{
    Dl_info di;
    if (!addr || !dladdr(addr, &di) || !di.dli_fname)
        return false;
    return is_cuda_lib_name(di.dli_fname);
}

bool gt_addr_is_ours(const void *addr)
{
    Dl_info mine, other;
    if (!addr || !dladdr((const void *)gt_addr_is_ours, &mine) || !dladdr(addr, &other))
        return false;
    return mine.dli_fbase == other.dli_fbase;
}

struct scan_lookup {
    int lib;
    const char *name;
    void *found;
};

static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct scan_lookup *l = data;
    if (!info->dlpi_name || !info->dlpi_name[0] || gt_lib_of_path(info->dlpi_name) != l->lib)
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return 0;
    l->found = gt_real_dlsym(h, l->name);
    dlclose(h);
    return l->found != NULL;
}

void *gt_resolve_in_lib(enum gt_lib lib, const char *name)
{
    for (int i = 0; i < 3 && lib_sonames[lib][i]; i++) {
        void *h = dlopen(lib_sonames[lib][i], RTLD_NOLOAD | RTLD_LAZY);
        if (!h)
            continue;
        void *p = gt_real_dlsym(h, name);
        dlclose(h);
        if (p && !gt_addr_is_ours(p))
            return p;
    }
    struct scan_lookup l = {lib, name, NULL};
    dl_iterate_phdr(scan_object, &l);
    return l.found && !gt_addr_is_ours(l.found) ? l.found : NULL;
}

void *gt_sym_resolve_slow(gt_sym *s)
{
    void *p = gt_real_dlsym(RTLD_NEXT, s->name);
    if (p && gt_addr_is_ours(p))
        p = NULL;
    if (!p)
        p = gt_resolve_in_lib((enum gt_lib)s->lib, s->name);
    if (p) {
        /* Another thread (or an interposed dlsym) may have installed one first: keep the first. */
        void *expected = NULL;
        if (!atomic_compare_exchange_strong_explicit(&s->real, &expected, p, memory_order_acq_rel,
                                                     memory_order_acquire))
            p = expected;
    }
    return p;
}

bool gt_sym_adopt(gt_sym *s, void *addr)
{
    if (!addr || gt_addr_is_ours(addr))
        return false;
    void *expected = NULL;
    if (atomic_compare_exchange_strong_explicit(&s->real, &expected, addr, memory_order_acq_rel,
                                                memory_order_acquire))
        return true;
    return expected == addr;
}

void gt_sym_warn_missing(gt_sym *s)
{
    if (!atomic_exchange(&s->warned, true))
        gt_warn("%s not found in any loaded library; the call fails with 'not supported'", s->name);
}
