/* wrap_cudnn.h — what the cuDNN wrappers share (wrap_cudnn.c: legacy convolutions;
 * wrap_cudnn_backend.c: the backend API; wrap_cudnn_ops.c: batch norm and the other legacy ops):
 * the handle's stream, a launching call's begin (versions once, then the call anchored so the
 * kernels cuDNN launches through its own runtime link to it), and its GT_REC_API_CUDNN record. */
#ifndef GT_WRAP_CUDNN_H
#define GT_WRAP_CUDNN_H

#include <cudnn.h>

#include "gt_wrap.h"

#define CUDNN_REAL(s, type)                                                                        \
    __typeof__(type) real = (__typeof__(type))gt_sym_get(s);                                       \
    if (__builtin_expect(!real, 0)) {                                                              \
        gt_sym_warn_missing(s);                                                                    \
        return CUDNN_STATUS_NOT_SUPPORTED;                                                         \
    }

/* The start of a launching call's wrapper: the real call made outside a recording (nested,
 * paused), else begun, anchored, made and ended: c, r and t_end are then in scope. */
#define GT_CUDNN_CALL(fnid, call_real)                                                             \
    if (!gt_fast_guard_enter())                                                                    \
        return call_real;                                                                          \
    gt_call c;                                                                                     \
    gt_cudnn_call_begin(&c, fnid);                                                                 \
    cudnnStatus_t r = call_real;                                                                   \
    uint64_t t_end = gt_call_end(&c);

uint64_t gt_cudnn_handle_stream(cudnnHandle_t h); /* 0 when unknown */
void gt_cudnn_call_begin(gt_call *c, uint32_t fnid);
void gt_cudnn_record(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r, uint64_t stream,
                     const gt_rec_api_cudnn *fields);

#endif
