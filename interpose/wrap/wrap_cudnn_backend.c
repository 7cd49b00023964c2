/* wrap_cudnn_backend.c — cudnnBackendExecute / Finalize / DestroyDescriptor, with each execution
 * plan decoded once (see wrap_cudnn.c for the why). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wrap_cudnn.h"

#define BE_SYM(name) static gt_sym sym_##name = GT_SYM_INIT(#name, GT_LIB_CUDNN)
BE_SYM(cudnnBackendGetAttribute);
BE_SYM(cudnnBackendCreateDescriptor);
static gt_sym sym_cudnnBackendDestroyDescriptor_real =
    GT_SYM_INIT("cudnnBackendDestroyDescriptor", GT_LIB_CUDNN);

typedef cudnnBackendDescriptor_t bdesc;
typedef cudnnStatus_t (*get_attr_fn)(bdesc, cudnnBackendAttributeName_t,
                                     cudnnBackendAttributeType_t, int64_t, int64_t *, void *);
typedef cudnnStatus_t (*create_fn)(cudnnBackendDescriptorType_t, bdesc *);
typedef cudnnStatus_t (*destroy_fn)(bdesc);

/* ------------------------------------------------------------------ the plan cache */

#define PLAN_SLOTS 8192 /* power of two */
#define TOMBSTONE ((uintptr_t)1)

typedef struct plan_slot {
    _Atomic uintptr_t plan; /* 0 empty, TOMBSTONE forgotten */
    uint32_t plan_id;
    uint64_t workspace;
    uint64_t op_key;
    _Atomic(_Atomic uint32_t *) op_count; /* its operation's plan count in ops[], NULL: look up */
} plan_slot;

static plan_slot plans[PLAN_SLOTS];
static pthread_mutex_t plans_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_plan_id = 1; /* under plans_lock */

/* Distinct plans decoded per operation key (autotune detection). */
#define OP_SLOTS 4096
static struct {
    _Atomic uint64_t key;
    _Atomic uint32_t plans;
} ops[OP_SLOTS];

static uint32_t slot_of(uintptr_t p)
{
    return (uint32_t)((p * 0x9E3779B97F4A7C15ull) >> 40) & (PLAN_SLOTS - 1);
}

static plan_slot *plan_lookup(uintptr_t p)
{
    uint32_t i = slot_of(p);
    for (int probe = 0; probe < PLAN_SLOTS; probe++, i = (i + 1) & (PLAN_SLOTS - 1)) {
        uintptr_t v = atomic_load_explicit(&plans[i].plan, memory_order_acquire);
        if (v == p)
            return &plans[i];
        if (v == 0)
            return NULL;
    }
    return NULL;
}

static uint32_t op_plan_count(uint64_t key, bool add)
{
    uint32_t i = (uint32_t)(key % OP_SLOTS);
    for (int probe = 0; probe < OP_SLOTS; probe++, i = (i + 1) % OP_SLOTS) {
        uint64_t k = atomic_load(&ops[i].key);
        if (k == 0 && add) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&ops[i].key, &expected, key) || expected == key)
                return atomic_fetch_add(&ops[i].plans, 1) + 1;
            continue;
        }
        if (k == key)
            return add ? atomic_fetch_add(&ops[i].plans, 1) + 1 : atomic_load(&ops[i].plans);
        if (k == 0)
            return 0;
    }
    return 0;
}

