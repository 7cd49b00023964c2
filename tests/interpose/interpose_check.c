/* interpose_check.c — reads the .gtrace a test app produced under LD_PRELOAD=libgputrace.so and
 * asserts exactly what the wrappers must have recorded for that app (one case per app).
 * Usage: interpose_check CASE DIR. Exit 0 when every expectation holds, 1 otherwise. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_reader.h"
#include "gtrace_api.h"

typedef struct rec {
    uint16_t kind, flags;
    uint32_t size;
    void *body;
} rec;

static rec *recs;
static size_t nrecs;
static gt_reader *reader;
static int failures;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    failures++;
}

#define EXPECT_EQ(what, got, want)                                                                 \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        if (g_ != w_)                                                                              \
            fail("%s: got %lld, expected %lld (line %d)", what, g_, w_, __LINE__);                 \
    } while (0)

static void load(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096] = "";
    int files = 0;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".gtrace"))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name), files++;
    if (d)
        closedir(d);
    if (files != 1) {
        fprintf(stderr, "FAIL: expected one .gtrace in %s, found %d\n", dir, files);
        exit(1);
    }
    char err[512];
    if (gt_reader_open(path, &reader, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "FAIL: %s\n", err);
        exit(1);
    }
    gt_record r;
    size_t cap = 0;
    while (gt_reader_next(reader, &r) == 1) {
        if (nrecs == cap)
            recs = realloc(recs, (cap = cap ? cap * 2 : 256) * sizeof *recs);
        recs[nrecs] = (rec){r.kind, r.flags, r.body_size, malloc(r.body_size ? r.body_size : 1)};
        memcpy(recs[nrecs].body, r.body, r.body_size);
        nrecs++;
    }
    EXPECT_EQ("lost records", gt_reader_get_stats(reader)->lost_records, 0);
}

static const char *str(uint32_t id)
{
    const char *s = gt_reader_string(reader, id);
    return s ? s : "?";
}

/* The i-th record of a kind whose gt_api_common.func is func (any func when 0); NULL when absent.
 */
static rec *nth(uint16_t kind, uint32_t func, int i)
{
    for (size_t j = 0; j < nrecs; j++) {
        if (recs[j].kind != kind)
            continue;
        if (func && ((gt_api_common *)recs[j].body)->func != func)
            continue;
        if (i-- == 0)
            return &recs[j];
    }
    return NULL;
}

static int count(uint16_t kind, uint32_t func)
{
    int n = 0;
    while (nth(kind, func, n))
        n++;
    return n;
}

static int count_api_records(void)
{
    int n = 0;
    for (size_t j = 0; j < nrecs; j++)
        if (recs[j].kind >= GT_REC_API && recs[j].kind <= GT_REC_API_CUBLAS)
            n++;
    return n;
}

/* Every API record: times ordered, correlation ids unique and non-zero. */
static void check_common_fields(void)
{
    uint64_t last_corr = 0;
    for (size_t j = 0; j < nrecs; j++) {
        if (recs[j].kind < GT_REC_API || recs[j].kind > GT_REC_API_CUBLAS)
            continue;
        gt_api_common *c = recs[j].body;
        if (c->t_end_ns < c->t_begin_ns || c->t_begin_ns == 0)
            fail("record %zu: bad times", j);
        if (c->corr_id == 0 || c->corr_id == last_corr)
            fail("record %zu: corr id %llu", j, (unsigned long long)c->corr_id);
        last_corr = c->corr_id;
        if (!gt_api_func_name(c->func))
            fail("record %zu: unknown func %u", j, c->func);
    }
}

/* ------------------------------------------------------------------ runtime */

static void expect_copy(int i, uint32_t func, uint64_t bytes, int dir, int src, int dst, int async,
                        uint16_t flags)
{
    rec *r = nth(GT_REC_API_MEMCPY, 0, i);
    if (!r) {
        fail("copy %d missing", i);
        return;
    }
    gt_rec_api_memcpy *m = r->body;
    char what[64];
    snprintf(what, sizeof what, "copy %d func", i);
    EXPECT_EQ(what, m->c.func, func);
    snprintf(what, sizeof what, "copy %d bytes", i);
    EXPECT_EQ(what, m->bytes, bytes);
    snprintf(what, sizeof what, "copy %d direction", i);
    EXPECT_EQ(what, m->direction, dir);
    snprintf(what, sizeof what, "copy %d src kind", i);
    EXPECT_EQ(what, m->src_kind, src);
    snprintf(what, sizeof what, "copy %d dst kind", i);
    EXPECT_EQ(what, m->dst_kind, dst);
    snprintf(what, sizeof what, "copy %d async", i);
    EXPECT_EQ(what, m->is_async, async);
    snprintf(what, sizeof what, "copy %d flags", i);
    EXPECT_EQ(what, r->flags, flags);
    snprintf(what, sizeof what, "copy %d result", i);
    EXPECT_EQ(what, m->c.result, 0);
}

