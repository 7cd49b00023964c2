/* cudnn_json.c — a backend execution plan's JSON into an op signature (see cudnn_json.h).
 *
 * The JSON as cuDNN 9.14 and 9.19 write it (schemaVersion 4):
 *   {"cudnnVersion":91900, "operationGraph":{"finalizeMode":"CONV_FORWARD",
 *     "tensors":[{"name":"120","dataType":"CUDNN_DATA_FLOAT","dim":[..],"stride":[..],...}],
 *     "nodes":[{"operation":"CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR",
 *               "mode":"CUDNN_CROSS_CORRELATION","mathPrec":"CUDNN_DATA_FLOAT",
 *               "pad":[0,0],"stride":[1,1],"dilation":[1,1],"X":"120","W":"119","Y":"121"}]},
 *    "engine":{"engineId":58,"knobChoices":{"CUDNN_KNOB_TYPE_WORKSPACE":2}}}
 * Backward data names its tensors dX/W/dY, backward filter X/dW/dY. */
#include "cudnn_json.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cudnn_names.h"

static const char *const dtype_names[] = {
    "FLOAT",  "DOUBLE",  "HALF",     "INT8",     "INT32",
    "INT8x4", "UINT8",   "UINT8x4",  "INT8x32",  "BFLOAT16",
    "INT64",  "BOOLEAN", "FP8_E4M3", "FP8_E5M2", "FAST_FLOAT_FOR_FP8"};

int gt_cudnn_dtype_from_name(const char *name)
{
    static const char prefix[] = "CUDNN_DATA_";
    if (!name || strncmp(name, prefix, sizeof prefix - 1) != 0)
        return -1;
    name += sizeof prefix - 1;
    for (int i = 0; i < (int)(sizeof dtype_names / sizeof dtype_names[0]); i++)
        if (!strcmp(name, dtype_names[i]))
            return i;
    return -1;
}

static void set_err(char *err, size_t errlen, const char *msg)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", msg);
}

/* Copy up to cap integers of a JSON array; returns how many there were (capped). */
static int int_array(const json_t *arr, int32_t *out, int cap)
{
    if (!json_is_array(arr))
        return 0;
    int n = (int)json_array_size(arr);
    if (n > cap)
        n = cap;
    for (int i = 0; i < n; i++) {
        json_int_t v = json_integer_value(json_array_get(arr, (size_t)i));
        out[i] = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
    }
    return n;
}

static const json_t *tensor_named(const json_t *tensors, const char *name)
{
    if (!name)
        return NULL;
    size_t i;
    const json_t *t;
    json_array_foreach(tensors, i, t)
    {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && !strcmp(n, name))
            return t;
    }
    return NULL;
}

/* The tensor a node names under either key (forward "X", backward data "dX"). */
static const json_t *node_tensor(const json_t *tensors, const json_t *node, const char *key,
                                 const char *grad_key)
{
    const json_t *t = tensor_named(tensors, json_string_value(json_object_get(node, key)));
    return t ? t : tensor_named(tensors, json_string_value(json_object_get(node, grad_key)));
}

static int conv_kind(const char *operation)
{
    if (!operation)
        return GT_CUDNN_OP_UNKNOWN;
    if (strstr(operation, "CONVOLUTION_FORWARD"))
        return GT_CUDNN_OP_CONV_FWD;
    if (strstr(operation, "CONVOLUTION_BACKWARD_DATA"))
        return GT_CUDNN_OP_CONV_BWD_DATA;
    if (strstr(operation, "CONVOLUTION_BACKWARD_FILTER"))
        return GT_CUDNN_OP_CONV_BWD_FILTER;
    return GT_CUDNN_OP_UNKNOWN;
}

static int finalize_kind(const char *mode)
{
    if (!mode)
        return GT_CUDNN_OP_UNKNOWN;
    if (!strcmp(mode, "CONV_FORWARD"))
        return GT_CUDNN_OP_CONV_FWD;
    if (!strcmp(mode, "CONV_BWD_DATA"))
        return GT_CUDNN_OP_CONV_BWD_DATA;
    if (!strcmp(mode, "CONV_BWD_FILTER"))
        return GT_CUDNN_OP_CONV_BWD_FILTER;
    return GT_CUDNN_OP_UNKNOWN;
}

