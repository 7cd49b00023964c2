/* test_cudnn_json.c — cuDNN backend plans read from their JSON (analyzer/model/cudnn_json.c), and
 * what report and diff make of them.
 *
 * 1. Real plan JSON recorded on an H200 (cuDNN 9.14 forward, 9.19 backward data and filter, in
 *    DATADIR) decodes into the right op, shapes, strides, pad/stride, types, engine and knobs.
 * 2. Hand-written variants: NHWC, grouped, dilated, half with float accumulation, 3-D, a fused
 *    conv+pointwise graph, a graph without a convolution, and broken input (every prefix of a real
 *    plan, wrong types) — never a crash, a clear -1.
 * 3. Two synthetic traces whose plans carry only JSON (sig_id 0, as the recorder writes them), in
 *    a different order, with other plan ids and graph pointers, as two cuDNN versions would: diff
 *    matches ops by shape, marks the engine change '*' and the knob-only change '~', and GPU time
 *    joins the executes through external correlation.
 * Usage: test_cudnn_json DATADIR WORKDIR */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cudnn_json.h"
#include "gt_test_writer.h"
#include "gtrace_api.h"
#include "test_report_util.h"
#include "../gt_check.h"

static const char *datadir, *workdir;

static char *slurp_trimmed(const char *dir, const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        CHECK(0, "cannot open %s", path);
        return NULL;
    }
    char *buf = malloc(1 << 16);
    *len = fread(buf, 1, (1 << 16) - 1, f);
    buf[*len] = 0;
    fclose(f);
    while (*len && (buf[*len - 1] == '\n' || buf[*len - 1] == '\r'))
        buf[--*len] = 0;
    return buf;
}

static int dims_are(const int32_t *d, int a, int b, int c, int e)
{
    return d[0] == a && d[1] == b && d[2] == c && d[3] == e;
}

static void label_of(const gt_cudnn_plan_desc *d, char *out, size_t cap)
{
    gt_cudnn_sig_label(&d->sig, 0, out, cap);
}

/* ------------------------------------------------------------------ 1. real plans */

static void test_real_forward(void)
{
    size_t len;
    char *json = slurp_trimmed(datadir, "cudnn_plan_fwd_9.14.json", &len);
    if (!json)
        return;
    gt_cudnn_plan_desc d;
    char err[128] = "", label[256];
    CHECK(gt_cudnn_plan_decode(json, len, &d, err, sizeof err) == 0, "decode: %s", err);
    CHECK(d.is_conv && d.sig.op_kind == GT_CUDNN_OP_CONV_FWD, "conv forward (%u)", d.sig.op_kind);
    CHECK(d.cudnn_version == 91400 && d.engine_id == 38, "version %d engine %lld", d.cudnn_version,
          (long long)d.engine_id);
    CHECK(d.sig.nb_dims == 4 && dims_are(d.sig.x_dims, 32, 64, 56, 56), "x dims");
    CHECK(dims_are(d.sig.x_strides, 200704, 3136, 56, 1), "x strides");
    CHECK(dims_are(d.sig.w_dims, 64, 64, 3, 3) && dims_are(d.sig.y_dims, 32, 64, 56, 56), "w, y");
    CHECK(d.sig.pad[0] == 1 && d.sig.pad[1] == 1 && d.sig.stride[0] == 1 && d.sig.dilation[1] == 1,
          "pad/stride/dilation");
    CHECK(d.sig.dtype == 0 && d.sig.compute_dtype == 0, "float data, float math");
    CHECK(d.sig.format == 0 && d.sig.groups == 1 && d.sig.conv_mode == 1, "NCHW, 1 group, xcorr");
    CHECK(!strcmp(d.knobs, "TILE_SIZE=1 TILEK=0 STAGES=4 IDX_MODE=0 LDGC=2 SPECFILT=0"),
          "knobs '%s'", d.knobs);
    label_of(&d, label, sizeof label);
    CHECK(!strcmp(label, "conv_fwd 32x64x56x56 w64x64x3x3 pad1 str1 NCHW float"), "label '%s'",
          label);
    free(json);
}

