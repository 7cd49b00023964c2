/* test_convert_driver.c — runs `gputrace convert` (cmd_convert) without the other subcommands,
 * so the convert tests do not depend on the rest of the CLI; `test_convert_driver diff A B`
 * runs cmd_diff, which matches call sites by the same text the converter writes;
 * `test_convert_driver report ...` runs cmd_report (the same links through the report's model). */
#include <string.h>

#include "commands.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "diff") == 0)
        return cmd_diff(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    return cmd_convert(argc - 1, argv + 1);
}
