/* symbolize.c — stacks and module maps of a trace turned into function, file and line.
 * Runs in the analyzer only, never in the traced application. See symbolize.h.
 *
 * The modules are read with elfutils' libdwfl (Debian's libdw-dev): symbol tables, the separate
 * debug file found by build-id or .gnu_debuglink, DWARF line tables, compressed sections — what
 * gdb and perf read, kept by elfutils, instead of ELF code of our own and an addr2line process
 * per module. libgputrace.so never links it: only the offline analyzer reads DWARF. */
#include "symbolize.h"
#include "util.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codekind.h"
#include "demangle.h"
#include "symarchive.h"

/* ---------------------------------------------------------------- data */

typedef struct module {
    uint64_t base, size;
    char *path;
    uint8_t build_id[32];
    uint32_t build_id_len;
    char build_id_hex[65]; /* "" when none */
    int archive_module;    /* in the run's symbol archive, -1 when it has none */
    /* while symbolizing: the module alone in its libdwfl session, at its ELF addresses */
    bool loaded;
    Dwfl *dwfl;
    Dwfl_Module *dm; /* NULL: unreadable, or another file than the one recorded */
} module;

typedef struct py_frame_rec {
    uint32_t file_id, func_id;
    int32_t line;
    uint32_t pad;
} py_frame_rec;

typedef struct stack {
    bool present;
    bool truncated;
    uint32_t depth, py_depth;
    uint64_t *pcs;
    const char **py_file;
    const char **py_func;
    int32_t *py_line;
    char *callsite;
    bool callsite_done;
} stack;

typedef struct pc_info { /* one distinct native pc */
    uint64_t pc;
    int module; /* index, -1 none */
    char *function;
    char *file;
    int line;
} pc_info;

struct gt_symtab {
    module *mods;
    size_t nmods, capmods;
    stack *stacks; /* indexed by stack id */
    size_t capstacks;
    int nstacks;
    pc_info *pcs; /* sorted by pc after resolve */
    size_t npcs;
    bool resolved;
    char **strings; /* owned copies of Python names */
    size_t nstrings, capstrings;
    char *trace_dir;        /* folder of the trace read: where its symbol archive lies */
    bool archive_off;       /* gt_symtab_use_archive(st, false) */
    gt_symarchive *archive; /* loaded at the first resolve, NULL when there is none */
    bool archive_tried;
};

static const char *keep_string(gt_symtab *st, const char *s)
{
    if (!s)
        return NULL;
    if (st->nstrings == st->capstrings) {
        st->capstrings = st->capstrings ? st->capstrings * 2 : 64;
        st->strings = gt_xrealloc(st->strings, st->capstrings * sizeof *st->strings);
    }
    return st->strings[st->nstrings++] = gt_xstrdup(s);
}

gt_symtab *gt_symtab_new(void)
{
    return gt_xcalloc(1, sizeof(gt_symtab));
}

void gt_symtab_free(gt_symtab *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nmods; i++) {
        module *m = &st->mods[i];
        free(m->path);
        if (m->dwfl)
            dwfl_end(m->dwfl);
    }
    free(st->mods);
    for (size_t i = 0; i < st->capstacks; i++) {
        stack *s = &st->stacks[i];
        free(s->pcs);
        free(s->py_file);
        free(s->py_func);
        free(s->py_line);
        free(s->callsite);
    }
    free(st->stacks);
    for (size_t i = 0; i < st->npcs; i++) {
        free(st->pcs[i].function);
        free(st->pcs[i].file);
    }
    free(st->pcs);
    for (size_t i = 0; i < st->nstrings; i++)
        free(st->strings[i]);
    free(st->strings);
    free(st->trace_dir);
    gt_symarchive_free(st->archive);
    free(st);
}

/* ---------------------------------------------------------------- feeding records */

