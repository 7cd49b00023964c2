/* doctor_python.c — what a Python interpreter's PyTorch and JAX say about CUDA (`--python PY`).
 *
 * The interpreter runs a short script that prints "key<TAB>value" lines (no JSON: doctor links
 * no JSON library); everything it imports is optional. The script also lists the folders of the
 * CUDA libraries that wheels bring (site-packages/nvidia/<x>/lib, torch/lib), which doctor_libs.c
 * scans like any other. The arch list check is the answer to "no kernel image is available for
 * execution on the device" before the program runs. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doctor.h"

#define PY_TIMEOUT_S 180

static const char PY_SCRIPT[] =
    "import sys, os, glob, site\n"
    "def out(k, v): print('%s\\t%s' % (k, str(v).replace('\\n', ' ').replace('\\t', ' ')))\n"
    "out('python', sys.version.split()[0])\n"
    "roots = []\n"
    "try: roots += site.getsitepackages()\n"
    "except Exception: pass\n"
    "try: roots.append(site.getusersitepackages())\n"
    "except Exception: pass\n"
    "roots += [p for p in sys.path if p.endswith('-packages')]\n"
    "seen = set()\n"
    "for r in roots:\n"
    "    for d in sorted(glob.glob(os.path.join(r, 'nvidia', '*', 'lib'))) + "
    "[os.path.join(r, 'torch', 'lib')]:\n"
    "        if os.path.isdir(d) and d not in seen:\n"
    "            seen.add(d); out('libdir', d)\n"
    "try:\n"
    "    import torch\n"
    "    out('torch.version', torch.__version__)\n"
    "    out('torch.cuda', torch.version.cuda or '')\n"
    "    try: out('torch.cudnn', torch.backends.cudnn.version() or 0)\n"
    "    except Exception as e: out('torch.cudnn', 0)\n"
    "    out('torch.arch', ' '.join(torch.cuda.get_arch_list()))\n"
    "    out('torch.available', int(torch.cuda.is_available()))\n"
    "    n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
    "    out('torch.count', n)\n"
    "    out('torch.devices', ', '.join('%s (sm_%d%d)' % ((torch.cuda.get_device_name(i),) + "
    "torch.cuda.get_device_capability(i)) for i in range(n)))\n"
    "except Exception as e:\n"
    "    out('torch.error', '%s: %s' % (type(e).__name__, e))\n"
    "try:\n"
    "    import jax\n"
    "    out('jax.version', jax.__version__)\n"
    "    try:\n"
    "        from jax._src.lib import cuda_versions as cv\n"
    "        if cv is not None:\n"
    "            out('jax.cuda', '%d.%d' % (cv.cuda_runtime_get_version() // 1000, "
    "cv.cuda_runtime_get_version() % 1000 // 10))\n"
    "            out('jax.cudnn', cv.cudnn_get_version())\n"
    "    except Exception: pass\n"
    "    devs = jax.devices()\n"
    "    gpus = [d for d in devs if d.platform == 'gpu']\n"
    "    out('jax.available', int(bool(gpus)))\n"
    "    out('jax.count', len(gpus))\n"
    "    out('jax.devices', ', '.join(getattr(d, 'device_kind', str(d)) for d in devs))\n"
    "except Exception as e:\n"
    "    out('jax.error', '%s: %s' % (type(e).__name__, e))\n";

static void set_str(char *dst, size_t len, const char *v)
{
    snprintf(dst, len, "%s", v);
}

static void parse_framework(dr_framework *f, const char *key, const char *v)
{
    if (!strcmp(key, "version")) {
        f->present = 1;
        set_str(f->version, sizeof f->version, v);
    } else if (!strcmp(key, "cuda")) {
        set_str(f->cuda, sizeof f->cuda, v);
    } else if (!strcmp(key, "cudnn")) {
        f->cudnn = atoi(v);
    } else if (!strcmp(key, "arch")) {
        set_str(f->arch_list, sizeof f->arch_list, v);
    } else if (!strcmp(key, "available")) {
        f->available = atoi(v);
    } else if (!strcmp(key, "count")) {
        f->device_count = atoi(v);
    } else if (!strcmp(key, "devices")) {
        set_str(f->devices, sizeof f->devices, v);
    } else if (!strcmp(key, "error")) {
        set_str(f->error, sizeof f->error, v);
    }
}

static void parse_line(dr_python *py, char *line)
{
    line[strcspn(line, "\r\n")] = 0;
    char *tab = strchr(line, '\t');
    if (!tab)
        return;
    *tab = 0;
    const char *key = line, *v = tab + 1;
    if (!strcmp(key, "python")) {
        py->ran = 1;
        set_str(py->version, sizeof py->version, v);
    } else if (!strcmp(key, "libdir") && py->n_dirs < DR_MAX_PY_DIRS) {
        set_str(py->dirs[py->n_dirs++], sizeof py->dirs[0], v);
    } else if (!strncmp(key, "torch.", 6)) {
        parse_framework(&py->torch, key + 6, v);
    } else if (!strncmp(key, "jax.", 4)) {
        parse_framework(&py->jax, key + 4, v);
    }
}

void dr_python_probe(dr_python *py, const char *interpreter)
{
    memset(py, 0, sizeof *py);
    py->asked = 1;
    set_str(py->interpreter, sizeof py->interpreter, interpreter);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(py->error, sizeof py->error, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(py->error, sizeof py->error, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        /* JAX would otherwise take 75% of each GPU's memory while doctor measures; a hung import
         * must not hang doctor (the alarm survives exec and ends the interpreter). */
        setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false", 1);
        alarm(PY_TIMEOUT_S);
        /* The frameworks' warnings would mix into doctor's output; what matters comes back on
         * stdout (import errors included). */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp(interpreter, interpreter, "-c", PY_SCRIPT, (char *)NULL);
        _exit(errno == ENOENT ? 127 : 126);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f))
        parse_line(py, line);
    if (f)
        fclose(f);
    else
        close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!py->ran)
        snprintf(py->error, sizeof py->error, "%s did not run (exit status %d%s)", interpreter,
                 code,
                 code == 127   ? ": not found"
                 : code == 126 ? ": not executable"
                               : "");
    else if (WIFSIGNALED(status))
        snprintf(py->error, sizeof py->error, "%s was stopped by signal %d after %s", interpreter,
                 WTERMSIG(status), WTERMSIG(status) == SIGALRM ? "3 minutes" : "starting");
}

