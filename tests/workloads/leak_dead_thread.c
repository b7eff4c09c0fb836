/* leak_dead_thread.c - a thread mallocs 100000 B into a local and exits
 * without freeing it; main joins it and exits (issue 28 item 4). glibc keeps
 * the dead thread's stack in its cache with the pointer still on it: the
 * leak scan must not take that stack as a root. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void *worker(void *arg)
{
    (void)arg;
    char *volatile p = malloc(100000); /* the leak: line 12 */
    memset(p, 1, 100000);
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
    pthread_join(t, NULL);
    return 0;
}
