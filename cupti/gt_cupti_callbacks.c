/* gt_cupti_callbacks.c — links copies, sets (and, when needed, kernels) to the wrapped call that
 * caused them.
 *
 * Why callbacks. CUPTI writes an EXTERNAL_CORRELATION activity record only for an API call that
 * gets a RUNTIME or DRIVER activity record, and those kinds are off by default (+20-50% on
 * ResNet-50): pushing our id to CUPTI then links nothing (measured on an H200: zero records). A
 * callback on the entry points that put work on the GPU costs less: at CUPTI_API_ENTER it pairs
 * the thread's current gputrace call id with CUPTI's correlation id of the call, the id that the
 * kernel/memcpy/memset records carry, as one GT_REC_GPU_EXT_CORR record (kind CUSTOM2, like the
 * pushed ids). cuDNN and cuBLAS launch through their own static runtime and the driver: the
 * callbacks see those calls too, in the thread of the wrapped cuDNN/cuBLAS call.
 *
 * Kernel launches are the exception by default (GPUTRACE_CUPTI_CALLBACKS=auto): a callback pair
 * (~1 us) on each of a step's hundreds of launches cost ~3 points of a launch-bound ResNet-18
 * step, so by default (GPUTRACE_CUPTI_LINK=order) only the anchors' entry point gets a callback,
 * which records the correlation ids around each cuDNN/cuBLAS call, and the analyzer matches the
 * launches by order (analyzer/model/order_link.h); with GPUTRACE_CUPTI_LINK=queued kernels carry
 * their queued time, and the launch callbacks come on only while kernels arrive without one.
 *
 * The callback runs in the application's thread inside its CUDA call: no lock, no allocation, no
 * CUPTI call, one TLS read when no wrapped call is in progress. A driver call nested in a runtime
 * call may carry another correlation id: both pairs are written, the analyzer joins by corr id. */
#include <cupti.h>
#include <stddef.h>

#include "gt_core.h"
#include "gt_cupti.h"
#include "gt_cupti_internal.h"
#include "gtrace_api.h"

atomic_bool gt_cupti_cb_active;
_Thread_local gt_cupti_tl_call gt_cupti_tl_call_state __attribute__((tls_model("initial-exec")));
static CUpti_SubscriberHandle subscriber;
static bool
    subscribed_to_detach; /* the subscriber exists only for the detach (no link callbacks) */

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

/* clang-format off: the tables read better packed */
/* Runtime kernel launches: linked by the kernels' queued timestamps when CUPTI has them. */
static const uint16_t runtime_launch_cbids[] = {
    RT(__cudaLaunchKernel_v13000),
    RT(__cudaLaunchKernel_ptsz_v13000),
    RT(cudaLaunch_v3020),
    RT(cudaLaunch_ptsz_v7000),
    RT(cudaLaunchKernel_v7000),
    RT(cudaLaunchKernel_ptsz_v7000),
    RT(cudaLaunchKernelExC_v11060),
    RT(cudaLaunchKernelExC_ptsz_v11060),
    RT(cudaLaunchCooperativeKernel_v9000),
    RT(cudaLaunchCooperativeKernel_ptsz_v9000),
    RT(cudaLaunchCooperativeKernelMultiDevice_v9000),
};

/* Runtime entry points that put other work on the GPU: graph launches, copies, sets. */
static const uint16_t runtime_cbids[] = {
    RT(cudaGraphLaunch_v10000),
    RT(cudaGraphLaunch_ptsz_v10000),
    /* copies */
    RT(cudaMemcpy_v3020),
    RT(cudaMemcpy2D_v3020),
    RT(cudaMemcpyToArray_v3020),
    RT(cudaMemcpy2DToArray_v3020),
    RT(cudaMemcpyFromArray_v3020),
    RT(cudaMemcpy2DFromArray_v3020),
    RT(cudaMemcpyArrayToArray_v3020),
    RT(cudaMemcpy2DArrayToArray_v3020),
    RT(cudaMemcpyToSymbol_v3020),
    RT(cudaMemcpyFromSymbol_v3020),
    RT(cudaMemcpyAsync_v3020),
    RT(cudaMemcpyToArrayAsync_v3020),
    RT(cudaMemcpyFromArrayAsync_v3020),
    RT(cudaMemcpy2DAsync_v3020),
    RT(cudaMemcpy2DToArrayAsync_v3020),
    RT(cudaMemcpy2DFromArrayAsync_v3020),
    RT(cudaMemcpyToSymbolAsync_v3020),
    RT(cudaMemcpyFromSymbolAsync_v3020),
    RT(cudaMemcpy3D_v3020),
    RT(cudaMemcpy3DAsync_v3020),
    RT(cudaMemcpyPeer_v4000),
    RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaMemcpy3DPeer_v4000),
    RT(cudaMemcpy3DPeerAsync_v4000),
    RT(cudaMemcpy_ptds_v7000),
    RT(cudaMemcpy2D_ptds_v7000),
    RT(cudaMemcpyToArray_ptds_v7000),
    RT(cudaMemcpy2DToArray_ptds_v7000),
    RT(cudaMemcpyFromArray_ptds_v7000),
    RT(cudaMemcpy2DFromArray_ptds_v7000),
    RT(cudaMemcpyArrayToArray_ptds_v7000),
    RT(cudaMemcpy2DArrayToArray_ptds_v7000),
    RT(cudaMemcpyToSymbol_ptds_v7000),
    RT(cudaMemcpyFromSymbol_ptds_v7000),
    RT(cudaMemcpyAsync_ptsz_v7000),
    RT(cudaMemcpyToArrayAsync_ptsz_v7000),
    RT(cudaMemcpyFromArrayAsync_ptsz_v7000),
    RT(cudaMemcpy2DAsync_ptsz_v7000),
    RT(cudaMemcpy2DToArrayAsync_ptsz_v7000),
    RT(cudaMemcpy2DFromArrayAsync_ptsz_v7000),
    RT(cudaMemcpyToSymbolAsync_ptsz_v7000),
    RT(cudaMemcpyFromSymbolAsync_ptsz_v7000),
    RT(cudaMemcpy3D_ptds_v7000),
    RT(cudaMemcpy3DAsync_ptsz_v7000),
    RT(cudaMemcpy3DPeer_ptds_v7000),
    RT(cudaMemcpy3DPeerAsync_ptsz_v7000),
    RT(cudaMemcpyBatchAsync_v12080),
    RT(cudaMemcpyBatchAsync_ptsz_v12080),
    RT(cudaMemcpy3DBatchAsync_v12080),
    RT(cudaMemcpy3DBatchAsync_ptsz_v12080),
    RT(cudaMemcpyBatchAsync_v13000),
    RT(cudaMemcpyBatchAsync_ptsz_v13000),
    RT(cudaMemcpy3DBatchAsync_v13000),
    RT(cudaMemcpy3DBatchAsync_ptsz_v13000),
    /* sets */
    RT(cudaMemset_v3020),
    RT(cudaMemset2D_v3020),
    RT(cudaMemsetAsync_v3020),
    RT(cudaMemset2DAsync_v3020),
    RT(cudaMemset3D_v3020),
    RT(cudaMemset3DAsync_v3020),
    RT(cudaMemset_ptds_v7000),
    RT(cudaMemset2D_ptds_v7000),
    RT(cudaMemsetAsync_ptsz_v7000),
    RT(cudaMemset2DAsync_ptsz_v7000),
    RT(cudaMemset3D_ptds_v7000),
    RT(cudaMemset3DAsync_ptsz_v7000),
};

