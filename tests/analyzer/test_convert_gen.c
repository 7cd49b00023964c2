/* test_convert_gen.c — writes small synthetic .gtrace files (golden inputs) for the convert tests:
 *   basic.gtrace        one process: two threads, allocations, a pageable copy, launches, a cuDNN
 *                       execute with two kernels (plan + conv signature), a stream sync stall,
 * NVTX, an overlap on a GPU stream, lost records, a call-site stack (Python frames over a native
 * frame of a library missing here) on the stall and a stack id the table lacks on the worker's call
 *   rank0/rank1.gtrace  two ranks of one job with the same pid (a merge on one timeline)
 *   queued.gtrace       kernels without callback pairs, linked by their queued time: to a launch,
 *                       to a cuDNN call, one written before its launch (waits for it), one in no
 *                       call, one held by library calls of two threads (ambiguous)
 *   foreign.gtrace      callback pairs of other tools' kinds (the PyTorch profiler's CUSTOM0/1)
 * beside one of ours: only ours link (one names an id that is also one of our calls)
 *   siblings.gtrace     anchors and launch order: a cuDNN execute whose two module loads (JIT
 *                       calls, recorded before it) sit inside it, its memset and kernels starting
 * before the first load ends; a second thread's memset and launch inside the execute's anchors
 * (their pair, launch order)
 *   um.gtrace           unified memory (issue 30): a managed allocation, kernels on two GPUs, each
 *                       faulting managed pages over (a GPU fault, then an on-demand HtoD migration
 * that overlaps it), a prefetch, CPU faults and a DtoH migration, thrashing and throttling
 *   long.gtrace         a long run for convert --max-mb: 2000 NVTX steps "train_step" of 10 ms
 *                       (step 1200 takes 40 ms: the slowest), 15 launches and kernels each
 *   heavy.gtrace        600 steps of long.gtrace whose every launch has a kernel of its own
 *                       long name: a step takes several times the bytes its records suggest
 *   job/                convert --ranks: ranks 0-3 of a job (pids 200-203), a DataLoader worker
 *                       of rank 1 with no rank of its own (pid 301, forked by 201), a worker of
 * rank 2 that kept RANK (pid 302), the launcher (pid 150, no rank, the ranks' parent) and a
 * process of another host whose ppid is 201 (pid 401, no rank: not a child of rank 1)
 *   moved_wait.gtrace   a device sync that waited for a kernel whose slice must move past the
 *                       sync's end (four kernels of its stream overlap it, every lane busy)
 *   truncated.gtrace    basic.gtrace cut in the middle of its last chunk
 *   not_a_trace.gtrace  text
 * usage: test_convert_gen OUTDIR */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gt_test_writer.h"
#include "gtrace_api.h"

#define T0 1700000000000000000ull /* realtime of the recording start */
#define BOOT0 5000000000000ull

static gt_test_writer W;

static void die(const char *what)
{
    fprintf(stderr, "test_convert_gen: %s failed\n", what);
    exit(1);
}

static void add(uint16_t kind, const void *body, uint32_t size)
{
    if (gt_test_writer_add(&W, kind, 0, body, size) != 0)
        die("gt_test_writer_add");
}

static void open_trace_flags(const char *dir, const char *name, int32_t pid, int32_t rank,
                             uint32_t flags)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = pid;
    h.ppid = 1;
    h.start_realtime_ns = (int64_t)T0;
    h.start_monotonic_ns = 4000000000000;
    h.start_boottime_ns = (int64_t)BOOT0;
    h.rank = rank;
    h.local_rank = rank;
    h.world_size = rank >= 0 ? 2 : -1;
    snprintf(h.host, sizeof h.host, "testhost");
    h.runtime.device_count = 1;
    h.runtime.cupti_state = GT_CUPTI_ACTIVE;
    h.flags = flags;
    static const char cmd[] = "python\0train.py\0--epochs\0001";
    if (gt_test_writer_open(&W, path, &h, "/usr/bin/python3", cmd, sizeof cmd) != 0)
        die("gt_test_writer_open");
}

static void open_trace(const char *dir, const char *name, int32_t pid, int32_t rank)
{
    open_trace_flags(dir, name, pid, rank, 0);
}

