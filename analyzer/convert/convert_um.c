/* convert_um.c — unified memory on the timeline (issue 30): each GPU's page faults, migrations,
 * throttling and thrashing on a track of its own, "GPU n · unified memory" (slices for what has a
 * duration, instants for the rest; overlap lanes as a stream's), above the device's streams; CPU
 * page faults on the process's "unified memory · CPU" track. A GPU fault's slice is the driver's
 * service of it: the kernel that raised it stalls meanwhile, as it does during the on-demand
 * migration that follows. */
#include "convert_internal.h"

#define UM_CPU_LANE 2000003 /* the CPU track's id among the process's child tracks */

static const char *um_name(uint32_t kind)
{
    static const char *const NAMES[] = {
        [GT_UM_HTOD] = "HtoD migration",      [GT_UM_DTOH] = "DtoH migration",
        [GT_UM_CPU_FAULT] = "CPU page fault", [GT_UM_GPU_FAULT] = "GPU page fault",
        [GT_UM_THRASHING] = "thrashing",      [GT_UM_THROTTLING] = "throttling",
        [GT_UM_REMOTE_MAP] = "remote map",    [GT_UM_DTOD] = "DtoD migration",
    };
    return kind < sizeof NAMES / sizeof *NAMES && NAMES[kind] ? NAMES[kind] : "unified memory";
}

static const char *cause_name(uint32_t cause)
{
    switch (cause) {
    case GT_UM_CAUSE_USER:
        return "prefetch (the program's)";
    case GT_UM_CAUSE_COHERENCE:
        return "page fault";
    case GT_UM_CAUSE_PREFETCH:
        return "the driver's speculation";
    case GT_UM_CAUSE_EVICTION:
        return "eviction";
    case GT_UM_CAUSE_ACCESS_COUNTERS:
        return "access counters";
    default:
        return "unknown";
    }
}

static const char *access_name(uint32_t access)
{
    static const char *const NAMES[] = {"unknown", "read", "write", "atomic", "prefetch"};
    return access < 5 ? NAMES[access] : "unknown";
}

/* The GPU an event belongs to: the faulting device, or the device side of a migration. */
static uint32_t um_device(const gt_rec_gpu_um *u)
{
    if (u->um_kind == GT_UM_HTOD || (u->um_kind == GT_UM_DTOD && u->dst_id != GT_UM_CPU_ID))
        return u->dst_id;
    return u->src_id != GT_UM_CPU_ID ? u->src_id : 0;
}

static void um_lane_describe(cv_ctx *c, cv_file *f, cv_device *d, int lane)
{
    char name[64];
    if (lane)
        snprintf(name, sizeof name, "GPU %u \xc2\xb7 unified memory (overlap %d)", d->device, lane);
    else
        snprintf(name, sizeof name, "GPU %u \xc2\xb7 unified memory", d->device);
    /* above the device's streams, which order from 1000 + device * 1000 */
    cv_child_track(c, f, d->um.uuid[lane], name, 3000000 + (int64_t)(d->device % 1000) * 8 + lane,
                   1000 + (int)(d->device % 1000) * 1000 - LANES + lane);
    d->um.described[lane] = 1;
}

static void um_args(const gt_rec_gpu_um *u, cv_args *x)
{
    switch (u->um_kind) {
    case GT_UM_HTOD:
    case GT_UM_DTOH:
    case GT_UM_DTOD:
        cv_arg_u(x, AN_BYTES, u->value);
        cv_arg_s(x, AN_REASON, cause_name(u->flags));
        if (u->end_ns > u->start_ns)
            cv_arg_d(x, AN_GBPS, (double)u->value / (double)(u->end_ns - u->start_ns));
        break;
    case GT_UM_GPU_FAULT:
        cv_arg_u(x, AN_COUNT, u->value); /* fault groups for the page */
        cv_arg_s(x, AN_DETAIL, access_name(u->flags));
        break;
    case GT_UM_CPU_FAULT:
        cv_arg_s(x, AN_DETAIL, access_name(u->flags));
        break;
    default:
        if (u->value)
            cv_arg_u(x, AN_BYTES, u->value);
        break;
    }
    cv_arg_p(x, AN_PTR, u->address);
}

static void um_cpu_fault(cv_ctx *c, cv_file *f, int64_t ts, const gt_rec_gpu_um *u)
{
    if (!f->um_cpu.described) {
        f->um_cpu.uuid = cv_uuid(c);
        cv_child_track(c, f, f->um_cpu.uuid, "unified memory \xc2\xb7 CPU", UM_CPU_LANE, -5);
        f->um_cpu.described = 1;
    }
    cv_args x;
    x.n = 0;
    um_args(u, &x);
    cv_event ev = {.type = CV_INSTANT,
                   .track = f->um_cpu.uuid,
                   .seq = f->proc_seq,
                   .ts = ts,
                   .name = um_name(u->um_kind),
                   .name_iid = IID_UM(u->um_kind),
                   .args = x.a,
                   .n_args = x.n};
    cv_set_cat(&ev, CAT_MEMORY);
    cv_emit(c, &ev);
    c->st->instants++;
}

void cv_on_um(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_gpu_um u;
    gt_body_copy(&u, sizeof u, rec);
    int64_t b, e;
    if (!cv_ts(c, u.start_ns, &b))
        return;
    if (u.um_kind == GT_UM_CPU_FAULT) {
        um_cpu_fault(c, f, b, &u);
        return;
    }
    cv_device *d = cv_device_get(c, f, um_device(&u));
    if (!d->um_seq) {
        d->um_seq = c->next_seq++;
        for (int l = 0; l < LANES; l++)
            d->um.uuid[l] = cv_uuid(c);
    }
    int instant = !u.end_ns || u.end_ns <= u.start_ns || !cv_ts(c, u.end_ns, &e);
    if (instant)
        e = b;
    int moved;
    int lane = cv_place_lane(&d->um, &b, &e, &moved);
    c->st->clamped += (uint64_t)moved;
    if (!d->um.described[lane])
        um_lane_describe(c, f, d, lane);
    cv_args x;
    x.n = 0;
    um_args(&u, &x);
    cv_event ev;
    cv_event_init(&ev, instant ? CV_INSTANT : CV_BEGIN, d->um.uuid[lane], d->um_seq, b);
    ev.name = um_name(u.um_kind);
    ev.name_iid = IID_UM(u.um_kind);
    cv_set_cat(&ev, CAT_MEMORY);
    ev.args = x.a;
    ev.n_args = x.n;
    if (instant) {
        cv_emit(c, &ev);
        c->st->instants++;
    } else {
        cv_slice(c, &ev, e, NULL, 0);
    }
}
