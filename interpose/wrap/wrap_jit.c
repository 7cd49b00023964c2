/* wrap_jit.c — run-time compilation: nvrtcCompileProgram and nvJitLinkComplete (issue 21 item 1).
 * CuPy, torch (jiterator, lazy NVRTC) and cuDNN's runtime-fused engines compile kernels while the
 * program runs; the time is the program's JIT compilation phase, not GPU idle time to blame on
 * data loading. libnvrtc and libnvJitLink are mostly dlopen'ed: a program that links them calls
 * our exported wrapper, one that looks them up (torch) gets our dlsym twin (wrap_dlsym.c); the
 * real function is found in the loaded library (gt_resolve.h). A call made inside another wrapped
 * call (cuDNN finalizing a plan) is that call's time and is not recorded again.
 * nvJitLink's header maps nvJitLinkComplete to a versioned name (__nvJitLinkComplete_13_0): the
 * versioned names are the entry points. */
#include <nvJitLink.h>
#include <nvrtc.h>

#include "gt_wrap.h"

static nvrtcResult nvrtc_compile_impl(gt_sym *s, uint16_t flags, nvrtcProgram prog, int n,
                                      const char *const *options)
{
    typedef nvrtcResult (*fn_t)(nvrtcProgram, int, const char *const *);
    fn_t real = (fn_t)gt_sym_get(s);
    if (__builtin_expect(!real, 0)) {
        gt_sym_warn_missing(s);
        return NVRTC_ERROR_INTERNAL_ERROR;
    }
    if (!gt_fast_guard_enter())
        return real(prog, n, options);
    gt_call c;
    gt_call_begin(&c, GT_FN_nvrtcCompileProgram, false, true);
    nvrtcResult r = real(prog, n, options);
    uint64_t t_end = gt_call_end(&c);
    gt_record_plain(&c, t_end, flags, (int32_t)r);
    gt_fast_guard_leave();
    return r;
}

static nvJitLinkResult jitlink_complete_impl(gt_sym *s, uint16_t flags, nvJitLinkHandle h)
{
    typedef nvJitLinkResult (*fn_t)(nvJitLinkHandle);
    fn_t real = (fn_t)gt_sym_get(s);
    if (__builtin_expect(!real, 0)) {
        gt_sym_warn_missing(s);
        return NVJITLINK_ERROR_INTERNAL;
    }
    if (!gt_fast_guard_enter())
        return real(h);
    gt_call c;
    gt_call_begin(&c, GT_FN_nvJitLinkComplete, false, true);
    nvJitLinkResult r = real(h);
    uint64_t t_end = gt_call_end(&c);
    gt_record_plain(&c, t_end, flags, (int32_t)r);
    gt_fast_guard_leave();
    return r;
}

GT_ENTRY(nvrtcResult, nvrtcCompileProgram, GT_LIB_NVRTC, nvrtc_compile_impl, 0,
         (nvrtcProgram prog, int n, const char *const *options), (prog, n, options))
#define JITLINK_ENTRY(sym)                                                                         \
    GT_ENTRY_COMMON(nvJitLinkResult, sym, #sym, GT_LIB_NVJITLINK, jitlink_complete_impl, 0,        \
                    (nvJitLinkHandle h), (h), GT_EXPORT, 0)
JITLINK_ENTRY(__nvJitLinkComplete_13_0)
JITLINK_ENTRY(__nvJitLinkComplete_12_9)
JITLINK_ENTRY(__nvJitLinkComplete_12_8)
JITLINK_ENTRY(__nvJitLinkComplete_12_6)
JITLINK_ENTRY(__nvJitLinkComplete_12_4)
