/* free_rss.c - freed memory goes back to the kernel under the agent as it
 * does under glibc (issue 28, item 9). Prints "NAME rss=KiB lazy=KiB" after
 * each step, from /proc/self/smaps_rollup (Rss, LazyFree).
 * Run: free_rss big   - blocks of 32 MiB and more, each freed at once
 *      free_rss mid   - 64 blocks of 4 MiB freed, then small allocations
 *                       (40000 B: past the thread cache, so jemalloc
 *                       ticks its decay) for up to 15 s: prints the seconds the freed pages
 *                       took to become lazily freed (MADV_FREE)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void show(const char *name)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long rss = -1, lazy = -1, v;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "Rss: %ld", &v) == 1) rss = v;
        if (sscanf(line, "LazyFree: %ld", &v) == 1) lazy = v;
    }
    if (f) fclose(f);
    printf("%s rss=%ld lazy=%ld\n", name, rss, lazy);
    fflush(stdout);
}

static void *touched(void *p, size_t n)
{
    if (!p) exit(2);
    memset(p, 1, n);
    return p;
}

static int big(void)
{
    show("start");
    free(touched(malloc((size_t)256 << 20), (size_t)256 << 20));
    show("malloc");
    free(touched(calloc(1, (size_t)64 << 20), (size_t)64 << 20));
    show("calloc");
    void *p;
    if (posix_memalign(&p, 64, (size_t)48 << 20)) return 2;
    free(touched(p, (size_t)48 << 20));
    show("memalign");
    free(touched(realloc(touched(malloc(1024), 1024), (size_t)40 << 20), (size_t)40 << 20));
    show("realloc");
    return 0;
}

static int mid(void)
{
    enum { N = 64 };
    static void *b[N];
    show("start");
    for (int i = 0; i < N; i++)
        b[i] = touched(malloc((size_t)4 << 20), (size_t)4 << 20);
    show("held");
    for (int i = 0; i < N; i++)
        free(b[i]);
    show("freed");
    struct timespec t0, t, nap = {0, 50 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        for (int i = 0; i < 100; i++)
            free(touched(malloc(40000), 40000));
        nanosleep(&nap, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
        double s = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
        FILE *f = fopen("/proc/self/smaps_rollup", "r");
        char line[256];
        long lazy = 0, rss = 0, v;
        while (f && fgets(line, sizeof line, f)) {
            if (sscanf(line, "LazyFree: %ld", &v) == 1) lazy = v;
            if (sscanf(line, "Rss: %ld", &v) == 1) rss = v;
        }
        if (f) fclose(f);
        /* given back (purged) or reclaimable (lazily freed): 200 MiB of 256 */
        if (rss - lazy < 80 * 1024 || s > 15) {
            printf("settled after %.1f s\n", s);
            break;
        }
    }
    show("later");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "big") == 0) return big();
    if (argc == 2 && strcmp(argv[1], "mid") == 0) return mid();
    fprintf(stderr, "usage: free_rss big|mid\n");
    return 2;
}
