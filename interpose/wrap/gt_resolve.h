/* gt_resolve.h — finding the real CUDA functions behind our wrappers, in one place.
 *
 * Each wrapped symbol has a gt_sym. Its real address is resolved lazily on first use and cached
 * (thread-safe: resolution is idempotent, the pointer is published with a release store):
 *   1. dlsym(RTLD_NEXT, name): the library after us in the global scope;
 *   2. dlopen(soname, RTLD_NOLOAD) for each soname of its library (libcudart.so.13/.12, ...):
 *      reaches libraries loaded with RTLD_LOCAL (PyTorch's torch._C pulls libcudnn in that way);
 *   3. a dl_iterate_phdr scan of loaded objects whose file name starts with the library's stem.
 * A missing symbol is not an error: the wrapper returns the library's "not supported" code and
 * warns once. dlsym itself is interposed (wrap_dlsym.c), so everything here calls the real one. */
#ifndef GT_RESOLVE_H
#define GT_RESOLVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

enum gt_lib {
    GT_LIB_CUDART = 0,
    GT_LIB_CUDNN = 1,
    GT_LIB_CUBLAS = 2,
    GT_LIB_CUBLASLT = 3,
    GT_LIB_CUDA = 4, /* the driver, libcuda.so.1 */
    GT_LIB_NVRTC = 5,
    GT_LIB_NVJITLINK = 6,
    GT_LIB_COUNT
};

typedef struct gt_sym {
    const char *name;
    uint8_t lib;          /* enum gt_lib */
    _Atomic(void *) real; /* NULL until resolved */
    atomic_bool warned;   /* "missing" said once */
} gt_sym;

#define GT_SYM_INIT(sym_name, library)                                                             \
    {                                                                                              \
        .name = sym_name, .lib = library                                                           \
    }

void *gt_sym_resolve_slow(gt_sym *s);

/* The real address of s, or NULL when no loaded library defines it. */
static inline void *gt_sym_get(gt_sym *s)
{
    void *p = atomic_load_explicit(&s->real, memory_order_acquire);
    return p ? p : gt_sym_resolve_slow(s);
}

/* Install the address an interposed dlsym/GetProcAddress returned for s when s has none yet.
 * Returns true when s's real address is now addr (so the wrapper may stand in for it). */
bool gt_sym_adopt(gt_sym *s, void *addr);

/* Warn once that s is missing (the wrapper then returns an error code). */
void gt_sym_warn_missing(gt_sym *s);

/* The real dlsym/dlvsym of the C library (never our interposed ones). */
void *gt_real_dlsym(void *handle, const char *name);
void *gt_real_dlvsym(void *handle, const char *name, const char *version);

/* Look a symbol up in an already loaded library (steps 2 and 3 above). NULL when absent. */
void *gt_resolve_in_lib(enum gt_lib lib, const char *name);

/* Which of our libraries a loaded object's path belongs to, or -1 (matches by file-name stem:
 * ".../libcudnn.so.9" -> GT_LIB_CUDNN; "libcudnn_graph.so.9" is not the dispatcher -> -1). */
int gt_lib_of_path(const char *path);
/* True when addr lies inside a CUDA library (libcudart*, libcudnn*, libcublas*, libcuda*,
 * libcupti*, libnv*): lookups made by those are left alone. */
bool gt_addr_in_cuda_lib(const void *addr);
/* True when addr lies inside libgputrace.so itself. */
bool gt_addr_is_ours(const void *addr);

/* The C library's dlsym and dlvsym (the interposed ones jump to them for RTLD_NEXT lookups). */
void *gt_real_dlsym_address(void);
void *gt_real_dlvsym_address(void);

#endif
