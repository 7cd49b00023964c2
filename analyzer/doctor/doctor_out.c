/* doctor_out.c — doctor's text and JSON, and the peaks file (`--save`) the report reads.
 *
 * JSON is written by a small writer here because doctor links no JSON library (it must build on
 * a GPU machine with only a C compiler); the schemas are in docs/doctor.md. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "doctor.h"

/* ---------------------------------------------------------------- a small JSON writer */

typedef struct jw {
    FILE *f;
    int depth;
    int first[32];
} jw;

static void jw_sep(jw *w, const char *key)
{
    if (!w->first[w->depth])
        fputc(',', w->f);
    w->first[w->depth] = 0;
    fprintf(w->f, "\n%*s", 2 * w->depth, "");
    if (key)
        fprintf(w->f, "\"%s\": ", key);
}

static void jw_escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void jw_open(jw *w, const char *key, char bracket)
{
    if (w->depth >= 0 && (w->depth > 0 || key))
        jw_sep(w, key);
    fputc(bracket, w->f);
    w->first[++w->depth] = 1;
}

static void jw_close(jw *w, char bracket)
{
    int empty = w->first[w->depth];
    w->depth--;
    if (!empty)
        fprintf(w->f, "\n%*s", 2 * w->depth, "");
    fputc(bracket, w->f);
}

static void jw_str(jw *w, const char *key, const char *v)
{
    jw_sep(w, key);
    if (v)
        jw_escaped(w->f, v);
    else
        fputs("null", w->f);
}

/* A string, or null when empty. */
static void jw_text(jw *w, const char *key, const char *v)
{
    jw_str(w, key, v && *v ? v : NULL);
}

static void jw_int(jw *w, const char *key, long long v)
{
    jw_sep(w, key);
    fprintf(w->f, "%lld", v);
}

/* An integer, or null when the value means "not readable". */
static void jw_int_or_null(jw *w, const char *key, long long v, long long unknown)
{
    jw_sep(w, key);
    if (v == unknown)
        fputs("null", w->f);
    else
        fprintf(w->f, "%lld", v);
}

static void jw_num(jw *w, const char *key, double v, int valid)
{
    jw_sep(w, key);
    if (valid && isfinite(v))
        fprintf(w->f, "%.6g", v);
    else
        fputs("null", w->f);
}

static void jw_bool(jw *w, const char *key, int v)
{
    jw_sep(w, key);
    fputs(v < 0 ? "null" : v ? "true" : "false", w->f);
}

/* ---------------------------------------------------------------- shared helpers */

static const char *status_name(int s)
{
    return s == DR_OK ? "ok" : s == DR_WARN ? "warn" : "FAIL";
}

static int worst_status(const dr_report *r)
{
    int worst = DR_OK;
    for (int i = 0; i < r->n_checks; i++)
        if (r->checks[i].status > worst)
            worst = r->checks[i].status;
    return worst;
}

static const char *onoff(int v)
{
    return v < 0 ? "not readable" : v ? "on" : "off";
}

/* ---------------------------------------------------------------- text */

static void print_gpu(const dr_gpu *g, FILE *out)
{
    fprintf(out, "  GPU %d   %s  %s\n", g->ordinal, g->name, g->uuid);
    fprintf(out, "          compute capability %d.%d, %d SMs, %.1f GiB", g->cc_major, g->cc_minor,
            g->sm_count, (double)g->total_mem / (1u << 30));
    if (g->sm_clock_max_mhz)
        fprintf(out, ", SM clock max %d MHz", g->sm_clock_max_mhz);
    if (g->sm_clock_now_mhz)
        fprintf(out, " (now %d MHz)", g->sm_clock_now_mhz);
    fputc('\n', out);
    char how[96] = "";
    double mem = dr_spec_memory_gbps(g, how, sizeof how);
    if (mem > 0)
        fprintf(out, "          memory %d MHz x %d bit = %.0f GB/s specified\n",
                g->mem_clock_max_mhz, g->mem_bus_width_bits, mem);
    fprintf(out, "          PCI %s", g->pci_bus_id[0] ? g->pci_bus_id : "?");
    if (g->pcie_source) {
        double pcie = dr_spec_pcie_gbps(g, how, sizeof how);
        fprintf(out, ": link gen%d x%d now, gen%d x%d max", g->pcie_gen_now, g->pcie_width_now,
                g->pcie_gen_max, g->pcie_width_max);
        if (pcie > 0)
            fprintf(out, " (%.1f GB/s each way)", pcie);
        fprintf(out, " [%s]", g->pcie_source);
    } else {
        fprintf(out, ": PCIe link not readable (no NVML, no sysfs entry)");
    }
    fputc('\n', out);
    fprintf(out, "          NVLink ");
    if (g->nvlink_active < 0)
        fprintf(out, "not readable");
    else if (g->nvlink_active == 0)
        fprintf(out, "none active");
    else
        fprintf(out, "%d links active (version %d)", g->nvlink_active, g->nvlink_version);
    fprintf(out, ", persistence mode %s, MIG %s\n", onoff(g->persistence), onoff(g->mig));
}

