/* model_frameworks.c — which frameworks drive each process (issue 29 item 4): PyTorch, JAX/XLA,
 * TensorFlow, CuPy, Triton, Python without any of them, or a native CUDA C/C++ program.
 *
 * Why. A remedy is only useful in the program's own terms: a JAX program cannot set
 * torch.backends.cudnn.benchmark, a C program sets no environment variable of XLA. The trace
 * holds what tells them apart, each piece only sometimes: the loaded libraries (GT_REC_MODULE,
 * written with the call-site stacks: libtorch_cuda.so, jaxlib/, cupy/, Triton's launcher module),
 * the files of Python frames (.../site-packages/torch/nn/modules/conv.py), NVTX domains and
 * names (XLA's TSL domain, PyTorch's), and kernel names (cupy_*, Inductor's triton_*, XLA's
 * *_fusion). Any one is enough: a framework's library is loaded only when the program imports it.
 * A process with a Python interpreter and none of them is plain Python (numba, pycuda, ctypes);
 * one without Python is a native program. */
#include "model_internal.h"

typedef struct fw_mark {
    const char *text; /* a substring of a library path or a Python file */
    int fw;
} fw_mark;

/* Library paths and Python files that belong to a framework. Kept to names the framework owns:
 * "torch/" is also a folder of many programs' own code, "site-packages/torch/" is not. */
static const fw_mark path_marks[] = {
    {"libtorch_cuda", GT_FW_PYTORCH},
    {"libtorch_python", GT_FW_PYTORCH},
    {"site-packages/torch/", GT_FW_PYTORCH},
    {"dist-packages/torch/", GT_FW_PYTORCH},
    {"jaxlib/", GT_FW_JAX},
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
    if (is_python_module(path))
        p->frameworks |= GT_FW_PYTHON;
    for (size_t i = 0; i < sizeof path_marks / sizeof path_marks[0]; i++)
        if (strstr(path, path_marks[i].text) && !(p->frameworks & path_marks[i].fw)) {
            p->frameworks |= path_marks[i].fw;
            if (path_marks[i].fw != GT_FW_PYTHON && !p->framework_evidence[0]) {
                const char *base = strrchr(path, '/');
                snprintf(p->framework_evidence, sizeof p->framework_evidence, "%s",
                         base && base[1] ? base + 1 : path);
            }
        }
}

void md_frameworks_on_module(gt_proc *p, pass_state *s, const gt_record *r)
{
    gt_rec_module m;
    if (r->body_size < sizeof m)
        return;
    gt_body_copy(&m, sizeof m, r);
    mark_path(p, gt_reader_string(s->reader, m.path_id));
}

/* The files of every Python frame of a stack: a framework's own code calls CUDA for the user. */
void md_frameworks_on_stack(gt_proc *p, pass_state *s, const gt_record *r)
{
    if (r->body_size < sizeof(gt_rec_stack))
        return;
    gt_rec_stack st;
    memcpy(&st, r->body, sizeof st);
    size_t need = sizeof st + (size_t)st.depth * 8 + (size_t)st.py_depth * 16;
    if (need > r->body_size)
        return;
    const unsigned char *py = (const unsigned char *)r->body + sizeof st + (size_t)st.depth * 8;
    for (uint32_t i = 0; i < st.py_depth; i++) {
        uint32_t file_id;
        memcpy(&file_id, py + (size_t)i * 16, 4);
        mark_path(p, gt_reader_string(s->reader, file_id));
    }
    if (st.py_depth)
        p->frameworks |= GT_FW_PYTHON;
}

/* NVTX: XLA marks its thunks and passes in the TSL domain (JAX and TensorFlow alike); PyTorch's
 * own ranges name the library. */
void md_frameworks_on_nvtx(gt_proc *p, pass_state *s, const gt_rec_nvtx *v)
{
    const char *domain = v->domain_id ? gt_reader_string(s->reader, v->domain_id) : NULL;
    const char *name = v->name_id ? gt_reader_string(s->reader, v->name_id) : NULL;
    const char *lib = gt_step_library(domain, name);
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
void md_frameworks_finish(gt_proc *p)
{
    for (size_t i = 0; i < p->n_kernels; i++) {
        const char *n = p->kernels[i].name;
        if (starts_with(n, "cupy_"))
            p->frameworks |= GT_FW_CUPY;
        else if (starts_with(n, "triton_"))
            p->frameworks |= GT_FW_TRITON; /* Inductor's triton_poi_/triton_per_/triton_red_ */
        else if (strstr(n, "at::native::") || strstr(n, "at_cuda_detail"))
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

int gt_proc_framework(const gt_proc *p)
{
    /* the one the program is written against: Triton's and CuPy's kernels run beside PyTorch in
     * many programs (torch.compile, custom kernels), PyTorch's settings are the program's */
    static const int order[] = {GT_FW_PYTORCH, GT_FW_JAX,    GT_FW_TENSORFLOW, GT_FW_CUPY,
                                GT_FW_TRITON,  GT_FW_PYTHON, GT_FW_NATIVE};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (p->frameworks & order[i])
            return order[i];
    return GT_FW_NATIVE;
}

const char *gt_framework_name(int fw)
{
    switch (fw) {
    case GT_FW_PYTORCH:
        return "PyTorch";
    case GT_FW_JAX:
        return "JAX";
    case GT_FW_TENSORFLOW:
        return "TensorFlow";
    case GT_FW_CUPY:
        return "CuPy";
    case GT_FW_TRITON:
        return "Triton";
    case GT_FW_PYTHON:
        return "Python";
    default:
        return "CUDA C/C++";
    }
}