static void test_real_backward(void)
{
    static const struct {
        const char *file;
        int op;
        int64_t engine;
        const char *label;
    } cases[] = {
        {"cudnn_plan_bwd_data_9.19.json", GT_CUDNN_OP_CONV_BWD_DATA, 71,
         "conv_bwd_data 64x512x7x7 w2048x512x1x1 pad0 str1 NCHW float"},
        {"cudnn_plan_bwd_filter_9.19.json", GT_CUDNN_OP_CONV_BWD_FILTER, 68,
         "conv_bwd_filter 64x512x7x7 w2048x512x1x1 pad0 str1 NCHW float"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        char *json = slurp_trimmed(datadir, cases[i].file, &len);
        if (!json)
            continue;
        gt_cudnn_plan_desc d;
        char label[256];
        CHECK(gt_cudnn_plan_decode(json, len, &d, NULL, 0) == 0, "%s decodes", cases[i].file);
        CHECK((int)d.sig.op_kind == cases[i].op && d.engine_id == cases[i].engine &&
                  d.cudnn_version == 91900,
              "%s: op %u engine %lld", cases[i].file, d.sig.op_kind, (long long)d.engine_id);
        /* dX/dW/dY name the tensors in the backward nodes: x is the activation, y the output */
        CHECK(dims_are(d.sig.x_dims, 64, 512, 7, 7) && dims_are(d.sig.y_dims, 64, 2048, 7, 7),
              "%s: x and y found under their gradient names", cases[i].file);
        label_of(&d, label, sizeof label);
        CHECK(!strcmp(label, cases[i].label), "%s: label '%s'", cases[i].file, label);
        free(json);
    }
}

/* ------------------------------------------------------------------ 2. variants and bad input */

#define TENSOR(name, dt, d0, d1, d2, d3, s0, s1, s2, s3)                                           \
    "{\"name\":\"" name "\",\"dataType\":\"CUDNN_DATA_" dt "\",\"dim\":[" #d0 "," #d1 "," #d2      \
    "," #d3 "],\"stride\":[" #s0 "," #s1 "," #s2 "," #s3 "],\"isVirtual\":false}"

static void test_variants(void)
{
    /* NHWC half input, 32 groups, dilation 2, float accumulation, stride 2,1 */
    static const char nhwc[] =
        "{\"cudnnVersion\":91900,\"operationGraph\":{\"finalizeMode\":\"CONV_FORWARD\","
        "\"tensors\":[" TENSOR("1", "HALF", 8, 256, 28, 28, 200704, 1, 7168, 256) "," TENSOR(
            "2", "HALF", 256, 8, 3, 3, 72, 1, 24,
            8) "," TENSOR("3", "HALF", 8, 256, 12, 26, 79872, 1, 6656,
                          256) "],"
                               "\"nodes\":[{\"operation\":\"CUDNN_BACKEND_OPERATION_CONVOLUTION_"
                               "FORWARD_DESCRIPTOR\","
                               "\"mode\":\"CUDNN_CROSS_CORRELATION\",\"mathPrec\":\"CUDNN_DATA_"
                               "FLOAT\",\"pad\":[0,1],"
                               "\"stride\":[2,1],\"dilation\":[2,2],\"X\":\"1\",\"W\":\"2\",\"Y\":"
                               "\"3\"}]},"
                               "\"engine\":{\"engineId\":7,\"knobChoices\":{}}}";
    gt_cudnn_plan_desc d;
    char label[256];
    CHECK(gt_cudnn_plan_decode(nhwc, sizeof nhwc - 1, &d, NULL, 0) == 0, "NHWC decodes");
    CHECK(d.sig.format == 1 && d.sig.groups == 32 && d.sig.dtype == 2 && d.sig.compute_dtype == 0,
          "NHWC %d groups %d dtype %d compute %d", d.sig.format, d.sig.groups, d.sig.dtype,
          d.sig.compute_dtype);
    CHECK(d.knobs[0] == 0 && d.engine_id == 7, "no knobs, engine 7");
    label_of(&d, label, sizeof label);
    CHECK(!strcmp(label, "conv_fwd 8x256x28x28 w256x8x3x3 pad0,1 str2,1 NHWC half dil2 g32 acc "
                         "float"),
          "label '%s'", label);

    /* conv fused with a pointwise op: conv_bias_act */
    static const char fused[] = "{\"operationGraph\":{\"tensors\":[" TENSOR(
        "1", "FLOAT", 1, 4, 8, 8, 256, 64, 8,
        1) "," TENSOR("2", "FLOAT", 4, 4, 1, 1, 4, 1, 1,
                      1) "," TENSOR("3", "FLOAT", 1, 4, 8, 8, 256, 64, 8,
                                    1) "],"
                                       "\"nodes\":[{\"operation\":\"CUDNN_BACKEND_OPERATION_"
                                       "CONVOLUTION_FORWARD_DESCRIPTOR\","
                                       "\"X\":\"1\",\"W\":\"2\",\"Y\":\"3\"},{\"operation\":"
                                       "\"CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR\"}]},"
                                       "\"engine\":{\"engineId\":1}}";
    CHECK(gt_cudnn_plan_decode(fused, sizeof fused - 1, &d, NULL, 0) == 0 && d.is_conv &&
              d.sig.op_kind == GT_CUDNN_OP_CONV_BIAS_ACT && d.n_nodes == 2,
          "fused conv+pointwise is conv_bias_act (op %u, %d nodes)", d.sig.op_kind, d.n_nodes);
    CHECK(d.sig.pad[0] == 0 && d.sig.stride[0] == 1 && d.sig.dilation[0] == 1,
          "missing conv params read as pad 0, stride 1, dilation 1");

    /* no convolution: a label from the graph */
    static const char matmul[] =
        "{\"operationGraph\":{\"finalizeMode\":\"MATMUL\",\"tensors\":[" TENSOR(
            "a", "HALF", 1, 8, 64, 32, 16384, 2048, 32,
            1) "," TENSOR("b", "HALF", 1, 8, 32, 16, 4096, 512, 16,
                          1) "],"
                             "\"nodes\":[{\"operation\":\"CUDNN_BACKEND_OPERATION_MATMUL_"
                             "DESCRIPTOR\"}]}}";
    CHECK(gt_cudnn_plan_decode(matmul, sizeof matmul - 1, &d, NULL, 0) == 0 && !d.is_conv,
          "matmul decodes, not a conv");
    CHECK(!strcmp(d.label, "MATMUL 1x8x64x32 1x8x32x16"), "matmul label '%s'", d.label);
    CHECK(d.engine_id == -1, "no engine: -1");

    /* 3-D convolution */
    static const char conv3d[] =
        "{\"operationGraph\":{\"finalizeMode\":\"CONV_FORWARD\",\"tensors\":["
        "{\"name\":\"x\",\"dataType\":\"CUDNN_DATA_BFLOAT16\",\"dim\":[2,16,8,32,32],"
        "\"stride\":[262144,16384,2048,64,1]},"
        "{\"name\":\"w\",\"dataType\":\"CUDNN_DATA_BFLOAT16\",\"dim\":[32,16,3,3,3],"
        "\"stride\":[432,27,9,3,1]},"
        "{\"name\":\"y\",\"dataType\":\"CUDNN_DATA_BFLOAT16\",\"dim\":[2,32,8,32,32],"
        "\"stride\":[524288,16384,2048,64,1]}],"
        "\"nodes\":[{\"operation\":\"CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR\","
        "\"mathPrec\":\"CUDNN_DATA_FLOAT\",\"pad\":[1,1,1],\"stride\":[1,1,1],"
        "\"dilation\":[1,1,1],\"X\":\"x\",\"W\":\"w\",\"Y\":\"y\"}]}}";
    CHECK(gt_cudnn_plan_decode(conv3d, sizeof conv3d - 1, &d, NULL, 0) == 0 && d.sig.nb_dims == 5,
          "3-D conv decodes");
    label_of(&d, label, sizeof label);
    CHECK(!strcmp(label, "conv_fwd 2x16x8x32x32 w32x16x3x3x3 pad1 str1 NCDHW bfloat16 acc float"),
          "3-D label '%s'", label);

    /* bad input: clear -1, never a crash (ASan watches the reads) */
    char err[128] = "";
    CHECK(gt_cudnn_plan_decode("", 0, &d, err, sizeof err) == -1 && err[0], "empty: -1");
    CHECK(gt_cudnn_plan_decode("[1,2]", 5, &d, err, sizeof err) == -1, "array: -1");
    CHECK(gt_cudnn_plan_decode("{\"engine\":{}}", 13, &d, err, sizeof err) == -1 &&
              strstr(err, "operationGraph"),
          "no graph: -1 (%s)", err);
    static const char odd[] =
        "{\"operationGraph\":{\"tensors\":{\"a\":1},\"nodes\":[{\"operation\":"
        "\"CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR\",\"X\":5,\"pad\":\"1\"}]},"
        "\"engine\":{\"engineId\":\"38\",\"knobChoices\":[1]}}";
    CHECK(gt_cudnn_plan_decode(odd, sizeof odd - 1, &d, NULL, 0) == 0 && !d.is_conv &&
              d.engine_id == -1 && !d.knobs[0],
          "wrong types are ignored, not trusted");
    size_t len;
    char *json = slurp_trimmed(datadir, "cudnn_plan_fwd_9.14.json", &len);
    int ok_prefixes = 0;
    for (size_t n = 0; json && n < len; n++) {
        char *copy = malloc(n ? n : 1); /* exact size: a read past the end is caught */
        memcpy(copy, json, n);
        ok_prefixes += gt_cudnn_plan_decode(copy, n, &d, NULL, 0) == 0;
        free(copy);
    }
    CHECK(ok_prefixes == 0, "%d truncated plans decoded as if whole", ok_prefixes);
    free(json);
}

/* ------------------------------------------------------------------ 3. traces, report and diff */

#define T0 1700000000000000000ull

typedef struct tracegen {
    gt_test_writer w;
    uint64_t t, corr, cupti_corr;
} tracegen;

typedef struct plan_spec {
    const char *json_file; /* a real plan's JSON */
    int op_kind;           /* what the recorder read from the plan (gt_cudnn_op) */
    int64_t engine;        /* engine id put into the JSON and the record */
    const char *knobs;     /* replaces the JSON's knobChoices object */
    uint64_t kernel_ns;
} plan_spec;

/* The real forward plan with its engine and knobs swapped: a second "cuDNN version". */
static char *plan_json(const plan_spec *ps, size_t *len)
{
    size_t n;
    char *base = slurp_trimmed(datadir, ps->json_file, &n);
    if (!base)
        return NULL;
    json_t *root = json_loads(base, 0, NULL);
    free(base);
    json_t *engine = json_object_get(root, "engine");
    json_object_set_new(engine, "engineId", json_integer(ps->engine));
    json_object_set_new(engine, "knobChoices", json_loads(ps->knobs, 0, NULL));
    char *out = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    *len = strlen(out);
    return out;
}

static void add_plan(tracegen *g, uint32_t plan_id, uint64_t graph, const plan_spec *ps)
{
    size_t jlen;
    char *json = plan_json(ps, &jlen);
    if (!json)
        return;
    static const char knobs_text[] = "2=1,13=0"; /* the recorder's numeric knobs, unused here */
    size_t klen = sizeof knobs_text - 1;
    gt_rec_cudnn_plan p;
    memset(&p, 0, sizeof p);
    p.plan = 0x7f0000000000ull + plan_id * 0x100;
    p.plan_id = plan_id;
    p.op_kind = (uint32_t)ps->op_kind;
    p.engine_global_index = ps->engine;
    p.numerical_notes = 1; /* tensor cores */
    p.op_graph = graph;
    p.dtype = 0;
    p.sig_id = 0; /* as the recorder writes backend plans */
    p.knobs_len = (uint32_t)klen;
    p.json_len = (uint32_t)jlen;
    size_t size = sizeof p + klen + jlen;
    unsigned char *body = malloc(size);
    memcpy(body, &p, sizeof p);
    memcpy(body + sizeof p, knobs_text, klen);
    memcpy(body + sizeof p + klen, json, jlen);
    CHECK(gt_test_writer_add(&g->w, GT_REC_CUDNN_PLAN, 0, body, (uint32_t)size) == 0, "add plan");
    free(body);
    free(json);
}

static void add_execute(tracegen *g, uint32_t plan_id, uint64_t kernel_ns)
{
    gt_rec_api_cudnn c;
    memset(&c, 0, sizeof c);
    c.c.t_begin_ns = g->t;
    c.c.t_end_ns = g->t + 20000;
    c.c.corr_id = ++g->corr;
    c.c.func = GT_FN_cudnnBackendExecute;
    c.plan = 0x7f0000000000ull + plan_id * 0x100;
    c.plan_id = plan_id;
    c.algo = -1;
    c.math_type = -1;
    c.cudnn_flags = GT_CUDNN_HEURISTIC;
    gt_test_writer_add(&g->w, GT_REC_API_CUDNN, 0, &c, sizeof c);
    gt_rec_gpu_kernel k; /* cuDNN's own launch: only external correlation ties it to the call */
    memset(&k, 0, sizeof k);
    k.start_ns = g->t + 5000;
    k.end_ns = k.start_ns + kernel_ns;
    k.corr_id = ++g->cupti_corr;
    k.name_id = 1;
    k.stream = 7;
    gt_test_writer_add(&g->w, GT_REC_GPU_KERNEL, 0, &k, sizeof k);
    gt_rec_gpu_ext_corr e = {c.c.corr_id, k.corr_id, GT_EXT_CORR_KIND_OURS, 0};
    gt_test_writer_add(&g->w, GT_REC_GPU_EXT_CORR, 0, &e, sizeof e);
    g->t = k.end_ns + 10000;
}

/* Two ops (3x3 and 1x1 forward) run `steps` times; `order` 0 = 3x3 first, 1 = 1x1 first. */
static int write_trace(const char *path, int cudnn_version, const plan_spec *p3x3,
                       const plan_spec *p1x1, int order, uint32_t first_plan_id)
{
    tracegen g;
    memset(&g, 0, sizeof g);
    g.t = T0 + 1000000;
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = 4242;
    h.ppid = 1;
    h.start_realtime_ns = (int64_t)T0;
    h.rank = -1;
    snprintf(h.host, sizeof h.host, "testhost");
    h.runtime.driver_version = h.runtime.runtime_version = 13000;
    h.runtime.cudnn_version = cudnn_version;
    h.runtime.cudnn_cudart_version = 13000;
    h.runtime.device_count = 1;
    h.runtime.cupti_state = GT_CUPTI_ACTIVE;
    snprintf(h.runtime.devices[0].name, sizeof h.runtime.devices[0].name, "NVIDIA H200");
    h.runtime.devices[0].cc_major = 9;
    h.runtime.devices[0].sm_count = 132;
    static const char cmd[] = "conv_backend\0heuristic";
    if (gt_test_writer_open(&g.w, path, &h, "/bin/conv_backend", cmd, sizeof cmd) != 0)
        return -1;
    gt_test_writer_set_tid(&g.w, 100);
    gt_test_writer_string(&g.w, 1, "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32");
    const plan_spec *ops[2] = {order ? p1x1 : p3x3, order ? p3x3 : p1x1};
    for (int i = 0; i < 2; i++)
        add_plan(&g, first_plan_id + (uint32_t)i, 0xabc000 + (uint64_t)(order * 16 + i), ops[i]);
    for (int step = 0; step < 5; step++)
        for (int i = 0; i < 2; i++)
            add_execute(&g, first_plan_id + (uint32_t)i, ops[i]->kernel_ns);
    return gt_test_writer_close(&g.w);
}

static json_t *run_json(int (*fn)(int, char **), const char *cmd, const char *a, const char *b,
                        const char *out)
{
    char *argv[] = {(char *)cmd, "--json", (char *)a, (char *)b};
    int rc = run_captured(fn, b ? 4 : 3, argv, out);
    CHECK(rc == 0, "%s exit %d", cmd, rc);
    json_error_t err;
    json_t *root = json_load_file(out, 0, &err);
    CHECK(root != NULL, "%s JSON parses: %s", cmd, err.text);
    return root;
}

static const json_t *op_named(const json_t *ops, const char *sig)
{
    for (size_t i = 0; i < json_array_size(ops); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(ops, i), "signature")), sig))
            return json_array_get(ops, i);
    return NULL;
}

