/* doctor_bench.c — what this GPU actually does: host<->device copies from pageable, pinned and
 * registered memory, a device-to-device copy, and large GEMMs in fp32, TF32 and bf16 through
 * cuBLAS; each next to the figure the hardware is specified for.
 *
 * Times come from CUDA events around each repetition on the legacy default stream (the GPU's own
 * clock, as CUPTI measures the copies in a trace); the best repetition is the peak, the median says
 * how steady it was. The specified figures are derived, never looked up by product name: PCIe
 * generation × width, SM count × maximum SM clock × dense FLOP per clock per SM for the
 * architecture, memory clock × 2 × bus width. Everything is dlopen'ed: cuBLAS is optional (no
 * GEMMs without it). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

#define COPY_BYTES (64u << 20)
#define COPY_REPS 8
#define GEMM_MIN_MS 150.0 /* time each GEMM kind at least this long ... */
#define GEMM_MAX_REPS 20  /* ... in at most this many repetitions */

/* cuBLAS / library_types.h values */
#define CUBLAS_OP_N 0
#define CUDA_R_32F 0
#define CUDA_R_16BF 14
#define CUBLAS_COMPUTE_32F 68
#define CUBLAS_COMPUTE_32F_FAST_TF32 77
#define CUBLAS_GEMM_DEFAULT (-1)

const char *dr_copy_test_name(int t)
{
    static const char *const names[DR_N_COPY_TESTS] = {
        "H2D pageable",   "H2D pinned", "H2D registered", "D2H pageable", "D2H pinned",
        "D2H registered", "D2D"};
    return t >= 0 && t < DR_N_COPY_TESTS ? names[t] : "?";
}

const char *dr_copy_test_key(int t)
{
    static const char *const keys[DR_N_COPY_TESTS] = {
        "h2d_pageable",   "h2d_pinned", "h2d_registered", "d2h_pageable", "d2h_pinned",
        "d2h_registered", "d2d"};
    return t >= 0 && t < DR_N_COPY_TESTS ? keys[t] : "?";
}

const char *dr_gemm_test_name(int t)
{
    static const char *const names[DR_N_GEMM_TESTS] = {"fp32", "tf32", "bf16"};
    return t >= 0 && t < DR_N_GEMM_TESTS ? names[t] : "?";
}

/* ---------------------------------------------------------------- specified figures */

double dr_spec_pcie_gbps(const dr_gpu *g, char *how, size_t how_len)
{
    /* GB/s per lane and direction after line coding (8b/10b to gen2, 128b/130b from gen3;
     * gen6 counts FLIT overhead 242/256). */
    static const double per_lane[] = {0, 0.25, 0.5, 0.9846, 1.9692, 3.9385, 7.5630};
    int gen = g->pcie_gen_max ? g->pcie_gen_max : g->pcie_gen_now;
    int width = g->pcie_width_max ? g->pcie_width_max : g->pcie_width_now;
    if (gen < 1 || gen > 6 || width < 1)
        return 0;
    snprintf(how, how_len, "PCIe gen%d x%d", gen, width);
    return per_lane[gen] * width;
}

/* Dense FLOP per clock per SM: {fp32 (CUDA cores, FMA = 2), tf32, bf16} from the architecture
 * whitepapers (A100, GA102, AD102, H100); 0: the GPU has no such units. Not listed: unknown. */
typedef struct arch_rate {
    int cc;
    int flop_per_clk[DR_N_GEMM_TESTS];
} arch_rate;

static const arch_rate ARCH_RATES[] = {
    {70, {128, 0, 0}},       /* V100: no TF32/bf16 tensor cores */
    {75, {128, 0, 0}},       /* T4 */
    {80, {128, 1024, 2048}}, /* A100 */
    {86, {256, 256, 512}},   /* GA10x professional; GeForce halves fp32-accumulate tensor math */
    {87, {256, 256, 512}},   /* Orin */
    {89, {256, 512, 1024}},  /* AD10x (L4, L40S) */
    {90, {256, 2048, 4096}}, /* H100, H200 */
};