static void print_libs(const dr_report *r, FILE *out)
{
    const dr_libs *l = &r->libs;
    if (!l->n)
        fprintf(out, "  none found\n");
    for (int k = 0; k < DR_N_KINDS; k++)
        for (int i = 0; i < l->n; i++) {
            const dr_lib *a = &l->libs[i];
            if (a->kind != k)
                continue;
            fprintf(out, "  %-18s %-12s", a->soname, dr_lib_ver(a->kind, a->version));
            if (a->built_for && a->kind != DR_CUDART)
                fprintf(out, " for CUDA %-5s", dr_cuda_ver(a->built_for));
            else
                fprintf(out, " %-14s", "");
            fprintf(out, " %-15s %s", dr_lib_source_name(a->source), a->path);
            if (strcmp(a->path, a->realpath))
                fprintf(out, " -> %s", a->realpath);
            fputc('\n', out);
            if (a->probe_error[0])
                fprintf(out, "  %-18s version not read: %s\n", "", a->probe_error);
            if (a->shadowed_by >= 0)
                fprintf(out, "  %-18s shadowed by %s\n", "", l->libs[a->shadowed_by].path);
        }
    if (l->truncated)
        fprintf(out, "  (more than %d libraries: the rest not listed)\n", DR_MAX_LIBS);
}

static void print_framework(const char *name, const dr_framework *f, FILE *out)
{
    if (!f->present) {
        fprintf(out, "  %-6s not importable%s%s\n", name, f->error[0] ? ": " : "", f->error);
        return;
    }
    fprintf(out, "  %-6s %s, built for CUDA %s", name, f->version, f->cuda[0] ? f->cuda : "-");
    if (f->cudnn)
        fprintf(out, ", cuDNN %s", dr_lib_ver(DR_CUDNN, f->cudnn));
    fprintf(out, "; sees %d GPU(s)%s%s\n", f->device_count, f->devices[0] ? ": " : "", f->devices);
    if (f->arch_list[0])
        fprintf(out, "         arch list: %s\n", f->arch_list);
    if (f->error[0])
        fprintf(out, "         error: %s\n", f->error);
}

static void print_measure_row(const char *what, const dr_measure *m, const char *unit, FILE *out)
{
    if (!m->done) {
        fprintf(out, "  %-16s not measured: %s\n", what, m->error);
        return;
    }
    fprintf(out, "  %-16s %9.1f %-6s (median %.1f, %d runs)", what, m->best, unit, m->median,
            m->reps);
    if (m->spec > 0)
        fprintf(out, "  %5.1f%% of %.1f %s (%s)", 100 * m->best / m->spec, m->spec, unit,
                m->spec_how);
    else
        fprintf(out, "  no specified figure");
    fputc('\n', out);
}

static void print_bench(const dr_report *r, const dr_bench *b, FILE *out)
{
    const dr_gpu *g = &r->driver.gpus[b->gpu];
    fprintf(out, "\n== measured on GPU %d (%s) ==\n", b->gpu, g->name);
    if (!b->ran) {
        fprintf(out, "  could not measure: %s\n", b->error);
        return;
    }
    fprintf(out, "  copies of %zu MiB, timed with CUDA events (best of the runs):\n",
            b->copy_bytes >> 20);
    for (int t = 0; t < DR_N_COPY_TESTS; t++)
        print_measure_row(dr_copy_test_name(t), &b->copies[t], "GB/s", out);
    if (b->gemm_n || b->gemms[0].error[0]) {
        fprintf(out, "  GEMM %d x %d x %d through cuBLAS (%s), dense peak at the max SM clock:\n",
                b->gemm_n, b->gemm_n, b->gemm_n, b->cublas_path[0] ? b->cublas_path : "-");
        for (int t = 0; t < DR_N_GEMM_TESTS; t++) {
            char what[32];
            snprintf(what, sizeof what, "GEMM %s", dr_gemm_test_name(t));
            print_measure_row(what, &b->gemms[t], "TFLOPS", out);
        }
    }
}

