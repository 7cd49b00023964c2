/* cudnn_names.h — names of cuDNN operation kinds, data types and numerical notes, in one table
 * each for every output (report, diff, the converter's arguments, plan signatures). */
#ifndef GT_CUDNN_NAMES_H
#define GT_CUDNN_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* "conv_fwd", "matmul"...; "op" for an unknown kind (GT_CUDNN_OP_*). */
const char *gt_cudnn_op_name(int op_kind);
/* "float", "half", "bfloat16"... (cudnnDataType_t); "?" when unknown. */
const char *gt_cudnn_dtype_name(int dtype);
/* The numerical notes set in a bit mask (cudnnBackendNumericalNote_t), comma-separated:
 * human = 1 "tensor cores, Winograd" (report), 0 "tensor_core,winograd" (trace arguments). */
void gt_cudnn_notes_text(uint64_t notes, int human, char *out, size_t cap);

#endif