static gt_api_common api(uint32_t func, uint64_t b, uint64_t e, uint64_t corr, uint64_t stream)
{
    gt_api_common c = {.t_begin_ns = T0 + b,
                       .t_end_ns = T0 + e,
                       .corr_id = corr,
                       .stream = stream,
                       .func = func,
                       .result = 0,
                       .device = 0};
    return c;
}

static void launch(uint64_t b, uint64_t e, uint64_t corr, uint32_t name_id)
{
    gt_rec_api_launch l = {.c = api(GT_FN_cudaLaunchKernel, b, e, corr, 0x55),
                           .name_id = name_id,
                           .grid = {128, 1, 1},
                           .block = {256, 1, 1}};
    add(GT_REC_API_LAUNCH, &l, sizeof l);
}

/* q: the queued time (0: none, as recorded before format 1.1 or with callback pairs only). */
static void kernel_q(uint64_t b, uint64_t e, uint64_t corr, uint32_t name_id, uint32_t stream,
                     uint64_t q)
{
    gt_rec_gpu_kernel k = {.start_ns = T0 + b,
                           .end_ns = T0 + e,
                           .corr_id = corr,
                           .name_id = name_id,
                           .device = 0,
                           .stream = stream,
                           .grid = {128, 1, 1},
                           .block = {256, 1, 1},
                           .registers = 32,
                           .queued_ns = q ? T0 + q : 0,
                           .submitted_ns = q ? T0 + q + 100 : 0};
    add(GT_REC_GPU_KERNEL, &k, sizeof k);
}

static void kernel(uint64_t b, uint64_t e, uint64_t corr, uint32_t name_id, uint32_t stream)
{
    kernel_q(b, e, corr, name_id, stream, 0);
}

static void kernel_queued(uint64_t b, uint64_t e, uint64_t corr, uint32_t name_id, uint64_t q)
{
    kernel_q(b, e, corr, name_id, 7, q);
}

static void ext(uint64_t cupti, uint64_t ours)
{
    gt_rec_gpu_ext_corr x = {
        .external_id = ours, .corr_id = cupti, .ext_kind = GT_EXT_CORR_KIND_OURS};
    add(GT_REC_GPU_EXT_CORR, &x, sizeof x);
}

static void ext_of_kind(uint64_t cupti, uint64_t external, uint32_t kind)
{
    gt_rec_gpu_ext_corr x = {.external_id = external, .corr_id = cupti, .ext_kind = kind};
    add(GT_REC_GPU_EXT_CORR, &x, sizeof x);
}

static void nvtx(uint32_t kind, uint64_t t, uint32_t name_id)
{
    gt_rec_nvtx n = {.t_ns = T0 + t, .nvtx_kind = kind, .name_id = name_id};
    add(GT_REC_NVTX, &n, sizeof n);
}

static void alloc(uint32_t func, uint64_t b, uint64_t e, uint64_t ptr, uint64_t bytes,
                  uint32_t kind, int is_free)
{
    gt_rec_api_alloc a = {.c = api(func, b, e, 0, 0),
                          .ptr = ptr,
                          .bytes = bytes,
                          .alloc_kind = kind,
                          .is_free = (uint32_t)is_free};
    add(GT_REC_API_ALLOC, &a, sizeof a);
}

/* Stack 1: a native frame in a library that is not on this machine, then the Python frames
 * (innermost first): torch's Tensor.item in site-packages, then the user's train.py:57. */
static void call_site_stack(void)
{
    gt_test_writer_string(&W, 6, "/usr/lib/python3/site-packages/torch/_tensor.py");
    gt_test_writer_string(&W, 7, "item");
    gt_test_writer_string(&W, 8, "/home/user/train.py");
    gt_test_writer_string(&W, 9, "main");
    gt_test_writer_string(&W, 10, "/nonexistent/lib/libtorch_cuda.so");
    gt_rec_module mod = {.base = 0x7f0000000000ull, .size = 1 << 24, .path_id = 10};
    add(GT_REC_MODULE, &mod, sizeof mod);
    struct {
        gt_rec_stack s;
        uint64_t pc;
        uint32_t py[2][4];
    } st = {.s = {.stack_id = 1, .depth = 1, .py_depth = 2},
            .pc = 0x7f0000001234ull,
            .py = {{6, 7, 10, 0}, {8, 9, 57, 0}}};
    add(GT_REC_STACK, &st, sizeof st);
}