static void check_runtime(void)
{
    const gt_file_header *h = gt_reader_header(reader);
    EXPECT_EQ("runtime version", h->runtime.runtime_version, 13000);
    EXPECT_EQ("driver version", h->runtime.driver_version, 13000);
    EXPECT_EQ("device count", h->runtime.device_count, 1);
    if (strcmp(h->runtime.devices[0].name, "Fake H200") != 0)
        fail("device name '%s'", h->runtime.devices[0].name);
    EXPECT_EQ("sm count", h->runtime.devices[0].sm_count, 132);

    EXPECT_EQ("cudaMalloc records", count(GT_REC_API_ALLOC, GT_FN_cudaMalloc), 2);
    gt_rec_api_alloc *a0 = nth(GT_REC_API_ALLOC, GT_FN_cudaMalloc, 0)->body;
    gt_rec_api_alloc *a1 = nth(GT_REC_API_ALLOC, GT_FN_cudaMalloc, 1)->body;
    EXPECT_EQ("malloc 0 result", a0->c.result, 0);
    EXPECT_EQ("malloc 0 bytes", a0->bytes, 1 << 20);
    EXPECT_EQ("malloc 0 kind", a0->alloc_kind, GT_ALLOC_DEVICE);
    if (!a0->ptr)
        fail("malloc 0 pointer missing");
    EXPECT_EQ("malloc 1 result (injected failure passed through)", a1->c.result, 2);
    EXPECT_EQ("malloc 1 pointer", a1->ptr, 0);
    EXPECT_EQ("cudaMallocHost", count(GT_REC_API_ALLOC, GT_FN_cudaMallocHost), 1);
    EXPECT_EQ("cudaHostRegister", count(GT_REC_API_ALLOC, GT_FN_cudaHostRegister), 1);
    EXPECT_EQ("cudaHostUnregister", count(GT_REC_API_ALLOC, GT_FN_cudaHostUnregister), 1);
    EXPECT_EQ("cudaFreeHost", count(GT_REC_API_ALLOC, GT_FN_cudaFreeHost), 1);
    gt_rec_api_alloc *fh = nth(GT_REC_API_ALLOC, GT_FN_cudaFreeHost, 0)->body;
    EXPECT_EQ("cudaFreeHost bytes from the pinned table", fh->bytes, 1 << 20);
    EXPECT_EQ("cudaFree", count(GT_REC_API_ALLOC, GT_FN_cudaFree), 2);
    EXPECT_EQ("bad cudaFree result",
              ((gt_rec_api_alloc *)nth(GT_REC_API_ALLOC, GT_FN_cudaFree, 1)->body)->c.result, 1);

    EXPECT_EQ("copies", count(GT_REC_API_MEMCPY, 0), 7);
    expect_copy(0, GT_FN_cudaMemcpy, 1 << 20, GT_DIR_H2D, GT_MEM_PAGEABLE, GT_MEM_DEVICE, 0, 0);
    expect_copy(1, GT_FN_cudaMemcpyAsync, 4096, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1, 0);
    expect_copy(2, GT_FN_cudaMemcpyAsync, 4096, GT_DIR_D2H, GT_MEM_DEVICE, GT_MEM_PINNED, 1, 0);
    expect_copy(3, GT_FN_cudaMemcpyAsync, 1000, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1, 0);
    expect_copy(4, GT_FN_cudaMemcpyAsync, 1000, GT_DIR_H2D, GT_MEM_PAGEABLE, GT_MEM_DEVICE, 1, 0);
    expect_copy(5, GT_FN_cudaMemcpyAsync, 512, GT_DIR_H2D, GT_MEM_PINNED, GT_MEM_DEVICE, 1,
                GT_RF_PTDS);
    expect_copy(6, GT_FN_cudaMemcpy, 2048, GT_DIR_D2H, GT_MEM_DEVICE, GT_MEM_PAGEABLE, 0, 0);
    gt_rec_api_memcpy *c1 = nth(GT_REC_API_MEMCPY, 0, 1)->body;
    if (c1->c.stream == 0)
        fail("copy 1 stream not recorded");
    EXPECT_EQ("copy 2 stream (default)",
              ((gt_rec_api_memcpy *)nth(GT_REC_API_MEMCPY, 0, 2)->body)->c.stream, 0);
    EXPECT_EQ("device", c1->c.device, 0);

    EXPECT_EQ("memsets", count(GT_REC_API_MEMSET, 0), 2);
    gt_rec_api_memset *s1 = nth(GT_REC_API_MEMSET, 0, 1)->body;
    EXPECT_EQ("memset value", s1->value, 7);
    EXPECT_EQ("memset bytes", s1->bytes, 200);
    EXPECT_EQ("memset async", s1->is_async, 1);

    EXPECT_EQ("cudaLaunchKernel", count(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernel), 3);
    EXPECT_EQ("__cudaLaunchKernel", count(GT_REC_API_LAUNCH, GT_FN___cudaLaunchKernel), 2);
    EXPECT_EQ("cudaLaunchKernelExC", count(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernelExC), 1);
    for (int i = 0; i < 6; i++) {
        gt_rec_api_launch *l = nth(GT_REC_API_LAUNCH, 0, i)->body;
        if (strcmp(str(l->name_id), "_Z6kernelPf") != 0)
            fail("launch %d name '%s'", i, str(l->name_id));
    }
    gt_rec_api_launch *l0 = nth(GT_REC_API_LAUNCH, 0, 0)->body;
    EXPECT_EQ("grid x", l0->grid[0], 4);
    EXPECT_EQ("grid y", l0->grid[1], 2);
    EXPECT_EQ("block x", l0->block[0], 128);
    EXPECT_EQ("shared mem", l0->shared_mem, 256);
    gt_rec_api_launch *lx = nth(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernelExC, 0)->body;
    EXPECT_EQ("ExC grid", lx->grid[0], 8);
    EXPECT_EQ("ExC smem", lx->shared_mem, 32);
    if (!lx->c.stream)
        fail("ExC stream");

    EXPECT_EQ("event record", count(GT_REC_API_SYNC, GT_FN_cudaEventRecord), 1);
    EXPECT_EQ("event sync", count(GT_REC_API_SYNC, GT_FN_cudaEventSynchronize), 1);
    EXPECT_EQ("stream sync", count(GT_REC_API_SYNC, GT_FN_cudaStreamSynchronize), 1);
    EXPECT_EQ("stream query", count(GT_REC_API_SYNC, GT_FN_cudaStreamQuery), 1);
    EXPECT_EQ("device sync", count(GT_REC_API_SYNC, GT_FN_cudaDeviceSynchronize), 1);
    gt_rec_api_sync *ss = nth(GT_REC_API_SYNC, GT_FN_cudaStreamSynchronize, 0)->body;
    EXPECT_EQ("stream sync kind", ss->sync_kind, GT_SYNC_STREAM);
    /* 2 malloc + host + register + unregister + freehost + 2 free, 7 copies, 2 sets, 6 launches,
     * 5 syncs: and nothing else (no call of gputrace's own, no double recording). */
    EXPECT_EQ("API records in all", count_api_records(), 8 + 7 + 2 + 6 + 5);
    check_common_fields();
}