double dr_spec_tflops(const dr_gpu *g, int test, char *how, size_t how_len)
{
    int cc = g->cc_major * 10 + g->cc_minor;
    for (size_t i = 0; i < sizeof ARCH_RATES / sizeof ARCH_RATES[0]; i++) {
        if (ARCH_RATES[i].cc != cc)
            continue;
        int rate = ARCH_RATES[i].flop_per_clk[test];
        if (!rate || !g->sm_count || !g->sm_clock_max_mhz)
            return 0;
        snprintf(how, how_len, "%d SMs x %d MHz x %d FLOP/clk", g->sm_count, g->sm_clock_max_mhz,
                 rate);
        return (double)g->sm_count * g->sm_clock_max_mhz * 1e6 * rate / 1e12;
    }
    return 0;
}

double dr_spec_memory_gbps(const dr_gpu *g, char *how, size_t how_len)
{
    if (!g->mem_clock_max_mhz || !g->mem_bus_width_bits)
        return 0;
    snprintf(how, how_len, "%d MHz x 2 x %d bit", g->mem_clock_max_mhz, g->mem_bus_width_bits);
    return (double)g->mem_clock_max_mhz * 1e6 * 2 * g->mem_bus_width_bits / 8 / 1e9;
}

/* ---------------------------------------------------------------- timing */

typedef struct bench_ctx {
    const dr_cu_api *cu;
    void *ev0, *ev1;
    uint64_t dev_a, dev_b;
    void *pageable, *pinned, *registered;
    size_t bytes;
} bench_ctx;

typedef int (*timed_fn)(bench_ctx *c, void *arg);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs fn once untimed, then reps times (or until min_ms of GPU time) with events around each;
 * work / ms -> per-ms rates; fills best and median. Returns 0 or a CUresult. */
static int time_reps(bench_ctx *c, timed_fn fn, void *arg, double work, int reps, double min_ms,
                     dr_measure *m)
{
    int rc = fn(c, arg);
    if (rc)
        return rc;
    double rates[GEMM_MAX_REPS > COPY_REPS ? GEMM_MAX_REPS : COPY_REPS], total = 0;
    int n = 0;
    while (n < reps || (total < min_ms && n < GEMM_MAX_REPS)) {
        float ms = 0;
        if ((rc = c->cu->cuEventRecord(c->ev0, NULL)) || (rc = fn(c, arg)) ||
            (rc = c->cu->cuEventRecord(c->ev1, NULL)) || (rc = c->cu->cuEventSynchronize(c->ev1)))
            return rc;
        rc = c->cu->cuEventElapsedTime_v2 ? c->cu->cuEventElapsedTime_v2(&ms, c->ev0, c->ev1)
                                          : c->cu->cuEventElapsedTime(&ms, c->ev0, c->ev1);
        if (rc)
            return rc;
        total += ms;
        rates[n++] = ms > 0 ? work / ms : 0;
    }
    qsort(rates, (size_t)n, sizeof rates[0], cmp_double);
    m->done = 1;
    m->reps = n;
    m->best = rates[n - 1];
    m->median = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
    return 0;
}

static int copy_once(bench_ctx *c, void *arg)
{
    int t = *(int *)arg;
    void *host = t == DR_H2D_PAGEABLE || t == DR_D2H_PAGEABLE ? c->pageable
                 : t == DR_H2D_PINNED || t == DR_D2H_PINNED   ? c->pinned
                                                              : c->registered;
    if (t == DR_D2D)
        return c->cu->cuMemcpyDtoD_v2(c->dev_b, c->dev_a, c->bytes);
    if (t <= DR_H2D_REGISTERED)
        return c->cu->cuMemcpyHtoD_v2(c->dev_a, host, c->bytes);
    return c->cu->cuMemcpyDtoH_v2(host, c->dev_a, c->bytes);
}

