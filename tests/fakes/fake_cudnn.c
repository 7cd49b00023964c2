/* fake_cudnn.c — a stand-in libcudnn.so.9: the legacy convolution API (descriptors that read back
 * what was set, Find/Get_v7 perf tables) and the backend API (descriptors with the attributes
 * gputrace reads: plan JSON, workspace, engine config -> engine -> global index, numerical notes,
 * knob choices). Kernels are "launched" through fake_gpu_emit of the fake cudart, like the real
 * library's static runtime. FAKE_CUDA_FAIL=<cudnn function> makes that call fail. */
#include <cudnn.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_gpu.h"

#define EXPORT __attribute__((visibility("default")))

static bool should_fail(const char *fn)
{
    const char *f = getenv("FAKE_CUDA_FAIL");
    return f && strncmp(f, fn, strlen(fn)) == 0 && (f[strlen(fn)] == 0 || f[strlen(fn)] == ':');
}

static void emit_kernel(const char *name)
{
    static void (*emit_fn)(const fake_gpu_op *);
    if (!emit_fn) {
        void *h = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
        if (h)
            emit_fn = (void (*)(const fake_gpu_op *))dlsym(h, "fake_gpu_emit");
    }
    if (!emit_fn)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    fake_gpu_op op = {.kind = FAKE_OP_KERNEL,
                      .start_ns = t,
                      .end_ns = t + 20000,
                      .stream = 7,
                      .name = name,
                      .grid = {64, 1, 1},
                      .block = {128, 1, 1}};
    emit_fn(&op);
}

/* ------------------------------------------------------------------ handle, versions */

typedef struct fake_handle {
    cudaStream_t stream;
} fake_handle;

EXPORT size_t cudnnGetVersion(void)
{
    return 91900;
}
EXPORT size_t cudnnGetCudartVersion(void)
{
    return 13000;
}
EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    *h = (cudnnHandle_t)calloc(1, sizeof(fake_handle));
    return *h ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}
EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    free(h);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    ((fake_handle *)h)->stream = s;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    *s = ((fake_handle *)h)->stream;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT const char *cudnnGetErrorString(cudnnStatus_t s)
{
    return s ? "fake error" : "success";
}

/* ------------------------------------------------------------------ legacy descriptors */

typedef struct tensor {
    cudnnDataType_t dt;
    int nd, dims[5], strides[5];
} tensor;
typedef struct filter {
    cudnnDataType_t dt;
    cudnnTensorFormat_t fmt;
    int nd, dims[5];
} filter;
typedef struct conv {
    int n, pad[3], stride[3], dil[3], groups;
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    cudnnMathType_t math;
} conv;

EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
    *d = (cudnnTensorDescriptor_t)calloc(1, sizeof(tensor));
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
                                                cudnnDataType_t dt, int n, int c, int h, int w)
{
    tensor *t = (tensor *)d;
    t->dt = dt, t->nd = 4;
    int dims[4] = {n, c, h, w};
    memcpy(t->dims, dims, sizeof dims);
    if (f == CUDNN_TENSOR_NHWC) {
        int s[4] = {h * w * c, 1, w * c, c};
        memcpy(t->strides, s, sizeof s);
    } else {
        int s[4] = {c * h * w, h * w, w, 1};
        memcpy(t->strides, s, sizeof s);
    }
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetTensorNdDescriptor(cudnnTensorDescriptor_t d, int req,
                                                cudnnDataType_t *dt, int *nd, int *dims,
                                                int *strides)
{
    tensor *t = (tensor *)d;
    if (!t)
        return CUDNN_STATUS_BAD_PARAM;
    *dt = t->dt, *nd = t->nd;
    for (int i = 0; i < t->nd && i < req; i++)
        dims[i] = t->dims[i], strides[i] = t->strides[i];
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
    *d = (cudnnFilterDescriptor_t)calloc(1, sizeof(filter));
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dt,
                                                cudnnTensorFormat_t f, int k, int c, int h, int w)
{
    filter *x = (filter *)d;
    *x = (filter){dt, f, 4, {k, c, h, w, 0}};
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetFilterNdDescriptor(cudnnFilterDescriptor_t d, int req,
                                                cudnnDataType_t *dt, cudnnTensorFormat_t *f,
                                                int *nd, int *dims)
{
    filter *x = (filter *)d;
    if (!x)
        return CUDNN_STATUS_BAD_PARAM;
    *dt = x->dt, *f = x->fmt, *nd = x->nd;
    for (int i = 0; i < x->nd && i < req; i++)
        dims[i] = x->dims[i];
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
    conv *c = calloc(1, sizeof(conv));
    c->groups = 1;
    *d = (cudnnConvolutionDescriptor_t)c;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw,
                                                     int u, int v, int dh, int dw,
                                                     cudnnConvolutionMode_t m, cudnnDataType_t ct)
{
    conv *c = (conv *)d;
    c->n = 2, c->pad[0] = ph, c->pad[1] = pw, c->stride[0] = u, c->stride[1] = v;
    c->dil[0] = dh, c->dil[1] = dw, c->mode = m, c->compute = ct;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int req,
                                                     int *n, int *pad, int *stride, int *dil,
                                                     cudnnConvolutionMode_t *m, cudnnDataType_t *ct)
{
    conv *c = (conv *)d;
    if (!c)
        return CUDNN_STATUS_BAD_PARAM;
    *n = c->n, *m = c->mode, *ct = c->compute;
    for (int i = 0; i < c->n && i < req; i++)
        pad[i] = c->pad[i], stride[i] = c->stride[i], dil[i] = c->dil[i];
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g)
{
    ((conv *)d)->groups = g;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int *g)
{
    *g = ((conv *)d)->groups;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    if (should_fail("cudnnSetConvolutionMathType"))
        return CUDNN_STATUS_BAD_PARAM;
    ((conv *)d)->math = m;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t *m)
{
    *m = ((conv *)d)->math;
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ legacy convolutions */

static cudnnStatus_t run_conv(const char *fn, const char *kind, int algo)
{
    if (should_fail(fn))
        return CUDNN_STATUS_EXECUTION_FAILED;
    static char names[3][8][64];
    int k = kind[0] == 'f' ? 0 : kind[0] == 'd' ? 1 : 2;
    char *name = names[k][algo & 7];
    if (!name[0])
        snprintf(name, 64, "fake_cudnn_%s_algo%d_kernel", kind, algo & 7);
    emit_kernel(name);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *a,
                                             cudnnTensorDescriptor_t xd, const void *x,
                                             cudnnFilterDescriptor_t wd, const void *w,
                                             cudnnConvolutionDescriptor_t cd,
                                             cudnnConvolutionFwdAlgo_t algo, void *ws, size_t wss,
                                             const void *b, cudnnTensorDescriptor_t yd, void *y)
{
    return run_conv("cudnnConvolutionForward", "fprop", algo);
}
EXPORT cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t h, const void *a,
                                                  cudnnFilterDescriptor_t wd, const void *w,
                                                  cudnnTensorDescriptor_t dyd, const void *dy,
                                                  cudnnConvolutionDescriptor_t cd,
                                                  cudnnConvolutionBwdDataAlgo_t algo, void *ws,
                                                  size_t wss, const void *b,
                                                  cudnnTensorDescriptor_t dxd, void *dx)
{
    return run_conv("cudnnConvolutionBackwardData", "dgrad", algo);
}
EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t h, const void *a,
                                                    cudnnTensorDescriptor_t xd, const void *x,
                                                    cudnnTensorDescriptor_t dyd, const void *dy,
                                                    cudnnConvolutionDescriptor_t cd,
                                                    cudnnConvolutionBwdFilterAlgo_t algo, void *ws,
                                                    size_t wss, const void *b,
                                                    cudnnFilterDescriptor_t dwd, void *dw)
{
    return run_conv("cudnnConvolutionBackwardFilter", "wgrad", algo);
}

/* Perf tables: 3 algorithms, fastest first, deterministic numbers. */
static void fill_perf(cudnnConvolutionFwdAlgoPerf_t *p, int req, int *ret)
{
    static const int algos[3] = {1, 6, 0};
    int n = req < 3 ? req : 3;
    for (int i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].algo = algos[i];
        p[i].status = CUDNN_STATUS_SUCCESS;
        p[i].time = 0.25f * (float)(i + 1);
        p[i].memory = (size_t)(i + 1) << 20;
        p[i].determinism = CUDNN_DETERMINISTIC;
        p[i].mathType = i == 0 ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH;
    }
    *ret = n;
}
EXPORT cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
    cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int req, int *ret,
    cudnnConvolutionFwdAlgoPerf_t *p)
{
    if (should_fail("cudnnFindConvolutionForwardAlgorithm"))
        return CUDNN_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < 3; i++)
        emit_kernel("fake_cudnn_find_trial_kernel");
    fill_perf(p, req, ret);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, cudnnFilterDescriptor_t wd,
    cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, int req, int *ret,
    cudnnConvolutionFwdAlgoPerf_t *p)
{
    fill_perf(p, req, ret);
    for (int i = 0; i < *ret; i++)
        p[i].time = -1.0f; /* heuristics do not time */
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ backend */

typedef struct bdesc {
    cudnnBackendDescriptorType_t type;
    bool finalized;
    struct bdesc *op;              /* OPERATIONGRAPH: its first operation; ENGINE: its graph */
    struct bdesc *engine;          /* ENGINECFG */
    struct bdesc *cfg;             /* EXECUTION_PLAN */
    int64_t index;                 /* ENGINE: global index */
    int64_t knob_type, knob_value; /* KNOB_CHOICE */
    char json[1024];               /* EXECUTION_PLAN, made at finalize */
} bdesc;

EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t t,
                                                  cudnnBackendDescriptor_t *d)
{
    bdesc *x = calloc(1, sizeof *x);
    if (!x)
        return CUDNN_STATUS_ALLOC_FAILED;
    x->type = t;
    *d = (cudnnBackendDescriptor_t)x;
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
EXPORT cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t d)
{
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t d,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t count,
                                              const void *arr)
{
    bdesc *x = (bdesc *)d;
    if (!x || x->finalized)
        return CUDNN_STATUS_BAD_PARAM;
    switch (name) {
    case CUDNN_ATTR_OPERATIONGRAPH_OPS:
    case CUDNN_ATTR_ENGINE_OPERATION_GRAPH:
        x->op = *(bdesc *const *)arr;
        break;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        x->index = *(const int64_t *)arr;
        break;
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        x->engine = *(bdesc *const *)arr;
        break;
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        x->cfg = *(bdesc *const *)arr;
        break;
    default:
        break; /* handles, variant pack pointers, op tensors: not simulated */
    }
    return CUDNN_STATUS_SUCCESS;
}

