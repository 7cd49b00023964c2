/* model_framework.c — which frameworks drive each process (issues 29 item 4 and 30): PyTorch,
 * torch.compile, Triton, CuPy, JAX/XLA, TensorFlow, Python without any of them, or a native CUDA
 * C/C++ program, so that a remedy is worded in the program's own terms (a JAX program cannot set
 * torch.backends.cudnn.benchmark; a CUDA graph is torch.cuda.graphs in PyTorch, cupy.cuda.Graph
 * in CuPy, a stream capture in C).
 *
 * The trace holds what tells them apart, each piece only sometimes: the loaded libraries
 * (GT_REC_MODULE, written with the call-site stacks: libtorch_cuda.so, jaxlib/, cupy/, Triton's
 * launcher module), the files of Python frames (.../site-packages/torch/nn/modules/conv.py),
 * NVTX domains and names (XLA's TSL domain, PyTorch's), kernel names (cupy_*, Inductor's
 * triton_poi_/red_/per_ ..., at::native) and compile workers (model_compile.c). Any one is
 * enough: a framework's library is loaded only when the program imports it. Paths are matched on
 * the parts a framework owns ("torch/" is also a folder of many programs' own code, and of a
 * virtual environment's prefix; "site-packages/torch/" is not). A process with a Python
 * interpreter and none of them is plain Python (numba, pycuda, ctypes); one without Python is a
 * native program. */
#include <stdio.h>

#include "model_framework.h"

typedef struct fw_mark {
    const char *part; /* a part of a library path or a Python file */
    unsigned bits;
} fw_mark;

static const fw_mark MARKS[] = {
    {"libtorch_cuda", GT_FW_PYTORCH},
    {"libtorch_python", GT_FW_PYTORCH},
    {"site-packages/torch/", GT_FW_PYTORCH},
    {"dist-packages/torch/", GT_FW_PYTORCH},
    {"packages/torch/_dynamo/", GT_FW_TORCH_COMPILE},
    {"packages/torch/_inductor/", GT_FW_TORCH_COMPILE},
    {"jaxlib/", GT_FW_JAX},
    {"jax_plugins/", GT_FW_JAX},
    {"libjax_common", GT_FW_JAX},
    {"xla_extension", GT_FW_JAX},
    {"site-packages/jax/", GT_FW_JAX},
    {"libtensorflow", GT_FW_TENSORFLOW},
    {"_pywrap_tensorflow", GT_FW_TENSORFLOW},
    {"site-packages/tensorflow/", GT_FW_TENSORFLOW},
    {"site-packages/cupy/", GT_FW_CUPY},
    {"site-packages/cupy_backends/", GT_FW_CUPY},
    /* Not libtriton, nor Triton's Python files: PyTorch imports Triton (whose driver code makes
     * CUDA calls) whether or not a Triton kernel ever runs. Its launcher module is built for the
     * first Triton kernel launched; Inductor's kernels are named triton_* (below). */
    {"__triton_launcher", GT_FW_TRITON},
    {"libpython", GT_FW_PYTHON},
};

/* The interpreter itself, or an extension module it loaded (_bz2.cpython-312-x86_64-linux-gnu.so):
 * a library that merely lies under a Python folder (pip's nvidia/cudnn in a C program) is not. */
static int is_python_module(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return !strncmp(base, "python", 6) || strstr(base, ".cpython-") != NULL;
}

static void mark_path(gt_proc *p, const char *path)
{
    if (!path)
        return;
    for (size_t i = 0; i < sizeof MARKS / sizeof MARKS[0]; i++)
        if (strstr(path, MARKS[i].part) && !(p->frameworks & MARKS[i].bits)) {
            p->frameworks |= MARKS[i].bits;
            if (MARKS[i].bits != GT_FW_PYTHON && !p->framework_evidence[0]) {
                const char *base = strrchr(path, '/');
                snprintf(p->framework_evidence, sizeof p->framework_evidence, "%s",
                         base && base[1] ? base + 1 : path);
            }
        }
}

void md_framework_on_module(gt_proc *p, const char *path)
{
    if (path && is_python_module(path))
        p->frameworks |= GT_FW_PYTHON;
    mark_path(p, path);
}

/* The files of every Python frame of a stack: a framework's own code calls CUDA for the user. */
void md_framework_on_python_file(gt_proc *p, const char *file)
{
    p->frameworks |= GT_FW_PYTHON;
    mark_path(p, file);
}

/* Inductor names its Triton kernels by what they do: triton_poi_ (pointwise), _red_ (reduction),
 * _per_ (persistent reduction), _tem_ (template), _for_ (foreach). */
