/* model_framework.c — which frameworks a process runs (issue 30): PyTorch, torch.compile, Triton,
 * CuPy, JAX, TensorFlow, or none (CUDA C/C++), so that a remedy is worded in the program's own
 * terms (a CUDA graph is torch.cuda.graphs in PyTorch, cupy.cuda.Graph in CuPy, a stream capture
 * in C).
 *
 * Evidence, any of: the modules the process loaded (the recorder writes them for symbolization:
 * libtorch_cuda.so, cupy's extension modules, Triton's launchers, jaxlib, tensorflow),
 * the files of the Python frames of its stacks, Inductor's kernel names (triton_poi_/red_/per_ ...)
 * and its compile workers (model_compile.c). Everything is matched on path parts, so a vendored
 * copy under another prefix is recognized as long as its package folder keeps its name. */
#include "model_framework.h"

typedef struct fw_mark {
    const char *part; /* a part of a path */
    unsigned bits;
} fw_mark;

/* Loaded modules: a framework's own libraries and extension modules. */
static const fw_mark MODULES[] = {
    {"/torch/lib/", GT_FW_PYTORCH},
    {"libtorch_cuda", GT_FW_PYTORCH},
    {"/cupy/", GT_FW_CUPY},
    {"/cupy_backends/", GT_FW_CUPY},
    /* importing Triton loads libtriton (PyTorch may import it); a launcher module is built for
     * each kernel Triton compiles and launches */
    {"__triton_launcher", GT_FW_TRITON},
    {"/jaxlib/", GT_FW_JAX},
    {"/jax_plugins/", GT_FW_JAX},
    {"xla_extension", GT_FW_JAX},
    {"/tensorflow/", GT_FW_TENSORFLOW},
    {"libtensorflow", GT_FW_TENSORFLOW},
};

/* Python frames: a framework's package folder (site-packages/torch/...). */
static const fw_mark PYTHON[] = {
    {"/torch/", GT_FW_PYTORCH},
    {"/torch/_dynamo/", GT_FW_TORCH_COMPILE},
    {"/torch/_inductor/", GT_FW_TORCH_COMPILE},
    {"/cupy/", GT_FW_CUPY},
    {"/triton/", GT_FW_TRITON},
    {"/jax/", GT_FW_JAX},
    {"/tensorflow/", GT_FW_TENSORFLOW},
};

static void mark(gt_proc *p, const char *path, const fw_mark *marks, size_t n)
{
    if (!path)
        return;
    for (size_t i = 0; i < n; i++)
        if (strstr(path, marks[i].part))
            p->frameworks |= marks[i].bits;
}

void md_framework_on_module(gt_proc *p, const char *path)
{
    mark(p, path, MODULES, sizeof MODULES / sizeof *MODULES);
}

void md_framework_on_python_file(gt_proc *p, const char *file)
{
    mark(p, file, PYTHON, sizeof PYTHON / sizeof *PYTHON);
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

static int bit_index(unsigned bit)
{
    for (int i = 0; i < GT_FW_COUNT; i++)
        if (bit == 1u << i)
            return i;
    return -1;
}

const char *gt_framework_name(unsigned bit)
{
    static const char *const names[GT_FW_COUNT] = {"PyTorch", "torch.compile", "Triton",
                                                   "CuPy",    "JAX",           "TensorFlow"};
    int i = bit_index(bit);
    return i >= 0 ? names[i] : "CUDA C/C++";
}

const char *gt_framework_key(unsigned bit)
{
    static const char *const keys[GT_FW_COUNT] = {"pytorch", "torch_compile", "triton",
                                                  "cupy",    "jax",           "tensorflow"};
    int i = bit_index(bit);
    return i >= 0 ? keys[i] : "cuda";
}

/* The most specific framework first: torch.compile and JAX compile the program, CuPy and a
 * Triton kernel of the program's own are launched by the user's loop (Triton beside PyTorch
 * without Inductor is the program's own kernels), PyTorch's eager ops last. */
unsigned gt_proc_remedy_framework(const gt_proc *p)
{
    static const unsigned order[] = {GT_FW_TORCH_COMPILE, GT_FW_JAX,    GT_FW_TENSORFLOW,
                                     GT_FW_CUPY,          GT_FW_TRITON, GT_FW_PYTORCH};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        if (p->frameworks & order[i])
            return order[i];
    return 0;
}
