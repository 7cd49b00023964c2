/* cli_args.h — one way for every subcommand to read its command line, so they all behave alike:
 * options may come before, between or after the operands (`report run --json`), `--` ends the
 * options, unknown or incomplete options and bad numbers are usage errors (exit status 2), and
 * every message starts with "gputrace COMMAND: ". Built on getopt_long in its in-order mode
 * ("-"), which does not depend on POSIXLY_CORRECT. */
#ifndef GT_CLI_ARGS_H
#define GT_CLI_ARGS_H

#include <getopt.h>

/* Results of gt_cli_parse and of an option handler. */
enum { GT_CLI_OK = 0, GT_CLI_HELP = 1, GT_CLI_USAGE = 2 };

typedef struct gt_cli {
    const char *command;   /* "report": the messages' prefix is "gputrace report: " */
    const char *shortopts; /* getopt's letters, e.g. "o:qh" (no leading '+', '-' or ':') */
    const struct option *longopts;
    int stop_at_operand; /* 1: options end at the first operand (record's COMMAND ARGS...) */
    /* Called for each option (c as getopt_long returns it, arg its value or NULL). Returns
     * GT_CLI_OK, GT_CLI_HELP (help printed: exit 0) or GT_CLI_USAGE (message printed: exit 2). */
    int (*on_option)(void *ctx, int c, const char *arg);
    void *ctx;
} gt_cli;

/* Parses argv (argv[0] is the command name). Operands are gathered in order into *operands (an
 * array of argc pointers into argv, to free()) and counted in *n_operands. Returns GT_CLI_OK,
 * GT_CLI_HELP or GT_CLI_USAGE; on GT_CLI_USAGE for a bad option the message is printed. */
int gt_cli_parse(const gt_cli *cli, int argc, char **argv, char ***operands, int *n_operands);

/* A whole number in [min, max] for option name: 0 and *out set, or a usage error printed
 * ("gputrace report: --top takes a whole number from 0 to 2147483647, not 'abc'") and -1. */
int gt_cli_int(const char *command, const char *name, const char *arg, long min, long max,
               long *out);

/* "gputrace COMMAND" for the command whose line gt_cli_parse read last, for messages printed by
 * shared code (the model's "gputrace report: x.gtrace is damaged"); "gputrace" before any. */
const char *gt_cli_prefix(void);

/* Prints "gputrace COMMAND: " and the message, then the pointer to --help. For usage errors. */
void gt_cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
