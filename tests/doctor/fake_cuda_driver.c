/* fake_cuda_driver.c — a stand-in libcuda.so.1 (driver API) for `gputrace doctor` tests: one or
 * more simulated H200s whose copies and events run on a simulated clock, so the bandwidths doctor
 * measures are known in advance (pinned 52 GB/s H2D, 53 D2H; pageable 6.8 H2D, 11 D2H; device
 * copies 2000 GB/s). The fake cuBLAS of this folder advances the same clock through
 * fake_cuda_advance_ns (found with dlopen(RTLD_NOLOAD)).
 *
 * Environment: FAKE_CUDA_NO_DEVICE=1 (cuInit: CUDA_ERROR_NO_DEVICE), FAKE_CUDA_DRIVER_VERSION
 * (default 13000), FAKE_CUDA_DEVICE_COUNT (default 1; 0 = a driver that sees no GPU). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101

#define PINNED_H2D_GBPS 52.0
#define PINNED_D2H_GBPS 53.0
#define PAGEABLE_H2D_GBPS 6.8
#define PAGEABLE_D2H_GBPS 11.0
#define D2D_GBPS 2000.0

static int initialized;
static double sim_ns; /* the simulated GPU clock */
static uint64_t next_dev_addr = 1ull << 40;

typedef struct host_range {
    const char *p;
    size_t len;
} host_range;
static host_range pinned[64];

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static int device_count(void)
{
    return env_int("FAKE_CUDA_DEVICE_COUNT", 1);
}

EXPORT void fake_cuda_advance_ns(double ns)
{
    sim_ns += ns;
}