/* Channels innermost in x (stride 1 on C while C > 1) is NHWC; everything else reads as NCHW. */
static int layout_of(const gt_rec_cudnn_conv_sig *g)
{
    return g->nb_dims >= 3 && g->x_dims[1] > 1 && g->x_strides[1] == 1 ? 1 : 0;
}

static void fill_conv(gt_rec_cudnn_conv_sig *g, const json_t *tensors, const json_t *node, int kind)
{
    const json_t *x = node_tensor(tensors, node, "X", "dX");
    const json_t *w = node_tensor(tensors, node, "W", "dW");
    const json_t *y = node_tensor(tensors, node, "Y", "dY");
    g->op_kind = (uint32_t)kind;
    g->nb_dims = int_array(json_object_get(x, "dim"), g->x_dims, 5);
    int_array(json_object_get(x, "stride"), g->x_strides, 5);
    int_array(json_object_get(w, "dim"), g->w_dims, 5);
    int_array(json_object_get(y, "dim"), g->y_dims, 5);
    int_array(json_object_get(y, "stride"), g->y_strides, 5);
    g->dtype = gt_cudnn_dtype_from_name(json_string_value(json_object_get(x, "dataType")));
    g->compute_dtype =
        gt_cudnn_dtype_from_name(json_string_value(json_object_get(node, "mathPrec")));
    g->pad[0] = g->pad[1] = g->pad[2] = 0;
    g->stride[0] = g->stride[1] = g->stride[2] = 1;
    g->dilation[0] = g->dilation[1] = g->dilation[2] = 1;
    int_array(json_object_get(node, "pad"), g->pad, 3);
    int_array(json_object_get(node, "stride"), g->stride, 3);
    int_array(json_object_get(node, "dilation"), g->dilation, 3);
    const char *mode = json_string_value(json_object_get(node, "mode"));
    g->conv_mode = !mode ? -1 : !strcmp(mode, "CUDNN_CROSS_CORRELATION") ? 1 : 0;
    /* w is [K, C/groups, R, S] in every direction */
    g->groups = g->w_dims[1] > 0 && g->x_dims[1] >= g->w_dims[1] ? g->x_dims[1] / g->w_dims[1] : 1;
    g->format = layout_of(g);
}

static void knobs_text(const json_t *knobs, char *out, size_t cap)
{
    static const char prefix[] = "CUDNN_KNOB_TYPE_";
    size_t used = 0;
    const char *key;
    const json_t *v;
    out[0] = 0;
    json_object_foreach((json_t *)knobs, key, v)
    {
        /* key itself steers json_object_foreach: shorten a copy */
        const char *name = strncmp(key, prefix, sizeof prefix - 1) ? key : key + sizeof prefix - 1;
        int n = snprintf(out + used, cap - used, "%s%s=%lld", used ? " " : "", name,
                         (long long)json_integer_value(v));
        if (n < 0 || (size_t)n >= cap - used) {
            out[used] = 0; /* keep whole knobs only */
            return;
        }
        used += (size_t)n;
    }
}

/* For graphs without a convolution (matmul, norms, fused pointwise): op names and tensor dims. */
static void generic_label(const json_t *graph, const char *final_mode, char *out, size_t cap)
{
    size_t used = (size_t)snprintf(out, cap, "%s", final_mode ? final_mode : "graph");
    const json_t *tensors = json_object_get(graph, "tensors"), *t;
    size_t i;
    json_array_foreach(tensors, i, t)
    {
        if (json_is_true(json_object_get(t, "isVirtual")) || used >= cap)
            continue;
        int32_t d[8];
        int n = int_array(json_object_get(t, "dim"), d, 8);
        used += (size_t)snprintf(out + used, cap - used, " ");
        for (int k = 0; k < n && used < cap; k++)
            used += (size_t)snprintf(out + used, cap - used, "%s%d", k ? "x" : "", d[k]);
    }
}

