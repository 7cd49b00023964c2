/* model_cudnn.c — cuDNN operations: wrapped calls grouped by what they ran, plans and their JSON,
 * convolution signatures, the engine or algorithm chosen per op, autotuning. */
#include "model_cudnn.h"

static const char *legacy_algo_name(int op_kind, int algo)
{
    static const char *const fwd[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    static const char *const bwd_data[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                           "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *const bwd_filter[] = {
        "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    if (algo < 0)
        return "?";
    if ((op_kind == GT_CUDNN_OP_CONV_FWD || op_kind == GT_CUDNN_OP_CONV_BIAS_ACT) && algo < 8)
        return fwd[algo];
    if (op_kind == GT_CUDNN_OP_CONV_BWD_DATA && algo < 6)
        return bwd_data[algo];
    if (op_kind == GT_CUDNN_OP_CONV_BWD_FILTER && algo < 7)
        return bwd_filter[algo];
    return "?";
}

static uint32_t raw_for(pass_state *s, const gt_rec_api_cudnn *c)
{
    uint32_t autotune = c->cudnn_flags & GT_CUDNN_AUTOTUNE;
    uint64_t key = gt_mix64(((uint64_t)c->c.func << 48) ^ ((uint64_t)c->plan_id << 24) ^
                            ((uint64_t)c->sig_id) ^ ((uint64_t)(uint32_t)c->algo << 40) ^
                            ((uint64_t)(uint32_t)c->math_type << 56) ^ ((uint64_t)autotune << 63));
    uint32_t i = gt_map_get(&s->raw_by_key, key);
    if (i != UINT32_MAX)
        return i;
    gt_grow((void **)&s->raw, &s->cap_raw, s->n_raw, sizeof *s->raw);
    i = (uint32_t)s->n_raw++;
    raw_cudnn *r = &s->raw[i];
    r->func = c->c.func;
    r->plan_id = c->plan_id;
    r->sig_id = c->sig_id;
    r->algo = c->algo;
    r->math_type = c->math_type;
    r->flags = c->cudnn_flags;
    r->stack_id = c->c.stack_id;
    r->first_ns = c->c.t_begin_ns;
    r->perf_first_algo = -1;
    gt_map_put(&s->raw_by_key, key, i);
    return i;
}

/* Batch norm, RNN, CTC, grid sampling: their calls count in the API table and their kernels link
 * to them, but the cuDNN table is about convolutions (engines, algorithms, autotuning). */
static int is_other_op(uint32_t func)
{
    return func >= GT_FN_cudnnBatchNormalizationForwardTraining &&
           func <= GT_FN_cudnnSpatialTfSamplerBackward;
}

static void on_api_cudnn(gt_proc *p, pass_state *s, const gt_rec_api_cudnn *c, uint64_t d)
{
    if (is_other_op(c->c.func))
        return;
    p->cudnn_calls_seen++;
    if (c->c.func == GT_FN_cudnnBackendFinalize ||
        c->c.func == GT_FN_cudnnBackendDestroyDescriptor ||
        c->c.func == GT_FN_cudnnSetConvolutionMathType)
        return;
    uint32_t i = raw_for(s, c);
    s->raw[i].count++;
    s->raw[i].api_ns += d;
    if (c->c.t_end_ns > s->raw[i].last_ns)
        s->raw[i].last_ns = c->c.t_end_ns;
    s->raw[i].flags |= c->cudnn_flags & GT_CUDNN_HEURISTIC;
    md_call_agg_set(s, c->c.corr_id, i); /* GPU time joins through external correlation */
}

/* Backend plans carry their JSON after the knobs text; the recorder leaves sig_id 0, so the shape
 * key is decoded here, offline (cudnn_json.c). Convolution plans get a conv signature of their own
 * (ids with the top bit set never clash with the recorder's legacy ids). */
static void decode_plan_json(pass_state *s, plan_info *pi, const gt_record *r)
{
    const gt_rec_cudnn_plan *pl = &pi->rec;
    size_t tail = r->body_size > sizeof *pl ? r->body_size - sizeof *pl : 0;
    if (!pl->json_len || (uint64_t)pl->knobs_len + pl->json_len > tail)
        return;
    const char *json = (const char *)r->body + sizeof *pl + pl->knobs_len;
    gt_cudnn_plan_desc d;
    if (gt_cudnn_plan_decode(json, pl->json_len, &d, NULL, 0) != 0)
        return;
    pi->knobs = d.knobs[0] ? gt_xstrdup(d.knobs) : NULL;
    if (pl->sig_id)
        return;
    if (!d.is_conv) {
        pi->label = d.label[0] ? gt_xstrdup(d.label) : NULL;
        return;
    }
    d.sig.sig_id = 0x80000000u | pl->plan_id;
    if (gt_map_get(&s->sig_by_id, d.sig.sig_id) == UINT32_MAX) {
        gt_grow((void **)&s->sigs, &s->cap_sigs, s->n_sigs, sizeof *s->sigs);
        s->sigs[s->n_sigs] = d.sig;
        gt_map_put(&s->sig_by_id, d.sig.sig_id, (uint32_t)s->n_sigs++);
    }
    pi->rec.sig_id = d.sig.sig_id;
    if (pi->rec.op_kind == GT_CUDNN_OP_UNKNOWN)
        pi->rec.op_kind = d.sig.op_kind;
}

/* Pass 1: a wrapped cuDNN call (after model_calls.c counted it as a call). */
void md_on_api_cudnn(gt_proc *p, pass_state *s, const gt_record *r)
{
    gt_rec_api_cudnn c;
    gt_body_copy(&c, sizeof c, r);
    uint64_t d = c.c.t_end_ns > c.c.t_begin_ns ? c.c.t_end_ns - c.c.t_begin_ns : 0;
    on_api_cudnn(p, s, &c, d);
}

/* Pass 1: a plan (GT_REC_CUDNN_PLAN), once per plan id, numbered by its op graph. */
void md_on_cudnn_plan(pass_state *s, const gt_record *r)
{
    gt_rec_cudnn_plan pl;
    gt_body_copy(&pl, sizeof pl, r);
    if (gt_map_get(&s->plan_by_id, pl.plan_id) != UINT32_MAX)
        return;
    gt_grow((void **)&s->plans, &s->cap_plans, s->n_plans, sizeof *s->plans);
    uint32_t g = gt_map_get(&s->graph_ord, pl.op_graph);
    if (g == UINT32_MAX) {
        g = (uint32_t)s->graph_ord.n;
        gt_map_put(&s->graph_ord, pl.op_graph, g);
    }
    s->plans[s->n_plans] = (plan_info){pl, g, NULL, NULL};
    decode_plan_json(s, &s->plans[s->n_plans], r);
    gt_map_put(&s->plan_by_id, pl.plan_id, (uint32_t)s->n_plans++);
}

/* Pass 1: a legacy convolution's signature (GT_REC_CUDNN_CONV_SIG), once per id. */
void md_on_cudnn_sig(pass_state *s, const gt_record *r)
{
    gt_rec_cudnn_conv_sig sg;
    gt_body_copy(&sg, sizeof sg, r);
    if (gt_map_get(&s->sig_by_id, sg.sig_id) != UINT32_MAX)
        return;
    gt_grow((void **)&s->sigs, &s->cap_sigs, s->n_sigs, sizeof *s->sigs);
    s->sigs[s->n_sigs] = sg;
    gt_map_put(&s->sig_by_id, sg.sig_id, (uint32_t)s->n_sigs++);
}

static void sig_text(const gt_rec_cudnn_conv_sig *g, int op_kind, char *out, size_t cap)
{
    gt_cudnn_sig_label(g, op_kind, out, cap); /* shared with the plan JSON decoder */
}

/* Key of a plan without a conv signature: its JSON label, else its graph's order (one run only). */
static void plan_fallback_text(const plan_info *pl, int op_kind, char *out, size_t cap)
{
    if (pl->label)
        snprintf(out, cap, "%s", pl->label);
    else
        snprintf(out, cap, "%s %s graph#%u", gt_cudnn_op_name(op_kind),
                 gt_cudnn_dtype_name((int)pl->rec.dtype), pl->graph_ord);
}

static int legacy_op_of(uint32_t func)
{
    switch (func) {
    case GT_FN_cudnnConvolutionForward:
    case GT_FN_cudnnFindConvolutionForwardAlgorithm:
    case GT_FN_cudnnFindConvolutionForwardAlgorithmEx:
    case GT_FN_cudnnGetConvolutionForwardAlgorithm_v7:
        return GT_CUDNN_OP_CONV_FWD;
    case GT_FN_cudnnConvolutionBiasActivationForward:
        return GT_CUDNN_OP_CONV_BIAS_ACT;
    case GT_FN_cudnnConvolutionBackwardData:
    case GT_FN_cudnnFindConvolutionBackwardDataAlgorithm:
    case GT_FN_cudnnFindConvolutionBackwardDataAlgorithmEx:
    case GT_FN_cudnnGetConvolutionBackwardDataAlgorithm_v7:
        return GT_CUDNN_OP_CONV_BWD_DATA;
    case GT_FN_cudnnConvolutionBackwardFilter:
    case GT_FN_cudnnFindConvolutionBackwardFilterAlgorithm:
    case GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx:
    case GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7:
        return GT_CUDNN_OP_CONV_BWD_FILTER;
    default:
        return GT_CUDNN_OP_UNKNOWN;
    }
}

static int is_find(uint32_t f)
{
    return f >= GT_FN_cudnnFindConvolutionForwardAlgorithm &&
           f <= GT_FN_cudnnFindConvolutionBackwardFilterAlgorithmEx;
}

static int is_get(uint32_t f)
{
    return f >= GT_FN_cudnnGetConvolutionForwardAlgorithm_v7 &&
           f <= GT_FN_cudnnGetConvolutionBackwardFilterAlgorithm_v7;
}

/* The perf table that follows a Find or Get_v7 call (GT_REC_CUDNN_PERF): Find's entries are
 * cuDNN's own timings of each algorithm, Get_v7's first entry is the heuristics' pick. */
void md_on_cudnn_perf(pass_state *s, const gt_record *r)
{
    gt_rec_cudnn_perf h;
    if (r->body_size < sizeof h)
        return;
    memcpy(&h, r->body, sizeof h);
    uint32_t i = md_call_agg(s, h.corr_id);
    if (i == UINT32_MAX || i >= s->n_raw)
        return;
    raw_cudnn *raw = &s->raw[i];
    size_t room = (r->body_size - sizeof h) / sizeof(gt_cudnn_perf_entry);
    size_t n = h.count < room ? h.count : room;
    raw->perf_tables++;
    for (size_t k = 0; k < n; k++) {
        gt_cudnn_perf_entry e;
        memcpy(&e, (const unsigned char *)r->body + sizeof h + k * sizeof e, sizeof e);
        if (e.status != 0 || e.algo < 0 || e.algo >= GT_PERF_ALGOS)
            continue;
        if (raw->perf_first_algo < 0)
            raw->perf_first_algo = e.algo;
        if (is_find(raw->func) && e.time_ms > 0 &&
            (raw->perf_ms[e.algo] <= 0 || e.time_ms < raw->perf_ms[e.algo]))
            raw->perf_ms[e.algo] = e.time_ms; /* the best of repeated Finds */
    }
}

static gt_cudnn_opstat *op_for(gt_proc *p, size_t *cap, const char *signature, int op_kind)
{
    for (size_t i = 0; i < p->n_cudnn; i++)
        if (!strcmp(p->cudnn[i].signature, signature))
            return &p->cudnn[i];
    gt_grow((void **)&p->cudnn, cap, p->n_cudnn, sizeof *p->cudnn);
    gt_cudnn_opstat *op = &p->cudnn[p->n_cudnn++];
    memset(op, 0, sizeof *op);
    op->signature = gt_xstrdup(signature);
    op->op_kind = op_kind;
    op->dtype = -1;
    op->chosen = -1;
    return op;
}

static gt_cudnn_choice *choice_for(gt_cudnn_opstat *op, const char *text, const char *notes, int tc)
{
    for (int i = 0; i < op->n_choices; i++) /* backend notes carry the knobs: a config each */
        if (!strcmp(op->choices[i].text, text) && !strcmp(op->choices[i].notes, notes))
            return &op->choices[i];
    int i = op->n_choices < GT_MAX_CHOICES ? op->n_choices++ : GT_MAX_CHOICES - 1;
    gt_cudnn_choice *c = &op->choices[i];
    if (!c->text) {
        c->text = gt_xstrdup(text);
        c->notes = gt_xstrdup(notes);
        c->tensor_cores = tc;
    }
    return c;
}

static const gt_rec_cudnn_conv_sig *sig_get(pass_state *s, uint32_t id)
{
    uint32_t i = id ? gt_map_get(&s->sig_by_id, id) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : &s->sigs[i];
}

/* The op signature a group of calls ran: its conv signature, its plan's label, or its id. */
static const plan_info *raw_signature(pass_state *s, const raw_cudnn *r, char *sig, size_t cap,
                                      int *op_kind, const gt_rec_cudnn_conv_sig **conv)
{
    uint32_t pi = r->plan_id ? gt_map_get(&s->plan_by_id, r->plan_id) : UINT32_MAX;
    const plan_info *pl = pi == UINT32_MAX ? NULL : &s->plans[pi];
    *op_kind = pl ? (int)pl->rec.op_kind : legacy_op_of(r->func);
    const gt_rec_cudnn_conv_sig *g = sig_get(s, pl ? pl->rec.sig_id : r->sig_id);
    if (g)
        sig_text(g, *op_kind, sig, cap);
    else if (pl)
        plan_fallback_text(pl, *op_kind, sig, cap);
    else
        snprintf(sig, cap, "%s sig#%u", gt_cudnn_op_name(*op_kind), r->sig_id);
    *conv = g;
    return pl;
}

static void note_autotune_span(gt_cudnn_opstat *op, const raw_cudnn *r)
{
    if (!op->autotune_first_ns || r->first_ns < op->autotune_first_ns)
        op->autotune_first_ns = r->first_ns;
    if (r->last_ns > op->autotune_last_ns)
        op->autotune_last_ns = r->last_ns;
}

static double trial_ms(const gt_cudnn_choice *c)
{
    return c->autotune_execs && c->autotune_gpu_ns
               ? (double)c->autotune_gpu_ns / 1e6 / (double)c->autotune_execs
               : -1;
}

/* Backend autotuning: each candidate's trial kernels, per run. The autotuner tries the
 * heuristics' candidates in their order, so the first one tried is what heuristics alone run. */
static void timed_from_trials(gt_cudnn_opstat *op)
{
    if (!op->autotuned || op->chosen < 0 || op->timed_source != GT_TIMED_NONE)
        return;
    const gt_cudnn_choice *win = &op->choices[op->chosen], *first = &op->choices[0];
    if (trial_ms(win) < 0 || trial_ms(first) < 0)
        return;
    op->timed_source = GT_TIMED_TRIAL_KERNELS;
    for (int j = 0; j < op->n_choices; j++)
        op->timed_candidates += trial_ms(&op->choices[j]) >= 0;
    op->timed_winner_ms = trial_ms(win);
    op->timed_heuristic_ms = trial_ms(first);
    snprintf(op->timed_winner, sizeof op->timed_winner, "%s", win->text);
    snprintf(op->timed_heuristic, sizeof op->timed_heuristic, "%s", first->text);
}

/* Legacy Find: cuDNN's table times every algorithm; the winner is the algorithm the program
 * ran most (else the fastest), the heuristics' pick is Get_v7's first entry when it was asked. */
static void timed_from_perf_tables(gt_proc *p, pass_state *s)
{
    char sig[256];
    for (size_t i = 0; i < s->n_raw; i++) {
        const raw_cudnn *r = &s->raw[i];
        if (!r->perf_tables || (!is_find(r->func) && !is_get(r->func)))
            continue;
        int op_kind;
        const gt_rec_cudnn_conv_sig *g;
        raw_signature(s, r, sig, sizeof sig, &op_kind, &g);
        size_t cap = p->n_cudnn;
        gt_cudnn_opstat *op = op_for(p, &cap, sig, op_kind); /* built above: found, not added */
        if (is_get(r->func)) {
            if (r->perf_first_algo >= 0)
                snprintf(op->timed_heuristic, sizeof op->timed_heuristic, "%s",
                         legacy_algo_name(op_kind, r->perf_first_algo));
            continue;
        }
        int best = -1, used = -1;
        op->timed_candidates = 0;
        for (int a = 0; a < GT_PERF_ALGOS; a++) {
            if (r->perf_ms[a] <= 0)
                continue;
            op->timed_candidates++;
            if (best < 0 || r->perf_ms[a] < r->perf_ms[best])
                best = a;
            if (op->chosen >= 0 &&
                !strcmp(op->choices[op->chosen].text, legacy_algo_name(op_kind, a)))
                used = a;
        }
        if (best < 0)
            continue;
        int win = used >= 0 ? used : best;
        op->timed_source = GT_TIMED_FIND_TABLE;
        op->timed_winner_ms = r->perf_ms[win];
        snprintf(op->timed_winner, sizeof op->timed_winner, "%s", legacy_algo_name(op_kind, win));
    }
    for (size_t i = 0; i < p->n_cudnn; i++) { /* the pick's time, once both tables are read */
        gt_cudnn_opstat *op = &p->cudnn[i];
        if (op->timed_source != GT_TIMED_FIND_TABLE || !op->timed_heuristic[0])
            continue;
        for (size_t k = 0; k < s->n_raw; k++) {
            const raw_cudnn *r = &s->raw[k];
            int op_kind;
            const gt_rec_cudnn_conv_sig *g;
            if (!is_find(r->func) || !r->perf_tables)
                continue;
            raw_signature(s, r, sig, sizeof sig, &op_kind, &g);
            for (int a = 0; a < GT_PERF_ALGOS && !strcmp(sig, op->signature); a++)
                if (r->perf_ms[a] > 0 && !strcmp(legacy_algo_name(op_kind, a), op->timed_heuristic))
                    op->timed_heuristic_ms = r->perf_ms[a];
        }
    }
}

/* "32x64x56x56": the input's dims, what a new input shape changes. */
static void shape_text(const gt_rec_cudnn_conv_sig *g, char *out, size_t cap)
{
    size_t u = 0;
    out[0] = 0;
    for (int d = 0; d < g->nb_dims && d < 8 && u < cap; d++)
        u += (size_t)snprintf(out + u, cap - u, "%s%d", d ? "x" : "", g->x_dims[d]);
}

/* Autotuning only from its evidence (issue 29 item 5): a Find call, two plans or more tried as
 * trials, or trials called from an autotuner. The recorder flags an execute as a trial when an
 * event was recorded before it (benchmark mode brackets each candidate with events), and
 * PyTorch records events for other reasons too: one flagged plan, never a second, is the op's
 * first execution (lazy module loading, plan building), counted as an execution. */
static void confirm_autotuning(gt_proc *p, gt_cudnn_opstat *op)
{
    if (!op->autotuned || op->find_calls || op->autotuner_frames)
        return;
    int tried = 0;
    for (int j = 0; j < op->n_choices; j++)
        tried += op->choices[j].autotune_execs > 0;
    if (tried >= 2)
        return;
    op->autotuned = 0;
    op->heuristic = 1; /* one plan, as the heuristics gave it */
    op->first_use_first_ns = op->autotune_first_ns;
    op->autotune_first_ns = op->autotune_last_ns = 0;
    for (int j = 0; j < op->n_choices; j++) {
        gt_cudnn_choice *c = &op->choices[j];
        uint64_t api = c->autotune_ns - c->autotune_gpu_ns;
        op->first_use_execs += c->autotune_execs;
        op->first_use_ns += c->autotune_ns;
        c->execs += c->autotune_execs;
        c->gpu_ns += c->autotune_gpu_ns;
        c->api_ns += api;
        p->autotune_ns -= api < p->autotune_ns ? api : p->autotune_ns;
        c->autotune_execs = c->autotune_ns = c->autotune_gpu_ns = 0;
    }
}

uint64_t md_cudnn_trials_end(gt_proc *p, pass_state *s, uint32_t func, uint32_t plan_id,
                             uint32_t sig_id)
{
    raw_cudnn r = {.func = func, .plan_id = plan_id, .sig_id = sig_id};
    char sig[256];
    int op_kind;
    const gt_rec_cudnn_conv_sig *g;
    raw_signature(s, &r, sig, sizeof sig, &op_kind, &g);
    for (size_t i = 0; i < p->n_cudnn; i++)
        if (!strcmp(p->cudnn[i].signature, sig))
            return p->cudnn[i].autotuned ? p->cudnn[i].autotune_trials_end_ns : 0;
    return 0;
}

void md_build_cudnn_ops(gt_proc *p, pass_state *s)
{
    size_t cap = 0;
    char sig[256], text[96], notes[320];
    for (size_t i = 0; i < s->n_raw; i++) {
        raw_cudnn *r = &s->raw[i];
        int op_kind;
        const gt_rec_cudnn_conv_sig *g;
        const plan_info *pl = raw_signature(s, r, sig, sizeof sig, &op_kind, &g);
        gt_cudnn_opstat *op = op_for(p, &cap, sig, op_kind);
        op->dtype = g ? g->dtype : pl ? (int)pl->rec.dtype : op->dtype;
        if (g && g->x_dims[0] > 0)
            op->batch = g->x_dims[0];
        if (g && !op->x_shape[0])
            shape_text(g, op->x_shape, sizeof op->x_shape);
        if (!op->stack_id)
            op->stack_id = r->stack_id;
        if (is_find(r->func)) {
            note_autotune_span(op, r);
            op->autotuned = 1;
            op->legacy = 1;
            op->find_calls += r->count;
            op->find_ns += r->api_ns + r->gpu_ns;
            p->autotune_ns += r->api_ns;
            continue;
        }
        if (is_get(r->func)) {
            op->heuristic = 1;
            op->legacy = 1;
            op->get_calls += r->count;
            op->get_ns += r->api_ns;
            continue;
        }
        int tc;
        if (pl) {
            gt_cudnn_notes_text(pl->rec.numerical_notes, 1, notes, sizeof notes);
            snprintf(text, sizeof text, "engine %lld", (long long)pl->rec.engine_global_index);
            tc = (int)(pl->rec.numerical_notes & 1u);
            size_t u = strlen(notes);
            if (tc && pl->rec.dtype == 0) /* float data on tensor cores runs as TF32 */
                u += (size_t)snprintf(notes + u, sizeof notes - u, " (TF32)");
            if (pl->knobs && u < sizeof notes) /* the engine config: same engine, other knobs */
                snprintf(notes + u, sizeof notes - u, "%s%s", u ? "; " : "", pl->knobs);
        } else {
            op->legacy = 1;
            tc = r->math_type == 1 || r->math_type == 2;
            const char *an = legacy_algo_name(op_kind, r->algo);
            const char *family = strstr(an, "WINOGRAD") ? "Winograd"
                                 : strstr(an, "FFT")    ? "FFT"
                                                        : "";
            snprintf(text, sizeof text, "%s", an);
            snprintf(notes, sizeof notes, "%s%s%s", tc ? "tensor-op math" : "",
                     tc && family[0] ? ", " : "", family);
        }
        gt_cudnn_choice *c = choice_for(op, text, notes, tc);
        if (r->flags & GT_CUDNN_AUTOTUNE) {
            op->autotuned = 1;
            op->autotuner_frames |= gt_call_site_is_autotuner(gt_proc_call_site(p, r->stack_id));
            note_autotune_span(op, r);
            c->autotune_execs += r->count;
            c->autotune_ns += r->api_ns + r->gpu_ns;
            c->autotune_gpu_ns += r->gpu_ns;
            if (r->last_ns > c->autotune_last_ns)
                c->autotune_last_ns = r->last_ns;
            p->autotune_ns += r->api_ns;
        } else {
            c->execs += r->count;
            c->gpu_ns += r->gpu_ns;
            c->api_ns += r->api_ns;
        }
        if (r->flags & GT_CUDNN_HEURISTIC)
            op->heuristic = 1;
    }
    /* plans per op (several plans of one op = autotuning candidates) */
    for (size_t i = 0; i < s->n_plans; i++) {
        const plan_info *pl = &s->plans[i];
        const gt_rec_cudnn_conv_sig *g = sig_get(s, pl->rec.sig_id);
        if (g)
            sig_text(g, (int)pl->rec.op_kind, sig, sizeof sig);
        else
            plan_fallback_text(pl, (int)pl->rec.op_kind, sig, sizeof sig);
        for (size_t j = 0; j < p->n_cudnn; j++)
            if (!strcmp(p->cudnn[j].signature, sig))
                p->cudnn[j].plans++;
    }
    for (size_t i = 0; i < p->n_cudnn; i++) {
        gt_cudnn_opstat *op = &p->cudnn[i];
        uint64_t best = 0;
        confirm_autotuning(p, op);
        for (int j = 0; j < op->n_choices; j++)
            if (op->choices[j].execs > best) {
                best = op->choices[j].execs;
                op->chosen = j;
            }
        if (op->legacy && !op->autotuned && op->n_choices)
            op->heuristic = 1; /* legacy conv without Find: the app picked an algorithm itself */
        for (int j = 0; op->autotuned && j < op->n_choices; j++)
            if (j != op->chosen && op->choices[j].autotune_last_ns > op->autotune_trials_end_ns)
                op->autotune_trials_end_ns = op->choices[j].autotune_last_ns;
        op->timed_winner_ms = op->timed_heuristic_ms = -1;
        timed_from_trials(op);
    }
    timed_from_perf_tables(p, s);
}

/* When no cuDNN call was seen, list convolution kernels by inferred family (issue 10). */
void md_build_inferred_ops(gt_proc *p)
{
    size_t cap = 0;
    char sig[160];
    for (size_t i = 0; i < p->n_kernels; i++) {
        const gt_kernel_agg *k = &p->kernels[i];
        if (!k->conv_like || k->is_nccl)
            continue;
        snprintf(sig, sizeof sig, "kernel %.140s", k->name);
        gt_cudnn_opstat *op = op_for(p, &cap, sig, GT_CUDNN_OP_UNKNOWN);
        op->inferred = 1;
        const char *fam = gt_kernel_family_name(k->family);
        if (k->family == GT_KF_TENSOR_CORE && (md_contains_ci(k->mangled, "implicit_gemm") ||
                                               md_contains_ci(k->mangled, "implicit_precomp")))
            fam = "implicit GEMM on tensor cores";
        gt_cudnn_choice *c =
            choice_for(op, fam, k->tensor_cores ? "tensor cores" : "", k->tensor_cores);
        c->execs += k->count;
        c->gpu_ns += k->total_ns;
        op->chosen = 0;
    }
}