static void add_module(gt_symtab *st, const gt_reader *r, const gt_record *rec)
{
    if (rec->body_size < sizeof(gt_rec_module))
        return;
    const gt_rec_module *m = rec->body;
    const char *path = gt_reader_string(r, m->path_id);
    if (!path || m->size == 0)
        return;
    for (size_t i = 0; i < st->nmods; i++) /* the same module written again (fork, retry) */
        if (st->mods[i].base == m->base && st->mods[i].size == m->size &&
            strcmp(st->mods[i].path, path) == 0)
            return;
    if (st->nmods == st->capmods) {
        st->capmods = st->capmods ? st->capmods * 2 : 32;
        st->mods = gt_xrealloc(st->mods, st->capmods * sizeof *st->mods);
    }
    module *d = &st->mods[st->nmods++];
    memset(d, 0, sizeof *d);
    d->base = m->base;
    d->size = m->size;
    d->path = gt_xstrdup(path);
    d->build_id_len = m->build_id_len > 32 ? 32 : m->build_id_len;
    memcpy(d->build_id, m->build_id, d->build_id_len);
    for (uint32_t i = 0; i < d->build_id_len; i++)
        snprintf(d->build_id_hex + 2 * i, 3, "%02x", d->build_id[i]);
    d->archive_module = -1;
}

static void add_stack(gt_symtab *st, const gt_reader *r, const gt_record *rec)
{
    if (rec->body_size < sizeof(gt_rec_stack))
        return;
    const gt_rec_stack *s = rec->body;
    uint64_t need = sizeof *s + (uint64_t)s->depth * 8 + (uint64_t)s->py_depth * 16;
    if (s->stack_id == 0 || s->stack_id > (1u << 26) || need > rec->body_size)
        return; /* damaged: ignored rather than trusted */
    if (s->stack_id >= st->capstacks) {
        size_t cap = st->capstacks ? st->capstacks : 64;
        while (cap <= s->stack_id)
            cap *= 2;
        st->stacks = gt_xrealloc(st->stacks, cap * sizeof *st->stacks);
        memset(st->stacks + st->capstacks, 0, (cap - st->capstacks) * sizeof *st->stacks);
        st->capstacks = cap;
    }
    stack *d = &st->stacks[s->stack_id];
    if (d->present)
        return;
    d->present = true;
    d->truncated = (rec->flags & GT_RF_TRUNCATED) != 0;
    d->depth = s->depth;
    d->py_depth = s->py_depth;
    d->pcs = gt_xcalloc(s->depth, sizeof *d->pcs);
    memcpy(d->pcs, s + 1, (size_t)s->depth * 8);
    d->py_file = gt_xcalloc(s->py_depth, sizeof *d->py_file);
    d->py_func = gt_xcalloc(s->py_depth, sizeof *d->py_func);
    d->py_line = gt_xcalloc(s->py_depth, sizeof *d->py_line);
    const unsigned char *py = (const unsigned char *)(s + 1) + (size_t)s->depth * 8;
    for (uint32_t i = 0; i < s->py_depth; i++) {
        py_frame_rec f;
        memcpy(&f, py + (size_t)i * sizeof f, sizeof f);
        d->py_file[i] = keep_string(st, gt_reader_string(r, f.file_id));
        d->py_func[i] = keep_string(st, gt_reader_string(r, f.func_id));
        d->py_line[i] = f.line;
    }
    st->nstacks++;
    st->resolved = false;
}

/* The folder of the first trace read: its run folder, where record left the symbol archive. */
static void note_trace_dir(gt_symtab *st, const gt_reader *r)
{
    const char *path = r ? gt_reader_path(r) : NULL;
    if (st->trace_dir || !path || !*path)
        return;
    const char *slash = strrchr(path, '/');
    st->trace_dir = slash ? gt_xrealloc(NULL, (size_t)(slash - path) + 2) : gt_xstrdup(".");
    if (slash) {
        size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x.gtrace": the root */
        memcpy(st->trace_dir, path, n);
        st->trace_dir[n] = '\0';
    }
}

