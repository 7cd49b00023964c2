/* convert_args.c — Argument texts of slices: launch configurations, dimensions, cuDNN plans and
 * signatures (their records), memory kinds, kernel names. */
#include "convert_internal.h"

#include "cudnn_names.h"
#include "demangle.h"

/* Hot-path text without snprintf (its format parsing was a tenth of the conversion time). */
char *cv_put_i64(char *d, int64_t v)
{
    char tmp[24];
    int n = 0;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *d++ = '-';
    while (n)
        *d++ = tmp[--n];
    return d;
}

/* "AxBxC" at d (at most 62 bytes: three 20-digit numbers and two separators); returns its end. */
static char *cv_put_dims(char *d, const int64_t v[3])
{
    d = cv_put_i64(d, v[0]);
    *d++ = 'x';
    d = cv_put_i64(d, v[1]);
    *d++ = 'x';
    return cv_put_i64(d, v[2]);
}

/* "AxBxC" into buf (at least 64 bytes). */
const char *cv_dims(char *buf, int64_t a, int64_t b, int64_t c)
{
    *cv_put_dims(buf, (const int64_t[3]){a, b, c}) = 0;
    return buf;
}

/* A launch configuration as one argument, "grid 1152x128x1, block 128x1x1, 40 registers,
 * 1024 B shared memory" (v: grid, block, registers, shared memory; a negative count is left
 * out). One interned string per distinct configuration instead of four arguments per event:
 * kernels are a thousand events per step and repeat a few hundred configurations. */
const char *cv_config_text(cv_config_memo *m, const int64_t v[8])
{
    if (m->valid && !memcmp(m->v, v, sizeof m->v))
        return m->text;
    char *d = cv_put_dims(stpcpy(m->text, "grid "), v);
    d = cv_put_dims(stpcpy(d, ", block "), v + 3);
    if (v[6] >= 0)
        d = stpcpy(cv_put_i64(stpcpy(d, ", "), v[6]), " registers");
    if (v[7] >= 0)
        d = stpcpy(cv_put_i64(stpcpy(d, ", "), v[7]), " B shared memory");
    *d = 0;
    memcpy(m->v, v, sizeof m->v);
    m->valid = 1;
    return m->text;
}

/* Concatenate up to four strings (NULL = none) into buf of cap bytes, truncating. */
const char *cv_concat(char *buf, size_t cap, const char *a, const char *b, const char *c,
                      const char *d)
{
    const char *parts[4] = {a, b, c, d};
    size_t n = 0;
    for (int i = 0; i < 4; i++)
        for (const char *s = parts[i]; s && *s && n + 1 < cap; s++)
            buf[n++] = *s;
    buf[n] = 0;
    return buf;
}

static cv_plan_slot *cv_plan_find(cv_file *f, uint32_t id)
{
    cv_plan_slot *s = &f->plans[id & (PLAN_SLOTS - 1)];
    return id && s->plan_id == id ? s : NULL;
}

static cv_sig_slot *cv_sig_find(cv_file *f, uint32_t id)
{
    cv_sig_slot *s = &f->sigs[id & (PLAN_SLOTS - 1)];
    return id && s->sig_id == id ? s : NULL;
}

const char *cv_kernel_name(cv_file *f, uint32_t id)
{
    if (!id)
        return "(unknown kernel)";
    cv_name_slot *s = &f->names[gt_mix64(id) & (NAME_SLOTS - 1)];
    if (s->id == id && s->name)
        return s->name;
    const char *m = gt_reader_string(f->r, id);
    if (!m)
        return "(unknown kernel)";
    char *d = gt_demangle(m);
    if (!d)
        return m;
    free(s->name);
    s->id = id;
    s->name = d;
    return d;
}

void cv_cudnn_args(cv_file *f, const gt_rec_api_cudnn *r, cv_args *x)
{
    cv_plan_slot *plan = cv_plan_find(f, r->plan_id);
    uint32_t sig_id = r->sig_id ? r->sig_id : plan ? plan->sig_id : 0;
    cv_sig_slot *sig = cv_sig_find(f, sig_id);
    uint32_t op = plan ? plan->op_kind : sig ? sig->op_kind : 0;
    if (plan || sig)
        cv_arg_s(x, AN_CUDNN_OP, gt_cudnn_op_name((int)op));
    if (plan && plan->engine >= 0)
        cv_arg_i(x, AN_ENGINE, plan->engine);
    if (r->algo >= 0 && (r->sig_id || !plan))
        cv_arg_i(x, AN_ALGORITHM, r->algo);
    if (plan && plan->numerical_notes) {
        gt_cudnn_notes_text(plan->numerical_notes, 0, x->buf[0], sizeof x->buf[0]);
        cv_arg_s(x, AN_NOTES, x->buf[0]);
    }
    if (sig)
        cv_arg_s(x, AN_SHAPE, sig->text);
    if (r->math_type >= 0)
        cv_arg_i(x, AN_MATH_TYPE, r->math_type);
    if (r->workspace_bytes)
        cv_arg_u(x, AN_WORKSPACE_BYTES, r->workspace_bytes);
    if (r->cudnn_flags & GT_CUDNN_AUTOTUNE)
        cv_arg_s(x, AN_AUTOTUNE, "candidate of an autotuning sweep");
}