/* Where op_plan_count keeps key's count (entries are never removed, so the address holds). */
static _Atomic uint32_t *op_count_of(uint64_t key)
{
    uint32_t i = (uint32_t)(key % OP_SLOTS);
    for (int probe = 0; key && probe < OP_SLOTS; probe++, i = (i + 1) % OP_SLOTS) {
        uint64_t k = atomic_load(&ops[i].key);
        if (k == key)
            return &ops[i].plans;
        if (k == 0)
            return NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ decoding a plan */

static uint64_t fnv1a(const char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* The operation a plan computes: its JSON without the "engine" object, hashed. */
static uint64_t op_key_of(const char *json, size_t len)
{
    const char *e = json ? strstr(json, "\"engine\"") : NULL;
    if (!e)
        return json ? fnv1a(json, len, 0xcbf29ce484222325ull) | 1 : 0;
    const char *p = strchr(e, '{');
    int depth = 0;
    const char *end = p;
    for (; end && *end; end++) {
        if (*end == '{')
            depth++;
        if (*end == '}' && --depth == 0)
            break;
    }
    uint64_t h = fnv1a(json, (size_t)(e - json), 0xcbf29ce484222325ull);
    if (end && *end)
        h = fnv1a(end + 1, len - (size_t)(end + 1 - json), h);
    return h | 1;
}

static uint32_t op_kind_of(const char *json)
{
    if (!json)
        return GT_CUDNN_OP_UNKNOWN;
    if (strstr(json, "CONV_BWD_DATA") || strstr(json, "CONVOLUTION_BWD_DATA"))
        return GT_CUDNN_OP_CONV_BWD_DATA;
    if (strstr(json, "CONV_BWD_FILTER") || strstr(json, "CONVOLUTION_BWD_FILTER"))
        return GT_CUDNN_OP_CONV_BWD_FILTER;
    if (strstr(json, "CONV_FORWARD") || strstr(json, "CONVOLUTION_FORWARD"))
        return GT_CUDNN_OP_CONV_FWD;
    if (strstr(json, "MATMUL"))
        return GT_CUDNN_OP_MATMUL;
    return GT_CUDNN_OP_OTHER;
}

static int32_t dtype_of(const char *json)
{
    static const struct {
        const char *name;
        int32_t v;
    } types[] = {{"BFLOAT16", CUDNN_DATA_BFLOAT16}, {"HALF", CUDNN_DATA_HALF},
                 {"DOUBLE", CUDNN_DATA_DOUBLE},     {"FLOAT", CUDNN_DATA_FLOAT},
                 {"INT8", CUDNN_DATA_INT8},         {"FP8_E4M3", CUDNN_DATA_FP8_E4M3}};
    const char *p = json ? strstr(json, "ata_type\"") : NULL;
    if (!p && json)
        p = strstr(json, "ataType\"");
    if (!p)
        return -1;
    const char *colon = strchr(p, ':');
    const char *q = colon ? strchr(colon, '"') : NULL; /* the value's opening quote */
    if (!q)
        return -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strncmp(q + 1, types[i].name, strlen(types[i].name)) == 0 ||
            (strncmp(q + 1, "CUDNN_DATA_", 11) == 0 &&
             strncmp(q + 12, types[i].name, strlen(types[i].name)) == 0))
            return types[i].v;
    return -1;
}

typedef struct plan_info {
    int64_t engine_index;
    uint64_t numerical, behavior, workspace;
    char knobs[512];
    size_t knobs_len;
} plan_info;

static void append_int(char *buf, size_t cap, size_t *len, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? (uint64_t)(-v) : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10), u /= 10;
    while (u);
    if (v < 0)
        tmp[n++] = '-';
    while (n && *len + 1 < cap)
        buf[(*len)++] = tmp[--n];
}

/* Engine config -> engine -> index and notes; knob choices as "type=value,...". */
static void decode_engine(bdesc plan, get_attr_fn get, create_fn create, destroy_fn destroy,
                          plan_info *info)
{
    bdesc cfg = NULL, eng = NULL;
    int64_t n = 0;
    if (create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg) != CUDNN_STATUS_SUCCESS)
        return;
    if (get(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
            &cfg) == CUDNN_STATUS_SUCCESS &&
        create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) == CUDNN_STATUS_SUCCESS) {
        if (get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &eng) ==
            CUDNN_STATUS_SUCCESS) {
            int64_t idx = -1;
            if (get(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &idx) ==
                CUDNN_STATUS_SUCCESS)
                info->engine_index = idx;
            cudnnBackendNumericalNote_t notes[32];
            if (get(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE, 32, &n,
                    notes) == CUDNN_STATUS_SUCCESS)
                for (int64_t i = 0; i < n && i < 32; i++)
                    if (notes[i] < 64)
                        info->numerical |= 1ull << notes[i];
            cudnnBackendBehaviorNote_t beh[32];
            if (get(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE, 32, &n, beh) ==
                CUDNN_STATUS_SUCCESS)
                for (int64_t i = 0; i < n && i < 32; i++)
                    if (beh[i] < 64)
                        info->behavior |= 1ull << beh[i];
        }
        destroy(eng);
    }
    enum { MAX_KNOBS = 24 };
    bdesc knobs[MAX_KNOBS];
    int made = 0;
    for (; made < MAX_KNOBS; made++)
        if (create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[made]) != CUDNN_STATUS_SUCCESS)
            break;
    if (made && get(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR, made, &n,
                    knobs) == CUDNN_STATUS_SUCCESS) {
        for (int64_t i = 0; i < n && i < made; i++) {
            cudnnBackendKnobType_t type;
            int64_t value = 0, m = 0;
            if (get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &m,
                    &type) != CUDNN_STATUS_SUCCESS ||
                get(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &m, &value) !=
                    CUDNN_STATUS_SUCCESS)
                continue;
            if (info->knobs_len)
                info->knobs[info->knobs_len++] = ',';
            append_int(info->knobs, sizeof info->knobs, &info->knobs_len, (int64_t)type);
            if (info->knobs_len + 1 < sizeof info->knobs)
                info->knobs[info->knobs_len++] = '=';
            append_int(info->knobs, sizeof info->knobs, &info->knobs_len, value);
        }
    }
    for (int i = 0; i < made; i++)
        destroy(knobs[i]);
    destroy(cfg);
}