/* ------------------------------------------------------------------ cuDNN */

static gt_rec_cudnn_plan *plan_rec(int i)
{
    rec *r = nth(GT_REC_CUDNN_PLAN, 0, i);
    return r ? r->body : NULL;
}
static const char *plan_text(const gt_rec_cudnn_plan *p, int json)
{
    static char buf[4096];
    const char *base = (const char *)(p + 1) + (json ? p->knobs_len : 0);
    size_t n = json ? p->json_len : p->knobs_len;
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, base, n);
    buf[n] = 0;
    return buf;
}
/* api records are matched by func through the common header, which is not how nth() filters
 * plan records (no common header there): nth(kind, 0, i) only. */
static gt_rec_api_cudnn *execute_rec(int i)
{
    rec *r = nth(GT_REC_API_CUDNN, GT_FN_cudnnBackendExecute, i);
    return r ? r->body : NULL;
}

static void check_cudnn_legacy(void)
{
    EXPECT_EQ("cudnnConvolutionForward", count(GT_REC_API_CUDNN, GT_FN_cudnnConvolutionForward), 2);
    EXPECT_EQ("cudnnConvolutionBackwardData",
              count(GT_REC_API_CUDNN, GT_FN_cudnnConvolutionBackwardData), 1);
    EXPECT_EQ("Find", count(GT_REC_API_CUDNN, GT_FN_cudnnFindConvolutionForwardAlgorithm), 1);
    EXPECT_EQ("Get_v7", count(GT_REC_API_CUDNN, GT_FN_cudnnGetConvolutionForwardAlgorithm_v7), 1);
    EXPECT_EQ("SetConvolutionMathType", count(GT_REC_API_CUDNN, GT_FN_cudnnSetConvolutionMathType),
              1);
    EXPECT_EQ("signatures (fwd and bwd data, each once)", count(GT_REC_CUDNN_CONV_SIG, 0), 2);
    gt_rec_cudnn_conv_sig *s = nth(GT_REC_CUDNN_CONV_SIG, 0, 0)->body;
    EXPECT_EQ("sig op", s->op_kind, GT_CUDNN_OP_CONV_FWD);
    EXPECT_EQ("sig rank", s->nb_dims, 4);
    int xd[4] = {8, 64, 56, 56}, wd[4] = {128, 64, 3, 3}, yd[4] = {8, 128, 56, 56};
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ("x dim", s->x_dims[i], xd[i]);
        EXPECT_EQ("w dim", s->w_dims[i], wd[i]);
        EXPECT_EQ("y dim", s->y_dims[i], yd[i]);
    }
    EXPECT_EQ("x stride 0", s->x_strides[0], 64 * 56 * 56);
    EXPECT_EQ("pad", s->pad[0], 1);
    EXPECT_EQ("stride", s->stride[1], 1);
    EXPECT_EQ("dilation", s->dilation[0], 1);
    EXPECT_EQ("groups", s->groups, 1);
    EXPECT_EQ("math type", s->math_type, 1); /* CUDNN_TENSOR_OP_MATH */
    EXPECT_EQ("dtype", s->dtype, 0);         /* CUDNN_DATA_FLOAT */
    EXPECT_EQ("mode", s->conv_mode, 1);      /* CUDNN_CROSS_CORRELATION */
    gt_rec_cudnn_conv_sig *s2 = nth(GT_REC_CUDNN_CONV_SIG, 0, 1)->body;
    EXPECT_EQ("bwd sig op", s2->op_kind, GT_CUDNN_OP_CONV_BWD_DATA);
    for (int i = 0; i < 2; i++) {
        gt_rec_api_cudnn *c = nth(GT_REC_API_CUDNN, GT_FN_cudnnConvolutionForward, i)->body;
        EXPECT_EQ("fwd sig id", c->sig_id, s->sig_id);
        EXPECT_EQ("fwd algo (Find's best)", c->algo, 1);
        EXPECT_EQ("fwd math", c->math_type, 1);
    }
    EXPECT_EQ("perf tables", count(GT_REC_CUDNN_PERF, 0), 2);
    gt_rec_cudnn_perf *p = nth(GT_REC_CUDNN_PERF, 0, 0)->body;
    gt_rec_api_cudnn *find =
        nth(GT_REC_API_CUDNN, GT_FN_cudnnFindConvolutionForwardAlgorithm, 0)->body;
    EXPECT_EQ("perf corr", p->corr_id, find->c.corr_id);
    EXPECT_EQ("perf sig", p->sig_id, s->sig_id);
    EXPECT_EQ("perf count", p->count, 3);
    gt_cudnn_perf_entry *e = (gt_cudnn_perf_entry *)(p + 1);
    int algos[3] = {1, 6, 0};
    for (int i = 0; i < 3; i++)
        EXPECT_EQ("perf algo", e[i].algo, algos[i]);
    EXPECT_EQ("perf time x1000", (int)(e[1].time_ms * 1000), 500);
    EXPECT_EQ("perf memory", e[2].memory, 3 << 20);
    EXPECT_EQ("perf math", e[0].math_type, 1);
}