static void run_copies(bench_ctx *c, const dr_gpu *g, dr_bench *b)
{
    char how[96] = "";
    double pcie = dr_spec_pcie_gbps(g, how, sizeof how);
    char mem_how[96] = "";
    double mem = dr_spec_memory_gbps(g, mem_how, sizeof mem_how);
    for (int t = 0; t < DR_N_COPY_TESTS; t++) {
        dr_measure *m = &b->copies[t];
        if ((t == DR_H2D_REGISTERED || t == DR_D2H_REGISTERED) && !c->registered) {
            snprintf(m->error, sizeof m->error, "cuMemHostRegister failed");
            continue;
        }
        if ((t == DR_H2D_PINNED || t == DR_D2H_PINNED) && !c->pinned) {
            snprintf(m->error, sizeof m->error, "cuMemAllocHost failed");
            continue;
        }
        int rc = time_reps(c, copy_once, &t, (double)c->bytes / 1e6, COPY_REPS, 0, m);
        if (rc) { /* bytes / 1e6 per ms = GB/s */
            snprintf(m->error, sizeof m->error, "%s", dr_cu_error(rc));
            continue;
        }
        if (t == DR_D2D && mem > 0) { /* a copy reads and writes: half the memory bandwidth */
            m->spec = mem / 2;
            if (snprintf(m->spec_how, sizeof m->spec_how, "half of %.0f GB/s (%s)", mem, mem_how) <
                0)
                m->spec_how[0] = 0;
        } else if (t != DR_D2D && pcie > 0) {
            m->spec = pcie;
            snprintf(m->spec_how, sizeof m->spec_how, "%s", how);
        }
    }
}

/* ---------------------------------------------------------------- GEMMs */

typedef struct cublas_api {
    int (*create)(void **);
    int (*destroy)(void *);
    int (*gemm_ex)(void *, int, int, int, int, int, const void *, const void *, int, int,
                   const void *, int, int, const void *, void *, int, int, int, int);
    void *handle;
    uint64_t a, b, c;
    int n;
    int test;
} cublas_api;

static int gemm_once(bench_ctx *c, void *arg)
{
    (void)c;
    cublas_api *bl = arg;
    static const float one = 1, zero = 0;
    int in = bl->test == DR_GEMM_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    int comp = bl->test == DR_GEMM_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    int st =
        bl->gemm_ex(bl->handle, CUBLAS_OP_N, CUBLAS_OP_N, bl->n, bl->n, bl->n, &one,
                    (const void *)(uintptr_t)bl->a, in, bl->n, (const void *)(uintptr_t)bl->b, in,
                    bl->n, &zero, (void *)(uintptr_t)bl->c, in, bl->n, comp, CUBLAS_GEMM_DEFAULT);
    return st ? 1000 + st : 0; /* cublasStatus_t, told apart from CUresults */
}

/* Fills n*n elements of a device matrix with values in [-1, 1) through the pinned buffer (all-zero
 * or constant inputs draw less power and would flatter the clocks). */
