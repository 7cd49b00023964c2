/* callsite.c — the frame advice points at and the library frames under it (see callsite.h). Kept
 * apart from symbolize.c: symbolizing says what a frame is, this file says which one matters. */
#include "callsite.h"

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

/* ---------------------------------------------------------------- the chain */

typedef struct text_out {
    char *buf;
    size_t cap, len;
} text_out;

static void put(text_out *t, const char *s)
{
    size_t n = strlen(s);
    if (t->cap == 0)
        return;
    size_t room = t->cap - 1 - t->len;
    if (n > room)
        n = room;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

static bool bare(const gt_frame *f)
{
    return !f->python && !f->function && f->module;
}

static bool shown_under(const gt_frame *f)
{
    gt_code_kind k = gt_frame_kind(f);
    return k != GT_CODE_GPUTRACE && k != GT_CODE_RUNTIME && k != GT_CODE_UNKNOWN;
}

size_t gt_callsite_chain(gt_symtab *st, uint32_t stack_id, int max_under, const char *indent,
                         char *buf, size_t cap)
{
    enum { FETCH = 512 };
    text_out t = {buf, cap, 0};
    if (cap)
        buf[0] = '\0';
    gt_frame *fr = malloc(FETCH * sizeof *fr);
    int n = fr ? gt_symbolize_stack(st, stack_id, fr, FETCH) : 0;
    bool user;
    int site = gt_callsite_pick(fr, n, &user);
    if (site < 0) {
        free(fr);
        return 0;
    }
    char line[1024];
    gt_frame_format(&fr[site], line, sizeof line);
    put(&t, line);
    int lines = 0;
    for (int i = site - 1; i >= 0; i--) { /* outermost first: from the site toward the call */
        if (!shown_under(&fr[i]))
            continue;
        if (lines == max_under) {
            put(&t, "\n");
            put(&t, indent);
            put(&t, "...");
            break;
        }
        int run = 0; /* further nameless frames of the same module, shown on this line */
        while (bare(&fr[i]) && i - run - 1 >= 0 && bare(&fr[i - run - 1]) &&
               strcmp(fr[i - run - 1].module, fr[i].module) == 0)
            run++;
        size_t len = gt_frame_format(&fr[i], line, sizeof line - 32);
        if (len >= sizeof line - 32)
            len = sizeof line - 33;
        if (run)
            snprintf(line + len, sizeof line - len, " +%d more", run);
        put(&t, "\n");
        put(&t, indent);
        put(&t, line);
        lines++;
        i -= run;
    }
    free(fr);
    return t.len;
}
