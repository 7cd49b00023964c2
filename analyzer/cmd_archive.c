/* cmd_archive.c — `gputrace archive FOLDER...`: keep the names of a run's captured frames with it
 * (FOLDER/gputrace-symbols.txt, see symarchive.h), as `perf archive` does for perf. `record` does
 * this by itself after the run; this command is for runs recorded with LD_PRELOAD alone, run on
 * the machine that recorded them before the folder is copied elsewhere. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "symarchive.h"

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

int cmd_archive(int argc, char **argv)
{
    if (argc < 2) {
        print_archive_help(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        print_archive_help(stdout);
        return 0;
    }
    int status = 0;
    for (int i = 1; i < argc; i++) {
        char err[512];
        int frames = gt_symarchive_write_dir(argv[i], err, sizeof err);
        if (frames < 0) {
            fprintf(stderr, "gputrace archive: %s\n", err);
            status = 1;
        } else if (frames == 0) {
            printf("%s: no named frames to keep\n", argv[i]);
        } else {
            printf("%s/" GT_SYMARCHIVE_NAME ": %d frames\n", argv[i], frames);
        }
    }
    return status;
}
