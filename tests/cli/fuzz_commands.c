/* fuzz_commands.c — the analyzer's commands on any bytes: info, report (text and JSON), diff and
 * convert (Perfetto to standard output) through their real command lines, so option handling,
 * the model, the advice rules and every output are covered, not only the reader (fuzz_reader).
 * Must never crash, hang or leak.
 *
 * With libFuzzer (GT_LIBFUZZER) this is a fuzz target; run it longer with tools/fuzz.sh. Without,
 * main() runs each file given once, then with --mutate N also N deterministic mutants of each
 * (bit flips, truncations, byte runs), each under a 10 s alarm: a hang fails the run. Command
 * output goes to /dev/null; GT_FUZZ_VERBOSE=1 keeps stderr (to see why an artifact fails). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as a file the commands can open by name. */
static int memfd_with(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("gtfuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return -1;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

static void run_command(int (*cmd)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    (void)cmd(argc, argv);
    fflush(stdout);
}

static int saved_stderr = -1;

static void quiet_begin(void)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("GT_FUZZ_VERBOSE") != NULL;
    if (verbose)
        return;
    fflush(stderr);
    saved_stderr = dup(2);
    int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 2);
        close(devnull);
    }
}

static void quiet_end(void)
{
    if (saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    static char page[64] = "/tmp/gputrace-fuzz-XXXXXX"; /* report --html and --text-file */
    if (!ready) {
        ready = 1;
        int fd = mkstemp(page);
        if (fd >= 0)
            close(fd);
        setenv("GPUTRACE_SOURCE_LINES", "off", 1); /* no DWARF line tables per input */
        setenv("NO_COLOR", "1", 1);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, 1);
            close(devnull);
        }
    }
    char a[64];
    int fa = memfd_with(data, size, a, sizeof a);
    if (fa < 0)
        return 0;
    quiet_begin();
    run_command(cmd_info, (char *[]){"info", a, NULL});
    run_command(cmd_report, (char *[]){"report", a, "--top=3", NULL});
    run_command(cmd_report, (char *[]){"report", "--json", a, a, NULL}); /* two processes */
    run_command(cmd_report, /* what record runs: the short form, the full text, the page */
                (char *[]){"report", "--brief", "--text-file", page, "--html", page, a, NULL});
    run_command(cmd_diff, (char *[]){"diff", a, a, NULL});
    run_command(cmd_diff, (char *[]){"diff", "--json", a, a, NULL});
    run_command(cmd_convert, (char *[]){"convert", "-q", "-o", "-", a, a, NULL});
    run_command(cmd_convert, /* the advice track is fuzzed above; advice costs most of the time */
                (char *[]){"convert", "-q", "--no-advice", "--format=json", "-o", "-", a, NULL});
    quiet_end();
    close(fa);
    return 0;
}

#ifndef GT_LIBFUZZER
#include <signal.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void mutate(uint8_t *mut, size_t *len, size_t n)
{
    switch (next_rand() % 3) {
    case 0: /* flip a few bits anywhere */
        for (int k = 0; k < 4; k++)
            mut[next_rand() % *len] ^= (uint8_t)(1u << (next_rand() % 8));
        break;
    case 1: /* truncate */
        *len = next_rand() % n;
        break;
    default: { /* a run of 0xff or 0x00 */
        size_t at = next_rand() % *len, run = 1 + next_rand() % 64;
        memset(mut + at, (next_rand() & 1) ? 0xff : 0, at + run < *len ? run : *len - at);
        break;
    }
    }
}

static void run_one(const uint8_t *data, size_t len)
{
    alarm(10); /* SIGALRM ends the run: a command that does not finish is the defect */
    LLVMFuzzerTestOneInput(data, len);
    alarm(0);
}

int main(int argc, char **argv)
{
    int mutants = 0, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--mutate")) {
        mutants = atoi(argv[2]);
        first = 3;
    }
    signal(SIGALRM, SIG_DFL);
    for (int i = first; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "fuzz_commands: cannot open %s\n", argv[i]);
            return 2;
        }
        size_t cap = 1 << 20;
        uint8_t *buf = malloc(cap), *mut = malloc(cap);
        if (!buf || !mut)
            return 1;
        size_t n = fread(buf, 1, cap, f);
        fclose(f);
        run_one(buf, n);
        for (int r = 0; r < mutants && n; r++) {
            memcpy(mut, buf, n);
            size_t len = n;
            mutate(mut, &len, n);
            run_one(mut, len);
        }
        free(buf);
        free(mut);
    }
    fprintf(stderr, "fuzz_commands: %d file(s), %d mutants each: no crash, no hang\n", argc - first,
            mutants);
    return 0;
}
#endif
