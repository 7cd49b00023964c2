/* doctor_main.c — `gputrace doctor`: options, the checks that turn what was found into ok / warn /
 * FAIL lines, and the exit status (0 all well, 3 a check failed, 2 doctor cannot run: no driver,
 * no GPU, bad usage).
 *
 * The checks are the ones the installation guides ask users to do by hand (nvidia-smi, nvcc
 * --version, torch.version.cuda, the arch list, a bandwidth test, a GEMM), joined so that each
 * mismatch is named with the files involved. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"

#define PINNED_LOW_SHARE 0.5 /* pinned copies below this share of the PCIe figure: a warning */
#define GEMM_LOW_SHARE 0.3   /* GEMMs below this share of the specified peak: a warning */

typedef struct doctor_options {
    int json, save, no_bench, copies_only, quiet;
    int device; /* -1: all */
    const char *python;
} doctor_options;

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: gputrace doctor [--json] [--python PYTHON] [--save] [--device N|all]\n"
        "                       [--no-bench | --copies-only] [-q]\n\n"
        "Check this machine's CUDA stack and measure what its GPU does: the driver and the\n"
        "CUDA version it supports; every libcudart, libcudnn, libcublas(Lt), libcupti the\n"
        "loader would find (LD_LIBRARY_PATH, ldconfig) with versions, what each was built for,\n"
        "duplicates and mismatches; each GPU (compute capability, memory, SMs, clocks, PCIe\n"
        "or NVLink, persistence, MIG); then host<->device copies (pageable, pinned,\n"
        "registered), a device copy and fp32/TF32/bf16 GEMMs through cuBLAS, each against\n"
        "the figure the hardware is specified for. Takes a few seconds.\n\n"
        "  --json            JSON output (schema: docs/doctor.md)\n"
        "  --python PYTHON   also ask this interpreter's PyTorch/JAX (CUDA, cuDNN, arch\n"
        "                    list) and scan its wheels' CUDA libraries\n"
        "  --save            write the measured peaks for `gputrace report` to\n"
        "                    ~/.cache/gputrace/peaks-<gpu-uuid>.json (or GPUTRACE_PEAKS)\n"
        "  --device N|all    GPU(s) to measure (default 0)\n"
        "  --no-bench        no measurements: versions and GPUs only\n"
        "  --copies-only     measure copies, no GEMMs\n"
        "  -q, --quiet       print nothing but errors (with --save)\n"
        "  -h, --help        this help\n\n"
        "Exit status: 0 all well (warnings allowed), 3 a check failed, 2 cannot run (no\n"
        "driver, no GPU, bad usage).\n");
}

void dr_check_add(dr_report *r, int status, const char *id, const char *fmt, ...)
{
    if (r->n_checks == DR_MAX_CHECKS)
        return;
    dr_check *c = &r->checks[r->n_checks++];
    c->status = status;
    snprintf(c->id, sizeof c->id, "%s", id);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->text, sizeof c->text, fmt, ap);
    va_end(ap);
}

/* ---------------------------------------------------------------- checks */

static void check_driver(dr_report *r)
{
    const dr_driver *d = &r->driver;
    if (!d->loaded) {
        dr_check_add(r, DR_FAIL, "driver",
                     "libcuda.so.1 was not found: no NVIDIA driver is installed (or visible in "
                     "this container). nvidia-smi should work first.");
        return;
    }
    if (d->init_rc) {
        const char *vis = getenv("CUDA_VISIBLE_DEVICES");
        dr_check_add(r, DR_FAIL, "driver",
                     "cuInit failed: %s. Check nvidia-smi, CUDA_VISIBLE_DEVICES (%s) and, in a "
                     "container, that the GPUs are passed in (--gpus all).",
                     d->init_error, vis ? vis : "unset");
        return;
    }
    if (!d->n_gpus) {
        dr_check_add(r, DR_FAIL, "driver", "the driver sees no GPU (cuDeviceGetCount = 0)");
        return;
    }
    dr_check_add(r, DR_OK, "driver", "driver %s supports CUDA %s; %d GPU(s) visible",
                 d->driver_version[0] ? d->driver_version : "(version not readable)",
                 dr_cuda_ver(d->cuda_version), d->n_gpus);
}