/* A static runtime's allocations and frees: no wrapper sees them, and without them a static
 * program that allocates every step was advised launch-bound, not alloc-in-loop (issue 30).
 * cudaMallocManaged is seen under it, on the driver's cuMemAllocManaged. What each records. */
typedef struct alloc_entry {
    uint16_t cbid, flags; /* flags: GT_RF_PTDS for a _ptsz entry point */
    uint32_t func, kind;  /* GT_FN_*, enum gt_alloc_kind */
    bool is_free;
} alloc_entry;
static const alloc_entry runtime_allocs[] = {
    {RT(cudaMalloc_v3020), 0, GT_FN_cudaMalloc, GT_ALLOC_DEVICE, false},
    {RT(cudaFree_v3020), 0, GT_FN_cudaFree, GT_ALLOC_DEVICE, true},
    {RT(cudaMallocHost_v3020), 0, GT_FN_cudaMallocHost, GT_ALLOC_HOST_PINNED, false},
    {RT(cudaHostAlloc_v3020), 0, GT_FN_cudaHostAlloc, GT_ALLOC_HOST_PINNED, false},
    {RT(cudaFreeHost_v3020), 0, GT_FN_cudaFreeHost, GT_ALLOC_HOST_PINNED, true},
    {RT(cudaMallocPitch_v3020), 0, GT_FN_cudaMallocPitch, GT_ALLOC_PITCH, false},
    {RT(cudaMallocAsync_v11020), 0, GT_FN_cudaMallocAsync, GT_ALLOC_DEVICE_ASYNC, false},
    {RT(cudaMallocAsync_ptsz_v11020), GT_RF_PTDS, GT_FN_cudaMallocAsync, GT_ALLOC_DEVICE_ASYNC,
     false},
    {RT(cudaFreeAsync_v11020), 0, GT_FN_cudaFreeAsync, GT_ALLOC_DEVICE_ASYNC, true},
    {RT(cudaFreeAsync_ptsz_v11020), GT_RF_PTDS, GT_FN_cudaFreeAsync, GT_ALLOC_DEVICE_ASYNC, true},
};

/* Driver kernel launches (what cuDNN's runtime-compiled kernels and Triton use). */
static const uint16_t driver_launch_cbids[] = {
    DRV(cuLaunch),
    DRV(cuLaunchGrid),
    DRV(cuLaunchGridAsync),
    DRV(cuLaunchKernel),
    DRV(cuLaunchKernel_ptsz),
    DRV(cuLaunchKernelEx),
    DRV(cuLaunchKernelEx_ptsz),
    DRV(cuLaunchCooperativeKernel),
    DRV(cuLaunchCooperativeKernel_ptsz),
    DRV(cuLaunchCooperativeKernelMultiDevice),
};

