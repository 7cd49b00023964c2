/* doctor_driver.c — the driver and the GPUs, read through libcuda.so.1 and NVML loaded at run time.
 *
 * Nothing here is linked: a machine without a driver must still get a clear "no driver" answer,
 * and the same binary must run against whatever driver the machine has. cuda.h is not included
 * on purpose: it renames functions to their _v2 forms with macros, which would collide with the
 * table's member names; the few enum values used are written out with their cuda.h names. NVML
 * (optional: PCIe link, persistence, MIG, clocks, NVLink) has no header in the toolkit, so its
 * handful of prototypes are declared here too. PCIe falls back to sysfs when NVML is missing. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"

/* cuda.h CUdevice_attribute values */
#define ATTR_CLOCK_RATE 13 /* kHz */
#define ATTR_MULTIPROCESSOR_COUNT 16
#define ATTR_MEMORY_CLOCK_RATE 36 /* kHz */
#define ATTR_GLOBAL_MEMORY_BUS_WIDTH 37
#define ATTR_CC_MAJOR 75
#define ATTR_CC_MINOR 76

static dr_cu_api cu;

const dr_cu_api *dr_cu(void)
{
    return &cu;
}

const char *dr_cu_error(int rc)
{
    static char buf[160];
    const char *name = NULL, *text = NULL;
    if (cu.cuGetErrorName)
        cu.cuGetErrorName(rc, &name);
    if (cu.cuGetErrorString)
        cu.cuGetErrorString(rc, &text);
    snprintf(buf, sizeof buf, "%s (%d)%s%s", name ? name : "CUresult", rc, text ? ": " : "",
             text ? text : "");
    return buf;
}

/* ---------------------------------------------------------------- NVML */

typedef struct nvml_api {
    int (*init)(void);
    int (*shutdown)(void);
    int (*driver_version)(char *, unsigned);
    int (*by_bus_id)(const char *, void **);
    int (*by_uuid)(const char *, void **);
    int (*curr_gen)(void *, unsigned *);
    int (*curr_width)(void *, unsigned *);
    int (*max_gen)(void *, unsigned *);
    int (*max_width)(void *, unsigned *);
    int (*persistence)(void *, int *);
    int (*mig)(void *, unsigned *, unsigned *);
    int (*max_clock)(void *, int, unsigned *);
    int (*clock)(void *, int, unsigned *);
    int (*nvlink_state)(void *, unsigned, int *);
    int (*nvlink_version)(void *, unsigned, unsigned *);
} nvml_api;

#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_NVLINK_MAX_LINKS 18