static void cudnn_call(uint32_t func, uint64_t b, uint64_t e, int32_t result, uint32_t desc_type)
{
    gt_rec_api_cudnn dn = {
        .c = api(func, b, e, 0, 0x55), .algo = -1, .math_type = -1, .desc_type = desc_type};
    dn.c.result = result;
    add(GT_REC_API_CUDNN, &dn, sizeof dn);
}

/* Thread 4244: cuDNN descriptor bookkeeping inside an NVTX range. Folded: the run at 100.1-101 us
 * (3 calls, 700 ns busy) and the one at 101.4-101.8 us (2 calls, 300 ns busy). Not folded: a
 * failed call, a 20 us Finalize, calls alone or 18-20 us apart, a plan's Finalize, and two calls
 * around the begin of a call written after them (a parent: it keeps its own begin). */
static void write_bookkeeping(void)
{
    enum { FIN = GT_FN_cudnnBackendFinalize, DES = GT_FN_cudnnBackendDestroyDescriptor };
    gt_test_writer_set_tid(&W, 4244);
    gt_rec_thread th = {.tid = 4244, .name_id = 11, .t_start_ns = T0};
    add(GT_REC_THREAD, &th, sizeof th);
    nvtx(GT_NVTX_PUSH, 100000, 12);
    cudnn_call(DES, 100100, 100400, 0, 16);
    cudnn_call(FIN, 100500, 100700, 0, 16);
    cudnn_call(DES, 100800, 101000, 0, 17);
    cudnn_call(DES, 101100, 101300, 3, 16); /* failed */
    cudnn_call(FIN, 101400, 101600, 0, 16);
    cudnn_call(DES, 101700, 101800, 0, 16);
    cudnn_call(FIN, 102000, 122000, 0, 16); /* 20 us */
    cudnn_call(DES, 122100, 122200, 0, 16);
    cudnn_call(DES, 140000, 140100, 0, 16);
    cudnn_call(DES, 160000, 160100, 0, 16);
    cudnn_call(FIN, 170000, 170200, 0, 5); /* an execution plan */
    cudnn_call(DES, 170300, 170400, 0, 16);
    cudnn_call(DES, 185000, 185100, 0, 16);
    cudnn_call(DES, 185200, 185300, 0, 16);
    gt_rec_api parent = {.c = api(GT_FN_cudaGetDeviceProperties, 185150, 186000, 0, 0)};
    add(GT_REC_API, &parent, sizeof parent);
    nvtx(GT_NVTX_POP, 200000, 0);
}

