/* tiny_launches.cu — a loop of tiny kernels launched through the CUDA runtime (<<<>>>):
 * launch-bound at any step length and whatever the launch path (issue 30).
 * sample_apps/corpus/tiny_launches.py is the same loop through Triton's launcher and CuPy's
 * RawKernel (the driver API). tiny_launches [LAUNCHES] [PER_STEP]     default 3000 launches, 1 per
 * step Each launch adds 1 to 1,024 floats (about a microsecond of GPU time). PER_STEP 1: no sync in
 * the loop (one after the warmup steps, one at the end), each launch a step; PER_STEP K > 1: K
 * launches, then one value copied back (cudaMemcpy: the step's sync). Built twice like every
 * sample: tiny_launches (shared cudart: the runtime wrappers see each launch) and
 * tiny_launches_static (static cudart: only CUPTI sees them).
 * What a correct diagnosis says: the GPU idles between short kernels while the CPU prepares the
 * next launch (launch-bound), at a step of 1 launch and of 100, with the remedy for CUDA C (more
 * work per launch, a CUDA graph of the loop). Prints CORPUS name=tiny_launches ... last. */
#include "sample_common.h"

#define ELEMENTS 1024

__global__ void add_one(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += 1.0f;
}

int main(int argc, char **argv)
{
    double start_ms = wall_ms();
    int launches = atoi(arg_or(argc, argv, 1, "3000"));
    int per_step = atoi(arg_or(argc, argv, 2, "1"));
    if (launches < 1 || per_step < 1 || per_step > launches) {
        fprintf(stderr, "usage: %s [LAUNCHES >= 1] [PER_STEP in 1..LAUNCHES]\n", argv[0]);
        return 2;
    }
    int steps = launches / per_step;
    int warmup = per_step >= 10 ? 2 : 10 / per_step; /* 10 launches' worth, at least 2 steps */
    if (warmup >= steps)
        warmup = steps / 2;
    float *y;
    CUDA_CHECK(cudaMalloc(&y, ELEMENTS * sizeof(float)));
    CUDA_CHECK(cudaMemset(y, 0, ELEMENTS * sizeof(float)));
    CUDA_CHECK(cudaDeviceSynchronize());

    struct step_clock clock;
    step_clock_init(&clock, steps, start_ms);
    float value = 0.0f;
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < per_step; k++)
            add_one<<<(ELEMENTS + 255) / 256, 256>>>(y, ELEMENTS);
        if (per_step > 1)
            CUDA_CHECK(cudaMemcpy(&value, y, sizeof value, cudaMemcpyDeviceToHost));
        if (s + 1 == warmup)
            CUDA_CHECK(cudaDeviceSynchronize()); /* the timed steps start on an empty queue */
        step_clock_tick(&clock);
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    double end_ms = wall_ms();
    double steady_launches = (double)(steps - warmup) * per_step;
    double us_per_launch = warmup > 0 && steady_launches > 0
                               ? (end_ms - clock.end_ms[warmup - 1]) * 1e3 / steady_launches
                               : 0.0;
    char extra[200];
    snprintf(extra, sizeof extra,
             " path=runtime per_step=%d launches=%d us_per_launch=%.2f check=%g", per_step,
             steps * per_step, us_per_launch, (double)value);
    step_clock_report(&clock, "tiny_launches", warmup, end_ms, per_step > 1 ? "step" : "end",
                      extra);
    CUDA_CHECK(cudaFree(y));
    return 0;
}
