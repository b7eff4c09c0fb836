/* env_child.c - a child that `check` checks (not a helper with nothing of
 * interest: it keeps a 1 MiB block live, reachable from a global), started
 * with an environment of its own. With the argument "leak" it also loses
 * one block of 100 bytes at site lose (the pointer dropped). It prints
 * "env_child" and whether LD_PRELOAD reached it. For
 * tests/integration/check_follow_env.sh.
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *kept;

static void lose(void)
{
    char *p = malloc(100);
    if (p) memset(p, 1, 100);
    p = NULL;
}

int main(int argc, char **argv)
{
    kept = malloc(1 << 20);
    if (!kept) return 99;
    memset(kept, 2, 1 << 20);
    if (argc > 1 && !strcmp(argv[1], "leak")) lose();
    printf("env_child %s\n", getenv("LD_PRELOAD") ? "preloaded" : "plain");
    return 0;
}
