/* wrap_driver.c — wrappers for the driver entry points of gtrace_api.def (category DRIVER).
 * Never exported: they are handed out by the interposed dlsym, cudaGetDriverEntryPoint[ByVersion]
 * and cuGetProcAddress (wrap_dlsym.c), and record with GT_RF_DRIVER | GT_RF_VIA_DLSYM. */
#include <cuda.h>

#include "gt_wrap.h"

#define SID(s) ((uint64_t)(uintptr_t)(s))
#define DRV_REAL(s, type)                                                                          \
    __typeof__(type) real = (__typeof__(type))gt_sym_get(s);                                       \
    if (__builtin_expect(!real, 0)) {                                                              \
        gt_sym_warn_missing(s);                                                                    \
        return CUDA_ERROR_NOT_SUPPORTED;                                                           \
    }
/* Bracket one driver call: call_real is evaluated once, record is the recording statement. */
#define DRV_BODY(fnid, stack, call_real, record)                                                   \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_call_begin(&c, fnid, true, stack);                                                          \
    CUresult r = call_real;                                                                        \
    uint64_t t_end = gt_call_end(&c);                                                              \
    record;                                                                                        \
    gt_fast_guard_leave();                                                                         \
    return r;

static CUresult launch_impl(gt_sym *s, uint16_t flags, CUfunction f, unsigned gx, unsigned gy,
                            unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem,
                            CUstream st, void **p, void **e)
{
    DRV_REAL(s, CUresult(*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **, void **))
    gt_launch_dims d = {{gx, gy, gz}, {bx, by, bz}};
    DRV_BODY(GT_FN_cuLaunchKernel, false, real(f, gx, gy, gz, bx, by, bz, smem, st, p, e),
             gt_record_launch_dims(&c, t_end, flags, r, SID(st), f, 2, d, smem))
}
static CUresult launch_ex_impl(gt_sym *s, uint16_t flags, const CUlaunchConfig *cfg, CUfunction f,
                               void **p, void **e)
{
    DRV_REAL(s, CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))
    gt_launch_dims d = {{0}, {0}};
    if (cfg)
        d = (gt_launch_dims){{cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ},
                             {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ}};
    DRV_BODY(GT_FN_cuLaunchKernelEx, false, real(cfg, f, p, e),
             gt_record_launch_dims(&c, t_end, flags, r, cfg ? SID(cfg->hStream) : 0, f, 2, d,
                                   cfg ? cfg->sharedMemBytes : 0))
}

