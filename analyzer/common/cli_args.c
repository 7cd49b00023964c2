/* cli_args.c — the subcommands' shared command-line parsing (cli_args.h says what it guarantees).
 * getopt's own messages are turned off (opterr = 0): they name argv[0] ("report: unrecognized
 * option"), which is not how gputrace speaks. */
#include "cli_args.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char current_prefix[64] = "gputrace";

const char *gt_cli_prefix(void)
{
    return current_prefix;
}

void gt_cli_usage_error(const char *command, const char *fmt, ...)
{
    fprintf(stderr, "gputrace %s: ", command);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n'gputrace %s --help' lists the options.\n", command);
}

int gt_cli_int(const char *command, const char *name, const char *arg, long min, long max,
               long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (!arg[0] || *end || errno == ERANGE || v < min || v > max) {
        gt_cli_usage_error(command, "%s takes a whole number from %ld to %ld, not '%s'", name, min,
                           max, arg);
        return -1;
    }
    *out = v;
    return 0;
}

/* The option getopt stopped at, as the user wrote it. */
static void report_bad_option(const gt_cli *cli, char **argv, int c)
{
    const char *what = argv[optind - 1];
    if (c == ':')
        gt_cli_usage_error(cli->command, "option '%s' needs a value", what);
    else if (optopt && strncmp(what, "--", 2) != 0)
        gt_cli_usage_error(cli->command, "unknown option '-%c'", optopt);
    else
        gt_cli_usage_error(cli->command, "unknown option '%s'", what);
}

int gt_cli_parse(const gt_cli *cli, int argc, char **argv, char ***operands, int *n_operands)
{
    char shortopts[128];
    snprintf(shortopts, sizeof shortopts, "%s:%s", cli->stop_at_operand ? "+" : "-",
             cli->shortopts);
    snprintf(current_prefix, sizeof current_prefix, "gputrace %s", cli->command);
    char **ops = calloc((size_t)argc + 1, sizeof *ops);
    if (!ops) {
        fprintf(stderr, "gputrace %s: out of memory\n", cli->command);
        return GT_CLI_USAGE;
    }
    int n = 0, c;
    optind = 0; /* 0, not 1: glibc re-initializes (a previous command may have parsed) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, cli->longopts, NULL)) != -1) {
        if (c == 1) { /* an operand, in order */
            ops[n++] = optarg;
            continue;
        }
        if (c == '?' || c == ':') {
            report_bad_option(cli, argv, c);
            free(ops);
            return GT_CLI_USAGE;
        }
        int rc = cli->on_option(cli->ctx, c, optarg);
        if (rc != GT_CLI_OK) {
            free(ops);
            return rc;
        }
    }
    while (optind < argc) /* after "--", or from the first operand with stop_at_operand */
        ops[n++] = argv[optind++];
    *operands = ops;
    *n_operands = n;
    return GT_CLI_OK;
}
