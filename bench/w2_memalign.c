/* w2_memalign.c - the "big short-lived storage" allocator benchmark: a loop
 * of posix_memalign(64, 1-16 MiB), write the first and last byte (like a
 * tensor op touching its output), free. Prints the wall time.
 * Build: cc -O2 -o w2_memalign bench/w2_memalign.c
 * Run:   ./w2_memalign [iterations]      (default 200000)
 * Results (glibc 0.21 us/iter; plain jemalloc 5.04; jemalloc with the agent's
 * settings 0.33; agent tracing 0.53) and the settings: src/agent/hooks.c.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 200000;
    uint64_t x = 88172645463325252ull; /* xorshift64: same sizes every run */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned long sum = 0;
    for (long i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t size = ((size_t)1 << 20) + (size_t)(x % (15u << 20)); /* 1-16 MiB */
        void *p;
        if (posix_memalign(&p, 64, size) != 0) return 1;
        volatile unsigned char *b = p;
        b[0] = (unsigned char)i;
        b[size - 1] = (unsigned char)i;
        sum += b[0];
        free(p);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("w2_memalign: %ld iterations in %.3f s (%.2f us/iter) [%lu]\n", iters, s,
           s * 1e6 / (double)iters, sum);
    return 0;
}
