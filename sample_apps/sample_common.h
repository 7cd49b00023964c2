/* sample_common.h — what every sample app shares: error checks, a wall clock, a kernel that
 * does a chosen amount of work, and argument parsing. Each sample is one pathology (or its fix)
 * small enough to run in a few hundred milliseconds on an H200. */
#ifndef SAMPLE_COMMON_H
#define SAMPLE_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                   \
                    cudaGetErrorString(err_));                                                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* y = a*x + y repeated `rounds` times per element: the work per launch scales with n*rounds. */
__global__ void saxpy_rounds(float *y, const float *x, float a, size_t n, int rounds)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float v = y[i];
    float xi = x[i];
    for (int r = 0; r < rounds; r++)
        v = a * xi + v * 0.999f;
    y[i] = v;
}

static inline void launch_saxpy(float *y, const float *x, size_t n, int rounds, cudaStream_t s)
{
    unsigned blocks = (unsigned)((n + 255) / 256);
    saxpy_rounds<<<blocks, 256, 0, s>>>(y, x, 1.0001f, n, rounds);
}

static inline int has_flag(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], flag))
            return 1;
    return 0;
}

static inline const char *arg_or(int argc, char **argv, int index, const char *fallback)
{
    return argc > index && argv[index][0] != '-' ? argv[index] : fallback;
}

#endif