static void check_cudnn_backend(void)
{
    EXPECT_EQ("plans decoded once each", count(GT_REC_CUDNN_PLAN, 0), 4);
    EXPECT_EQ("executes", count(GT_REC_API_CUDNN, GT_FN_cudnnBackendExecute), 8);
    gt_rec_cudnn_plan *p1 = plan_rec(0), *p2a = plan_rec(1), *p2b = plan_rec(2), *p3 = plan_rec(3);
    if (!p1 || !p2a || !p2b || !p3)
        return;
    EXPECT_EQ("p1 engine", p1->engine_global_index, 38);
    EXPECT_EQ("p1 op", p1->op_kind, GT_CUDNN_OP_CONV_FWD);
    EXPECT_EQ("p1 workspace", p1->workspace_bytes, 38 * 1024);
    EXPECT_EQ("p1 notes (tensor core)", p1->numerical_notes, 1);
    EXPECT_EQ("p1 dtype", p1->dtype, 0);
    if (strcmp(plan_text(p1, 0), "1=2") != 0)
        fail("p1 knobs '%s'", plan_text(p1, 0));
    if (!strstr(plan_text(p1, 1), "\"finalizeMode\":\"CONV_FORWARD\""))
        fail("p1 json");
    EXPECT_EQ("p2a engine", p2a->engine_global_index, 5);
    EXPECT_EQ("p2a notes (winograd)", p2a->numerical_notes, 1 << 5);
    EXPECT_EQ("p2a op", p2a->op_kind, GT_CUDNN_OP_CONV_BWD_DATA);
    EXPECT_EQ("p2b engine", p2b->engine_global_index, 12);
    EXPECT_EQ("candidates share the operation", p2a->op_graph == p2b->op_graph, 1);
    EXPECT_EQ("operations differ", p1->op_graph == p2a->op_graph, 0);
    EXPECT_EQ("p3 op", p3->op_kind, GT_CUDNN_OP_CONV_BWD_FILTER);
    EXPECT_EQ("p3 engine", p3->engine_global_index, 46);
    for (int i = 0; i < 3; i++) {
        gt_rec_api_cudnn *e = execute_rec(i);
        EXPECT_EQ("p1 execute plan id", e->plan_id, p1->plan_id);
        EXPECT_EQ("p1 execute heuristic", e->cudnn_flags, GT_CUDNN_HEURISTIC);
        EXPECT_EQ("p1 execute workspace", e->workspace_bytes, 38 * 1024);
        EXPECT_EQ("p1 execute result", e->c.result, 0);
    }
    EXPECT_EQ("candidate 1 autotune", execute_rec(3)->cudnn_flags, GT_CUDNN_AUTOTUNE);
    EXPECT_EQ("candidate 1 plan", execute_rec(3)->plan_id, p2a->plan_id);
    EXPECT_EQ("candidate 2 autotune", execute_rec(4)->cudnn_flags, GT_CUDNN_AUTOTUNE);
    EXPECT_EQ("winner in steady state", execute_rec(5)->cudnn_flags, 0);
    EXPECT_EQ("winner plan", execute_rec(5)->plan_id, p2b->plan_id);
    EXPECT_EQ("p3 heuristic", execute_rec(6)->cudnn_flags, GT_CUDNN_HEURISTIC);
    EXPECT_EQ("p3 plan", execute_rec(6)->plan_id, p3->plan_id);
    EXPECT_EQ("bad execute result passed through", execute_rec(7)->c.result, 2000);
    EXPECT_EQ("destroy recorded", count(GT_REC_API_CUDNN, GT_FN_cudnnBackendDestroyDescriptor), 1);
    /* Finalize: per graph 1 + per plan 3 (engine, cfg, plan) -> 3 graphs + 4 plans * 3 */
    EXPECT_EQ("finalizes", count(GT_REC_API_CUDNN, GT_FN_cudnnBackendFinalize), 3 + 4 * 3);
    int plan_finalizes = 0;
    for (int i = 0; nth(GT_REC_API_CUDNN, GT_FN_cudnnBackendFinalize, i); i++) {
        gt_rec_api_cudnn *f = nth(GT_REC_API_CUDNN, GT_FN_cudnnBackendFinalize, i)->body;
        plan_finalizes += f->desc_type == 5; /* CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR */
    }
    EXPECT_EQ("plan finalizes by type", plan_finalizes, 4);
    /* batch norm (issue 30): one record each, the workspace where the call has one, the fake's
     * checks of the forwarded scalars passed (result 0) */
    static const struct {
        uint32_t func;
        uint64_t ws;
    } bn[] = {{GT_FN_cudnnBatchNormalizationForwardTrainingEx, 4096},
              {GT_FN_cudnnBatchNormalizationBackwardEx, 4096},
              {GT_FN_cudnnBatchNormalizationForwardInference, 0},
              {GT_FN_cudnnBatchNormalizationForwardTraining, 0},
              {GT_FN_cudnnBatchNormalizationBackward, 0},
              {GT_FN_cudnnNormalizationForwardTraining, 4096}};
    for (size_t i = 0; i < sizeof bn / sizeof bn[0]; i++) {
        EXPECT_EQ(gt_api_func_name(bn[i].func), count(GT_REC_API_CUDNN, bn[i].func), 1);
        rec *r = nth(GT_REC_API_CUDNN, bn[i].func, 0);
        if (!r)
            continue;
        const gt_rec_api_cudnn *b = r->body;
        EXPECT_EQ("batch norm result", b->c.result, 0);
        EXPECT_EQ("batch norm workspace", b->workspace_bytes, bn[i].ws);
        EXPECT_EQ("batch norm has no signature", b->sig_id, 0);
        EXPECT_EQ("batch norm call site", b->c.stack_id != 0, 1);
    }
    const gt_file_header *h = gt_reader_header(reader);
    EXPECT_EQ("cudnn version", h->runtime.cudnn_version, 91900);
    EXPECT_EQ("cudnn cudart version", h->runtime.cudnn_cudart_version, 13000);
}

