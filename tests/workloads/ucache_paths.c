/* ucache_paths.c - allocations whose stacks the unwind cache answers
 * (src/agent/stack.c): built -O2 without frame pointers, as most programs
 * are (the cache refuses frame-pointer frames). Two callers with the same
 * frame, path_a and path_b, call keep() from one call site in turns, so the
 * capture in malloc sees the same key (return address into keep, the same
 * stack pointer) under two different chains; each path leaks its own size
 * (24 B from path_a, 40 B from path_b), at depths 1-3 and in a second thread
 * too. The report must put every block under its own path's line.
 *
 * usage: ucache_paths N   (N rounds; each leaks 6 blocks a thread)
 */
#include <pthread.h>
#include <stdlib.h>

#define NOINL __attribute__((noinline, noipa))
#define KEEP  __asm__ volatile("" ::: "memory")

static void *volatile sink;

static NOINL void keep(size_t n)
{
    sink = malloc(n); /* leaked */
    KEEP;
}

static NOINL void path_a(unsigned depth)
{
    if (depth > 1)
        path_a(depth - 1);
    else
        keep(24); /* SITE:path_a */
    KEEP;
}

static NOINL void path_b(unsigned depth)
{
    if (depth > 1)
        path_b(depth - 1);
    else
        keep(40); /* SITE:path_b */
    KEEP;
}

static void (*const volatile paths[2])(unsigned) = {path_a, path_b};
static volatile unsigned rounds;

static NOINL void *work(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < rounds * 6; i++)
        paths[i & 1](1 + (i >> 1) % 3); /* one call site for both paths */
    KEEP;
    return NULL;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 100;
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) != 0) return 2;
    work(NULL);
    pthread_join(t, NULL);
    return 0;
}
