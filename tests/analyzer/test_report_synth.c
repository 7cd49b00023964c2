/* test_report_synth.c — write synthetic traces that mimic a training loop and its pathologies. */
#include "test_report_synth.h"

#include <stdio.h>
#include <string.h>

#include "gt_test_writer.h"
#include "gtrace_api.h"

#define T0 1700000000000000000ull
#define STR_NVTX 10
#define STR_FILE 20
#define STR_FUNC 21
#define STR_KERNEL0 100
#define STR_CONV 300
#define STR_NCCL 400
#define STR_GLOO 401
#define STR_MODULE 402
#define STR_TUNER 403
#define TID_MAIN 100
#define TID_GLOO 101
#define TID_AUTOGRAD 102 /* PyTorch's autograd engine thread: the backward, a hook's delay */
#define GLOO_STREAMS 4   /* gloo's pool of streams, taken in turn by its collectives */
#define STR_INDUCTOR_FILE 22
#define STR_INDUCTOR_FUNC 23
#define STR_MODULE0 30
#define STACK_SYNC 7
#define STACK_COPY 8
#define STACK_ALLOC 9
#define STACK_COMPILE 10 /* an Inductor pass's frame over the program's line */

typedef struct sim {
    gt_test_writer w;
    const scenario *sc;
    uint64_t t;        /* CPU clock */
    uint64_t gpu_free; /* when the GPU queue drains */
    uint64_t corr, cupti_corr;
    int rc;
    uint64_t t0;          /* GPU sampling: the first call, when the windows start */
    uint64_t next_switch; /* the next window switch not yet written, 0 none */
    int window_on;
    int um_on_gpu; /* the managed buffers are on the GPU */
    int step;
    uint64_t pool_start; /* compilation: when Inductor's compile workers started, 0 none */
    uint64_t api_stream; /* the stream of the calls written now (0: the legacy default) */
    unsigned gloo_next;  /* DDP over gloo: the next stream of its pool */
} sim;

scenario scenario_healthy(void)
{
    scenario s;
    memset(&s, 0, sizeof s);
    s.steps = 10;
    s.kernels_per_step = 20;
    s.kernel_ns = 500000;
    s.launch_ns = 5000;
    s.cpu_between_ns = 10000;
    s.pinned_h2d_bytes = 1 << 20;
    s.cudnn_ops = 4;
    s.cudnn_engine = 38;
    s.cudnn_tensor_cores = 1;
    s.cudnn_dtype = 2;
    s.conv_kernel_ns = 400000;
    s.autotune_ns = 2000000;
    s.rank = -1;
    s.world_size = -1;
    s.pid = 4242;
    s.cc_major = 9;
    s.cc_minor = 0;
    s.module = "/usr/lib/python3/site-packages/torch/lib/libtorch_cuda.so";
    return s;
}

static void write_record(sim *s, uint16_t kind, const void *body, uint32_t size)
{
    if (gt_test_writer_add(&s->w, kind, 0, body, size) != 0)
        s->rc = -1;
}

/* GPU sampling: the switches the CPU clock has passed, as the recorder's writer writes them. */
static void sample_switches(sim *s)
{
    const scenario *sc = s->sc;
    while (sc->sample_on_ns && !sc->sample_no_window && s->next_switch && s->next_switch <= s->t) {
        s->window_on = !s->window_on;
        gt_rec_capture c = {s->next_switch, (uint32_t)s->window_on, GT_CAPTURE_SRC_SAMPLE};
        write_record(s, GT_REC_CAPTURE, &c, sizeof c);
        s->next_switch += s->window_on ? sc->sample_on_ns : sc->sample_off_ns;
    }
}

static void add(sim *s, uint16_t kind, const void *body, uint32_t size)
{
    sample_switches(s);
    write_record(s, kind, body, size);
}

/* Whether CUPTI records GPU work that starts at t (always, unless sampled outside a window). */
static int gpu_recorded(const sim *s, uint64_t t)
{
    const scenario *sc = s->sc;
    if (!sc->sample_on_ns)
        return 1;
    if (sc->sample_no_window || t < s->t0)
        return 0;
    return (t - s->t0) % (sc->sample_on_ns + sc->sample_off_ns) < sc->sample_on_ns;
}

static void common(gt_api_common *c, sim *s, uint32_t func, uint64_t dur, uint32_t stack)
{
    memset(c, 0, sizeof *c);
    c->t_begin_ns = s->t;
    c->t_end_ns = s->t + dur;
    c->corr_id = ++s->corr;
    c->func = func;
    c->stack_id = stack;
    c->stream = s->api_stream;
    s->t += dur;
}

/* Queue GPU work issued at time `issued`: returns its start, advances the queue. */
static uint64_t gpu_run(sim *s, uint64_t issued, uint64_t dur)
{
    uint64_t start = s->gpu_free > issued + 2000 ? s->gpu_free : issued + 2000;
    s->gpu_free = start + dur;
    return start;
}

#define UM_GBPS 10.0
#define UM_BASE 0x7e0000000000ull

static void um_event(sim *s, uint32_t kind, uint64_t t0, uint64_t t1, uint64_t addr, uint64_t value,
                     uint32_t src, uint32_t dst, uint32_t flags)
{
    if (s->sc->um_refused || s->sc->um_off)
        return;
    gt_rec_gpu_um u = {t0, t1, addr, value, kind, src, dst, flags};
    add(s, GT_REC_GPU_UM, &u, sizeof u);
}

/* Whether a kernel issued now faults the managed buffers over, and how long it stalls. */
static uint64_t um_stall_ns(const sim *s)
{
    const scenario *sc = s->sc;
    if (!sc->um_buffers || s->um_on_gpu || sc->um_prefetch ||
        (sc->um_fault_steps && s->step >= sc->um_fault_steps))
        return 0;
    return sc->um_fault_ns + (uint64_t)sc->um_buffers * (uint64_t)((double)sc->um_bytes / UM_GBPS);
}

/* The fault and migrations of a kernel starting at t. */
static void um_fault_in(sim *s, uint64_t t)
{
    const scenario *sc = s->sc;
    um_event(s, GT_UM_GPU_FAULT, t, t + sc->um_fault_ns, UM_BASE, 1, 0, 0, 1);
    t += sc->um_fault_ns;
    uint64_t d = (uint64_t)((double)sc->um_bytes / UM_GBPS);
    for (int b = 0; b < sc->um_buffers; b++, t += d)
        um_event(s, GT_UM_HTOD, t, t + d, UM_BASE + (uint64_t)b * sc->um_bytes, sc->um_bytes,
                 GT_UM_CPU_ID, 0, GT_UM_CAUSE_COHERENCE);
    s->um_on_gpu = 1;
}

