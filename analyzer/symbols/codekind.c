/* codekind.c — whose code a frame is, and which frame of a stack advice points at (codekind.h). */
#include "codekind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

static bool is_interpreter(const char *b)
{
    if (strncmp(b, "libpython", 9) == 0)
        return true;
    if (strncmp(b, "python", 6) != 0)
        return false;
    for (b += 6; *b; b++) /* python, python3, python3.11 */
        if ((*b < '0' || *b > '9') && *b != '.')
            return false;
    return true;
}

static bool has_prefix(const char *b, const char *const *prefixes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strncmp(b, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Installed by a package manager, so not the user's own code: Python packages (jaxlib's XLA
 * plugin, CuPy's and Triton's modules) and the system's library folders. The user's program and
 * the libraries of its own build live elsewhere. */
static bool is_installed_library(const char *path)
{
    static const char *const parts[] = {"/site-packages/", "/dist-packages/"};
    static const char *const roots[] = {"/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/"};
    for (size_t i = 0; i < N_OF(parts); i++)
        if (strstr(path, parts[i]))
            return true;
    return has_prefix(path, roots, N_OF(roots));
}

gt_code_kind gt_module_kind(const char *path)
{
    const char *b = base_name(path);
    if (!b || !*b)
        return GT_CODE_UNKNOWN;
    static const char *const gputrace[] = {"libgputrace"};
    static const char *const runtime[] = {"libc.so",  "libc-",    "libm.",  "libstdc++",
                                          "libgcc_s", "ld-linux", "libdl.", "libpthread",
                                          "libffi",   "_ctypes",  "libgomp"};
    static const char *const cuda[] = {"libcudart", "libcuda.",    "libcudnn",   "libcublas",
                                       "libnv",     "libcupti",    "libnccl",    "libcufft",
                                       "libcurand", "libcusparse", "libcusolver"};
    static const char *const framework[] = {"libtorch", "libc10", "_C.", "libcaffe2"};
    if (has_prefix(b, gputrace, N_OF(gputrace)))
        return GT_CODE_GPUTRACE;
    if (is_interpreter(b) || has_prefix(b, runtime, N_OF(runtime)))
        return GT_CODE_RUNTIME;
    if (has_prefix(b, cuda, N_OF(cuda)))
        return GT_CODE_CUDA;
    if (has_prefix(b, framework, N_OF(framework)) || is_installed_library(path))
        return GT_CODE_FRAMEWORK;
    return GT_CODE_USER;
}

static bool is_library_python_file(const char *file)
{
    if (!file || file[0] == '<') /* <frozen importlib._bootstrap>, <string> */
        return true;
    static const char *const parts[] = {"/site-packages/", "/dist-packages/", "/lib/python"};
    for (size_t i = 0; i < N_OF(parts); i++)
        if (strstr(file, parts[i]))
            return true;
    return false;
}

gt_code_kind gt_frame_kind(const gt_frame *f)
{
    if (f->python)
        return is_library_python_file(f->file) ? GT_CODE_FRAMEWORK : GT_CODE_USER;
    return f->module ? gt_module_kind(f->module) : GT_CODE_UNKNOWN;
}

static int innermost(const gt_frame *frames, int n, bool python, gt_code_kind kind)
{
    for (int i = 0; i < n; i++)
        if (frames[i].python == python && gt_frame_kind(&frames[i]) == kind)
            return i;
    return -1;
}

int gt_callsite_pick(const gt_frame *frames, int n, bool *is_user)
{
    *is_user = false;
    if (n <= 0)
        return -1;
    int i = innermost(frames, n, true, GT_CODE_USER);
    if (i >= 0) {
        *is_user = true;
        return i;
    }
    if ((i = innermost(frames, n, true, GT_CODE_FRAMEWORK)) >= 0)
        return i; /* only library Python: its innermost frame still names the place */
    if ((i = innermost(frames, n, false, GT_CODE_USER)) >= 0) {
        *is_user = true;
        return i;
    }
    /* No user code at all: the library frame nearest to where user code would be. */
    static const gt_code_kind fallback[] = {GT_CODE_FRAMEWORK, GT_CODE_CUDA, GT_CODE_RUNTIME,
                                            GT_CODE_UNKNOWN};
    for (size_t k = 0; k < N_OF(fallback); k++)
        if ((i = innermost(frames, n, false, fallback[k])) >= 0)
            return i;
    return 0;
}
