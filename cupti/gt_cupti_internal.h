/* gt_cupti_internal.h — shared between the files of the CUPTI module (never outside cupti/).
 *
 * Files: gt_cupti_load.c finds and dlopens libcupti and resolves its functions;
 * gt_cupti.c is the lifecycle (start, flush, exit, fork, external correlation, API auto-switch);
 * gt_cupti_records.c hands buffers to CUPTI and turns completed ones into GT_REC_GPU_* records. */
#ifndef GT_CUPTI_INTERNAL_H
#define GT_CUPTI_INTERNAL_H

#include <cupti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Every libcupti function we use, resolved once with dlsym. */
typedef struct gt_cupti_fns {
    __typeof__(cuptiGetResultString) *GetResultString;
    __typeof__(cuptiGetVersion) *GetVersion;
    __typeof__(cuptiGetTimestamp) *GetTimestamp;
    __typeof__(cuptiActivityEnable) *ActivityEnable;
    __typeof__(cuptiActivityDisable) *ActivityDisable;
    __typeof__(cuptiActivityRegisterCallbacks) *ActivityRegisterCallbacks;
    __typeof__(cuptiActivityFlushAll) *ActivityFlushAll;
    __typeof__(cuptiActivityGetNextRecord) *ActivityGetNextRecord;
    __typeof__(cuptiActivityGetNumDroppedRecords) *ActivityGetNumDroppedRecords;
    __typeof__(cuptiActivityPushExternalCorrelationId) *ActivityPushExternalCorrelationId;
    __typeof__(cuptiActivityPopExternalCorrelationId) *ActivityPopExternalCorrelationId;
} gt_cupti_fns;

extern gt_cupti_fns gt_cupti;

/* Load libcupti (see gt_cupti_load.c for the search order) and fill gt_cupti. Returns false when
 * no library was found or a required function is missing; *path_out names what was loaded. */
bool gt_cupti_load(char *path_out, size_t path_cap);
/* True when a libcudart or libcupti is mapped in the process now (cheap enough for a poll). */
bool gt_cupti_cuda_libs_loaded(void);
/* True when the main executable carries CUDA fat binaries (nvcc-built, e.g. with static cudart). */
bool gt_cupti_exe_has_fatbin(void);

/* Checks a CUPTI result: on failure logs the call text and CUPTI's error string (verbose only:
 * a machine without a driver must stay silent). Returns the result unchanged. */
CUptiResult gt_cupti_check(CUptiResult r, const char *call_text);
#define GT_CUPTI_CALL(call) gt_cupti_check((call), #call)
const char *gt_cupti_result_string(CUptiResult r);

/* gt_cupti_records.c */
CUptiResult gt_cupti_register_buffers(void);
void gt_cupti_records_reset_after_fork(void);
/* Reads CUPTI's dropped-record count and writes GT_REC_LOST / GT_REC_CUPTI_STATS when anything
 * changed since the last call. */
void gt_cupti_write_stats(bool force);

/* What the records module tells the lifecycle module. */
extern atomic_bool gt_cupti_kernels_seen;       /* a kernel record arrived */
extern atomic_bool gt_cupti_records_seen;       /* any record arrived (CUDA is initialised) */
extern _Thread_local bool gt_cupti_tl_we_flush; /* this thread called FlushAll itself */

#endif
