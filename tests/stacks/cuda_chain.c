/* cuda_chain — a known call chain into the (fake) CUDA runtime, traced with LD_PRELOAD:
 * main -> step -> do_sync -> cudaStreamSynchronize, and main -> step -> do_copy -> cudaMemcpy
 * (pageable, synchronous). The test checks that the sync and copy records carry stacks that
 * symbolize to do_sync/do_copy, step, main in that order. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) static int do_sync(void)
{
    int rc = (int)cudaStreamSynchronize(0); /* @do_sync */
    sink++;
    return rc;
}

__attribute__((noinline)) static int do_copy(void *dev, void *host, size_t n)
{
    int rc = (int)cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice); /* @do_copy */
    sink++;
    return rc;
}

__attribute__((noinline)) static int step(void *dev, void *host, size_t n)
{
    int rc = do_copy(dev, host, n);
    rc |= do_sync(); /* @step */
    sink++;
    return rc;
}

int main(void)
{
    size_t n = 1 << 16;
    void *dev = NULL;
    void *host = malloc(n);
    if (!host || cudaMalloc(&dev, n) != cudaSuccess) {
        fprintf(stderr, "cuda_chain: cudaMalloc failed\n");
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < 3; i++)
        rc |= step(dev, host, n); /* @main */
    cudaFree(dev);
    free(host);
    return rc ? 1 : 0;
}