/* Copies: kind as in cudaMemcpyKind (1 HtoD, 2 DtoH, 3 DtoD). */
static CUresult copy_common(gt_sym *s, uint16_t flags, uint32_t fnid, int kind, void *dst,
                            const void *src, size_t n, CUstream st, bool is_async)
{
    typedef CUresult (*sync_fn)(void *, const void *, size_t);
    typedef CUresult (*async_fn)(void *, const void *, size_t, CUstream);
    void *realp = gt_sym_get(s);
    if (!realp) {
        gt_sym_warn_missing(s);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    /* CUdeviceptr and host pointers are both pointer-sized integers in the x86-64/aarch64 ABI. */
#define CALL_COPY() (is_async ? ((async_fn)realp)(dst, src, n, st) : ((sync_fn)realp)(dst, src, n))
    if (!gt_fast_guard_enter())
        return CALL_COPY();
    copy_info ci = gt_classify_copy(kind, dst, src, is_async);
    gt_call c;
    gt_call_begin(&c, fnid, true, gt_copy_wants_stack(&ci));
    CUresult r = CALL_COPY();
    uint64_t t_end = gt_call_end(&c);
    gt_record_copy(&c, t_end, flags, r, SID(st), &ci, dst, src, n);
    gt_fast_guard_leave();
    return r;
#undef CALL_COPY
}
static CUresult htod_impl(gt_sym *s, uint16_t flags, CUdeviceptr d, const void *h, size_t n)
{
    return copy_common(s, flags, GT_FN_cuMemcpyHtoD_v2, 1, (void *)d, h, n, 0, false);
}
static CUresult dtoh_impl(gt_sym *s, uint16_t flags, void *h, CUdeviceptr d, size_t n)
{
    return copy_common(s, flags, GT_FN_cuMemcpyDtoH_v2, 2, h, (const void *)d, n, 0, false);
}
static CUresult htod_async_impl(gt_sym *s, uint16_t flags, CUdeviceptr d, const void *h, size_t n,
                                CUstream st)
{
    return copy_common(s, flags, GT_FN_cuMemcpyHtoDAsync_v2, 1, (void *)d, h, n, st, true);
}
static CUresult dtoh_async_impl(gt_sym *s, uint16_t flags, void *h, CUdeviceptr d, size_t n,
                                CUstream st)
{
    return copy_common(s, flags, GT_FN_cuMemcpyDtoHAsync_v2, 2, h, (const void *)d, n, st, true);
}
static CUresult dtod_async_impl(gt_sym *s, uint16_t flags, CUdeviceptr d, CUdeviceptr src, size_t n,
                                CUstream st)
{
    return copy_common(s, flags, GT_FN_cuMemcpyDtoDAsync_v2, 3, (void *)d, (const void *)src, n, st,
                       true);
}
static CUresult copy_async_impl(gt_sym *s, uint16_t flags, CUdeviceptr d, CUdeviceptr src, size_t n,
                                CUstream st)
{
    return copy_common(s, flags, GT_FN_cuMemcpyAsync, 4, (void *)d, (const void *)src, n, st, true);
}

static CUresult stream_sync_impl(gt_sym *s, uint16_t flags, CUstream st)
{
    DRV_REAL(s, CUresult(*)(CUstream))
    DRV_BODY(GT_FN_cuStreamSynchronize, true, real(st),
             gt_record_sync(&c, t_end, flags, r, SID(st), NULL, GT_SYNC_STREAM))
}
static CUresult ctx_sync_impl(gt_sym *s, uint16_t flags)
{
    DRV_REAL(s, CUresult(*)(void))
    DRV_BODY(GT_FN_cuCtxSynchronize, true, real(),
             gt_record_sync(&c, t_end, flags, r, 0, NULL, GT_SYNC_DEVICE))
}
static CUresult event_sync_impl(gt_sym *s, uint16_t flags, CUevent e)
{
    DRV_REAL(s, CUresult(*)(CUevent))
    DRV_BODY(GT_FN_cuEventSynchronize, true, real(e),
             gt_record_sync(&c, t_end, flags, r, 0, e, GT_SYNC_EVENT))
}
static CUresult stream_wait_impl(gt_sym *s, uint16_t flags, CUstream st, CUevent e, unsigned f)
{
    DRV_REAL(s, CUresult(*)(CUstream, CUevent, unsigned))
    DRV_BODY(GT_FN_cuStreamWaitEvent, false, real(st, e, f),
             gt_record_sync(&c, t_end, flags, r, SID(st), e, GT_SYNC_STREAM_WAIT_EVENT))
}
static CUresult mem_alloc_impl(gt_sym *s, uint16_t flags, CUdeviceptr *p, size_t n)
{
    DRV_REAL(s, CUresult(*)(CUdeviceptr *, size_t))
    DRV_BODY(GT_FN_cuMemAlloc_v2, true, real(p, n),
             gt_record_alloc(&c, t_end, flags, r, 0, (r == CUDA_SUCCESS && p) ? (uint64_t)*p : 0, n,
                             GT_ALLOC_DEVICE, 0))
}
static CUresult mem_free_impl(gt_sym *s, uint16_t flags, CUdeviceptr p)
{
    DRV_REAL(s, CUresult(*)(CUdeviceptr))
    DRV_BODY(GT_FN_cuMemFree_v2, true, real(p),
             gt_record_alloc(&c, t_end, flags, r, 0, (uint64_t)p, 0, GT_ALLOC_DEVICE, 1))
}
static CUresult memset8_impl(gt_sym *s, uint16_t flags, CUdeviceptr p, unsigned char v, size_t n,
                             CUstream st)
{
    DRV_REAL(s, CUresult(*)(CUdeviceptr, unsigned char, size_t, CUstream))
    DRV_BODY(GT_FN_cuMemsetD8Async, false, real(p, v, n, st),
             gt_record_set(&c, t_end, flags, r, SID(st), (const void *)p, n, v, true))
}
static CUresult memset32_impl(gt_sym *s, uint16_t flags, CUdeviceptr p, unsigned v, size_t n,
                              CUstream st)
{
    DRV_REAL(s, CUresult(*)(CUdeviceptr, unsigned, size_t, CUstream))
    DRV_BODY(
        GT_FN_cuMemsetD32Async, false, real(p, v, n, st),
        gt_record_set(&c, t_end, flags, r, SID(st), (const void *)p, (uint64_t)n * 4, (int)v, true))
}

#define LAUNCH_PARAMS                                                                              \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,   \
     unsigned smem, CUstream st, void **p, void **e)
