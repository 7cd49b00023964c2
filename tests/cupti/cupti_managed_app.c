/* cupti_managed_app — unified memory on the fake GPU (fake_gpu.h says what it simulates), for the
 * cupti tests "managed" and for the analyzer's synthetic traces.
 *   faults     two 1 MiB managed buffers, used by 4 rounds of a kernel; in between the CPU touches
 *              one of them, so each round after the first faults it back: GPU faults, host-to-
 *              device migrations on demand, CPU faults and device-to-host migrations
 *   prefetch   the same with cudaMemPrefetchAsync of both buffers to the GPU before each round and
 *              a cudaMemAdvise: migrations the program asked for, no GPU fault
 *   none       device memory only: no managed allocation, so no unified-memory counter */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void fake_gpu_um_host_touch(const void *p); /* the fake cudart's CPU access */

static void kernel_stub(void) {}

static void launch(void *a, void *b)
{
    void *args[] = {&a, &b};
    cudaLaunchKernel((const void *)kernel_stub, (dim3){8, 1, 1}, (dim3){128, 1, 1}, args, 0, 0);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "faults";
    size_t n = 1u << 20;
    void *a = NULL, *b = NULL;
    int managed = strcmp(mode, "none") != 0;
    cudaError_t r = managed ? cudaMallocManaged(&a, n, cudaMemAttachGlobal) : cudaMalloc(&a, n);
    if (r == cudaSuccess)
        r = managed ? cudaMallocManaged(&b, n, cudaMemAttachGlobal) : cudaMalloc(&b, n);
    if (r != cudaSuccess) {
        printf("allocation failed\n");
        return 1;
    }
    struct cudaMemLocation gpu = {.type = cudaMemLocationTypeDevice, .id = 0};
    if (!strcmp(mode, "prefetch"))
        cudaMemAdvise(a, n, cudaMemAdviseSetPreferredLocation, gpu);
    for (int round = 0; round < 4; round++) {
        if (!strcmp(mode, "prefetch")) {
            cudaMemPrefetchAsync(a, n, gpu, 0, 0);
            cudaMemPrefetchAsync(b, n, gpu, 0, 0);
        }
        launch(a, b);
        launch(a, b);
        cudaDeviceSynchronize();
        if (managed)
            fake_gpu_um_host_touch(a); /* the CPU reads the result */
        sleep_ms(20);
    }
    cudaFree(a);
    cudaFree(b);
    printf("%s done\n", mode);
    return 0;
}
