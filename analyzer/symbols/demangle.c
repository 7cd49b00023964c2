/* demangle.c — C access to the C++ runtime's demangler (libstdc++ is linked into the analyzer). */
#include "demangle.h"

#include <stdlib.h>
#include <string.h>

/* abi::__cxa_demangle, declared here so this file stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *gt_demangle(const char *mangled)
{
    if (!mangled)
        return NULL;
    /* Only names that start like an Itanium mangled name go to the demangler: it would also
     * "demangle" plain words that happen to be valid type encodings (e.g. "i" -> "int"). */
    if (mangled[0] == '_' && mangled[1] == 'Z') {
        int status = -1;
        char *out = __cxa_demangle(mangled, NULL, NULL, &status);
        if (status == 0 && out)
            return out;
        free(out);
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
