/* cmd_archive.c — `gputrace archive FOLDER...`: keep the names of a run's captured frames with it
 * (FOLDER/gputrace-symbols.txt, see symarchive.h), as `perf archive` does for perf. `record` does
 * this by itself after the run; this command is for runs recorded with LD_PRELOAD alone, run on
 * the machine that recorded them before the folder is copied elsewhere. */
#include <stdio.h>
#include <stdlib.h>

#include "cli_args.h"
#include "commands.h"
#include "symarchive.h"
#include "symarchive_write.h"

static void print_archive_help(FILE *out)
{
    fprintf(out,
            "usage: gputrace archive FOLDER...\n"
            "\n"
            "Keep the names of the captured frames with a run: symbolize the stacks of every\n"
            ".gtrace file in FOLDER with this machine's modules and write\n"
            "FOLDER/" GT_SYMARCHIVE_NAME ". Analyzed on another machine (without the same\n"
            "libraries), the run then still names its library frames. `gputrace record` does this\n"
            "by itself; run it for traces recorded with LD_PRELOAD=libgputrace.so, where they\n"
            "were recorded.\n");
}

static int archive_option(void *ctx, int c, const char *arg)
{
    (void)ctx, (void)c, (void)arg; /* 'h': the only option */
    print_archive_help(stdout);
    return GT_CLI_HELP;
}

/* Options are read like every command's (cli_args.h): anywhere, `--` ends them. */
int cmd_archive(int argc, char **argv)
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const gt_cli cli = {
        .command = "archive", .shortopts = "h", .longopts = longopts, .on_option = archive_option};
    char **folders;
    int n_folders;
    int parsed = gt_cli_parse(&cli, argc, argv, &folders, &n_folders);
    if (parsed != GT_CLI_OK)
        return parsed == GT_CLI_HELP ? 0 : 2;
    if (n_folders < 1) {
        gt_cli_usage_error("archive", "no run folder given (usage: gputrace archive FOLDER...)");
        free(folders);
        return 2;
    }
    int status = 0;
    for (int i = 0; i < n_folders; i++) {
        char err[512];
        int frames = gt_symarchive_write_dir(folders[i], err, sizeof err);
        if (frames < 0) {
            fprintf(stderr, "gputrace archive: %s\n", err);
            status = 1;
        } else if (frames == 0) {
            printf("%s: no named frames to keep\n", folders[i]);
        } else {
            printf("%s/" GT_SYMARCHIVE_NAME ": %d frames\n", folders[i], frames);
        }
    }
    free(folders);
    return status;
}
