/* stacks_python.c — the calling thread's Python frames (file, function, line), innermost first.
 *
 * Two readers, both using only what is already in the process (dlsym(RTLD_DEFAULT); nothing linked,
 * nothing imported, nothing allocated by us):
 *
 *  1. With the GIL held (PyGILState_Check): the CPython C API. The frame accessors return new
 *     references, released with Py_DecRef; CPython may allocate inside them (3.11+ materialises
 *     frame objects).
 *  2. Without the GIL: most calls that reach a CUDA wrapper from Python come without it
 * (ctypes.CDLL, and PyTorch releases the GIL around its operators: loss.item() reaches
 * cudaMemcpyAsync and cudaStreamSynchronize GIL-free). The C API is off limits then, so the
 * thread's own frame chain is read directly from CPython's structures, for the versions whose
 * layout we know (3.10-3.13, default builds, offsets checked against each version's headers). This
 * is safe for the calling thread's own frames: only this thread links and unlinks them and it is
 * inside our wrapper; the code objects and names are kept alive by those frames; no reference count
 * is touched. Line numbers come from PyCode_Addr2Line, which only reads the code object. The first
 *     walk in the process is done with process_vm_readv (a bad address gives EFAULT, not a crash)
 *     and checks every code object's and name's type: if anything does not match, the layout is
 *     wrong for this interpreter and reader 2 is turned off for the process.
 *
 * Names are interned once per code object: a direct-mapped cache keyed by the code pointer. Each
 * entry keeps a reference to its code object so the address cannot be reused by another code object
 * while the entry lives; the GIL serialises every access to the cache. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "gt_core.h"
#include "stacks_internal.h"

#define GT_PY_CODE_CACHE 4096u /* power of two */

typedef struct py_api {
    int (*IsInitialized)(void);
    int (*GILState_Check)(void);
    void *(*ThreadState_Unchecked)(void);
    void *(*ThreadState_GetFrame)(void *tstate);
    void *(*Frame_GetBack)(void *frame);
    void *(*Frame_GetCode)(void *frame);
    int (*Frame_GetLineNumber)(void *frame);
    void (*IncRef)(void *o);
    void (*DecRef)(void *o);
    void *(*GetAttrString)(void *o, const char *name);
    const char *(*AsUTF8AndSize)(void *o, ssize_t *size);
    void (*Err_Fetch)(void **type, void **value, void **tb);
    void (*Err_Restore)(void *type, void *value, void *tb);
    /* reader 2 */
    void *(*GILState_GetThisThreadState)(void);
    int (*Code_Addr2Line)(void *code, int byte_offset);
    const char *(*GetVersion)(void);
    void *Code_Type;
    void *Unicode_Type;
} py_api;

static py_api g_py;
static bool g_py_ok;

typedef struct code_entry {
    void *code; /* strong reference */
    uint32_t file_id;
    uint32_t func_id;
} code_entry;
static code_entry g_code_cache[GT_PY_CODE_CACHE];

/* ---------------------------------------------------------------- reader 2: without the GIL */

#define NO_FIELD ((size_t)-1)
#define OWNED_BY_CSTACK 3 /* 3.12+: a shim frame of the C stack, not Python code */

typedef struct py_layout { /* offsets in CPython's structures, x86-64, default (GIL) builds */
    int minor;
    bool frame_objects;  /* 3.10: a chain of PyFrameObject with f_lasti */
    size_t ts_cframe;    /* PyThreadState.cframe (3.11, 3.12) */
    size_t cframe_frame; /* _PyCFrame.current_frame */
    size_t ts_frame;     /* PyThreadState.frame (3.10) / .current_frame (3.13) */
    size_t fr_code;      /* f_code / f_executable */
    size_t fr_back;      /* f_back / previous */
    size_t fr_instr;     /* f_lasti (int, 3.10) / prev_instr (3.11, 3.12) / instr_ptr (3.13) */
    size_t fr_owner;
    size_t co_filename, co_name, co_adaptive; /* co_name: co_qualname from 3.11 */
    size_t ascii_size; /* sizeof(PyASCIIObject): compact ASCII data follows it */
} py_layout;

