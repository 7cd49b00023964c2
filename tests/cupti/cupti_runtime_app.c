/* cupti_runtime_app — a program linked against the (fake) shared cudart: every copy and launch
 * goes through a cuda* call that gputrace's wrappers see, and each wrapper pushes its call id to
 * CUPTI as an external correlation id. Runs ~300 ms so that periodic flushes happen while it runs
 * (the runtime API records must stay off: the wrappers fire).
 * `cupti_runtime_app capture`: 2 rounds, cudaProfilerStart, 3 rounds, cudaProfilerStop, 4 rounds
 * (a capture range: GPUTRACE_CAPTURE=profiler-api records only the middle 3).
 * `cupti_runtime_app capture-signal`: the same rounds, with raise(SIGUSR2) instead of the range
 * calls; `cupti_runtime_app capture-file PATH`: creating PATH, then removing it. After each
 * switch the program waits, without CUDA calls, until its trace shows that gputrace's writer
 * thread applied it (own_trace.c).
 * Without arguments: 6 rounds 50 ms apart (TEST_AFTER_FIRST_KERNEL=1: the first kernel in the
 * trace before the second round).
 * `cupti_runtime_app loop N MS [abort]`: N rounds, MS ms apart (a longer run for the flight
 * recorder), then abort() when asked (a crash).
 * `cupti_runtime_app launch-loop STEPS K`: STEPS steps of K launches and a device sync each, as
 * fast as the fakes go (a long run: the converter must draw every link the report makes). */
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gtrace_format.h"
#include "own_trace.h"

static void kernel_stub(void) {}

static void round_trip(void *dev, float *host, size_t bytes, long sleep_ms)
{
    cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    void *args[] = {&dev};
    cudaLaunchKernel((const void *)kernel_stub, (dim3){4, 1, 1}, (dim3){64, 1, 1}, args, 0, 0);
    cudaDeviceSynchronize();
    struct timespec ts = {0, sleep_ms * 1000000L};
    nanosleep(&ts, NULL);
}

static void launch_loop(void *dev, int steps, int per_step)
{
    void *args[] = {&dev};
    for (int i = 0; i < steps; i++) {
        for (int k = 0; k < per_step; k++)
            cudaLaunchKernel((const void *)kernel_stub, (dim3){4, 1, 1}, (dim3){64, 1, 1}, args, 0,
                             0);
        cudaDeviceSynchronize();
    }
}

/* The writer thread makes the switch a signal or the file asks for, at its next round: wait until
 * the trace shows it (its CAPTURE record; with the flight recorder, the FLIGHT record of the
 * trigger), so that the rounds fall where the test expects however late a busy machine runs the
 * writer. Without windows (a value gputrace refused) there is nothing to wait for. */
static void wait_for_switch(int on)
{
    static int switches;
    uint32_t flags = 0;
    own_trace_count(GT_REC_CAPTURE, &flags);
    uint16_t kind = GT_REC_CAPTURE;
    int want = ++switches;
    if (flags & GT_HDR_FLIGHT_RECORDER) {
        if (!on)
            return; /* only the file's appearing triggers */
        kind = GT_REC_FLIGHT;
        want = 1;
    } else if (!(flags & GT_HDR_CAPTURE_WINDOWS)) {
        return;
    }
    if (!own_trace_wait(kind, want, 60)) {
        printf("the switch never reached the trace\n");
        exit(4);
    }
}

/* How the middle rounds are bracketed: the range calls, a signal, or a file. */
static void capture_switch(const char *how, const char *path, int on)
{
    if (!strcmp(how, "capture")) {
        if (on)
            cudaProfilerStart();
        else
            cudaProfilerStop();
        return;
    }
    if (!strcmp(how, "capture-signal"))
        raise(SIGUSR2);
    else if (on)
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    else
        unlink(path);
    wait_for_switch(on);
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    const char *path = argc > 2 ? argv[2] : "";
    int capture = !strcmp(how, "capture") || !strcmp(how, "capture-signal") ||
                  (!strcmp(how, "capture-file") && path[0]);
    float host[256];
    memset(host, 0, sizeof host);
    void *dev = NULL;
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return 1;
    }
    if (!strcmp(how, "launch-loop") && argc > 3) {
        launch_loop(dev, atoi(argv[2]), atoi(argv[3]));
    } else if (!strcmp(how, "loop") && argc > 3) {
        for (int i = 0; i < atoi(argv[2]); i++)
            round_trip(dev, host, sizeof host, atol(argv[3]));
        if (argc > 4 && !strcmp(argv[4], "abort")) {
            printf("aborting\n");
            fflush(stdout);
            abort();
        }
    } else if (capture) {
        for (int i = 0; i < 2; i++)
            round_trip(dev, host, sizeof host, 20);
        capture_switch(how, path, 1);
        for (int i = 0; i < 3; i++)
            round_trip(dev, host, sizeof host, 20);
        capture_switch(how, path, 0);
        for (int i = 0; i < 4; i++)
            round_trip(dev, host, sizeof host, 20);
    } else {
        /* TEST_AFTER_FIRST_KERNEL=1: after the first round, wait until its kernel is in the trace.
         * The writer's periodic flush that converted it also made the decisions the first records
         * call for (the hardware trace asked for again, launches linked by callbacks), so the
         * rounds after it are the ones the test counts, however late a busy machine ran it. */
        bool wait_first = getenv("TEST_AFTER_FIRST_KERNEL") != NULL;
        for (int i = 0; i < 6; i++) {
            round_trip(dev, host, sizeof host, 50);
            if (i == 0 && wait_first && !own_trace_wait(GT_REC_GPU_KERNEL, 1, 60)) {
                printf("the first kernel never reached the trace\n");
                return 4;
            }
        }
    }
    cudaFree(dev);
    printf("runtime done\n");
    return 0;
}
