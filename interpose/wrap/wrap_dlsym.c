/* wrap_dlsym.c — issue 10: programs that look CUDA functions up themselves (JAX/XLA, TensorFlow)
 * get our wrappers too.
 *
 * dlsym/dlvsym: when a lookup in a handle succeeds, the name is one we wrap, and the address found
 * is a CUDA library's, we hand out our dlsym twin of the wrapper (gt_wrap.h), whose real target is
 * the address found. Any other lookup returns exactly what the C library returned. Lookups made by
 * CUDA libraries themselves (cudart finding libcuda's entry points) are left alone, and RTLD_NEXT
 * lookups jump straight to the C library so that "next" keeps meaning "after the caller".
 * cudaGetDriverEntryPoint[ByVersion] and cuGetProcAddress(_v2) hand out our driver wrappers
 * (wrap_driver.c) for the cu* functions in gtrace_api.def. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <string.h>

#include "gt_wrap.h"

static bool may_be_wrapped(const char *name)
{
    return name && (name[0] == 'c' || name[0] == '_' || name[0] == 'n') &&
           (strncmp(name, "cu", 2) == 0 || strncmp(name, "__cuda", 6) == 0 ||
            strncmp(name, "nvrtc", 5) == 0 || strncmp(name, "__nvJitLink", 11) == 0);
}

/* cu* names other than cuda*, cudnn*, cublas* are driver entry points. */
static bool is_driver_name(const char *name)
{
    return strncmp(name, "cu", 2) == 0 && strncmp(name, "cuda", 4) != 0 &&
           strncmp(name, "cudnn", 5) != 0 && strncmp(name, "cublas", 6) != 0 &&
           strncmp(name, "cuGetProcAddress", 16) != 0;
}

