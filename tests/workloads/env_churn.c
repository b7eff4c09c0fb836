/* env_churn.c - a program that changes variables its environment has, as
 * launchers do, and leaks nothing: putenv of a malloc'd string in place of
 * HOME (the string is then held by environ's array alone, an array the
 * agent's own putenv made at its start) and setenv of PATH's value (glibc
 * keeps it in its tree of known values). No variable is added: that would
 * copy the array into a new one. With the argument "leak" it also loses one
 * block of 100 bytes at site lose (the pointer dropped). For
 * tests/integration/check_environ.sh.
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void lose(void)
{
    char *p = malloc(100);
    if (p) memset(p, 1, 100);
    p = NULL;
}

int main(int argc, char **argv)
{
    if (!getenv("HOME") || !getenv("PATH")) return 77;
    char *home = strdup("HOME=/nonexistent/env_churn");
    if (!home || putenv(home) || setenv("PATH", "/nonexistent/env_churn:/usr/bin:/bin", 1))
        return 99;
    if (argc > 1 && !strcmp(argv[1], "leak")) lose();
    printf("%s\n", getenv("HOME"));
    return 0;
}