static void gpu_kernel(sim *s, uint32_t name_id, uint64_t issued, uint64_t dur, uint64_t our_corr);
static void sync_stream(sim *s);

/* x.cpu() of a large tensor: cudaMemcpyAsync to pageable memory (it returns when the data is
 * there) and a stream sync. CUPTI records the copy in d2h_chunks pieces over d2h_gpu_share of
 * the call's time once the queue got to it; between and after them the CPU stages the data out
 * of the driver's bounce buffer, the GPU idle. */
static void pageable_d2h(sim *s)
{
    const scenario *sc = s->sc;
    int chunks = sc->d2h_chunks > 0 ? sc->d2h_chunks : 1;
    uint64_t start = s->gpu_free > s->t + 2000 ? s->gpu_free : s->t + 2000;
    double share = sc->d2h_gpu_share > 0 ? sc->d2h_gpu_share : 1;
    uint64_t gpu = (uint64_t)((double)sc->d2h_bytes / 20.0); /* 20 GB/s on the link */
    uint64_t span = (uint64_t)((double)gpu / share), piece = gpu / (uint64_t)chunks;
    gt_rec_api_memcpy m;
    memset(&m, 0, sizeof m);
    common(&m.c, s, GT_FN_cudaMemcpyAsync, start + span + 3000 - s->t, STACK_COPY);
    m.bytes = sc->d2h_bytes;
    m.direction = GT_DIR_D2H;
    m.src_kind = GT_MEM_DEVICE;
    m.dst_kind = GT_MEM_PAGEABLE;
    m.is_async = 1;
    m.peer_device = -1;
    if (!sc->d2h_unrecorded)
        add(s, GT_REC_API_MEMCPY, &m, sizeof m);
    uint64_t corr = ++s->cupti_corr;
    for (int i = 0; i < chunks; i++) {
        gt_rec_gpu_memcpy g;
        memset(&g, 0, sizeof g);
        g.start_ns = start + (uint64_t)i * (span / (uint64_t)chunks);
        g.end_ns = g.start_ns + piece;
        g.corr_id = corr;
        g.bytes = sc->d2h_bytes / (uint64_t)chunks;
        g.copy_kind = 2; /* DTOH */
        g.src_kind = GT_MEM_DEVICE;
        g.dst_kind = GT_MEM_PAGEABLE;
        g.is_async = 1;
        add(s, GT_REC_GPU_MEMCPY, &g, sizeof g);
        s->gpu_free = g.end_ns;
    }
    if (!sc->d2h_unrecorded) {
        gt_rec_gpu_ext_corr e = {m.c.corr_id, corr, GT_EXT_CORR_KIND_OURS, 0};
        add(s, GT_REC_GPU_EXT_CORR, &e, sizeof e);
    }
    sync_stream(s);
}

static void gpu_kernel(sim *s, uint32_t name_id, uint64_t issued, uint64_t dur, uint64_t our_corr)
{
    gt_rec_gpu_kernel k;
    memset(&k, 0, sizeof k);
    uint64_t stall = um_stall_ns(s);
    dur += stall;
    k.start_ns = gpu_run(s, issued, dur);
    if (stall)
        um_fault_in(s, k.start_ns);
    k.end_ns = k.start_ns + dur;
    k.corr_id = ++s->cupti_corr;
    k.name_id = name_id;
    k.stream = 7;
    if (!gpu_recorded(s, k.start_ns))
        return;
    add(s, GT_REC_GPU_KERNEL, &k, sizeof k);
    if (!our_corr) /* a launch no wrapper saw */
        return;
    gt_rec_gpu_ext_corr e = {our_corr, k.corr_id, GT_EXT_CORR_KIND_OURS, 0};
    add(s, GT_REC_GPU_EXT_CORR, &e, sizeof e);
}

static void launch(sim *s, uint32_t name_id, uint64_t dur)
{
    gt_rec_api_launch l;
    memset(&l, 0, sizeof l);
    common(&l.c, s, s->sc->launch_func ? s->sc->launch_func : GT_FN___cudaLaunchKernel,
           s->sc->launch_ns, 0);
    l.name_id = name_id;
    if (!s->sc->launch_unrecorded) /* else only CUPTI's kernel, linked to nothing */
        add(s, GT_REC_API_LAUNCH, &l, sizeof l);
    gpu_kernel(s, name_id, l.c.t_end_ns, dur, s->sc->launch_unrecorded ? 0 : l.c.corr_id);
    s->t += s->sc->cpu_between_ns;
}

static void copy(sim *s, uint8_t dir, uint8_t host_kind, int is_async, uint64_t bytes, double gbps,
                 uint32_t stack)
{
    uint64_t dur = (uint64_t)((double)bytes / gbps);
    uint64_t issued = s->t;
    uint64_t start = gpu_run(s, issued, dur);
    /* the CPU waits for synchronous copies and for pageable ones (staging) */
    uint64_t cpu = (!is_async || host_kind == GT_MEM_PAGEABLE) ? start + dur - issued + 3000 : 4000;
    gt_rec_api_memcpy m;
    memset(&m, 0, sizeof m);
    common(&m.c, s, is_async ? GT_FN_cudaMemcpyAsync : GT_FN_cudaMemcpy, cpu, stack);
    m.bytes = bytes;
    m.direction = dir;
    m.src_kind = dir == GT_DIR_H2D ? host_kind : GT_MEM_DEVICE;
    m.dst_kind = dir == GT_DIR_H2D ? GT_MEM_DEVICE : host_kind;
    m.is_async = (uint8_t)is_async;
    m.peer_device = -1;
    add(s, GT_REC_API_MEMCPY, &m, sizeof m);
    gt_rec_gpu_memcpy g;
    memset(&g, 0, sizeof g);
    g.start_ns = start;
    g.end_ns = start + dur;
    g.corr_id = ++s->cupti_corr;
    g.bytes = bytes;
    g.copy_kind = dir == GT_DIR_H2D ? 1 : 2;
    g.src_kind = m.src_kind;
    g.dst_kind = m.dst_kind;
    g.is_async = (uint8_t)is_async;
    if (gpu_recorded(s, g.start_ns))
        add(s, GT_REC_GPU_MEMCPY, &g, sizeof g);
}