/* Decode a plan seen for the first time, write its GT_REC_CUDNN_PLAN, cache it. Cold. */
static plan_slot *decode_plan(bdesc plan, uint32_t *op_plans)
{
    get_attr_fn get = (get_attr_fn)gt_sym_get(&sym_cudnnBackendGetAttribute);
    create_fn create = (create_fn)gt_sym_get(&sym_cudnnBackendCreateDescriptor);
    destroy_fn destroy = (destroy_fn)gt_sym_get(&sym_cudnnBackendDestroyDescriptor_real);
    if (!get || !create || !destroy)
        return NULL;
    plan_info info = {.engine_index = -1};
    int64_t n = 0, ws = 0;
    if (get(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws) ==
        CUDNN_STATUS_SUCCESS)
        info.workspace = (uint64_t)ws;
    enum { JSON_CAP = 32768 };
    char *json = malloc(JSON_CAP);
    int64_t json_len = 0;
    if (json && get(plan, CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                    JSON_CAP - 1, &json_len, json) == CUDNN_STATUS_SUCCESS) {
        if (json_len < 0 || json_len > JSON_CAP - 1)
            json_len = JSON_CAP - 1;
        json[json_len] = 0;
        json_len = (int64_t)strlen(json);
    } else if (json) {
        json[0] = 0, json_len = 0;
    }
    decode_engine(plan, get, create, destroy, &info);

    size_t body = sizeof(gt_rec_cudnn_plan) + info.knobs_len + (size_t)json_len;
    gt_rec_cudnn_plan *rec = malloc(body);
    uint64_t key = op_key_of(json_len ? json : NULL, (size_t)json_len);
    pthread_mutex_lock(&plans_lock);
    plan_slot *slot = plan_lookup((uintptr_t)plan); /* another thread may have been first */
    if (!slot) {
        uint32_t i = slot_of((uintptr_t)plan);
        for (int probe = 0; probe < PLAN_SLOTS; probe++, i = (i + 1) & (PLAN_SLOTS - 1)) {
            uintptr_t v = atomic_load(&plans[i].plan);
            if (v == 0 || v == TOMBSTONE) {
                slot = &plans[i];
                break;
            }
        }
        if (slot) {
            slot->plan_id = next_plan_id++;
            slot->workspace = info.workspace;
            slot->op_key = key;
            atomic_store_explicit(&slot->op_count, NULL, memory_order_relaxed);
            atomic_store_explicit(&slot->plan, (uintptr_t)plan, memory_order_release);
            *op_plans = key ? op_plan_count(key, true) : 1;
            atomic_store_explicit(&slot->op_count, op_count_of(key), memory_order_relaxed);
            if (rec) {
                memset(rec, 0, sizeof *rec);
                rec->plan = (uint64_t)(uintptr_t)plan;
                rec->plan_id = slot->plan_id;
                rec->op_kind = op_kind_of(json_len ? json : NULL);
                rec->engine_global_index = info.engine_index;
                rec->numerical_notes = info.numerical;
                rec->behavior_notes = info.behavior;
                rec->workspace_bytes = info.workspace;
                rec->op_graph = key;
                rec->dtype = (uint32_t)dtype_of(json_len ? json : NULL);
                rec->knobs_len = (uint32_t)info.knobs_len;
                rec->json_len = (uint32_t)json_len;
                memcpy(rec + 1, info.knobs, info.knobs_len);
                if (json_len)
                    memcpy((char *)(rec + 1) + info.knobs_len, json, (size_t)json_len);
                gt_record_write(GT_REC_CUDNN_PLAN, 0, rec, (uint32_t)body);
            }
        }
    }
    pthread_mutex_unlock(&plans_lock);
    free(rec);
    free(json);
    return slot;
}

