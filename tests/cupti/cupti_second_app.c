/* cupti_second_app — a program that starts a profiler of its own after CUDA is up, as
 * torch.profiler does inside a traced PyTorch program: it subscribes to CUPTI's callbacks through
 * libcupti's dynamic symbol. Prints "subscribe <CUptiResult>" and exits 0 either way (a refused
 * profiler does not stop the program). */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <stdio.h>

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain d, CUpti_CallbackId id,
                                 const void *data)
{
    (void)ud, (void)d, (void)id, (void)data;
}

int main(void)
{
    void *p = NULL;
    cudaMalloc(&p, 256);
    cudaFree(p);
    CUpti_SubscriberHandle h;
    CUptiResult r = cuptiSubscribe(&h, on_callback, NULL);
    printf("subscribe %d\n", (int)r);
    if (r == CUPTI_SUCCESS)
        cuptiUnsubscribe(h);
    return 0;
}
