/* test_convert_driver.c — runs `gputrace convert` (cmd_convert) without the other subcommands,
 * so the convert tests do not depend on the rest of the CLI. */
#include "commands.h"

int main(int argc, char **argv)
{
    return cmd_convert(argc - 1, argv + 1);
}