static const char *lib_hint(int kind)
{
    switch (kind) {
    case DR_CUDART:
        return "programs linked against it will not start; PyTorch/JAX wheels bring their own "
               "(see --python)";
    case DR_CUDNN:
        return "C programs using cuDNN need it on LD_LIBRARY_PATH; PyTorch wheels bring their "
               "own";
    case DR_CUBLAS:
        return "no GEMM can be measured; PyTorch wheels bring their own";
    case DR_CUPTI:
        return "gputrace records no GPU-side activity without it (put CUDA's "
               "extras/CUPTI/lib64 or the nvidia-cuda-cupti wheel on LD_LIBRARY_PATH)";
    default:
        return "";
    }
}

/* A library built for another CUDA major than the runtime the loader takes fails at load or
 * falls back to slow paths: cuDNN for CUDA 12 with a CUDA 13 runtime, for instance. */
static void check_built_for(dr_report *r, int kind, int rt)
{
    int pick = dr_libs_loader_pick(&r->libs, kind);
    if (pick < 0 || rt < 0)
        return;
    const dr_lib *a = &r->libs.libs[pick], *cudart = &r->libs.libs[rt];
    if (!a->built_for || !cudart->version)
        return;
    if (a->built_for / 1000 == cudart->version / 1000)
        return;
    /* With a libcudart of its own major on the path too (libcudart.so.12 beside .13), programs
     * built for that major are fine: only the newer ones get the wrong build. */
    for (int i = 0; i < r->libs.n; i++) {
        const dr_lib *o = &r->libs.libs[i];
        if (o->kind == DR_CUDART && o->loader_choice && o->version / 1000 == a->built_for / 1000) {
            dr_check_add(r, DR_WARN, "mismatch",
                         "%s %s (%s) was built for CUDA %s: right for programs using %s, wrong for "
                         "those using the CUDA %s runtime (%s)",
                         dr_lib_kind_name(kind), dr_lib_ver(kind, a->version), a->path,
                         dr_cuda_ver(a->built_for), o->path, dr_cuda_ver(cudart->version),
                         cudart->path);
            return;
        }
    }
    dr_check_add(r, DR_FAIL, "mismatch",
                 "%s %s (%s) was built for CUDA %s, but the CUDA runtime the loader takes is "
                 "%s (%s): install the %s build for CUDA %d",
                 dr_lib_kind_name(kind), dr_lib_ver(kind, a->version), a->path,
                 dr_cuda_ver(a->built_for), dr_cuda_ver(cudart->version), cudart->path,
                 dr_lib_kind_name(kind), cudart->version / 1000);
}

static void check_duplicates(dr_report *r)
{
    const dr_libs *l = &r->libs;
    for (int i = 0; i < l->n; i++) {
        const dr_lib *a = &l->libs[i];
        const dr_lib *first = NULL;
        if (a->shadowed_by >= 0) {
            first = &l->libs[a->shadowed_by];
        } else if (a->source == DR_SRC_PYTHON) {
            for (int j = 0; j < l->n && !first; j++)
                if (l->libs[j].loader_choice && !strcmp(l->libs[j].soname, a->soname))
                    first = &l->libs[j];
        }
        if (!first)
            continue;
        /* What the libraries say decides; the file names only when either could not say. */
        int same = first->version && a->version ? first->version == a->version
                                                : !strcmp(first->file_ver, a->file_ver);
        if (a->source == DR_SRC_PYTHON) {
            if (!same)
                dr_check_add(r, DR_WARN, "duplicate",
                             "two %s: %s in the Python packages (%s) and %s on the loader's path "
                             "(%s): PyTorch takes its own through its RPATH unless the other was "
                             "loaded first (LD_PRELOAD, an earlier import)",
                             a->soname, dr_lib_ver(a->kind, a->version), a->path,
                             dr_lib_ver(first->kind, first->version), first->path);
            continue;
        }
        dr_check_add(r, same ? DR_OK : DR_WARN, "duplicate",
                     "two %s on the loader's path: %s %s (%s) is taken, %s %s (%s) is shadowed%s",
                     a->soname, dr_lib_ver(first->kind, first->version), first->path,
                     dr_lib_source_name(first->source), dr_lib_ver(a->kind, a->version), a->path,
                     dr_lib_source_name(a->source),
                     same ? " (the same version)"
                          : "; a program whose RPATH names the second "
                            "gets a different one");
    }
}

