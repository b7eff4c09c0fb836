/* agent_threads.c - many short threads, one at a time (issue 9).
 * usage: agent_threads N
 * Starts N threads one after the other (create, join); each makes one
 * malloc(100)/free pair, except threads 1-8 and 2001-2008, which time
 * PAIRS malloc(100)/free pairs each. Prints
 * "threads: n=N early_ns=E late_ns=L": the best ns per pair of the early
 * and of the late group (L is about E when a thread past 1,023 gets a
 * counter slot of its own, as the first ones do). Every thread also has a
 * pthread key whose destructor makes a malloc(3000)/free pair in each of
 * glibc's PTHREAD_DESTRUCTOR_ITERATIONS (4) rounds, the last one after the
 * agent's own destructor.
 */
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAIRS 20000

static pthread_key_t key;

static void key_end(void *round)
{
    char *volatile p = malloc(3000);
    if (p) p[0] = 1;
    free(p);
    if ((uintptr_t)round < PTHREAD_DESTRUCTOR_ITERATIONS)
        pthread_setspecific(key, (void *)((uintptr_t)round + 1));
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *work(void *arg)
{
    long i = (long)(intptr_t)arg;
    pthread_setspecific(key, (void *)(uintptr_t)1);
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
    if (pthread_key_create(&key, key_end) != 0) return 1;
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
