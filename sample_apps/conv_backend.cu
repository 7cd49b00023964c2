/* conv_backend.cu — cuDNN's backend (graph) API, the way PyTorch runs convolutions, choosing the
 * execution plan two ways (the `cudnn-benchmark` pathology):
 *   conv_backend heuristic   ENGINEHEUR mode INSTANT, the first plan that builds (benchmark=False)
 *   conv_backend autotune    up to 8 heuristic plans built for the same operation graph, each
 *                            executed twice between events, the fastest kept (benchmark=True)
 *   add "half" for fp16 channels-last data (the `amp` fix); default fp32 NCHW.
 * Three ResNet-50-like layers, forward, 30 executions each. */
#include <cudnn.h>

#include "sample_common.h"

#define CUDNN_CHECK(call)                                                                          \
    do {                                                                                           \
        cudnnStatus_t st_ = (call);                                                                \
        if (st_ != CUDNN_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                    cudnnGetErrorString(st_));                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_CANDIDATES 8
#define ITERATIONS 30

typedef struct layer {
    int64_t n, c, h, w, k, r, stride, pad;
} layer;

static const layer LAYERS[] = {
    {32, 256, 56, 56, 64, 1, 1, 0},
    {32, 64, 56, 56, 64, 3, 1, 1},
    {32, 128, 56, 56, 128, 3, 2, 1},
};

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d;
    CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d));
    return d;
}

static void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void *value)
{
    CUDNN_CHECK(cudnnBackendSetAttribute(d, name, type, count, value));
}

/* dims in NCHW order; strides give NCHW or NHWC (channels-last) layout. */
static cudnnBackendDescriptor_t tensor(int64_t uid, const int64_t dims[4], int nhwc,
                                       cudnnDataType_t dt)
{
    int64_t strides[4];
    if (nhwc) {
        strides[1] = 1;
        strides[3] = dims[1];
        strides[2] = dims[1] * dims[3];
        strides[0] = dims[1] * dims[2] * dims[3];
    } else {
        strides[3] = 1;
        strides[2] = dims[3];
        strides[1] = dims[2] * dims[3];
        strides[0] = dims[1] * dims[2] * dims[3];
    }
    int64_t alignment = 16;
    cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    CUDNN_CHECK(cudnnBackendFinalize(t));
    return t;
}

typedef struct graph {
    cudnnBackendDescriptor_t x, w, y, conv, op, opgraph;
    int64_t y_dims[4];
} graph;

static void build_graph(cudnnHandle_t h, const layer *L, int half, graph *g)
{
    cudnnDataType_t dt = half ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    int64_t out_hw = (L->h + 2 * L->pad - L->r) / L->stride + 1;
    int64_t x_dims[4] = {L->n, L->c, L->h, L->w};
    int64_t w_dims[4] = {L->k, L->c, L->r, L->r};
    int64_t y_dims[4] = {L->n, L->k, out_hw, out_hw};
    memcpy(g->y_dims, y_dims, sizeof y_dims);
    g->x = tensor('x', x_dims, half, dt);
    g->w = tensor('w', w_dims, half, dt);
    g->y = tensor('y', y_dims, half, dt);

    int64_t spatial = 2, pad[2] = {L->pad, L->pad}, stride[2] = {L->stride, L->stride};
    int64_t dilation[2] = {1, 1};
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    g->conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dilation);
    set(g->conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    CUDNN_CHECK(cudnnBackendFinalize(g->conv));

    float alpha = 1.0f, beta = 0.0f;
    g->op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->x);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->w);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->y);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &g->conv);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    set(g->op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    CUDNN_CHECK(cudnnBackendFinalize(g->op));

    g->opgraph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(g->opgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->op);
    set(g->opgraph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    CUDNN_CHECK(cudnnBackendFinalize(g->opgraph));
}

static void destroy_graph(graph *g)
{
    cudnnBackendDescriptor_t all[] = {g->opgraph, g->op, g->conv, g->x, g->w, g->y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        cudnnBackendDestroyDescriptor(all[i]);
}

/* Up to max plans that finalize, in heuristic order. Returns how many. */
static int build_plans(cudnnHandle_t h, const graph *g, cudnnBackendDescriptor_t *plans, int max)
{
    cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->opgraph);
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    CUDNN_CHECK(cudnnBackendFinalize(heur));
    int64_t count = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));
    if (count > 32)
        count = 32;
    cudnnBackendDescriptor_t cfgs[32];
    for (int64_t i = 0; i < count; i++)
        cfgs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t got = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs));
    int built = 0;
    for (int64_t i = 0; i < got && built < max; i++) {
        cudnnBackendDescriptor_t plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
            &cfgs[i]);
        if (cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS)
            plans[built++] = plan;
        else
            cudnnBackendDestroyDescriptor(plan); /* not supported for this graph: next */
    }
    for (int64_t i = 0; i < count; i++)
        cudnnBackendDestroyDescriptor(cfgs[i]);
    cudnnBackendDestroyDescriptor(heur);
    return built;
}