static const py_layout g_layouts[] = {
    {10, true, NO_FIELD, 0, 24, 32, 24, 96, NO_FIELD, 104, 112, 0, 48},
    {11, false, 56, 8, NO_FIELD, 32, 48, 56, 69, 112, 128, 184, 48},
    {12, false, 56, 0, NO_FIELD, 0, 8, 56, 70, 112, 128, 192, 40},
    {13, false, NO_FIELD, 0, 72, 0, 8, 56, 70, 112, 128, 200, 40},
};

static const py_layout *g_layout; /* NULL: reader 2 unavailable */
static bool g_raw_allowed = true;
static _Atomic int g_raw_state; /* 0 = not verified yet, 1 = verified, 2 = off */

typedef bool (*mem_reader)(const void *addr, void *dst, size_t n);

static bool read_direct(const void *addr, void *dst, size_t n)
{
    memcpy(dst, addr, n);
    return true;
}

static __thread int t_check_pipe[2] = {-1, -1};

/* A read that fails on a bad address instead of crashing: process_vm_readv, or where a seccomp
 * policy forbids it (containers), a write of the bytes into a pipe (EFAULT on a bad address). */
static bool read_checked(const void *addr, void *dst, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)addr, n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got == (ssize_t)n)
        return true;
    if (got >= 0 || errno == EFAULT || t_check_pipe[0] < 0 || n > 4096)
        return false;
    if (write(t_check_pipe[1], addr, n) != (ssize_t)n)
        return false;
    return read(t_check_pipe[0], dst, n) == (ssize_t)n;
}

static bool read_ptr(mem_reader rd, const void *base, size_t off, void **out)
{
    if (!base || ((uintptr_t)base & 7u))
        return false;
    return rd((const char *)base + off, out, sizeof *out);
}

static void choose_layout(void)
{
    g_layout = NULL;
    if (!g_py.GILState_GetThisThreadState || !g_py.Code_Addr2Line || !g_py.GetVersion ||
        !g_py.Code_Type || !g_py.Unicode_Type)
        return;
    const char *v = g_py.GetVersion(); /* "3.12.3 (main, ...) [GCC ...]": a static string */
    if (!v || strstr(v, "free-threading"))
        return; /* free-threaded builds lay objects out differently */
    int major = 0, minor = 0;
    if (sscanf(v, "%d.%d", &major, &minor) != 2 || major != 3)
        return;
    for (size_t i = 0; i < sizeof g_layouts / sizeof g_layouts[0]; i++)
        if (g_layouts[i].minor == minor)
            g_layout = &g_layouts[i];
}

void gt_py_allow_without_gil(bool allow)
{
    g_raw_allowed = allow;
}

/* The thread's innermost frame into *frame (NULL: no Python running). False when unreadable. */
static bool first_frame(mem_reader rd, void *tstate, void **frame)
{
    const py_layout *L = g_layout;
    *frame = NULL;
    if (L->ts_frame != NO_FIELD)
        return read_ptr(rd, tstate, L->ts_frame, frame);
    void *cframe = NULL;
    if (!read_ptr(rd, tstate, L->ts_cframe, &cframe))
        return false;
    return !cframe || read_ptr(rd, cframe, L->cframe_frame, frame);
}

/* Byte offset of the instruction being executed, for PyCode_Addr2Line; -1 when unknown. */
static int instr_offset(mem_reader rd, void *frame, void *code)
{
    const py_layout *L = g_layout;
    if (L->frame_objects) {
        int lasti = -1;
        if (!rd((const char *)frame + L->fr_instr, &lasti, sizeof lasti))
            return -1;
        return lasti < 0 ? -1 : lasti * 2;
    }
    void *instr = NULL;
    if (!read_ptr(rd, frame, L->fr_instr, &instr) || !instr)
        return -1;
    intptr_t off = (const char *)instr - ((const char *)code + L->co_adaptive);
    return off < 0 || off > (1 << 28) ? -1 : (int)off;
}