void gt_symtab_use_archive(gt_symtab *st, bool use)
{
    st->archive_off = !use;
}

void gt_symtab_add_record(gt_symtab *st, const gt_reader *r, const gt_record *rec)
{
    note_trace_dir(st, r);
    if (rec->kind == GT_REC_MODULE)
        add_module(st, r, rec);
    else if (rec->kind == GT_REC_STACK)
        add_stack(st, r, rec);
}

int gt_symtab_load(gt_symtab *st, gt_reader *r)
{
    gt_reader_rewind(r);
    gt_record rec;
    while (gt_reader_next(r, &rec) == 1)
        gt_symtab_add_record(st, r, &rec);
    gt_reader_rewind(r);
    return st->nstacks;
}

int gt_symtab_stack_count(const gt_symtab *st)
{
    return st->nstacks;
}

static stack *get_stack(const gt_symtab *st, uint32_t id)
{
    if (id == 0 || id >= st->capstacks || !st->stacks[id].present)
        return NULL;
    return &st->stacks[id];
}

bool gt_symtab_stack_truncated(const gt_symtab *st, uint32_t stack_id)
{
    stack *s = get_stack(st, stack_id);
    return s && s->truncated;
}

/* ---------------------------------------------------------------- modules (libdwfl) */

/* Whether file:line is wanted: GPUTRACE_SOURCE_LINES=off (or the older GPUTRACE_ADDR2LINE=none)
 * keeps the names and skips the DWARF line tables, for output that must not depend on this
 * machine's binaries (the goldens) or when the tables are slow to read. */
static bool source_lines_wanted(void)
{
    const char *v = getenv("GPUTRACE_SOURCE_LINES");
    if (v && (!strcmp(v, "off") || !strcmp(v, "0")))
        return false;
    v = getenv("GPUTRACE_ADDR2LINE");
    return !(v && !strcmp(v, "none"));
}

/* libdwfl asks a debuginfod server for a missing debug file when DEBUGINFOD_URLS is set (Debian
 * sets it in login shells): a report must not download gigabytes of debug information behind the
 * user's back, so the variable is cleared unless GPUTRACE_DEBUGINFOD=on asks for it. */
static void keep_debuginfod_off(void)
{
    const char *v = getenv("GPUTRACE_DEBUGINFOD");
    if (!(v && !strcmp(v, "on")))
        unsetenv("DEBUGINFOD_URLS");
}

static const Dwfl_Callbacks dwfl_callbacks = {
    .find_debuginfo = dwfl_standard_find_debuginfo, /* build-id, .gnu_debuglink, .debug/ */
    .section_address = dwfl_offline_section_address,
};

/* A module file whose build-id differs from the recorded one is another build: its names would
 * lie. No build-id on either side: the path is trusted. */
static bool build_id_matches(const module *m)
{
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(m->dm, &bits, &vaddr);
    if (m->build_id_len == 0 || n <= 0)
        return true;
    return (uint32_t)n >= m->build_id_len && memcmp(bits, m->build_id, m->build_id_len) == 0;
}

/* GPUTRACE_LOCAL_BINARIES=off: names only from what the trace carries (its symbol archive), never
 * from this machine's files, for output that must be the same on every machine (the goldens: on
 * the machine that recorded them, the binaries are still at the recorded paths). */
static bool local_binaries_wanted(void)
{
    const char *v = getenv("GPUTRACE_LOCAL_BINARIES");
    return !(v && (!strcmp(v, "off") || !strcmp(v, "0")));
}