static void check_libraries(dr_report *r)
{
    int rt = dr_libs_loader_pick(&r->libs, DR_CUDART);
    for (int k = 0; k < DR_N_KINDS; k++) {
        if (k == DR_CUBLASLT)
            continue; /* it comes with cuBLAS */
        int pick = dr_libs_loader_pick(&r->libs, k);
        if (pick < 0) {
            dr_check_add(r, DR_WARN, "missing", "no %s (%s) on the loader's path: %s",
                         dr_lib_kind_name(k),
                         k == DR_CUDART   ? "libcudart.so.N"
                         : k == DR_CUDNN  ? "libcudnn.so.N"
                         : k == DR_CUBLAS ? "libcublas.so.N"
                                          : "libcupti.so.N",
                         lib_hint(k));
            continue;
        }
        const dr_lib *a = &r->libs.libs[pick];
        dr_check_add(r, DR_OK, "library", "%s %s: %s", dr_lib_kind_name(k),
                     dr_lib_ver(k, a->version), a->path);
    }
    const dr_driver *d = &r->driver;
    if (rt >= 0 && d->cuda_version && r->libs.libs[rt].version) {
        int v = r->libs.libs[rt].version;
        if (d->cuda_version / 1000 < v / 1000)
            dr_check_add(r, DR_FAIL, "driver-too-old",
                         "the driver supports CUDA %s but %s is CUDA %s: programs fail with "
                         "cudaErrorInsufficientDriver; update the driver",
                         dr_cuda_ver(d->cuda_version), r->libs.libs[rt].path, dr_cuda_ver(v));
        else if (d->cuda_version < v)
            dr_check_add(r, DR_WARN, "driver-too-old",
                         "the driver supports CUDA %s, the runtime is %s: minor version "
                         "compatibility applies (no PTX JIT of newer code)",
                         dr_cuda_ver(d->cuda_version), dr_cuda_ver(v));
    }
    check_built_for(r, DR_CUDNN, rt);
    check_built_for(r, DR_CUBLAS, rt);
    check_built_for(r, DR_CUBLASLT, rt);
    check_duplicates(r);
}

static void check_torch(dr_report *r)
{
    const dr_framework *t = &r->python.torch;
    const dr_driver *d = &r->driver;
    if (!t->present)
        return;
    if (!t->cuda[0]) {
        dr_check_add(r, DR_WARN, "torch", "PyTorch %s is a CPU-only build", t->version);
        return;
    }
    int major = atoi(t->cuda), minor = strchr(t->cuda, '.') ? atoi(strchr(t->cuda, '.') + 1) : 0;
    if (d->cuda_version && d->cuda_version / 1000 < major)
        dr_check_add(r, DR_FAIL, "torch",
                     "PyTorch %s is built for CUDA %s but the driver supports CUDA %s: update the "
                     "driver or install a PyTorch build for CUDA %d",
                     t->version, t->cuda, dr_cuda_ver(d->cuda_version), d->cuda_version / 1000);
    else if (d->cuda_version && d->cuda_version < major * 1000 + minor * 10)
        dr_check_add(r, DR_WARN, "torch",
                     "PyTorch is built for CUDA %s, the driver supports %s (minor version "
                     "compatibility)",
                     t->cuda, dr_cuda_ver(d->cuda_version));
    if (!t->available && d->n_gpus)
        dr_check_add(r, DR_FAIL, "torch",
                     "torch.cuda.is_available() is False although the driver sees %d GPU(s)%s%s",
                     d->n_gpus, t->error[0] ? ": " : "", t->error);
    for (int i = 0; i < d->n_gpus && t->arch_list[0]; i++) {
        const dr_gpu *g = &d->gpus[i];
        int cov = dr_arch_covers(t->arch_list, g->cc_major, g->cc_minor);
        if (cov == 2)
            dr_check_add(r, DR_OK, "arch", "PyTorch has kernels for GPU %d (sm_%d%d)", i,
                         g->cc_major, g->cc_minor);
        else if (cov == 1)
            dr_check_add(r, DR_WARN, "arch",
                         "PyTorch has only PTX for GPU %d (sm_%d%d): kernels are JIT-compiled on "
                         "first use (slow start, more memory)",
                         i, g->cc_major, g->cc_minor);
        else
            dr_check_add(r, DR_FAIL, "arch",
                         "PyTorch's arch list (%s) has no code for GPU %d (sm_%d%d): kernels fail "
                         "with 'no kernel image is available for execution on the device'; "
                         "install a build that lists sm_%d%d",
                         t->arch_list, i, g->cc_major, g->cc_minor, g->cc_major, g->cc_minor);
    }
}

