/* demangle.h — readable kernel names from the mangled names CUPTI and the launch wrappers record.
 */
#ifndef GT_DEMANGLE_H
#define GT_DEMANGLE_H

#include <stddef.h>

/* Demangle an Itanium C++ name (with libiberty, demangle.c says why). Returns a malloc'd string the
 * caller frees: the demangled name, or a copy of the input when it is not a mangled name (C
 * kernels, already readable names). NULL input gives NULL. */
char *gt_demangle(const char *mangled);

/* Same, into buf (always NUL-terminated, cut to cap-1 bytes). Returns buf. */
const char *gt_demangle_into(const char *mangled, char *buf, size_t cap);

#endif