static void sync_stream_at(sim *s, uint32_t stack)
{
    gt_rec_api_sync y;
    memset(&y, 0, sizeof y);
    uint64_t wait = s->gpu_free > s->t ? s->gpu_free - s->t : 0;
    common(&y.c, s, GT_FN_cudaStreamSynchronize, wait + 5000, stack);
    y.sync_kind = GT_SYNC_STREAM;
    add(s, GT_REC_API_SYNC, &y, sizeof y);
}

static void sync_stream(sim *s)
{
    sync_stream_at(s, STACK_SYNC);
}

static void alloc(sim *s, int is_free)
{
    gt_rec_api_alloc a;
    memset(&a, 0, sizeof a);
    common(&a.c, s, is_free ? GT_FN_cudaFree : GT_FN_cudaMalloc, is_free ? 300000 : 150000,
           STACK_ALLOC);
    a.bytes = is_free ? 0 : 1 << 24;
    a.ptr = 0x7f0000000000ull;
    a.alloc_kind = GT_ALLOC_DEVICE;
    a.is_free = (uint32_t)is_free;
    add(s, GT_REC_API_ALLOC, &a, sizeof a);
}

static void managed_alloc(sim *s, int b)
{
    gt_rec_api_alloc a;
    memset(&a, 0, sizeof a);
    common(&a.c, s, GT_FN_cudaMallocManaged, 20000, STACK_ALLOC);
    a.bytes = s->sc->um_bytes;
    a.ptr = UM_BASE + (uint64_t)b * s->sc->um_bytes;
    a.alloc_kind = GT_ALLOC_MANAGED;
    add(s, GT_REC_API_ALLOC, &a, sizeof a);
}

/* cudaMemPrefetchAsync of each buffer to GPU 0: recorded as a copy of managed memory; the
 * migration runs on the GPU queue before the kernels (cause USER). */
static void prefetch(sim *s)
{
    const scenario *sc = s->sc;
    for (int b = 0; b < sc->um_buffers && !s->um_on_gpu; b++) {
        gt_rec_api_memcpy m;
        memset(&m, 0, sizeof m);
        common(&m.c, s, GT_FN_cudaMemPrefetchAsync, 4000, 0);
        m.bytes = sc->um_bytes;
        m.dst = m.src = UM_BASE + (uint64_t)b * sc->um_bytes;
        m.direction = GT_DIR_H2D;
        m.src_kind = m.dst_kind = GT_MEM_MANAGED;
        m.is_async = 1;
        add(s, GT_REC_API_MEMCPY, &m, sizeof m);
        uint64_t d = (uint64_t)((double)sc->um_bytes / UM_GBPS);
        uint64_t t = gpu_run(s, s->t, d);
        um_event(s, GT_UM_HTOD, t, t + d, m.dst, sc->um_bytes, GT_UM_CPU_ID, 0, GT_UM_CAUSE_USER);
    }
    s->um_on_gpu = 1;
}

/* The CPU reads the first buffer once the step's work is done: it migrates back. */
static void cpu_touch(sim *s)
{
    const scenario *sc = s->sc;
    uint64_t t = s->gpu_free > s->t ? s->gpu_free : s->t;
    uint64_t d = (uint64_t)((double)sc->um_bytes / UM_GBPS);
    um_event(s, GT_UM_CPU_FAULT, t, 0, UM_BASE, 0x401234, GT_UM_CPU_ID, 0, 1);
    um_event(s, GT_UM_DTOH, t + 1000, t + 1000 + d, UM_BASE, sc->um_bytes, 0, GT_UM_CPU_ID,
             GT_UM_CAUSE_COHERENCE);
    s->t = t + 1000 + d;
    s->um_on_gpu = 0;
}

static void nvtx_named(sim *s, uint32_t kind, uint32_t name_id)
{
    gt_rec_nvtx v;
    memset(&v, 0, sizeof v);
    v.t_ns = s->t;
    v.nvtx_kind = kind;
    v.name_id = kind == GT_NVTX_PUSH ? name_id : 0;
    add(s, GT_REC_NVTX, &v, sizeof v);
}

static void nvtx(sim *s, uint32_t kind)
{
    nvtx_named(s, kind, STR_NVTX);
}

/* A forward convolution of channels in and out over hw x hw. */
static void conv_sig(sim *s, uint32_t sig_id, int channels, int hw)
{
    gt_rec_cudnn_conv_sig g;
    memset(&g, 0, sizeof g);
    g.sig_id = sig_id;
    g.op_kind = GT_CUDNN_OP_CONV_FWD;
    g.nb_dims = 4;
    g.dtype = s->sc->cudnn_dtype;
    g.format = 0;
    g.groups = 1;
    int n = s->sc->conv_batch ? s->sc->conv_batch : 32;
    int x[4] = {n, channels, hw, hw}, w[4] = {channels, channels, 3, 3};
    memcpy(g.x_dims, x, sizeof x);
    memcpy(g.w_dims, w, sizeof w);
    memcpy(g.y_dims, x, sizeof x);
    g.pad[0] = g.pad[1] = 1;
    g.stride[0] = g.stride[1] = 1;
    g.dilation[0] = g.dilation[1] = 1;
    add(s, GT_REC_CUDNN_CONV_SIG, &g, sizeof g);
}

static void plan(sim *s, uint32_t plan_id, uint32_t sig_id, int64_t engine, uint64_t graph)
{
    gt_rec_cudnn_plan p;
    memset(&p, 0, sizeof p);
    p.plan = 0x5000 + plan_id;
    p.plan_id = plan_id;
    p.op_kind = GT_CUDNN_OP_CONV_FWD;
    p.engine_global_index = engine;
    p.numerical_notes = s->sc->cudnn_tensor_cores ? 1u : 0u;
    p.op_graph = graph;
    p.dtype = (uint32_t)s->sc->cudnn_dtype;
    p.sig_id = sig_id;
    add(s, GT_REC_CUDNN_PLAN, &p, sizeof p);
}

static uint32_t conv_name(const scenario *sc)
{
    return STR_CONV + (sc->cudnn_tensor_cores ? 1 : 0);
}

