/* demangle.c — readable C++ names through libiberty's demangler (Debian's libiberty-dev), the one
 * binutils and gdb use. Why not abi::__cxa_demangle: it refuses any name over ~1,000 characters
 * (its recursion guard counts the name's length), and cuDNN's CUTLASS kernels are longer
 * ("_ZN17cutlass__5x_cudnn6KernelINS_4conv6kernel23ImplicitGemmConvolution...", 1,675
 * characters in tests/data/resnet18_queued.gtrace), so they stayed mangled beside demangled ones.
 */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

/* Names this long are demangled without libiberty's recursion guard: its depth is bounded by the
 * name's length, and 16 KB of the deepest nesting demangles within the stack under ASan. Longer
 * ones (none seen) keep the guard. */
#define UNGUARDED_MAX 16384

char *gt_demangle(const char *mangled)
{
    if (!mangled)
        return NULL;
    /* Only names that start like an Itanium mangled name go to the demangler: it would also
     * "demangle" plain words that happen to be valid type encodings (e.g. "i" -> "int"). */
    if (mangled[0] == '_' && mangled[1] == 'Z') {
        int opts = DMGL_PARAMS | DMGL_ANSI;
        if (strlen(mangled) <= UNGUARDED_MAX)
            opts |= DMGL_NO_RECURSE_LIMIT;
        char *out = cplus_demangle(mangled, opts);
        if (out)
            return out;
    }
    return strdup(mangled);
}

const char *gt_demangle_into(const char *mangled, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    char *d = gt_demangle(mangled ? mangled : "");
    if (!d) {
        buf[0] = 0;
        return buf;
    }
    size_t n = strlen(d);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, d, n);
    buf[n] = 0;
    free(d);
    return buf;
}
