/* fake_nvml.c — a stand-in libnvidia-ml.so.1 for `gputrace doctor` tests: driver 580.159, every
 * GPU on a PCIe gen5 x16 link (FAKE_NVML_PCIE="GENxWIDTH" changes it, e.g. "3x8"), persistence
 * mode on, MIG not supported, 18 NVLink 4 links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3

static int device_token;

static void link(unsigned *gen, unsigned *width)
{
    const char *v = getenv("FAKE_NVML_PCIE");
    *gen = 5;
    *width = 16;
    if (v && sscanf(v, "%ux%u", gen, width) != 2) {
        *gen = 5;
        *width = 16;
    }
}

EXPORT int nvmlInit_v2(void)
{
    return NVML_SUCCESS;
}
EXPORT int nvmlShutdown(void)
{
    return NVML_SUCCESS;
}
EXPORT int nvmlSystemGetDriverVersion(char *v, unsigned len)
{
    snprintf(v, len, "580.159");
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, void **dev)
{
    (void)bus_id;
    *dev = &device_token;
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetCurrPcieLinkGeneration(void *dev, unsigned *v)
{
    unsigned w;
    (void)dev;
    link(v, &w);
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetCurrPcieLinkWidth(void *dev, unsigned *v)
{
    unsigned g;
    (void)dev;
    link(&g, v);
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetMaxPcieLinkGeneration(void *dev, unsigned *v)
{
    return nvmlDeviceGetCurrPcieLinkGeneration(dev, v);
}
EXPORT int nvmlDeviceGetMaxPcieLinkWidth(void *dev, unsigned *v)
{
    return nvmlDeviceGetCurrPcieLinkWidth(dev, v);
}
EXPORT int nvmlDeviceGetPersistenceMode(void *dev, int *mode)
{
    (void)dev;
    *mode = 1;
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pending)
{
    (void)dev;
    (void)cur;
    (void)pending;
    return NVML_ERROR_NOT_SUPPORTED;
}
EXPORT int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    *mhz = type == 1 ? 1980 : type == 2 ? 3201 : 1980;
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    (void)dev;
    *mhz = type == 1 ? 1755 : 3201;
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetNvLinkState(void *dev, unsigned link_no, int *active)
{
    (void)dev;
    *active = link_no < 18;
    return NVML_SUCCESS;
}
EXPORT int nvmlDeviceGetNvLinkVersion(void *dev, unsigned link_no, unsigned *v)
{
    (void)dev;
    (void)link_no;
    *v = 4;
    return NVML_SUCCESS;
}