void dr_print_text(const dr_report *r, FILE *out)
{
    const dr_driver *d = &r->driver;
    fprintf(out, "gputrace doctor: %s, %s\n", r->host, r->when);
    fprintf(out, "\n== driver ==\n");
    if (!d->loaded) {
        fprintf(out, "  libcuda.so.1 not found: no NVIDIA driver on the loader's path\n");
    } else {
        fprintf(out, "  libcuda.so.1   %s\n", d->lib_path);
        if (d->init_rc)
            fprintf(out, "  cuInit failed: %s\n", d->init_error);
        else
            fprintf(out, "  driver %s, supports CUDA %s; NVML %s\n",
                    d->driver_version[0] ? d->driver_version : "(version not readable)",
                    dr_cuda_ver(d->cuda_version), d->nvml_loaded ? "loaded" : "not loadable");
    }
    fprintf(out, "\n== GPUs ==\n");
    if (!d->n_gpus)
        fprintf(out, "  none visible\n");
    for (int i = 0; i < d->n_gpus; i++)
        print_gpu(&d->gpus[i], out);
    fprintf(out, "\n== libraries (in the loader's order: LD_LIBRARY_PATH, then ldconfig) ==\n");
    print_libs(r, out);
    if (r->python.asked) {
        fprintf(out, "\n== Python (%s) ==\n", r->python.interpreter);
        if (!r->python.ran) {
            fprintf(out, "  %s\n", r->python.error);
        } else {
            fprintf(out, "  Python %s%s%s\n", r->python.version, r->python.error[0] ? "; " : "",
                    r->python.error);
            print_framework("torch", &r->python.torch, out);
            print_framework("jax", &r->python.jax, out);
        }
    }
    for (int i = 0; i < r->n_benches; i++)
        print_bench(r, &r->benches[i], out);
    fprintf(out, "\n== checks ==\n");
    int counts[3] = {0, 0, 0};
    for (int i = 0; i < r->n_checks; i++) {
        counts[r->checks[i].status]++;
        fprintf(out, "  %-4s  %s\n", status_name(r->checks[i].status), r->checks[i].text);
    }
    fprintf(out, "\n%d ok, %d warnings, %d failures\n", counts[DR_OK], counts[DR_WARN],
            counts[DR_FAIL]);
}

/* ---------------------------------------------------------------- JSON */

static void json_gpu(jw *w, const dr_gpu *g)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
    jw_open(w, NULL, '{');
    jw_int(w, "ordinal", g->ordinal);
    jw_str(w, "name", g->name);
    jw_text(w, "uuid", g->uuid);
    jw_text(w, "pci_bus_id", g->pci_bus_id);
    jw_str(w, "compute_capability", cc);
    jw_int(w, "sm_count", g->sm_count);
    jw_int(w, "memory_bytes", (long long)g->total_mem);
    jw_int_or_null(w, "sm_clock_max_mhz", g->sm_clock_max_mhz, 0);
    jw_int_or_null(w, "sm_clock_now_mhz", g->sm_clock_now_mhz, 0);
    jw_int_or_null(w, "memory_clock_max_mhz", g->mem_clock_max_mhz, 0);
    jw_int_or_null(w, "memory_bus_width_bits", g->mem_bus_width_bits, 0);
    if (g->pcie_source) {
        jw_open(w, "pcie", '{');
        jw_int(w, "gen_now", g->pcie_gen_now);
        jw_int(w, "width_now", g->pcie_width_now);
        jw_int(w, "gen_max", g->pcie_gen_max);
        jw_int(w, "width_max", g->pcie_width_max);
        jw_str(w, "source", g->pcie_source);
        jw_close(w, '}');
    } else {
        jw_str(w, "pcie", NULL);
    }
    jw_int_or_null(w, "nvlink_active_links", g->nvlink_active, -1);
    jw_bool(w, "persistence_mode", g->persistence);
    jw_bool(w, "mig_mode", g->mig);
    jw_close(w, '}');
}

