/* test_report_util.h — run a subcommand with stdout captured into a file, for report/diff tests. */
#ifndef TEST_REPORT_UTIL_H
#define TEST_REPORT_UTIL_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file as a string ("" when it cannot be opened); the caller frees it. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = 0;
    fclose(f);
    return b;
}

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

/* Run a subcommand (cmd_report, cmd_diff, ...) named name with n arguments, stdout into out. */
static inline int run_args(int (*fn)(int, char **), const char *name, const char *out, int n, ...)
{
    char *argv[16] = {(char *)name};
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 15; i++)
        argv[i + 1] = va_arg(ap, char *);
    va_end(ap);
    return run_captured(fn, n + 1, argv, out);
}

#endif