/* src_memory and dst_memory, leaving out a side whose kind the direction or the event's name
 * already says (a DtoD copy of device memory needs neither): 0.7 M copies a step in DDP. */
void cv_memory_args(cv_args *x, uint8_t src, uint8_t dst, int src_said, int dst_said)
{
    if (!src_said)
        cv_arg_s(x, AN_SRC_MEMORY, gt_mem_kind_name(src));
    if (!dst_said)
        cv_arg_s(x, AN_DST_MEMORY, gt_mem_kind_name(dst));
}

const char *cv_copy_kind_name(uint8_t k)
{
    static const char *const names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < sizeof names / sizeof names[0] ? names[k] : "Unknown";
}

void cv_on_sig(cv_file *f, const gt_record *rec)
{
    gt_rec_cudnn_conv_sig g;
    gt_body_copy(&g, sizeof g, rec);
    if (!g.sig_id)
        return;
    cv_sig_slot *s = &f->sigs[g.sig_id & (PLAN_SLOTS - 1)];
    s->sig_id = g.sig_id;
    s->op_kind = g.op_kind;
    int nd = g.nb_dims < 1 ? 1 : g.nb_dims > 5 ? 5 : g.nb_dims;
    char *p = s->text;
    size_t cap = sizeof s->text;
    const int32_t *dims[3] = {g.x_dims, g.w_dims, g.y_dims};
    const char *lab[3] = {"x=", " w=", " y="};
    for (int k = 0; k < 3; k++) {
        int w = snprintf(p, cap, "%s", lab[k]);
        for (int i = 0; i < nd && w >= 0 && (size_t)w < cap; i++)
            w += snprintf(p + w, cap - (size_t)w, i ? "x%d" : "%d", dims[k][i]);
        if (w < 0 || (size_t)w >= cap)
            break;
        p += w;
        cap -= (size_t)w;
    }
}

void cv_on_plan(cv_file *f, const gt_record *rec)
{
    gt_rec_cudnn_plan pl;
    gt_body_copy(&pl, sizeof pl, rec);
    if (!pl.plan_id)
        return;
    cv_plan_slot *s = &f->plans[pl.plan_id & (PLAN_SLOTS - 1)];
    *s = (cv_plan_slot){.plan_id = pl.plan_id,
                        .op_kind = pl.op_kind,
                        .engine = pl.engine_global_index,
                        .numerical_notes = pl.numerical_notes,
                        .sig_id = pl.sig_id};
}

const char *const ARG_NAMES[AN_END] = {"",
#define CV_ARG_STR(id, str) str,
                                       CV_ARG_NAMES(CV_ARG_STR)
#undef CV_ARG_STR
};

const char *cv_str(cv_file *f, uint32_t id, const char *fallback)
{
    const char *s = id ? gt_reader_string(f->r, id) : NULL;
    return s ? s : fallback;
}

/* A slice's arguments, one call per argument on the hot path: `inline` as in convert_events.c. */
inline void cv_arg_i(cv_args *x, enum cv_arg_name name, int64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_INT, .v.i = v};
}

inline void cv_arg_u(cv_args *x, enum cv_arg_name name, uint64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_UINT, .v.u = v};
}

inline void cv_arg_p(cv_args *x, enum cv_arg_name name, uint64_t v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_PTR, .v.u = v};
}

inline void cv_arg_s(cv_args *x, enum cv_arg_name name, const char *v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_STR, .v.s = v};
}

inline void cv_arg_d(cv_args *x, enum cv_arg_name name, double v)
{
    if (x->n < CV_MAX_ARGS)
        x->a[x->n++] =
            (cv_arg){.name = ARG_NAMES[name], .name_iid = name, .type = CV_ARG_DOUBLE, .v.d = v};
}
