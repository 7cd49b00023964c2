/* wf_app.c — the traced program of the workflow tests. Linked against the fake libcudart.so.13
 * and using NVTX v3 (header-only), it does what a real training script does in small:
 *   wf_app exit N          a few CUDA calls, then exit with status N
 *   wf_app kill SIG        a few CUDA calls, then die by signal SIG (its default action)
 *   wf_app env FILE        write LD_PRELOAD, GPUTRACE_DIR, NVTX_INJECTION64_PATH to FILE
 *   wf_app fork            CUDA calls in the parent; a forked child (no exec) emits NVTX and
 *                          leaves with _exit, like a DataLoader worker
 *   wf_app spawn           CUDA calls, then runs "wf_app exit 0" as a new program (fork+exec,
 *                          like multiprocessing's spawn or torchrun starting ranks)
 *   wf_app wait-sigint F   CUDA calls, create file F ("ready"), then loop until SIGINT; exit 130
 *   wf_app nvtx            nested ranges, marks, start/end ranges, domains, registered strings
 *   wf_app many-names N    N pushes/pops with distinct names
 */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* A pageable round trip and a sync: enough for records of several kinds. */
static int cuda_work(void)
{
    static char host[4096];
    void *dev = NULL;
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess)
        return 1;
    cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost);
    cudaDeviceSynchronize();
    cudaFree(dev);
    return 0;
}

static int do_env(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return 1;
    const char *names[] = {"LD_PRELOAD", "GPUTRACE_DIR", "NVTX_INJECTION64_PATH"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        fprintf(f, "%s=%s\n", names[i], v ? v : "(unset)");
    }
    return fclose(f) != 0;
}

static int do_fork(void)
{
    cuda_work();
    pid_t pid = fork();
    if (pid == 0) {
        nvtxRangePushA("worker-batch");
        nvtxMarkA("worker-mark");
        nvtxRangePop();
        _exit(0); /* gputrace's _exit writes the records first: no need to wait for the writer */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cuda_work();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int do_spawn(const char *self)
{
    cuda_work();
    pid_t pid = fork();
    if (pid == 0) {
        execl(self, self, "exit", "0", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int do_wait_sigint(const char *ready)
{
    signal(SIGINT, on_sigint);
    cuda_work();
    nvtxRangePushA("waiting"); /* one range before "ready": the test may interrupt at once */
    nvtxRangePop();
    FILE *f = fopen(ready, "w");
    if (f)
        fclose(f);
    for (int i = 0; i < 3000 && !interrupted; i++) { /* 30 s at most */
        nvtxRangePushA("waiting");
        sleep_ms(10);
        nvtxRangePop();
    }
    return interrupted ? 130 : 1;
}

static int do_nvtx(void)
{
    nvtxNameOsThreadA((uint32_t)syscall(SYS_gettid), "main-thread");
    nvtxRangePushA("outer");
    nvtxRangePushA("inner");
    nvtxMarkA("tick");
    nvtxRangePop();
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "colored";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePop();
    nvtxRangeId_t r = nvtxRangeStartA("async-range");
    nvtxRangeEnd(r);

    nvtxDomainHandle_t d = nvtxDomainCreateA("my-domain");
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "registered-name");
    nvtxEventAttributes_t b = {0};
    b.version = NVTX_VERSION;
    b.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    b.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    b.message.registered = s;
    nvtxDomainRangePushEx(d, &b);
    nvtxDomainRangePop(d);
    cuda_work();
    return 0;
}

static int do_many_names(int n)
{
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "name-%d", i);
        nvtxRangePushA(name);
        nvtxRangePop();
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(mode, "exit")) {
        cuda_work();
        return atoi(arg);
    }
    if (!strcmp(mode, "kill")) {
        cuda_work();
        raise(atoi(arg)); /* its default action: gputrace's handler ends the trace, then it dies */
        return 99;
    }
    if (!strcmp(mode, "env"))
        return do_env(arg);
    if (!strcmp(mode, "fork"))
        return do_fork();
    if (!strcmp(mode, "spawn"))
        return do_spawn(argv[0]);
    if (!strcmp(mode, "wait-sigint"))
        return do_wait_sigint(arg);
    if (!strcmp(mode, "nvtx"))
        return do_nvtx();
    if (!strcmp(mode, "many-names"))
        return do_many_names(atoi(arg));
    fprintf(stderr, "wf_app: unknown mode '%s'\n", mode);
    return 64;
}
