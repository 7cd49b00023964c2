/* doctor_libs.c — every libcudart, libcudnn, libcublas(Lt) and libcupti the loader would find, and
 * what each one says it is.
 *
 * The loader looks in LD_LIBRARY_PATH, then in its cache (`ldconfig -p`); Python wheels bring
 * their own copies, which programs such as PyTorch reach through their RPATH. Two files with the
 * same soname are the classic trap (a system cuDNN 9.14 shadowing the 9.19 a program was built
 * with), so copies are grouped by soname in the loader's order. A library's version is read by
 * calling its version function in a forked child: a broken or foreign library can crash or hang
 * only that child, never doctor. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "doctor.h"

#define PROBE_TIMEOUT_MS 20000

static const char *const PREFIXES[DR_N_KINDS] = {"libcudart.so.", "libcudnn.so.", "libcublas.so.",
                                                 "libcublasLt.so.", "libcupti.so."};

const char *dr_lib_kind_name(int kind)
{
    static const char *const names[DR_N_KINDS] = {"CUDA runtime", "cuDNN", "cuBLAS", "cuBLASLt",
                                                  "CUPTI"};
    return kind >= 0 && kind < DR_N_KINDS ? names[kind] : "?";
}

const char *dr_lib_source_name(int source)
{
    return source == DR_SRC_LD_LIBRARY_PATH ? "LD_LIBRARY_PATH"
           : source == DR_SRC_LDCONFIG      ? "ldconfig"
                                            : "python";
}

static char ring[8][32];
static int ring_next;

const char *dr_cuda_ver(int v)
{
    char *b = ring[ring_next++ % 8];
    if (v <= 0)
        snprintf(b, 32, "?");
    else
        snprintf(b, 32, "%d.%d", v / 1000, (v % 1000) / 10);
    return b;
}

const char *dr_lib_ver(int kind, int v)
{
    char *b = ring[ring_next++ % 8];
    if (v <= 0)
        snprintf(b, 32, "?");
    else if (kind == DR_CUDART)
        return dr_cuda_ver(v);
    else if (kind == DR_CUPTI) /* CUPTI_API_VERSION: 130001 */
        snprintf(b, 32, "API %d", v);
    else if (kind == DR_CUDNN && v < 10000) /* cuDNN 8: 8907 */
        snprintf(b, 32, "%d.%d.%d", v / 1000, (v % 1000) / 100, v % 100);
    else
        snprintf(b, 32, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
    return b;
}

/* "libcudnn.so.9" -> kind; -1 when the name is no soname of ours (libcudnn.so, libcudnn_ops.so.9,
 * libcudnn.so.9.19.0 are not: the loader asks for the soname). */
static int kind_of(const char *name)
{
    for (int k = 0; k < DR_N_KINDS; k++) {
        size_t n = strlen(PREFIXES[k]);
        if (strncmp(name, PREFIXES[k], n) != 0 || !name[n])
            continue;
        const char *p = name + n;
        while (*p >= '0' && *p <= '9')
            p++;
        if (!*p)
            return k;
    }
    return -1;
}

/* ---------------------------------------------------------------- version probes */

typedef struct probe_result {
    int version, built_for, ok;
    char error[120];
} probe_result;

