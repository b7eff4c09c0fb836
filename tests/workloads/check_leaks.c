/* check_leaks.c - C workloads with known bytes for `tensorleak check`
 * (tests/integration/check_*.sh). No stdio while measuring: its buffer
 * would be one more block. Modes (argv[1]):
 *   none          malloc and free: nothing leaks
 *   print         prints a line (stdio allocates its buffer: not a leak)
 *   leak          leak_a keeps 1000 B, leak_b keeps 2000 B
 *   leak2         leak_a keeps 1000 B, leak_b keeps 5000 B (diff, baseline)
 *   storage       a 4096 B block registered as a storage, one 1024 B view of
 *                 it kept: 4096 B storage leak, 3072 B pinned
 *   peak          1 MiB allocated and freed
 *   regions       nested: outer keeps 100 B, inner (inside it) keeps 200 B
 *                 and frees 50 B: inner leaks 200 B, outer 300 B
 *   grow N        region "step" N times: grow_site keeps 1024 B each
 *                 iteration; warm_site 8192 B in the first only; cache_site
 *                 4096 B in the second only (grows once, then plateaus)
 *   plateau N     the same without grow_site
 *   burst N       grow_site N times in one C loop, no region: a loop the
 *                 trace cannot show (no Python frames, no region boundary)
 *   sampled N     region "step" N times: 400 blocks of 1000-15763 B (3352600 B
 *                 in all, none big enough to be always recorded) made and
 *                 kept inside each iteration, freed after its end
 *   exit N        leak, then exit with status N
 *   kill          leak, then die of SIGKILL
 *   biglost       100000 B (a big block: always recorded) definitely lost
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorleak.h"

static void *volatile keep[64];
static int nkeep;

static void hold(void *p)
{
    if (nkeep < 64) keep[nkeep++] = p;
}

/* malloc and free n bytes; volatile so -O2 cannot drop the pair */
__attribute__((noinline)) static void churn(size_t n)
{
    void *volatile p = malloc(n);
    free(p);
}

__attribute__((noinline)) static void leak_a(void)
{
    hold(malloc(1000));
}

__attribute__((noinline)) static void leak_b(size_t n)
{
    hold(malloc(n));
}

__attribute__((noinline)) static void lose_big(void)
{
    char *volatile p = malloc(100000);
    if (p) p[0] = 1;
    p = NULL;
}

__attribute__((noinline)) static void grow_site(void)
{
    hold(malloc(1024));
}

__attribute__((noinline)) static void warm_site(void)
{
    hold(malloc(8192));
}

__attribute__((noinline)) static void cache_site(void)
{
    hold(malloc(4096));
}

static void steps(int n, int grow)
{
    for (int i = 0; i < n; i++) {
        tl_region_begin("step");
        void *volatile scratch = malloc(300); /* freed: no leak */
        if (grow) grow_site();
        if (i == 0) warm_site();
        if (i == 1) cache_site();
        free(scratch);
        tl_region_end("step");
    }
}

/* Small blocks kept through each iteration of region "step": the default
 * mode samples them; the same ones in every iteration and every run. */
static void sampled_steps(int n)
{
    static void *volatile blocks[400];
    for (int it = 0; it < n; it++) {
        tl_region_begin("step");
        for (int i = 0; i < 400; i++)
            blocks[i] = malloc(1000 + 37 * (size_t)i);
        tl_region_end("step");
        for (int i = 0; i < 400; i++)
            free(blocks[i]);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(mode, "none")) {
        churn(100);
    } else if (!strcmp(mode, "print")) {
        printf("check_leaks: hello\n");
    } else if (!strcmp(mode, "leak") || !strcmp(mode, "leak2") || !strcmp(mode, "exit") ||
               !strcmp(mode, "kill")) {
        leak_a(); /* one call line for both leak modes: `diff` matches the sites */
        leak_b(strcmp(mode, "leak2") ? 2000 : 5000);
        if (!strcmp(mode, "exit")) exit(n);
        if (!strcmp(mode, "kill")) kill(getpid(), SIGKILL);
    } else if (!strcmp(mode, "storage")) {
        static int view; /* the view's id: any unique address */
        char *s = malloc(4096);
        if (!s) return 1;
        memset(s, 0, 4096);
        tl_storage_register(s, 4096, "pool");
        tl_view_begin(&view, s, 0, 1024, 1024, "slice");
        hold(s);
    } else if (!strcmp(mode, "biglost")) {
        lose_big();
    } else if (!strcmp(mode, "peak")) {
        churn(1 << 20);
    } else if (!strcmp(mode, "regions")) {
        tl_region_begin("outer");
        hold(malloc(100));
        tl_region_begin("inner");
        hold(malloc(200));
        churn(50);
        tl_region_end("inner");
        tl_region_end("outer");
    } else if (!strcmp(mode, "grow") || !strcmp(mode, "plateau")) {
        steps(n, !strcmp(mode, "grow"));
    } else if (!strcmp(mode, "sampled")) {
        sampled_steps(n);
    } else if (!strcmp(mode, "burst")) {
        for (int i = 0; i < n; i++)
            grow_site();
    } else {
        return 64;
    }
    return 0;
}