/* Driver entry points that put other work on the GPU: graph launches, copies, sets. */
static const uint16_t driver_cbids[] = {
    DRV(cuGraphLaunch),
    DRV(cuGraphLaunch_ptsz),
    /* copies */
    DRV(cuMemcpy),
    DRV(cuMemcpyAsync),
    DRV(cuMemcpy_ptds),
    DRV(cuMemcpyAsync_ptsz),
    DRV(cuMemcpy_v2),
    DRV(cuMemcpyHtoD_v2),
    DRV(cuMemcpyDtoH_v2),
    DRV(cuMemcpyDtoD_v2),
    DRV(cuMemcpyHtoDAsync_v2),
    DRV(cuMemcpyDtoHAsync_v2),
    DRV(cuMemcpyDtoDAsync_v2),
    DRV(cuMemcpyHtoD_v2_ptds),
    DRV(cuMemcpyDtoH_v2_ptds),
    DRV(cuMemcpyDtoD_v2_ptds),
    DRV(cuMemcpyHtoDAsync_v2_ptsz),
    DRV(cuMemcpyDtoHAsync_v2_ptsz),
    DRV(cuMemcpyDtoDAsync_v2_ptsz),
    DRV(cuMemcpy2D_v2),
    DRV(cuMemcpy2DUnaligned_v2),
    DRV(cuMemcpy2DAsync_v2),
    DRV(cuMemcpy3D_v2),
    DRV(cuMemcpy3DAsync_v2),
    DRV(cuMemcpy2D_v2_ptds),
    DRV(cuMemcpy2DUnaligned_v2_ptds),
    DRV(cuMemcpy3D_v2_ptds),
    DRV(cuMemcpy2DAsync_v2_ptsz),
    DRV(cuMemcpy3DAsync_v2_ptsz),
    DRV(cuMemcpyPeer),
    DRV(cuMemcpyPeerAsync),
    DRV(cuMemcpy3DPeer),
    DRV(cuMemcpy3DPeerAsync),
    DRV(cuMemcpyPeer_ptds),
    DRV(cuMemcpyPeerAsync_ptsz),
    DRV(cuMemcpy3DPeer_ptds),
    DRV(cuMemcpy3DPeerAsync_ptsz),
    DRV(cuMemcpyBatchAsync),
    DRV(cuMemcpyBatchAsync_ptsz),
    DRV(cuMemcpy3DBatchAsync),
    DRV(cuMemcpy3DBatchAsync_ptsz),
    DRV(cuMemcpyBatchAsync_v2),
    DRV(cuMemcpyBatchAsync_v2_ptsz),
    DRV(cuMemcpy3DBatchAsync_v2),
    DRV(cuMemcpy3DBatchAsync_v2_ptsz),
    /* sets */
    DRV(cuMemsetD8_v2),
    DRV(cuMemsetD16_v2),
    DRV(cuMemsetD32_v2),
    DRV(cuMemsetD2D8_v2),
    DRV(cuMemsetD2D16_v2),
    DRV(cuMemsetD2D32_v2),
    DRV(cuMemsetD8Async),
    DRV(cuMemsetD16Async),
    DRV(cuMemsetD32Async),
    DRV(cuMemsetD2D8Async),
    DRV(cuMemsetD2D16Async),
    DRV(cuMemsetD2D32Async),
    DRV(cuMemsetD8_v2_ptds),
    DRV(cuMemsetD16_v2_ptds),
    DRV(cuMemsetD32_v2_ptds),
    DRV(cuMemsetD2D8_v2_ptds),
    DRV(cuMemsetD2D16_v2_ptds),
    DRV(cuMemsetD2D32_v2_ptds),
    DRV(cuMemsetD8Async_ptsz),
    DRV(cuMemsetD16Async_ptsz),
    DRV(cuMemsetD32Async_ptsz),
    DRV(cuMemsetD2D8Async_ptsz),
    DRV(cuMemsetD2D16Async_ptsz),
    DRV(cuMemsetD2D32Async_ptsz),
};
/* clang-format on */

/* JIT compilation, module loading and context creation (issue 21: the phases of a run): recorded
 * as calls of their own (category JIT), one record at the call's exit. They are rare (a module
 * per compiled kernel, a context per device), so they cost nothing on the hot path, and they are
 * how the analyzer tells a GPU idle while Triton, Inductor or CuPy compile from one idle while
 * the CPU loads data. CUPTI's correlationData slot carries the entry time to the exit. */
static uint32_t jit_func_of(CUpti_CallbackId cbid)
{
    switch (cbid) {
    case DRV(cuModuleLoad):
        return GT_FN_cuModuleLoad;
    case DRV(cuModuleLoadData):
        return GT_FN_cuModuleLoadData;
    case DRV(cuModuleLoadDataEx):
        return GT_FN_cuModuleLoadDataEx;
    case DRV(cuModuleLoadFatBinary):
        return GT_FN_cuModuleLoadFatBinary;
    case DRV(cuLibraryLoadData):
        return GT_FN_cuLibraryLoadData;
    case DRV(cuLibraryLoadFromFile):
        return GT_FN_cuLibraryLoadFromFile;
    case DRV(cuLinkComplete):
        return GT_FN_cuLinkComplete;
    case DRV(cuCtxCreate):
    case DRV(cuCtxCreate_v2):
    case DRV(cuCtxCreate_v3):
    case DRV(cuCtxCreate_v4):
        return GT_FN_cuCtxCreate;
    case DRV(cuDevicePrimaryCtxRetain):
        return GT_FN_cuDevicePrimaryCtxRetain;
    default:
        return 0;
    }
}

static const uint16_t driver_jit_cbids[] = {
    DRV(cuModuleLoad),          DRV(cuModuleLoadData),  DRV(cuModuleLoadDataEx),
    DRV(cuModuleLoadFatBinary), DRV(cuLibraryLoadData), DRV(cuLibraryLoadFromFile),
    DRV(cuLinkComplete),        DRV(cuCtxCreate),       DRV(cuCtxCreate_v2),
    DRV(cuCtxCreate_v3),        DRV(cuCtxCreate_v4),    DRV(cuDevicePrimaryCtxRetain),
};

