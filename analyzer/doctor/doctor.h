/* doctor.h — `gputrace doctor`: what this machine's CUDA stack is and what its GPUs can do.
 *
 * Built as its own small library (no protobuf-c, no jansson, no CUDA linked: libcuda, NVML and
 * cuBLAS are dlopen'ed, the other CUDA libraries are only read in forked children), so the same
 * code runs as `gputrace doctor` and as the standalone `gputrace-doctor` on a GPU machine that
 * lacks the analyzer's dependencies. Files: doctor_main.c (options, checks, exit status),
 * doctor_driver.c (libcuda + NVML: driver, GPUs), doctor_libs.c (libraries the loader would find),
 * doctor_python.c (PyTorch/JAX), doctor_bench.c (copies and GEMMs, specified figures),
 * doctor_out.c (text, JSON, the peaks file). */
#ifndef GT_DOCTOR_H
#define GT_DOCTOR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DR_MAX_GPUS 16
#define DR_MAX_LIBS 64
#define DR_MAX_CHECKS 64

/* ---------------------------------------------------------------- driver and GPUs */

typedef struct dr_gpu {
    int ordinal;
    char name[96];
    char uuid[48];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci_bus_id[32]; /* "0000:18:00.0" */
    int cc_major, cc_minor;
    int sm_count;
    uint64_t total_mem;
    int sm_clock_max_mhz;   /* NVML max SM clock, else the driver's clock attribute; 0: unknown */
    int sm_clock_now_mhz;   /* NVML, 0: not readable */
    int mem_clock_max_mhz;  /* 0: unknown */
    int mem_bus_width_bits; /* 0: unknown */
    int pcie_gen_now, pcie_width_now, pcie_gen_max, pcie_width_max; /* 0: not readable */
    const char *pcie_source;                                        /* "NVML", "sysfs", NULL */
    int nvlink_active;  /* active NVLink links, -1: not readable */
    int nvlink_version; /* 0: unknown */
    int persistence;    /* 1 on, 0 off, -1 not readable */
    int mig;            /* 1 on, 0 off, -1 not readable / not supported */
} dr_gpu;

typedef struct dr_driver {
    int loaded;              /* libcuda.so.1 could be loaded */
    char lib_path[512];      /* where libcuda.so.1 came from */
    int init_rc;             /* cuInit's CUresult */
    char init_error[128];    /* its name and text when it failed */
    int cuda_version;        /* cuDriverGetVersion: 13000 */
    char driver_version[32]; /* NVML: "580.159" ("" not readable) */
    int nvml_loaded;
    int n_gpus;
    dr_gpu gpus[DR_MAX_GPUS];
} dr_driver;

/* Loads libcuda.so.1 and NVML, fills the driver and every GPU. Returns 0 when at least one GPU is
 * usable; -1 otherwise (d->loaded / init_rc / n_gpus say why). */
int dr_driver_probe(dr_driver *d);

/* The driver API functions doctor uses, resolved once from libcuda.so.1 (the _v2 names that
 * cuda.h maps the plain ones to). Any may be NULL on an old driver; callers check. */
