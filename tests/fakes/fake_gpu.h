/* fake_gpu.h — how the fake CUDA libraries simulate a GPU for tests (no GPU needed).
 *
 * The fake libcudart.so.13 owns a simulated device: every kernel launch, copy, set and
 * synchronisation it is asked for becomes a fake_gpu_op with deterministic timestamps
 * (CLOCK_REALTIME, like CUPTI). It exports two extra (non-CUDA) symbols:
 *   - fake_gpu_emit(op): the fake cuDNN/cuBLAS use it to "launch" their own kernels, the way the
 * real ones launch through their static runtime (never through the public cuda* API, so gputrace's
 *     runtime wrappers do not see them);
 *   - fake_gpu_set_listener(fn, ctx): the fake libcupti registers itself to hear every op, in the
 *     calling thread, at the moment of the API call (so it knows the external correlation id pushed
 *     then), and turns them into real CUpti_Activity* records;
 *   - fake_gpu_stream_id(stream): the CUPTI stream id of a cudaStream_t (the default streams: 7),
 *     for the fake libraries' kernels on their handle's stream.
 * Both are found with dlopen("libcudart.so.13", RTLD_NOLOAD) + dlsym.
 *
 * Managed memory (cudaMallocManaged) starts on the host. A kernel launched while some is on the
 * host faults it over: one GPU page fault (20 us of fault service) and a host-to-device migration
 * per allocation (10 GB/s), during which the kernel stalls (it ends that much later).
 * cudaMemPrefetchAsync moves a range ahead (a migration of cause USER, no fault);
 * fake_gpu_um_host_touch(p) stands for the CPU touching memory the GPU holds (a CPU page fault and
 * a device-to-host migration). Every such event is a FAKE_OP_UM. */
#ifndef FAKE_GPU_H
#define FAKE_GPU_H

#include <stdint.h>

enum fake_op_kind {
    FAKE_OP_KERNEL = 1,
    FAKE_OP_MEMCPY = 2,
    FAKE_OP_MEMSET = 3,
    FAKE_OP_SYNC = 4,        /* a blocking synchronisation (stream, device, event) */
    FAKE_OP_API = 5,         /* any runtime API call (for CUPTI runtime API records) */
    FAKE_OP_DRIVER_CALL = 6, /* a driver call (cbid: CUpti_driver_api_trace_cbid) that puts no
                              * work on the GPU, e.g. cuModuleLoadData: CUPTI's driver
                              * callbacks see it, taking end_ns - start_ns */
    FAKE_OP_UM = 7,          /* a unified-memory event (um_kind: a
                              * CUpti_ActivityUnifiedMemoryCounterKind; bytes: its value) */
};

typedef struct fake_gpu_op {
    int kind;          /* fake_op_kind */
    uint64_t start_ns; /* GPU start (or API enter for FAKE_OP_API) */
    uint64_t end_ns;
    uint32_t correlation_id; /* CUPTI-style id of the API call that caused it */
    uint32_t device;
    uint32_t stream;
    const char *name; /* kernel (mangled) or API function name */
    uint32_t grid[3], block[3];
    uint64_t bytes;
    int copy_kind;          /* CUpti_ActivityMemcpyKind */
    int src_kind, dst_kind; /* CUpti_ActivityMemoryKind */
    int is_async;
    int sync_type; /* CUpti_ActivitySynchronizationType */
    uint32_t cbid; /* CUpti_runtime_api_trace_cbid for FAKE_OP_API */
    /* FAKE_OP_API of a launch (cudaLaunchKernel_v7000): the kernel's name, which the fake CUPTI
     * hands the callbacks as symbolName with the call's parameters (grid, block, stream), the
     * way a static runtime's launch looks to CUPTI */
    const char *symbol;
    /* FAKE_OP_DRIVER_CALL, or FAKE_OP_API of a static runtime's call (cudaMalloc_v3020...): the
     * call's parameter struct, handed to the callbacks; such a call takes end_ns - start_ns */
    const void *params;
    /* FAKE_OP_UM */
    int um_kind;
    uint64_t address;
    uint32_t um_src, um_dst, um_flags;
} fake_gpu_op;

typedef void (*fake_gpu_listener)(const fake_gpu_op *op, void *ctx);

void fake_gpu_emit(const fake_gpu_op *op);
void fake_gpu_set_listener(fake_gpu_listener fn, void *ctx);
uint32_t fake_gpu_stream_id(void *stream); /* a cudaStream_t */

/* Failure injection (environment, read by each fake at load):
 *   FAKE_CUDA_FAIL=<function>[:<nth>]  make that call return an error (every call, or the nth)
 *   FAKE_CUDA_NO_DEVICE=1              cudaGetDeviceCount -> 0 / cudaErrorNoDevice
 *   FAKE_CUPTI_NO_DRIVER=1             CUPTI calls return CUPTI_ERROR_UNKNOWN
 *   FAKE_CUPTI_OTHER_SUBSCRIBER=1      cuptiSubscribe/ActivityEnable report a second subscriber
 *   FAKE_CUPTI_DROP=<n>                report n dropped records
 *   FAKE_KERNEL_NS=<n>                 the fake cudart's kernels take n ns (default 5000) */

#endif