/* In the application's thread, inside its driver call. */
static void on_jit_call(const CUpti_CallbackData *cb, uint32_t func)
{
    if (!cb->correlationData)
        return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        *cb->correlationData = gt_now_ns();
        return;
    }
    uint64_t t0 = *cb->correlationData, t1 = gt_now_ns();
    gt_rec_api *rec = gt_record_begin(GT_REC_API, GT_RF_DRIVER, sizeof *rec);
    if (!rec)
        return; /* counted as lost by the core */
    rec->c.t_begin_ns = t0 && t0 <= t1 ? t0 : t1;
    rec->c.t_end_ns = t1;
    rec->c.func = func;
    rec->c.result = cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue : 0;
    rec->c.device = -1;
    gt_record_commit(rec);
}

/* In the application's thread, inside its CUDA call. */
static void write_anchor(const gt_cupti_tl_call *t, uint32_t corr)
{
    gt_rec_gpu_ext_corr *rec = gt_record_begin(GT_REC_GPU_EXT_CORR, 0, sizeof *rec);
    if (!rec)
        return; /* counted as lost by the core */
    rec->external_id = t->id;
    rec->corr_id = gt_cupti_corr(corr);
    rec->ext_kind =
        t->anchor_site == 1 ? GT_EXT_CORR_KIND_ANCHOR_BEGIN : GT_EXT_CORR_KIND_ANCHOR_END;
    rec->pad = 0;
    gt_record_commit(rec);
}

/* ------------------------------------------------------------------ a static runtime's launches */

static _Atomic(gt_cupti_unseen_call_fn) unseen_hook;

void gt_cupti_set_unseen_call_hook(gt_cupti_unseen_call_fn fn)
{
    atomic_store(&unseen_hook, fn);
}

static gt_cupti_unseen_call_fn gt_cupti_unseen_call_hook(void)
{
    return atomic_load_explicit(&unseen_hook, memory_order_acquire);
}

/* The runtime entry points that put work on the GPU whose calls a static runtime's are recorded
 * for: the launches and the memsets (2D and 3D sets stay CUPTI API records). */
static const struct {
    uint16_t cbid, flags; /* flags: GT_RF_PTDS for a _ptsz/_ptds entry point */
    uint32_t func;        /* GT_FN_* */
} runtime_work[] = {
    {RT(__cudaLaunchKernel_v13000), 0, GT_FN___cudaLaunchKernel},
    {RT(__cudaLaunchKernel_ptsz_v13000), GT_RF_PTDS, GT_FN___cudaLaunchKernel},
    {RT(cudaLaunch_v3020), 0, GT_FN_cudaLaunchKernel},
    {RT(cudaLaunch_ptsz_v7000), GT_RF_PTDS, GT_FN_cudaLaunchKernel},
    {RT(cudaLaunchKernel_v7000), 0, GT_FN_cudaLaunchKernel},
    {RT(cudaLaunchKernel_ptsz_v7000), GT_RF_PTDS, GT_FN_cudaLaunchKernel},
    {RT(cudaLaunchKernelExC_v11060), 0, GT_FN_cudaLaunchKernelExC},
    {RT(cudaLaunchKernelExC_ptsz_v11060), GT_RF_PTDS, GT_FN_cudaLaunchKernelExC},
    {RT(cudaLaunchCooperativeKernel_v9000), 0, GT_FN_cudaLaunchCooperativeKernel},
    {RT(cudaLaunchCooperativeKernel_ptsz_v9000), GT_RF_PTDS, GT_FN_cudaLaunchCooperativeKernel},
    {RT(cudaLaunchCooperativeKernelMultiDevice_v9000), 0, GT_FN_cudaLaunchCooperativeKernel},
    {RT(cudaMemset_v3020), 0, GT_FN_cudaMemset},
    {RT(cudaMemset_ptds_v7000), GT_RF_PTDS, GT_FN_cudaMemset},
    {RT(cudaMemsetAsync_v3020), 0, GT_FN_cudaMemsetAsync},
    {RT(cudaMemsetAsync_ptsz_v7000), GT_RF_PTDS, GT_FN_cudaMemsetAsync},
};

/* The entry point of runtime_work a cbid is (0: none), and its flags. */
static uint32_t work_func_of(CUpti_CallbackId cbid, uint16_t *flags)
{
    for (size_t i = 0; i < sizeof runtime_work / sizeof *runtime_work; i++)
        if (runtime_work[i].cbid == cbid) {
            *flags = runtime_work[i].flags;
            return runtime_work[i].func;
        }
    *flags = 0;
    return 0;
}

static void set_dims(gt_cupti_unseen_call *l, dim3 g, dim3 b)
{
    l->grid[0] = g.x, l->grid[1] = g.y, l->grid[2] = g.z;
    l->block[0] = b.x, l->block[1] = b.y, l->block[2] = b.z;
}

/* The launch configuration, from the parameter structs CUPTI documents
 * (generated_cuda_runtime_api_meta.h); __cudaLaunchKernel has none there: its launches keep zeros
 * (the kernel's own record has its grid and block). */