static void check_python_local(void)
{
    EXPECT_EQ("plans", count(GT_REC_CUDNN_PLAN, 0), 1);
    EXPECT_EQ("executes", count(GT_REC_API_CUDNN, GT_FN_cudnnBackendExecute), 5);
    gt_rec_cudnn_plan *p = plan_rec(0);
    if (p)
        EXPECT_EQ("engine", p->engine_global_index, 67);
    for (int i = 0; i < 5; i++)
        EXPECT_EQ("result", execute_rec(i)->c.result, 0);
    EXPECT_EQ("cudnn version", gt_reader_header(reader)->runtime.cudnn_version, 91900);
}

/* ------------------------------------------------------------------ cuBLAS */

static void check_cublas(int want_result)
{
    /* the GEMMs, then issue 30's: a gemv records as the GEMM m x 1 x k of op(A) */
    enum { N = 12 };
    EXPECT_EQ("calls recorded once each (nested cublasLtMatmul not again)",
              count(GT_REC_API_CUBLAS, 0), N);
    static const struct {
        uint32_t func;
        int64_t m, n, k, batch;
        int32_t at, bt, ct, comp, ta, tb;
        int gemv; /* succeeds when cublasLtMatmul fails */
    } want[N] = {
        {GT_FN_cublasSgemm_v2, 128, 256, 64, 1, 0, 0, 0, 68, 0, 1, 0},
        {GT_FN_cublasGemmEx, 512, 512, 1024, 1, 2, 2, 2, 68, 1, 0, 0},
        {GT_FN_cublasGemmStridedBatchedEx, 64, 32, 16, 4, 0, 0, 0, 77, 0, 0, 0},
        {GT_FN_cublasLtMatmul, 32, 16, 8, 1, 14, 14, 0, 68, 0, 0, 0},
        {GT_FN_cublasSgemv_v2, 300, 1, 200, 1, 0, 0, 0, 68, 0, 0, 1},
        {GT_FN_cublasDgemv_v2, 200, 1, 300, 1, 1, 1, 1, 70, 1, 0, 1},
        {GT_FN_cublasSgemv_v2_64, 1000, 1, 10, 1, 0, 0, 0, 68, 0, 0, 1},
        {GT_FN_cublasCgemm_v2, 16, 16, 16, 1, 4, 4, 4, 68, 0, 0, 0},
        {GT_FN_cublasSgemmBatched, 32, 32, 32, 8, 0, 0, 0, 68, 0, 1, 0},
        {GT_FN_cublasSgemmStridedBatched, 64, 48, 32, 3, 0, 0, 0, 68, 0, 0, 0},
        {GT_FN_cublasGemmBatchedEx, 128, 64, 256, 2, 14, 14, 0, 68, 1, 0, 0},
        {GT_FN_cublasSgemmEx, 100, 50, 25, 1, 2, 2, 0, 68, 0, 0, 0},
    };
    for (int i = 0; i < N; i++) {
        rec *r = nth(GT_REC_API_CUBLAS, 0, i);
        if (!r)
            break;
        gt_rec_api_cublas *g = r->body;
        EXPECT_EQ("func", g->c.func, want[i].func);
        EXPECT_EQ("m", g->m, want[i].m);
        EXPECT_EQ("n", g->n, want[i].n);
        EXPECT_EQ("k", g->k, want[i].k);
        EXPECT_EQ("batch", g->batch, want[i].batch);
        EXPECT_EQ("atype", g->atype, want[i].at);
        EXPECT_EQ("btype", g->btype, want[i].bt);
        EXPECT_EQ("ctype", g->ctype, want[i].ct);
        EXPECT_EQ("compute", g->compute_type, want[i].comp);
        EXPECT_EQ("transa", g->transa, want[i].ta);
        EXPECT_EQ("transb", g->transb, want[i].tb);
        EXPECT_EQ("result", g->c.result, want[i].gemv ? 0 : want_result);
        EXPECT_EQ("call site", g->c.stack_id != 0, 1);
    }
    check_common_fields();
}