static void probe_in_child(const char *path, int kind, probe_result *r)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(r->error, sizeof r->error, "%s", dlerror());
        return;
    }
    switch (kind) {
    case DR_CUDART: {
        int (*get)(int *) = (int (*)(int *))dlsym(h, "cudaRuntimeGetVersion");
        if (get && get(&r->version) == 0) {
            r->built_for = r->version;
            r->ok = 1;
        }
        break;
    }
    case DR_CUDNN: {
        size_t (*ver)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
        size_t (*rt)(void) = (size_t(*)(void))dlsym(h, "cudnnGetCudartVersion");
        r->version = ver ? (int)ver() : 0;
        r->built_for = rt ? (int)rt() : 0;
        r->ok = ver != NULL;
        break;
    }
    case DR_CUBLAS: {
        int (*prop)(int, int *) = (int (*)(int, int *))dlsym(h, "cublasGetProperty");
        size_t (*rt)(void) = (size_t(*)(void))dlsym(h, "cublasGetCudartVersion");
        int maj = 0, min = 0, patch = 0; /* libraryPropertyType: MAJOR 0, MINOR 1, PATCH 2 */
        if (prop && prop(0, &maj) == 0 && prop(1, &min) == 0 && prop(2, &patch) == 0) {
            r->version = maj * 10000 + min * 100 + patch;
            r->ok = 1;
        }
        r->built_for = rt ? (int)rt() : 0;
        break;
    }
    case DR_CUBLASLT: {
        size_t (*ver)(void) = (size_t(*)(void))dlsym(h, "cublasLtGetVersion");
        size_t (*rt)(void) = (size_t(*)(void))dlsym(h, "cublasLtGetCudartVersion");
        r->version = ver ? (int)ver() : 0;
        r->built_for = rt ? (int)rt() : 0;
        r->ok = ver != NULL;
        break;
    }
    case DR_CUPTI: {
        int (*get)(uint32_t *) = (int (*)(uint32_t *))dlsym(h, "cuptiGetVersion");
        uint32_t v = 0;
        if (get && get(&v) == 0) {
            r->version = (int)v;
            r->ok = 1;
        }
        break;
    }
    }
    if (!r->ok && !r->error[0])
        snprintf(r->error, sizeof r->error, "no version function answered");
}

static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
    size_t got = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (got < len) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left =
            timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

static void probe_version(dr_lib *lib)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(lib->probe_error, sizeof lib->probe_error, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(lib->probe_error, sizeof lib->probe_error, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        struct rlimit no_core = {0, 0}; /* a library that crashes leaves no core file behind */
        setrlimit(RLIMIT_CORE, &no_core);
        probe_result r = {0};
        probe_in_child(lib->path, lib->kind, &r);
        ssize_t n = write(fds[1], &r, sizeof r);
        _exit(n == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    probe_result r = {0};
    int rc = read_full(fds[0], &r, sizeof r, PROBE_TIMEOUT_MS);
    close(fds[0]);
    if (rc != 0)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0) {
        snprintf(lib->probe_error, sizeof lib->probe_error, "%s",
                 WIFSIGNALED(status) ? "loading it crashed the probe" : "the probe gave no answer");
        return;
    }
    lib->version = r.version;
    lib->built_for = r.built_for;
    if (!r.ok)
        snprintf(lib->probe_error, sizeof lib->probe_error, "%s", r.error);
}

/* ---------------------------------------------------------------- discovery */

static void file_version(dr_lib *lib)
{
    const char *base = strrchr(lib->realpath, '/');
    base = base ? base + 1 : lib->realpath;
    const char *so = strstr(base, ".so.");
    if (so)
        snprintf(lib->file_ver, sizeof lib->file_ver, "%s", so + 4);
}

static void add_lib(dr_libs *l, const char *soname, const char *path, int source)
{
    int kind = kind_of(soname);
    if (kind < 0)
        return;
    char real[PATH_MAX];
    if (!realpath(path, real))
        return; /* a dangling link: the loader skips it too */
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->libs[i].realpath, real) && !strcmp(l->libs[i].soname, soname))
            return; /* the same file seen again (LD_LIBRARY_PATH and the cache) */
    if (l->n == DR_MAX_LIBS) {
        l->truncated = 1;
        return;
    }
    dr_lib *lib = &l->libs[l->n++];
    memset(lib, 0, sizeof *lib);
    lib->kind = kind;
    lib->source = source;
    lib->shadowed_by = -1;
    if (snprintf(lib->soname, sizeof lib->soname, "%s", soname) >= (int)sizeof lib->soname ||
        snprintf(lib->path, sizeof lib->path, "%s", path) >= (int)sizeof lib->path ||
        snprintf(lib->realpath, sizeof lib->realpath, "%s", real) >= (int)sizeof lib->realpath) {
        l->n--; /* a path too long to show whole: left out rather than shown wrong */
        l->truncated = 1;
        return;
    }
    file_version(lib);
}