static int fill_matrix(bench_ctx *c, uint64_t dev, size_t n, int bf16)
{
    size_t elem = bf16 ? 2 : 4, total = n * n * elem, chunk = c->bytes;
    uint32_t seed = 12345;
    for (size_t i = 0; i < chunk / 4; i++) {
        seed = seed * 1664525u + 1013904223u;
        float f = (float)(seed >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (bf16) { /* two bf16 (the float's upper half) per 32-bit word */
            uint32_t pair = (bits >> 16) | (bits & 0xFFFF0000u);
            memcpy((char *)c->pinned + i * 4, &pair, 4);
        } else {
            memcpy((char *)c->pinned + i * 4, &bits, 4);
        }
    }
    for (size_t off = 0; off < total; off += chunk) {
        size_t len = total - off < chunk ? total - off : chunk;
        int rc = c->cu->cuMemcpyHtoD_v2(dev + off, c->pinned, len);
        if (rc)
            return rc;
    }
    return 0;
}

static int gemm_size(const dr_cu_api *cu)
{
    size_t free_b = 0, total_b = 0;
    if (cu->cuMemGetInfo_v2 && cu->cuMemGetInfo_v2(&free_b, &total_b) != 0)
        free_b = 0;
    for (int n = 8192; n >= 2048; n /= 2)
        if ((double)free_b > 3.0 * n * n * 4 * 1.5)
            return n;
    return 0;
}

static void gemm_error(dr_bench *b, const char *fmt, const char *what)
{
    for (int t = 0; t < DR_N_GEMM_TESTS; t++)
        snprintf(b->gemms[t].error, sizeof b->gemms[t].error, fmt, what);
}

static void run_gemms(bench_ctx *c, const dr_gpu *g, dr_bench *b)
{
    cublas_api bl = {0};
    /* The copy the loader takes (doctor_libs.c), so the GEMM runs where the inventory says. */
    void *h = b->cublas_path[0] ? dlopen(b->cublas_path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        gemm_error(b, "%s", b->cublas_path[0] ? dlerror() : "no libcublas on the loader's path");
        return;
    }
    bl.create = (int (*)(void **))dlsym(h, "cublasCreate_v2");
    bl.destroy = (int (*)(void *))dlsym(h, "cublasDestroy_v2");
    bl.gemm_ex = (int (*)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int,
                          int))dlsym(h, "cublasGemmEx");
    if (!bl.create || !bl.destroy || !bl.gemm_ex) {
        gemm_error(b, "%s", "cublasCreate_v2/cublasGemmEx missing");
        return;
    }
    if (!c->pinned) {
        gemm_error(b, "%s", "no pinned buffer to fill the matrices");
        return;
    }
    bl.n = b->gemm_n = gemm_size(c->cu);
    if (!bl.n) {
        gemm_error(b, "%s", "not enough free GPU memory");
        return;
    }
    size_t bytes = (size_t)bl.n * bl.n * 4;
    int st = bl.create(&bl.handle);
    if (st) {
        gemm_error(b, "cublasCreate failed (status %s)", st == 1 ? "NOT_INITIALIZED" : "?");
        return;
    }
    int rc = c->cu->cuMemAlloc_v2(&bl.a, bytes);
    if (!rc)
        rc = c->cu->cuMemAlloc_v2(&bl.b, bytes);
    if (!rc)
        rc = c->cu->cuMemAlloc_v2(&bl.c, bytes);
    double flop = 2.0 * bl.n * bl.n * (double)bl.n;
    for (int t = 0; t < DR_N_GEMM_TESTS && !rc; t++) {
        dr_measure *m = &b->gemms[t];
        bl.test = t;
        int fill_rc = t == DR_GEMM_TF32 ? 0 /* the fp32 data is there */
                                        : fill_matrix(c, bl.a, (size_t)bl.n, t == DR_GEMM_BF16);
        if (!fill_rc)
            fill_rc = t == DR_GEMM_TF32 ? 0 : fill_matrix(c, bl.b, (size_t)bl.n, t == DR_GEMM_BF16);
        int trc = fill_rc ? fill_rc : time_reps(c, gemm_once, &bl, flop / 1e9, 3, GEMM_MIN_MS, m);
        if (trc >= 1000)
            snprintf(m->error, sizeof m->error, "cublasGemmEx returned status %d", trc - 1000);
        else if (trc)
            snprintf(m->error, sizeof m->error, "%s", dr_cu_error(trc));
        m->spec = dr_spec_tflops(g, t, m->spec_how, sizeof m->spec_how);
    }
    if (rc)
        gemm_error(b, "cuMemAlloc: %s", dr_cu_error(rc));
    c->cu->cuMemFree_v2(bl.a);
    c->cu->cuMemFree_v2(bl.b);
    c->cu->cuMemFree_v2(bl.c);
    bl.destroy(bl.handle);
}

/* ---------------------------------------------------------------- entry */