static void test_traces(void)
{
    static const char sig3[] = "conv_fwd 32x64x56x56 w64x64x3x3 pad1 str1 NCHW float";
    static const char sig1[] = "conv_bwd_data 64x512x7x7 w2048x512x1x1 pad0 str1 NCHW float";
    const char *f1 = "cudnn_plan_fwd_9.14.json";
    plan_spec a3 = {f1, GT_CUDNN_OP_CONV_FWD, 38, "{\"CUDNN_KNOB_TYPE_STAGES\":4}", 400000};
    plan_spec b3 = a3; /* engine changed */
    b3.engine = 67;
    b3.kernel_ns = 200000;
    plan_spec a1 = {"cudnn_plan_bwd_data_9.19.json", GT_CUDNN_OP_CONV_BWD_DATA, 58,
                    "{\"CUDNN_KNOB_TYPE_WORKSPACE\":2}", 100000};
    plan_spec b1 = a1;
    b1.knobs = "{\"CUDNN_KNOB_TYPE_WORKSPACE\":0}"; /* same engine, other knobs */
    b1.kernel_ns = 150000;
    char pa[600], pb[600], out[600];
    snprintf(pa, sizeof pa, "%s/a_914.gtrace", workdir);
    snprintf(pb, sizeof pb, "%s/b_919.gtrace", workdir);
    CHECK(write_trace(pa, 91400, &a3, &a1, 0, 1) == 0, "write A");
    CHECK(write_trace(pb, 91900, &b3, &b1, 1, 40) == 0, "write B (other order and plan ids)");

    /* report: shapes as signatures, GPU time joined through external correlation */
    snprintf(out, sizeof out, "%s/report_a.json", workdir);
    json_t *rep = run_json(cmd_report, "report", pa, NULL, out);
    const json_t *procs = json_object_get(rep, "processes");
    const json_t *cudnn = json_object_get(json_array_get(procs, 0), "cudnn");
    CHECK(json_array_size(cudnn) == 2, "2 cuDNN ops in A, got %zu", json_array_size(cudnn));
    const json_t *op3 = op_named(cudnn, sig3);
    CHECK(op3 != NULL && op_named(cudnn, sig1) != NULL, "A has '%s' and '%s'", sig3, sig1);
    double gpu3 = json_real_value(json_object_get(op3, "gpu_ms"));
    CHECK(gpu3 > 1.99 && gpu3 < 2.01, "GPU time of the 3x3 op: %.3f ms (5 x 0.4)", gpu3);
    const json_t *chosen = json_object_get(op3, "chosen");
    CHECK(!strcmp(json_string_value(json_object_get(chosen, "engine")), "engine 38"), "engine 38");
    const char *notes = json_string_value(json_object_get(chosen, "notes"));
    CHECK(notes && strstr(notes, "tensor cores (TF32)") && strstr(notes, "STAGES=4"), "notes '%s'",
          notes ? notes : "(null)");
    json_decref(rep);

    /* diff: matched by signature although order, plan ids and graphs differ */
    snprintf(out, sizeof out, "%s/diff.json", workdir);
    json_t *diff = run_json(cmd_diff, "diff", pa, pb, out);
    const json_t *ops = json_object_get(json_array_get(json_object_get(diff, "pairs"), 0), "cudnn");
    CHECK(json_array_size(ops) == 2, "2 ops matched by signature, got %zu", json_array_size(ops));
    const json_t *d3 = op_named(ops, sig3);
    const json_t *d1 = op_named(ops, sig1);
    CHECK(d3 && json_is_true(json_object_get(d3, "changed")) &&
              json_is_false(json_object_get(d3, "config_changed")),
          "3x3: engine changed");
    CHECK(d3 && json_object_get(d3, "a") != json_null() && json_object_get(d3, "b") != json_null(),
          "3x3 present in both runs");
    double r3 = json_real_value(json_object_get(d3, "gpu_ratio"));
    CHECK(r3 > 0.49 && r3 < 0.51, "3x3 GPU ratio %.3f (0.2/0.4)", r3);
    CHECK(d1 && json_is_false(json_object_get(d1, "changed")) &&
              json_is_true(json_object_get(d1, "config_changed")),
          "1x1: same engine, knobs changed");
    double r1 = json_real_value(json_object_get(d1, "gpu_ratio"));
    CHECK(r1 > 1.49 && r1 < 1.51, "1x1 GPU ratio %.3f", r1);
    json_decref(diff);

    /* text: both marks and the knobs behind '~' */
    char *argv[] = {"diff", pa, pb};
    setenv("NO_COLOR", "1", 1);
    snprintf(out, sizeof out, "%s/diff.txt", workdir);
    CHECK(run_captured(cmd_diff, 3, argv, out) == 0, "text diff");
    size_t len;
    char *txt = slurp_trimmed(workdir, "diff.txt", &len);
    CHECK(txt && strstr(txt, "*  conv_fwd 32x64x56x56") && strstr(txt, "~  conv_bwd_data") &&
              strstr(txt, "WORKSPACE=2") && strstr(txt, "WORKSPACE=0") && strstr(txt, "0.50x"),
          "text diff marks '*' and '~' with the knobs:\n%s", txt ? txt : "");
    free(txt);
}

