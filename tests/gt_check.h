/* gt_check.h — the one assertion of the C tests: a failed check is printed with its place, its
 * condition and a message, and counted; it never aborts, so one run shows every failure. A test
 * of one translation unit counts in `failures` (defined here); a test binary of several files
 * defines GT_CHECK_COUNTER to its shared counter before including this. main returns non-zero
 * when the count is. */
#ifndef GT_CHECK_H
#define GT_CHECK_H

#include <stdio.h>

#ifndef GT_CHECK_COUNTER
static int failures;
#define GT_CHECK_COUNTER failures
#endif

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: (%s) ", __FILE__, __LINE__, #cond);                       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            GT_CHECK_COUNTER++;                                                                    \
        }                                                                                          \
    } while (0)

#endif
