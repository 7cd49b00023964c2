/* core_tests.h — what the files of the core test binary share: the check macro, the child
 * harness (core_tests.c), and the entry points of the clock tests (core_clock_tests.c) and the
 * reader tests (core_reader_tests.c). */
#ifndef CORE_TESTS_H
#define CORE_TESTS_H

#include <stdio.h>
#include <sys/types.h>

extern int g_failures;
#define GT_CHECK_COUNTER g_failures
#include "../gt_check.h"

typedef struct child_result {
    int status;
    pid_t pid;
    char out[4096];
    char err[16384];
} child_result;

extern char g_tmp[256];
/* Run `core_tests child MODE` with GPUTRACE_DIR=dir and the extra NAME=VALUE variables. */
void run_child(const char *mode, const char *const *env_extra, const char *dir, child_result *r);
int exited_with(const child_result *r, int code);
char *make_dir(const char *name); /* a folder under g_tmp (static storage) */
/* Paths of the .gtrace files in dir; returns how many (at most max). */
int list_traces(const char *dir, char out[][512], int max);

/* core_reader_tests.c */
void test_truncation(void);
void test_corruption(void);

/* core_clock_tests.c: child modes and tests of the TSC clock (interpose/core/clock.c). */
int child_clock(void);
int child_clock_slew(void);
int child_clock_fork(void);
void test_clock(void);
void test_clock_settings(void);
void test_clock_slew(void);
void test_clock_fork(void);

#endif
