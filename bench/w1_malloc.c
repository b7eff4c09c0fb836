/* w1_malloc.c - W1: malloc-heavy C (issue 5).
 *
 * usage: w1_malloc [--threads=T] [--pairs=N]   (defaults 1, 2000000)
 * N malloc/free pairs of mixed sizes, 8-4096 B (log-uniform: a power-of-two
 * class, then uniform inside it), from 4 distinct call sites chosen by a
 * deterministic PRNG. Each thread keeps a ring of 1024 live blocks: a step
 * frees the block in a random slot and puts a new one there, so the
 * allocator sees a realistic live set, not one block bouncing in a cache.
 * With T threads each does N/T pairs. Prints "bench: events=E" (allocations +
 * frees made by the loop) for the trace-size workload (W4).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 1024
#define SITE  __attribute__((noinline, noipa))

/* Four call sites; noipa keeps GCC from merging or inlining them. */
SITE static void *site_a(size_t n)
{
    return malloc(n);
}
SITE static void *site_b(size_t n)
{
    void *p = malloc(n);
    if (p) ((char *)p)[n - 1] = 1;
    return p;
}
SITE static void *site_c(size_t n)
{
    void *p = malloc(n);
    if (p) ((char *)p)[n / 2] = 2;
    return p;
}
SITE static void *site_d(size_t n)
{
    void *p = malloc(n);
    if (p) memset(p, 3, n < 16 ? n : 16);
    return p;
}

static uint64_t next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

struct job {
    uint64_t seed, pairs, sum;
};

static void *work(void *arg)
{
    struct job *j = arg;
    void **ring = calloc(SLOTS, sizeof *ring);
    if (!ring) abort();
    uint64_t s = j->seed, sum = 0;
    for (uint64_t i = 0; i < j->pairs; i++) {
        uint64_t r = next(&s);
        unsigned slot = (unsigned)(r % SLOTS);
        unsigned cls = 3 + (unsigned)((r >> 10) % 10); /* 8 .. 4096 */
        size_t n = ((size_t)1 << cls) + ((r >> 16) & (((size_t)1 << cls) - 1));
        if (n > 4096) n = 4096;
        if (ring[slot]) free(ring[slot]);
        void *p;
        switch ((r >> 40) & 3) {
        case 0:
            p = site_a(n);
            break;
        case 1:
            p = site_b(n);
            break;
        case 2:
            p = site_c(n);
            break;
        default:
            p = site_d(n);
            break;
        }
        if (!p) abort();
        ((char *)p)[0] = (char)i;
        sum += (uintptr_t)p & 0xff;
        ring[slot] = p;
    }
    for (unsigned k = 0; k < SLOTS; k++)
        free(ring[k]);
    free(ring);
    j->sum = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned threads = 1;
    uint64_t pairs = 2000000;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--threads=", 10) == 0)
            threads = (unsigned)strtoul(argv[i] + 10, NULL, 10);
        else if (strncmp(argv[i], "--pairs=", 8) == 0)
            pairs = strtoull(argv[i] + 8, NULL, 10);
        else {
            fprintf(stderr, "usage: w1_malloc [--threads=T] [--pairs=N]\n");
            return 2;
        }
    }
    if (threads < 1 || threads > 64) {
        fprintf(stderr, "w1_malloc: --threads must be 1-64\n");
        return 2;
    }
    struct job jobs[64];
    pthread_t tid[64];
    for (unsigned t = 0; t < threads; t++) {
        jobs[t].seed = 0x9E3779B97F4A7C15ULL * (t + 1);
        jobs[t].pairs = pairs / threads + (t < pairs % threads);
    }
    if (threads == 1)
        work(&jobs[0]);
    else
        for (unsigned t = 0; t < threads; t++)
            if (pthread_create(&tid[t], NULL, work, &jobs[t]) != 0) {
                fprintf(stderr, "w1_malloc: pthread_create failed\n");
                return 1;
            }
    uint64_t sum = 0;
    for (unsigned t = 0; t < threads; t++) {
        if (threads > 1) pthread_join(tid[t], NULL);
        sum += jobs[t].sum;
    }
    printf("bench: events=%llu checksum=%llu\n", (unsigned long long)(2 * pairs),
           (unsigned long long)sum);
    return 0;
}