/* ------------------------------------------------------------------ late CUPTI */

/* ti_late_cupti_app: 5 launches, a copy and a memset made while CUPTI's start was held (counted,
 * their GPU work absent; the allocation and the sync give none), then 3 launches after it was
 * attached (recorded, not counted). */
static void check_late_cupti(void)
{
    const gt_reader_stats *st = gt_reader_get_stats(reader);
    EXPECT_EQ("ended", st->ended, 1);
    EXPECT_EQ("calls before CUPTI", st->end.calls_before_cupti, 5 + 1 + 1);
    EXPECT_EQ("launch calls", count(GT_REC_API_LAUNCH, GT_FN_cudaLaunchKernel), 5 + 3);
    EXPECT_EQ("copy calls", count(GT_REC_API_MEMCPY, GT_FN_cudaMemcpy), 1);
    EXPECT_EQ("memset calls", count(GT_REC_API_MEMSET, GT_FN_cudaMemsetAsync), 1);
    EXPECT_EQ("kernels recorded (after the attach)", count(GT_REC_GPU_KERNEL, 0), 3);
    EXPECT_EQ("copies recorded", count(GT_REC_GPU_MEMCPY, 0), 0);
    EXPECT_EQ("memsets recorded", count(GT_REC_GPU_MEMSET, 0), 0);
    check_common_fields();
}

