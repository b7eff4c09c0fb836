/* hostile_errno.c - errno after successful allocations under an address
 * space limit a little above what the process already maps (argv[1] KiB
 * more): glibc leaves errno alone when it succeeds, and so must the agent,
 * whose shadow leaves and jemalloc's own reservations are refused there.
 * Prints "successes=N errno_changed=M"; exit 0, 2 when the limit cannot
 * be set. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int successes, changed;

/* The canary errno value before each call: no allocator error code. */
#define CANARY 4242

static void note(const void *p)
{
    if (!p) return;
    successes++;
    if (errno != CANARY) changed++;
}

static unsigned long vm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long v = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmSize:", 7)) v = strtoul(line + 7, NULL, 10);
    if (f) fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    unsigned long extra = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    struct rlimit r;
    r.rlim_cur = r.rlim_max = (rlim_t)(vm_kib() + extra) << 10;
    if (setrlimit(RLIMIT_AS, &r) != 0) return 2;
    for (size_t size = 8; size <= (1u << 20); size += size / 4 + 8) {
        errno = CANARY;
        void *p = malloc(size);
        note(p);
        errno = CANARY;
        void *q = calloc(1, size);
        note(q);
        errno = CANARY;
        void *a = aligned_alloc(64, size);
        note(a);
        errno = CANARY;
        void *m = memalign(4096, size);
        note(m);
        errno = CANARY;
        void *g = p ? realloc(p, size * 2) : NULL;
        note(g);
        if (g) p = g;
        errno = CANARY;
        free(p);
        free(q);
        free(a);
        free(m);
        if (errno != CANARY) changed++;
    }
    errno = CANARY;
    void *p = malloc(10);
    p = realloc(p, 0); /* glibc: frees, returns NULL, errno untouched */
    if (errno != CANARY) changed++;
    free(p);
    printf("successes=%d errno_changed=%d\n", successes, changed);
    return 0;
}