static void execute(sim *s, uint32_t plan_id, uint32_t flags, uint64_t cpu_ns, uint64_t gpu_ns)
{
    gt_rec_api_cudnn c;
    memset(&c, 0, sizeof c);
    common(&c.c, s, GT_FN_cudnnBackendExecute, cpu_ns, 0);
    c.plan = 0x5000 + plan_id;
    c.plan_id = plan_id;
    c.algo = -1;
    c.math_type = -1;
    c.cudnn_flags = flags;
    add(s, GT_REC_API_CUDNN, &c, sizeof c);
    gpu_kernel(s, conv_name(s->sc), c.c.t_begin_ns + 3000, gpu_ns, c.c.corr_id);
}

static void convolutions(sim *s, int step)
{
    const scenario *sc = s->sc;
    for (int j = 0; j < sc->cudnn_ops; j++) {
        uint32_t sig = (uint32_t)(sc->cudnn == 3 ? step * sc->cudnn_ops + j + 1 : j + 1);
        int fresh = sc->cudnn == 3 || step == 0;
        /* changing shapes: every step a new input size through the same layers (each layer's
         * channels fixed), as a program that feeds images of another size */
        if (fresh && sc->cudnn == 3)
            conv_sig(s, sig, 64 + (j + 1) * 8, 56 + step);
        else if (fresh)
            conv_sig(s, sig, 64 + (int)sig * 8, 56);
        int autotune = sc->cudnn >= 2 && fresh;
        if (autotune) /* three candidates, timed with a sync around each */
            for (uint32_t c = 0; c < 3; c++) {
                uint32_t pid = 1000 + sig * 4 + c;
                plan(s, pid, sig, 10 + c, 0x9000 + sig);
                if (c)
                    s->t += sc->autotune_pause_ns;
                execute(s, pid, GT_CUDNN_AUTOTUNE, sc->autotune_ns,
                        sc->trial_kernel_ns[c] ? sc->trial_kernel_ns[c] : sc->conv_kernel_ns);
                sync_stream(s);
            }
        if (fresh)
            plan(s, sig, sig, sc->cudnn_engine, 0x9000 + sig);
        uint32_t flags = sc->cudnn == 1 ? GT_CUDNN_HEURISTIC : 0;
        if (sc->first_exec_flagged && step == 0) /* an event recorded before it: looks tried */
            flags = GT_CUDNN_AUTOTUNE;
        if (sc->inferred_conv)
            launch(s, conv_name(sc), sc->conv_kernel_ns);
        else
            execute(s, sig, flags, sc->launch_ns,
                    sc->conv_kernel_ns * (sc->first_exec_flagged && step == 0 ? 20 : 1));
    }
}