/* ------------------------------------------------------------------ dlsym */

static void check_dlsym(void)
{
    EXPECT_EQ("cudaMalloc via dlsym", count(GT_REC_API_ALLOC, GT_FN_cudaMalloc), 3);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ("malloc flags", nth(GT_REC_API_ALLOC, GT_FN_cudaMalloc, i)->flags,
                  GT_RF_VIA_DLSYM);
    EXPECT_EQ("cudaMemcpy", count(GT_REC_API_MEMCPY, GT_FN_cudaMemcpy), 1);
    EXPECT_EQ("cudaDeviceSynchronize", count(GT_REC_API_SYNC, GT_FN_cudaDeviceSynchronize), 1);
    EXPECT_EQ("cuLaunchKernel", count(GT_REC_API_LAUNCH, GT_FN_cuLaunchKernel), 2);
    rec *l = nth(GT_REC_API_LAUNCH, GT_FN_cuLaunchKernel, 0);
    if (l) {
        EXPECT_EQ("driver flags", l->flags, GT_RF_VIA_DLSYM | GT_RF_DRIVER);
        gt_rec_api_launch *b = l->body;
        EXPECT_EQ("driver grid", b->grid[0], 2);
        EXPECT_EQ("driver block", b->block[0], 32);
        EXPECT_EQ("driver function", b->function, 0x77);
    }
    EXPECT_EQ("cuMemcpyHtoD_v2", count(GT_REC_API_MEMCPY, GT_FN_cuMemcpyHtoD_v2), 1);
    rec *c = nth(GT_REC_API_MEMCPY, GT_FN_cuMemcpyHtoD_v2, 0);
    if (c) {
        gt_rec_api_memcpy *m = c->body;
        EXPECT_EQ("driver copy bytes", m->bytes, 128);
        EXPECT_EQ("driver copy src", m->src_kind, GT_MEM_PAGEABLE);
        EXPECT_EQ("driver copy dst", m->dst_kind, GT_MEM_DEVICE);
    }
    /* cudaGetDriverEntryPoint itself and unwrapped functions are not recorded; nothing twice. */
    EXPECT_EQ("API records in all", count_api_records(), 3 + 1 + 1 + 2 + 1);
    /* The GPU side of every call. The writer's periodic check (libcudart is mapped) usually starts
     * CUPTI while the first call runs; that call waits until CUPTI is attached, or on a busy
     * machine the launches came before it and their kernels were never recorded (and the exit
     * hook, finding CUPTI still starting, flushed nothing: its records came after the end). */
    EXPECT_EQ("GPU kernels", count(GT_REC_GPU_KERNEL, 0), 2);
    EXPECT_EQ("GPU copies", count(GT_REC_GPU_MEMCPY, 0), 2);
    check_common_fields();
}