static void json_lib(jw *w, const dr_libs *l, const dr_lib *a)
{
    jw_open(w, NULL, '{');
    jw_str(w, "kind", dr_lib_kind_name(a->kind));
    jw_str(w, "soname", a->soname);
    jw_str(w, "path", a->path);
    jw_str(w, "realpath", a->realpath);
    jw_text(w, "file_version", a->file_ver);
    jw_str(w, "source", dr_lib_source_name(a->source));
    jw_int_or_null(w, "version", a->version, 0);
    jw_str(w, "version_text", a->version ? dr_lib_ver(a->kind, a->version) : NULL);
    jw_str(w, "built_for_cuda", a->built_for ? dr_cuda_ver(a->built_for) : NULL);
    jw_bool(w, "loader_choice", a->loader_choice);
    jw_str(w, "shadowed_by", a->shadowed_by >= 0 ? l->libs[a->shadowed_by].path : NULL);
    jw_text(w, "error", a->probe_error);
    jw_close(w, '}');
}

static void json_framework(jw *w, const char *key, const dr_framework *f)
{
    if (!f->present && !f->error[0]) {
        jw_str(w, key, NULL);
        return;
    }
    jw_open(w, key, '{');
    jw_text(w, "version", f->version);
    jw_text(w, "cuda", f->cuda);
    jw_int_or_null(w, "cudnn", f->cudnn, 0);
    jw_text(w, "arch_list", f->arch_list);
    jw_bool(w, "available", f->present ? f->available : -1);
    jw_int(w, "device_count", f->device_count);
    jw_text(w, "devices", f->devices);
    jw_text(w, "error", f->error);
    jw_close(w, '}');
}

static void json_measure(jw *w, const char *key, const dr_measure *m)
{
    jw_open(w, key, '{');
    jw_num(w, "best", m->best, m->done);
    jw_num(w, "median", m->median, m->done);
    jw_int(w, "runs", m->reps);
    jw_num(w, "specified", m->spec, m->spec > 0);
    jw_text(w, "specified_from", m->spec_how);
    jw_num(w, "percent_of_specified", m->spec > 0 ? 100 * m->best / m->spec : 0,
           m->done && m->spec > 0);
    jw_text(w, "error", m->error);
    jw_close(w, '}');
}

static void json_bench(jw *w, const dr_bench *b)
{
    jw_open(w, NULL, '{');
    jw_int(w, "gpu", b->gpu);
    jw_text(w, "error", b->error);
    jw_int(w, "copy_bytes", (long long)b->copy_bytes);
    jw_open(w, "copies_gbps", '{');
    for (int t = 0; t < DR_N_COPY_TESTS; t++)
        json_measure(w, dr_copy_test_key(t), &b->copies[t]);
    jw_close(w, '}');
    jw_int_or_null(w, "gemm_n", b->gemm_n, 0);
    jw_text(w, "cublas", b->cublas_path);
    jw_open(w, "gemm_tflops", '{');
    for (int t = 0; t < DR_N_GEMM_TESTS; t++)
        json_measure(w, dr_gemm_test_name(t), &b->gemms[t]);
    jw_close(w, '}');
    jw_close(w, '}');
}

static void json_python(jw *w, const dr_python *py)
{
    if (!py->asked) {
        jw_str(w, "python", NULL);
        return;
    }
    jw_open(w, "python", '{');
    jw_str(w, "interpreter", py->interpreter);
    jw_text(w, "version", py->version);
    jw_text(w, "error", py->error);
    jw_open(w, "library_dirs", '[');
    for (int i = 0; i < py->n_dirs; i++)
        jw_str(w, NULL, py->dirs[i]);
    jw_close(w, ']');
    json_framework(w, "torch", &py->torch);
    json_framework(w, "jax", &py->jax);
    jw_close(w, '}');
}

