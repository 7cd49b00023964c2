/* preload_app.c — a program with no CUDA at all, run under LD_PRELOAD=libgputrace.so: prints a
 * line, forks a child that ends with _exit (like a DataLoader worker), and exits 5. gputrace must
 * leave its output and exit status alone, and leave no trace (no CUDA was used). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    printf("hello from the app\n");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(3);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 5 : 1;
}
