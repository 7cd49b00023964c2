/* cupti_runtime_app — a program linked against the (fake) shared cudart: every copy and launch
 * goes through a cuda* call that gputrace's wrappers see, and each wrapper pushes its call id to
 * CUPTI as an external correlation id. Runs ~300 ms so that periodic flushes happen while it runs
 * (the runtime API records must stay off: the wrappers fire). */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void kernel_stub(void) {}

int main(void)
{
    float host[256];
    memset(host, 0, sizeof host);
    void *dev = NULL;
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return 1;
    }
    for (int i = 0; i < 6; i++) {
        cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
        void *args[] = {&dev};
        cudaLaunchKernel((const void *)kernel_stub, (dim3){4, 1, 1}, (dim3){64, 1, 1}, args, 0, 0);
        cudaDeviceSynchronize();
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    cudaFree(dev);
    printf("runtime done\n");
    return 0;
}
