/* frame.h — one frame of a call-site stack, as the symbolizer gives it (symbolize.h) and the
 * call-site choice reads it (codekind.h). A type of its own so that neither needs the other. */
#ifndef GT_FRAME_H
#define GT_FRAME_H

#include <stdbool.h>
#include <stdint.h>

typedef struct gt_frame {
    bool python;            /* a Python frame: file, function, line are set */
    uint64_t pc;            /* native: the return address as recorded */
    const char *module;     /* native: path of the module, NULL when no module holds pc */
    const char *build_id;   /* native: the module's GNU build-id in hex, NULL when none recorded */
    uint64_t module_offset; /* native: pc minus the module's load address (its ELF address) */
    const char *function;   /* demangled, NULL when unknown (stripped, no symbol) */
    const char *file;       /* source file, NULL when unknown */
    int line;               /* 0 when unknown */
} gt_frame;

#endif