void dr_print_json(const dr_report *r, FILE *out)
{
    const dr_driver *d = &r->driver;
    jw w = {.f = out};
    jw_open(&w, NULL, '{');
    jw_str(&w, "schema", "gputrace-doctor");
    jw_int(&w, "schema_version", 1);
    jw_str(&w, "host", r->host);
    jw_str(&w, "time", r->when);
    jw_str(&w, "status",
           !r->driver_ok                ? "cannot-run"
           : worst_status(r) == DR_FAIL ? "fail"
           : worst_status(r) == DR_WARN ? "warn"
                                        : "ok");
    jw_open(&w, "driver", '{');
    jw_bool(&w, "loaded", d->loaded);
    jw_text(&w, "library", d->lib_path);
    jw_text(&w, "init_error", d->init_error);
    jw_str(&w, "cuda_version", d->cuda_version ? dr_cuda_ver(d->cuda_version) : NULL);
    jw_text(&w, "driver_version", d->driver_version);
    jw_bool(&w, "nvml", d->nvml_loaded);
    jw_close(&w, '}');
    jw_open(&w, "gpus", '[');
    for (int i = 0; i < d->n_gpus; i++)
        json_gpu(&w, &d->gpus[i]);
    jw_close(&w, ']');
    jw_open(&w, "libraries", '[');
    for (int i = 0; i < r->libs.n; i++)
        json_lib(&w, &r->libs, &r->libs.libs[i]);
    jw_close(&w, ']');
    json_python(&w, &r->python);
    jw_open(&w, "measurements", '[');
    for (int i = 0; i < r->n_benches; i++)
        json_bench(&w, &r->benches[i]);
    jw_close(&w, ']');
    jw_open(&w, "checks", '[');
    for (int i = 0; i < r->n_checks; i++) {
        jw_open(&w, NULL, '{');
        jw_str(&w, "status",
               r->checks[i].status == DR_FAIL ? "fail" : status_name(r->checks[i].status));
        jw_str(&w, "id", r->checks[i].id);
        jw_str(&w, "text", r->checks[i].text);
        jw_close(&w, '}');
    }
    jw_close(&w, ']');
    jw_close(&w, '}');
    fputc('\n', out);
}

/* ---------------------------------------------------------------- the peaks file */

static int mkdir_p(char *dir)
{
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int rc = mkdir(dir, 0755);
        *p = '/';
        if (rc != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(dir, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int dr_peaks_path(const dr_gpu *g, char *out, size_t len)
{
    const char *env = getenv("GPUTRACE_PEAKS");
    char dir[PATH_MAX];
    if (env && *env && !is_dir(env) && env[strlen(env) - 1] != '/') {
        snprintf(out, len, "%s", env); /* a file */
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", env);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = 0;
            return mkdir_p(parent);
        }
        return 0;
    }
    if (env && *env) {
        snprintf(dir, sizeof dir, "%s", env);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(dir, sizeof dir, "%s/gputrace", xdg);
        else if (home && *home)
            snprintf(dir, sizeof dir, "%s/.cache/gputrace", home);
        else
            return -1;
    }
    if (mkdir_p(dir) != 0)
        return -1;
    snprintf(out, len, "%s/peaks-%s.json", dir, g->uuid[0] ? g->uuid : "unknown");
    return 0;
}

int dr_save_peaks(const dr_report *r, const dr_bench *b, const char *path)
{
    const dr_gpu *g = &r->driver.gpus[b->gpu];
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -1;
    jw w = {.f = f};
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
    jw_open(&w, NULL, '{');
    jw_str(&w, "schema", "gputrace-peaks");
    jw_int(&w, "schema_version", 1);
    jw_str(&w, "host", r->host);
    jw_str(&w, "measured_at", r->when);
    jw_str(&w, "gpu_name", g->name);
    jw_str(&w, "gpu_uuid", g->uuid);
    jw_int(&w, "gpu_ordinal", g->ordinal);
    jw_str(&w, "compute_capability", cc);
    jw_str(&w, "driver_cuda", dr_cuda_ver(r->driver.cuda_version));
    jw_int(&w, "copy_bytes", (long long)b->copy_bytes);
    jw_open(&w, "copies_gbps", '{');
    for (int t = 0; t < DR_N_COPY_TESTS; t++)
        jw_num(&w, dr_copy_test_key(t), b->copies[t].best, b->copies[t].done);
    jw_close(&w, '}');
    jw_open(&w, "gemm_tflops", '{');
    for (int t = 0; t < DR_N_GEMM_TESTS; t++)
        jw_num(&w, dr_gemm_test_name(t), b->gemms[t].best, b->gemms[t].done);
    jw_close(&w, '}');
    jw_open(&w, "specified", '{');
    jw_num(&w, "pcie_gbps", b->copies[DR_H2D_PINNED].spec, b->copies[DR_H2D_PINNED].spec > 0);
    for (int t = 0; t < DR_N_GEMM_TESTS; t++) {
        char key[32];
        snprintf(key, sizeof key, "%s_tflops", dr_gemm_test_name(t));
        jw_num(&w, key, b->gemms[t].spec, b->gemms[t].spec > 0);
    }
    jw_close(&w, '}');
    jw_close(&w, '}');
    fputc('\n', f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        int saved = errno;
        remove(tmp);
        errno = saved ? saved : EIO;
        return -1;
    }
    return 0;
}
