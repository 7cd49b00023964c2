/* model_kernels.c — Kernels: families inferred from their names (tensor cores, implicit GEMM,
 * Winograd...), per-name tables, readable names, and the call each kernel links to (op_link.h). */
#include "model_kernels.h"

#include "model_framework.h"
#include "demangle.h"

const char *gt_kernel_family_name(int family)
{
    static const char *const names[GT_KF_COUNT] = {
        "-",    "implicit GEMM", "Winograd", "FFT", "tensor cores (xmma/hmma)",
        "GEMM", "direct/other"};
    return family >= 0 && family < GT_KF_COUNT ? names[family] : "?";
}

static int uses_tensor_cores(const char *name)
{
    /* xmma/sm80_ kernels are a template family: "f32f32_f32f32" without tf32 is plain FFMA */
    if (md_contains_ci(name, "f32f32_f32f32") && !md_contains_ci(name, "tf32"))
        return 0;
    static const char *const marks[] = {"xmma",     "hmma",   "gmma",  "sm80_",   "sm86_", "sm89_",
                                        "sm90_",    "sm100_", "s1688", "s16816",  "h1688", "h16816",
                                        "tensorop", "i8816",  "_tc_",  "bf16816", "wgmma"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (md_contains_ci(name, marks[i]))
            return 1;
    return 0;
}

int md_conv_like(const char *name)
{
    return md_contains_ci(name, "conv") || md_contains_ci(name, "cudnn") ||
           md_contains_ci(name, "fprop") || md_contains_ci(name, "dgrad") ||
           md_contains_ci(name, "wgrad") || md_contains_ci(name, "winograd") ||
           md_contains_ci(name, "fft");
}

int gt_kernel_family_of(const char *name)
{
    if (md_contains_ci(name, "winograd"))
        return GT_KF_WINOGRAD;
    if (md_contains_ci(name, "fft"))
        return GT_KF_FFT;
    if (uses_tensor_cores(name))
        return GT_KF_TENSOR_CORE;
    if (md_contains_ci(name, "implicit_convolve") || md_contains_ci(name, "implicit_gemm") ||
        md_contains_ci(name, "precomputed") || md_contains_ci(name, "implicit_precomp"))
        return GT_KF_IMPLICIT_GEMM;
    if (md_contains_ci(name, "gemm"))
        return GT_KF_GEMM;
    if (md_conv_like(name))
        return GT_KF_CONV_OTHER;
    return GT_KF_NONE;
}

void md_on_kernel(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k)
{
    uint64_t d = k->end_ns > k->start_ns ? k->end_ns - k->start_ns : 0;
    uint32_t i = gt_map_get(&s->kern_by_name, k->name_id);
    if (i == UINT32_MAX) {
        gt_grow((void **)&p->kernels, &p->cap_kernels, p->n_kernels, sizeof *p->kernels);
        i = (uint32_t)p->n_kernels++;
        p->kernels[i].first_ns = k->start_ns;
        gt_map_put(&s->kern_by_name, k->name_id, i);
        /* name_id kept in the mangled pointer slot until strings are resolved */
        p->kernels[i].mangled = (char *)(uintptr_t)k->name_id;
    }
    gt_kernel_agg *a = &p->kernels[i];
    a->count++;
    a->total_ns += d;
    if (d > a->max_ns)
        a->max_ns = d;
    if (k->start_ns < a->first_ns)
        a->first_ns = k->start_ns;
    if (d < GT_SHORT_KERNEL_NS) {
        a->short_count++;
        p->short_kernel_count++;
    }
    p->kernel_count++;
    p->kernel_ns += d;
    if (k->device < GT_MAX_DEVICES)
        p->kernel_ns_by_device[k->device] += d;
    md_iv_add(s, k->start_ns, k->end_ns);
}

void md_on_gpu_memcpy(gt_proc *p, pass_state *s, const gt_rec_gpu_memcpy *m)
{
    uint8_t dir;
    switch (m->copy_kind) {
    case 1:
        dir = GT_DIR_H2D;
        break;
    case 2:
        dir = GT_DIR_D2H;
        break;
    case 9:
        dir = GT_DIR_H2H;
        break;
    default:
        dir = GT_DIR_D2D;
        break;
    }
    uint8_t hk = md_host_kind_of(dir, m->src_kind, m->dst_kind);
    gt_copy_agg *a = &p->copies[dir][hk];
    a->count++;
    a->bytes += m->bytes;
    a->gpu_ns += m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
    s->gpu_memcpy_records++;
    md_iv_add(s, m->start_ns, m->end_ns);
}

static char *demangle_short(const char *mangled)
{
    char *d = gt_demangle(mangled);
    return d ? d : gt_xstrdup(mangled);
}

void md_resolve_kernel_names(gt_proc *p, pass_state *s)
{
    for (size_t i = 0; i < p->n_kernels; i++) {
        gt_kernel_agg *k = &p->kernels[i];
        uint32_t id = (uint32_t)(uintptr_t)k->mangled;
        const char *m = gt_reader_string(s->reader, id);
        char buf[32];
        if (!m) {
            snprintf(buf, sizeof buf, "kernel#%u", id);
            m = buf;
        }
        k->mangled = gt_xstrdup(m);
        k->name = demangle_short(m);
        k->is_nccl = md_contains_ci(m, "nccl");
        k->family = gt_kernel_family_of(m);
        k->tensor_cores = uses_tensor_cores(m);
        k->conv_like = md_conv_like(m);
        md_framework_on_kernel_name(p, m);
        if (k->is_nccl)
            p->nccl_ns += k->total_ns;
    }
}

/* The cuDNN call or GEMM (top bit) a kernel's GPU time belongs to, UINT32_MAX for none; the
 * kernel counted by how op_link.h linked it in pass 1, or as unlinked. */
uint32_t md_kernel_call(gt_proc *p, pass_state *s, const gt_rec_gpu_kernel *k)
{
    uint32_t call = UINT32_MAX;
    int how = md_link_of(s, k->corr_id, &call);
    p->kernels_by_pair += how == GT_LINK_PAIR;
    p->kernels_by_order += how == GT_LINK_ORDER;
    p->kernels_by_time += how == GT_LINK_TIME;
    if (!how) {
        uint32_t agg = gt_map_get(&s->kern_by_name, k->name_id);
        if (agg < p->n_kernels)
            p->kernels[agg].unlinked++;
    }
    return call != UINT32_MAX ? md_call_agg(s, call) : UINT32_MAX;
}
