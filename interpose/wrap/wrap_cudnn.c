/* wrap_cudnn.c — cuDNN: legacy convolutions (with their op signatures and Find/Get perf tables) and
 * the backend API that PyTorch uses (cudnnBackendExecute with each plan decoded once).
 *
 * Decoding a plan (JSON, workspace, engine index, notes, knobs) costs tens of microseconds, so it
 * is done at the first execute of each plan pointer and cached; cudnnBackendDestroyDescriptor
 * forgets the pointer (cuDNN may hand the same address to a new plan). Later executes cost one
 * lock-free table lookup. Autotuning is told apart from heuristics by the number of distinct plans
 * executed for one operation (plans with the same JSON apart from the engine) and by events
 * recorded right before an execute (PyTorch's benchmark mode times each candidate with events). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wrap_cudnn.h"

#define CUDNN_SYM(name) static gt_sym sym_##name = GT_SYM_INIT(#name, GT_LIB_CUDNN)

CUDNN_SYM(cudnnGetVersion);
CUDNN_SYM(cudnnGetCudartVersion);
CUDNN_SYM(cudnnGetStream);
CUDNN_SYM(cudnnGetTensorNdDescriptor);
CUDNN_SYM(cudnnGetFilterNdDescriptor);
CUDNN_SYM(cudnnGetConvolutionNdDescriptor);
CUDNN_SYM(cudnnGetConvolutionGroupCount);
CUDNN_SYM(cudnnGetConvolutionMathType);

/* ------------------------------------------------------------------ versions, stream */

_Atomic int gt_wrap_cudnn_seen;

void gt_wrap_cudnn_first_use(void)
{
    if (atomic_exchange(&gt_wrap_cudnn_seen, 1))
        return;
    typedef size_t (*ver_fn)(void);
    ver_fn v = (ver_fn)gt_sym_get(&sym_cudnnGetVersion);
    ver_fn rt = (ver_fn)gt_sym_get(&sym_cudnnGetCudartVersion);
    gt_core_set_versions(0, 0, v ? (int32_t)v() : 0, rt ? (int32_t)rt() : 0, 0, 0);
}

uint64_t gt_cudnn_handle_stream(cudnnHandle_t h)
{
    typedef cudnnStatus_t (*fn_t)(cudnnHandle_t, cudaStream_t *);
    fn_t f = (fn_t)gt_sym_get(&sym_cudnnGetStream);
    cudaStream_t s = 0;
    if (!f || !h || f(h, &s) != CUDNN_STATUS_SUCCESS)
        return 0;
    return (uint64_t)(uintptr_t)s;
}

void gt_cudnn_call_begin(gt_call *c, uint32_t fnid)
{
    if (__builtin_expect(!atomic_load_explicit(&gt_wrap_cudnn_seen, memory_order_relaxed), 0))
        gt_wrap_cudnn_first_use();
    gt_call_begin(c, fnid, true, true);
    gt_call_anchor(c);
}

void gt_cudnn_record(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                     const gt_rec_api_cudnn *fields)
{
    gt_rec_api_cudnn *rec = gt_fast_record_begin(GT_REC_API_CUDNN, flags, sizeof *rec);
    if (!rec)
        return;
    *rec = *fields;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    gt_fast_record_commit(rec);
}

/* ------------------------------------------------------------------ legacy op signatures */