static void strings(sim *s)
{
    char buf[96];
    gt_test_writer_string(&s->w, STR_NVTX, "train_step");
    gt_test_writer_string(&s->w, STR_FILE, "/home/user/train.py");
    gt_test_writer_string(&s->w, STR_FUNC, "train");
    for (int k = 0; k < s->sc->kernels_per_step; k++) {
        char base[32];
        snprintf(base, sizeof base, "elementwise%d", k);
        snprintf(buf, sizeof buf, "_Z%zu%sPfS_i", strlen(base), base);
        gt_test_writer_string(&s->w, STR_KERNEL0 + (uint32_t)k, buf);
    }
    gt_test_writer_string(&s->w, STR_CONV, "implicit_convolve_sgemm_f32");
    gt_test_writer_string(&s->w, STR_CONV + 1, "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32");
    gt_test_writer_string(&s->w, STR_NCCL, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    gt_test_writer_string(&s->w, STR_GLOO, "pt_gloo_runloop");
    gt_test_writer_string(&s->w, STR_TUNER,
                          "XlaPass:#name=gemm-algorithm-picker,module=jit_train_step#");
    if (s->sc->module) { /* a loaded library: the process's framework */
        gt_test_writer_string(&s->w, STR_MODULE, s->sc->module);
        gt_rec_module m;
        memset(&m, 0, sizeof m);
        m.base = 0x7f1000000000ull;
        m.size = 1 << 20;
        m.path_id = STR_MODULE;
        add(s, GT_REC_MODULE, &m, sizeof m);
    }
    gt_rec_thread gloo = {TID_GLOO, STR_GLOO, s->t};
    if (s->sc->gloo_per_step || s->sc->buckets) /* the name marks it as a collective thread */
        add(s, GT_REC_THREAD, &gloo, sizeof gloo);
    for (int i = 0; i < 4 && s->sc->modules[i]; i++) {
        gt_test_writer_string(&s->w, STR_MODULE0 + (uint32_t)i, s->sc->modules[i]);
        gt_rec_module m;
        memset(&m, 0, sizeof m);
        m.base = 0x7f0000000000ull + ((uint64_t)i << 32);
        m.size = 1 << 20;
        m.path_id = STR_MODULE0 + (uint32_t)i;
        add(s, GT_REC_MODULE, &m, sizeof m);
    }
    if (s->sc->compile_ns && !s->sc->compile_no_stacks) { /* pad_mm.py:216 in train.py:57 */
        const scenario *sc = s->sc;
        gt_test_writer_string(
            &s->w, STR_INDUCTOR_FILE,
            sc->compile_file
                ? sc->compile_file
                : "/usr/lib/python3/site-packages/torch/_inductor/fx_passes/pad_mm.py");
        gt_test_writer_string(&s->w, STR_INDUCTOR_FUNC,
                              sc->compile_func ? sc->compile_func : "should_pad");
        unsigned char body[sizeof(gt_rec_stack) + 8 + 32];
        memset(body, 0, sizeof body);
        gt_rec_stack st = {STACK_COMPILE, 1, 2, 0};
        memcpy(body, &st, sizeof st);
        uint64_t pc = 0x401100;
        memcpy(body + sizeof st, &pc, 8);
        uint32_t frames[8] = {STR_INDUCTOR_FILE, STR_INDUCTOR_FUNC, 216, 0,
                              STR_FILE,          STR_FUNC,          57,  0};
        memcpy(body + sizeof st + 8, frames, sizeof frames);
        add(s, GT_REC_STACK, body, sizeof body);
    }
    /* stacks: one Python frame each (train.py:57 sync, :42 copy, :33 alloc) */
    int lines[3] = {57, 42, 33};
    for (int i = 0; i < 3; i++) {
        unsigned char body[sizeof(gt_rec_stack) + 8 + 16];
        memset(body, 0, sizeof body);
        gt_rec_stack st = {(uint32_t)(STACK_SYNC + i), 1, 1, 0};
        memcpy(body, &st, sizeof st);
        uint64_t pc = 0x401000 + (uint64_t)i;
        memcpy(body + sizeof st, &pc, 8);
        uint32_t frame[4] = {STR_FILE, STR_FUNC, (uint32_t)lines[i], 0};
        memcpy(body + sizeof st + 8, frame, sizeof frame);
        add(s, GT_REC_STACK, body, sizeof body);
    }
}

static void header(gt_file_header *h, const scenario *sc)
{
    memset(h, 0, sizeof *h);
    h->pid = sc->pid;
    h->ppid = 1;
    h->start_realtime_ns = (int64_t)T0;
    h->rank = sc->rank;
    h->local_rank = sc->rank;
    h->world_size = sc->world_size;
    snprintf(h->host, sizeof h->host, "testhost");
    gt_runtime_info *rt = &h->runtime;
    rt->driver_version = 13000;
    rt->runtime_version = 13000;
    rt->cudnn_version = 91900;
    rt->cudnn_cudart_version = sc->cudnn_cudart_version ? sc->cudnn_cudart_version : 13000;
    rt->cublas_version = 130000;
    rt->cupti_version = 130001;
    rt->device_count = 1;
    rt->cupti_state = GT_CUPTI_ACTIVE;
    snprintf(rt->devices[0].name, sizeof rt->devices[0].name, "NVIDIA H200");
    rt->devices[0].cc_major = sc->cc_major;
    rt->devices[0].cc_minor = sc->cc_minor;
    rt->devices[0].sm_count = 132;
    rt->devices[0].total_mem_bytes = 150ull << 30;
    if (sc->sample_on_ns)
        h->flags |= GT_HDR_GPU_SAMPLED;
    if (sc->um_buffers && !sc->um_off)
        h->flags |= sc->um_refused ? GT_HDR_UM_REFUSED : GT_HDR_UM_COUNTERS;
}

/* A kernel compiled on first use: by a ptxas child (its .procs line) or in the process. */
static void jit(sim *s)
{
    const scenario *sc = s->sc;
    uint64_t start = s->t;
    if (sc->jit_child) {
        s->t += sc->jit_ns;
        FILE *f = sc->procs_path ? fopen(sc->procs_path, "a") : NULL;
        if (!f) {
            s->rc = -1;
            return;
        }
        fprintf(f, "%d %d %llu %llu /usr/local/cuda/bin/ptxas\n", sc->pid + 1, sc->pid,
                (unsigned long long)start, (unsigned long long)s->t);
        fclose(f);
        return;
    }
    s->t += sc->jit_ns * 6 / 10;
    gt_rec_api m;
    common(&m.c, s, GT_FN_cuModuleLoadData, sc->jit_ns - sc->jit_ns * 6 / 10, 0);
    add(s, GT_REC_API, &m, sizeof m);
}

/* A framework's compiler in the process for ns: Dynamo's silent tracing, then Inductor's passes
 * with a copy and a sync every 10 ms (its frames on their stacks), the compiled module loaded. */
static void compilation(sim *s, uint64_t ns)
{
    const scenario *sc = s->sc;
    uint32_t stack = sc->compile_no_stacks ? 0 : STACK_COMPILE;
    s->t += ns / 2;
    if (!s->pool_start && sc->compile_workers)
        s->pool_start = s->t;
    uint64_t end = s->t + ns / 2 - 1000000;
    while (s->t + 10000000 < end) {
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, 65536, 20.0, stack);
        sync_stream_at(s, stack);
        s->t += 10000000;
    }
    s->t = end > s->t ? end : s->t;
    gt_rec_api m;
    common(&m.c, s, GT_FN_cuModuleLoadData, 1000000, 0);
    add(s, GT_REC_API, &m, sizeof m);
}

static int compiles_at(const scenario *sc, int step)
{
    if (!sc->compile_ns || step < sc->compile_step)
        return 0;
    if (step == sc->compile_step)
        return 1;
    return sc->recompile_every && (step - sc->compile_step) % sc->recompile_every == 0 ? 2 : 0;
}

static void step_compute(sim *s, int step)
{
    const scenario *sc = s->sc;
    if (sc->nvtx)
        nvtx(s, GT_NVTX_PUSH);
    s->t += sc->data_load_ns;
    if (sc->jit_ns && (step == sc->jit_step || (sc->jit_step2 && step == sc->jit_step2)))
        jit(s);
    s->step = step;
    if (sc->um_buffers && sc->um_prefetch)
        prefetch(s);
    if (sc->tuner_ns && step == sc->tuner_step) { /* an autotuner's range, nested in the step */
        nvtx_named(s, GT_NVTX_PUSH, STR_TUNER);
        s->t += sc->tuner_ns;
        nvtx_named(s, GT_NVTX_POP, 0);
    }
    if (sc->pageable_h2d_bytes)
        copy(s, GT_DIR_H2D, GT_MEM_PAGEABLE, 1, sc->pageable_h2d_bytes, 5.0, STACK_COPY);
    if (sc->pinned_h2d_bytes)
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, sc->pinned_h2d_bytes, 20.0, 0);
    if (compiles_at(sc, step)) /* the compiled function called on the batch */
        compilation(s, compiles_at(sc, step) == 1 ? sc->compile_ns : sc->compile_ns / 4);
    if (sc->blocking_h2d_bytes)
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 0, sc->blocking_h2d_bytes, 20.0, STACK_COPY);
    for (int a = 0; a < sc->allocs_per_step; a++)
        alloc(s, 0);
    if (sc->cudnn || sc->inferred_conv)
        convolutions(s, step);
    for (int k = 0; k < sc->kernels_per_step; k++)
        launch(s, STR_KERNEL0 + (uint32_t)k, sc->kernel_ns);
    for (int a = 0; a < sc->allocs_per_step; a++)
        alloc(s, 1);
}

/* A device-to-host copy on a stream of its own, running beside the queued kernels, and a sync
 * on that stream: the CPU waits for the copy while the kernels keep the GPU busy. */
