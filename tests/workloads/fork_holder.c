/* fork_holder.c - a fork child that keeps its blocks only through memory
 * its parent allocated before the fork: holder, a heap block of the
 * parent's, gets the child's 100000 B and 48 B blocks. Nothing is lost,
 * but the child's table had forgotten the parent's blocks, so the scan
 * never read holder and the child's two blocks were "definitely lost".
 * With the argument "leak" the child also loses 100 B at site lose. For
 * tests/integration/check_fork_holder.sh.
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct holder {
    void *big, *small;
};

static void lose(void)
{
    char *p = malloc(100);
    if (p) memset(p, 1, 100);
    p = NULL;
}

int main(int argc, char **argv)
{
    struct holder *h = malloc(sizeof *h);
    if (!h) return 99;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 99;
    if (pid == 0) {
        h->big = malloc(100000);
        h->small = malloc(48);
        if (argc > 1 && !strcmp(argv[1], "leak")) lose();
        printf("child keeps %s\n", h->big && h->small ? "both" : "none");
        exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    free(h);
    printf("parent done\n");
    return 0;
}