#define SIG_SLOTS 1024
static _Atomic uint64_t sig_hashes[SIG_SLOTS]; /* hash of a signature -> its id (index + 1) */
static _Atomic uint32_t sig_count;
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* x: input tensor, w: filter, y: output tensor (for backward ops: the forward roles). */
static uint32_t conv_signature(uint32_t op, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                               cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y)
{
    typedef cudnnStatus_t (*tensor_fn)(cudnnTensorDescriptor_t, int, cudnnDataType_t *, int *,
                                       int *, int *);
    typedef cudnnStatus_t (*filter_fn)(cudnnFilterDescriptor_t, int, cudnnDataType_t *,
                                       cudnnTensorFormat_t *, int *, int *);
    typedef cudnnStatus_t (*conv_fn)(cudnnConvolutionDescriptor_t, int, int *, int *, int *, int *,
                                     cudnnConvolutionMode_t *, cudnnDataType_t *);
    typedef cudnnStatus_t (*groups_fn)(cudnnConvolutionDescriptor_t, int *);
    typedef cudnnStatus_t (*math_fn)(cudnnConvolutionDescriptor_t, cudnnMathType_t *);
    tensor_fn gt_tensor = (tensor_fn)gt_sym_get(&sym_cudnnGetTensorNdDescriptor);
    filter_fn gt_filter = (filter_fn)gt_sym_get(&sym_cudnnGetFilterNdDescriptor);
    conv_fn gt_conv = (conv_fn)gt_sym_get(&sym_cudnnGetConvolutionNdDescriptor);
    groups_fn gt_groups = (groups_fn)gt_sym_get(&sym_cudnnGetConvolutionGroupCount);
    math_fn gt_math = (math_fn)gt_sym_get(&sym_cudnnGetConvolutionMathType);
    if (!gt_tensor || !gt_filter || !gt_conv || !x || !w || !conv || !y)
        return 0;
    gt_rec_cudnn_conv_sig s;
    memset(&s, 0, sizeof s);
    s.op_kind = op;
    cudnnDataType_t dt = 0, wdt = 0, cdt = 0;
    cudnnTensorFormat_t fmt = 0;
    cudnnConvolutionMode_t mode = 0;
    cudnnMathType_t math = 0;
    int nd = 0, wnd = 0, ynd = 0, arr = 0;
    if (gt_tensor(x, 5, &dt, &nd, s.x_dims, s.x_strides) != CUDNN_STATUS_SUCCESS)
        return 0;
    if (gt_filter(w, 5, &wdt, &fmt, &wnd, s.w_dims) != CUDNN_STATUS_SUCCESS)
        return 0;
    if (gt_tensor(y, 5, &wdt, &ynd, s.y_dims, s.y_strides) != CUDNN_STATUS_SUCCESS)
        return 0;
    if (gt_conv(conv, 3, &arr, s.pad, s.stride, s.dilation, &mode, &cdt) != CUDNN_STATUS_SUCCESS)
        return 0;
    s.nb_dims = nd;
    s.dtype = dt;
    s.compute_dtype = cdt;
    s.format = fmt;
    s.conv_mode = mode;
    s.groups = 1;
    if (gt_groups)
        gt_groups(conv, &s.groups);
    s.math_type = (gt_math && gt_math(conv, &math) == CUDNN_STATUS_SUCCESS) ? (int32_t)math : -1;
    uint64_t h = fnv1a(&s, sizeof s, 0xcbf29ce484222325ull) | 1;
    uint32_t slot = (uint32_t)(h % SIG_SLOTS);
    for (int probe = 0; probe < SIG_SLOTS; probe++, slot = (slot + 1) % SIG_SLOTS) {
        uint64_t e = atomic_load_explicit(&sig_hashes[slot], memory_order_acquire);
        if (e == h)
            break; /* seen: its id is the slot's number */
        if (e == 0) {
            pthread_mutex_lock(&sig_lock);
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&sig_hashes[slot], &expected, h)) {
                s.sig_id = slot + 1;
                gt_record_write(GT_REC_CUDNN_CONV_SIG, 0, &s, sizeof s);
                atomic_fetch_add(&sig_count, 1);
            }
            pthread_mutex_unlock(&sig_lock);
            if (expected == 0 || expected == h)
                break;
        }
    }
    return atomic_load(&sig_hashes[slot]) == h ? slot + 1 : 0;
}