static const char *op_mode(const bdesc *plan)
{
    const bdesc *graph = plan->cfg && plan->cfg->engine ? plan->cfg->engine->op : NULL;
    const bdesc *op = graph ? graph->op : NULL;
    if (!op)
        return "UNKNOWN";
    switch (op->type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
        return "CONV_FORWARD";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
        return "CONV_BWD_DATA";
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
        return "CONV_BWD_FILTER";
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
        return "MATMUL";
    default:
        return "OTHER";
    }
}

static int64_t plan_index(const bdesc *plan)
{
    return plan->cfg && plan->cfg->engine ? plan->cfg->engine->index : -1;
}

EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t d)
{
    bdesc *x = (bdesc *)d;
    if (!x)
        return CUDNN_STATUS_BAD_PARAM;
    if (should_fail("cudnnBackendFinalize"))
        return CUDNN_STATUS_NOT_SUPPORTED;
    if (x->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
        if (!x->cfg || !x->cfg->engine)
            return CUDNN_STATUS_BAD_PARAM;
        /* The operation graph's pointer distinguishes operations in the simulated JSON, as shapes
         * do in the real one. */
        snprintf(x->json, sizeof x->json,
                 "{\"engine\":{\"engineId\":%lld,\"knobChoices\":{\"SWIZZLE\":%lld}},"
                 "\"finalizeMode\":\"%s\",\"graph\":\"%p\",\"tensors\":{\"X\":{\"data_type\":"
                 "\"FLOAT\",\"dims\":[8,64,56,56],\"strides\":[200704,1,3584,64]}}}",
                 (long long)plan_index(x), (long long)(plan_index(x) % 3), op_mode(x),
                 (void *)x->cfg->engine->op);
    }
    x->finalized = true;
    return CUDNN_STATUS_SUCCESS;
}