/* ------------------------------------------------------------------ autotune detection */

static __thread int event_recorded_before_execute __attribute__((tls_model("initial-exec")));

/* Benchmark mode brackets each candidate: record(start), execute, record(stop), synchronize. An
 * event recorded since the last synchronization marks the next execute as a timed candidate. */
void gt_cudnn_note_event_record(void);
void gt_cudnn_note_event_record(void)
{
    event_recorded_before_execute = 1;
}
void gt_cudnn_note_synchronize(void);
void gt_cudnn_note_synchronize(void)
{
    event_recorded_before_execute = 0;
}

static uint32_t tune_flags(bool new_plan, uint32_t op_plans)
{
    uint32_t f = 0;
    if (event_recorded_before_execute || (new_plan && op_plans >= 2))
        f = GT_CUDNN_AUTOTUNE;
    else if (op_plans <= 1)
        f = GT_CUDNN_HEURISTIC;
    event_recorded_before_execute = 0;
    return f;
}

/* ------------------------------------------------------------------ wrappers */

GT_WRAP_INLINE void record_be(const gt_call *c, uint64_t t_end, uint16_t flags, int32_t r,
                              uint64_t stream, const gt_rec_api_cudnn *fields)
{
    gt_rec_api_cudnn *rec = gt_fast_record_begin(GT_REC_API_CUDNN, flags, sizeof *rec);
    if (!rec)
        return;
    *rec = *fields;
    gt_call_fill(&rec->c, c, t_end, stream, r);
    gt_fast_record_commit(rec);
}

static cudnnStatus_t execute_impl(gt_sym *s, uint16_t flags, cudnnHandle_t h, bdesc plan, bdesc vp)
{
    typedef cudnnStatus_t (*fn_t)(cudnnHandle_t, bdesc, bdesc);
    fn_t real = (fn_t)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    if (!gt_fast_guard_enter())
        return real(h, plan, vp);
    if (!atomic_load_explicit(&gt_wrap_cudnn_seen, memory_order_relaxed))
        gt_wrap_cudnn_first_use();
    plan_slot *slot = plan ? plan_lookup((uintptr_t)plan) : NULL;
    uint32_t op_plans = 0;
    bool new_plan = false;
    if (!slot && plan) {
        slot = decode_plan(plan, &op_plans);
        new_plan = true;
    } else if (slot) {
        _Atomic uint32_t *count = atomic_load_explicit(&slot->op_count, memory_order_relaxed);
        op_plans = count ? atomic_load_explicit(count, memory_order_relaxed)
                         : op_plan_count(slot->op_key, false);
    }
    gt_call c;
    gt_call_begin(&c, GT_FN_cudnnBackendExecute, true, true);
    gt_call_anchor(&c);
    cudnnStatus_t r = real(h, plan, vp);
    uint64_t t_end = gt_call_end(&c);
    uint32_t cudnn_flags = tune_flags(new_plan, op_plans);
    uint64_t stream = gt_cudnn_handle_stream(h);
    /* Filled in place (the common case of every training step). */
    gt_rec_api_cudnn *rec = gt_fast_record_begin(GT_REC_API_CUDNN, flags, sizeof *rec);
    if (rec) {
        gt_call_fill(&rec->c, &c, t_end, stream, r);
        rec->handle = (uint64_t)(uintptr_t)h;
        rec->plan = (uint64_t)(uintptr_t)plan;
        rec->plan_id = slot ? slot->plan_id : 0;
        rec->algo = -1;
        rec->math_type = -1;
        rec->workspace_bytes = slot ? slot->workspace : 0;
        rec->cudnn_flags = cudnn_flags;
        gt_fast_record_commit(rec);
    }
    gt_fast_guard_leave();
    return r;
}

/* Finalize is frequent (PyTorch finalizes every descriptor it builds): record only the type. The
 * descriptor's type is not readable through the API, so it is remembered at creation below. */
#define TYPE_SLOTS 16384
static struct {
    _Atomic uintptr_t desc;
    _Atomic uint32_t type;
} desc_types[TYPE_SLOTS];