static int32_t conv_math_type(cudnnConvolutionDescriptor_t conv)
{
    typedef cudnnStatus_t (*math_fn)(cudnnConvolutionDescriptor_t, cudnnMathType_t *);
    math_fn f = (math_fn)gt_sym_get(&sym_cudnnGetConvolutionMathType);
    cudnnMathType_t m;
    return (f && conv && f(conv, &m) == CUDNN_STATUS_SUCCESS) ? (int32_t)m : -1;
}

/* The signature must be read before the record is opened (it writes its own record). */
#define LEGACY_CONV_BODY(fnid, op, call_real, x, w, conv, y, algo_v, ws)                           \
    GT_CUDNN_CALL(fnid, call_real)                                                                 \
    gt_rec_api_cudnn f = {.handle = (uint64_t)(uintptr_t)h,                                        \
                          .algo = (int32_t)(algo_v),                                               \
                          .math_type = conv_math_type(conv),                                       \
                          .workspace_bytes = ws};                                                  \
    f.sig_id = conv_signature(op, x, w, conv, y);                                                  \
    gt_cudnn_record(&c, t_end, flags, r, gt_cudnn_handle_stream(h), &f);                           \
    gt_fast_guard_leave();                                                                         \
    return r;

typedef cudnnTensorDescriptor_t tdesc;
typedef cudnnFilterDescriptor_t fdesc;
typedef cudnnConvolutionDescriptor_t cdesc;

static cudnnStatus_t conv_fwd_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, const void *a,
                                   tdesc xd, const void *x, fdesc wd, const void *w, cdesc cd,
                                   cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss,
                                   const void *b, tdesc yd, void *y)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, const void *, tdesc, const void *, fdesc,
                                   const void *, cdesc, cudnnConvolutionFwdAlgo_t, void *, size_t,
                                   const void *, tdesc, void *))
    LEGACY_CONV_BODY(GT_FN_cudnnConvolutionForward, GT_CUDNN_OP_CONV_FWD,
                     real(h, a, xd, x, wd, w, cd, algo, ws, wss, b, yd, y), xd, wd, cd, yd, algo,
                     wss)
}
static cudnnStatus_t conv_bwd_data_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, const void *a,
                                        fdesc wd, const void *w, tdesc dyd, const void *dy,
                                        cdesc cd, cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                        size_t wss, const void *b, tdesc dxd, void *dx)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, const void *, fdesc, const void *, tdesc,
                                   const void *, cdesc, cudnnConvolutionBwdDataAlgo_t, void *,
                                   size_t, const void *, tdesc, void *))
    LEGACY_CONV_BODY(GT_FN_cudnnConvolutionBackwardData, GT_CUDNN_OP_CONV_BWD_DATA,
                     real(h, a, wd, w, dyd, dy, cd, algo, ws, wss, b, dxd, dx), dxd, wd, cd, dyd,
                     algo, wss)
}
static cudnnStatus_t conv_bwd_filter_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, const void *a,
                                          tdesc xd, const void *x, tdesc dyd, const void *dy,
                                          cdesc cd, cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                          size_t wss, const void *b, fdesc dwd, void *dw)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, const void *, tdesc, const void *, tdesc,
                                   const void *, cdesc, cudnnConvolutionBwdFilterAlgo_t, void *,
                                   size_t, const void *, fdesc, void *))
    LEGACY_CONV_BODY(GT_FN_cudnnConvolutionBackwardFilter, GT_CUDNN_OP_CONV_BWD_FILTER,
                     real(h, a, xd, x, dyd, dy, cd, algo, ws, wss, b, dwd, dw), xd, dwd, cd, dyd,
                     algo, wss)
}
static cudnnStatus_t conv_bias_act_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, const void *a1,
                                        tdesc xd, const void *x, fdesc wd, const void *w, cdesc cd,
                                        cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss,
                                        const void *a2, tdesc zd, const void *z, tdesc bd,
                                        const void *bias, cudnnActivationDescriptor_t ad, tdesc yd,
                                        void *y)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, const void *, tdesc, const void *, fdesc,
                                   const void *, cdesc, cudnnConvolutionFwdAlgo_t, void *, size_t,
                                   const void *, tdesc, const void *, tdesc, const void *,
                                   cudnnActivationDescriptor_t, tdesc, void *))
    LEGACY_CONV_BODY(GT_FN_cudnnConvolutionBiasActivationForward, GT_CUDNN_OP_CONV_BIAS_ACT,
                     real(h, a1, xd, x, wd, w, cd, algo, ws, wss, a2, zd, z, bd, bias, ad, yd, y),
                     xd, wd, cd, yd, algo, wss)
}