EXPORT int cuInit(unsigned flags)
{
    (void)flags;
    if (env_int("FAKE_CUDA_NO_DEVICE", 0))
        return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return CUDA_SUCCESS;
}
EXPORT int cuDriverGetVersion(int *v)
{
    *v = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGetCount(int *n)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    *n = device_count();
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGet(int *dev, int ordinal)
{
    if (!initialized)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *dev = ordinal;
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGetName(char *name, int len, int dev)
{
    snprintf(name, (size_t)len, "NVIDIA H200 (fake %d)", dev);
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    (void)dev;
    *bytes = 150754820096ull;
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 75: /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
        *v = 9;
        break;
    case 76:
        *v = 0;
        break;
    case 16: /* MULTIPROCESSOR_COUNT */
        *v = 132;
        break;
    case 13: /* CLOCK_RATE, kHz */
        *v = 1980000;
        break;
    case 36: /* MEMORY_CLOCK_RATE, kHz */
        *v = 3201000;
        break;
    case 37: /* GLOBAL_MEMORY_BUS_WIDTH */
        *v = 6144;
        break;
    default:
        *v = 0;
    }
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGetUuid_v2(unsigned char *uuid, int dev)
{
    for (int i = 0; i < 16; i++)
        uuid[i] = (unsigned char)(0x10 + i + dev);
    return CUDA_SUCCESS;
}
EXPORT int cuDeviceGetPCIBusId(char *id, int len, int dev)
{
    snprintf(id, (size_t)len, "00000000:%02X:00.0", 0xF0 + dev); /* no such device in sysfs */
    return CUDA_SUCCESS;
}
EXPORT int cuGetErrorName(int rc, const char **s)
{
    *s = rc == 0     ? "CUDA_SUCCESS"
         : rc == 100 ? "CUDA_ERROR_NO_DEVICE"
         : rc == 101 ? "CUDA_ERROR_INVALID_DEVICE"
         : rc == 3   ? "CUDA_ERROR_NOT_INITIALIZED"
                     : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}
EXPORT int cuGetErrorString(int rc, const char **s)
{
    *s = rc == 100 ? "no CUDA-capable device is detected" : "fake error";
    return CUDA_SUCCESS;
}

static int ctx_token;
EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    *ctx = &ctx_token;
    return CUDA_SUCCESS;
}
EXPORT int cuDevicePrimaryCtxRelease_v2(int dev)
{
    (void)dev;
    return CUDA_SUCCESS;
}
EXPORT int cuCtxSetCurrent(void *ctx)
{
    return ctx == &ctx_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
EXPORT int cuCtxSynchronize(void)
{
    return CUDA_SUCCESS;
}
EXPORT int cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    *free_b = 140000000000ull;
    *total = 150754820096ull;
    return CUDA_SUCCESS;
}
/* Device memory is only addresses: nothing is stored. */
EXPORT int cuMemAlloc_v2(uint64_t *p, size_t len)
{
    *p = next_dev_addr;
    next_dev_addr += (len + 0xFFFFF) & ~(uint64_t)0xFFFFF;
    return CUDA_SUCCESS;
}
EXPORT int cuMemFree_v2(uint64_t p)
{
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static int add_pinned(const void *p, size_t len)
{
    for (int i = 0; i < 64; i++)
        if (!pinned[i].p) {
            pinned[i].p = p;
            pinned[i].len = len;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}
static int remove_pinned(const void *p)
{
    for (int i = 0; i < 64; i++)
        if (pinned[i].p == p) {
            pinned[i].p = NULL;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}
static int is_pinned(const void *p, size_t len)
{
    for (int i = 0; i < 64; i++)
        if (pinned[i].p && (const char *)p >= pinned[i].p &&
            (const char *)p + len <= pinned[i].p + pinned[i].len)
            return 1;
    return 0;
}

EXPORT int cuMemAllocHost_v2(void **p, size_t len)
{
    *p = malloc(len);
    return *p ? add_pinned(*p, len) : CUDA_ERROR_INVALID_VALUE;
}
EXPORT int cuMemFreeHost(void *p)
{
    int rc = remove_pinned(p);
    free(p);
    return rc;
}
EXPORT int cuMemHostRegister_v2(void *p, size_t len, unsigned flags)
{
    (void)flags;
    return add_pinned(p, len);
}
EXPORT int cuMemHostUnregister(void *p)
{
    return remove_pinned(p);
}

/* The host side of a copy is touched at both ends, so a wrong buffer shows under ASan. */
EXPORT int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t len)
{
    volatile char sink = ((const char *)src)[0] + ((const char *)src)[len - 1];
    (void)sink;
    if (!dst)
        return CUDA_ERROR_INVALID_VALUE;
    sim_ns += (double)len / (is_pinned(src, len) ? PINNED_H2D_GBPS : PAGEABLE_H2D_GBPS);
    return CUDA_SUCCESS;
}
EXPORT int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t len)
{
    ((char *)dst)[0] = ((char *)dst)[len - 1] = 0;
    if (!src)
        return CUDA_ERROR_INVALID_VALUE;
    sim_ns += (double)len / (is_pinned(dst, len) ? PINNED_D2H_GBPS : PAGEABLE_D2H_GBPS);
    return CUDA_SUCCESS;
}
EXPORT int cuMemcpyDtoD_v2(uint64_t dst, uint64_t src, size_t len)
{
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    sim_ns += (double)len / D2D_GBPS;
    return CUDA_SUCCESS;
}

EXPORT int cuEventCreate(void **ev, unsigned flags)
{
    (void)flags;
    *ev = calloc(1, sizeof(double));
    return *ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
EXPORT int cuEventRecord(void *ev, void *stream)
{
    (void)stream;
    *(double *)ev = sim_ns;
    return CUDA_SUCCESS;
}
EXPORT int cuEventSynchronize(void *ev)
{
    return ev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
EXPORT int cuEventElapsedTime_v2(float *ms, void *start, void *end)
{
    *ms = (float)((*(double *)end - *(double *)start) / 1e6);
    return CUDA_SUCCESS;
}
EXPORT int cuEventDestroy_v2(void *ev)
{
    free(ev);
    return CUDA_SUCCESS;
}
