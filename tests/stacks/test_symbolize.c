/* test_symbolize — the analyzer's symbolizer on hand-built traces (no libgputrace involved):
 *   - this very program as a module, at its real load address: known functions come back by name,
 *     with file and line, in order;
 *   - the same module with another build-id: nothing is trusted, frames show module+offset;
 *   - a module that is not an ELF file, a truncated ELF, a missing file: no crash, module+offset;
 *   - damaged stack records (depth larger than the body, id 0) are ignored;
 *   - Python frames whose string ids are unknown print "?";
 *   - a stack with no user frame (a library thread) still gets a call site: the framework frame
 *     nearest to user code, as module+offset when nameless, never a bare address;
 *   - the chain under a call site: outermost first, gputrace's and the runtime's frames left out,
 *     nameless runs of one module on one line, cut at max_under;
 *   - the run's symbol archive: written from a trace whose modules are here, then read for a trace
 *     whose module is gone (another machine) — matched by build-id, not by path, not used for
 *     another build-id; a damaged or foreign archive is ignored without harm.
 * Runs under ASan/UBSan with GPUTRACE_SANITIZE. */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callsite.h"
#include "codekind.h"
#include "gt_encode.h"
#include "gt_test_writer.h"
#include "gt_reader.h"
#include "symarchive.h"
#include "symarchive_write.h"
#include "symbolize.h"
#include "../gt_check.h"

__attribute__((noinline)) void known_inner(void)
{
    __asm__ volatile("");
}

__attribute__((noinline)) void known_outer(void)
{
    known_inner();
    __asm__ volatile("");
}

typedef struct self_info {
    uint64_t bias, size;
    uint8_t build_id[32];
    uint32_t build_id_len;
} self_info;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    self_info *s = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && ph->p_vaddr + ph->p_memsz > s->size)
            s->size = ph->p_vaddr + ph->p_memsz;
        if (ph->p_type == PT_NOTE) {
            const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= 32) {
                memcpy(s->build_id, p + sizeof *n + ((n->n_namesz + 3) & ~3u), n->n_descsz);
                s->build_id_len = n->n_descsz;
            }
        }
    }
    s->bias = info->dlpi_addr;
    return 1; /* the first entry is the program itself */
}

static void add_module(gt_test_writer *w, uint32_t path_id, uint64_t base, uint64_t size,
                       const uint8_t *build_id, uint32_t build_id_len)
{
    gt_rec_module m = {
        .base = base, .size = size, .path_id = path_id, .build_id_len = build_id_len};
    if (build_id_len)
        memcpy(m.build_id, build_id, build_id_len);
    gt_test_writer_add(w, GT_REC_MODULE, 0, &m, sizeof m);
}

static void add_stack(gt_test_writer *w, uint32_t id, const uint64_t *pcs, uint32_t n,
                      uint32_t py_file, uint32_t claimed_depth)
{
    unsigned char body[512] = {0};
    gt_rec_stack *s = (gt_rec_stack *)body;
    s->stack_id = id;
    s->depth = claimed_depth;
    s->py_depth = py_file ? 1 : 0;
    memcpy(s + 1, pcs, n * 8);
    uint32_t size = sizeof *s + n * 8;
    if (py_file) {
        uint32_t py[4] = {py_file, py_file + 1, 42, 0};
        memcpy(body + size, py, sizeof py);
        size += sizeof py;
    }
    gt_test_writer_add(w, GT_REC_STACK, 0, body, size);
}