/* ---- Find / FindEx / Get_v7: the call, then its whole perf table. The three perf structs of
 * cuDNN share one layout (algo, status, time, memory, determinism, mathType, reserved[3]). */

static void record_perf(uint64_t corr, uint32_t sig, const cudnnConvolutionFwdAlgoPerf_t *perf,
                        int count)
{
    enum { MAX_PERF = 32 };
    struct {
        gt_rec_cudnn_perf h;
        gt_cudnn_perf_entry e[MAX_PERF];
    } rec;
    memset(&rec, 0, sizeof rec);
    if (count < 0)
        count = 0;
    if (count > MAX_PERF)
        count = MAX_PERF;
    rec.h.corr_id = corr;
    rec.h.sig_id = sig;
    rec.h.count = (uint32_t)count;
    for (int i = 0; i < count; i++) {
        rec.e[i].algo = perf[i].algo;
        rec.e[i].status = perf[i].status;
        rec.e[i].time_ms = perf[i].time;
        rec.e[i].memory = perf[i].memory;
        rec.e[i].determinism = perf[i].determinism;
        rec.e[i].math_type = perf[i].mathType;
    }
    gt_record_write(GT_REC_CUDNN_PERF, 0, &rec,
                    (uint32_t)(sizeof rec.h + (size_t)count * sizeof rec.e[0]));
}

#define FIND_BODY(fnid, op, call_real, x, w, conv, y, returned, perf)                              \
    GT_CUDNN_CALL(fnid, call_real)                                                                 \
    gt_rec_api_cudnn f = {                                                                         \
        .handle = (uint64_t)(uintptr_t)h, .algo = -1, .math_type = conv_math_type(conv)};          \
    f.sig_id = conv_signature(op, x, w, conv, y);                                                  \
    if (r == CUDNN_STATUS_SUCCESS && (returned) && (perf) && *(returned) > 0)                      \
        f.algo = (int32_t)(perf)[0].algo, f.workspace_bytes = (perf)[0].memory;                    \
    gt_cudnn_record(&c, t_end, flags, r, gt_cudnn_handle_stream(h), &f);                           \
    if (r == CUDNN_STATUS_SUCCESS && (returned) && (perf))                                         \
        record_perf(c.corr_id, f.sig_id, (const cudnnConvolutionFwdAlgoPerf_t *)(perf),            \
                    *(returned));                                                                  \
    gt_fast_guard_leave();                                                                         \
    return r;

typedef cudnnConvolutionFwdAlgoPerf_t fwd_perf;
typedef cudnnConvolutionBwdDataAlgoPerf_t bwd_data_perf;
typedef cudnnConvolutionBwdFilterAlgoPerf_t bwd_filter_perf;

