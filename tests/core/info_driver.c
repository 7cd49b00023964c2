/* info_driver.c — `gputrace info` alone (cmd_info.c linked without the other subcommands), so
 * its exit codes are tested even when the rest of the analyzer is not built. */
#include "commands.h"

/* Called like the real command: info_driver info FILE... */
int main(int argc, char **argv)
{
    return argc > 1 ? cmd_info(argc - 1, argv + 1) : 2;
}
