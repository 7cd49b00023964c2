/* test_report_util.h — run a subcommand with stdout captured into a file, for report/diff tests. */
#ifndef TEST_REPORT_UTIL_H
#define TEST_REPORT_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Run fn(argc, argv) with stdout (and stderr when err_too) sent to out_path; returns its status. */
static inline int run_captured(int (*fn)(int, char **), int argc, char **argv, const char *out_path)
{
    fflush(stdout);
    int saved = dup(1);
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (saved < 0 || fd < 0)
        return -1;
    dup2(fd, 1);
    close(fd);
    int rc = fn(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

#endif
