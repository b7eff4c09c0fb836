/* as_limit.c - how many 10 MB blocks (first page touched, never freed) a
 * program gets before malloc fails, up to argv[1]; prints the count. Run
 * under `ulimit -v` by agent_as_limit.sh (issue 28, item 8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40, got = 0;
    for (int i = 0; i < n; i++) {
        char *p = malloc(10 * 1000 * 1000);
        if (!p) break;
        memset(p, 1, 4096);
        got++;
    }
    printf("%d\n", got);
    return 0;
}