static void side_copy_and_sync(sim *s)
{
    uint64_t bytes = s->sc->side_copy_bytes, dur = (uint64_t)((double)bytes / 20.0);
    gt_rec_api_memcpy m;
    memset(&m, 0, sizeof m);
    common(&m.c, s, GT_FN_cudaMemcpyAsync, 4000, 0);
    m.c.stream = 8;
    m.bytes = bytes;
    m.direction = GT_DIR_D2H;
    m.src_kind = GT_MEM_DEVICE;
    m.dst_kind = GT_MEM_PINNED;
    m.is_async = 1;
    m.peer_device = -1;
    add(s, GT_REC_API_MEMCPY, &m, sizeof m);
    gt_rec_gpu_memcpy g;
    memset(&g, 0, sizeof g);
    g.start_ns = m.c.t_begin_ns + 2000;
    g.end_ns = g.start_ns + dur;
    g.corr_id = ++s->cupti_corr;
    g.bytes = bytes;
    g.copy_kind = 2;
    g.src_kind = GT_MEM_DEVICE;
    g.dst_kind = GT_MEM_PINNED;
    g.is_async = 1;
    g.stream = 8;
    if (gpu_recorded(s, g.start_ns))
        add(s, GT_REC_GPU_MEMCPY, &g, sizeof g);
    gt_rec_api_sync y;
    memset(&y, 0, sizeof y);
    common(&y.c, s, GT_FN_cudaStreamSynchronize, g.end_ns > s->t ? g.end_ns - s->t + 5000 : 5000,
           STACK_SYNC);
    y.c.stream = 8;
    y.sync_kind = GT_SYNC_STREAM;
    add(s, GT_REC_API_SYNC, &y, sizeof y);
}

static void step_end(sim *s)
{
    const scenario *sc = s->sc;
    if (sc->um_buffers && sc->um_cpu_touch)
        cpu_touch(s);
    if (sc->side_copy_bytes)
        side_copy_and_sync(s);
    if (sc->d2h_bytes)
        pageable_d2h(s);
    if (sc->item_every_step)
        copy(s, GT_DIR_D2H, GT_MEM_PAGEABLE, 0, 4, 1.0, STACK_SYNC);
    if (sc->sync_every_step)
        sync_stream(s);
    if (sc->nvtx)
        nvtx(s, GT_NVTX_POP);
}

static void one_step(sim *s, int step)
{
    step_compute(s, step);
    step_end(s);
}

static int sim_open(sim *s, const char *path, const scenario *sc)
{
    memset(s, 0, sizeof *s);
    s->sc = sc;
    s->t = T0 + 1000000;
    gt_file_header h;
    header(&h, sc);
    static const char cmd[] = "python\0train.py";
    if (gt_test_writer_open(&s->w, path, &h, sc->exe ? sc->exe : "/usr/bin/python3", cmd,
                            sizeof cmd) != 0)
        return -1;
    gt_test_writer_set_tid(&s->w, TID_MAIN);
    s->t0 = s->t; /* the first window opens at the first call */
    s->next_switch = sc->sample_on_ns ? s->t : 0;
    strings(s);
    if (sc->lost_records) {
        gt_rec_lost l = {sc->lost_records, s->t, s->t + 10,
                         sc->lost_reason ? sc->lost_reason : GT_LOST_BUFFER_FULL, 100};
        add(s, GT_REC_LOST, &l, sizeof l);
    }
    for (int b = 0; b < sc->um_buffers; b++)
        managed_alloc(s, b);
    if (sc->startup_ns || sc->launch_unrecorded) { /* the process's own calls are recorded */
        alloc(s, 0);
        s->t += sc->startup_ns;
    }
    if (sc->kernel_image_error) {
        gt_rec_api_launch l;
        memset(&l, 0, sizeof l);
        common(&l.c, s, GT_FN_cudaLaunchKernel, 3000, 0);
        l.c.result = 209;
        add(s, GT_REC_API_LAUNCH, &l, sizeof l);
    }
    return 0;
}

static int sim_close(sim *s)
{
    if (gt_test_writer_close(&s->w) != 0)
        s->rc = -1;
    return s->rc;
}

/* A DataLoader worker: a forked child of the scenario's process that keeps its program and makes
 * no CUDA call (its trace holds a header and nothing else). */
static int write_worker(const char *path, const scenario *sc, int i)
{
    gt_test_writer w;
    gt_file_header h;
    header(&h, sc);
    h.ppid = sc->pid;
    h.pid = sc->pid + 100 + i;
    h.flags |= GT_HDR_FORKED_CHILD;
    static const char cmd[] = "python\0train.py";
    if (gt_test_writer_open(&w, path, &h, "/usr/bin/python3", cmd, sizeof cmd) != 0)
        return -1;
    return gt_test_writer_close(&w);
}

/* Inductor's compile workers: the pool's process (a child of the program, exec'd) and the
 * workers it forks, all with the pool's command line, which names the program as parent. */
static int write_compile_worker(const char *path, const scenario *sc, int i, uint64_t start)
{
    gt_test_writer w;
    gt_file_header h;
    header(&h, sc);
    h.pid = sc->pid + 200 + i;
    h.ppid = i ? sc->pid + 200 : sc->pid;
    h.start_realtime_ns = (int64_t)start;
    if (i)
        h.flags |= GT_HDR_FORKED_CHILD;
    char cmd[300];
    int len = snprintf(cmd, sizeof cmd,
                       "python3%c/usr/lib/python3/site-packages/torch/_inductor/compile_worker/"
                       "__main__.py%c--kind=fork%c--parent=%d",
                       0, 0, 0, sc->pid);
    if (gt_test_writer_open(&w, path, &h, "/usr/bin/python3", cmd, (size_t)len + 1) != 0)
        return -1;
    return gt_test_writer_close(&w);
}

static int write_workers(const char *path, const scenario *sc, uint64_t pool_start)
{
    for (int i = 0; i < sc->dataloader_workers; i++) {
        char wp[600];
        snprintf(wp, sizeof wp, "%s.worker%d.gtrace", path, i);
        if (write_worker(wp, sc, i) != 0)
            return -1;
    }
    for (int i = 0; pool_start && i < sc->compile_workers; i++) {
        char wp[600];
        snprintf(wp, sizeof wp, "%s.cworker%d.gtrace", path, i);
        if (write_compile_worker(wp, sc, i, pool_start + (uint64_t)i * 1000000) != 0)
            return -1;
    }
    return 0;
}

