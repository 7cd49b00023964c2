/* stacks_internal.h — shared between stacks.c (native frames, interning, modules) and
 * stacks_python.c (frames of the CPython interpreter running in the process). Not a contract. */
#ifndef GT_STACKS_INTERNAL_H
#define GT_STACKS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* One Python frame as stored after the native pcs of a GT_REC_STACK record. */
typedef struct gt_py_frame {
    uint32_t file_id; /* interned co_filename */
    uint32_t func_id; /* interned co_qualname (co_name before 3.11) */
    int32_t line;
    uint32_t pad;
} gt_py_frame;

/* Resolve the CPython C API with dlsym(RTLD_DEFAULT); false when no interpreter is in the process.
 * Cheap to call again (after a dlopen may have brought libpython in). */
bool gt_py_resolve(void);
/* Fill out[0..max) with the calling thread's Python frames, innermost first. Returns the count
 * (0 outside Python); *truncated is set when more frames existed. No allocation by us, no Python
 * import. */
int gt_py_capture(gt_py_frame *out, int max, bool *truncated);
/* false: Python frames only when the thread holds the GIL (GPUTRACE_STACK_PYTHON=gil). */
void gt_py_allow_without_gil(bool allow);
/* The return addresses above the caller, innermost first, through the DWARF CFI of each frame
 * (cached per pc); -1 when a frame's CFI is not understood (then use another unwinder). */
int gt_unwind_cfi(void **pcs, int max);

/* Mix a cheap identity of the calling thread's Python frames (code objects and instruction
 * pointers, at most max frames) into *h, for the call-site cache. False: cannot key them. */
bool gt_py_key(uint64_t *h, int max);

/* In a forked child: forget cached string ids (the child writes a new file). */
void gt_py_forget(void);

#endif