static cudnnStatus_t find_fwd_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd, fdesc wd,
                                   cdesc cd, tdesc yd, int req, int *ret, fwd_perf *p)
{
    CUDNN_REAL(s,
               cudnnStatus_t(*)(cudnnHandle_t, tdesc, fdesc, cdesc, tdesc, int, int *, fwd_perf *))
    FIND_BODY(GT_FN_cudnnFindConvolutionForwardAlgorithm, GT_CUDNN_OP_CONV_FWD,
              real(h, xd, wd, cd, yd, req, ret, p), xd, wd, cd, yd, ret, p)
}
static cudnnStatus_t get_fwd_v7_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd, fdesc wd,
                                     cdesc cd, tdesc yd, int req, int *ret, fwd_perf *p)
{
    CUDNN_REAL(s,
               cudnnStatus_t(*)(cudnnHandle_t, tdesc, fdesc, cdesc, tdesc, int, int *, fwd_perf *))
    FIND_BODY(GT_FN_cudnnGetConvolutionForwardAlgorithm_v7, GT_CUDNN_OP_CONV_FWD,
              real(h, xd, wd, cd, yd, req, ret, p), xd, wd, cd, yd, ret, p)
}
static cudnnStatus_t find_fwd_ex_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd,
                                      const void *x, fdesc wd, const void *w, cdesc cd, tdesc yd,
                                      void *y, int req, int *ret, fwd_perf *p, void *ws, size_t wss)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, tdesc, const void *, fdesc, const void *, cdesc,
                                   tdesc, void *, int, int *, fwd_perf *, void *, size_t))
    FIND_BODY(GT_FN_cudnnFindConvolutionForwardAlgorithmEx, GT_CUDNN_OP_CONV_FWD,
              real(h, xd, x, wd, w, cd, yd, y, req, ret, p, ws, wss), xd, wd, cd, yd, ret, p)
}
static cudnnStatus_t find_bwd_data_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, fdesc wd,
                                        tdesc dyd, cdesc cd, tdesc dxd, int req, int *ret,
                                        bwd_data_perf *p)
{
    CUDNN_REAL(
        s, cudnnStatus_t(*)(cudnnHandle_t, fdesc, tdesc, cdesc, tdesc, int, int *, bwd_data_perf *))
    FIND_BODY(GT_FN_cudnnFindConvolutionBackwardDataAlgorithm, GT_CUDNN_OP_CONV_BWD_DATA,
              real(h, wd, dyd, cd, dxd, req, ret, p), dxd, wd, cd, dyd, ret, p)
}
static cudnnStatus_t get_bwd_data_v7_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, fdesc wd,
                                          tdesc dyd, cdesc cd, tdesc dxd, int req, int *ret,
                                          bwd_data_perf *p)
{
    CUDNN_REAL(
        s, cudnnStatus_t(*)(cudnnHandle_t, fdesc, tdesc, cdesc, tdesc, int, int *, bwd_data_perf *))
    FIND_BODY(GT_FN_cudnnGetConvolutionBackwardDataAlgorithm_v7, GT_CUDNN_OP_CONV_BWD_DATA,
              real(h, wd, dyd, cd, dxd, req, ret, p), dxd, wd, cd, dyd, ret, p)
}
static cudnnStatus_t find_bwd_data_ex_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, fdesc wd,
                                           const void *w, tdesc dyd, const void *dy, cdesc cd,
                                           tdesc dxd, void *dx, int req, int *ret, bwd_data_perf *p,
                                           void *ws, size_t wss)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, fdesc, const void *, tdesc, const void *, cdesc,
                                   tdesc, void *, int, int *, bwd_data_perf *, void *, size_t))
    FIND_BODY(GT_FN_cudnnFindConvolutionBackwardDataAlgorithmEx, GT_CUDNN_OP_CONV_BWD_DATA,
              real(h, wd, w, dyd, dy, cd, dxd, dx, req, ret, p, ws, wss), dxd, wd, cd, dyd, ret, p)
}
static cudnnStatus_t find_bwd_filter_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd,
                                          tdesc dyd, cdesc cd, fdesc dwd, int req, int *ret,
                                          bwd_filter_perf *p)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, tdesc, tdesc, cdesc, fdesc, int, int *,
                                   bwd_filter_perf *))
    FIND_BODY(GT_FN_cudnnFindConvolutionBackwardFilterAlgorithm, GT_CUDNN_OP_CONV_BWD_FILTER,
              real(h, xd, dyd, cd, dwd, req, ret, p), xd, dwd, cd, dyd, ret, p)
}
static cudnnStatus_t get_bwd_filter_v7_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd,
                                            tdesc dyd, cdesc cd, fdesc dwd, int req, int *ret,
                                            bwd_filter_perf *p)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, tdesc, tdesc, cdesc, fdesc, int, int *,
                                   bwd_filter_perf *))
    FIND_BODY(GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7, GT_CUDNN_OP_CONV_BWD_FILTER,
              real(h, xd, dyd, cd, dwd, req, ret, p), xd, dwd, cd, dyd, ret, p)
}
static cudnnStatus_t find_bwd_filter_ex_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, tdesc xd,
                                             const void *x, tdesc dyd, const void *dy, cdesc cd,
                                             fdesc dwd, void *dw, int req, int *ret,
                                             bwd_filter_perf *p, void *ws, size_t wss)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cudnnHandle_t, tdesc, const void *, tdesc, const void *, cdesc,
                                   fdesc, void *, int, int *, bwd_filter_perf *, void *, size_t))
    FIND_BODY(GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx, GT_CUDNN_OP_CONV_BWD_FILTER,
              real(h, xd, x, dyd, dy, cd, dwd, dw, req, ret, p, ws, wss), xd, dwd, cd, dyd, ret, p)
}

