/* gt_cupti_load.c — find libcupti and resolve its functions, without ever loading a second copy.
 *
 * Order: GPUTRACE_CUPTI_LIB; a libcupti already mapped in the process (NOLOAD by soname, then a
 * dl_iterate_phdr scan); the one beside the loaded libcudart (pip wheels keep them together in
 * site-packages/nvidia/cu13/lib); $CUDA_HOME/lib64 and extras/CUPTI/lib64; /usr/local/cuda; the
 * loader's default search. A copy already mapped always wins over any path, because PyTorch links
 * its own libcupti and two copies in one process fight over the same driver hooks. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_core.h"
#include "gt_cupti_internal.h"

gt_cupti_fns gt_cupti;

static const char *const cupti_sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

typedef struct lib_scan {
    const char *prefix; /* basename prefix, e.g. "libcudart.so" */
    char path[PATH_MAX];
} lib_scan;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    lib_scan *scan = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0;
    if (strncmp(base_name(info->dlpi_name), scan->prefix, strlen(scan->prefix)) != 0)
        return 0;
    snprintf(scan->path, sizeof scan->path, "%s", info->dlpi_name);
    return 1;
}

/* Path of a mapped object whose file name starts with prefix, or false. */
static bool find_mapped(const char *prefix, char *path, size_t cap)
{
    lib_scan scan = {.prefix = prefix};
    if (!dl_iterate_phdr(scan_one, &scan))
        return false;
    snprintf(path, cap, "%s", scan.path);
    return true;
}

bool gt_cupti_cudart_mapped(void)
{
    char path[PATH_MAX];
    return find_mapped("libcudart.so", path, sizeof path);
}

bool gt_cupti_cuda_libs_loaded(void)
{
    char path[PATH_MAX];
    return find_mapped("libcudart.so", path, sizeof path) ||
           find_mapped("libcupti.so", path, sizeof path);
}

static void *open_already_mapped(char *path_out, size_t cap)
{
    for (size_t i = 0; i < sizeof cupti_sonames / sizeof *cupti_sonames; i++) {
        void *h = dlopen(cupti_sonames[i], RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            snprintf(path_out, cap, "%s (already loaded)", cupti_sonames[i]);
            return h;
        }
    }
    char path[PATH_MAX];
    if (find_mapped("libcupti.so", path, sizeof path)) {
        void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            snprintf(path_out, cap, "%s (already loaded)", path);
            return h;
        }
    }
    return NULL;
}

/* A symbol of the libcupti the process has mapped, whoever loaded it: inside Python, torch loads it
 * RTLD_LOCAL, where dlsym(RTLD_NEXT) does not reach it. NULL when none is mapped. */
void *gt_cupti_mapped_symbol(const char *name)
{
    char path[PATH_MAX + 32];
    void *h = open_already_mapped(path, sizeof path);
    return h ? dlsym(h, name) : NULL; /* the NOLOAD reference is kept: the library stays mapped */
}

static void *open_in_dir(const char *dir, const char *sub, char *path_out, size_t cap)
{
    for (size_t i = 0; i < 2; i++) { /* .so.13, .so.12 */
        char path[PATH_MAX];
        int n = snprintf(path, sizeof path, "%s%s/%s", dir, sub, cupti_sonames[i]);
        if (n <= 0 || (size_t)n >= sizeof path || access(path, R_OK) != 0)
            continue;
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            snprintf(path_out, cap, "%s", path);
            return h;
        }
        gt_debug("cannot load %s: %s", path, dlerror());
    }
    return NULL;
}