static void read_params(gt_cupti_unseen_call *l, CUpti_CallbackId cbid, const void *params)
{
    if (!params)
        return;
    switch (cbid) {
    case RT(cudaLaunchKernel_v7000):
    case RT(cudaLaunchKernel_ptsz_v7000): {
        const cudaLaunchKernel_v7000_params *p = params;
        l->function = p->func;
        set_dims(l, p->gridDim, p->blockDim);
        l->shared_mem = p->sharedMem;
        l->stream = (uint64_t)(uintptr_t)p->stream;
        break;
    }
    case RT(cudaLaunchCooperativeKernel_v9000):
    case RT(cudaLaunchCooperativeKernel_ptsz_v9000): {
        const cudaLaunchCooperativeKernel_v9000_params *p = params;
        l->function = p->func;
        set_dims(l, p->gridDim, p->blockDim);
        l->shared_mem = p->sharedMem;
        l->stream = (uint64_t)(uintptr_t)p->stream;
        break;
    }
    case RT(cudaLaunchKernelExC_v11060):
    case RT(cudaLaunchKernelExC_ptsz_v11060): {
        const cudaLaunchKernelExC_v11060_params *p = params;
        l->function = p->func;
        if (p->config) {
            set_dims(l, p->config->gridDim, p->config->blockDim);
            l->shared_mem = p->config->dynamicSmemBytes;
            l->stream = (uint64_t)(uintptr_t)p->config->stream;
        }
        break;
    }
    case RT(cudaMemsetAsync_v3020):
    case RT(cudaMemsetAsync_ptsz_v7000):
        l->stream = (uint64_t)(uintptr_t)((const cudaMemsetAsync_v3020_params *)params)->stream;
        l->is_async = true; /* the rest as cudaMemset's (the same head) */
        /* fall through */
    case RT(cudaMemset_v3020):
    case RT(cudaMemset_ptds_v7000): {
        const cudaMemset_v3020_params *p = params;
        l->is_memset = true;
        l->ptr = (uint64_t)(uintptr_t)p->devPtr;
        l->value = p->value;
        l->bytes = p->count;
        break;
    }
    default:
        break;
    }
}
_Static_assert(offsetof(cudaMemsetAsync_v3020_params, count) ==
                       offsetof(cudaMemset_v3020_params, count) &&
                   offsetof(cudaMemsetAsync_ptsz_v7000_params, count) ==
                       offsetof(cudaMemset_v3020_params, count) &&
                   offsetof(cudaMemset_ptds_v7000_params, count) ==
                       offsetof(cudaMemset_v3020_params, count),
               "the memsets' parameter structs begin alike");

/* The allocation entry point of a cbid (NULL: not one of runtime_allocs). */
static const alloc_entry *alloc_entry_of(CUpti_CallbackId cbid)
{
    for (size_t i = 0; i < sizeof runtime_allocs / sizeof *runtime_allocs; i++)
        if (runtime_allocs[i].cbid == cbid)
            return &runtime_allocs[i];
    return NULL;
}

/* cudaMalloc's, cudaMallocHost's, cudaHostAlloc's and cudaMallocAsync's parameter structs
 * (generated_cuda_runtime_api_meta.h) begin alike: where to put the pointer, then the size. */
typedef struct alloc_params_head {
    void **ptr;
    size_t size;
} alloc_params_head;
#define SAME_HEAD(T, ptr_field)                                                                    \
    _Static_assert(offsetof(T, ptr_field) == offsetof(alloc_params_head, ptr) &&                   \
                       offsetof(T, size) == offsetof(alloc_params_head, size),                     \
                   #T " begins as alloc_params_head")
SAME_HEAD(cudaMalloc_v3020_params, devPtr);
SAME_HEAD(cudaMallocHost_v3020_params, ptr);
SAME_HEAD(cudaHostAlloc_v3020_params, pHost);
SAME_HEAD(cudaMallocAsync_v11020_params, devPtr);

/* The pointer and size of an allocation (its pointer once it succeeded), the pointer of a free. */
static void read_alloc_params(gt_cupti_unseen_call *a, CUpti_CallbackId cbid, const void *params)
{
    if (!params)
        return;
    bool ok = a->result == 0;
    switch (cbid) {
    case RT(cudaMallocAsync_v11020):
    case RT(cudaMallocAsync_ptsz_v11020):
        a->stream = (uint64_t)(uintptr_t)((const cudaMallocAsync_v11020_params *)params)->hStream;
        /* fall through */
    case RT(cudaMalloc_v3020):
    case RT(cudaMallocHost_v3020):
    case RT(cudaHostAlloc_v3020): {
        const alloc_params_head *p = params;
        a->bytes = p->size;
        a->ptr = ok && p->ptr ? (uint64_t)(uintptr_t)*p->ptr : 0;
        break;
    }
    case RT(cudaMallocPitch_v3020): {
        const cudaMallocPitch_v3020_params *p = params;
        bool got = ok && p->devPtr && p->pitch;
        a->bytes = got ? *p->pitch * p->height : p->width * p->height;
        a->ptr = got ? (uint64_t)(uintptr_t)*p->devPtr : 0;
        break;
    }
    case RT(cudaFree_v3020):
        a->ptr = (uint64_t)(uintptr_t)((const cudaFree_v3020_params *)params)->devPtr;
        break;
    case RT(cudaFreeHost_v3020):
        a->ptr = (uint64_t)(uintptr_t)((const cudaFreeHost_v3020_params *)params)->ptr;
        break;
    case RT(cudaFreeAsync_v11020):
    case RT(cudaFreeAsync_ptsz_v11020): {
        const cudaFreeAsync_v11020_params *p = params;
        a->ptr = (uint64_t)(uintptr_t)p->devPtr;
        a->stream = (uint64_t)(uintptr_t)p->hStream;
        break;
    }
    default:
        break;
    }
}

/* A static runtime's allocation or free outside any wrapped call: recorded at its exit as the
 * allocation wrappers record theirs (a free's size is unknown: the runtime does not say). */
static void on_unseen_alloc(const CUpti_CallbackData *cb, CUpti_CallbackId cbid,
                            gt_cupti_unseen_call_fn hook)
{
    if (!cb->correlationData)
        return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        *cb->correlationData = gt_now_ns();
        return;
    }
    uint64_t t1 = gt_now_ns(), t0 = *cb->correlationData;
    const alloc_entry *e = alloc_entry_of(cbid);
    if (!e)
        return;
    gt_cupti_unseen_call a = {.t_begin_ns = t0 && t0 <= t1 ? t0 : t1,
                              .t_end_ns = t1,
                              .func = e->func,
                              .flags = e->flags,
                              .is_alloc = true,
                              .is_free = e->is_free,
                              .alloc_kind = e->kind};
    a.result = cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue : 0;
    read_alloc_params(&a, cbid, cb->functionParams);
    hook(&a);
}