static cudnnStatus_t set_math_impl(gt_sym *s, uint16_t flags, cdesc cd, cudnnMathType_t m)
{
    CUDNN_REAL(s, cudnnStatus_t(*)(cdesc, cudnnMathType_t))
    if (!gt_fast_guard_enter())
        return real(cd, m);
    gt_call c;
    if (!atomic_load_explicit(&gt_wrap_cudnn_seen, memory_order_relaxed))
        gt_wrap_cudnn_first_use();
    gt_call_begin(&c, GT_FN_cudnnSetConvolutionMathType, false, false);
    cudnnStatus_t r = real(cd, m);
    uint64_t t_end = gt_call_end(&c);
    gt_rec_api_cudnn f = {.algo = -1, .math_type = (int32_t)m};
    gt_cudnn_record(&c, t_end, flags, r, 0, &f);
    gt_fast_guard_leave();
    return r;
}

#define CONV_PARAMS_FIND_FWD                                                                       \
    (cudnnHandle_t h, tdesc xd, fdesc wd, cdesc cd, tdesc yd, int req, int *ret, fwd_perf *p)
GT_ENTRY(cudnnStatus_t, cudnnConvolutionForward, GT_LIB_CUDNN, conv_fwd_impl, 0,
         (cudnnHandle_t h, const void *a, tdesc xd, const void *x, fdesc wd, const void *w,
          cdesc cd, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss, const void *b, tdesc yd,
          void *y),
         (h, a, xd, x, wd, w, cd, algo, ws, wss, b, yd, y))
GT_ENTRY(cudnnStatus_t, cudnnConvolutionBackwardData, GT_LIB_CUDNN, conv_bwd_data_impl, 0,
         (cudnnHandle_t h, const void *a, fdesc wd, const void *w, tdesc dyd, const void *dy,
          cdesc cd, cudnnConvolutionBwdDataAlgo_t algo, void *ws, size_t wss, const void *b,
          tdesc dxd, void *dx),
         (h, a, wd, w, dyd, dy, cd, algo, ws, wss, b, dxd, dx))
GT_ENTRY(cudnnStatus_t, cudnnConvolutionBackwardFilter, GT_LIB_CUDNN, conv_bwd_filter_impl, 0,
         (cudnnHandle_t h, const void *a, tdesc xd, const void *x, tdesc dyd, const void *dy,
          cdesc cd, cudnnConvolutionBwdFilterAlgo_t algo, void *ws, size_t wss, const void *b,
          fdesc dwd, void *dw),
         (h, a, xd, x, dyd, dy, cd, algo, ws, wss, b, dwd, dw))
