/* agent_exec_target.c - the image a shell shim execs in agent_exec.sh:
 * leaks 3000 B and exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile keep;

int main(void)
{
    keep = malloc(3000);
    printf("target %d\n", (int)getpid());
    return 0;
}
