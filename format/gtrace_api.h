/* gtrace_api.h — the API function ids of gtrace_api.def as an enum (GT_FN_cudaMalloc, ...),
 * with names and categories. */
#ifndef GTRACE_API_H
#define GTRACE_API_H

#include <stdint.h>

enum gt_api_func {
#define X(id, sym, cat) GT_FN_##sym = id,
#include "gtrace_api.def"
#undef X
    GT_FN_MAX = 256
};

enum gt_api_category {
    GT_CAT_NONE = 0,
    GT_CAT_MEMORY,
    GT_CAT_COPY,
    GT_CAT_SET,
    GT_CAT_LAUNCH,
    GT_CAT_SYNC,
    GT_CAT_INFO,
    GT_CAT_CUDNN,
    GT_CAT_CUBLAS,
    GT_CAT_DRIVER,
    GT_CAT_OTHER,
    GT_CAT_JIT, /* JIT compilation, module loading, context creation (issue 21: phases) */
};

/* Name of a function id, or NULL for an id this build does not know. */
const char *gt_api_func_name(uint32_t func);
/* Category of a function id (GT_CAT_NONE when unknown). */
enum gt_api_category gt_api_func_category(uint32_t func);
/* Id of a function name ("cudaMemcpyAsync_ptsz" maps to cudaMemcpyAsync), 0 when unknown. */
uint32_t gt_api_func_by_name(const char *name);
const char *gt_api_category_name(enum gt_api_category cat);

#endif
