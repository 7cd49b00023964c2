/* test_symbolize — the analyzer's symbolizer on hand-built traces (no libgputrace involved):
 *   - this very program as a module, at its real load address: known functions come back by name,
 *     with file and line, in order;
 *   - the same module with another build-id: nothing is trusted, frames show module+offset;
 *   - a module that is not an ELF file, a truncated ELF, a missing file: no crash, module+offset;
 *   - damaged stack records (depth larger than the body, id 0) are ignored;
 *   - Python frames whose string ids are unknown print "?".
 * Runs under ASan/UBSan with GPUTRACE_SANITIZE. */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gt_test_writer.h"
#include "gt_reader.h"
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
    CHECK(site && strncmp(site, "known_inner (test_symbolize.c:", 30) == 0, "callsite %s",
          site ? site : "(null)");

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

    unlink(trace);
    unlink(not_elf);
    unlink(truncated);
    rmdir(dir);
    if (failures)
        return 1;
    printf("test_symbolize: ok\n");
    return 0;
}
