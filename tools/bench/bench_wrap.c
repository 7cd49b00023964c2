/* bench_wrap.c MODE N — N calls of one CUDA entry point on the fake runtime (tests/fakes), timed.
 * Run once plainly and once under LD_PRELOAD=libgputrace.so: the difference per call is what the
 * wrapper adds (run_wrap.sh does both, and the same with callgrind for instructions).
 * MODE: memcpy (cudaMemcpyAsync from pinned memory: the pinned-range lookup), launch
 * (cudaLaunchKernel), execute (cudnnBackendExecute of one plan, decoded at the first call). */
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void **__cudaRegisterFatBinary(void *fat);
void __cudaRegisterFunction(void **h, const char *host_fun, char *device_fun, const char *device_name,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bdim, dim3 *gdim,
                            int *wsize);

static void kernel_stub(void) {}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef cudnnBackendDescriptor_t bd;

static bd make_plan(void) {
    bd op, g, eng, cfg, plan;
    int64_t idx = 38;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g);
    cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    cudnnBackendFinalize(g);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &idx);
    cudnnBackendFinalize(eng);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
    cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &eng);
    cudnnBackendFinalize(cfg);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    cudnnBackendFinalize(plan);
    return plan;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_wrap memcpy|launch|execute N\n");
        return 2;
    }
    long n = atol(argv[2]);
    const char *mode = argv[1];
    void *d, *pinned, *args[1] = {&d};
    cudaMalloc(&d, 4096);
    cudaMallocHost(&pinned, 4096);
    for (int i = 0; i < 16; i++) { /* a realistic pinned table: several ranges */
        void *p;
        cudaMallocHost(&p, 4096);
    }
    void **fat = __cudaRegisterFatBinary(NULL);
    __cudaRegisterFunction(fat, (const char *)kernel_stub, (char *)"_Z4stubv", "_Z4stubv", -1, NULL,
                           NULL, NULL, NULL, NULL);
    cudnnHandle_t h;
    cudnnCreate(&h);
    bd plan = make_plan(), vp;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    dim3 g = {1, 1, 1}, b = {32, 1, 1};
    cudnnBackendExecute(h, plan, vp); /* the one-time decode is not what is measured */
    double t0 = now_s();
    if (strcmp(mode, "memcpy") == 0)
        for (long i = 0; i < n; i++) cudaMemcpyAsync(d, pinned, 0, cudaMemcpyHostToDevice, 0);
    else if (strcmp(mode, "launch") == 0)
        for (long i = 0; i < n; i++) cudaLaunchKernel((const void *)kernel_stub, g, b, args, 0, 0);
    else if (strcmp(mode, "execute") == 0)
        for (long i = 0; i < n; i++) cudnnBackendExecute(h, plan, vp);
    else
        return 2;
    printf("%s %.1f ns/call\n", mode, (now_s() - t0) * 1e9 / (double)n);
    return 0;
}
