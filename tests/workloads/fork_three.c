/* fork_three.c - a parent and three forked children, each child leaking
 * its own blocks: child k (1, 2, 3) loses k blocks of k * 1000 B at site
 * child_leak (the pointers dropped), then exits 0; the parent waits for
 * them and leaks nothing. For tests/integration/check_jobs.sh: a run of
 * four processes whose verdicts are the same whether check evaluates them
 * one at a time or several at once.
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void child_leak(int k)
{
    for (int i = 0; i < k; i++) {
        char *p = malloc((size_t)k * 1000);
        if (p) memset(p, k, (size_t)k * 1000);
        p = NULL;
    }
}

int main(void)
{
    pid_t kids[3];
    for (int k = 1; k <= 3; k++) {
        kids[k - 1] = fork();
        if (kids[k - 1] < 0) return 99;
        if (kids[k - 1] == 0) {
            child_leak(k);
            _exit(0);
        }
    }
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        int st;
        bad |= waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}
