/* ti_late_cupti_app.c — GPU work launched while CUPTI's start is held past every bounded wait
 * (issue 31): the calls go on before CUPTI is attached, and their kernels, copies and memsets are
 * never recorded; gputrace must count them. For interpose_check "late_cupti".
 *
 * Run with FAKE_CUPTI_START_GATE=<dir> and GPUTRACE_DIR: the fake holds CUPTI's start until
 * <dir>/open exists. The runtime is dlopen'ed after load, so CUPTI starts at the first wrapped call
 * (thread "first", an allocation) or at the writer's periodic check, whichever comes first; either
 * is held in the start. Once it is (<dir>/waiting), thread "gpu" makes its calls: its first waits
 * for the start, bounded, and goes on; BEFORE_LAUNCHES launches, a copy and a memset give the GPU
 * work before CUPTI is attached. Then the app opens the gate, waits until the trace's header says
 * CUPTI is active (written after the wrappers hand CUPTI their calls), and launches AFTER_LAUNCHES
 * kernels, which are recorded. Every wait is on a condition, with a generous ceiling. */
#include <cuda_runtime_api.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../gt_check.h"
#include "gtrace_format.h"

#define BEFORE_LAUNCHES 5
#define AFTER_LAUNCHES 3
#define CEILING_MS 120000

typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*memcpy_fn)(void *, const void *, size_t, enum cudaMemcpyKind);
typedef cudaError_t (*memset_fn)(void *, int, size_t, cudaStream_t);
typedef cudaError_t (*sync_fn)(void);
typedef cudaError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

static struct {
    malloc_fn malloc;
    memcpy_fn memcpy;
    memset_fn memset;
    sync_fn sync;
    launch_fn launch;
} rt;

static void kernel_stub(void) {}

static int wait_for_file(const char *path)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < CEILING_MS; i++, nanosleep(&ms, NULL))
        if (access(path, F_OK) == 0)
            return 1;
    return 0;
}

/* The header's cupti_state of the one .gtrace in dir (0 while there is none). */
static uint32_t trace_cupti_state(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096] = "";
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".gtrace"))
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (d)
        closedir(d);
    gt_file_header h;
    memset(&h, 0, sizeof h);
    int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
            memset(&h, 0, sizeof h);
        close(fd);
    }
    return h.runtime.cupti_state;
}

static int wait_for_cupti_active(const char *dir)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < CEILING_MS; i++, nanosleep(&ms, NULL))
        if (trace_cupti_state(dir) == GT_CUPTI_ACTIVE)
            return 1;
    return 0;
}

static void launch(int n)
{
    dim3 g = {2, 1, 1}, b = {32, 1, 1};
    for (int i = 0; i < n; i++)
        CHECK(rt.launch((const void *)kernel_stub, g, b, NULL, 0, 0) == cudaSuccess,
              "the call failed");
}

/* The first wrapped call: it starts CUPTI, held at the gate. */
static void *first_call(void *arg)
{
    void **d = arg;
    CHECK(rt.malloc(d, 4096) == cudaSuccess, "the call failed");
    return NULL;
}

/* Before CUPTI is attached: BEFORE_LAUNCHES launches, one copy and one memset give the GPU work;
 * the synchronization does not. */
static void *calls_before_attach(void *arg)
{
    char host[256] = {0};
    launch(BEFORE_LAUNCHES);
    CHECK(rt.memcpy(arg, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess,
          "the call failed");
    CHECK(rt.memset(arg, 0, 128, 0) == cudaSuccess, "the call failed");
    CHECK(rt.sync() == cudaSuccess, "the call failed");
    return NULL;
}

static int load_runtime(void)
{
    void *lib = dlopen("libcudart.so.13", RTLD_LOCAL | RTLD_NOW);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 0;
    }
    rt.malloc = (malloc_fn)dlsym(lib, "cudaMalloc");
    rt.memcpy = (memcpy_fn)dlsym(lib, "cudaMemcpy");
    rt.memset = (memset_fn)dlsym(lib, "cudaMemsetAsync");
    rt.sync = (sync_fn)dlsym(lib, "cudaDeviceSynchronize");
    rt.launch = (launch_fn)dlsym(lib, "cudaLaunchKernel");
    return rt.malloc && rt.memcpy && rt.memset && rt.sync && rt.launch;
}

int main(void)
{
    const char *gate = getenv("FAKE_CUPTI_START_GATE"), *dir = getenv("GPUTRACE_DIR");
    if (!gate || !dir) {
        fprintf(stderr, "needs FAKE_CUPTI_START_GATE and GPUTRACE_DIR\n");
        return 2;
    }
    if (!load_runtime())
        return 1;
    char waiting[4096], open_path[4096];
    snprintf(waiting, sizeof waiting, "%s/waiting", gate);
    snprintf(open_path, sizeof open_path, "%s/open", gate);
    static char device_mem[4096]; /* the fake runtime's memory is the host's: any buffer will do */
    void *d = NULL;
    pthread_t first, gpu;
    pthread_create(&first, NULL, first_call, &d);
    if (!wait_for_file(waiting)) {
        fprintf(stderr, "CUPTI's start never reached the gate\n");
        return 1;
    }
    pthread_create(&gpu, NULL, calls_before_attach, device_mem);
    pthread_join(gpu, NULL);

    int fd = open(open_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(fd >= 0, "the gate's open file could not be made");
    if (fd >= 0)
        close(fd);
    pthread_join(first, NULL);
    if (!wait_for_cupti_active(dir)) {
        fprintf(stderr, "CUPTI never became active\n");
        return 1;
    }
    launch(AFTER_LAUNCHES);
    CHECK(rt.sync() == cudaSuccess, "the call failed");
    return failures != 0;
}
