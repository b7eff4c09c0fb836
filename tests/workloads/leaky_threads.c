/* leaky_threads.c - a C workload with known leaks from several sites in
 * several threads. Lines marked SITE:<name> are where each leaked block is
 * allocated; tests/integration/run_c_leaks.sh finds them with grep -n.
 *
 * Leaked at exit (exact):
 *   site worker_malloc : 3 blocks x 1000 B  (thread 1)
 *   site worker_calloc : 2 blocks x 4096 B  (thread 2, 4 x 1024 each)
 *   site grow_realloc  : 1 block  x 5000 B  (main; a malloc -> realloc chain)
 *   site aligned_buf   : 1 block  x 123456 B (main, posix_memalign 64)
 *   site both_threads  : 4 blocks x 777 B   (2 from each of threads 3 and 4)
 * Everything else it allocates is freed.
 */
/* The expected lines and frames assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink[64];
static int nsink;

static void keep(void *p)
{
    sink[nsink++] = p;
}

static void *worker_malloc(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        char *p = malloc(1000); /* SITE:worker_malloc */
        memset(p, 1, 1000);
        keep(p);
        free(malloc(64)); /* not a leak */
    }
    return NULL;
}

static void *worker_calloc(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++)
        keep(calloc(4, 1024)); /* SITE:worker_calloc */
    return NULL;
}

static void *both_threads(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++)
        keep(malloc(777)); /* SITE:both_threads */
    return NULL;
}

static char *grow(void)
{
    char *p = malloc(10);
    p = realloc(p, 100);
    p = realloc(p, 5000); /* SITE:grow_realloc */
    return p;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *locked(void *(*fn)(void *))
{
    pthread_mutex_lock(&lock);
    fn(NULL);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *t1(void *a)
{
    (void)a;
    return locked(worker_malloc);
}
static void *t2(void *a)
{
    (void)a;
    return locked(worker_calloc);
}
static void *t3(void *a)
{
    (void)a;
    return locked(both_threads);
}

int main(void)
{
    pthread_t th[4];
    pthread_create(&th[0], NULL, t1, NULL);
    pthread_create(&th[1], NULL, t2, NULL);
    pthread_create(&th[2], NULL, t3, NULL);
    pthread_create(&th[3], NULL, t3, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    keep(grow());
    void *a = NULL;
    if (posix_memalign(&a, 64, 123456) != 0) /* SITE:aligned_buf */
        return 1;
    keep(a);
    char *tmp = malloc(1 << 20); /* freed: part of the peak, not a leak */
    memset(tmp, 0, 1 << 20);
    free(tmp);
    printf("leaky_threads: kept %d blocks\n", nsink);
    return 0;
}
