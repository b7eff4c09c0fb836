/* agent_threads.c - many short threads, one at a time (issue 9).
 * usage: agent_threads N
 * Starts N threads one after the other (create, join); each makes one
 * malloc(100)/free pair, except threads 1-8 and 2001-2008, which time
 * PAIRS malloc(100)/free pairs each. Prints
 * "threads: n=N early_ns=E late_ns=L": the best ns per pair of the early
 * and of the late group (L is about E when a thread past 1,023 gets a
 * counter slot of its own, as the first ones do).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAIRS 20000

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg)
{
    long i = (long)(intptr_t)arg;
    bool timed = (i >= 1 && i <= 8) || (i >= 2001 && i <= 2008);
    int n = timed ? PAIRS : 1;
    uint64_t t0 = now_ns();
    for (int k = 0; k < n; k++) {
        char *volatile p = malloc(100);
        if (p) p[0] = 1;
        free(p);
    }
    return (void *)(uintptr_t)((now_ns() - t0) / (uint64_t)n);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 10000;
    uint64_t early = UINT64_MAX, late = UINT64_MAX;
    for (long i = 0; i < n; i++) {
        pthread_t t;
        void *ret;
        if (pthread_create(&t, NULL, work, (void *)(intptr_t)i) != 0 || pthread_join(t, &ret))
            return 1;
        uint64_t ns = (uint64_t)(uintptr_t)ret;
        if (i >= 1 && i <= 8 && ns < early) early = ns;
        if (i >= 2001 && i <= 2008 && ns < late) late = ns;
    }
    printf("threads: n=%ld early_ns=%llu late_ns=%llu\n", n, (unsigned long long)early,
           (unsigned long long)late);
    return 0;
}
