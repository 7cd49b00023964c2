/* callsite.h — which frame of a stack advice points at, and the library frames under it.
 *
 * Advice names the first frame in the user's own code: a Python line outside site-packages and
 * the standard library, or the application's binary (or its own libraries). A stack with no such
 * frame (PyTorch's autograd thread, XLA's threads, a DataLoader pin-memory thread) still gets a
 * place: the library frame nearest to the user's code — the framework's frame that called CUDA
 * before the CUDA library's own frames — shown by name, or as module+offset when this machine
 * has no names for it, never as a bare address when a module holds it. */
#ifndef GT_CALLSITE_H
#define GT_CALLSITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

/* The call site of stack_id followed by the frames under it, outermost first, one a line:
 *     train.py:57 in train_step
 *     <indent>_tensor.py:1226 in item
 *     <indent>at::native::_local_scalar_dense_cuda(at::Tensor const&) [libtorch_cuda.so]
 *     <indent>cudaMemcpyAsync [libcudart.so.13]
 * gputrace's frames and the runtime's (interpreter, libc) are left out; a run of frames of one
 * module without names takes one line ("[libfoo.so+0x12] +3 more"); at most max_under lines under
 * the site, then "<indent>...". Writes at most cap bytes (NUL included) and returns the length
 * written; 0 for a stack with no frames. */
size_t gt_callsite_chain(gt_symtab *st, uint32_t stack_id, int max_under, const char *indent,
                         char *buf, size_t cap);

#endif