/* Managed memory (issue 30): CUPTI's unified-memory counters come on at the first allocation
 * (gt_cupti_um.c); a static runtime's allocation, which no wrapper saw, is recorded as a call. */
static void on_managed_alloc(const CUpti_CallbackData *cb, const gt_cupti_tl_call *t)
{
    if (!cb->correlationData)
        return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        *cb->correlationData = gt_now_ns();
        return;
    }
    int32_t r = cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue : 0;
    if (r == 0)
        gt_cupti_note_managed_memory();
    gt_cupti_unseen_call_fn hook = gt_cupti_unseen_call_hook();
    if (t->id || !hook || !atomic_load_explicit(&gt_cupti_static_runtime, memory_order_relaxed))
        return; /* a wrapped cudaMallocManaged records itself */
    uint64_t t1 = gt_now_ns(), t0 = *cb->correlationData;
    const cuMemAllocManaged_params *p = cb->functionParams;
    gt_cupti_unseen_call a = {.t_begin_ns = t0 && t0 <= t1 ? t0 : t1,
                              .t_end_ns = t1,
                              .func = GT_FN_cudaMallocManaged,
                              .result = r,
                              .is_alloc = true,
                              .alloc_kind = GT_ALLOC_MANAGED};
    if (p) {
        a.bytes = p->bytesize;
        a.ptr = r == 0 && p->dptr ? (uint64_t)*p->dptr : 0;
    }
    hook(&a);
}

/* A launch (or memset) of a static runtime outside any wrapped call: recorded at its exit as a
 * call of its own (the wrap module's hook), paired with CUPTI's correlation id of the call like a
 * wrapped one. correlationData carries the entry time to the exit. */
static void on_unseen_launch(const CUpti_CallbackData *cb, CUpti_CallbackId cbid, uint32_t func,
                             uint16_t flags, gt_cupti_unseen_call_fn hook)
{
    if (!cb->correlationData)
        return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        *cb->correlationData = gt_now_ns();
        return;
    }
    uint64_t t1 = gt_now_ns(), t0 = *cb->correlationData;
    gt_cupti_unseen_call l = {.t_begin_ns = t0 && t0 <= t1 ? t0 : t1,
                              .t_end_ns = t1,
                              .func = func,
                              .flags = flags,
                              .symbol = cb->symbolName};
    l.result = cb->functionReturnValue ? *(const int32_t *)cb->functionReturnValue : 0;
    /* a memset whatever CUPTI hands over of its parameters: never recorded as a launch */
    l.is_memset = func == GT_FN_cudaMemset || func == GT_FN_cudaMemsetAsync;
    read_params(&l, cbid, cb->functionParams);
    uint64_t id = hook(&l);
    if (!id)
        return;
    gt_rec_gpu_ext_corr *rec = gt_record_begin(GT_REC_GPU_EXT_CORR, 0, sizeof *rec);
    if (!rec)
        return; /* counted as lost by the core */
    rec->external_id = id;
    rec->corr_id = gt_cupti_corr(cb->correlationId);
    rec->ext_kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    rec->pad = 0;
    gt_record_commit(rec);
}

static bool is_detach_site(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

/* The outermost wrapped call of this thread that launches work and began while CUPTI took no ids
 * (gt_cupti.h). CUPTI may attach while it runs: its entry callback then pairs with this id, or
 * its exit callback when the entry came first; without that its copy, the first GPU record of the
 * attach, led nowhere. */
static _Thread_local struct {
    uint64_t id;
    uint32_t last_corr;
} tl_unpaired __attribute__((tls_model("initial-exec")));

void gt_cupti_unpaired_begin(uint64_t call_id)
{
    if (tl_unpaired.id)
        return; /* nested: the outer call's */
    tl_unpaired.id = call_id;
    tl_unpaired.last_corr = 0;
}

void gt_cupti_unpaired_end(uint64_t call_id)
{
    if (tl_unpaired.id == call_id)
        tl_unpaired.id = 0;
}

static void CUPTIAPI on_api_call(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *cbdata)
{
    (void)userdata;
    const CUpti_CallbackData *cb = cbdata;
    int link = atomic_load_explicit(&gt_cupti_link, memory_order_acquire);
    if (link == GT_LINK_DETACH_ARMED || link == GT_LINK_DETACHING) {
        if (link == GT_LINK_DETACH_ARMED && cb->callbackSite == CUPTI_API_EXIT &&
            is_detach_site(domain, cbid))
            gt_cupti_detach_in_callback(); /* recording is paused: nothing else to do here */
        return;
    }
    gt_cupti_tl_call *t = &gt_cupti_tl_call_state;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == DRV(cuMemAllocManaged)) {
        on_managed_alloc(cb, t);
        return;
    }
    uint32_t jit = domain == CUPTI_CB_DOMAIN_DRIVER_API ? jit_func_of(cbid) : 0;
    if (jit) {
        on_jit_call(cb, jit);
        return;
    }
    if (!t->id && domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
        atomic_load_explicit(&gt_cupti_static_runtime, memory_order_relaxed)) {
        uint16_t flags;
        uint32_t func = work_func_of(cbid, &flags);
        gt_cupti_unseen_call_fn hook = gt_cupti_unseen_call_hook();
        if (func && hook)
            on_unseen_launch(cb, cbid, func, flags, hook);
        else if (hook)
            on_unseen_alloc(cb, cbid, hook);
        return;
    }
    if (t->anchor_site) {
        if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == GT_CUPTI_ANCHOR_CBID &&
            cb->callbackSite == CUPTI_API_ENTER)
            write_anchor(t, cb->correlationId);
        return;
    }
    uint64_t call_id = t->id;
    uint32_t *last_corr = &t->last_corr;
    if (!call_id) { /* maybe a call that began before CUPTI attached */
        call_id = tl_unpaired.id;
        last_corr = &tl_unpaired.last_corr;
    } else if (!t->by_callbacks) {
        return;
    }
    /* One pair per call, at its entry; at its exit only when the entry came before the
     * callbacks did (an attach while the call ran). */
    if (!call_id || cb->correlationId == *last_corr ||
        (cb->callbackSite != CUPTI_API_ENTER && *last_corr))
        return;
    *last_corr = cb->correlationId;
    uint16_t flags = domain == CUPTI_CB_DOMAIN_DRIVER_API ? GT_RF_DRIVER : 0;
    gt_rec_gpu_ext_corr *rec = gt_record_begin(GT_REC_GPU_EXT_CORR, flags, sizeof *rec);
    if (!rec)
        return; /* counted as lost by the core */
    rec->external_id = call_id;
    rec->corr_id = gt_cupti_corr(cb->correlationId);
    rec->ext_kind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
    rec->pad = 0;
    gt_record_commit(rec);
}