static void scan_dir(dr_libs *l, const char *dir, int source)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    /* readdir's order is the file system's: sort the names so output is stable. */
    char names[64][96];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 64)
        if (kind_of(e->d_name) >= 0 &&
            snprintf(names[n], sizeof names[0], "%s", e->d_name) < (int)sizeof names[0])
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path)
            continue;
        add_lib(l, names[i], path, source);
    }
}

static void scan_ld_library_path(dr_libs *l)
{
    const char *env = getenv("LD_LIBRARY_PATH");
    if (!env)
        return;
    char *copy = strdup(env), *save = NULL;
    if (!copy)
        return;
    for (char *dir = strtok_r(copy, ":;", &save); dir; dir = strtok_r(NULL, ":;", &save))
        if (*dir)
            scan_dir(l, dir, DR_SRC_LD_LIBRARY_PATH);
    free(copy);
}

/* `ldconfig -p` lines: "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9"
 */
static void scan_ldconfig(dr_libs *l)
{
    const char *prog = getenv("GPUTRACE_DOCTOR_LDCONFIG");
    char cmd[600];
    if (prog && *prog)
        snprintf(cmd, sizeof cmd, "'%s' -p 2>/dev/null", prog);
    else
        snprintf(cmd, sizeof cmd,
                 "{ /sbin/ldconfig -p || /usr/sbin/ldconfig -p || ldconfig -p; }"
                 " 2>/dev/null");
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[1024];
    while (fgets(line, sizeof line, p)) {
        char name[128];
        const char *arrow = strstr(line, "=> ");
        if (!arrow || sscanf(line, " %127s", name) != 1 || kind_of(name) < 0)
            continue;
        if (strstr(line, "x86-64") == NULL && strstr(line, "AArch64") == NULL &&
            strstr(line, "64bit") == NULL)
            continue; /* 32-bit copies are not for us */
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s", arrow + 3);
        path[strcspn(path, "\r\n")] = 0;
        add_lib(l, name, path, DR_SRC_LDCONFIG);
    }
    pclose(p);
}

/* Marks, per soname, the copy the loader takes (the first in search order) and those it shadows.
 * Python copies are not on the loader's path: they shadow nothing and are shadowed by nothing. */
static void mark_shadowing(dr_libs *l)
{
    for (int i = 0; i < l->n; i++) {
        dr_lib *a = &l->libs[i];
        if (a->source == DR_SRC_PYTHON)
            continue;
        int first = -1;
        for (int j = 0; j < i && first < 0; j++)
            if (l->libs[j].source != DR_SRC_PYTHON && !strcmp(l->libs[j].soname, a->soname))
                first = j;
        if (first >= 0)
            a->shadowed_by = first;
        else
            a->loader_choice = 1;
    }
}

void dr_libs_find(dr_libs *l, char *const *python_dirs, int n_python_dirs)
{
    memset(l, 0, sizeof *l);
    scan_ld_library_path(l);
    scan_ldconfig(l);
    for (int i = 0; i < n_python_dirs; i++)
        scan_dir(l, python_dirs[i], DR_SRC_PYTHON);
    mark_shadowing(l);
    for (int i = 0; i < l->n; i++)
        probe_version(&l->libs[i]);
}

static int soname_major(const char *soname)
{
    const char *dot = strrchr(soname, '.');
    return dot ? atoi(dot + 1) : 0;
}

int dr_libs_loader_pick(const dr_libs *l, int kind)
{
    int best = -1;
    for (int i = 0; i < l->n; i++) {
        const dr_lib *a = &l->libs[i];
        if (a->kind != kind || !a->loader_choice)
            continue;
        if (best < 0 || soname_major(a->soname) > soname_major(l->libs[best].soname))
            best = i;
    }
    return best;
}