#define DR_CU_FUNCS(X)                                                                             \
    X(cuInit, int, (unsigned))                                                                     \
    X(cuDriverGetVersion, int, (int *))                                                            \
    X(cuDeviceGetCount, int, (int *))                                                              \
    X(cuDeviceGet, int, (int *, int))                                                              \
    X(cuDeviceGetName, int, (char *, int, int))                                                    \
    X(cuDeviceTotalMem_v2, int, (size_t *, int))                                                   \
    X(cuDeviceGetAttribute, int, (int *, int, int))                                                \
    X(cuDeviceGetUuid_v2, int, (unsigned char *, int))                                             \
    X(cuDeviceGetUuid, int, (unsigned char *, int))                                                \
    X(cuDeviceGetPCIBusId, int, (char *, int, int))                                                \
    X(cuGetErrorName, int, (int, const char **))                                                   \
    X(cuGetErrorString, int, (int, const char **))                                                 \
    X(cuDevicePrimaryCtxRetain, int, (void **, int))                                               \
    X(cuDevicePrimaryCtxRelease_v2, int, (int))                                                    \
    X(cuCtxSetCurrent, int, (void *))                                                              \
    X(cuCtxSynchronize, int, (void))                                                               \
    X(cuMemGetInfo_v2, int, (size_t *, size_t *))                                                  \
    X(cuMemAlloc_v2, int, (uint64_t *, size_t))                                                    \
    X(cuMemFree_v2, int, (uint64_t))                                                               \
    X(cuMemAllocHost_v2, int, (void **, size_t))                                                   \
    X(cuMemFreeHost, int, (void *))                                                                \
    X(cuMemHostRegister_v2, int, (void *, size_t, unsigned))                                       \
    X(cuMemHostUnregister, int, (void *))                                                          \
    X(cuMemcpyHtoD_v2, int, (uint64_t, const void *, size_t))                                      \
    X(cuMemcpyDtoH_v2, int, (void *, uint64_t, size_t))                                            \
    X(cuMemcpyDtoD_v2, int, (uint64_t, uint64_t, size_t))                                          \
    X(cuEventCreate, int, (void **, unsigned))                                                     \
    X(cuEventRecord, int, (void *, void *))                                                        \
    X(cuEventSynchronize, int, (void *))                                                           \
    X(cuEventElapsedTime_v2, int, (float *, void *, void *))                                       \
    X(cuEventElapsedTime, int, (float *, void *, void *))                                          \
    X(cuEventDestroy_v2, int, (void *))

typedef struct dr_cu_api {
#define DR_CU_MEMBER(name, ret, args) ret(*name) args;
    DR_CU_FUNCS(DR_CU_MEMBER)
#undef DR_CU_MEMBER
} dr_cu_api;

/* The table (resolved by dr_driver_probe; all NULL before). */
const dr_cu_api *dr_cu(void);
/* "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" (static buffer). */
const char *dr_cu_error(int rc);

/* ---------------------------------------------------------------- libraries */

enum dr_lib_kind { DR_CUDART, DR_CUDNN, DR_CUBLAS, DR_CUBLASLT, DR_CUPTI, DR_N_KINDS };

enum dr_lib_source { DR_SRC_LD_LIBRARY_PATH, DR_SRC_LDCONFIG, DR_SRC_PYTHON };

typedef struct dr_lib {
    int kind;           /* dr_lib_kind */
    char soname[64];    /* "libcudnn.so.9" */
    char path[512];     /* as found */
    char realpath[512]; /* the file itself */
    char file_ver[32];  /* from the real file's name: "9.19.0", "" when it has none */
    int source;         /* dr_lib_source */
    int version;        /* from the library: cudnnGetVersion 91900, ...; 0 unknown */
    int built_for;      /* CUDA runtime it was built for (cudnnGetCudartVersion...); 0 unknown */
    char probe_error[160];
    int shadowed_by;   /* index of the copy the loader takes first (same soname), -1 none */
    int loader_choice; /* 1: the copy the loader takes for this soname */
} dr_lib;

typedef struct dr_libs {
    dr_lib libs[DR_MAX_LIBS];
    int n;
    int truncated;
} dr_libs;

const char *dr_lib_kind_name(int kind); /* "CUDA runtime", "cuDNN", ... */
const char *dr_lib_source_name(int source);
/* Finds the libraries: LD_LIBRARY_PATH, then `ldconfig -p` (GPUTRACE_DOCTOR_LDCONFIG names
 * another program, for tests), then the Python folders given (may be NULL). Reads each one's
 * version in a forked child. */
void dr_libs_find(dr_libs *l, char *const *python_dirs, int n_python_dirs);
/* The copy of this kind the loader would take for the newest soname (-1: none). */
int dr_libs_loader_pick(const dr_libs *l, int kind);
/* "13.0" from 13000; cuDNN/cuBLAS style "9.19.0" from 91900 (into a static ring of buffers). */
const char *dr_cuda_ver(int v);
const char *dr_lib_ver(int kind, int v);

/* ---------------------------------------------------------------- Python */

#define DR_MAX_PY_DIRS 16
typedef struct dr_framework {
    int present;         /* imported */
    char version[48];    /* torch.__version__ */
    char cuda[16];       /* torch.version.cuda, "" when CPU-only */
    int cudnn;           /* torch.backends.cudnn.version() */
    char arch_list[256]; /* "sm_80 sm_90 ..." */
    int available;       /* torch.cuda.is_available() */
    int device_count;
    char error[200]; /* import error */
    char devices[200];
} dr_framework;