/* Enables (or disables) what this CUPTI knows of the list (an older one lacks the newest cbids). */
static size_t enable_list(uint32_t on, CUpti_CallbackDomain domain, const uint16_t *cbids, size_t n)
{
    size_t enabled = 0;
    for (size_t i = 0; i < n; i++)
        if (gt_cupti.EnableCallback(on, subscriber, domain, cbids[i]) == CUPTI_SUCCESS)
            enabled++;
    return enabled;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* The callbacks of runtime_allocs (a static runtime's: enable_selected). */
static size_t enable_allocs(uint32_t on)
{
    size_t enabled = 0;
    for (size_t i = 0; i < COUNT(runtime_allocs); i++)
        if (gt_cupti.EnableCallback(on, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    runtime_allocs[i].cbid) == CUPTI_SUCCESS)
            enabled++;
    return enabled;
}

/* Kernel launches get callbacks only when the kernels' queued timestamps cannot link them. */
static atomic_bool launches_by_callbacks;

/* The entry points GPUTRACE_CUPTI_CALLBACKS selects: auto (default: graph launches, copies and
 * sets, plus kernel launches while queued timestamps are missing), 1 every entry point, runtime
 * (the runtime domain), or one entry point that applications hardly call (cost measurements). */
static void enable_selected(uint32_t on, size_t *rt, size_t *drv)
{
    int mode = gt_core_config()->cupti_callbacks;
    static const uint16_t probe_cbid[] = {RT(cudaRuntimeGetVersion_v3020)};
    if (mode == GT_CUPTI_CB_PROBE) {
        *rt = enable_list(on, CUPTI_CB_DOMAIN_RUNTIME_API, probe_cbid, 1);
        return;
    }
    bool launches = mode != GT_CUPTI_CB_AUTO || atomic_load(&launches_by_callbacks);
    *drv = enable_list(on, CUPTI_CB_DOMAIN_DRIVER_API, driver_jit_cbids, COUNT(driver_jit_cbids));
    static const uint16_t managed_cbid[] = {DRV(cuMemAllocManaged)};
    if (gt_core_config()->um_mode != GT_UM_OFF) /* rare: one per managed allocation */
        *drv += enable_list(on, CUPTI_CB_DOMAIN_DRIVER_API, managed_cbid, 1);
    *rt = enable_list(on, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbids, COUNT(runtime_cbids));
    static const uint16_t anchor_cbid[] = {GT_CUPTI_ANCHOR_CBID};
    if (gt_core_config()->cupti_anchors)
        *rt += enable_list(on, CUPTI_CB_DOMAIN_RUNTIME_API, anchor_cbid, 1);
    if (launches)
        *rt += enable_list(on, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launch_cbids,
                           COUNT(runtime_launch_cbids));
    if (atomic_load(&gt_cupti_static_runtime))
        *rt += enable_allocs(on);
    if (mode == GT_CUPTI_CB_RUNTIME)
        return;
    *drv += enable_list(on, CUPTI_CB_DOMAIN_DRIVER_API, driver_cbids, COUNT(driver_cbids));
    if (launches)
        *drv += enable_list(on, CUPTI_CB_DOMAIN_DRIVER_API, driver_launch_cbids,
                            COUNT(driver_launch_cbids));
}

/* The child of a fork makes no CUPTI call and pairs nothing: its thread state came from the
 * forking thread's call in progress (called by gt_cupti.c's fork hook). */
void gt_cupti_callbacks_reset_after_fork(void)
{
    atomic_store(&gt_cupti_cb_active, false);
    gt_cupti_tl_call_state = (gt_cupti_tl_call){0};
    tl_unpaired.id = 0;
}

CUptiResult gt_cupti_callbacks_start(bool queued_timestamps)
{
    /* anchors link library kernels; the analyzer matches the runtime launches by name and order */
    atomic_store(&launches_by_callbacks, (!queued_timestamps && !gt_core_config()->cupti_anchors) ||
                                             atomic_load(&gt_cupti_static_runtime));
    if (!gt_cupti.Subscribe || !gt_cupti.EnableCallback) {
        gt_debug("libcupti has no callback API: external correlation by pushed ids only");
        return CUPTI_SUCCESS;
    }
    if (!gt_core_config()->cupti_callbacks) {
        gt_debug("GPUTRACE_CUPTI_CALLBACKS=0: GPU work is not linked to the calls that caused it");
        return CUPTI_SUCCESS;
    }
    CUptiResult r = GT_CUPTI_CALL(gt_cupti.Subscribe(&subscriber, on_api_call, NULL));
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return r;
    if (r != CUPTI_SUCCESS) {
        subscriber = NULL;
        gt_debug("CUPTI callbacks unavailable (%s): external correlation by pushed ids only",
                 gt_cupti_result_string(r));
        return CUPTI_SUCCESS; /* the kinds will tell whether CUPTI works at all */
    }
    size_t rt = 0, drv = 0;
    enable_selected(1, &rt, &drv);
    if (!rt && !drv) {
        gt_debug("CUPTI callbacks could not be enabled (runtime %zu, driver %zu): external "
                 "correlation by pushed ids only",
                 rt, drv);
        gt_cupti_callbacks_stop();
        return CUPTI_SUCCESS;
    }
    atomic_store(&gt_cupti_cb_active, true);
    gt_debug("CUPTI callbacks on %zu runtime and %zu driver entry points link GPU work to calls",
             rt, drv);
    return CUPTI_SUCCESS;
}

void gt_cupti_callbacks_set(bool on)
{
    if (!subscriber || !atomic_load(&gt_cupti_cb_active))
        return;
    size_t rt = 0, drv = 0;
    enable_selected(on, &rt, &drv);
}

/* Kernels came without queued timestamps (a CUPTI that ignores the setting, or CUDA started before
 * gputrace): from now on kernel launches are linked by callbacks. Returns true when it switched. */
bool gt_cupti_callbacks_link_launches(bool callbacks_on_now)
{
    if (atomic_exchange(&launches_by_callbacks, true) || !subscriber)
        return false;
    if (callbacks_on_now && gt_core_config()->cupti_callbacks == GT_CUPTI_CB_AUTO) {
        enable_list(1, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_launch_cbids,
                    COUNT(runtime_launch_cbids));
        enable_list(1, CUPTI_CB_DOMAIN_DRIVER_API, driver_launch_cbids, COUNT(driver_launch_cbids));
    }
    if (callbacks_on_now && atomic_load(&gt_cupti_static_runtime))
        enable_allocs(1);
    return true;
}

bool gt_cupti_callbacks_held(void)
{
    return subscriber && atomic_load(&gt_cupti_cb_active);
}

void gt_cupti_callbacks_stop(void)
{
    atomic_store(&gt_cupti_cb_active, false);
    if (subscriber && gt_cupti.Unsubscribe)
        GT_CUPTI_CALL(gt_cupti.Unsubscribe(subscriber));
    subscriber = NULL;
    subscribed_to_detach = false;
}

/* The calls at whose return the detach is made: the context-wide syncs (gt_cupti_internal.h). */
static const uint16_t detach_runtime_cbids[] = {RT(cudaDeviceSynchronize_v3020),
                                                RT(cudaThreadSynchronize_v3020)};
static const uint16_t detach_driver_cbids[] = {DRV(cuCtxSynchronize), DRV(cuCtxSynchronize_v2)};

static bool is_detach_site(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    const uint16_t *ids =
        domain == CUPTI_CB_DOMAIN_RUNTIME_API ? detach_runtime_cbids : detach_driver_cbids;
    size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? COUNT(detach_runtime_cbids)
                                                     : COUNT(detach_driver_cbids);
    for (size_t i = 0; i < n; i++)
        if (ids[i] == cbid)
            return true;
    return false;
}

bool gt_cupti_callbacks_arm_detach(void)
{
    if (!subscriber) { /* GPUTRACE_CUPTI_CALLBACKS=0, or callbacks unavailable at attach */
        if (!gt_cupti.Subscribe || !gt_cupti.EnableCallback ||
            GT_CUPTI_CALL(gt_cupti.Subscribe(&subscriber, on_api_call, NULL)) != CUPTI_SUCCESS) {
            subscriber = NULL;
            return false;
        }
        subscribed_to_detach = true;
    }
    size_t n =
        enable_list(1, CUPTI_CB_DOMAIN_RUNTIME_API, detach_runtime_cbids,
                    COUNT(detach_runtime_cbids)) +
        enable_list(1, CUPTI_CB_DOMAIN_DRIVER_API, detach_driver_cbids, COUNT(detach_driver_cbids));
    if (!n)
        gt_cupti_callbacks_disarm_detach();
    return n > 0;
}

void gt_cupti_callbacks_disarm_detach(void)
{
    if (!subscriber)
        return;
    enable_list(0, CUPTI_CB_DOMAIN_RUNTIME_API, detach_runtime_cbids, COUNT(detach_runtime_cbids));
    enable_list(0, CUPTI_CB_DOMAIN_DRIVER_API, detach_driver_cbids, COUNT(detach_driver_cbids));
    if (subscribed_to_detach) {
        if (gt_cupti.Unsubscribe)
            GT_CUPTI_CALL(gt_cupti.Unsubscribe(subscriber));
        subscriber = NULL;
        subscribed_to_detach = false;
    }
}