static cudnnStatus_t copy_out(const void *src, size_t size, int64_t req, int64_t *count, void *arr)
{
    if (count)
        *count = 1;
    if (req < 1 || !arr)
        return CUDNN_STATUS_BAD_PARAM;
    memcpy(arr, src, size);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const d,
                                              cudnnBackendAttributeName_t name,
                                              cudnnBackendAttributeType_t type, int64_t req,
                                              int64_t *count, void *arr)
{
    bdesc *x = (bdesc *)d;
    if (!x)
        return CUDNN_STATUS_BAD_PARAM;
    switch (name) {
    case CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION: {
        if (!x->finalized)
            return CUDNN_STATUS_BAD_PARAM;
        size_t n = strlen(x->json) + 1;
        if (count)
            *count = (int64_t)n;
        if (!arr || req < (int64_t)n)
            return req == 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
        memcpy(arr, x->json, n);
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: {
        int64_t ws = plan_index(x) * 1024;
        return copy_out(&ws, sizeof ws, req, count, arr);
    }
    case CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG:
        if (!x->cfg || !arr)
            return CUDNN_STATUS_BAD_PARAM;
        *(*(bdesc **)arr) = *x->cfg; /* into the caller's descriptor, as cuDNN does */
        if (count)
            *count = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINECFG_ENGINE:
        if (!x->engine || !arr)
            return CUDNN_STATUS_BAD_PARAM;
        *(*(bdesc **)arr) = *x->engine;
        if (count)
            *count = 1;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
        return copy_out(&x->index, sizeof x->index, req, count, arr);
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE: {
        /* even engines use tensor cores; engine 5 is a Winograd one */
        cudnnBackendNumericalNote_t notes[2];
        int n = 0;
        if (x->index % 2 == 0)
            notes[n++] = CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
        if (x->index == 5)
            notes[n++] = CUDNN_NUMERICAL_NOTE_WINOGRAD;
        if (count)
            *count = n;
        if (arr)
            memcpy(arr, notes, sizeof notes[0] * (size_t)(n < req ? n : req));
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
        if (count)
            *count = 0;
        return CUDNN_STATUS_SUCCESS;
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES: {
        /* one knob: SWIZZLE = index % 3 */
        if (count)
            *count = 1;
        if (req < 1 || !arr || !x->engine)
            return CUDNN_STATUS_BAD_PARAM;
        bdesc *k = *(bdesc **)arr;
        k->knob_type = CUDNN_KNOB_TYPE_SWIZZLE;
        k->knob_value = x->engine->index % 3;
        return CUDNN_STATUS_SUCCESS;
    }
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE: {
        cudnnBackendKnobType_t t = (cudnnBackendKnobType_t)x->knob_type;
        return copy_out(&t, sizeof t, req, count, arr);
    }
    case CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE:
        return copy_out(&x->knob_value, sizeof x->knob_value, req, count, arr);
    default:
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
}

EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t vp)
{
    bdesc *p = (bdesc *)plan;
    if (!h || !p || !p->finalized || p->type != CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        return CUDNN_STATUS_BAD_PARAM;
    if (should_fail("cudnnBackendExecute"))
        return CUDNN_STATUS_EXECUTION_FAILED;
    static char names[64][64];
    int64_t i = plan_index(p) & 63;
    if (!names[i][0])
        snprintf(names[i], 64, "sm90_xmma_fprop_implicit_gemm_engine%lld", (long long)i);
    emit_kernel(names[i]);
    return CUDNN_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------ batch norm (issue 30) */

/* The legacy batch-norm entry points PyTorch calls: each launches one kernel of cuDNN's bn_* family
 * through the library's own runtime. The scalars are checked so that a wrapper that forwards a
 * double or a size_t into the wrong register fails the call: the tests pass epsilon 1e-5, factor
 * 0.1 and a workspace of 4096 bytes. */
static cudnnStatus_t run_bn(const char *fn, const char *kernel, double eps, double factor,
                            size_t wss)
{
    if (should_fail(fn))
        return CUDNN_STATUS_EXECUTION_FAILED;
    if (eps != 1e-5 || (factor >= 0 && factor != 0.1) || (wss != (size_t)-1 && wss != 4096))
        return CUDNN_STATUS_BAD_PARAM;
    emit_kernel(kernel);
    return CUDNN_STATUS_SUCCESS;
}

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
typedef const cudnnTensorDescriptor_t td;
typedef const void *cv;
typedef void *vp;

EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTraining(cudnnHandle_t h,
                                                            cudnnBatchNormMode_t mode, cv alpha,
                                                            cv beta, td xd, cv x, td yd, vp y,
                                                            td sd, cv scale, cv bias, double factor,
                                                            vp run_mean, vp run_var, double eps,
                                                            vp save_mean, vp save_inv_var)
{
    return run_bn(__func__, "_ZN5cudnn19bn_fw_tr_1C11_kernel_fake", eps, factor, (size_t)-1);
}
EXPORT cudnnStatus_t cudnnBatchNormalizationForwardTrainingEx(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cv alpha, cv beta, td xd,
    cv x, td zd, cv z, td yd, vp y, td sd, cv scale, cv bias, double factor, vp run_mean,
    vp run_var, double eps, vp save_mean, vp save_inv_var, cudnnActivationDescriptor_t act, vp ws,
    size_t wss, vp reserve, size_t reserve_size)
{
    return run_bn(__func__, "_ZN5cudnn26bn_fw_tr_1C11_singleread_fake", eps, factor, wss);
}
EXPORT cudnnStatus_t cudnnBatchNormalizationForwardInference(cudnnHandle_t h,
                                                             cudnnBatchNormMode_t mode, cv alpha,
                                                             cv beta, td xd, cv x, td yd, vp y,
                                                             td sd, cv scale, cv bias, cv mean,
                                                             cv var, double eps)
{
    return run_bn(__func__, "_ZN5cudnn20bn_fw_inf_1C11_kernel_fake", eps, -1, (size_t)-1);
}
EXPORT cudnnStatus_t cudnnBatchNormalizationBackward(cudnnHandle_t h, cudnnBatchNormMode_t mode,
                                                     cv a_data, cv b_data, cv a_param, cv b_param,
                                                     td xd, cv x, td dyd, cv dy, td dxd, vp dx,
                                                     td sd, cv scale, vp dscale, vp dbias,
                                                     double eps, cv save_mean, cv save_inv_var)
{
    return run_bn(__func__, "_ZN5cudnn16bn_bw_1C11_kernel_fake", eps, -1, (size_t)-1);
}
EXPORT cudnnStatus_t cudnnBatchNormalizationBackwardEx(
    cudnnHandle_t h, cudnnBatchNormMode_t mode, cudnnBatchNormOps_t ops, cv a_data, cv b_data,
    cv a_param, cv b_param, td xd, cv x, td yd, cv y, td dyd, cv dy, td dzd, vp dz, td dxd, vp dx,
    td sd, cv scale, cv bias, vp dscale, vp dbias, double eps, cv save_mean, cv save_inv_var,
    cudnnActivationDescriptor_t act, vp ws, size_t wss, vp reserve, size_t reserve_size)
{
    return run_bn(__func__, "_ZN5cudnn22bn_bw_1C11_singleread_fake", eps, -1, wss);
}
EXPORT cudnnStatus_t cudnnNormalizationForwardTraining(
    cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t algo, cv alpha,
    cv beta, td xd, cv x, td sd, cv scale, cv bias, double factor, td mvd, vp run_mean, vp run_var,
    double eps, vp save_mean, vp save_inv_var, cudnnActivationDescriptor_t act, td zd, cv z, td yd,
    vp y, vp ws, size_t wss, vp reserve, size_t reserve_size, int groups)
{
    if (groups != 1)
        return CUDNN_STATUS_BAD_PARAM;
    return run_bn(__func__, "_ZN5cudnn19norm_fw_tr_kernel_fake", eps, factor, wss);
}
