/* last_leak.c - loses one block of 100 bytes with the process's last
 * allocation: nothing is allocated after it, so the agent's per-thread
 * state still holds its address at exit unless it keeps none a scan
 * reads (tests/integration/check_last_leak.sh).
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *p = malloc(100); /* lost here */
    if (p) memset(p, 1, 100);
    p = NULL;
    return 0;
}
