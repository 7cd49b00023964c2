/* gputrace — the analyzer's entry point: dispatches to one subcommand per file (cmd_*.c). */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "commands.h"
#include "outfile.h"

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand SUBCOMMANDS[] = {
    {"record", cmd_record, "run a program under gputrace, then convert and report"},
    {"info", cmd_info, "show a trace's header, versions, record counts and losses"},
    {"convert", cmd_convert, "write a Perfetto trace (or Chrome JSON) for ui.perfetto.dev"},
    {"report", cmd_report, "summarize a run and give advice (text or --json)"},
    {"diff", cmd_diff, "compare two runs operation by operation"},
    {"doctor", cmd_doctor, "check the CUDA stack, measure this machine's copy and GEMM peaks"},
    {"archive", cmd_archive, "keep the names of a run's frames with it (for another machine)"},
};
#define N_SUBCOMMANDS (sizeof SUBCOMMANDS / sizeof SUBCOMMANDS[0])

static void print_usage(FILE *out)
{
    fprintf(out, "usage: gputrace COMMAND [ARGS...]\n\n"
                 "A light profiler for CUDA programs: records what the program asked of the GPU\n"
                 "and what the GPU did, then explains why the GPU is underused.\n\ncommands:\n");
    for (size_t i = 0; i < N_SUBCOMMANDS; i++)
        fprintf(out, "  %-8s  %s\n", SUBCOMMANDS[i].name, SUBCOMMANDS[i].summary);
    fprintf(out, "\n'gputrace COMMAND --help' describes each command. Options may come before or\n"
                 "after the files; '--' ends them. Exit status 2 means bad usage.\n"
                 "Quick start: gputrace record -- python train.py\n");
}

/* Arrays of 4 MB or more (the model's per-operation arrays, grown by doubling) each in a mapping of
 * its own, given back to the system when freed: glibc's default raises its mapping threshold to 32
 * MB after the first such array is freed, so that the next file's (diff, convert's reads) came from
 * a heap that kept the first's pages: 134 MB against 103 MB for `diff` of a 136 MB trace. */
static void heap_gives_back(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

int main(int argc, char **argv)
{
    heap_gives_back();
    gt_ignore_sigxfsz(); /* a write past `ulimit -f` fails with EFBIG and is handled (outfile.h) */
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        print_usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gputrace %s\n", GT_VERSION);
        return 0;
    }
    for (size_t i = 0; i < N_SUBCOMMANDS; i++)
        if (!strcmp(argv[1], SUBCOMMANDS[i].name))
            return SUBCOMMANDS[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gputrace: unknown command '%s'\n\n", argv[1]); /* no command to name */
    print_usage(stderr);
    return 2;
}
