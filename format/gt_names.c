/* gt_names.c — printable names: API functions (gtrace_api.def), record kinds, memory kinds. */
#include <string.h>

#include "gt_reader.h"
#include "gtrace_api.h"

typedef struct api_entry {
    const char *name;
    enum gt_api_category cat;
} api_entry;

/* Indexed by function id; ids are small stable numbers (< GT_FN_MAX). */
static const api_entry API_TABLE[GT_FN_MAX] = {
#define X(id, sym, cat) [id] = {#sym, GT_CAT_##cat},
#include "gtrace_api.def"
#undef X
};

const char *gt_api_func_name(uint32_t func)
{
    return func < GT_FN_MAX ? API_TABLE[func].name : NULL;
}

enum gt_api_category gt_api_func_category(uint32_t func)
{
    return func < GT_FN_MAX && API_TABLE[func].name ? API_TABLE[func].cat : GT_CAT_NONE;
}

/* Per-thread default-stream entry points (_ptds, _ptsz) share their base function's id. */
static size_t base_name_len(const char *name)
{
    size_t len = strlen(name);
    static const char *const SUFFIXES[] = {"_ptds", "_ptsz"};
    for (size_t i = 0; i < 2; i++) {
        size_t sl = strlen(SUFFIXES[i]);
        if (len > sl && !strcmp(name + len - sl, SUFFIXES[i]))
            return len - sl;
    }
    return len;
}

uint32_t gt_api_func_by_name(const char *name)
{
    if (!name)
        return 0;
    size_t len = base_name_len(name);
    for (uint32_t id = 1; id < GT_FN_MAX; id++) {
        const char *n = API_TABLE[id].name;
        if (n && strlen(n) == len && !strncmp(n, name, len))
            return id;
    }
    return 0;
}

const char *gt_api_category_name(enum gt_api_category cat)
{
    static const char *const NAMES[] = {
        [GT_CAT_NONE] = "none",     [GT_CAT_MEMORY] = "memory", [GT_CAT_COPY] = "copy",
        [GT_CAT_SET] = "set",       [GT_CAT_LAUNCH] = "launch", [GT_CAT_SYNC] = "sync",
        [GT_CAT_INFO] = "info",     [GT_CAT_CUDNN] = "cudnn",   [GT_CAT_CUBLAS] = "cublas",
        [GT_CAT_DRIVER] = "driver", [GT_CAT_OTHER] = "other",   [GT_CAT_JIT] = "jit",
    };
    return (unsigned)cat < sizeof NAMES / sizeof NAMES[0] ? NAMES[cat] : "none";
}

const char *gt_record_kind_name(uint16_t kind)
{
    static const char *const NAMES[GT_REC_KIND_MAX] = {
        [GT_REC_PAD] = "pad",
        [GT_REC_STRING] = "string",
        [GT_REC_LOST] = "lost",
        [GT_REC_CLOCK_SYNC] = "clock_sync",
        [GT_REC_THREAD] = "thread",
        [GT_REC_END] = "end",
        [GT_REC_CAPTURE] = "capture",
        [GT_REC_FLIGHT] = "flight",
        [GT_REC_API] = "api",
        [GT_REC_API_MEMCPY] = "api_memcpy",
        [GT_REC_API_MEMSET] = "api_memset",
        [GT_REC_API_ALLOC] = "api_alloc",
        [GT_REC_API_LAUNCH] = "api_launch",
        [GT_REC_API_SYNC] = "api_sync",
        [GT_REC_API_CUDNN] = "api_cudnn",
        [GT_REC_API_CUBLAS] = "api_cublas",
        [GT_REC_CUDNN_PLAN] = "cudnn_plan",
        [GT_REC_CUDNN_CONV_SIG] = "cudnn_conv_sig",
        [GT_REC_CUDNN_PERF] = "cudnn_perf",
        [GT_REC_NVTX] = "nvtx",
        [GT_REC_STACK] = "stack",
        [GT_REC_MODULE] = "module",
        [GT_REC_GPU_KERNEL] = "gpu_kernel",
        [GT_REC_GPU_MEMCPY] = "gpu_memcpy",
        [GT_REC_GPU_MEMSET] = "gpu_memset",
        [GT_REC_GPU_SYNC] = "gpu_sync",
        [GT_REC_GPU_EXT_CORR] = "gpu_ext_corr",
        [GT_REC_GPU_API] = "gpu_api",
        [GT_REC_CUPTI_STATS] = "cupti_stats",
        [GT_REC_GPU_UM] = "gpu_um",
    };
    return kind < GT_REC_KIND_MAX ? NAMES[kind] : NULL;
}

const char *gt_mem_kind_name(uint8_t kind)
{
    static const char *const NAMES[] = {
        [GT_MEM_UNKNOWN] = "unknown", [GT_MEM_PAGEABLE] = "pageable", [GT_MEM_PINNED] = "pinned",
        [GT_MEM_DEVICE] = "device",   [GT_MEM_ARRAY] = "array",       [GT_MEM_MANAGED] = "managed",
    };
    return kind < sizeof NAMES / sizeof NAMES[0] ? NAMES[kind] : "unknown";
}

const char *gt_memcpy_dir_name(uint8_t dir)
{
    static const char *const NAMES[] = {
        [GT_DIR_H2H] = "HtoH", [GT_DIR_H2D] = "HtoD",        [GT_DIR_D2H] = "DtoH",
        [GT_DIR_D2D] = "DtoD", [GT_DIR_DEFAULT] = "default",
    };
    return dir < sizeof NAMES / sizeof NAMES[0] ? NAMES[dir] : "unknown";
}

const char *gt_cupti_state_name(uint32_t state)
{
    static const char *const NAMES[] = {
        [GT_CUPTI_UNKNOWN] = "unknown",
        [GT_CUPTI_ACTIVE] = "active",
        [GT_CUPTI_NOT_FOUND] = "libcupti not found",
        [GT_CUPTI_OTHER_SUBSCRIBER] = "another CUPTI subscriber held it",
        [GT_CUPTI_NO_DEVICE] = "no driver or no GPU",
        [GT_CUPTI_DISABLED] = "disabled (GPUTRACE_CUPTI=0)",
        [GT_CUPTI_FAILED] = "failed",
    };
    return state < sizeof NAMES / sizeof NAMES[0] ? NAMES[state] : "unknown";
}
