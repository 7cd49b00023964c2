/* bench_stacks — cost of one call-site capture (issue 8), goal <= 2 us at depth 24.
 *
 *   LD_PRELOAD=build/lib/libgputrace.so GPUTRACE_DIR=/tmp bench_stacks [iterations]
 *
 * Calls gt_stack_capture (exported by libgputrace.so) from the bottom of a 40-frame recursion, so
 * the unwinder fills all GPUTRACE_STACK_DEPTH frames (default 24). Every capture after the first
 * is the steady state of a real program: the same call site again (unwind, hash, one probe, no
 * record). Prints ns per capture; GPUTRACE_STACK_UNWINDER=backtrace measures the fallback
 * unwinder, GPUTRACE_STACKS=off the cost of a capture that is turned off. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef uint32_t (*capture_fn)(int reason);
static capture_fn capture;
static volatile uint32_t sink;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t loop(long iterations)
{
    uint64_t t0 = now_ns();
    for (long i = 0; i < iterations; i++)
        sink += capture(1);
    return now_ns() - t0;
}

__attribute__((noinline)) static uint64_t at_depth(int n, long iterations)
{
    uint64_t r = n == 0 ? loop(iterations) : at_depth(n - 1, iterations);
    sink++;
    return r;
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 200000;
    *(void **)&capture = dlsym(RTLD_DEFAULT, "gt_stack_capture");
    if (!capture || iterations <= 0) {
        fprintf(stderr, "usage: LD_PRELOAD=libgputrace.so bench_stacks [iterations]\n");
        return 2;
    }
    at_depth(40, 1000); /* warm up: first capture, module map, unwinder caches */
    uint64_t best = UINT64_MAX;
    for (int run = 0; run < 5; run++) {
        uint64_t t = at_depth(40, iterations);
        if (t < best)
            best = t;
    }
    const char *unwinder = getenv("GPUTRACE_STACK_UNWINDER");
    const char *depth = getenv("GPUTRACE_STACK_DEPTH");
    printf("bench_stacks: native capture, depth %s, unwinder %s: %.0f ns per capture "
           "(best of 5 x %ld, stack id %u)\n",
           depth ? depth : "24", unwinder ? unwinder : "auto", (double)best / (double)iterations,
           iterations, capture(1));
    return 0;
}