static int nvml_load(nvml_api *n)
{
    memset(n, 0, sizeof *n);
    /* GPUTRACE_DOCTOR_NVML=none: as on a machine without NVML (the tests' "no NVML" case must
     * hold on a GPU machine too, whose loader finds the real one whatever LD_LIBRARY_PATH says). */
    const char *only = getenv("GPUTRACE_DOCTOR_NVML");
    if (only && !strcmp(only, "none"))
        return -1;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    n->init = (int (*)(void))dlsym(h, "nvmlInit_v2");
    n->shutdown = (int (*)(void))dlsym(h, "nvmlShutdown");
    n->driver_version = (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion");
    n->by_bus_id = (int (*)(const char *, void **))dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2");
    n->by_uuid = (int (*)(const char *, void **))dlsym(h, "nvmlDeviceGetHandleByUUID");
    n->curr_gen = (int (*)(void *, unsigned *))dlsym(h, "nvmlDeviceGetCurrPcieLinkGeneration");
    n->curr_width = (int (*)(void *, unsigned *))dlsym(h, "nvmlDeviceGetCurrPcieLinkWidth");
    n->max_gen = (int (*)(void *, unsigned *))dlsym(h, "nvmlDeviceGetMaxPcieLinkGeneration");
    n->max_width = (int (*)(void *, unsigned *))dlsym(h, "nvmlDeviceGetMaxPcieLinkWidth");
    n->persistence = (int (*)(void *, int *))dlsym(h, "nvmlDeviceGetPersistenceMode");
    n->mig = (int (*)(void *, unsigned *, unsigned *))dlsym(h, "nvmlDeviceGetMigMode");
    n->max_clock = (int (*)(void *, int, unsigned *))dlsym(h, "nvmlDeviceGetMaxClockInfo");
    n->clock = (int (*)(void *, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
    n->nvlink_state = (int (*)(void *, unsigned, int *))dlsym(h, "nvmlDeviceGetNvLinkState");
    n->nvlink_version =
        (int (*)(void *, unsigned, unsigned *))dlsym(h, "nvmlDeviceGetNvLinkVersion");
    if (!n->init || n->init() != 0) {
        memset(n, 0, sizeof *n);
        return -1;
    }
    return 0;
}

/* Each NVML read is optional: a field stays "not readable" when its call fails. */
static void nvml_fill(const nvml_api *n, dr_gpu *g)
{
    /* By UUID first: NVML's indices need not be CUDA's (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES).
     */
    void *dev = NULL;
    if ((!n->by_uuid || !g->uuid[0] || n->by_uuid(g->uuid, &dev) != 0) &&
        (!n->by_bus_id || n->by_bus_id(g->pci_bus_id, &dev) != 0))
        return;
    unsigned a = 0, b = 0;
    if (n->curr_gen && n->curr_gen(dev, &a) == 0 && n->curr_width && n->curr_width(dev, &b) == 0) {
        g->pcie_gen_now = (int)a;
        g->pcie_width_now = (int)b;
        g->pcie_source = "NVML";
    }
    if (n->max_gen && n->max_gen(dev, &a) == 0 && n->max_width && n->max_width(dev, &b) == 0) {
        g->pcie_gen_max = (int)a;
        g->pcie_width_max = (int)b;
        g->pcie_source = "NVML";
    }
    int state = 0;
    if (n->persistence && n->persistence(dev, &state) == 0)
        g->persistence = state != 0;
    if (n->mig && n->mig(dev, &a, &b) == 0)
        g->mig = a != 0;
    if (n->max_clock && n->max_clock(dev, NVML_CLOCK_SM, &a) == 0 && a)
        g->sm_clock_max_mhz = (int)a;
    if (n->max_clock && n->max_clock(dev, NVML_CLOCK_MEM, &a) == 0 && a)
        g->mem_clock_max_mhz = (int)a;
    if (n->clock && n->clock(dev, NVML_CLOCK_SM, &a) == 0)
        g->sm_clock_now_mhz = (int)a;
    if (n->nvlink_state) {
        int readable = 0, active = 0;
        for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
            int on = 0;
            if (n->nvlink_state(dev, link, &on) != 0)
                continue;
            readable = 1;
            if (on) {
                active++;
                if (!g->nvlink_version && n->nvlink_version &&
                    n->nvlink_version(dev, link, &a) == 0)
                    g->nvlink_version = (int)a;
            }
        }
        g->nvlink_active = readable ? active : -1;
    }
}

/* ---------------------------------------------------------------- sysfs (PCIe without NVML) */

static int read_sysfs_int(const char *bus_id, const char *file, double *out)
{
    char path[160], lower[32], text[64];
    size_t i = 0;
    for (; bus_id[i] && i < sizeof lower - 1; i++)
        lower[i] = (char)(bus_id[i] >= 'A' && bus_id[i] <= 'F' ? bus_id[i] + 32 : bus_id[i]);
    lower[i] = 0;
    /* The driver gives an 8-digit domain ("00000000:18:00.0"); sysfs uses 4. */
    const char *id = strlen(lower) > 12 && !strncmp(lower, "0000", 4) ? lower + 4 : lower;
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", id, file);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    return ok && sscanf(text, "%lf", out) == 1 ? 0 : -1;
}

static int gen_from_gts(double gts)
{
    static const double rates[] = {2.5, 5, 8, 16, 32, 64};
    for (int i = 0; i < 6; i++)
        if (gts > rates[i] - 0.1 && gts < rates[i] + 0.1)
            return i + 1;
    return 0;
}

static void sysfs_fill(dr_gpu *g)
{
    double now_s, now_w, max_s, max_w;
    if (read_sysfs_int(g->pci_bus_id, "current_link_speed", &now_s) == 0 &&
        read_sysfs_int(g->pci_bus_id, "current_link_width", &now_w) == 0) {
        g->pcie_gen_now = gen_from_gts(now_s);
        g->pcie_width_now = (int)now_w;
        g->pcie_source = "sysfs";
    }
    if (read_sysfs_int(g->pci_bus_id, "max_link_speed", &max_s) == 0 &&
        read_sysfs_int(g->pci_bus_id, "max_link_width", &max_w) == 0) {
        g->pcie_gen_max = gen_from_gts(max_s);
        g->pcie_width_max = (int)max_w;
        g->pcie_source = "sysfs";
    }
}

/* ---------------------------------------------------------------- libcuda */

static int cu_load(dr_driver *d)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    d->loaded = 1;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        snprintf(d->lib_path, sizeof d->lib_path, "%s", lm->l_name);
#define DR_CU_RESOLVE(name, ret, args) cu.name = (ret(*) args)dlsym(h, #name);
    DR_CU_FUNCS(DR_CU_RESOLVE)
#undef DR_CU_RESOLVE
    return cu.cuInit && cu.cuDeviceGetCount && cu.cuDeviceGet ? 0 : -1;
}

static int attr(int dev, int which)
{
    int v = 0;
    if (cu.cuDeviceGetAttribute(&v, which, dev) != 0)
        return 0;
    return v;
}

static void fill_gpu(int ordinal, dr_gpu *g)
{
    int dev = 0;
    memset(g, 0, sizeof *g);
    g->ordinal = ordinal;
    g->nvlink_active = -1;
    g->persistence = -1;
    g->mig = -1;
    if (cu.cuDeviceGet(&dev, ordinal) != 0)
        return;
    if (cu.cuDeviceGetName)
        cu.cuDeviceGetName(g->name, sizeof g->name, dev);
    size_t mem = 0;
    if (cu.cuDeviceTotalMem_v2 && cu.cuDeviceTotalMem_v2(&mem, dev) == 0)
        g->total_mem = mem;
    if (cu.cuDeviceGetAttribute) {
        g->cc_major = attr(dev, ATTR_CC_MAJOR);
        g->cc_minor = attr(dev, ATTR_CC_MINOR);
        g->sm_count = attr(dev, ATTR_MULTIPROCESSOR_COUNT);
        g->sm_clock_max_mhz = attr(dev, ATTR_CLOCK_RATE) / 1000;
        g->mem_clock_max_mhz = attr(dev, ATTR_MEMORY_CLOCK_RATE) / 1000;
        g->mem_bus_width_bits = attr(dev, ATTR_GLOBAL_MEMORY_BUS_WIDTH);
    }
    unsigned char u[16];
    int (*get_uuid)(unsigned char *, int) =
        cu.cuDeviceGetUuid_v2 ? cu.cuDeviceGetUuid_v2 : cu.cuDeviceGetUuid;
    if (get_uuid && get_uuid(u, dev) == 0)
        snprintf(g->uuid, sizeof g->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                 u[14], u[15]);
    if (cu.cuDeviceGetPCIBusId)
        cu.cuDeviceGetPCIBusId(g->pci_bus_id, sizeof g->pci_bus_id, dev);
}

int dr_driver_probe(dr_driver *d)
{
    memset(d, 0, sizeof *d);
    if (cu_load(d) != 0)
        return -1;
    d->init_rc = cu.cuInit(0);
    if (d->init_rc != 0) {
        snprintf(d->init_error, sizeof d->init_error, "%s", dr_cu_error(d->init_rc));
        return -1;
    }
    if (cu.cuDriverGetVersion)
        cu.cuDriverGetVersion(&d->cuda_version);
    int count = 0;
    if (cu.cuDeviceGetCount(&count) != 0 || count <= 0)
        return -1;
    nvml_api nvml;
    d->nvml_loaded = nvml_load(&nvml) == 0;
    if (d->nvml_loaded && nvml.driver_version)
        nvml.driver_version(d->driver_version, sizeof d->driver_version);
    d->n_gpus = count < DR_MAX_GPUS ? count : DR_MAX_GPUS;
    for (int i = 0; i < d->n_gpus; i++) {
        fill_gpu(i, &d->gpus[i]);
        if (d->nvml_loaded)
            nvml_fill(&nvml, &d->gpus[i]);
        if (!d->gpus[i].pcie_source && d->gpus[i].pci_bus_id[0])
            sysfs_fill(&d->gpus[i]);
    }
    if (d->nvml_loaded && nvml.shutdown)
        nvml.shutdown();
    return 0;
}