/* One arch list entry: "sm_90", "sm_90a", "compute_90". */
static int parse_arch(const char *tok, int *is_ptx, int *cc, int *specific)
{
    const char *digits;
    if (!strncmp(tok, "sm_", 3)) {
        *is_ptx = 0;
        digits = tok + 3;
    } else if (!strncmp(tok, "compute_", 8)) {
        *is_ptx = 1;
        digits = tok + 8;
    } else {
        return -1;
    }
    if (!isdigit((unsigned char)digits[0]))
        return -1;
    *cc = atoi(digits);
    const char *end = digits;
    while (isdigit((unsigned char)*end))
        end++;
    *specific = *end == 'a' || *end == 'f'; /* sm_90a: only that exact GPU */
    return 0;
}

int dr_arch_covers(const char *arch_list, int major, int minor)
{
    int want = major * 10 + minor, best = 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", arch_list ? arch_list : "");
    char *save = NULL;
    for (char *tok = strtok_r(copy, " ,", &save); tok; tok = strtok_r(NULL, " ,", &save)) {
        int is_ptx, cc, specific;
        if (parse_arch(tok, &is_ptx, &cc, &specific) != 0)
            continue;
        /* Cubins run on the same major with an equal or higher minor; PTX is JIT-compiled for
         * any later GPU; arch-specific code (sm_90a) only on that GPU. */
        if (!is_ptx && (specific ? cc == want : cc / 10 == major && cc <= want))
            best = 2;
        else if (is_ptx && !specific && cc <= want && best < 1)
            best = 1;
    }
    return best;
}
