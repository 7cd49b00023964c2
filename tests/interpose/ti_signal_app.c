/* ti_signal_app — a program on the fake libcudart for the capture hardening tests
 * (capture_hardening.c), which run it under LD_PRELOAD=libgputrace.so and end it in the ways a
 * real program ends: a fatal signal while many threads are inside wrapped calls, a crash, a file
 * size limit, threads still calling while the process exits.
 *
 * Every wrapped call is cudaStreamQuery (one GT_REC_API_SYNC record each). Calls completed are
 * counted per thread in COUNTS (a file the test reads after the process is gone), so the test can
 * compare them with what the trace holds plus what it counts as lost.
 *
 *   ti_signal_app threads N COUNTS     N threads call in a loop; "ready" once each made 1000 calls,
 *                                      then main waits for a signal
 *   ti_signal_app crash SIG            100 calls, then SEGV (a bad store), BUS, ABRT (abort()),
 *                                      FPE (an integer division by zero)
 *   ti_signal_app fsize BYTES CALLS    RLIMIT_FSIZE=BYTES, SIGXFSZ ignored, CALLS calls; prints
 *                                      "calls N"
 *   ti_signal_app exit_busy COUNTS     a thread calls in a loop while main returns from main
 *   ti_signal_app short_thread         a thread named "short-lived" makes one call and ends;
 *                                      prints "tid N"
 *   ti_signal_app one                  one call; prints "nvtx <NVTX_INJECTION64_PATH or ->"
 *   ti_signal_app handler N M          a SIGUSR1 handler calls cudaMemsetAsync: first N signals
 *                                      raised inside the real cudaStreamQuery (the fake's
 *                                      FAKE_RAISE_IN_QUERY), then M sent by a thread while main
 *                                      calls in a loop (100,000 calls at most); prints
 *                                      "handler CALLS"
 */
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define MAX_THREADS 256

static _Atomic uint64_t *g_counts; /* per thread, in a shared file mapping */
static _Atomic int g_ready;
static int g_nthreads;

static _Atomic uint64_t *map_counts(const char *path, int n)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    size_t len = (size_t)n * sizeof(uint64_t);
    if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
        perror(path);
        exit(2);
    }
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return p;
}

static void *caller(void *arg)
{
    int i = (int)(intptr_t)arg;
    for (uint64_t n = 1;; n++) {
        cudaStreamQuery(0);
        atomic_store_explicit(&g_counts[i], n, memory_order_relaxed);
        if (n == 1000)
            atomic_fetch_add(&g_ready, 1);
    }
    return NULL;
}

static void start_callers(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, caller, (void *)(intptr_t)i)) {
            perror("pthread_create");
            exit(2);
        }
    }
}

static int run_threads(int n, const char *counts)
{
    g_nthreads = n;
    g_counts = map_counts(counts, n);
    start_callers(n);
    while (atomic_load(&g_ready) < n)
        usleep(1000);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
    return 0;
}

static volatile int g_zero, g_one = 1;

static int run_crash(const char *sig)
{
    for (int i = 0; i < 100; i++)
        cudaStreamQuery(0);
    if (!strcmp(sig, "SEGV"))
        *(volatile int *)(uintptr_t)g_zero = 1;
    else if (!strcmp(sig, "ABRT"))
        abort();
    else if (!strcmp(sig, "FPE"))
        printf("%d\n", g_one / g_zero); /* both volatile: a real division */
    else if (!strcmp(sig, "BUS"))
        raise(SIGBUS);
    return 3; /* not reached */
}

static int run_fsize(long bytes, long calls)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {(rlim_t)bytes, (rlim_t)bytes};
    setrlimit(RLIMIT_FSIZE, &rl);
    for (long i = 0; i < calls; i++)
        cudaStreamQuery(0);
    printf("calls %ld\n", calls);
    return 0;
}

static _Atomic int g_short_tid;

static void *short_lived(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "short-lived");
    atomic_store(&g_short_tid, (int)gettid());
    cudaStreamQuery(0);
    return NULL;
}

static int run_short_thread(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, short_lived, NULL) || pthread_join(t, NULL))
        return 2;
    printf("tid %d\n", atomic_load(&g_short_tid));
    return 0;
}

static int run_exit_busy(const char *counts)
{
    g_counts = map_counts(counts, 1);
    start_callers(1);
    while (atomic_load(&g_ready) < 1)
        usleep(1000);
    return 0; /* exit runs while the thread still calls */
}

static volatile sig_atomic_t g_handler_calls;
#define MAIN_CALLS 100000

static void on_usr1(int sig)
{
    (void)sig;
    cudaMemsetAsync(NULL, 0, 0, 0); /* a wrapped call from a signal handler */
    g_handler_calls++;
}

static _Atomic int g_sender_done;

static void *send_usr1(void *arg)
{
    pthread_t main_thread = *(pthread_t *)arg;
    long m = atol(getenv("TI_SIGNALS"));
    for (long i = 0; i < m; i++) {
        pthread_kill(main_thread, SIGUSR1);
        usleep(20);
    }
    atomic_store(&g_sender_done, 1);
    return NULL;
}

static int run_handler(long n, const char *m)
{
    struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    char sig[16];
    snprintf(sig, sizeof sig, "%d", SIGUSR1);
    setenv("FAKE_RAISE_IN_QUERY", sig, 1);
    for (long i = 0; i < n; i++)
        cudaStreamQuery(0);
    unsetenv("FAKE_RAISE_IN_QUERY");
    setenv("TI_SIGNALS", m, 1);
    pthread_t self = pthread_self(), t;
    if (pthread_create(&t, NULL, send_usr1, &self))
        return 2;
    /* Calls while the signals come, at most MAIN_CALLS of them: with the handler's calls they fit
     * the test's ring (GPUTRACE_BUFFER_KB) even if the writer never ran, so none is lost to a full
     * buffer however busy the machine (a pace set by a spin loop held only on an idle one). */
    for (long i = 0; i < MAIN_CALLS && !atomic_load(&g_sender_done); i++) {
        cudaStreamQuery(0);
        for (volatile int spin = 0; spin < 3000; spin++)
            ;
    }
    pthread_join(t, NULL);
    for (int i = 0; i < 1000; i++) /* signals still pending are delivered now */
        cudaStreamQuery(0);
    printf("handler %ld\n", (long)g_handler_calls);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "threads") && argc == 4 && atoi(argv[2]) > 0 && atoi(argv[2]) <= MAX_THREADS)
        return run_threads(atoi(argv[2]), argv[3]);
    if (!strcmp(mode, "crash") && argc == 3)
        return run_crash(argv[2]);
    if (!strcmp(mode, "fsize") && argc == 4)
        return run_fsize(atol(argv[2]), atol(argv[3]));
    if (!strcmp(mode, "exit_busy") && argc == 3)
        return run_exit_busy(argv[2]);
    if (!strcmp(mode, "handler") && argc == 4)
        return run_handler(atol(argv[2]), argv[3]);
    if (!strcmp(mode, "short_thread"))
        return run_short_thread();
    if (!strcmp(mode, "one")) {
        const char *nvtx = getenv("NVTX_INJECTION64_PATH");
        printf("nvtx %s\n", nvtx ? nvtx : "-");
        return cudaStreamQuery(0) == cudaSuccess ? 0 : 1;
    }
    fprintf(stderr, "usage: see the comment at the top of ti_signal_app.c\n");
    return 2;
}