static void check_python(dr_report *r)
{
    const dr_python *py = &r->python;
    if (!py->asked)
        return;
    if (!py->ran || py->error[0]) {
        dr_check_add(r, DR_WARN, "python", "%s", py->error);
        if (!py->ran)
            return;
    }
    check_torch(r);
    const dr_framework *t = &py->torch;
    int pick = dr_libs_loader_pick(&r->libs, DR_CUDNN);
    if (t->present && t->cudnn && pick >= 0 && r->libs.libs[pick].version &&
        r->libs.libs[pick].version != t->cudnn)
        dr_check_add(r, DR_WARN, "torch",
                     "PyTorch uses cuDNN %s, the loader's libcudnn is %s (%s): C programs and "
                     "ctypes loads get the other one",
                     dr_lib_ver(DR_CUDNN, t->cudnn),
                     dr_lib_ver(DR_CUDNN, r->libs.libs[pick].version), r->libs.libs[pick].path);
    const dr_framework *j = &py->jax;
    if (j->present && !j->available && r->driver.n_gpus)
        dr_check_add(r, DR_WARN, "jax",
                     "JAX %s sees no GPU (devices: %s): install jax[cuda13] (or cuda12)",
                     j->version, j->devices);
}

static void check_bench(dr_report *r, const dr_bench *b)
{
    if (!b->ran) {
        dr_check_add(r, DR_FAIL, "measure", "GPU %d could not be measured: %s", b->gpu, b->error);
        return;
    }
    for (int t = 0; t < DR_N_COPY_TESTS; t++) {
        const dr_measure *m = &b->copies[t];
        if (!m->done)
            dr_check_add(r, DR_FAIL, "copies", "GPU %d: %s copy failed: %s", b->gpu,
                         dr_copy_test_name(t), m->error);
    }
    const dr_measure *pin = &b->copies[DR_H2D_PINNED], *pin_back = &b->copies[DR_D2H_PINNED];
    if (pin->done && pin_back->done && pin->spec > 0) {
        double low = pin->best < pin_back->best ? pin->best : pin_back->best;
        dr_check_add(r, low < PINNED_LOW_SHARE * pin->spec ? DR_WARN : DR_OK, "pcie",
                     "GPU %d: pinned copies %.1f / %.1f GB/s (H2D / D2H), %.0f%% of %s%s", b->gpu,
                     pin->best, pin_back->best, 100 * low / pin->spec, pin->spec_how,
                     low < PINNED_LOW_SHARE * pin->spec
                         ? ": the link may run narrower or slower than it can (a x8 slot, a "
                           "riser, power saving, another device sharing the switch)"
                         : "");
    }
    for (int t = 0; t < DR_N_GEMM_TESTS; t++) {
        const dr_measure *m = &b->gemms[t];
        if (!m->done && m->error[0])
            dr_check_add(r, DR_WARN, "gemm", "GPU %d: GEMM %s not measured: %s", b->gpu,
                         dr_gemm_test_name(t), m->error);
        else if (m->done && m->spec > 0 && m->best < GEMM_LOW_SHARE * m->spec)
            dr_check_add(r, DR_WARN, "gemm",
                         "GPU %d: GEMM %s reached %.1f TFLOPS, %.0f%% of %.1f: clocks held low "
                         "(power or thermal limit, another process on the GPU)?",
                         b->gpu, dr_gemm_test_name(t), m->best, 100 * m->best / m->spec, m->spec);
    }
}

/* ---------------------------------------------------------------- entry */