static void write_basic(const char *dir)
{
    open_trace(dir, "basic.gtrace", 4242, -1);
    gt_test_writer_set_tid(&W, 4242);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_test_writer_string(&W, 2, "train_step");
    gt_test_writer_string(&W, 3, "python");
    gt_test_writer_string(&W, 4, "_ZN5cudnn6engine11conv_kernelILi3EEEvPKf");
    gt_test_writer_string(&W, 5, "worker");
    gt_rec_thread th = {.tid = 4242, .name_id = 3, .t_start_ns = T0};
    add(GT_REC_THREAD, &th, sizeof th);
    nvtx(GT_NVTX_PUSH, 50, 2);
    alloc(GT_FN_cudaMalloc, 100, 200, 0x1000, 1 << 20, GT_ALLOC_DEVICE, 0);
    gt_rec_api_memcpy cp = {.c = api(GT_FN_cudaMemcpyAsync, 1000, 3000, 2, 0x55),
                            .bytes = 4096,
                            .direction = GT_DIR_H2D,
                            .src_kind = GT_MEM_PAGEABLE,
                            .dst_kind = GT_MEM_DEVICE,
                            .is_async = 1,
                            .peer_device = -1};
    add(GT_REC_API_MEMCPY, &cp, sizeof cp);
    launch(4000, 5000, 3, 1);
    gt_rec_cudnn_conv_sig sig = {.sig_id = 1,
                                 .op_kind = 1,
                                 .nb_dims = 4,
                                 .x_dims = {64, 3, 224, 224},
                                 .w_dims = {64, 3, 7, 7},
                                 .y_dims = {64, 64, 112, 112}};
    add(GT_REC_CUDNN_CONV_SIG, &sig, sizeof sig);
    gt_rec_cudnn_plan plan = {.plan = 0xabc,
                              .plan_id = 1,
                              .op_kind = 1,
                              .engine_global_index = 38,
                              .numerical_notes = 1,
                              .sig_id = 1};
    add(GT_REC_CUDNN_PLAN, &plan, sizeof plan);
    launch(6500, 7000, 5, 1); /* a wrapped launch inside the cuDNN call: written first */
    gt_rec_api_cudnn dn = {.c = api(GT_FN_cudnnBackendExecute, 6000, 9000, 4, 0x55),
                           .plan = 0xabc,
                           .plan_id = 1,
                           .algo = -1,
                           .math_type = -1,
                           .workspace_bytes = 1 << 16};
    add(GT_REC_API_CUDNN, &dn, sizeof dn);
    call_site_stack();
    gt_rec_api_sync sy = {.c = api(GT_FN_cudaStreamSynchronize, 10000, 50000, 6, 0x55),
                          .sync_kind = GT_SYNC_STREAM};
    sy.c.stack_id = 1;
    add(GT_REC_API_SYNC, &sy, sizeof sy);
    alloc(GT_FN_cudaFree, 51000, 52000, 0x1000, 0, GT_ALLOC_DEVICE, 1);
    alloc(GT_FN_cudaHostAlloc, 53000, 54000, 0x9000, 2 << 20, GT_ALLOC_HOST_PINNED, 0);
    nvtx(GT_NVTX_MARK, 55000, 2);
    nvtx(GT_NVTX_POP, 60000, 0);

    gt_test_writer_set_tid(&W, 4243);
    gt_rec_thread th2 = {.tid = 4243, .name_id = 5, .t_start_ns = T0};
    add(GT_REC_THREAD, &th2, sizeof th2);
    gt_rec_api other = {.c = api(GT_FN_cudaGetDeviceProperties, 2000, 2500, 7, 0)};
    other.c.stack_id = 99; /* not in the stack table: the slice goes without a call site */
    add(GT_REC_API, &other, sizeof other);
    gt_test_writer_string(&W, 11, "cudnn thread");
    gt_test_writer_string(&W, 12, "bookkeeping_range");
    write_bookkeeping();

    gt_test_writer_set_tid(&W, 0); /* CUPTI records, delivered later */
    ext(102, 2);
    ext(103, 3);
    ext(104, 4);
    ext(105, 4);
    ext(106, 5);
    gt_rec_gpu_memcpy m = {.start_ns = T0 + 3500,
                           .end_ns = T0 + 4500,
                           .corr_id = 102,
                           .bytes = 4096,
                           .device = 0,
                           .stream = 7,
                           .copy_kind = 1,
                           .src_kind = GT_MEM_PAGEABLE,
                           .dst_kind = GT_MEM_DEVICE,
                           .is_async = 1};
    add(GT_REC_GPU_MEMCPY, &m, sizeof m);
    kernel(5500, 8000, 103, 1, 7);
    kernel(8000, 9000, 106, 1, 7);
    kernel(9000, 20000, 104, 4, 7);
    kernel(20000, 40000, 105, 4, 7);
    /* Two more kernels of the cuDNN call (6000-9000) on stream 8, both in its first half: the
     * anchor of a call's further ops must precede them (a flow never ends before it starts). */
    ext(110, 4);
    ext(111, 4);
    kernel(6100, 6300, 110, 4, 8);
    kernel(6400, 6600, 111, 4, 8);
    kernel(60000, 70000, 107, 1, 7);
    kernel(65000, 90000, 108, 1, 7); /* overlaps the previous one by 5 us: a sibling track */
    kernel(89500, 95000, 109, 1, 7); /* overlaps by 0.5 us: clamped on the stream's track */
    /* A kernel written before the pair and the launch that explain it (a trace whose writer
     * drained CUPTI's ring first): the link is drawn when both have come. */
    kernel(96000, 97000, 121, 1, 9);
    gt_test_writer_set_tid(&W, 4242);
    ext(121, 40);
    launch(95500, 95800, 40, 1);
    nvtx(GT_NVTX_PUSH, 98000, 2); /* never popped: ends with the file's last event */
    gt_rec_lost lost = {.count = 5,
                        .t_first_ns = T0 + 30000,
                        .t_last_ns = T0 + 31000,
                        .reason = GT_LOST_BUFFER_FULL,
                        .lost_tid = 4242};
    add(GT_REC_LOST, &lost, sizeof lost);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

static void execute(uint64_t b, uint64_t e, uint64_t corr)
{
    gt_rec_api_cudnn dn = {.c = api(GT_FN_cudnnBackendExecute, b, e, corr, 0x55),
                           .plan = 0xabc,
                           .algo = -1,
                           .math_type = -1};
    add(GT_REC_API_CUDNN, &dn, sizeof dn);
}

static void write_queued(const char *dir)
{
    open_trace(dir, "queued.gtrace", 4343, -1);
    gt_test_writer_set_tid(&W, 4343);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_test_writer_string(&W, 4, "_ZN5cudnn6engine11conv_kernelILi3EEEvPKf");
    gt_test_writer_string(&W, 6, "_Z9batchnormPf");
    launch(1000, 2000, 1, 1);
    execute(3000, 6000, 2);
    execute(20000, 30000, 4);
    gt_test_writer_set_tid(&W, 4344); /* a second thread in a cuDNN call at the same time */
    execute(25000, 35000, 5);
    execute(36000, 37000, 6); /* keeps this thread's records ahead of the late kernel */

    gt_test_writer_set_tid(&W, 0);
    kernel_queued(2500, 3500, 101, 1, 1500);    /* the launch of the same name */
    kernel_queued(6500, 9000, 102, 4, 4000);    /* the cuDNN execute */
    kernel_queued(9000, 9500, 104, 6, 6500);    /* between calls: an unwrapped library's kernel */
    kernel_queued(31000, 32000, 105, 4, 26000); /* both threads' executes hold it: ambiguous */
    kernel_queued(39000, 40000, 103, 1, 38500); /* its launch comes later in the file */
    gt_test_writer_set_tid(&W, 4343);
    launch(38000, 38800, 3, 1);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

static void gpu_memset(uint64_t b, uint64_t e, uint64_t corr, uint64_t bytes)
{
    gt_rec_gpu_memset m = {
        .start_ns = T0 + b, .end_ns = T0 + e, .corr_id = corr, .bytes = bytes, .stream = 7};
    add(GT_REC_GPU_MEMSET, &m, sizeof m);
}

/* A module load inside a library call, recorded by the CUPTI callback at its exit (no id). */
static void jit_call(uint64_t b, uint64_t e)
{
    gt_rec_api j = {.c = api(GT_FN_cuLibraryLoadData, b, e, 0, 0)};
    if (gt_test_writer_add(&W, GT_REC_API, GT_RF_DRIVER, &j, sizeof j) != 0)
        die("gt_test_writer_add");
}

/* The H200 recordings of DataLoader and DDP runs (2026-12-02): a plan's first cudnnBackendExecute
 * (or cublasLtMatmul) loads kernels, two module loads inside it, recorded before it (a call's
 * record is written when it returns). The converter took the first load for a sibling that had
 * ended, forgot it and raised its floor there, so the execute's slice began where that load ended,
 * milliseconds after its memset and first kernel had started: their arrows went backwards. The
 * links were right (a pair, the anchors). Execute 20 [10, 125] us on thread 7001, loads
 * [12, 87] and [107, 113] us; its memset (pair) at 12.1 us, kernels (anchors 42..50) at 13 and
 * 90 us; thread 7002's cudaMemsetAsync in between (id 45, inside the anchors: its pair wins)
 * and a launch (its kernel's id 47 is inside the anchors too: CUPTI's counter is process-wide;
 * the launch keeps it); then a runtime launch on 7001, matched by order. */
static void write_siblings(const char *dir)
{
    open_trace_flags(dir, "siblings.gtrace", 7001, -1, GT_HDR_ORDER_LINKS);
    gt_test_writer_set_tid(&W, 7001);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_test_writer_string(&W, 4, "_ZN5cudnn6engine11conv_kernelILi3EEEvPKf");
    ext_of_kind(42, 20, GT_EXT_CORR_KIND_ANCHOR_BEGIN);
    ext(43, 20); /* the memset cuDNN made: paired by the callback on this thread */
    jit_call(12000, 87000);
    jit_call(107000, 113000);
    ext_of_kind(50, 20, GT_EXT_CORR_KIND_ANCHOR_END);
    execute(10000, 125000, 20);
    launch(126000, 127000, 21, 1);
    gt_test_writer_set_tid(&W, 7002);
    gt_rec_api_memset ms = {.c = api(GT_FN_cudaMemsetAsync, 11000, 11500, 30, 0x77), .bytes = 64};
    add(GT_REC_API_MEMSET, &ms, sizeof ms);
    ext(45, 30);
    launch(30000, 31000, 31, 1);
    gt_test_writer_set_tid(&W, 0);
    gpu_memset(12100, 12200, 43, 1 << 24);
    kernel(13000, 20000, 44, 4, 7);
    gpu_memset(20500, 20600, 45, 64);
    kernel(40000, 41000, 47, 1, 7);
    kernel(90000, 95000, 46, 4, 7);
    kernel(128000, 129000, 51, 1, 7);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

/* The converter used to take every pair that was not an anchor, the report only gputrace's own:
 * a PyTorch profiler id equal to one of our call ids drew an arrow to the wrong call, another
 * drew an end that no arrow started. One rule now (op_link.h): only ours link. */
static void write_foreign(const char *dir)
{
    open_trace(dir, "foreign.gtrace", 4545, -1);
    gt_test_writer_set_tid(&W, 4545);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    launch(1000, 2000, 10, 1);
    launch(3000, 4000, 11, 1);
    gt_test_writer_set_tid(&W, 0);
    ext_of_kind(100, 10, GT_EXT_CORR_KIND_OURS);
    kernel(2500, 3500, 100, 1, 7);
    ext_of_kind(101, 11, 3); /* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0: PyTorch's id 11 */
    kernel(4500, 5500, 101, 1, 7);
    ext_of_kind(102, 999, 4); /* CUSTOM1: an id that is no call of ours */
    kernel(6500, 7500, 102, 1, 7);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

static void write_rank(const char *dir, int rank)
{
    char name[32];
    snprintf(name, sizeof name, "rank%d.gtrace", rank);
    open_trace(dir, name, 100, rank);
    gt_test_writer_set_tid(&W, 100);
    gt_test_writer_string(&W, 1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    uint64_t shift = (uint64_t)rank * 300;
    for (uint64_t i = 0; i < 3; i++) {
        launch(1000 + i * 10000 + shift, 2000 + i * 10000 + shift, 10 + i, 1);
    }
    gt_test_writer_set_tid(&W, 0);
    for (uint64_t i = 0; i < 3; i++) {
        ext(100 + i, 10 + i);
        kernel(2500 + i * 10000 + shift, 9000 + i * 10000 + shift, 100 + i, 1, 13);
    }
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

/* One process of job/: a launch and its kernel (ranks), or nothing but a thread (the others). */
static void write_job_proc(const char *dir, int32_t pid, int32_t ppid, int32_t rank, uint32_t flags,
                           const char *host)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/job/p%d.gtrace", dir, pid);
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = pid;
    h.ppid = ppid;
    h.start_realtime_ns = (int64_t)T0;
    h.start_monotonic_ns = 4000000000000;
    h.start_boottime_ns = (int64_t)BOOT0;
    h.rank = h.local_rank = rank;
    h.world_size = rank >= 0 ? 4 : -1;
    snprintf(h.host, sizeof h.host, "%s", host);
    h.runtime.cupti_state = GT_CUPTI_ACTIVE;
    h.flags = flags;
    static const char cmd[] = "python\0train.py";
    if (gt_test_writer_open(&W, path, &h, "/usr/bin/python3", cmd, sizeof cmd) != 0)
        die("gt_test_writer_open");
    gt_test_writer_set_tid(&W, (uint32_t)pid);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    uint64_t t = 1000 + (uint64_t)pid * 10;
    launch(t, t + 1000, 10, 1);
    gt_test_writer_set_tid(&W, 0);
    ext(100, 10);
    kernel(t + 1500, t + 3000, 100, 1, 7);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

static void write_job(const char *dir)
{
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/job", dir);
    mkdir(sub, 0755);
    write_job_proc(dir, 150, 1, -1, 0, "node1");
    for (int32_t r = 0; r < 4; r++)
        write_job_proc(dir, 200 + r, 150, r, 0, "node1");
    write_job_proc(dir, 301, 201, -1, GT_HDR_FORKED_CHILD, "node1");
    write_job_proc(dir, 302, 202, 2, GT_HDR_FORKED_CHILD, "node1");
    write_job_proc(dir, 401, 201, -1, 0, "node2");
}

static int copy_truncated(const char *dir)
{
    char src[4096], dst[4096];
    snprintf(src, sizeof src, "%s/basic.gtrace", dir);
    snprintf(dst, sizeof dst, "%s/truncated.gtrace", dir);
    FILE *in = fopen(src, "rb");
    if (!in)
        return -1;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    FILE *out = fopen(dst, "wb");
    if (!out || n < 200)
        return -1;
    fwrite(buf, 1, n - 100, out); /* cuts the last (GPU) chunk */
    return fclose(out);
}

#define LONG_STEPS 2000
#define LONG_SLOW_STEP 1200

/* One step of long.gtrace: a range, 15 launches 10 us apart, each with its kernel and pair.
 * heavy: each kernel has a name of its own (string id 100 + its correlation id), 220 bytes. */
static void long_step(uint64_t t, uint64_t len, uint64_t *corr, int heavy)
{
    nvtx(GT_NVTX_PUSH, t, 2);
    for (uint64_t i = 0; i < 15; i++, (*corr)++) {
        uint64_t b = t + 1000 + i * 10000;
        uint32_t name = 1;
        if (heavy) {
            char text[240];
            name = (uint32_t)(100 + *corr);
            snprintf(text, sizeof text, "_Z%uheavy_kernel_%0200u", name, name);
            gt_test_writer_string(&W, name, text);
        }
        launch(b, b + 4000, *corr, name);
        ext(*corr + 1000000000ull, *corr);
        kernel(b + 5000, b + 5000 + len / 2000, *corr + 1000000000ull, name, 7);
    }
    nvtx(GT_NVTX_POP, t + len - 1000, 0);
}

static void um(uint32_t kind, uint64_t b, uint64_t e, uint64_t value, uint32_t src, uint32_t dst,
               uint32_t flags)
{
    gt_rec_gpu_um u = {T0 + b, e ? T0 + e : 0, 0x7e0000000000ull, value, kind, src, dst, flags};
    add(GT_REC_GPU_UM, &u, sizeof u);
}

static void write_um(const char *dir)
{
    open_trace_flags(dir, "um.gtrace", 6262, -1, GT_HDR_UM_COUNTERS);
    gt_test_writer_set_tid(&W, 6262);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_rec_api_alloc a = {.c = api(GT_FN_cudaMallocManaged, 1000, 3000, 1, 0),
                          .ptr = 0x7e0000000000ull,
                          .bytes = 8 << 20,
                          .alloc_kind = GT_ALLOC_MANAGED};
    add(GT_REC_API_ALLOC, &a, sizeof a);
    for (uint32_t dev = 0; dev < 2; dev++) {
        uint64_t t = 10000 + dev * 2000000, corr = 10 + dev;
        launch(t, t + 4000, corr, 1);
        ext(corr + 1000000000ull, corr);
        gt_rec_gpu_kernel k = {.start_ns = T0 + t + 5000,
                               .end_ns = T0 + t + 5000 + 900000,
                               .corr_id = corr + 1000000000ull,
                               .name_id = 1,
                               .device = dev,
                               .stream = 7,
                               .grid = {128, 1, 1},
                               .block = {256, 1, 1}};
        add(GT_REC_GPU_KERNEL, &k, sizeof k);
        /* the kernel faults: 50 us of service, the migration overlapping its end */
        um(GT_UM_GPU_FAULT, t + 6000, t + 56000, 3, dev, 0, 1);
        um(GT_UM_HTOD, t + 50000, t + 850000, 8 << 20, GT_UM_CPU_ID, dev, GT_UM_CAUSE_COHERENCE);
    }
    gt_rec_api_memcpy pf = {.c = api(GT_FN_cudaMemPrefetchAsync, 3000000, 3004000, 20, 0),
                            .bytes = 8 << 20,
                            .dst = 0x7e0000000000ull,
                            .src = 0x7e0000000000ull,
                            .direction = GT_DIR_H2D,
                            .src_kind = GT_MEM_MANAGED,
                            .dst_kind = GT_MEM_MANAGED,
                            .is_async = 1};
    add(GT_REC_API_MEMCPY, &pf, sizeof pf);
    um(GT_UM_HTOD, 3005000, 3805000, 8 << 20, GT_UM_CPU_ID, 0, GT_UM_CAUSE_USER);
    um(GT_UM_CPU_FAULT, 4000000, 0, 0x401000, GT_UM_CPU_ID, 0, 2);
    um(GT_UM_CPU_FAULT, 4000500, 0, 0x401000, GT_UM_CPU_ID, 0, 1);
    um(GT_UM_DTOH, 4001000, 4801000, 8 << 20, 0, GT_UM_CPU_ID, GT_UM_CAUSE_COHERENCE);
    um(GT_UM_THRASHING, 5000000, 0, 1 << 21, 1, 0, 0);
    um(GT_UM_THROTTLING, 5000100, 5100100, 0, 1, 0, 0);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

static void write_long(const char *dir, const char *name, int steps, int heavy)
{
    open_trace(dir, name, 5151, -1);
    gt_test_writer_set_tid(&W, 5151);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_test_writer_string(&W, 2, "train_step");
    uint64_t t = 1000000, corr = 1;
    for (int i = 0; i < steps; i++) {
        uint64_t len = i == LONG_SLOW_STEP ? 40000000 : 10000000;
        long_step(t, len, &corr, heavy);
        t += len;
    }
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

/* The H200 JAX convolution run (jax_conv, issue 30): cuDNN kernels of one stream overlap in
 * CUPTI's times, more than the stream's lanes hold, so a short kernel's slice begins where a lane
 * frees, after the sync that waited for it had returned: its arrow would have ended before it
 * started. Kernels 1-4 [1, 100] us on stream 7 fill the four lanes; kernel 5 [5, 6] us is moved to
 * 100 us; cudaDeviceSynchronize [5.5, 7] us waited for it (kernel 6 at 200 us ends after the
 * sync). The arrow is not drawn and is counted; kernel 6's sync [150, 250] us gets its arrow. */
static void write_moved_wait(const char *dir)
{
    open_trace(dir, "moved_wait.gtrace", 7101, -1);
    gt_test_writer_set_tid(&W, 7101);
    gt_test_writer_string(&W, 1, "_Z6vecAddPfS_S_i");
    gt_rec_api_sync sy = {.c = api(GT_FN_cudaDeviceSynchronize, 5500, 7000, 1, 0),
                          .sync_kind = GT_SYNC_DEVICE};
    add(GT_REC_API_SYNC, &sy, sizeof sy);
    gt_rec_api_sync sy2 = {.c = api(GT_FN_cudaDeviceSynchronize, 150000, 250000, 2, 0),
                           .sync_kind = GT_SYNC_DEVICE};
    add(GT_REC_API_SYNC, &sy2, sizeof sy2);
    gt_test_writer_set_tid(&W, 0);
    for (uint64_t i = 0; i < 4; i++)
        kernel(1000 + 1000 * i, 100000, 201 + i, 1, 7);
    kernel(5000, 6000, 205, 1, 7);
    kernel(200000, 201000, 206, 1, 7);
    if (gt_test_writer_close(&W) != 0)
        die("close");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_convert_gen OUTDIR\n");
        return 2;
    }
    mkdir(argv[1], 0755);
    write_basic(argv[1]);
    write_queued(argv[1]);
    write_foreign(argv[1]);
    write_siblings(argv[1]);
    write_long(argv[1], "long.gtrace", LONG_STEPS, 0);
    write_long(argv[1], "heavy.gtrace", 600, 1);
    write_um(argv[1]);
    write_rank(argv[1], 0);
    write_rank(argv[1], 1);
    write_job(argv[1]);
    write_moved_wait(argv[1]);
    if (copy_truncated(argv[1]) != 0)
        die("truncated copy");
    char p[4096];
    snprintf(p, sizeof p, "%s/not_a_trace.gtrace", argv[1]);
    FILE *f = fopen(p, "w");
    if (!f)
        die("not_a_trace");
    fputs("this is not a trace\n", f);
    fclose(f);
    return 0;
}