static int setup(bench_ctx *c, int dev, char *err, size_t err_len)
{
    const dr_cu_api *cu = c->cu;
    void *ctx = NULL;
    int rc;
    if (!cu->cuDevicePrimaryCtxRetain || !cu->cuCtxSetCurrent || !cu->cuMemAlloc_v2 ||
        !cu->cuMemFree_v2 || !cu->cuMemAllocHost_v2 || !cu->cuMemFreeHost || !cu->cuMemcpyHtoD_v2 ||
        !cu->cuMemcpyDtoH_v2 || !cu->cuMemcpyDtoD_v2 || !cu->cuEventCreate || !cu->cuEventRecord ||
        !cu->cuEventSynchronize || !cu->cuEventDestroy_v2 ||
        (!cu->cuEventElapsedTime_v2 && !cu->cuEventElapsedTime)) {
        snprintf(err, err_len, "the driver lacks functions doctor needs");
        return -1;
    }
    if ((rc = cu->cuDevicePrimaryCtxRetain(&ctx, dev)) || (rc = cu->cuCtxSetCurrent(ctx)) ||
        (rc = cu->cuEventCreate(&c->ev0, 0)) || (rc = cu->cuEventCreate(&c->ev1, 0)) ||
        (rc = cu->cuMemAlloc_v2(&c->dev_a, c->bytes)) ||
        (rc = cu->cuMemAlloc_v2(&c->dev_b, c->bytes))) {
        snprintf(err, err_len, "%s", dr_cu_error(rc));
        return -1;
    }
    c->pageable = malloc(c->bytes);
    if (!c->pageable || posix_memalign(&c->registered, 4096, c->bytes) != 0) {
        snprintf(err, err_len, "out of host memory");
        return -1;
    }
    memset(c->pageable, 1, c->bytes); /* fault the pages in before timing */
    memset(c->registered, 1, c->bytes);
    if (cu->cuMemAllocHost_v2(&c->pinned, c->bytes) != 0)
        c->pinned = NULL;
    else
        memset(c->pinned, 1, c->bytes);
    if (!cu->cuMemHostRegister_v2 || !cu->cuMemHostUnregister ||
        cu->cuMemHostRegister_v2(c->registered, c->bytes, 0) != 0) {
        free(c->registered);
        c->registered = NULL;
    }
    return 0;
}

static void teardown(bench_ctx *c, int dev)
{
    const dr_cu_api *cu = c->cu;
    if (c->registered) {
        cu->cuMemHostUnregister(c->registered);
        free(c->registered);
    }
    if (c->pinned)
        cu->cuMemFreeHost(c->pinned);
    free(c->pageable);
    if (c->dev_a)
        cu->cuMemFree_v2(c->dev_a);
    if (c->dev_b)
        cu->cuMemFree_v2(c->dev_b);
    if (c->ev0)
        cu->cuEventDestroy_v2(c->ev0);
    if (c->ev1)
        cu->cuEventDestroy_v2(c->ev1);
    if (cu->cuDevicePrimaryCtxRelease_v2)
        cu->cuDevicePrimaryCtxRelease_v2(dev);
}

void dr_bench_run(const dr_gpu *gpu, int copies_only, const char *cublas_path, dr_bench *b)
{
    memset(b, 0, sizeof *b);
    if (cublas_path)
        snprintf(b->cublas_path, sizeof b->cublas_path, "%s", cublas_path);
    b->gpu = gpu->ordinal;
    bench_ctx c = {.cu = dr_cu(), .bytes = COPY_BYTES};
    b->copy_bytes = c.bytes;
    int dev = 0;
    if (c.cu->cuDeviceGet(&dev, gpu->ordinal) != 0 ||
        setup(&c, dev, b->error, sizeof b->error) != 0) {
        if (!b->error[0])
            snprintf(b->error, sizeof b->error, "cuDeviceGet(%d) failed", gpu->ordinal);
        teardown(&c, dev);
        return;
    }
    b->ran = 1;
    run_copies(&c, gpu, b);
    if (!copies_only)
        run_gemms(&c, gpu, b);
    teardown(&c, dev);
}