int scenario_write(const char *path, const scenario *sc)
{
    sim s;
    if (sim_open(&s, path, sc) != 0)
        return -1;
    for (int i = 0; i < sc->steps; i++)
        one_step(&s, i);
    if (sim_close(&s) != 0)
        return -1;
    return write_workers(path, sc, s.pool_start);
}

/* The c-th all-reduce of a step on every rank: each launches it, its kernel starts when its
 * queue gets there, and all of them end nccl_ns after the last one started. */
static void all_reduce(sim *ranks, int n)
{
    uint64_t start[8], corr[8], last = 0;
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        gt_rec_api_launch l;
        memset(&l, 0, sizeof l);
        common(&l.c, s, GT_FN___cudaLaunchKernel, s->sc->launch_ns, 0);
        l.name_id = STR_NCCL;
        add(s, GT_REC_API_LAUNCH, &l, sizeof l);
        corr[r] = l.c.corr_id;
        start[r] = s->gpu_free > l.c.t_end_ns + 2000 ? s->gpu_free : l.c.t_end_ns + 2000;
        last = start[r] > last ? start[r] : last;
    }
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        gt_rec_gpu_kernel k;
        memset(&k, 0, sizeof k);
        k.start_ns = start[r];
        k.end_ns = last + s->sc->nccl_ns;
        k.corr_id = ++s->cupti_corr;
        k.name_id = STR_NCCL;
        k.stream = 7;
        add(s, GT_REC_GPU_KERNEL, &k, sizeof k);
        gt_rec_gpu_ext_corr e = {corr[r], k.corr_id, GT_EXT_CORR_KIND_OURS, 0};
        add(s, GT_REC_GPU_EXT_CORR, &e, sizeof e);
        s->gpu_free = k.end_ns;
    }
}

/* The c-th gloo all-reduce of a step on every rank: the gloo thread waits for the gradients
 * (a stream sync: the rank arrives when it returns), the allreduce ends gloo_ns after the last
 * arrival, then the gloo thread copies the result back; the main thread waits without a call. */
static void gloo_all_reduce(sim *ranks, int n)
{
    uint64_t last = 0;
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        gt_test_writer_set_tid(&s->w, TID_GLOO);
        sync_stream(s);
        last = s->t > last ? s->t : last;
    }
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        s->t = last + s->sc->gloo_ns;
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, 1 << 20, 20.0, 0);
        gt_test_writer_set_tid(&s->w, TID_MAIN);
    }
}

int scenario_write_ranks(const char *const *paths, const scenario *scs, int n)
{
    sim ranks[8];
    int rc = 0, opened = 0;
    if (n < 1 || n > 8)
        return -1;
    for (; opened < n; opened++)
        if (sim_open(&ranks[opened], paths[opened], &scs[opened]) != 0) {
            rc = -1;
            break;
        }
    for (int i = 0; i < scs[0].steps && !rc; i++) {
        for (int r = 0; r < n; r++)
            step_compute(&ranks[r], i);
        for (int c = 0; c < scs[0].nccl_per_step; c++)
            all_reduce(ranks, n);
        for (int c = 0; c < scs[0].gloo_per_step; c++)
            gloo_all_reduce(ranks, n);
        for (int r = 0; r < n; r++)
            step_end(&ranks[r]);
    }
    for (int r = 0; r < opened; r++)
        if (sim_close(&ranks[r]) != 0 || write_workers(paths[r], &scs[r], ranks[r].pool_start) != 0)
            rc = -1;
    return rc;
}

/* ------------------------------------------------------------------ DDP over gloo */

/* The next stream of gloo's pool: each collective's copies and waits go on one. */
static uint64_t gloo_stream(sim *s)
{
    return 0x7f5000000000ull + (s->gloo_next++ % GLOO_STREAMS) * 0x1000;
}

/* The program hands data to a collective (PyTorch's gloo work, built on the calling thread): the
 * collective's stream waits for the caller's work, a call that does not block. */
static void hand_over(sim *s, uint64_t stream)
{
    gt_rec_api_sync y;
    memset(&y, 0, sizeof y);
    s->api_stream = stream;
    common(&y.c, s, GT_FN_cudaStreamWaitEvent, 3000, 0);
    s->api_stream = 0;
    y.sync_kind = GT_SYNC_STREAM_WAIT_EVENT;
    add(s, GT_REC_API_SYNC, &y, sizeof y);
}

/* One rank's step up to the forward: the batch (a delay in data loading before its copy), then
 * a delay before the forward. */
static void ddp_before_forward(sim *s)
{
    const scenario *sc = s->sc;
    if (sc->nvtx)
        nvtx(s, GT_NVTX_PUSH);
    if (sc->delay_where == DELAY_DATA)
        s->t += sc->delay_ns; /* __getitem__: the batch is made without CUDA calls */
    if (sc->pinned_h2d_bytes)
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, sc->pinned_h2d_bytes, 20.0, 0);
    if (sc->delay_where == DELAY_FORWARD)
        s->t += sc->delay_ns;
}

/* The rest of the step up to the end of its backward's launches: the forward on the main thread,
 * the backward in buckets on the autograd thread (a hook's delay there too); when each bucket's
 * gradients were handed over (on streams[i]) and when the GPU had them (its queue after them). */
static void ddp_compute(sim *s, uint64_t *handed, uint64_t *ready, uint64_t *streams)
{
    const scenario *sc = s->sc;
    int b = sc->buckets > 0 ? sc->buckets : 2, fwd = sc->kernels_per_step / 3;
    int per_bucket = (sc->kernels_per_step - fwd) / b > 0 ? (sc->kernels_per_step - fwd) / b : 1;
    for (int k = 0; k < fwd; k++)
        launch(s, STR_KERNEL0 + (uint32_t)(k % sc->kernels_per_step), sc->kernel_ns);
    gt_test_writer_set_tid(&s->w, TID_AUTOGRAD);
    for (int i = 0; i < b; i++) {
        for (int k = 0; k < per_bucket; k++)
            launch(s, STR_KERNEL0 + (uint32_t)((fwd + i * per_bucket + k) % sc->kernels_per_step),
                   sc->kernel_ns);
        streams[i] = gloo_stream(s);
        hand_over(s, streams[i]);
        handed[i] = s->t;
        ready[i] = s->gpu_free;
        if (i == 0 && sc->delay_where == DELAY_BACKWARD)
            s->t += sc->delay_ns; /* a hook on a gradient, after the first bucket's */
    }
    gt_test_writer_set_tid(&s->w, TID_MAIN);
}

