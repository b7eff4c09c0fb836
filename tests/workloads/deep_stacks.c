/* deep_stacks.c - many distinct deep stacks that differ in a few frames,
 * the shape of `import torch`'s (issue 26), for
 * tests/integration/stack_delta.sh.
 *
 * Two threads, one after the other, each walk the 1024 paths of a call tree ~45 frames deep: a
 * fixed trunk of 40 calls, then 5 levels of one of 4 functions chosen by
 * the path's digits (innermost digit fastest), and allocate at the leaf;
 * every 7th block is kept (a leak per site), the others freed. Exits 0.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define TRUNK  40
#define LEVELS 5
#define PATHS  (1 << (2 * LEVELS))

static void *volatile kept[2 * PATHS];
static volatile unsigned sink;

static void level(unsigned path, int k, unsigned *n);

/* The leaf: one block per path. */
static void __attribute__((noinline)) leaf(unsigned path, unsigned *n)
{
    void *p = malloc(32 + path % 61);
    if (path % 7 == 0)
        kept[(*n)++] = p;
    else
        free(p);
}

/* Four functions per level, so that paths differ in frames, not only in
 * return addresses within one function. */
#define LEVEL_FN(name)                                                                             \
    static void __attribute__((noinline)) name(unsigned path, int k, unsigned *n)                  \
    {                                                                                              \
        level(path, k + 1, n);                                                                     \
        sink++;                                                                                    \
    }
LEVEL_FN(fa)
LEVEL_FN(fb)
LEVEL_FN(fc)
LEVEL_FN(fd)

static void __attribute__((noinline)) level(unsigned path, int k, unsigned *n)
{
    static void (*const fn[4])(unsigned, int, unsigned *) = {fa, fb, fc, fd};
    if (k == LEVELS) {
        leaf(path, n);
    } else {
        fn[(path >> (2 * (LEVELS - 1 - k))) & 3](path, k, n); /* outer levels: high digits */
    }
    sink++;
}

static void __attribute__((noinline)) trunk(int depth, unsigned *n)
{
    if (depth == TRUNK) {
        for (unsigned path = 0; path < PATHS; path++)
            level(path, 0, n);
    } else {
        trunk(depth + 1, n);
    }
    sink++;
}

static void *run(void *arg)
{
    trunk(0, arg);
    return NULL;
}

int main(void)
{
    unsigned n1 = 0, n2 = PATHS;
    pthread_t t;
    run(&n1);
    /* then the second thread: one after the other, so that two runs make
     * the same trace but for times and addresses */
    if (pthread_create(&t, NULL, run, &n2)) return 1;
    pthread_join(t, NULL);
    return 0;
}
