/* cudnn_json.h — read a cuDNN backend execution plan's JSON (recorded once per plan by the
 * interposer, GT_REC_CUDNN_PLAN) into an op signature, offline.
 *
 * The recorder keeps the hot path cheap and writes sig_id 0 for backend plans; the JSON that cuDNN
 * serialises (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION) already holds what a signature needs:
 * finalizeMode, the tensors' dims/strides/data types, the convolution node's pad/stride/dilation
 * and math precision, and engine{engineId, knobChoices}. Decoding it here gives backend ops the
 * same gt_rec_cudnn_conv_sig that legacy convolutions get from their descriptors, so both are keyed
 * and labelled alike, and two runs (two cuDNN versions) are matched by shape, not by order. */
#ifndef GT_CUDNN_JSON_H
#define GT_CUDNN_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "gtrace_format.h"

typedef struct gt_cudnn_plan_desc {
    int is_conv;               /* a convolution node was found: sig is filled */
    gt_rec_cudnn_conv_sig sig; /* op_kind, dims, strides, dtype, compute type, pad/stride/... */
    int n_nodes;               /* operations in the graph (> 1: fused, e.g. conv+bias+relu) */
    int cudnn_version;         /* "cudnnVersion", e.g. 91900; 0 unknown */
    int64_t engine_id;         /* engine.engineId, -1 unknown */
    char knobs[192];           /* "TILE_SIZE=1 STAGES=4" (CUDNN_KNOB_TYPE_ dropped), "" none */
    char label[192];           /* signature text for ops that are not convolutions */
} gt_cudnn_plan_desc;

/* Decode len bytes of plan JSON (need not be NUL-terminated). Returns 0 on success, -1 when the
 * text is not a plan's JSON (err says why). Never trusts the input: missing or odd fields leave
 * their defaults (-1 or 0). */
int gt_cudnn_plan_decode(const char *json, size_t len, gt_cudnn_plan_desc *out, char *err,
                         size_t errlen);

/* cudnnDataType_t from its name ("CUDNN_DATA_FLOAT" -> 0); -1 unknown. */
int gt_cudnn_dtype_from_name(const char *name);

/* The op signature used as key and label in report and diff, e.g.
 * "conv_fwd 32x256x56x56 w64x256x1x1 pad0 str1 NCHW float" (dilation and groups only when not 1,
 * the compute type only when it differs from the data type). op_kind 0 = g->op_kind. */
void gt_cudnn_sig_label(const gt_rec_cudnn_conv_sig *g, int op_kind, char *out, size_t cap);

#endif