void md_framework_on_kernel_name(gt_proc *p, const char *name)
{
    static const char *const inductor[] = {"triton_poi_", "triton_red_", "triton_per_",
                                           "triton_tem_", "triton_for_"};
    for (size_t i = 0; name && i < sizeof inductor / sizeof *inductor; i++)
        if (!strncmp(name, inductor[i], strlen(inductor[i])))
            p->frameworks |= GT_FW_TORCH_COMPILE | GT_FW_PYTORCH | GT_FW_TRITON;
}

/* NVTX: XLA marks its thunks and passes in the TSL domain (JAX and TensorFlow alike); PyTorch's
 * own ranges name the library (lib: gt_step_library's name for the range, NULL none). */
void md_framework_on_nvtx_library(gt_proc *p, const char *lib)
{
    if (!lib)
        return;
    if (!strcmp(lib, "XLA") || !strcmp(lib, "JAX"))
        p->frameworks_nvtx |= GT_FW_JAX;
    else if (!strcmp(lib, "PyTorch"))
        p->frameworks_nvtx |= GT_FW_PYTORCH;
}

static int starts_with(const char *s, const char *prefix)
{
    return s && !strncmp(s, prefix, strlen(prefix));
}

/* After pass 1: kernel names, XLA's ranges, and the interpreter when nothing else told. */
void md_framework_finish(gt_proc *p)
{
    for (size_t i = 0; i < p->n_kernels; i++) {
        const char *n = p->kernels[i].name;
        if (starts_with(n, "cupy_"))
            p->frameworks |= GT_FW_CUPY;
        else if (starts_with(n, "triton_"))
            p->frameworks |= GT_FW_TRITON; /* Inductor's, or a Triton kernel named so */
        else if (n && (strstr(n, "at::native::") || strstr(n, "at_cuda_detail")))
            p->frameworks |= GT_FW_PYTORCH;
    }
    /* XLA's ranges tell XLA, not which front end: JAX unless TensorFlow's libraries are there */
    if ((p->frameworks_nvtx & GT_FW_JAX) && !(p->frameworks & GT_FW_TENSORFLOW))
        p->frameworks |= GT_FW_JAX;
    p->frameworks |= p->frameworks_nvtx & GT_FW_PYTORCH;
    const char *exe = p->exe ? strrchr(p->exe, '/') : NULL;
    exe = exe ? exe + 1 : p->exe;
    if (starts_with(exe, "python"))
        p->frameworks |= GT_FW_PYTHON;
    if (!(p->frameworks & GT_FW_PYTHON)) /* LibTorch or CuPy's C++ side count as native too */
        p->frameworks |= GT_FW_NATIVE;
}

static int bit_index(unsigned bit)
{
    for (int i = 0; i < GT_FW_COUNT; i++)
        if (bit == 1u << i)
            return i;
    return -1;
}

const char *gt_framework_name(unsigned bit)
{
    static const char *const names[GT_FW_COUNT] = {
        "PyTorch", "torch.compile", "Triton", "CuPy", "JAX", "TensorFlow", "Python", "CUDA C/C++"};
    int i = bit_index(bit);
    return i >= 0 ? names[i] : "CUDA C/C++";
}

const char *gt_framework_key(unsigned bit)
{
    static const char *const keys[GT_FW_COUNT] = {"pytorch", "torch_compile", "triton", "cupy",
                                                  "jax",     "tensorflow",    "python", "cuda"};
    int i = bit_index(bit);
    return i >= 0 ? keys[i] : "cuda";
}

/* The framework the program is written against: Triton's and CuPy's kernels run beside PyTorch
 * in many programs (torch.compile, custom kernels), PyTorch's settings are the program's. */
unsigned gt_proc_framework(const gt_proc *p)
{
    static const unsigned order[] = {GT_FW_PYTORCH, GT_FW_JAX,    GT_FW_TENSORFLOW, GT_FW_CUPY,
                                     GT_FW_TRITON,  GT_FW_PYTHON, GT_FW_NATIVE};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (p->frameworks & order[i])
            return order[i];
    return GT_FW_NATIVE;
}

/* The most specific framework first: torch.compile and JAX compile the program, CuPy and a
 * Triton kernel of the program's own are launched by the user's loop (Triton beside PyTorch
 * without Inductor is the program's own kernels), PyTorch's eager ops last. */
unsigned gt_proc_remedy_framework(const gt_proc *p)
{
    static const unsigned order[] = {GT_FW_TORCH_COMPILE, GT_FW_JAX,    GT_FW_TENSORFLOW,
                                     GT_FW_CUPY,          GT_FW_TRITON, GT_FW_PYTORCH};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (p->frameworks & order[i])
            return order[i];
    return 0;
}