static void load_module(module *m)
{
    m->loaded = true;
    if (!local_binaries_wanted())
        return;
    /* The path comes from the trace: O_NONBLOCK so a FIFO there cannot block us, and only a
     * regular file is read (a device or FIFO is no module). */
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return;
    }
    keep_debuginfod_off();
    m->dwfl = dwfl_begin(&dwfl_callbacks);
    if (!m->dwfl) {
        close(fd);
        return;
    }
    dwfl_report_begin(m->dwfl);
    /* At its own ELF addresses (bias 0): pc - base is what the trace's offsets are. On success
     * the fd belongs to libdwfl. */
    m->dm = dwfl_report_elf(m->dwfl, m->path, m->path, fd, 0, true);
    if (!m->dm)
        close(fd);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (m->dm && !build_id_matches(m))
        m->dm = NULL;
}

static void unload_module(module *m)
{
    if (m->dwfl)
        dwfl_end(m->dwfl);
    m->dwfl = NULL;
    m->dm = NULL;
    m->loaded = false;
}

/* Function (demangled), file and line of the call instruction before the return address pc. */
static void symbolize_pc(const module *m, pc_info *p, bool lines)
{
    GElf_Addr addr = p->pc - m->base - 1; /* return addresses point after the call */
    GElf_Off off;
    GElf_Sym sym;
    const char *name = dwfl_module_addrinfo(m->dm, addr, &off, &sym, NULL, NULL, NULL);
    if (name && (sym.st_size == 0 || off < sym.st_size))
        p->function = gt_demangle(name);
    if (!lines)
        return;
    Dwfl_Line *line = dwfl_module_getsrc(m->dm, addr);
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (file && lineno > 0) {
        p->file = gt_xstrdup(file);
        p->line = lineno;
    }
}

/* ---------------------------------------------------------------- resolving */

static int module_for(const gt_symtab *st, uint64_t pc)
{
    int best = -1;
    for (size_t i = 0; i < st->nmods; i++) {
        const module *m = &st->mods[i];
        if (pc >= m->base && pc - m->base < m->size && (best < 0 || m->base > st->mods[best].base))
            best = (int)i; /* the highest base that covers pc: non-PIE executables start at 0 */
    }
    return best;
}

