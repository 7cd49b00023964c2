/* ti_cudnn_app.c — legacy convolutions with Find/Get_v7, and backend plans: one chosen by
 * heuristics, two timed with events (autotuning), one on a fresh graph; then the legacy batch-norm
 * calls PyTorch makes (a training step's forward and backward, an inference forward) and one
 * generic normalization. For interpose_check "cudnn".
 * ti_cudnn_app loop STEPS: a cuDNN-heavy training loop instead, for tools/bench/memory_growth.sh
 * (issue 33 item 0): STEPS steps of 60 executes (three plans, one kernel each) and a device
 * sync, so that every GPU op is a library call's and its link is kept for pass 2. */
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(expr)                                                                                   \
    do {                                                                                           \
        int r_ = (int)(expr);                                                                      \
        if (r_ != 0) {                                                                             \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #expr, r_);             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef cudnnBackendDescriptor_t bd;

static bd make(cudnnBackendDescriptorType_t t)
{
    bd d;
    OK(cudnnBackendCreateDescriptor(t, &d));
    return d;
}

static bd graph_of(cudnnBackendDescriptorType_t op_type)
{
    bd op = make(op_type), g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    OK(cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                &op));
    OK(cudnnBackendFinalize(g));
    return g;
}

static bd plan_for(cudnnHandle_t h, bd graph, int64_t engine_index)
{
    bd eng = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR), cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR),
       plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    OK(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
    OK(cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                &engine_index));
    OK(cudnnBackendFinalize(eng));
    OK(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                &eng));
    OK(cudnnBackendFinalize(cfg));
    OK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg));
    OK(cudnnBackendFinalize(plan));
    return plan;
}

static void legacy(cudnnHandle_t h)
{
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t c;
    OK(cudnnCreateTensorDescriptor(&x));
    OK(cudnnCreateTensorDescriptor(&y));
    OK(cudnnCreateFilterDescriptor(&w));
    OK(cudnnCreateConvolutionDescriptor(&c));
    OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 56, 56));
    OK(cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 128, 56, 56));
    OK(cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 128, 64, 3, 3));
    OK(cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT));
    OK(cudnnSetConvolutionMathType(c, CUDNN_TENSOR_OP_MATH));
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int n = 0;
    OK(cudnnFindConvolutionForwardAlgorithm(h, x, w, c, y, 8, &n, perf));
    float one = 1, zero = 0;
    for (int i = 0; i < 2; i++)
        OK(cudnnConvolutionForward(h, &one, x, NULL, w, NULL, c, perf[0].algo, NULL, 0, &zero, y,
                                   NULL));
    OK(cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, 8, &n, perf));
    OK(cudnnConvolutionBackwardData(h, &one, w, NULL, y, NULL, c, CUDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                    NULL, 0, &zero, x, NULL));
}

/* cuDNN 9 marks the batch-norm calls deprecated; PyTorch 2.11 still makes them. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

/* The fake checks epsilon 1e-5, factor 0.1 and the 4096-byte workspace (it fails the call when a
 * wrapper forwarded them wrongly). */
static void batch_norm(cudnnHandle_t h)
{
    cudnnTensorDescriptor_t x, s;
    OK(cudnnCreateTensorDescriptor(&x));
    OK(cudnnCreateTensorDescriptor(&s));
    OK(cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 56, 56));
    OK(cudnnSetTensor4dDescriptor(s, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 64, 1, 1));
    float one = 1, zero = 0;
    char ws[4096], reserve[64];
    OK(cudnnBatchNormalizationForwardTrainingEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN,
                                                &one, &zero, x, NULL, NULL, NULL, x, NULL, s, NULL,
                                                NULL, 0.1, NULL, NULL, 1e-5, NULL, NULL, NULL, ws,
                                                sizeof ws, reserve, sizeof reserve));
    OK(cudnnBatchNormalizationBackwardEx(h, CUDNN_BATCHNORM_SPATIAL, CUDNN_BATCHNORM_OPS_BN, &one,
                                         &zero, &one, &zero, x, NULL, NULL, NULL, x, NULL, NULL,
                                         NULL, x, NULL, s, NULL, NULL, NULL, NULL, 1e-5, NULL, NULL,
                                         NULL, ws, sizeof ws, reserve, sizeof reserve));
    OK(cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, NULL, x,
                                               NULL, s, NULL, NULL, NULL, NULL, 1e-5));
    OK(cudnnBatchNormalizationForwardTraining(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, x, NULL, x,
                                              NULL, s, NULL, NULL, 0.1, NULL, NULL, 1e-5, NULL,
                                              NULL));
    OK(cudnnBatchNormalizationBackward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, x,
                                       NULL, x, NULL, x, NULL, s, NULL, NULL, NULL, 1e-5, NULL,
                                       NULL));
    OK(cudnnNormalizationForwardTraining(h, CUDNN_NORM_PER_CHANNEL, CUDNN_NORM_OPS_NORM,
                                         CUDNN_NORM_ALGO_STANDARD, &one, &zero, x, NULL, s, NULL,
                                         NULL, 0.1, s, NULL, NULL, 1e-5, NULL, NULL, NULL, NULL,
                                         NULL, x, NULL, ws, sizeof ws, reserve, sizeof reserve, 1));
}

static int loop(cudnnHandle_t h, long steps)
{
    bd plans[3] = {
        plan_for(h, graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR), 38),
        plan_for(h, graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR), 5),
        plan_for(h, graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR), 46)};
    bd vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    for (long step = 0; step < steps; step++) {
        for (int i = 0; i < 60; i++)
            OK(cudnnBackendExecute(h, plans[i % 3], vp));
        OK(cudaDeviceSynchronize());
    }
    return 0;
}

int main(int argc, char **argv)
{
    cudnnHandle_t h;
    OK(cudnnCreate(&h));
    if (argc > 2 && !strcmp(argv[1], "loop"))
        return loop(h, atol(argv[2]));
    legacy(h);

    bd g1 = graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    bd p1 = plan_for(h, g1, 38);
    bd vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    for (int i = 0; i < 3; i++)
        OK(cudnnBackendExecute(h, p1, vp)); /* heuristic: one plan */

    bd g2 = graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
    bd cand[2] = {plan_for(h, g2, 5), plan_for(h, g2, 12)};
    cudaEvent_t start, stop;
    OK(cudaEventCreate(&start));
    OK(cudaEventCreate(&stop));
    for (int i = 0; i < 2; i++) { /* benchmark mode: each candidate timed with events */
        OK(cudaEventRecord(start, 0));
        OK(cudnnBackendExecute(h, cand[i], vp));
        OK(cudaEventRecord(stop, 0));
        OK(cudaEventSynchronize(stop));
    }
    OK(cudnnBackendExecute(h, cand[1], vp)); /* the winner, in steady state */

    OK(cudnnBackendDestroyDescriptor(p1));
    bd g3 = graph_of(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
    bd p3 = plan_for(h, g3, 46);
    OK(cudnnBackendExecute(h, p3, vp));
    int bad = (int)cudnnBackendExecute(h, NULL, vp); /* an error passes through unchanged */
    if (bad != CUDNN_STATUS_BAD_PARAM)
        return 1;
    batch_norm(h);
    return 0;
}
