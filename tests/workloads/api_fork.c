/* api_fork.c - report points across fork(), for tests/integration/agent_api_fork.sh:
 * the parent takes snapshots 1 and 2, forks; the child's own trace starts
 * its snapshot (MARK) ids at 1 again; the parent goes on at 3. Prints
 * "child mark N" and "parent mark N"; exits 0, or 1 when the child failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tensorleak.h"

int main(void)
{
    const tl_agent_api_t *a = tl__api();
    if (!a) {
        printf("api none\n");
        return 0;
    }
    a->snapshot_begin("before1");
    a->snapshot_begin("before2");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        printf("child mark %llu\n", (unsigned long long)a->snapshot_begin("child"));
        return 0;
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    printf("parent mark %llu\n", (unsigned long long)a->snapshot_begin("parent"));
    return 0;
}