/* ------------------------------------------------------------------ run-time compilation */

/* ti_jit_app: nvrtcCompileProgram linked (2 ms, success) and through dlsym (fails to compile),
 * nvJitLinkComplete (1 ms): JIT calls with their time and result (issue 21 item 1). */
static void check_jit(void)
{
    EXPECT_EQ("nvrtcCompileProgram calls", count(GT_REC_API, GT_FN_nvrtcCompileProgram), 2);
    EXPECT_EQ("nvJitLinkComplete calls", count(GT_REC_API, GT_FN_nvJitLinkComplete), 1);
    rec *direct = nth(GT_REC_API, GT_FN_nvrtcCompileProgram, 0);
    rec *looked_up = nth(GT_REC_API, GT_FN_nvrtcCompileProgram, 1);
    rec *link = nth(GT_REC_API, GT_FN_nvJitLinkComplete, 0);
    if (direct) {
        gt_api_common *c = direct->body;
        EXPECT_EQ("linked compile result", c->result, 0);
        EXPECT_EQ("linked compile took >= 2 ms", c->t_end_ns - c->t_begin_ns >= 2000000, 1);
        EXPECT_EQ("linked compile not via dlsym", (direct->flags & GT_RF_VIA_DLSYM) != 0, 0);
    }
    if (looked_up) {
        EXPECT_EQ("dlsym compile result (NVRTC_ERROR_COMPILATION)",
                  ((gt_api_common *)looked_up->body)->result, 6);
        EXPECT_EQ("dlsym compile via dlsym", (looked_up->flags & GT_RF_VIA_DLSYM) != 0, 1);
    }
    if (link) {
        gt_api_common *c = link->body;
        EXPECT_EQ("link result", c->result, 0);
        EXPECT_EQ("link took >= 1 ms", c->t_end_ns - c->t_begin_ns >= 1000000, 1);
    }
    EXPECT_EQ("API records in all", count_api_records(), 3);
    check_common_fields();
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: interpose_check CASE DIR\n");
        return 2;
    }
    load(argv[2]);
    const char *c = argv[1];
    if (strcmp(c, "runtime") == 0)
        check_runtime();
    else if (strcmp(c, "cudnn") == 0)
        check_cudnn_legacy(), check_cudnn_backend(), check_common_fields();
    else if (strcmp(c, "python_local") == 0)
        check_python_local();
    else if (strcmp(c, "cublas") == 0)
        check_cublas(0);
    else if (strcmp(c, "cublas_fail") == 0)
        check_cublas(13); /* CUBLAS_STATUS_EXECUTION_FAILED */
    else if (strcmp(c, "dlsym") == 0 || strcmp(c, "dlsym_slow_start") == 0)
        check_dlsym();
    else if (strcmp(c, "jit") == 0)
        check_jit();
    else if (strcmp(c, "late_cupti") == 0)
        check_late_cupti();
    else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    /* Every other app's CUPTI was attached before its first GPU call: nothing counted. */
    if (strcmp(c, "late_cupti") != 0)
        EXPECT_EQ("calls before CUPTI", gt_reader_get_stats(reader)->end.calls_before_cupti, 0);
    if (failures)
        fprintf(stderr, "%d expectation(s) failed in case %s\n", failures, c);
    else
        printf("ok: %s (%zu records)\n", c, nrecs);
    gt_reader_close(reader);
    for (size_t j = 0; j < nrecs; j++)
        free(recs[j].body);
    free(recs);
    return failures ? 1 : 0;
}
