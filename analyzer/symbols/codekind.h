/* codekind.h — whose code a frame is (the user's, a framework's, CUDA's, the runtime's), and which
 * frame of a stack advice points at. Reads frames only (frame.h), so the symbolizer can use it to
 * choose a stack's call site while callsite.h, which walks the symbolizer's stacks, builds on both.
 */
#ifndef GT_CODEKIND_H
#define GT_CODEKIND_H

#include <stdbool.h>

#include "frame.h"

typedef enum gt_code_kind {
    GT_CODE_USER,      /* the program's own code */
    GT_CODE_FRAMEWORK, /* PyTorch, what site-packages or /usr/lib hold, library Python files */
    GT_CODE_CUDA,      /* libcudart, libcuda, libcudnn*, libcublas*, libnv*, libcupti, libnccl... */
    GT_CODE_RUNTIME,   /* the interpreter, the C/C++ runtime, libffi/_ctypes, libgomp */
    GT_CODE_UNKNOWN,   /* no module holds the pc (generated code) */
    GT_CODE_GPUTRACE,  /* libgputrace.so itself: never shown */
} gt_code_kind;

/* Kind of a module, by its file name (path may be NULL: GT_CODE_UNKNOWN). */
gt_code_kind gt_module_kind(const char *path);
/* Kind of a frame: a Python frame is USER or FRAMEWORK by its file, a native one by its module. */
gt_code_kind gt_frame_kind(const gt_frame *f);

/* Index of the frame advice points at among frames[0..n) (innermost first, as gt_symbolize_stack
 * gives them): the innermost user Python frame, else the innermost Python frame, else the
 * innermost native user frame, else the innermost framework frame, then CUDA, then runtime, then
 * any frame. *is_user says whether it is the user's code. -1 when n is 0. */
int gt_callsite_pick(const gt_frame *frames, int n, bool *is_user);

#endif