static const gt_wrap_entry *find_entry(const char *name, bool driver)
{
    for (const gt_wrap_entry *e = gt_wrap_table_begin(); e < gt_wrap_table_end(); e++)
        if (e->driver == driver && strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

/* The wrapper to hand out instead of found, or found itself. */
static void *substitute(const char *name, void *found, const void *caller, bool driver)
{
    if (!found || gt_addr_in_cuda_lib(caller) || gt_addr_is_ours(caller))
        return found;
    const gt_wrap_entry *e = find_entry(name, driver);
    if (!e)
        return found;
    /* The wrapper stands in only when it would call exactly what the caller would have called. */
    return gt_sym_adopt(e->sym, found) ? e->dl_twin : found;
}

static __thread int in_dlsym __attribute__((
    tls_model("initial-exec"))); /* our own lookups (symbol resolution) are never substituted */

void *gt_dlsym_impl(void *handle, const char *name, const void *caller);
void *gt_dlsym_impl(void *handle, const char *name, const void *caller)
{
    void *found = gt_real_dlsym(handle, name);
    if (in_dlsym || !may_be_wrapped(name))
        return found;
    in_dlsym = 1;
    void *r = substitute(name, found, caller, is_driver_name(name));
    in_dlsym = 0;
    return r;
}

void *gt_dlvsym_impl(void *handle, const char *name, const char *version, const void *caller);
void *gt_dlvsym_impl(void *handle, const char *name, const char *version, const void *caller)
{
    void *found = gt_real_dlvsym(handle, name, version);
    if (in_dlsym || !may_be_wrapped(name))
        return found;
    in_dlsym = 1;
    void *r = substitute(name, found, caller, is_driver_name(name));
    in_dlsym = 0;
    return r;
}

#if defined(__x86_64__)
/* dlsym(RTLD_NEXT, ...) looks at its return address: jump to the C library's dlsym without a
 * frame of ours. Other handles go to gt_dlsym_impl with the caller's address as third argument. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym,@function\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    je 1f\n"
        "    movq (%rsp), %rdx\n"
        "    jmp gt_dlsym_impl\n"
        "1:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call gt_real_dlsym_address\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    jmp *%rax\n"
        ".size dlsym, .-dlsym\n"
        ".globl dlvsym\n"
        ".type dlvsym,@function\n"
        "dlvsym:\n"
        "    cmpq $-1, %rdi\n"
        "    je 2f\n"
        "    movq (%rsp), %rcx\n"
        "    jmp gt_dlvsym_impl\n"
        "2:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    pushq %rdx\n"
        "    call gt_real_dlvsym_address\n"
        "    popq %rdx\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    jmp *%rax\n"
        ".size dlvsym, .-dlvsym\n");
#else
/* Elsewhere RTLD_NEXT lookups made through us resolve relative to libgputrace.so (documented). */
GT_EXPORT void *dlsym(void *handle, const char *name)
{
    return gt_dlsym_impl(handle, name, __builtin_return_address(0));
}
GT_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
    return gt_dlvsym_impl(handle, name, version, __builtin_return_address(0));
}
#endif

/* ------------------------------------------------------------------ driver entry points */

/* "cuMemcpyHtoD" asked of cuGetProcAddress is the _v2 ABI we wrap; per-thread-stream flavours
 * have their own wrappers (GT_RF_PTDS). */
static void *driver_substitute(const char *symbol, void *found, bool per_thread)
{
    if (!symbol || !found)
        return found;
    char name[96];
    size_t n = strlen(symbol);
    if (n + 8 >= sizeof name)
        return found;
    static const char *const v2[] = {"cuMemcpyHtoD",      "cuMemcpyDtoH", "cuMemcpyHtoDAsync",
                                     "cuMemcpyDtoHAsync", "cuMemAlloc",   "cuMemFree",
                                     "cuMemcpyDtoDAsync"};
    memcpy(name, symbol, n + 1);
    for (size_t i = 0; i < sizeof v2 / sizeof v2[0]; i++)
        if (strcmp(symbol, v2[i]) == 0)
            memcpy(name + n, "_v2", 4), n += 3;
    if (per_thread)
        memcpy(name + n, "_ptsz", 6);
    const gt_wrap_entry *e = find_entry(name, true);
    if (!e && per_thread) {
        memcpy(name + n, "_ptds", 6);
        e = find_entry(name, true);
    }
    if (!e)
        return found;
    return gt_sym_adopt(e->sym, found) ? e->dl_twin : found;
}

typedef cudaError_t (*entry_point_fn)(const char *, void **, unsigned long long,
                                      enum cudaDriverEntryPointQueryResult *);
typedef cudaError_t (*entry_point_v_fn)(const char *, void **, unsigned int, unsigned long long,
                                        enum cudaDriverEntryPointQueryResult *);
typedef CUresult (*proc_address_fn)(const char *, void **, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult *);

static cudaError_t entry_point_impl(gt_sym *s, uint16_t flags, const char *sym, void **fn,
                                    unsigned long long f, enum cudaDriverEntryPointQueryResult *st)
{
    (void)flags; /* lookups are not recorded: the functions handed out are */
    entry_point_fn real = (entry_point_fn)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return cudaErrorNotSupported;
    }
    cudaError_t r = real(sym, fn, f, st);
    if (r == cudaSuccess && fn)
        *fn = driver_substitute(sym, *fn, (f & cudaEnablePerThreadDefaultStream) != 0);
    return r;
}
static cudaError_t entry_point_v_impl(gt_sym *s, uint16_t flags, const char *sym, void **fn,
                                      unsigned int v, unsigned long long f,
                                      enum cudaDriverEntryPointQueryResult *st)
{
    (void)flags;
    entry_point_v_fn real = (entry_point_v_fn)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return cudaErrorNotSupported;
    }
    cudaError_t r = real(sym, fn, v, f, st);
    if (r == cudaSuccess && fn && v >= 11030)
        *fn = driver_substitute(sym, *fn, (f & cudaEnablePerThreadDefaultStream) != 0);
    return r;
}
static CUresult proc_address_impl(gt_sym *s, uint16_t flags, const char *sym, void **fn, int v,
                                  cuuint64_t f, CUdriverProcAddressQueryResult *st)
{
    (void)flags;
    proc_address_fn real = (proc_address_fn)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    CUresult r = real(sym, fn, v, f, st);
    if (r == CUDA_SUCCESS && fn && v >= 11030)
        *fn = driver_substitute(sym, *fn, (f & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0);
    return r;
}

GT_ENTRY(cudaError_t, cudaGetDriverEntryPoint, GT_LIB_CUDART, entry_point_impl, 0,
         (const char *sym, void **fn, unsigned long long f,
          enum cudaDriverEntryPointQueryResult *st),
         (sym, fn, f, st))
GT_ENTRY(cudaError_t, cudaGetDriverEntryPoint_ptsz, GT_LIB_CUDART, entry_point_impl, GT_RF_PTDS,
         (const char *sym, void **fn, unsigned long long f,
          enum cudaDriverEntryPointQueryResult *st),
         (sym, fn, f, st))
GT_ENTRY(cudaError_t, cudaGetDriverEntryPointByVersion, GT_LIB_CUDART, entry_point_v_impl, 0,
         (const char *sym, void **fn, unsigned int v, unsigned long long f,
          enum cudaDriverEntryPointQueryResult *st),
         (sym, fn, v, f, st))
GT_ENTRY(cudaError_t, cudaGetDriverEntryPointByVersion_ptsz, GT_LIB_CUDART, entry_point_v_impl,
         GT_RF_PTDS,
         (const char *sym, void **fn, unsigned int v, unsigned long long f,
          enum cudaDriverEntryPointQueryResult *st),
         (sym, fn, v, f, st))
/* cuGetProcAddress is reached through dlsym of libcuda (we never export driver symbols). */
static gt_sym sym_proc_address = GT_SYM_INIT("cuGetProcAddress_v2", GT_LIB_CUDA);
static CUresult dl_proc_address(const char *sym, void **fn, int v, cuuint64_t f,
                                CUdriverProcAddressQueryResult *st)
{
    return proc_address_impl(&sym_proc_address, GT_RF_VIA_DLSYM, sym, fn, v, f, st);
}
static const gt_wrap_entry entry_proc_address GT_WRAP_SECTION = {
    "cuGetProcAddress_v2", &sym_proc_address, (void *)dl_proc_address, 0};
