/* ti_local_lib.c — stands for libtorch_cuda.so: a library that links the fake cuDNN and is loaded
 * by Python with RTLD_LOCAL (ti_local.py), so libcudnn.so.9 is not in the global scope and
 * dlsym(RTLD_NEXT, "cudnnBackendExecute") finds nothing. */
#include <cudnn.h>

typedef cudnnBackendDescriptor_t bd;

int run_plans(int executes);
int run_plans(int executes)
{
    cudnnHandle_t h;
    bd op, g, eng, cfg, plan, vp;
    int64_t index = 67;
    if (cudnnCreate(&h))
        return 1;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g);
    cudnnBackendSetAttribute(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &op);
    cudnnBackendFinalize(g);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                             1, &g);
    cudnnBackendSetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
    cudnnBackendFinalize(eng);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg);
    cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                             &eng);
    cudnnBackendFinalize(cfg);
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
    cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    if (cudnnBackendFinalize(plan))
        return 2;
    cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &vp);
    for (int i = 0; i < executes; i++)
        if (cudnnBackendExecute(h, plan, vp))
            return 3;
    return 0;
}