int gt_cudnn_plan_decode(const char *json, size_t len, gt_cudnn_plan_desc *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->engine_id = -1;
    out->sig.dtype = out->sig.compute_dtype = out->sig.format = out->sig.math_type = -1;
    if (!json || !len) {
        set_err(err, errlen, "empty plan JSON");
        return -1;
    }
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_DISABLE_EOF_CHECK, &jerr);
    if (!json_is_object(root)) {
        set_err(err, errlen, root ? "plan JSON is not an object" : jerr.text);
        json_decref(root);
        return -1;
    }
    out->cudnn_version = (int)json_integer_value(json_object_get(root, "cudnnVersion"));
    const json_t *engine = json_object_get(root, "engine");
    const json_t *eid = json_object_get(engine, "engineId");
    if (json_is_integer(eid))
        out->engine_id = json_integer_value(eid);
    knobs_text(json_object_get(engine, "knobChoices"), out->knobs, sizeof out->knobs);

    const json_t *graph = json_object_get(root, "operationGraph");
    const json_t *tensors = json_object_get(graph, "tensors");
    const json_t *nodes = json_object_get(graph, "nodes");
    const char *final_mode = json_string_value(json_object_get(graph, "finalizeMode"));
    out->n_nodes = (int)json_array_size(nodes);
    const json_t *node;
    size_t i;
    json_array_foreach(nodes, i, node)
    {
        int kind = conv_kind(json_string_value(json_object_get(node, "operation")));
        if (kind == GT_CUDNN_OP_UNKNOWN)
            continue;
        int fk = finalize_kind(final_mode);
        fill_conv(&out->sig, tensors, node, fk ? fk : kind);
        if (kind == GT_CUDNN_OP_CONV_FWD && out->n_nodes > 1)
            out->sig.op_kind = GT_CUDNN_OP_CONV_BIAS_ACT; /* conv fused with pointwise ops */
        out->is_conv = out->sig.nb_dims >= 3;
        break;
    }
    if (!out->is_conv)
        generic_label(graph, final_mode, out->label, sizeof out->label);
    json_decref(root);
    if (!graph) {
        set_err(err, errlen, "plan JSON has no operationGraph");
        return -1;
    }
    return 0;
}

/* "0" when all spatial values are equal, else "1,0". */
static void triple_text(const int32_t *v, int n, char *out, size_t cap)
{
    int same = 1;
    for (int i = 1; i < n; i++)
        same &= v[i] == v[0];
    size_t used = 0;
    for (int i = 0; i < (same ? 1 : n) && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%d", i ? "," : "", v[i]);
}

static void dims_text(const int32_t *d, int n, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%d", i ? "x" : "", d[i]);
}

void gt_cudnn_sig_label(const gt_rec_cudnn_conv_sig *g, int op_kind, char *out, size_t cap)
{
    int nd = g->nb_dims >= 3 && g->nb_dims <= 5 ? g->nb_dims : 4;
    int ns = nd - 2; /* spatial dimensions */
    char x[64], w[64], pad[40], str[40], dil[40], extra[96] = "";
    dims_text(g->x_dims, nd, x, sizeof x);
    dims_text(g->w_dims, nd, w, sizeof w);
    triple_text(g->pad, ns, pad, sizeof pad);
    triple_text(g->stride, ns, str, sizeof str);
    triple_text(g->dilation, ns, dil, sizeof dil);
    size_t used = 0;
    if (strcmp(dil, "1") != 0)
        used += (size_t)snprintf(extra + used, sizeof extra - used, " dil%s", dil);
    if (g->groups > 1 && used < sizeof extra)
        used += (size_t)snprintf(extra + used, sizeof extra - used, " g%d", g->groups);
    if (g->compute_dtype >= 0 && g->compute_dtype != g->dtype && used < sizeof extra)
        used += (size_t)snprintf(extra + used, sizeof extra - used, " acc %s",
                                 gt_cudnn_dtype_name(g->compute_dtype));
    if (g->math_type == 3 && used < sizeof extra) /* CUDNN_FMA_MATH: no TF32/tensor cores */
        snprintf(extra + used, sizeof extra - used, " fma");
    int nhwc = g->format == 1 || (g->x_dims[1] > 1 && g->x_strides[1] == 1);
    snprintf(out, cap, "%s %s w%s pad%s str%s %s %s%s",
             gt_cudnn_op_name(op_kind ? op_kind : (int)g->op_kind), x, w, pad, str,
             nd == 5 ? (nhwc ? "NDHWC" : "NCDHW") : (nhwc ? "NHWC" : "NCHW"),
             gt_cudnn_dtype_name(g->dtype), extra);
}
