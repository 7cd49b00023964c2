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

/* The corpus programs' clock (sample_apps/corpus/corpus_common.py prints the same line for the
 * Python ones): wall_ms() at the end of each step, and the CORPUS line each prints last — the
 * median of the steady steps' intervals and the steady wall time per step up to a final sync. */
struct step_clock {
    double start_ms; /* the program's start */
    double prev_ms;  /* the end of the previous step, or the loop's start */
    double *dur_ms, *end_ms;
    int n, cap;
};

static inline void step_clock_init(struct step_clock *c, int cap, double start_ms)
{
    c->start_ms = start_ms;
    c->prev_ms = wall_ms();
    c->dur_ms = (double *)calloc((size_t)(cap > 0 ? cap : 1), sizeof(double));
    c->end_ms = (double *)calloc((size_t)(cap > 0 ? cap : 1), sizeof(double));
    if (!c->dur_ms || !c->end_ms) {
        fprintf(stderr, "out of memory for %d steps\n", cap);
        exit(1);
    }
    c->n = 0;
    c->cap = cap;
}

static inline void step_clock_tick(struct step_clock *c)
{
    double t = wall_ms();
    if (c->n < c->cap) {
        c->dur_ms[c->n] = t - c->prev_ms;
        c->end_ms[c->n] = t;
        c->n++;
    }
    c->prev_ms = t;
}

static inline int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (the mean of the middle two when n is even, as Python's statistics). */
static inline double median_of(const double *v, int n)
{
    if (n <= 0)
        return 0.0 / 0.0;
    double *s = (double *)malloc((size_t)n * sizeof(double));
    if (!s)
        return 0.0 / 0.0;
    memcpy(s, v, (size_t)n * sizeof(double));
    qsort(s, (size_t)n, sizeof(double), compare_doubles);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

/* CORPUS name=... steps=N warmup_steps=W step_ms_median=M step_ms_wall=T sync=S startup_s=X EXTRA
 * (end_ms: after the final device sync). */
static inline void step_clock_report(const struct step_clock *c, const char *name, int warmup,
                                     double end_ms, const char *sync, const char *extra)
{
    if (warmup > c->n)
        warmup = c->n;
    if (warmup < 0)
        warmup = 0;
    int steady = c->n - warmup;
    double nan = 0.0 / 0.0;
    double wall = steady > 0 && warmup > 0 ? (end_ms - c->end_ms[warmup - 1]) / steady : nan;
    double startup = warmup > 0 ? (c->end_ms[warmup - 1] - c->start_ms) / 1e3 : nan;
    printf("CORPUS name=%s steps=%d warmup_steps=%d step_ms_median=%.3f step_ms_wall=%.3f "
           "sync=%s startup_s=%.2f%s\n",
           name, c->n, warmup, median_of(c->dur_ms + warmup, steady), wall, sync, startup, extra);
    fflush(stdout);
}

#endif