/* Rank r's parent in gloo's broadcast tree from rank 0: r less the largest power of two <= r. */
static int tree_parent(int r)
{
    int p = 1;
    while (p * 2 <= r)
        p *= 2;
    return r - p;
}

/* DDP's broadcast of the buffers (batch norm's) from rank 0 at each forward: each main thread
 * hands it over; the root's gloo thread waits for the buffers on the host (a stream sync), the
 * others' receive without a call. Down the tree a rank has the data broadcast_ns after both it
 * and its parent are there, a sender is done once its children have it; then each gloo thread
 * copies the result back, and the main thread, blocked meanwhile, goes on. */
static void ddp_broadcast(sim *ranks, int n, uint64_t *gloo_free)
{
    uint64_t arrive[8], data_at[8], done[8], stream[8];
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        stream[r] = gloo_stream(s);
        hand_over(s, stream[r]);
        arrive[r] = s->t;
        if (r == 0) {
            uint64_t main_t = s->t;
            gt_test_writer_set_tid(&s->w, TID_GLOO);
            s->t = gloo_free[r] > main_t ? gloo_free[r] : main_t;
            s->api_stream = stream[r];
            sync_stream(s);
            s->api_stream = 0;
            arrive[r] = s->t;
            s->t = main_t;
            gt_test_writer_set_tid(&s->w, TID_MAIN);
        }
    }
    uint64_t step = ranks[0].sc->broadcast_ns;
    data_at[0] = done[0] = arrive[0];
    for (int r = 1; r < n; r++) {
        uint64_t from = data_at[tree_parent(r)];
        data_at[r] = done[r] = (from > arrive[r] ? from : arrive[r]) + step;
    }
    for (int r = n - 1; r > 0; r--) /* children come after their parent */
        if (done[r] > done[tree_parent(r)])
            done[tree_parent(r)] = done[r];
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        gt_test_writer_set_tid(&s->w, TID_GLOO);
        s->t = done[r] > gloo_free[r] ? done[r] : gloo_free[r];
        s->api_stream = stream[r];
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, 64 << 10, 20.0, 0);
        s->api_stream = 0;
        gloo_free[r] = s->t;
        gt_test_writer_set_tid(&s->w, TID_MAIN);
    }
}

/* Bucket i's all-reduce on every rank: each gloo thread, once free and handed the bucket, waits
 * for the gradients (a stream sync: the rank arrives when it returns), the sum ends gloo_ns after
 * the last arrival, and each gloo thread copies the result back. */
static void ddp_all_reduce(sim *ranks, int n, const uint64_t (*handed)[16],
                           const uint64_t (*ready)[16], const uint64_t (*streams)[16], int i,
                           uint64_t *gloo_free)
{
    uint64_t last = 0;
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        uint64_t main_t = s->t;
        gt_test_writer_set_tid(&s->w, TID_GLOO);
        s->t = gloo_free[r] > handed[r][i] ? gloo_free[r] : handed[r][i];
        uint64_t gpu_free = s->gpu_free;
        s->gpu_free = ready[r][i]; /* the sync waits for this bucket's gradients */
        s->api_stream = streams[r][i];
        sync_stream(s);
        s->api_stream = 0;
        s->gpu_free = gpu_free > s->gpu_free ? gpu_free : s->gpu_free;
        gloo_free[r] = s->t;
        last = s->t > last ? s->t : last;
        s->t = main_t;
    }
    for (int r = 0; r < n; r++) {
        sim *s = &ranks[r];
        uint64_t main_t = s->t;
        s->t = last + s->sc->gloo_ns;
        s->api_stream = streams[r][i];
        copy(s, GT_DIR_H2D, GT_MEM_PINNED, 1, 1 << 20, 20.0, 0);
        s->api_stream = 0;
        gloo_free[r] = s->t;
        s->t = main_t;
        gt_test_writer_set_tid(&s->w, TID_MAIN);
    }
}

/* After the backward: the main thread waits for the all-reduces (no call), then the optimizer
 * and, with item_every_step, the loss read back. */
static void ddp_finish(sim *s, uint64_t reduced)
{
    const scenario *sc = s->sc;
    s->t = reduced > s->t ? reduced : s->t;
    launch(s, STR_KERNEL0, sc->kernel_ns);
    launch(s, STR_KERNEL0 + 1, sc->kernel_ns);
    step_end(s);
}

int scenario_write_ddp(const char *const *paths, const scenario *scs, int n)
{
    sim ranks[8];
    uint64_t handed[8][16], ready[8][16], streams[8][16], gloo_free[8] = {0};
    int rc = 0, opened = 0;
    if (n < 1 || n > 8 || scs[0].buckets > 16)
        return -1;
    for (; opened < n; opened++)
        if (sim_open(&ranks[opened], paths[opened], &scs[opened]) != 0) {
            rc = -1;
            break;
        }
    int buckets = scs[0].buckets > 0 ? scs[0].buckets : 2;
    for (int step = 0; step < scs[0].steps && !rc; step++) {
        for (int r = 0; r < n; r++)
            ddp_before_forward(&ranks[r]);
        if (scs[0].broadcast_ns)
            ddp_broadcast(ranks, n, gloo_free);
        for (int r = 0; r < n; r++) {
            if (scs[0].broadcast_ns) /* the main thread waits for the broadcast (no call) */
                ranks[r].t = ranks[r].t > gloo_free[r] ? ranks[r].t : gloo_free[r];
            ddp_compute(&ranks[r], handed[r], ready[r], streams[r]);
        }
        for (int i = 0; i < buckets; i++)
            ddp_all_reduce(ranks, n, (const uint64_t(*)[16])handed, (const uint64_t(*)[16])ready,
                           (const uint64_t(*)[16])streams, i, gloo_free);
        for (int r = 0; r < n; r++)
            ddp_finish(&ranks[r], gloo_free[r]);
    }
    for (int r = 0; r < opened; r++)
        if (sim_close(&ranks[r]) != 0)
            rc = -1;
    return rc;
}
