/* agent_killer.c - allocates five 4444 B blocks, then SIGKILLs itself: the
 * trace must still hold all five allocations (no END record). */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep[5]; /* volatile: the stores must happen */

int main(void)
{
    for (int i = 0; i < 5; i++)
        keep[i] = malloc(4444);
    kill(getpid(), SIGKILL);
    pause();
    return 0;
}
