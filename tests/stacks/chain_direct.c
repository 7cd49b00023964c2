/* chain_direct — known call chains captured through gt_stack_capture itself (exported by
 * libgputrace.so, found with dlsym under LD_PRELOAD), so the capture is checked without the CUDA
 * wrappers. Prints one line per capture: "<case> <stack id>".
 *   chain:  main -> step -> do_capture -> gt_stack_capture, twice from the same site, once from
 *           another site (same id twice, a different id for the other site)
 *   deep:   main -> recurse x40 -> gt_stack_capture (deeper than GPUTRACE_STACK_DEPTH) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef uint32_t (*capture_fn)(int reason);
static capture_fn capture;
static volatile int sink;
static volatile int reps = 2; /* volatile: the loop must not be unrolled into two call sites */

__attribute__((noinline)) static uint32_t do_capture(void)
{
    uint32_t id = capture(1 /* GT_STACK_FOR_ADVICE */); /* @do_capture */
    sink++; /* no tail call: this frame must stay on the stack */
    return id;
}

__attribute__((noinline)) static uint32_t step(int i)
{
    uint32_t id = do_capture(); /* @step */
    sink += i;
    return id;
}

__attribute__((noinline)) static uint32_t other_site(void)
{
    uint32_t id = capture(1);
    sink++;
    return id;
}

__attribute__((noinline)) static uint32_t recurse(int n)
{
    uint32_t id = n == 0 ? capture(1) : recurse(n - 1);
    sink++;
    return id;
}

int main(int argc, char **argv)
{
    *(void **)&capture = dlsym(RTLD_DEFAULT, "gt_stack_capture");
    if (!capture) {
        fprintf(stderr,
                "chain_direct: gt_stack_capture not found: run with LD_PRELOAD=libgputrace.so\n");
        return 3;
    }
    const char *mode = argc > 1 ? argv[1] : "chain";
    if (strcmp(mode, "chain") == 0) {
        for (int i = 0; i < reps; i++)
            printf("chain %u\n", step(i)); /* @main */
        printf("other %u\n", other_site());
    } else if (strcmp(mode, "fork") == 0) {
        printf("parent %u\n", step(0));
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            printf("child %u\n", step(0));
            return 0;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    } else if (strcmp(mode, "deep") == 0) {
        printf("deep %u\n", recurse(40));
    } else {
        fprintf(stderr, "chain_direct: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
