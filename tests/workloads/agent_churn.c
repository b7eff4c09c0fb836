/* agent_churn.c - malloc/free churn for the recording-mode tests
 * (agent_modes.sh): ITER iterations of mixed small blocks (a ring of 256
 * live ones) plus one 100000-byte block allocated and freed per 100
 * iterations; at the end 3 blocks of 100000 bytes are leaked from leak_big.
 * Prints "churn: allocations=N" (every malloc it made). */
#include <stdio.h>
#include <stdlib.h>

static void *ring[256];
static unsigned long allocs;

__attribute__((noinline)) static void *small(size_t n)
{
    allocs++;
    return malloc(n);
}

__attribute__((noinline)) static void *leak_big(void)
{
    allocs++;
    return malloc(100000);
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 10000;
    unsigned x = 12345;
    for (long i = 0; i < iters; i++) {
        x = x * 1103515245u + 12345u;
        unsigned k = (x >> 8) & 255;
        free(ring[k]);
        ring[k] = small(16 + (x >> 16) % 2000);
        if (i % 100 == 0) {
            allocs++;
            free(malloc(100000));
        }
    }
    for (int k = 0; k < 256; k++)
        free(ring[k]);
    static void *keep[3];
    for (int k = 0; k < 3; k++)
        keep[k] = leak_big();
    printf("churn: allocations=%lu\n", allocs);
    return keep[0] && keep[1] && keep[2] ? 0 : 1;
}
