/* gt_check.h — the assertion of the C tests: a failed check is printed with its place and
 * counted, never aborts, so one run shows every failure. Each test is one translation unit:
 * `failures` is that file's count, its main returns non-zero when it is. */
#ifndef GT_CHECK_H
#define GT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