static int parse_options(int argc, char **argv, doctor_options *o)
{
    enum { OPT_PYTHON = 256, OPT_SAVE, OPT_DEVICE, OPT_NO_BENCH, OPT_COPIES_ONLY };
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"python", required_argument, NULL, OPT_PYTHON},
                                         {"save", no_argument, NULL, OPT_SAVE},
                                         {"device", required_argument, NULL, OPT_DEVICE},
                                         {"no-bench", no_argument, NULL, OPT_NO_BENCH},
                                         {"copies-only", no_argument, NULL, OPT_COPIES_ONLY},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+qh", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            o->json = 1;
            break;
        case OPT_PYTHON:
            o->python = optarg;
            break;
        case OPT_SAVE:
            o->save = 1;
            break;
        case OPT_DEVICE: {
            char *end = NULL;
            o->device = !strcmp(optarg, "all") ? -1 : (int)strtol(optarg, &end, 10);
            if (o->device != -1 && (end == optarg || *end || o->device < 0)) {
                fprintf(stderr,
                        "gputrace doctor: --device takes a GPU number or 'all', not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        }
        case OPT_NO_BENCH:
            o->no_bench = 1;
            break;
        case OPT_COPIES_ONLY:
            o->copies_only = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gputrace doctor: unexpected argument '%s'\n\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (o->save && o->no_bench) {
        fprintf(stderr, "gputrace doctor: --save needs the measurements (drop --no-bench)\n");
        return 2;
    }
    return 0;
}

static void stamp(dr_report *r)
{
    if (gethostname(r->host, sizeof r->host) != 0)
        snprintf(r->host, sizeof r->host, "?");
    r->host[sizeof r->host - 1] = 0;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->when, sizeof r->when, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int save_all(const dr_report *r, const doctor_options *o)
{
    int rc = 0;
    for (int i = 0; i < r->n_benches; i++) {
        const dr_bench *b = &r->benches[i];
        char path[4096] = ""; /* dr_peaks_path may fail before it names the file */
        if (!b->ran)
            continue;
        if (dr_peaks_path(&r->driver.gpus[b->gpu], path, sizeof path) != 0 ||
            dr_save_peaks(r, b, path) != 0) {
            fprintf(stderr, "gputrace doctor: cannot write the peaks file %s\n",
                    path[0] ? path : "(its folder could not be created)");
            rc = 2;
            continue;
        }
        if (!o->quiet)
            fprintf(stderr, "gputrace doctor: peaks of GPU %d saved to %s\n", b->gpu, path);
    }
    return rc;
}

static void measure(dr_report *r, const doctor_options *o)
{
    for (int i = 0; i < r->driver.n_gpus; i++) {
        if (o->device >= 0 && i != o->device)
            continue;
        int blas = dr_libs_loader_pick(&r->libs, DR_CUBLAS);
        for (int j = 0; j < r->libs.n && blas < 0; j++) /* else a wheel's (--python) */
            if (r->libs.libs[j].kind == DR_CUBLAS)
                blas = j;
        dr_bench_run(&r->driver.gpus[i], o->copies_only, blas >= 0 ? r->libs.libs[blas].path : NULL,
                     &r->benches[r->n_benches]);
        check_bench(r, &r->benches[r->n_benches++]);
    }
}

int cmd_doctor(int argc, char **argv)
{
    doctor_options o = {0};
    int prc = parse_options(argc, argv, &o);
    if (prc)
        return prc < 0 ? 0 : prc;
    dr_report *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "gputrace doctor: out of memory\n");
        return 2;
    }
    stamp(r);
    r->driver_ok = dr_driver_probe(&r->driver) == 0;
    check_driver(r);
    if (o.python)
        dr_python_probe(&r->python, o.python);
    char *dirs[DR_MAX_PY_DIRS];
    for (int i = 0; i < r->python.n_dirs; i++)
        dirs[i] = r->python.dirs[i];
    dr_libs_find(&r->libs, dirs, r->python.n_dirs);
    check_libraries(r);
    check_python(r);
    if (r->driver_ok && o.device >= r->driver.n_gpus) {
        fprintf(stderr, "gputrace doctor: no GPU %d (%d visible)\n", o.device, r->driver.n_gpus);
        free(r);
        return 2;
    }
    if (r->driver_ok && !o.no_bench)
        measure(r, &o);
    if (o.json)
        dr_print_json(r, stdout);
    else if (!o.quiet)
        dr_print_text(r, stdout);
    fflush(stdout);
    int rc = 0;
    if (!r->driver_ok) {
        fprintf(stderr, "gputrace doctor: cannot run: %s\n", r->checks[0].text);
        rc = 2;
    } else {
        for (int i = 0; i < r->n_checks; i++)
            if (r->checks[i].status == DR_FAIL)
                rc = 3;
        if (o.save && save_all(r, &o) != 0)
            rc = 2;
    }
    free(r);
    return rc;
}

/* The child of dr_peaks_ensure: 0 when GPU 0's peaks file exists or was written. */
static int ensure_in_child(int quiet)
{
    dr_driver *d = calloc(1, sizeof *d);
    char path[4096];
    struct stat st;
    if (!d || dr_driver_probe(d) != 0 || dr_peaks_path(&d->gpus[0], path, sizeof path) != 0) {
        free(d);
        return 2;
    }
    int have = stat(path, &st) == 0;
    free(d);
    if (have)
        return 0;
    if (!quiet)
        fprintf(stderr, "gputrace: no peaks file for this GPU yet: measuring its copies (a few "
                        "seconds, once)\n");
    char *args[] = {"doctor", "--save", "--copies-only", "--device", "0", quiet ? "-q" : NULL,
                    NULL};
    return cmd_doctor(quiet ? 6 : 5, args) == 2 ? 2 : 0;
}

int dr_peaks_ensure(int quiet)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(ensure_in_child(quiet));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
