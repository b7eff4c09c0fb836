/* fork_leaks.c - parent and child each leak known blocks after a fork.
 *   parent: site parent_leak, 2 blocks x 1500 B (one before, one after fork)
 *   child : site child_leak,  1 block  x 2500 B, plus what it inherited
 * The child's trace must hold only the child's own allocations.
 */
/* The expected lines and frames assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink[8];

static void *parent_leak(void)
{
    return malloc(1500); /* SITE:parent_leak */
}

static void *child_leak(void)
{
    return malloc(2500); /* SITE:child_leak */
}

int main(void)
{
    sink[0] = parent_leak();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        sink[1] = child_leak();
        free(malloc(10));
        _exit(7);
    }
    sink[2] = parent_leak();
    int status = 0;
    waitpid(pid, &status, 0);
    printf("fork_leaks: child %d exited %d\n", (int)pid, WEXITSTATUS(status));
    return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 1;
}
