// doctor_bw.cu — an independent check of `gputrace doctor`'s copy figures (tools/gpu/doctor.sh):
// the same 64 MiB copies through the CUDA runtime (not the driver API doctor uses), from pageable
// (malloc), pinned (cudaMallocHost) and registered (cudaHostRegister) memory, timed two ways:
// CUDA events and the host's wall clock. Prints "what best_events_GBps median_events_GBps
// best_wall_GBps" per line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const size_t BYTES = 64u << 20;
static const int REPS = 10;

static void measure(const char *what, void *dst, const void *src, cudaMemcpyKind kind)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaMemcpy(dst, src, BYTES, kind)); // warm-up
    std::vector<double> ev, wall;
    for (int i = 0; i < REPS; i++) {
        auto t0 = std::chrono::steady_clock::now();
        CHECK(cudaEventRecord(a, 0));
        CHECK(cudaMemcpy(dst, src, BYTES, kind));
        CHECK(cudaEventRecord(b, 0));
        CHECK(cudaEventSynchronize(b));
        auto t1 = std::chrono::steady_clock::now();
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        ev.push_back(BYTES / (ms * 1e6));
        wall.push_back(BYTES / (std::chrono::duration<double>(t1 - t0).count() * 1e9));
    }
    std::sort(ev.begin(), ev.end());
    std::sort(wall.begin(), wall.end());
    printf("%-16s %8.2f %8.2f %8.2f\n", what, ev.back(), ev[REPS / 2], wall.back());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
}

int main()
{
    void *d1, *d2, *pinned, *registered, *pageable = malloc(BYTES);
    CHECK(cudaMalloc(&d1, BYTES));
    CHECK(cudaMalloc(&d2, BYTES));
    CHECK(cudaMallocHost(&pinned, BYTES));
    if (posix_memalign(&registered, 4096, BYTES) != 0)
        return 1;
    memset(pageable, 1, BYTES);
    memset(pinned, 1, BYTES);
    memset(registered, 1, BYTES);
    CHECK(cudaHostRegister(registered, BYTES, cudaHostRegisterDefault));
    printf("%-16s %8s %8s %8s\n", "# copy (64 MiB)", "best", "median", "wall");
    measure("H2D pageable", d1, pageable, cudaMemcpyHostToDevice);
    measure("H2D pinned", d1, pinned, cudaMemcpyHostToDevice);
    measure("H2D registered", d1, registered, cudaMemcpyHostToDevice);
    measure("D2H pageable", pageable, d1, cudaMemcpyDeviceToHost);
    measure("D2H pinned", pinned, d1, cudaMemcpyDeviceToHost);
    measure("D2H registered", registered, d1, cudaMemcpyDeviceToHost);
    measure("D2D", d2, d1, cudaMemcpyDeviceToDevice);
    return 0;
}