typedef struct raw_name_entry { /* per thread: no lock; keyed by code and offset */
    void *code;
    void *filename, *name; /* the string objects the ids were made from */
    int offset;
    int32_t line;
    uint32_t file_id, func_id;
} raw_name_entry;
#define RAW_CACHE 256u
/* The cache lives outside TLS: libgputrace.so has initial-exec TLS, so all of its TLS must fit
 * the loader's small static surplus when it is dlopen'ed (CUDA_INJECTION64_PATH). */
static __thread raw_name_entry *t_raw_cache;
static __thread unsigned t_raw_generation;
static pthread_key_t g_raw_cache_key;
static pthread_once_t g_raw_cache_once = PTHREAD_ONCE_INIT;

static void raw_cache_free(void *p)
{
    munmap(p, RAW_CACHE * sizeof(raw_name_entry));
}

static void raw_cache_key_init(void)
{
    pthread_key_create(&g_raw_cache_key, raw_cache_free);
}

/* This thread's cache, mapped (zeroed) on its first walk and unmapped when it exits. */
static raw_name_entry *raw_cache_get(void)
{
    if (t_raw_cache)
        return t_raw_cache;
    void *p = mmap(NULL, RAW_CACHE * sizeof(raw_name_entry), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    pthread_once(&g_raw_cache_once, raw_cache_key_init);
    pthread_setspecific(g_raw_cache_key, p);
    t_raw_cache = p;
    return p;
}
static unsigned g_raw_generation; /* bumped after fork: the ids belong to the parent's file */

static uint32_t intern_unicode(mem_reader rd, void *s)
{
    void *type = NULL;
    if (!read_ptr(rd, s, 8, &type) || type != g_py.Unicode_Type)
        return 0;
    uint64_t length = 0;
    uint32_t state = 0;
    if (!rd((const char *)s + 16, &length, sizeof length) ||
        !rd((const char *)s + 32, &state, sizeof state))
        return 0;
    bool compact = (state >> 5) & 1u, ascii = (state >> 6) & 1u;
    char buf[512];
    if (compact && ascii) {
        size_t n = length < sizeof buf ? (size_t)length : sizeof buf;
        if (!rd((const char *)s + g_layout->ascii_size, buf, n))
            return 0;
        return gt_intern_n(buf, n);
    }
    void *utf8 = NULL; /* compact, not ASCII: the UTF-8 copy, when CPython made one */
    uint64_t utf8_len = 0;
    if (compact && read_ptr(rd, s, g_layout->ascii_size + 8, &utf8) && utf8 &&
        rd((const char *)s + g_layout->ascii_size, &utf8_len, sizeof utf8_len)) {
        size_t n = utf8_len < sizeof buf ? (size_t)utf8_len : sizeof buf;
        if (rd(utf8, buf, n))
            return gt_intern_n(buf, n);
    }
    return gt_intern("<non-ASCII name>");
}

/* One frame's names and line, from the thread's cache or read now. False: the layout does not
 * hold here (not a code object, not a string). */
static bool raw_frame(mem_reader rd, raw_name_entry *cache, void *frame, void *code,
                      gt_py_frame *out)
{
    const py_layout *L = g_layout;
    void *filename = NULL, *name = NULL;
    if (!read_ptr(rd, code, L->co_filename, &filename) || !read_ptr(rd, code, L->co_name, &name))
        return false;
    int off = instr_offset(rd, frame, code);
    uintptr_t key = (uintptr_t)code ^ ((uintptr_t)off * 0x9e3779b1u);
    raw_name_entry *e = &cache[(key >> 3 ^ key >> 13) & (RAW_CACHE - 1)];
    if (!(e->code == code && e->offset == off && e->filename == filename && e->name == name &&
          e->file_id)) {
        uint32_t file_id = intern_unicode(rd, filename);
        uint32_t func_id = intern_unicode(rd, name);
        if (!file_id || !func_id)
            return false;
        *e = (raw_name_entry){code,    filename, name, off, g_py.Code_Addr2Line(code, off),
                              file_id, func_id};
    }
    *out = (gt_py_frame){e->file_id, e->func_id, e->line, 0};
    return true;
}

/* Walk the thread's frames with rd. Returns the count, or -1 when the layout does not hold. */
static int raw_walk(mem_reader rd, gt_py_frame *out, int max, bool *truncated)
{
    const py_layout *L = g_layout;
    void *tstate = g_py.GILState_GetThisThreadState();
    if (!tstate)
        return 0;
    raw_name_entry *cache = raw_cache_get(); /* one TLS look-up per walk, not per frame */
    if (!cache)
        return 0;
    if (t_raw_generation != g_raw_generation) {
        memset(cache, 0, RAW_CACHE * sizeof *cache);
        t_raw_generation = g_raw_generation;
    }
    int n = 0;
    void *frame;
    if (!first_frame(rd, tstate, &frame))
        return -1;
    for (int guard = 0; frame && guard < 4096; guard++) {
        char owner = 0;
        if (L->fr_owner != NO_FIELD && !rd((const char *)frame + L->fr_owner, &owner, 1))
            return -1;
        void *code = NULL, *type = NULL;
        if (!read_ptr(rd, frame, L->fr_code, &code))
            return -1;
        if (owner != OWNED_BY_CSTACK) {
            if (!read_ptr(rd, code, 8, &type) || type != g_py.Code_Type)
                return -1;
            if (n == max) {
                *truncated = true;
                break;
            }
            if (!raw_frame(rd, cache, frame, code, &out[n]))
                return -1;
            n++;
        }
        if (!read_ptr(rd, frame, L->fr_back, &frame))
            return -1;
    }
    return n;
}

static int capture_without_gil(gt_py_frame *out, int max, bool *truncated)
{
    int state = atomic_load_explicit(&g_raw_state, memory_order_acquire);
    if (!g_layout || !g_raw_allowed || state == 2)
        return 0;
    if (state == 0) {
        /* First walk in the process: every read checked, every object's type checked. Threads
         * racing here each verify; the first verdict wins. */
        if (pipe2(t_check_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
            t_check_pipe[0] = t_check_pipe[1] = -1;
        int n = raw_walk(read_checked, out, max, truncated);
        if (t_check_pipe[0] >= 0) {
            close(t_check_pipe[0]);
            close(t_check_pipe[1]);
            t_check_pipe[0] = t_check_pipe[1] = -1;
        }
        int expected = 0; /* no frame seen: nothing verified yet, check again next time */
        if (n != 0)
            atomic_compare_exchange_strong(&g_raw_state, &expected, n < 0 ? 2 : 1);
        if (n < 0) {
            gt_debug("stacks: Python %d.%d frames without the GIL: layout check failed, off", 3,
                     g_layout->minor);
            return 0;
        }
        return n;
    }
    int n = raw_walk(read_direct, out, max, truncated);
    return n < 0 ? 0 : n;
}

static void *sym(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

bool gt_py_resolve(void)
{
    if (g_py_ok)
        return true;
    py_api a;
    memset(&a, 0, sizeof a);
    *(void **)&a.IsInitialized = sym("Py_IsInitialized");
    *(void **)&a.GILState_Check = sym("PyGILState_Check");
    *(void **)&a.ThreadState_Unchecked = sym("PyThreadState_GetUnchecked"); /* 3.13 */
    if (!a.ThreadState_Unchecked)
        *(void **)&a.ThreadState_Unchecked = sym("_PyThreadState_UncheckedGet");
    *(void **)&a.ThreadState_GetFrame = sym("PyThreadState_GetFrame"); /* 3.9+ */
    *(void **)&a.Frame_GetBack = sym("PyFrame_GetBack");
    *(void **)&a.Frame_GetCode = sym("PyFrame_GetCode");
    *(void **)&a.Frame_GetLineNumber = sym("PyFrame_GetLineNumber");
    *(void **)&a.IncRef = sym("Py_IncRef");
    *(void **)&a.DecRef = sym("Py_DecRef");
    *(void **)&a.GetAttrString = sym("PyObject_GetAttrString");
    *(void **)&a.AsUTF8AndSize = sym("PyUnicode_AsUTF8AndSize");
    *(void **)&a.Err_Fetch = sym("PyErr_Fetch");
    *(void **)&a.Err_Restore = sym("PyErr_Restore");
    void **all = (void **)&a;
    for (size_t i = 0; i < offsetof(py_api, GILState_GetThisThreadState) / sizeof(void *); i++)
        if (!all[i])
            return false; /* no interpreter here, or one older than 3.9 */
    *(void **)&a.GILState_GetThisThreadState = sym("PyGILState_GetThisThreadState");
    *(void **)&a.Code_Addr2Line = sym("PyCode_Addr2Line");
    *(void **)&a.GetVersion = sym("Py_GetVersion");
    a.Code_Type = sym("PyCode_Type");
    a.Unicode_Type = sym("PyUnicode_Type");
    g_py = a;
    choose_layout();
    __atomic_store_n(&g_py_ok, true, __ATOMIC_RELEASE);
    gt_debug("stacks: Python frames through the CPython C API");
    return true;
}

void gt_py_forget(void)
{
    g_raw_generation++;
    /* The child keeps the references (dropping them would need the GIL); only the ids go. */
    for (size_t i = 0; i < GT_PY_CODE_CACHE; i++) {
        g_code_cache[i].file_id = 0;
        g_code_cache[i].func_id = 0;
    }
}

static uint32_t intern_attr(void *code, const char *attr)
{
    void *s = g_py.GetAttrString(code, attr);
    if (!s)
        return 0;
    ssize_t len = 0;
    const char *utf8 = g_py.AsUTF8AndSize(s, &len);
    uint32_t id = utf8 ? gt_intern_n(utf8, (size_t)len) : 0;
    g_py.DecRef(s);
    return id;
}

static const code_entry *code_names(void *code)
{
    uintptr_t key = (uintptr_t)code;
    code_entry *e = &g_code_cache[(key >> 4 ^ key >> 16) & (GT_PY_CODE_CACHE - 1)];
    if (e->code == code && e->file_id != 0)
        return e;
    /* A miss calls into Python: keep any exception the application has pending intact. */
    void *type, *value, *tb;
    g_py.Err_Fetch(&type, &value, &tb);
    uint32_t file_id = intern_attr(code, "co_filename");
    uint32_t func_id = intern_attr(code, "co_qualname"); /* 3.11+ */
    if (func_id == 0) {
        void *t2, *v2, *tb2;
        g_py.Err_Fetch(&t2, &v2, &tb2); /* drop the AttributeError of older versions */
        if (t2)
            g_py.DecRef(t2);
        if (v2)
            g_py.DecRef(v2);
        if (tb2)
            g_py.DecRef(tb2);
        func_id = intern_attr(code, "co_name");
    }
    void *t3, *v3, *tb3;
    g_py.Err_Fetch(&t3, &v3, &tb3);
    if (t3)
        g_py.DecRef(t3);
    if (v3)
        g_py.DecRef(v3);
    if (tb3)
        g_py.DecRef(tb3);
    g_py.Err_Restore(type, value, tb);
    if (file_id == 0)
        return NULL;
    if (e->code != code) {
        g_py.IncRef(code);
        if (e->code)
            g_py.DecRef(e->code);
        e->code = code;
    }
    e->file_id = file_id;
    e->func_id = func_id;
    return e;
}

int gt_py_capture(gt_py_frame *out, int max, bool *truncated)
{
    *truncated = false;
    if (!__atomic_load_n(&g_py_ok, __ATOMIC_ACQUIRE) || !g_py.IsInitialized())
        return 0;
    if (g_py.GILState_Check() != 1)
        return capture_without_gil(out, max, truncated);
    void *tstate = g_py.ThreadState_Unchecked();
    if (!tstate)
        return 0;
    void *frame = g_py.ThreadState_GetFrame(tstate);
    int n = 0;
    while (frame) {
        if (n == max) {
            *truncated = true;
            g_py.DecRef(frame);
            break;
        }
        void *code = g_py.Frame_GetCode(frame);
        if (code) {
            const code_entry *names = code_names(code);
            if (names) {
                out[n].file_id = names->file_id;
                out[n].func_id = names->func_id;
                out[n].line = g_py.Frame_GetLineNumber(frame);
                out[n].pad = 0;
                n++;
            }
            g_py.DecRef(code);
        }
        void *back = g_py.Frame_GetBack(frame);
        g_py.DecRef(frame);
        frame = back;
    }
    return n;
}

/* ---------------------------------------------------------------- call-site cache key */

static uint64_t key_mix(uint64_t h, uint64_t w)
{
    return (h ^ w) * 0x100000001b3ull + (h >> 29); /* one multiply: many words per frame */
}

/* Mix the identity of the calling thread's Python frames (up to max) into *h without interning
 * or line look-ups: per frame its code object, instruction pointer and the name objects (so a code
 * object freed and another allocated at its address with other names does not match). A few loads
 * per frame, read directly: only after the layout was verified (see capture_without_gil). False
 * when the frames cannot be keyed this way (then the caller takes a full capture). */
bool gt_py_key(uint64_t *h, int max)
{
    if (!__atomic_load_n(&g_py_ok, __ATOMIC_ACQUIRE) || !g_py.IsInitialized())
        return true; /* no Python: the native part is the whole key */
    if (!g_layout || !g_raw_allowed)
        return false;
    int state = atomic_load_explicit(&g_raw_state, memory_order_acquire);
    if (state == 0 && g_py.GILState_Check() == 1) {
        gt_py_frame scratch[8]; /* verify the layout once, as a GIL-free capture would */
        bool t;
        capture_without_gil(scratch, 8, &t);
        state = atomic_load_explicit(&g_raw_state, memory_order_acquire);
    }
    if (state != 1)
        return false;
    const py_layout *L = g_layout;
    void *tstate = g_py.GILState_GetThisThreadState();
    if (!tstate)
        return true;
    void *frame;
    if (!first_frame(read_direct, tstate, &frame))
        return false;
    int n = 0;
    for (int guard = 0; frame && guard < 4096 && n < max; guard++) {
        char owner = L->fr_owner != NO_FIELD ? *((const char *)frame + L->fr_owner) : 0;
        void *code = *(void *const *)((const char *)frame + L->fr_code);
        if (owner != OWNED_BY_CSTACK && code) {
            uint64_t instr =
                L->frame_objects
                    ? (uint64_t) * (const int *)((const char *)frame + L->fr_instr)
                    : (uint64_t)(uintptr_t) * (void *const *)((const char *)frame + L->fr_instr);
            *h = key_mix(*h, (uint64_t)(uintptr_t)code);
            *h = key_mix(*h, instr);
            *h = key_mix(*h, (uint64_t)(uintptr_t) *
                                 (void *const *)((const char *)code + L->co_filename));
            *h = key_mix(*h,
                         (uint64_t)(uintptr_t) * (void *const *)((const char *)code + L->co_name));
            n++;
        }
        frame = *(void *const *)((const char *)frame + L->fr_back);
    }
    *h = key_mix(*h, (uint64_t)n);
    return true;
}
