/* peaks.c — the report's comparison with this machine's own peaks (peaks.h; the file is written by
 * analyzer/doctor/doctor_out.c, its schema is in docs/doctor.md).
 *
 * Kept out of the report and advice code on purpose: they call four functions, and everything
 * about finding, reading and phrasing the peaks lives here. */
#include "peaks.h"
#include "gtrace_api.h"
#include "textfmt.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Fewer bytes than this in a row measure latency (a loss.item() read-back), not bandwidth. */
#define MIN_COPY_BYTES (1u << 20)

static const char *const COPY_KEYS[GT_PEAK_N_COPIES] = {
    "h2d_pageable",   "h2d_pinned", "h2d_registered", "d2h_pageable", "d2h_pinned",
    "d2h_registered", "d2d"};
static const char *const GEMM_KEYS[GT_PEAK_N_GEMMS] = {"fp32", "tf32", "bf16"};

static void copy_str(char *dst, size_t len, json_t *v)
{
    snprintf(dst, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

int gt_peaks_read(const char *path, gt_peaks *out)
{
    memset(out, 0, sizeof *out);
    json_t *root = json_load_file(path, 0, NULL);
    if (!root)
        return -1;
    json_t *schema = json_object_get(root, "schema");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "gputrace-peaks") != 0) {
        json_decref(root);
        return -1;
    }
    snprintf(out->path, sizeof out->path, "%s", path);
    copy_str(out->host, sizeof out->host, json_object_get(root, "host"));
    copy_str(out->gpu_name, sizeof out->gpu_name, json_object_get(root, "gpu_name"));
    copy_str(out->measured_at, sizeof out->measured_at, json_object_get(root, "measured_at"));
    json_t *copies = json_object_get(root, "copies_gbps"),
           *gemms = json_object_get(root, "gemm_tflops");
    for (int i = 0; i < GT_PEAK_N_COPIES; i++)
        out->copies_gbps[i] = json_number_value(json_object_get(copies, COPY_KEYS[i]));
    for (int i = 0; i < GT_PEAK_N_GEMMS; i++)
        out->gemm_tflops[i] = json_number_value(json_object_get(gemms, GEMM_KEYS[i]));
    json_decref(root);
    return 0;
}

static int matches(const gt_proc *p, const gt_peaks *k)
{
    if (!p->host || strcmp(p->host, k->host) != 0)
        return 0;
    const gt_runtime_info *rt = &p->hdr.runtime;
    for (int i = 0; i < rt->device_count && i < GT_MAX_DEVICES; i++)
        if (!strcmp(rt->devices[i].name, k->gpu_name))
            return 1;
    return 0;
}

/* The newest matching peaks-*.json in dir. */
static int find_in_dir(const gt_proc *p, const char *dir, gt_peaks *out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "peaks-", 6) != 0 || n < 11 || strcmp(e->d_name + n - 5, ".json"))
            continue;
        char path[PATH_MAX];
        gt_peaks k;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
            gt_peaks_read(path, &k) != 0 || !matches(p, &k))
            continue;
        if (!found || strcmp(k.measured_at, out->measured_at) > 0)
            *out = k;
        found = 1;
    }
    closedir(d);
    if (found)
        out->same_machine = 1;
    return found ? 0 : -1;
}

int gt_peaks_for_proc(const gt_proc *p, gt_peaks *out)
{
    const char *env = getenv("GPUTRACE_PEAKS");
    char dir[PATH_MAX];
    struct stat st;
    if (env && (!*env || !strcmp(env, "off") || !strcmp(env, "0")))
        return -1;
    if (env && stat(env, &st) == 0 && !S_ISDIR(st.st_mode)) {
        if (gt_peaks_read(env, out) != 0)
            return -1;
        out->same_machine = matches(p, out);
        return 0;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/gputrace", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/gputrace", home);
    else
        return -1;
    return find_in_dir(p, dir, out);
}

static const char *origin(const gt_peaks *k)
{
    return gt_fmt("gputrace doctor, %s%s%s%s", k->measured_at,
                  k->same_machine ? "" : "; measured on ", k->same_machine ? "" : k->host,
                  k->same_machine ? "" : gt_fmt(", %s", k->gpu_name));
}

static double copy_gbps(const gt_proc *p, const gt_copy_agg *c)
{
    uint64_t ns = p->copies_from_gpu ? c->gpu_ns : c->cpu_ns;
    return ns ? (double)c->bytes / (double)ns : 0;
}