static void write_trace(const char *path, const self_info *self, const char *exe,
                        const char *not_elf, const char *truncated)
{
    gt_file_header h = {.pid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    gt_test_writer w;
    if (gt_test_writer_open(&w, path, &h, "test", "test", 4) != 0) {
        perror(path);
        exit(1);
    }
    uint64_t inner = (uint64_t)(uintptr_t)&known_inner + 1;
    uint64_t outer = (uint64_t)(uintptr_t)&known_outer + 1;
    gt_test_writer_string(&w, 1, exe);
    gt_test_writer_string(&w, 2, not_elf);
    gt_test_writer_string(&w, 3, truncated);
    gt_test_writer_string(&w, 4, "/nonexistent/libgone.so");
    gt_test_writer_string(&w, 5, "/home/u/train.py");
    gt_test_writer_string(&w, 6, "train_step");
    add_module(&w, 1, self->bias, self->size, self->build_id, self->build_id_len);
    /* Other modules at addresses far from the program. */
    add_module(&w, 2, 0x7f0000000000ull, 0x10000, NULL, 0);
    add_module(&w, 3, 0x7f0000100000ull, 0x10000, NULL, 0);
    add_module(&w, 4, 0x7f0000200000ull, 0x10000, NULL, 0);
    uint64_t good[2] = {inner, outer};
    add_stack(&w, 1, good, 2, 0, 2);
    uint64_t others[3] = {0x7f0000000010ull, 0x7f0000100020ull, 0x7f0000200030ull};
    add_stack(&w, 2, others, 3, 5, 3);  /* with a Python frame */
    add_stack(&w, 3, good, 2, 0, 1000); /* depth larger than the body */
    add_stack(&w, 0, good, 2, 0, 2);    /* id 0 */
    uint64_t nowhere[1] = {0x10};
    add_stack(&w, 4, nowhere, 1, 99, 1); /* unknown strings, no module */
    gt_test_writer_close(&w);
}

static void copy_prefix(const char *from, const char *to, size_t n)
{
    char buf[256];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t got = in >= 0 ? read(in, buf, n < sizeof buf ? n : sizeof buf) : -1;
    if (out >= 0 && got > 0 && write(out, buf, (size_t)got) != got)
        perror(to);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
}

static gt_symtab *load(const char *path, gt_reader **r)
{
    char err[256];
    if (gt_reader_open(path, r, err, sizeof err) != GT_OPEN_OK) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    gt_symtab *st = gt_symtab_new();
    gt_symtab_load(st, *r);
    return st;
}

/* ---------------------------------------------------------------- call sites without user code */

#define LIB_BASE 0x7f1000000000ull

static void write_library_trace(const char *path)
{
    gt_file_header h = {.pid = 2, .rank = -1, .local_rank = -1, .world_size = -1};
    gt_test_writer w;
    if (gt_test_writer_open(&w, path, &h, "test", "test", 4) != 0) {
        perror(path);
        exit(1);
    }
    static const char *const mods[] = {"/opt/x/libgputrace.so", "/opt/x/libcudart.so.13",
                                       "/opt/x/libtorch_cuda.so", "/opt/x/libc.so.6",
                                       "/opt/x/libpython3.12.so.1.0"};
    for (uint32_t i = 0; i < 5; i++) {
        gt_test_writer_string(&w, 10 + i, mods[i]);
        add_module(&w, 10 + i, LIB_BASE + i * 0x100000ull, 0x10000, NULL, 0);
    }
    gt_test_writer_string(&w, 20, "/home/u/train.py");
    gt_test_writer_string(&w, 21, "train_step");
    /* 1: autograd-thread-like: gputrace, cudart, torch, torch, libc (clone) — no user code. */
    uint64_t lib_only[5] = {LIB_BASE + 0x10, LIB_BASE + 0x100020, LIB_BASE + 0x200030,
                            LIB_BASE + 0x200040, LIB_BASE + 0x300050};
    add_stack(&w, 1, lib_only, 5, 0, 5);
    /* 2: only gputrace and the runtime. */
    uint64_t runtime_only[2] = {LIB_BASE + 0x10, LIB_BASE + 0x300060};
    add_stack(&w, 2, runtime_only, 2, 0, 2);
    /* 3: a Python user frame above torch and cudart (no interpreter frame: appended last). */
    uint64_t under_py[4] = {LIB_BASE + 0x10, LIB_BASE + 0x100020, LIB_BASE + 0x200030,
                            LIB_BASE + 0x200040};
    add_stack(&w, 3, under_py, 4, 20, 4);
    /* 4: pcs no module holds (generated code). */
    uint64_t jit[2] = {0x1000, 0x2000};
    add_stack(&w, 4, jit, 2, 0, 2);
    gt_test_writer_close(&w);
}

static void test_code_kinds(void)
{
    static const struct {
        const char *path;
        gt_code_kind kind;
    } cases[] = {
        {"/home/u/app/build/myapp", GT_CODE_USER},
        {"/home/u/app/build/libmykernels.so", GT_CODE_USER},
        {"/venv/lib/python3.12/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so",
         GT_CODE_FRAMEWORK},
        {"/venv/lib/python3.12/site-packages/cupy/_core/core.cpython-312-x86_64-linux-gnu.so",
         GT_CODE_FRAMEWORK},
        {"/usr/lib/x86_64-linux-gnu/libopenblas.so.0", GT_CODE_FRAMEWORK},
        {"/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", GT_CODE_FRAMEWORK},
        {"/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13", GT_CODE_CUDA},
        {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", GT_CODE_CUDA},
        {"/usr/lib/x86_64-linux-gnu/libc.so.6", GT_CODE_RUNTIME},
        {"/usr/bin/python3.12", GT_CODE_RUNTIME},
        {"/usr/lib/python3.12/lib-dynload/_ctypes.cpython-312-x86_64-linux-gnu.so",
         GT_CODE_RUNTIME},
        {"/opt/gputrace/lib/libgputrace.so", GT_CODE_GPUTRACE},
        {NULL, GT_CODE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK(gt_module_kind(cases[i].path) == cases[i].kind, "kind of %s: %d, expected %d",
              cases[i].path ? cases[i].path : "(none)", gt_module_kind(cases[i].path),
              cases[i].kind);
    gt_frame user_py = {.python = true, .file = "/home/u/train.py"};
    gt_frame lib_py = {.python = true,
                       .file = "/venv/lib/python3.12/site-packages/torch/_tensor.py"};
    CHECK(gt_frame_kind(&user_py) == GT_CODE_USER && gt_frame_kind(&lib_py) == GT_CODE_FRAMEWORK,
          "Python frames by file");
    /* An installed plugin's frame inside the user's binary: the binary is the call site. */
    gt_frame fr[3] = {
        {.module = "/venv/lib/python3.12/site-packages/jax_plugins/x/xla_cuda_plugin.so"},
        {.module = "/home/u/app/build/myapp", .function = "run_step"},
        {.module = "/usr/lib/x86_64-linux-gnu/libc.so.6"},
    };
    bool user = false;
    CHECK(gt_callsite_pick(fr, 3, &user) == 1 && user, "the application binary over a plugin");
    CHECK(gt_callsite_pick(fr, 1, &user) == 0 && !user, "the plugin alone: library placed");
}

static void test_library_callsites(const char *dir)
{
    char trace[1200];
    snprintf(trace, sizeof trace, "%s/lib.gtrace", dir);
    write_library_trace(trace);
    gt_reader *r;
    gt_symtab *st = load(trace, &r);
    const char *site = gt_symtab_callsite(st, 1);
    CHECK(site && strcmp(site, "[libtorch_cuda.so+0x30]") == 0,
          "no user frame: the innermost framework frame as module+offset, got %s",
          site ? site : "(null)");
    site = gt_symtab_callsite(st, 2);
    CHECK(site && strcmp(site, "[libc.so.6+0x60]") == 0, "runtime only: %s",
          site ? site : "(null)");
    site = gt_symtab_callsite(st, 4);
    CHECK(site && strcmp(site, "[0x1000]") == 0, "no module at all: the address, got %s",
          site ? site : "(null)");

    gt_frame fr[8];
    int n = gt_symbolize_stack(st, 1, fr, 8);
    bool user = true;
    CHECK(gt_callsite_pick(fr, n, &user) == 2 && !user, "pick: frame 2, not user code");
    CHECK(n == 5 && fr[0].build_id == NULL, "no build-id recorded: none shown");
    CHECK(gt_callsite_pick(fr, 0, &user) == -1, "no frames: no pick");

    char text[512];
    size_t len = gt_callsite_chain(st, 3, 8, "  ", text, sizeof text);
    CHECK(len == strlen(text) &&
              strcmp(text, "train.py:42 in train_step\n  [libtorch_cuda.so+0x40] +1 more\n"
                           "  [libcudart.so.13+0x20]") == 0,
          "chain under a Python site:\n%s", text);
    gt_callsite_chain(st, 3, 1, "  ", text, sizeof text);
    CHECK(strcmp(text, "train.py:42 in train_step\n  [libtorch_cuda.so+0x40] +1 more\n  ...") == 0,
          "chain cut at max_under:\n%s", text);
    gt_callsite_chain(st, 3, 8, "  ", text, 12);
    CHECK(strcmp(text, "train.py:42") == 0, "chain cut at the buffer: %s", text);
    CHECK(gt_callsite_chain(st, 99, 8, "  ", text, sizeof text) == 0 && text[0] == '\0',
          "unknown stack: empty chain");
    gt_callsite_chain(st, 1, 8, "  ", text, sizeof text);
    CHECK(strcmp(text, "[libtorch_cuda.so+0x30]\n  [libcudart.so.13+0x20]") == 0,
          "chain of a library thread:\n%s", text);
    gt_symtab_free(st);
    gt_reader_close(r);
    unlink(trace);
}

/* ---------------------------------------------------------------- the symbol archive */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static int count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

/* A trace of this program's two known functions, its module named path_in_trace. */
static void write_self_trace(const char *trace, const self_info *self, const char *path_in_trace)
{
    gt_file_header h = {.pid = 3, .rank = -1, .local_rank = -1, .world_size = -1};
    gt_test_writer w;
    if (gt_test_writer_open(&w, trace, &h, "test", "test", 4) != 0) {
        perror(trace);
        exit(1);
    }
    gt_test_writer_string(&w, 1, path_in_trace);
    add_module(&w, 1, self->bias, self->size, self->build_id, self->build_id_len);
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&known_inner + 1,
                       (uint64_t)(uintptr_t)&known_outer + 1};
    add_stack(&w, 1, pcs, 2, 0, 2);
    gt_test_writer_close(&w);
}

static void test_archive_round_trip(const char *dir, const self_info *self, const char *exe)
{
    char trace[1200], archive[1200], err[256];
    snprintf(trace, sizeof trace, "%s/self.gtrace", dir);
    snprintf(archive, sizeof archive, "%s/" GT_SYMARCHIVE_NAME, dir);
    write_self_trace(trace, self, exe);
    int written = gt_symarchive_write_dir(dir, err, sizeof err);
    CHECK(written == 2, "2 frames kept in the archive, got %d (%s)", written,
          written < 0 ? err : "");
    CHECK(count_in_file(archive, "known_inner") == 1 &&
              count_in_file(archive, "# gputrace symbols 1") == 1,
          "archive names known_inner once, under its header");

    /* Another machine: the module is not at that path any more; its build-id is the same. */
    write_self_trace(trace, self, "/nonexistent/elsewhere/test_symbolize");
    gt_reader *r;
    gt_symtab *st = load(trace, &r);
    gt_frame fr[4];
    int n = gt_symbolize_stack(st, 1, fr, 4);
    CHECK(n == 2 && fr[0].function && strcmp(fr[0].function, "known_inner") == 0 &&
              fr[1].function && strcmp(fr[1].function, "known_outer") == 0,
          "names from the archive: %s", n && fr[0].function ? fr[0].function : "-");
    CHECK(n >= 1 && fr[0].file && strstr(fr[0].file, "test_symbolize.c") && fr[0].line > 0,
          "file:line from the archive");
    CHECK(n >= 1 && fr[0].build_id && strlen(fr[0].build_id) == 2 * self->build_id_len,
          "the frame carries the module's build-id in hex");
    const char *site = gt_symtab_callsite(st, 1);
    CHECK(site && strncmp(site, "test_symbolize.c:", 17) == 0 && strstr(site, " in known_inner"),
          "callsite %s", site ? site : "(null)");
    gt_symtab_free(st);
    gt_reader_close(r);

    /* Without the archive the same trace has no names: they did come from it. */
    st = gt_symtab_new();
    gt_symtab_use_archive(st, false);
    gt_reader_open(trace, &r, err, sizeof err);
    gt_symtab_load(st, r);
    n = gt_symbolize_stack(st, 1, fr, 4);
    CHECK(n == 2 && !fr[0].function, "archive off: no names");
    gt_symtab_free(st);
    gt_reader_close(r);

    /* Another build of the module: the archive's names are not for it. */
    self_info other = *self;
    other.build_id[0] ^= 0xff;
    write_self_trace(trace, &other, "/nonexistent/elsewhere/test_symbolize");
    st = load(trace, &r);
    n = gt_symbolize_stack(st, 1, fr, 4);
    CHECK(n == 2 && !fr[0].function, "other build-id: archive not used (%s)",
          n && fr[0].function ? fr[0].function : "-");
    gt_symtab_free(st);
    gt_reader_close(r);
    unlink(trace);

    /* A folder without stacks: no archive, an older one removed. */
    CHECK(gt_symarchive_write_dir(dir, err, sizeof err) == 0 && access(archive, F_OK) != 0,
          "no stacks: no archive");
    CHECK(gt_symarchive_write_dir("/nonexistent/run", err, sizeof err) == -1 &&
              strstr(err, "/nonexistent/run"),
          "a missing folder is named: %s", err);
}

static void test_archive_by_hand(const char *dir)
{
    char trace[1200], archive[1200];
    snprintf(trace, sizeof trace, "%s/lib.gtrace", dir);
    snprintf(archive, sizeof archive, "%s/" GT_SYMARCHIVE_NAME, dir);
    write_library_trace(trace);
    /* By path (no build-id on either side), with damaged lines around the good ones. */
    write_file(archive, "# gputrace symbols 1\n"
                        "F\t30\t0\t\torphan_before_any_module\n"
                        "M\t\t/opt/x/libtorch_cuda.so\n"
                        "F\tzz\t0\t\tbad_offset\n"
                        "F\t30\t-4\t\tbad_line\n"
                        "F\t30\t12\tcopy.cpp\tat::native::copy_\n"
                        "F\t40\n"
                        "M\t\t/opt/x/libcudart.so.13\n"
                        "F\t20\t0\t\tcudaMemcpyAsync\n"
                        "X\tsomething from a newer writer\n");
    gt_reader *r;
    gt_symtab *st = load(trace, &r);
    const char *site = gt_symtab_callsite(st, 1);
    CHECK(site && strcmp(site, "copy.cpp:12 in at::native::copy_") == 0,
          "library site named from the archive: %s", site ? site : "(null)");
    char text[512];
    gt_callsite_chain(st, 3, 8, "  ", text, sizeof text);
    CHECK(strcmp(text,
                 "train.py:42 in train_step\n  [libtorch_cuda.so+0x40]\n"
                 "  copy.cpp:12 in at::native::copy_\n  cudaMemcpyAsync [libcudart.so.13]") == 0,
          "chain with archive names:\n%s", text);
    gt_symtab_free(st);
    gt_reader_close(r);

    /* Not an archive (another header): ignored, frames stay module+offset. */
    write_file(archive, "# gputrace symbols 2\nM\t\t/opt/x/libtorch_cuda.so\nF\t30\t0\t\tx\n");
    st = load(trace, &r);
    site = gt_symtab_callsite(st, 1);
    CHECK(site && strcmp(site, "[libtorch_cuda.so+0x30]") == 0, "newer archive ignored: %s",
          site ? site : "(null)");
    gt_symtab_free(st);
    gt_reader_close(r);
    write_file(archive, "");
    st = load(trace, &r);
    CHECK(gt_symtab_callsite(st, 1) != NULL, "empty archive ignored");
    gt_symtab_free(st);
    gt_reader_close(r);
    unlink(archive);
    unlink(trace);
}

/* The archive reader on damaged input: deterministic mutations of a valid archive (bytes flipped,
 * cut, lines repeated) must load or be refused, never crash or leak (ASan), and lookups stay safe.
 */
static void test_archive_mutations(void)
{
    static const char good[] = "# gputrace symbols 1\n# comment\n"
                               "M\tabcdef01\t/opt/x/libtorch_cuda.so\n"
                               "F\t30\t12\tcopy.cpp\tat::native::copy_\n"
                               "F\t40\t0\t\tfoo\n"
                               "M\t\t/opt/x/libcudart.so.13\n"
                               "F\t20\t0\t\tcudaMemcpyAsync\n";
    gt_symarchive *a = gt_symarchive_load_mem(good, sizeof good - 1);
    const char *fn = NULL, *file = NULL;
    int line = 0;
    int m = gt_symarchive_module(a, "abcdef01", "/elsewhere/libtorch_cuda.so");
    CHECK(m == 0 && gt_symarchive_find(a, m, 0x30, &fn, &file, &line) && fn &&
              strcmp(fn, "at::native::copy_") == 0 && file && strcmp(file, "copy.cpp") == 0 &&
              line == 12,
          "by build-id at another path: %s", fn ? fn : "-");
    CHECK(gt_symarchive_module(a, "abcdef02", "/opt/x/libtorch_cuda.so") == -1,
          "another build-id at the same path: no match");
    CHECK(gt_symarchive_module(a, NULL, "/opt/x/libcudart.so.13") == 1 &&
              gt_symarchive_module(a, "ffff", "/opt/x/libcudart.so.13") == 1,
          "by path when a side has no build-id");
    CHECK(!gt_symarchive_find(a, 0, 0x31, &fn, &file, &line), "no entry at another offset");
    CHECK(!gt_symarchive_find(a, -1, 0x30, &fn, &file, &line), "no module");
    gt_symarchive_free(a);

    char buf[sizeof good + 64];
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int loaded = 0;
    for (int round = 0; round < 3000; round++) {
        size_t len = sizeof good - 1;
        memcpy(buf, good, len);
        for (int k = 0; k < 1 + round % 4 && len > 1; k++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            size_t at = (size_t)(rng >> 8) % len;
            switch (rng % 4) {
            case 0:
                buf[at] = (char)(rng >> 40);
                break; /* a byte changed */
            case 1:
                len = at ? at : 1;
                break; /* cut */
            case 2:
                buf[at] = "\t\n0F"[(rng >> 20) % 4];
                break; /* structure changed */
            default:
                memmove(buf + at, buf + at + 1, len - at - 1), len--;
                break;
            }
        }
        a = gt_symarchive_load_mem(buf, len);
        loaded += a != NULL;
        int mod = gt_symarchive_module(a, "abcdef01", "/opt/x/libcudart.so.13");
        gt_symarchive_find(a, mod, 0x30, &fn, &file, &line);
        gt_symarchive_free(a);
    }
    CHECK(loaded > 100, "most mutants keep their header and load: %d of 3000", loaded);
}

int main(void)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 1;
    exe[n] = '\0';
    self_info self = {0};
    dl_iterate_phdr(find_self, &self);
    char dir[] = "/tmp/gt-symbolize-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char trace[1200], not_elf[1200], truncated[1200];
    snprintf(trace, sizeof trace, "%s/t.gtrace", dir);
    snprintf(not_elf, sizeof not_elf, "%s/not-elf.so", dir);
    snprintf(truncated, sizeof truncated, "%s/truncated.so", dir);
    FILE *f = fopen(not_elf, "w");
    if (f) {
        fputs("this is not an ELF file\n", f);
        fclose(f);
    }
    copy_prefix(exe, truncated, 100);

    write_trace(trace, &self, exe, not_elf, truncated);
    gt_reader *r;
    gt_symtab *st = load(trace, &r);
    CHECK(gt_symtab_stack_count(st) == 3, "3 valid stacks, got %d", gt_symtab_stack_count(st));

    gt_frame fr[8];
    char text[256];
    int k = gt_symbolize_stack(st, 1, fr, 8);
    CHECK(k == 2, "stack 1 has 2 frames, got %d", k);
    CHECK(k >= 2 && fr[0].function && strcmp(fr[0].function, "known_inner") == 0 &&
              fr[1].function && strcmp(fr[1].function, "known_outer") == 0,
          "names: %s, %s", k > 0 && fr[0].function ? fr[0].function : "-",
          k > 1 && fr[1].function ? fr[1].function : "-");
    CHECK(k >= 1 && fr[0].file && strstr(fr[0].file, "test_symbolize.c") && fr[0].line > 0,
          "file:line of known_inner: %s:%d", k && fr[0].file ? fr[0].file : "-",
          k ? fr[0].line : 0);
    const char *site = gt_symtab_callsite(st, 1);
    CHECK(site && strncmp(site, "test_symbolize.c:", 17) == 0 && strstr(site, " in known_inner"),
          "callsite %s", site ? site : "(null)");

    k = gt_symbolize_stack(st, 2, fr, 8);
    CHECK(k == 4, "stack 2: 3 native + 1 Python frame, got %d", k);
    for (int i = 0; i < k && i < 3; i++) {
        CHECK(!fr[i].python && fr[i].module && !fr[i].function, "frame %d of stack 2 unnamed", i);
        gt_frame_format(&fr[i], text, sizeof text);
        CHECK(strstr(text, "+0x") != NULL, "module+offset form: %s", text);
    }
    CHECK(k == 4 && fr[3].python && fr[3].line == 42, "Python frame last");
    site = gt_symtab_callsite(st, 2);
    CHECK(site && strcmp(site, "train.py:42 in train_step") == 0, "callsite %s",
          site ? site : "(null)");
    CHECK(gt_symbolize_stack(st, 3, fr, 8) == 0, "damaged stack ignored");
    CHECK(gt_symbolize_stack(st, 0, fr, 8) == 0, "id 0 has no frames");
    k = gt_symbolize_stack(st, 4, fr, 8);
    CHECK(k == 2 && !fr[0].module, "pc in no module");
    gt_frame_format(&fr[1], text, sizeof text);
    CHECK(strcmp(text, "?:42 in ?") == 0, "unknown Python strings: %s", text);
    gt_symtab_free(st);
    gt_reader_close(r);

    /* The same program recorded with another build-id: its symbols would lie. */
    self.build_id[0] ^= 0xff;
    write_trace(trace, &self, exe, not_elf, truncated);
    st = load(trace, &r);
    k = gt_symbolize_stack(st, 1, fr, 8);
    CHECK(k == 2 && !fr[0].function && !fr[0].file, "build-id mismatch: no names (%s)",
          k && fr[0].function ? fr[0].function : "-");
    gt_symtab_free(st);
    gt_reader_close(r);

    self.build_id[0] ^= 0xff; /* back to the real one */
    unlink(trace);
    unlink(not_elf);
    unlink(truncated);
    test_code_kinds();
    test_library_callsites(dir);
    test_archive_mutations();
    test_archive_by_hand(dir);
    if (self.build_id_len)
        test_archive_round_trip(dir, &self, exe);
    else
        fprintf(stderr, "test_symbolize: no build-id in this binary: archive round trip skipped\n");
    rmdir(dir);
    if (failures)
        return 1;
    printf("test_symbolize: ok\n");
    return 0;
}