typedef struct dr_python {
    int asked;
    int ran; /* the interpreter answered */
    char interpreter[256];
    char version[32];
    char error[200];
    char dirs[DR_MAX_PY_DIRS][512]; /* site-packages/nvidia/<x>/lib and torch/lib folders */
    int n_dirs;
    dr_framework torch, jax;
} dr_python;

void dr_python_probe(dr_python *py, const char *interpreter);
/* Whether an arch list ("sm_80 sm_90 compute_90") runs code on cc major.minor: 2 native, 1 only
 * through PTX JIT, 0 not at all. */
int dr_arch_covers(const char *arch_list, int major, int minor);

/* ---------------------------------------------------------------- measurements */

enum dr_copy_test {
    DR_H2D_PAGEABLE,
    DR_H2D_PINNED,
    DR_H2D_REGISTERED,
    DR_D2H_PAGEABLE,
    DR_D2H_PINNED,
    DR_D2H_REGISTERED,
    DR_D2D,
    DR_N_COPY_TESTS
};
enum dr_gemm_test { DR_GEMM_FP32, DR_GEMM_TF32, DR_GEMM_BF16, DR_N_GEMM_TESTS };

typedef struct dr_measure {
    int done;      /* measured */
    double best;   /* GB/s or TFLOPS, the best repetition */
    double median; /* median repetition */
    int reps;      /* timed repetitions */
    double spec;   /* the figure the hardware is specified for, 0 when unknown */
    char spec_how[96];
    char error[128]; /* why it was not measured */
} dr_measure;

typedef struct dr_bench {
    int gpu; /* ordinal */
    int ran; /* a context could be made */
    char error[160];
    size_t copy_bytes;
    int gemm_n;
    char cublas_path[512];
    dr_measure copies[DR_N_COPY_TESTS];
    dr_measure gemms[DR_N_GEMM_TESTS];
} dr_bench;

const char *dr_copy_test_name(int t); /* "H2D pageable" */
const char *dr_copy_test_key(int t);  /* "h2d_pageable" */
const char *dr_gemm_test_name(int t); /* "fp32" */

/* Measures copies (and GEMMs through the cuBLAS at cublas_path unless copies_only or NULL) on gpu;
 * the driver must have been probed. */
void dr_bench_run(const dr_gpu *gpu, int copies_only, const char *cublas_path, dr_bench *b);
/* The specified figures: PCIe GB/s each way (0: unknown), dense TFLOPS, memory GB/s. */
double dr_spec_pcie_gbps(const dr_gpu *g, char *how, size_t how_len);
double dr_spec_tflops(const dr_gpu *g, int gemm_test, char *how, size_t how_len);
double dr_spec_memory_gbps(const dr_gpu *g, char *how, size_t how_len);

/* ---------------------------------------------------------------- checks and output */

enum dr_status { DR_OK, DR_WARN, DR_FAIL };

typedef struct dr_check {
    int status;
    char id[32];
    char text[512];
} dr_check;

typedef struct dr_report {
    char host[128];
    char when[32]; /* UTC, ISO 8601 */
    dr_driver driver;
    int driver_ok;
    dr_libs libs;
    dr_python python;
    dr_bench benches[DR_MAX_GPUS];
    int n_benches;
    dr_check checks[DR_MAX_CHECKS];
    int n_checks;
} dr_report;

void dr_check_add(dr_report *r, int status, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void dr_print_text(const dr_report *r, FILE *out);
void dr_print_json(const dr_report *r, FILE *out);
/* Writes the peaks of one measured GPU; path from dr_peaks_path. Returns 0 or -1 (errno). */
int dr_save_peaks(const dr_report *r, const dr_bench *b, const char *path);
/* Where the peaks of this GPU go: GPUTRACE_PEAKS (a file, or a folder), else
 * $XDG_CACHE_HOME/gputrace or ~/.cache/gputrace, as peaks-<uuid>.json. Creates the folder. */
int dr_peaks_path(const dr_gpu *g, char *out, size_t len);

int cmd_doctor(int argc, char **argv);
/* For `gputrace record --peaks`: when GPU 0 has no peaks file yet, measure its copies (a second
 * or two) and save them, in a child process so that CUDA is never initialised in the caller.
 * Returns 0 when a peaks file exists afterwards. */
int dr_peaks_ensure(int quiet);

#endif
