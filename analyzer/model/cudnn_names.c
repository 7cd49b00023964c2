/* cudnn_names.c — cuDNN names for every output (cudnn_names.h). */
#include "cudnn_names.h"

#include <stdio.h>

#include "gtrace_format.h"

const char *gt_cudnn_op_name(int op_kind)
{
    switch (op_kind) {
    case GT_CUDNN_OP_CONV_FWD:
        return "conv_fwd";
    case GT_CUDNN_OP_CONV_BWD_DATA:
        return "conv_bwd_data";
    case GT_CUDNN_OP_CONV_BWD_FILTER:
        return "conv_bwd_filter";
    case GT_CUDNN_OP_CONV_BIAS_ACT:
        return "conv_bias_act";
    case GT_CUDNN_OP_MATMUL:
        return "matmul";
    case GT_CUDNN_OP_OTHER:
        return "other";
    default:
        return "op";
    }
}

const char *gt_cudnn_dtype_name(int dtype)
{
    static const char *const names[] = {"float",  "double", "half",     "int8",    "int32",
                                        "int8x4", "uint8",  "uint8x4",  "int8x32", "bfloat16",
                                        "int64",  "bool",   "fp8_e4m3", "fp8_e5m2"};
    if (dtype >= 0 && dtype < (int)(sizeof names / sizeof names[0]))
        return names[dtype];
    return "?";
}

void gt_cudnn_notes_text(uint64_t notes, int human, char *out, size_t cap)
{
    static const char *const names[][2] = {
        {"tensor_core", "tensor cores"},
        {"down_convert_inputs", "down-convert inputs"},
        {"reduced_precision_reduction", "reduced-precision reduction"},
        {"fft", "FFT"},
        {"nondeterministic", "nondeterministic"},
        {"winograd", "Winograd"},
        {"winograd_4x4", "Winograd 4x4"},
        {"winograd_6x6", "Winograd 6x6"},
        {"winograd_13x13", "Winograd 13x13"},
        {"strict_nan_prop", "strict NaN"}};
    const char *sep = human ? ", " : ",";
    size_t n = 0;
    if (cap)
        out[0] = 0;
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(notes & (1ull << i)))
            continue;
        int w = snprintf(out + n, cap - n, "%s%s", n ? sep : "", names[i][human != 0]);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
}
