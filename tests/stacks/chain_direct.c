/* chain_direct — known call chains captured through gt_stack_capture itself (exported by
 * libgputrace.so, found with dlsym under LD_PRELOAD), so the capture is checked without the CUDA
 * wrappers. Prints one line per capture: "<case> <stack id>".
 *   chain:  main -> step -> do_capture -> gt_stack_capture, twice from the same site, once from
 *           another site (same id twice, a different id for the other site)
 *   deep:   main -> recurse x40 -> gt_stack_capture (deeper than GPUTRACE_STACK_DEPTH) */
#include <dlfcn.h>
#include <pthread.h>
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

/* threads: 8 threads race to capture the same two call sites; each must see one id per site. */
static void *race(void *arg)
{
    uint32_t *ids = arg;
    for (int i = 0; i < 2000; i++) {
        uint32_t a = step(i), b = other_site();
        if ((ids[0] && ids[0] != a) || (ids[1] && ids[1] != b))
            ids[2]++; /* the same site gave two ids */
        ids[0] = a;
        ids[1] = b;
    }
    return NULL;
}

static int run_threads(void)
{
    pthread_t t[8];
    uint32_t ids[8][3] = {{0}};
    for (int i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, race, ids[i]);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 8; i++) {
        if (ids[i][2] || ids[i][0] != ids[0][0] || ids[i][1] != ids[0][1] || !ids[i][0]) {
            fprintf(stderr, "thread %d: ids %u %u, changes %u\n", i, ids[i][0], ids[i][1],
                    ids[i][2]);
            return 1;
        }
    }
    printf("threads %u\n", ids[0][0]);
    return 0;
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
    } else if (strcmp(mode, "threads") == 0) {
        return run_threads();
    } else if (strcmp(mode, "deep") == 0) {
        printf("deep %u\n", recurse(40));
    } else {
        fprintf(stderr, "chain_direct: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
