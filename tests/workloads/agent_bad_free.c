/* agent_bad_free.c - frees that glibc aborts on: run by
 * tests/integration/agent_bad_free.sh under the agent, where each must end
 * in one "tensorleak: ..." line and abort() (exit 134), never a crash, a
 * hang or a corrupted heap.
 *
 * usage: agent_bad_free double|stack|offset|realloc|big|thread
 * Prints "survived" and exits 0 if the bad call returned.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile q; /* through a volatile: no compiler warnings or folding */

static void *free_twice(void *p)
{
    free(p);
    q = p;
    free(q);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const char *c = argv[1];
    char *p = malloc(40);
    char on_stack[32];
    memset(on_stack, 1, sizeof on_stack);
    if (strcmp(c, "double") == 0) {
        free_twice(p);
    } else if (strcmp(c, "stack") == 0) {
        q = on_stack;
        free(q);
    } else if (strcmp(c, "offset") == 0) {
        q = p + 8;
        free(q);
    } else if (strcmp(c, "realloc") == 0) {
        free(p);
        q = p;
        q = realloc(q, 100);
    } else if (strcmp(c, "big") == 0) { /* a 1 MiB block: recorded in every mode */
        free_twice(malloc(1 << 20));
    } else if (strcmp(c, "thread") == 0) { /* freed in main, again in a thread */
        free(p);
        pthread_t t;
        pthread_create(&t, NULL, free_twice, malloc(64));
        pthread_join(t, NULL);
    } else {
        return 2;
    }
    printf("survived\n");
    return 0;
}