GT_ENTRY(cudnnStatus_t, cudnnConvolutionBiasActivationForward, GT_LIB_CUDNN, conv_bias_act_impl, 0,
         (cudnnHandle_t h, const void *a1, tdesc xd, const void *x, fdesc wd, const void *w,
          cdesc cd, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss, const void *a2, tdesc zd,
          const void *z, tdesc bd, const void *bias, cudnnActivationDescriptor_t ad, tdesc yd,
          void *y),
         (h, a1, xd, x, wd, w, cd, algo, ws, wss, a2, zd, z, bd, bias, ad, yd, y))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionForwardAlgorithm, GT_LIB_CUDNN, find_fwd_impl, 0,
         CONV_PARAMS_FIND_FWD, (h, xd, wd, cd, yd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnGetConvolutionForwardAlgorithm_v7, GT_LIB_CUDNN, get_fwd_v7_impl, 0,
         CONV_PARAMS_FIND_FWD, (h, xd, wd, cd, yd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionForwardAlgorithmEx, GT_LIB_CUDNN, find_fwd_ex_impl, 0,
         (cudnnHandle_t h, tdesc xd, const void *x, fdesc wd, const void *w, cdesc cd, tdesc yd,
          void *y, int req, int *ret, fwd_perf *p, void *ws, size_t wss),
         (h, xd, x, wd, w, cd, yd, y, req, ret, p, ws, wss))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionBackwardDataAlgorithm, GT_LIB_CUDNN, find_bwd_data_impl,
         0,
         (cudnnHandle_t h, fdesc wd, tdesc dyd, cdesc cd, tdesc dxd, int req, int *ret,
          bwd_data_perf *p),
         (h, wd, dyd, cd, dxd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnGetConvolutionBackwardDataAlgorithm_v7, GT_LIB_CUDNN,
         get_bwd_data_v7_impl, 0,
         (cudnnHandle_t h, fdesc wd, tdesc dyd, cdesc cd, tdesc dxd, int req, int *ret,
          bwd_data_perf *p),
         (h, wd, dyd, cd, dxd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionBackwardDataAlgorithmEx, GT_LIB_CUDNN,
         find_bwd_data_ex_impl, 0,
         (cudnnHandle_t h, fdesc wd, const void *w, tdesc dyd, const void *dy, cdesc cd, tdesc dxd,
          void *dx, int req, int *ret, bwd_data_perf *p, void *ws, size_t wss),
         (h, wd, w, dyd, dy, cd, dxd, dx, req, ret, p, ws, wss))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionBackwardFilterAlgorithm, GT_LIB_CUDNN,
         find_bwd_filter_impl, 0,
         (cudnnHandle_t h, tdesc xd, tdesc dyd, cdesc cd, fdesc dwd, int req, int *ret,
          bwd_filter_perf *p),
         (h, xd, dyd, cd, dwd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnGetConvolutionBackwardFilterAlgorithm_v7, GT_LIB_CUDNN,
         get_bwd_filter_v7_impl, 0,
         (cudnnHandle_t h, tdesc xd, tdesc dyd, cdesc cd, fdesc dwd, int req, int *ret,
          bwd_filter_perf *p),
         (h, xd, dyd, cd, dwd, req, ret, p))
GT_ENTRY(cudnnStatus_t, cudnnFindConvolutionBackwardFilterAlgorithmEx, GT_LIB_CUDNN,
         find_bwd_filter_ex_impl, 0,
         (cudnnHandle_t h, tdesc xd, const void *x, tdesc dyd, const void *dy, cdesc cd, fdesc dwd,
          void *dw, int req, int *ret, bwd_filter_perf *p, void *ws, size_t wss),
         (h, xd, x, dyd, dy, cd, dwd, dw, req, ret, p, ws, wss))
GT_ENTRY(cudnnStatus_t, cudnnSetConvolutionMathType, GT_LIB_CUDNN, set_math_impl, 0,
         (cdesc cd, cudnnMathType_t m), (cd, m))
