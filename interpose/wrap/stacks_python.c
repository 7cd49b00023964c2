/* stacks_python.c — the calling thread's Python frames, read through the CPython C API that is
 * already in the process (found with dlsym(RTLD_DEFAULT); nothing is linked, nothing imported).
 *
 * Only when the thread holds the GIL (PyGILState_Check): the C API is not safe otherwise. The frame
 * accessors return new references, released with Py_DecRef. CPython may allocate inside them (3.11+
 * materialises frame objects); we allocate nothing.
 *
 * Names are interned once per code object: a direct-mapped cache keyed by the code pointer. Each
 * entry keeps a reference to its code object so the address cannot be reused by another code object
 * while the entry lives; the GIL serialises every access to the cache. */
#include <dlfcn.h>
#include <stdbool.h>
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
} py_api;

static py_api g_py;
static bool g_py_ok;

typedef struct code_entry {
    void *code; /* strong reference */
    uint32_t file_id;
    uint32_t func_id;
} code_entry;
static code_entry g_code_cache[GT_PY_CODE_CACHE];

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
    for (size_t i = 0; i < sizeof a / sizeof(void *); i++)
        if (!all[i])
            return false; /* no interpreter here, or one older than 3.9 */
    g_py = a;
    __atomic_store_n(&g_py_ok, true, __ATOMIC_RELEASE);
    gt_debug("stacks: Python frames through the CPython C API");
    return true;
}

void gt_py_forget(void)
{
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
    if (!__atomic_load_n(&g_py_ok, __ATOMIC_ACQUIRE) || !g_py.IsInitialized() ||
        g_py.GILState_Check() != 1)
        return 0;
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