static int64_t workspace_of(cudnnBackendDescriptor_t plan)
{
    int64_t ws = 0, n = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                         CUDNN_TYPE_INT64, 1, &n, &ws));
    return ws;
}

static cudnnBackendDescriptor_t variant_pack(void *x, void *w, void *y, void *ws)
{
    int64_t uids[3] = {'x', 'w', 'y'};
    void *ptrs[3] = {x, w, y};
    cudnnBackendDescriptor_t vp = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    set(vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    set(vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
    CUDNN_CHECK(cudnnBackendFinalize(vp));
    return vp;
}

/* Like PyTorch's benchmark mode: each candidate run twice between events, after a sync. */
static float time_plan(cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                       cudnnBackendDescriptor_t vp)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    float best = 1e30f;
    for (int rep = 0; rep < 2; rep++) {
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(start, 0));
        if (cudnnBackendExecute(h, plan, vp) != CUDNN_STATUS_SUCCESS)
            best = 1e30f;
        CUDA_CHECK(cudaEventRecord(stop, 0));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (ms < best)
            best = ms;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best;
}

static void run_layer(cudnnHandle_t h, const layer *L, int autotune, int half)
{
    graph g;
    build_graph(h, L, half, &g);
    size_t elem = half ? 2 : 4;
    size_t x_bytes = (size_t)(L->n * L->c * L->h * L->w) * elem;
    size_t w_bytes = (size_t)(L->k * L->c * L->r * L->r) * elem;
    size_t y_bytes = (size_t)(g.y_dims[0] * g.y_dims[1] * g.y_dims[2] * g.y_dims[3]) * elem;
    void *x, *w, *y;
    CUDA_CHECK(cudaMalloc(&x, x_bytes));
    CUDA_CHECK(cudaMalloc(&w, w_bytes));
    CUDA_CHECK(cudaMalloc(&y, y_bytes));
    CUDA_CHECK(cudaMemset(x, 0, x_bytes));
    CUDA_CHECK(cudaMemset(w, 0, w_bytes));

    double t_choose = wall_ms();
    cudnnBackendDescriptor_t plans[MAX_CANDIDATES];
    int n = build_plans(h, &g, plans, autotune ? MAX_CANDIDATES : 1);
    if (n == 0) {
        fprintf(stderr, "no execution plan could be built\n");
        exit(1);
    }
    int64_t max_ws = 0;
    for (int i = 0; i < n; i++)
        if (workspace_of(plans[i]) > max_ws)
            max_ws = workspace_of(plans[i]);
    void *ws = NULL;
    if (max_ws)
        CUDA_CHECK(cudaMalloc(&ws, (size_t)max_ws));
    cudnnBackendDescriptor_t vp = variant_pack(x, w, y, ws);
    int best = 0;
    if (autotune) {
        float best_ms = 1e30f;
        for (int i = 0; i < n; i++) {
            float ms = time_plan(h, plans[i], vp);
            if (ms < best_ms) {
                best_ms = ms;
                best = i;
            }
        }
    }
    t_choose = wall_ms() - t_choose;

    CUDA_CHECK(cudaDeviceSynchronize());
    double t0 = wall_ms();
    for (int i = 0; i < ITERATIONS; i++)
        CUDNN_CHECK(cudnnBackendExecute(h, plans[best], vp));
    CUDA_CHECK(cudaDeviceSynchronize());
    double ms = (wall_ms() - t0) / ITERATIONS;
    printf("layer %ldx%ldx%ldx%ld k%ld r%ld s%ld: %s picked plan %d of %d in %.1f ms; %.3f ms/conv\n",
           (long)L->n, (long)L->c, (long)L->h, (long)L->w, (long)L->k, (long)L->r,
           (long)L->stride, autotune ? "autotune" : "heuristic", best, n, t_choose, ms);

    cudnnBackendDestroyDescriptor(vp);
    for (int i = 0; i < n; i++)
        cudnnBackendDestroyDescriptor(plans[i]);
    destroy_graph(&g);
    cudaFree(ws);
    cudaFree(x);
    cudaFree(w);
    cudaFree(y);
}

int main(int argc, char **argv)
{
    const char *mode = arg_or(argc, argv, 1, "heuristic");
    int autotune = !strcmp(mode, "autotune");
    int half = has_flag(argc, argv, "half");
    if (!autotune && strcmp(mode, "heuristic")) {
        fprintf(stderr, "usage: conv_backend [heuristic|autotune] [half]\n");
        return 2;
    }
    cudnnHandle_t h;
    CUDNN_CHECK(cudnnCreate(&h));
    printf("cuDNN %zu (built with %d), cudart %zu\n", cudnnGetVersion(), CUDNN_VERSION,
           cudnnGetCudartVersion());
    for (size_t i = 0; i < sizeof LAYERS / sizeof LAYERS[0]; i++)
        run_layer(h, &LAYERS[i], autotune, half);
    CUDNN_CHECK(cudnnDestroy(h));
    return 0;
}
