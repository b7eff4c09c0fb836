/* agent_forker.c - fork workload for tests/integration/agent_fork.sh: the
 * parent leaks 1000 B before forking, the child leaks 2000 B and exits 3;
 * each trace must hold only its own process's block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[2];

static void parent_leak(void)
{
    keep[0] = malloc(1000);
}

static void child_leak(void)
{
    keep[1] = malloc(2000);
}

int main(void)
{
    parent_leak();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 99;
    if (pid == 0) {
        child_leak();
        exit(3);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 3) return 1;
    printf("parent %d child %d\n", (int)getpid(), (int)pid);
    return 0;
}