static void remember_type(bdesc d, uint32_t type)
{
    uint32_t i = slot_of((uintptr_t)d) & (TYPE_SLOTS - 1);
    atomic_store_explicit(&desc_types[i].type, type, memory_order_relaxed);
    atomic_store_explicit(&desc_types[i].desc, (uintptr_t)d, memory_order_release);
}
static uint32_t type_of(bdesc d)
{
    uint32_t i = slot_of((uintptr_t)d) & (TYPE_SLOTS - 1);
    return atomic_load_explicit(&desc_types[i].desc, memory_order_acquire) == (uintptr_t)d
               ? atomic_load_explicit(&desc_types[i].type, memory_order_relaxed)
               : 0;
}

static cudnnStatus_t create_impl(gt_sym *s, uint16_t flags, cudnnBackendDescriptorType_t t,
                                 bdesc *d)
{
    (void)flags; /* not recorded: only the type is remembered for Finalize/Destroy records */
    create_fn real = (create_fn)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    cudnnStatus_t r = real(t, d);
    if (r == CUDNN_STATUS_SUCCESS && d && *d)
        remember_type(*d, (uint32_t)t + 1);
    return r;
}

static cudnnStatus_t finalize_impl(gt_sym *s, uint16_t flags, bdesc d)
{
    typedef cudnnStatus_t (*fn_t)(bdesc);
    fn_t real = (fn_t)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    if (!gt_fast_guard_enter())
        return real(d);
    uint32_t t = type_of(d);
    bool costly = t == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR + 1 ||
                  t == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR + 1;
    gt_call c;
    gt_call_begin(&c, GT_FN_cudnnBackendFinalize, costly, costly);
    gt_call_anchor(&c);
    cudnnStatus_t r = real(d);
    uint64_t t_end = gt_call_end(&c);
    gt_rec_api_cudnn f = {.plan = (uint64_t)(uintptr_t)d,
                          .algo = -1,
                          .math_type = -1,
                          .desc_type = t ? t - 1 : 0xFFFFFFFFu};
    record_be(&c, t_end, flags, r, 0, &f);
    gt_fast_guard_leave();
    return r;
}

static cudnnStatus_t destroy_impl(gt_sym *s, uint16_t flags, bdesc d)
{
    destroy_fn real = (destroy_fn)gt_sym_get(s);
    if (!real) {
        gt_sym_warn_missing(s);
        return CUDNN_STATUS_NOT_SUPPORTED;
    }
    /* Forget the plan before cuDNN can hand its address to a new one. */
    pthread_mutex_lock(&plans_lock);
    plan_slot *slot = d ? plan_lookup((uintptr_t)d) : NULL;
    if (slot)
        atomic_store_explicit(&slot->plan, TOMBSTONE, memory_order_release);
    pthread_mutex_unlock(&plans_lock);
    uint32_t t = d ? type_of(d) : 0;
    if (!gt_fast_guard_enter())
        return real(d);
    gt_call c;
    gt_call_begin(&c, GT_FN_cudnnBackendDestroyDescriptor, false, false);
    cudnnStatus_t r = real(d);
    uint64_t t_end = gt_call_end(&c);
    gt_rec_api_cudnn f = {.plan = (uint64_t)(uintptr_t)d,
                          .plan_id = slot ? slot->plan_id : 0,
                          .algo = -1,
                          .math_type = -1,
                          .desc_type = t ? t - 1 : 0xFFFFFFFFu};
    record_be(&c, t_end, flags, r, 0, &f);
    gt_fast_guard_leave();
    return r;
}

GT_ENTRY(cudnnStatus_t, cudnnBackendExecute, GT_LIB_CUDNN, execute_impl, 0,
         (cudnnHandle_t h, bdesc plan, bdesc vp), (h, plan, vp))
GT_ENTRY(cudnnStatus_t, cudnnBackendFinalize, GT_LIB_CUDNN, finalize_impl, 0, (bdesc d), (d))
GT_ENTRY(cudnnStatus_t, cudnnBackendDestroyDescriptor, GT_LIB_CUDNN, destroy_impl, 0, (bdesc d),
         (d))
GT_ENTRY(cudnnStatus_t, cudnnBackendCreateDescriptor, GT_LIB_CUDNN, create_impl, 0,
         (cudnnBackendDescriptorType_t t, bdesc *d), (t, d))