/* A plan record whose json_len claims more bytes than the record holds: ignored, no crash. */
static void test_damaged_record(void)
{
    char path[600], out[600];
    snprintf(path, sizeof path, "%s/damaged.gtrace", workdir);
    tracegen g;
    memset(&g, 0, sizeof g);
    g.t = T0 + 1000;
    gt_file_header h;
    memset(&h, 0, sizeof h);
    h.pid = 1;
    h.rank = -1;
    h.start_realtime_ns = (int64_t)T0;
    CHECK(gt_test_writer_open(&g.w, path, &h, "/bin/x", "x", 1) == 0, "open");
    gt_test_writer_set_tid(&g.w, 1);
    gt_test_writer_string(&g.w, 1, "conv_kernel");
    gt_rec_cudnn_plan p;
    memset(&p, 0, sizeof p);
    p.plan_id = 1;
    p.op_kind = GT_CUDNN_OP_CONV_FWD;
    p.engine_global_index = 5;
    p.json_len = 100000; /* but nothing follows */
    gt_test_writer_add(&g.w, GT_REC_CUDNN_PLAN, 0, &p, sizeof p);
    add_execute(&g, 1, 1000);
    gt_test_writer_close(&g.w);
    snprintf(out, sizeof out, "%s/damaged.json", workdir);
    json_t *rep = run_json(cmd_report, "report", path, NULL, out);
    const json_t *cudnn =
        json_object_get(json_array_get(json_object_get(rep, "processes"), 0), "cudnn");
    const char *sig = json_string_value(json_object_get(json_array_get(cudnn, 0), "signature"));
    CHECK(sig && strstr(sig, "graph#"), "damaged JSON falls back to the graph key: %s",
          sig ? sig : "(none)");
    json_decref(rep);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_cudnn_json DATADIR WORKDIR\n");
        return 2;
    }
    datadir = argv[1];
    workdir = argv[2];
    test_real_forward();
    test_real_backward();
    test_variants();
    test_traces();
    test_damaged_record();
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    else
        printf("test_cudnn_json: all passed\n");
    return failures ? 1 : 0;
}