static void *open_beside_cudart(char *path_out, size_t cap)
{
    char path[PATH_MAX];
    if (!find_mapped("libcudart.so", path, sizeof path))
        return NULL;
    char *slash = strrchr(path, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    void *h = open_in_dir(path, "", path_out, cap);
    /* Older pip layouts keep CUPTI in its own wheel: nvidia/cuda_runtime/lib ->
     * nvidia/cuda_cupti/lib. */
    return h ? h : open_in_dir(path, "/../../cuda_cupti/lib", path_out, cap);
}

static void *open_from_toolkit(char *path_out, size_t cap)
{
    const char *roots[] = {getenv("CUDA_HOME"), getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        if (!roots[i] || !roots[i][0])
            continue;
        void *h = open_in_dir(roots[i], "/lib64", path_out, cap);
        if (!h)
            h = open_in_dir(roots[i], "/extras/CUPTI/lib64", path_out, cap);
        if (h)
            return h;
    }
    return NULL;
}

static void *open_cupti(char *path_out, size_t cap)
{
    const char *override = gt_core_config()->cupti_lib;
    if (override[0]) {
        void *h = dlopen(override, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            gt_warn("GPUTRACE_CUPTI_LIB=%s cannot be loaded: %s", override, dlerror());
        else
            snprintf(path_out, cap, "%s", override);
        return h;
    }
    void *h = open_already_mapped(path_out, cap);
    if (!h)
        h = open_beside_cudart(path_out, cap);
    if (!h)
        h = open_from_toolkit(path_out, cap);
    if (!h) {
        h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
        if (h)
            snprintf(path_out, cap, "libcupti.so.13 (default search)");
    }
    return h;
}

#define RESOLVE(h, field, name, required)                                                          \
    do {                                                                                           \
        *(void **)&gt_cupti.field = dlsym(h, name);                                                \
        if (!gt_cupti.field && (required)) {                                                       \
            gt_debug("libcupti lacks %s", name);                                                   \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

static bool resolve_all(void *h)
{
    RESOLVE(h, GetResultString, "cuptiGetResultString", true);
    RESOLVE(h, GetVersion, "cuptiGetVersion", false);
    RESOLVE(h, GetTimestamp, "cuptiGetTimestamp", true);
    RESOLVE(h, ActivityEnable, "cuptiActivityEnable", true);
    RESOLVE(h, ActivityDisable, "cuptiActivityDisable", true);
    RESOLVE(h, ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
    RESOLVE(h, ActivityFlushAll, "cuptiActivityFlushAll", true);
    RESOLVE(h, ActivityGetNextRecord, "cuptiActivityGetNextRecord", true);
    RESOLVE(h, ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", true);
    RESOLVE(h, ActivityPushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId", false);
    RESOLVE(h, ActivityPopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId", false);
    RESOLVE(h, ActivityEnableLatencyTimestamps, "cuptiActivityEnableLatencyTimestamps", false);
    RESOLVE(h, ActivityEnableHWTrace, "cuptiActivityEnableHWTrace", false); /* CUPTI 12.8+ */
    RESOLVE(h, ActivityConfigureUnifiedMemoryCounter, "cuptiActivityConfigureUnifiedMemoryCounter",
            false);
    RESOLVE(h, Subscribe, "cuptiSubscribe", false);
    RESOLVE(h, Unsubscribe, "cuptiUnsubscribe", false);
    RESOLVE(h, Finalize, "cuptiFinalize", false);
    RESOLVE(h, EnableCallback, "cuptiEnableCallback", false);
    if (!gt_cupti.ActivityPushExternalCorrelationId || !gt_cupti.ActivityPopExternalCorrelationId)
        gt_cupti.ActivityPushExternalCorrelationId = NULL; /* push without pop would unbalance */
    return true;
}

bool gt_cupti_load(char *path_out, size_t path_cap)
{
    void *h = open_cupti(path_out, path_cap);
    if (!h)
        return false;
    if (!resolve_all(h)) {
        memset(&gt_cupti, 0, sizeof gt_cupti);
        return false; /* keep the handle: unloading a library that may be shared is not ours to do
                       */
    }
    return true;
}

/* nvcc puts device code in a ".nv_fatbin" section and its registration table in
 * ".nvFatBinSegment"; a program with either but no libcudart mapped carries a static cudart. Read
 * from /proc/self/exe section headers with plain read(2): cold, once. */
bool gt_cupti_exe_has_fatbin(void)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool found = false;
    Elf64_Ehdr eh;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 && eh.e_shnum < 4096 &&
        eh.e_shstrndx < eh.e_shnum) {
        Elf64_Shdr strsec;
        if (pread(fd, &strsec, sizeof strsec,
                  (off_t)(eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr))) ==
            (ssize_t)sizeof strsec) {
            for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
                Elf64_Shdr sh;
                char name[32] = {0};
                if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + i * sizeof sh)) !=
                    (ssize_t)sizeof sh)
                    break;
                if (pread(fd, name, sizeof name - 1, (off_t)(strsec.sh_offset + sh.sh_name)) <= 0)
                    continue;
                found = strcmp(name, ".nv_fatbin") == 0 || strcmp(name, ".nvFatBinSegment") == 0;
            }
        }
    }
    close(fd);
    return found;
}

const char *gt_cupti_result_string(CUptiResult r)
{
    const char *s = NULL;
    if (!gt_cupti.GetResultString || gt_cupti.GetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "unknown CUPTI error";
    return s;
}

CUptiResult gt_cupti_check(CUptiResult r, const char *call_text)
{
    if (r != CUPTI_SUCCESS)
        gt_debug("%s: %s (%d)", call_text, gt_cupti_result_string(r), (int)r);
    return r;
}