static int pc_cmp(const void *a, const void *b)
{
    const pc_info *x = a, *y = b;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static pc_info *find_pc(const gt_symtab *st, uint64_t pc)
{
    pc_info key = {.pc = pc};
    return bsearch(&key, st->pcs, st->npcs, sizeof *st->pcs, pc_cmp);
}

static void collect_pcs(gt_symtab *st)
{
    size_t total = 0;
    for (size_t i = 0; i < st->capstacks; i++)
        total += st->stacks[i].present ? st->stacks[i].depth : 0;
    for (size_t i = 0; i < st->npcs; i++) {
        free(st->pcs[i].function);
        free(st->pcs[i].file);
    }
    st->pcs = gt_xrealloc(st->pcs, (total ? total : 1) * sizeof *st->pcs);
    st->npcs = 0;
    for (size_t i = 0; i < st->capstacks; i++)
        for (uint32_t k = 0; st->stacks[i].present && k < st->stacks[i].depth; k++)
            st->pcs[st->npcs++] = (pc_info){.pc = st->stacks[i].pcs[k], .module = -1};
    qsort(st->pcs, st->npcs, sizeof *st->pcs, pc_cmp);
    size_t w = 0;
    for (size_t i = 0; i < st->npcs; i++)
        if (w == 0 || st->pcs[w - 1].pc != st->pcs[i].pc)
            st->pcs[w++] = st->pcs[i];
    st->npcs = w;
}

/* Names this machine could not give (module missing, replaced, stripped) from the run's symbol
 * archive, written where the modules were read. The module file, when it matches, comes first. */
static void fill_from_archive(gt_symtab *st)
{
    if (st->archive_off || !st->trace_dir)
        return;
    if (!st->archive_tried) {
        st->archive_tried = true;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", st->trace_dir, GT_SYMARCHIVE_NAME);
        if (access(path, F_OK) == 0)
            st->archive = gt_symarchive_load(path);
    }
    if (!st->archive)
        return;
    for (size_t mi = 0; mi < st->nmods; mi++)
        st->mods[mi].archive_module =
            gt_symarchive_module(st->archive, st->mods[mi].build_id_hex, st->mods[mi].path);
    for (size_t i = 0; i < st->npcs; i++) {
        pc_info *p = &st->pcs[i];
        if (p->module < 0 || (p->function && p->file))
            continue;
        const module *m = &st->mods[p->module];
        const char *function, *file;
        int line;
        if (!gt_symarchive_find(st->archive, m->archive_module, p->pc - m->base, &function, &file,
                                &line))
            continue;
        if (!p->function && function)
            p->function = gt_xstrdup(function);
        if (!p->file && file && line > 0) {
            p->file = gt_xstrdup(file);
            p->line = line;
        }
    }
}

static void resolve_all(gt_symtab *st)
{
    collect_pcs(st);
    bool lines = source_lines_wanted();
    for (size_t mi = 0; mi < st->nmods; mi++) {
        module *m = &st->mods[mi];
        for (size_t i = 0; i < st->npcs; i++) {
            pc_info *p = &st->pcs[i];
            if (p->module == -1)
                p->module = module_for(st, p->pc);
            if (p->module != (int)mi)
                continue;
            if (!m->loaded)
                load_module(m);
            if (m->dm)
                symbolize_pc(m, p, lines);
        }
        unload_module(m); /* names are copied: the module's file and tables are let go */
    }
    fill_from_archive(st);
    st->resolved = true;
}

/* ---------------------------------------------------------------- frames */

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

static bool is_interpreter_module(const char *path)
{
    const char *b = base_name(path);
    if (!b)
        return false;
    if (strncmp(b, "libpython", 9) == 0)
        return true;
    if (strncmp(b, "python", 6) != 0)
        return false;
    for (b += 6; *b; b++) /* python, python3, python3.11 */
        if ((*b < '0' || *b > '9') && *b != '.')
            return false;
    return true;
}

static void native_frame(const gt_symtab *st, uint64_t pc, gt_frame *f)
{
    memset(f, 0, sizeof *f);
    f->pc = pc;
    const pc_info *p = find_pc(st, pc);
    if (!p || p->module < 0)
        return;
    const module *m = &st->mods[p->module];
    f->module = m->path;
    f->build_id = m->build_id_hex[0] ? m->build_id_hex : NULL;
    f->module_offset = pc - m->base;
    f->function = p->function;
    f->file = p->file;
    f->line = p->line;
}

int gt_symbolize_stack(gt_symtab *st, uint32_t stack_id, gt_frame *out, int max)
{
    stack *s = get_stack(st, stack_id);
    if (!s || max <= 0)
        return 0;
    if (!st->resolved)
        resolve_all(st);
    int n = 0;
    bool py_done = s->py_depth == 0;
    for (uint32_t i = 0; i < s->depth && n < max; i++) {
        gt_frame f;
        native_frame(st, s->pcs[i], &f);
        if (!py_done && is_interpreter_module(f.module)) {
            /* The interpreter's eval loop starts here: the Python frames belong above it. */
            for (uint32_t k = 0; k < s->py_depth && n < max; k++)
                out[n++] = (gt_frame){.python = true,
                                      .file = s->py_file[k],
                                      .function = s->py_func[k],
                                      .line = s->py_line[k]};
            py_done = true;
        }
        if (n < max)
            out[n++] = f;
    }
    for (uint32_t k = 0; !py_done && k < s->py_depth && n < max; k++)
        out[n++] = (gt_frame){.python = true,
                              .file = s->py_file[k],
                              .function = s->py_func[k],
                              .line = s->py_line[k]};
    return n;
}

bool gt_symbolize_innermost_user_frame(gt_symtab *st, uint32_t stack_id, gt_frame *out)
{
    stack *s = get_stack(st, stack_id);
    if (!s)
        return false;
    for (uint32_t k = 0; k < s->py_depth; k++) {
        gt_frame py = {.python = true, .file = s->py_file[k]};
        if (gt_frame_kind(&py) == GT_CODE_USER) {
            *out = (gt_frame){.python = true,
                              .file = s->py_file[k],
                              .function = s->py_func[k],
                              .line = s->py_line[k]};
            return true;
        }
    }
    if (s->py_depth > 0) { /* only library frames: the innermost one still names the place */
        *out = (gt_frame){.python = true,
                          .file = s->py_file[0],
                          .function = s->py_func[0],
                          .line = s->py_line[0]};
        return true;
    }
    if (!st->resolved)
        resolve_all(st);
    for (uint32_t i = 0; i < s->depth; i++) {
        gt_frame f;
        native_frame(st, s->pcs[i], &f);
        if (f.module && gt_module_kind(f.module) == GT_CODE_USER) {
            *out = f;
            return true;
        }
    }
    return false;
}

/* The length of a function's name without the suffix GCC gives the copies it specializes
 * ("cuda_work.isra.0", "step.constprop.0", "run.part.0", "main.cold"): the user wrote "cuda_work".
 */
static int clone_free_len(const char *fn)
{
    static const char *const suffixes[] = {".isra.", ".constprop.", ".part.", ".cold"};
    size_t n = strlen(fn);
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        const char *at = strstr(fn, suffixes[i]);
        if (at && (size_t)(at - fn) < n && !strchr(at, '(') && !strchr(at, ' '))
            n = (size_t)(at - fn);
    }
    return (int)n;
}