#define LAUNCH_ARGS (f, gx, gy, gz, bx, by, bz, smem, st, p, e)
GT_DRIVER_ENTRY(CUresult, cuLaunchKernel, launch_impl, 0, LAUNCH_PARAMS, LAUNCH_ARGS)
GT_DRIVER_ENTRY(CUresult, cuLaunchKernel_ptsz, launch_impl, GT_RF_PTDS, LAUNCH_PARAMS, LAUNCH_ARGS)
GT_DRIVER_ENTRY(CUresult, cuLaunchKernelEx, launch_ex_impl, 0,
                (const CUlaunchConfig *cfg, CUfunction f, void **p, void **e), (cfg, f, p, e))
GT_DRIVER_ENTRY(CUresult, cuLaunchKernelEx_ptsz, launch_ex_impl, GT_RF_PTDS,
                (const CUlaunchConfig *cfg, CUfunction f, void **p, void **e), (cfg, f, p, e))
GT_DRIVER_ENTRY(CUresult, cuMemcpyHtoD_v2, htod_impl, 0, (CUdeviceptr d, const void *h, size_t n),
                (d, h, n))
GT_DRIVER_ENTRY(CUresult, cuMemcpyHtoD_v2_ptds, htod_impl, GT_RF_PTDS,
                (CUdeviceptr d, const void *h, size_t n), (d, h, n))
GT_DRIVER_ENTRY(CUresult, cuMemcpyDtoH_v2, dtoh_impl, 0, (void *h, CUdeviceptr d, size_t n),
                (h, d, n))
GT_DRIVER_ENTRY(CUresult, cuMemcpyDtoH_v2_ptds, dtoh_impl, GT_RF_PTDS,
                (void *h, CUdeviceptr d, size_t n), (h, d, n))
GT_DRIVER_ENTRY(CUresult, cuMemcpyHtoDAsync_v2, htod_async_impl, 0,
                (CUdeviceptr d, const void *h, size_t n, CUstream st), (d, h, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyHtoDAsync_v2_ptsz, htod_async_impl, GT_RF_PTDS,
                (CUdeviceptr d, const void *h, size_t n, CUstream st), (d, h, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyDtoHAsync_v2, dtoh_async_impl, 0,
                (void *h, CUdeviceptr d, size_t n, CUstream st), (h, d, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyDtoHAsync_v2_ptsz, dtoh_async_impl, GT_RF_PTDS,
                (void *h, CUdeviceptr d, size_t n, CUstream st), (h, d, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyDtoDAsync_v2, dtod_async_impl, 0,
                (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyAsync, copy_async_impl, 0,
                (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemcpyAsync_ptsz, copy_async_impl, GT_RF_PTDS,
                (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st))
GT_DRIVER_ENTRY(CUresult, cuStreamSynchronize, stream_sync_impl, 0, (CUstream st), (st))
GT_DRIVER_ENTRY(CUresult, cuStreamSynchronize_ptsz, stream_sync_impl, GT_RF_PTDS, (CUstream st),
                (st))
GT_DRIVER_ENTRY(CUresult, cuEventSynchronize, event_sync_impl, 0, (CUevent e), (e))
GT_DRIVER_ENTRY(CUresult, cuStreamWaitEvent, stream_wait_impl, 0,
                (CUstream st, CUevent e, unsigned f), (st, e, f))
GT_DRIVER_ENTRY(CUresult, cuStreamWaitEvent_ptsz, stream_wait_impl, GT_RF_PTDS,
                (CUstream st, CUevent e, unsigned f), (st, e, f))
GT_DRIVER_ENTRY(CUresult, cuMemAlloc_v2, mem_alloc_impl, 0, (CUdeviceptr * p, size_t n), (p, n))
GT_DRIVER_ENTRY(CUresult, cuMemFree_v2, mem_free_impl, 0, (CUdeviceptr p), (p))
GT_DRIVER_ENTRY(CUresult, cuMemsetD8Async, memset8_impl, 0,
                (CUdeviceptr p, unsigned char v, size_t n, CUstream st), (p, v, n, st))
GT_DRIVER_ENTRY(CUresult, cuMemsetD32Async, memset32_impl, 0,
                (CUdeviceptr p, unsigned v, size_t n, CUstream st), (p, v, n, st))

/* cuCtxSynchronize has no parameters. */
static gt_sym gt_sym_cuCtxSynchronize = GT_SYM_INIT("cuCtxSynchronize", GT_LIB_CUDA);
static CUresult gt_dl_cuCtxSynchronize(void)
{
    return ctx_sync_impl(&gt_sym_cuCtxSynchronize, GT_RF_DRIVER | GT_RF_VIA_DLSYM);
}
static const gt_wrap_entry gt_entry_cuCtxSynchronize GT_WRAP_SECTION = {
    "cuCtxSynchronize", &gt_sym_cuCtxSynchronize, (void *)gt_dl_cuCtxSynchronize, 1};