void gt_peaks_print_copies(const gt_proc *p, FILE *out)
{
    gt_peaks k;
    if (gt_peaks_for_proc(p, &k) != 0)
        return;
    const double *g = k.copies_gbps;
    fprintf(out,
            "  this machine (%s): H2D pinned %.1f, pageable %.1f GB/s; D2H pinned %.1f, "
            "pageable %.1f GB/s; D2D %.0f GB/s\n",
            origin(&k), g[GT_PEAK_H2D_PINNED], g[GT_PEAK_H2D_PAGEABLE], g[GT_PEAK_D2H_PINNED],
            g[GT_PEAK_D2H_PAGEABLE], g[GT_PEAK_D2D]);
    static const int dirs[2] = {GT_DIR_H2D, GT_DIR_D2H};
    for (int d = 0; d < 2; d++)
        for (int kind = GT_MEM_PAGEABLE; kind <= GT_MEM_PINNED; kind++) {
            const gt_copy_agg *c = &p->copies[dirs[d]][kind];
            double bw = copy_gbps(p, c);
            double pinned = g[d ? GT_PEAK_D2H_PINNED : GT_PEAK_H2D_PINNED];
            double same =
                g[(d ? GT_PEAK_D2H_PAGEABLE : GT_PEAK_H2D_PAGEABLE) + (kind == GT_MEM_PINNED)];
            if (c->bytes < MIN_COPY_BYTES || bw <= 0 || same <= 0 || pinned <= 0)
                continue;
            fprintf(out, "  %s %s %.2f GB/s: %.0f%% of this machine's %s peak%s\n",
                    d ? "D2H" : "H2D", kind == GT_MEM_PINNED ? "pinned" : "pageable", bw,
                    100 * bw / same, kind == GT_MEM_PINNED ? "pinned" : "pageable",
                    kind == GT_MEM_PINNED
                        ? ""
                        : gt_fmt(" (pinned memory would reach %.1f GB/s)", pinned));
        }
}

/* Which of the machine's GEMM peaks a recorded GEMM compares with: bf16/fp16 inputs, TF32 compute,
 * or plain fp32; -1 for the rest (fp64, int8...). cudaDataType / cublasComputeType_t values. */
static int gemm_class(const gt_gemm_agg *g)
{
    if (g->atype == 14 || g->atype == 2) /* CUDA_R_16BF, CUDA_R_16F */
        return GT_PEAK_BF16;
    if (g->compute_type == 77) /* CUBLAS_COMPUTE_32F_FAST_TF32 */
        return GT_PEAK_TF32;
    if (g->atype == 0) /* CUDA_R_32F */
        return GT_PEAK_FP32;
    return -1;
}

static double gemm_tflops(const gt_gemm_agg *g)
{
    double flop = 2.0 * (double)g->m * (double)g->n * (double)g->k *
                  (double)(g->batch > 0 ? g->batch : 1) * (double)g->count;
    return g->gpu_ns ? flop / (double)g->gpu_ns / 1e3 : 0;
}

void gt_peaks_print_gemms(const gt_proc *p, FILE *out)
{
    gt_peaks k;
    if (!p->n_gemms || gt_peaks_for_proc(p, &k) != 0)
        return;
    const double *t = k.gemm_tflops;
    fprintf(out, "  this machine (%s): GEMM fp32 %.1f, TF32 %.1f, bf16 %.1f TFLOPS\n", origin(&k),
            t[GT_PEAK_FP32], t[GT_PEAK_TF32], t[GT_PEAK_BF16]);
    for (size_t i = 0; i < p->n_gemms && i < 15; i++) {
        const gt_gemm_agg *g = &p->gemms[i];
        int cls = gemm_class(g);
        double tf = gemm_tflops(g);
        if (cls < 0 || tf <= 0 || t[cls] <= 0)
            continue;
        const char *fn = gt_api_func_name(g->func);
        fprintf(out, "  %s %lldx%lldx%lld: %.2f TFLOPS, %.1f%% of this machine's %s peak\n",
                fn ? fn : "?", (long long)g->m, (long long)g->n, (long long)g->k, tf,
                100 * tf / t[cls],
                cls == GT_PEAK_BF16   ? "bf16"
                : cls == GT_PEAK_TF32 ? "TF32"
                                      : "fp32");
    }
}

json_t *gt_peaks_json(const gt_proc *p)
{
    gt_peaks k;
    if (gt_peaks_for_proc(p, &k) != 0)
        return json_null();
    json_t *copies = json_object(), *gemms = json_object();
    for (int i = 0; i < GT_PEAK_N_COPIES; i++)
        json_object_set_new(copies, COPY_KEYS[i],
                            k.copies_gbps[i] > 0 ? json_real(k.copies_gbps[i]) : json_null());
    for (int i = 0; i < GT_PEAK_N_GEMMS; i++)
        json_object_set_new(gemms, GEMM_KEYS[i],
                            k.gemm_tflops[i] > 0 ? json_real(k.gemm_tflops[i]) : json_null());
    return json_pack("{s:s, s:s, s:s, s:s, s:b, s:o, s:o}", "file", k.path, "host", k.host,
                     "gpu_name", k.gpu_name, "measured_at", k.measured_at, "same_machine",
                     k.same_machine, "copies_gbps", copies, "gemm_tflops", gemms);
}

double gt_peaks_pinned_ms(const gt_proc *p, uint64_t h2d_bytes, uint64_t d2h_bytes, char *note,
                          size_t note_len)
{
    gt_peaks k;
    if (gt_peaks_for_proc(p, &k) != 0)
        return -1;
    double h2d = k.copies_gbps[GT_PEAK_H2D_PINNED], d2h = k.copies_gbps[GT_PEAK_D2H_PINNED];
    if ((h2d_bytes && h2d <= 0) || (d2h_bytes && d2h <= 0))
        return -1;
    double ms = (h2d_bytes ? (double)h2d_bytes / h2d / 1e6 : 0) +
                (d2h_bytes ? (double)d2h_bytes / d2h / 1e6 : 0);
    snprintf(note, note_len,
             " On this machine pinned copies reach %.1f GB/s H2D and %.1f GB/s D2H (gputrace "
             "doctor), so these would take about %s.",
             h2d, d2h, gt_dur(ms));
    return ms;
}