size_t gt_frame_format(const gt_frame *f, char *buf, size_t cap)
{
    int n;
    if (f->python)
        n = snprintf(buf, cap, "%s:%d in %s", f->file ? base_name(f->file) : "?", f->line,
                     f->function ? f->function : "?");
    else if (f->function && f->file) /* as Python frames read: the line first */
        n = snprintf(buf, cap, "%s:%d in %.*s", base_name(f->file), f->line,
                     clone_free_len(f->function), f->function);
    else if (f->function)
        n = snprintf(buf, cap, "%.*s [%s]", clone_free_len(f->function), f->function,
                     f->module ? base_name(f->module) : "?");
    else if (f->module)
        n = snprintf(buf, cap, "[%s+0x%llx]", base_name(f->module),
                     (unsigned long long)f->module_offset);
    else
        n = snprintf(buf, cap, "[0x%llx]", (unsigned long long)f->pc);
    return n < 0 ? 0 : (size_t)n;
}

const char *gt_symtab_callsite(gt_symtab *st, uint32_t stack_id)
{
    stack *s = get_stack(st, stack_id);
    if (!s)
        return NULL;
    if (!s->callsite_done) {
        s->callsite_done = true;
        char buf[1024];
        gt_frame f;
        if (gt_symbolize_innermost_user_frame(st, stack_id, &f)) { /* Python needs no resolving */
            gt_frame_format(&f, buf, sizeof buf);
            s->callsite = gt_xstrdup(buf);
        } else { /* no user frame: callsite.c picks the library frame nearest to one */
            int max = (int)(s->depth + s->py_depth);
            gt_frame *fr = gt_xcalloc((size_t)max, sizeof *fr);
            int n = gt_symbolize_stack(st, stack_id, fr, max);
            bool user;
            int i = gt_callsite_pick(fr, n, &user);
            if (i >= 0) {
                gt_frame_format(&fr[i], buf, sizeof buf);
                s->callsite = gt_xstrdup(buf);
            }
            free(fr);
        }
    }
    return s->callsite;
}

void gt_symtab_each_native_frame(gt_symtab *st, void (*visit)(void *ctx, const gt_frame *f),
                                 void *ctx)
{
    if (!st->resolved)
        resolve_all(st);
    for (size_t i = 0; i < st->npcs; i++) {
        gt_frame f;
        native_frame(st, st->pcs[i].pc, &f);
        if (f.module)
            visit(ctx, &f);
    }
}
