/* malloc_conformance.c - POSIX/glibc semantics of the malloc family, run
 * under LD_PRELOAD=libtensorleak.so by tests/integration/agent_conformance.sh.
 * Prints "FAIL: ..." per broken rule; exits 0 when all hold, 1 otherwise.
 * Leaks a few blocks of known sizes for the script to find in the trace:
 * malloc 12345, calloc 7*111, posix_memalign 4242, realloc 1000 -> 200000.
 * Lines "edge ...: ..." must be the same as without the agent, where
 * --glibc runs the checks that hold for glibc's malloc too and the edges.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL: %s:%d: %s: ", __FILE__, __LINE__, #cond);                                \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int aligned(const void *p, size_t a)
{
    return ((uintptr_t)p & (a - 1)) == 0;
}

/* Sizes from a volatile so the compiler cannot fold allocations away. */
static volatile size_t big = SIZE_MAX;

static void check_interposed(void)
{
    static const char *const names[] = {
        "malloc",        "calloc",   "realloc", "free",    "posix_memalign",
        "aligned_alloc", "memalign", "valloc",  "pvalloc", "malloc_usable_size",
        "reallocarray"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *f = dlsym(RTLD_DEFAULT, names[i]);
        Dl_info info;
        CHECK(f && dladdr(f, &info) && info.dli_fname && strstr(info.dli_fname, "libtensorleak.so"),
              "%s resolves to %s", names[i], f && dladdr(f, &info) ? info.dli_fname : "(none)");
    }
}

static void check_malloc(void)
{
    void *a = malloc(0), *b = malloc(0);
    CHECK(a && b && a != b, "malloc(0) gives unique non-NULL pointers");
    CHECK(aligned(a, 16), "malloc(0) 16-aligned");
    free(a);
    free(b);
    for (size_t n = 1; n < 300; n += 7) {
        char *p = malloc(n);
        CHECK(p && aligned(p, 16), "malloc(%zu) 16-aligned: %p", n, (void *)p);
        CHECK(malloc_usable_size(p) >= n, "usable %zu >= %zu", malloc_usable_size(p), n);
        memset(p, 0xab, n);
        free(p);
    }
    errno = 0;
    void *p = malloc(big);
    CHECK(p == NULL && errno == ENOMEM, "malloc(SIZE_MAX): %p errno %d", p, errno);
    errno = 0;
    p = malloc(big / 2 + 1);
    CHECK(p == NULL && errno == ENOMEM, "malloc(PTRDIFF_MAX+1): errno %d", errno);
    free(NULL);
    CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL) = 0");
}

static void check_calloc(void)
{
    size_t n = 1 << 20;
    unsigned char *p = malloc(n);
    memset(p, 0x5a, n);
    free(p);
    p = calloc(1, n);
    int zero = 1;
    for (size_t i = 0; i < n; i++)
        zero &= p[i] == 0;
    CHECK(p && zero, "calloc memory is zeroed");
    free(p);
    unsigned char *q = calloc(3, 5);
    CHECK(q && aligned(q, 16) && malloc_usable_size(q) >= 15 && !q[0] && !q[14], "calloc(3,5)");
    free(q);
    errno = 0;
    p = calloc(big / 2, 3);
    CHECK(p == NULL && errno == ENOMEM, "calloc overflow: errno %d", errno);
    errno = 0;
    p = calloc(big >> 30, big >> 30);
    CHECK(p == NULL && errno == ENOMEM, "calloc 2^66 overflow: errno %d", errno);
    void *z = calloc(0, 0);
    CHECK(z != NULL, "calloc(0,0) non-NULL");
    free(z);
}

static void check_realloc(void)
{
    char *p = realloc(NULL, 100);
    CHECK(p && aligned(p, 16), "realloc(NULL, 100) = malloc");
    for (int i = 0; i < 100; i++)
        p[i] = (char)i;
    p = realloc(p, 100000);
    int same = 1;
    for (int i = 0; i < 100; i++)
        same &= p[i] == (char)i;
    CHECK(p && same, "realloc grow keeps contents");
    CHECK(malloc_usable_size(p) >= 100000, "realloc grow usable");
    p = realloc(p, 10);
    same = 1;
    for (int i = 0; i < 10; i++)
        same &= p[i] == (char)i;
    CHECK(p && same && aligned(p, 16), "realloc shrink keeps contents");
    errno = 0;
    char *q = realloc(p, big);
    CHECK(q == NULL && errno == ENOMEM, "realloc(p, SIZE_MAX) fails with ENOMEM");
    CHECK(p[9] == 9, "realloc failure leaves p intact");
    q = realloc(p, 0);
    CHECK(q == NULL, "realloc(p, 0) frees and returns NULL (glibc)");

    p = reallocarray(NULL, 10, 10);
    CHECK(p != NULL && malloc_usable_size(p) >= 100, "reallocarray(NULL, 10, 10)");
    errno = 0;
    q = reallocarray(p, big / 2, 4);
    CHECK(q == NULL && errno == ENOMEM, "reallocarray overflow: errno %d", errno);
    if (!q) free(p);
}

static void check_aligned(void)
{
    void *p = (void *)1;
    errno = 0;
    CHECK(posix_memalign(&p, 3, 10) == EINVAL && errno == 0 && p == (void *)1,
          "posix_memalign(3): EINVAL, errno and *memptr untouched");
    CHECK(posix_memalign(&p, 4, 10) == EINVAL, "posix_memalign(4) < sizeof(void*): EINVAL");
    CHECK(posix_memalign(&p, 0, 10) == EINVAL, "posix_memalign(0): EINVAL");
    static const size_t aligns[] = {8, 16, 64, 4096, 1 << 16, 1 << 21};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        p = NULL;
        int r = posix_memalign(&p, aligns[i], 100);
        CHECK(r == 0 && p && aligned(p, aligns[i]), "posix_memalign(%zu): %d %p", aligns[i], r, p);
        CHECK(malloc_usable_size(p) >= 100, "posix_memalign usable");
        free(p);
    }
    p = NULL;
    CHECK(posix_memalign(&p, 64, 0) == 0 && p, "posix_memalign(64, 0) gives a pointer");
    free(p);
    errno = 0;
    CHECK(posix_memalign(&p, 64, big) == ENOMEM && errno == 0,
          "posix_memalign huge: ENOMEM, errno untouched (%d)", errno);

    /* aligned_alloc(3) and (0): glibc's answer depends on its version
     * (print_edges). */
    p = aligned_alloc(256, 1000);
    CHECK(p && aligned(p, 256), "aligned_alloc(256)");
    free(p);
    p = aligned_alloc(4, 10);
    CHECK(p && aligned(p, 16), "aligned_alloc(4) at least 16-aligned");
    free(p);
    errno = 0;
    p = aligned_alloc(64, big);
    CHECK(p == NULL && errno == ENOMEM, "aligned_alloc huge: ENOMEM");

    p = memalign(24, 10); /* rounded up to 32, like glibc */
    CHECK(p && aligned(p, 32), "memalign(24) 32-aligned: %p", p);
    free(p);
    p = memalign(1, 10);
    CHECK(p && aligned(p, 16), "memalign(1)");
    free(p);
    p = memalign(8192, 10);
    CHECK(p && aligned(p, 8192), "memalign(8192)");
    free(p);
    errno = 0;
    p = memalign(big / 2 + 2, 10);
    CHECK(p == NULL && errno == EINVAL, "memalign(SIZE_MAX/2+2): EINVAL (errno %d)", errno);

    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    p = valloc(100);
    CHECK(p && aligned(p, page) && malloc_usable_size(p) >= 100, "valloc page-aligned");
    free(p);
    p = pvalloc(100);
    CHECK(p && aligned(p, page) && malloc_usable_size(p) >= page, "pvalloc rounds to a page");
    free(p);
    p = pvalloc(page + 1);
    CHECK(p && aligned(p, page) && malloc_usable_size(p) >= 2 * page, "pvalloc(page+1)");
    free(p);
    p = pvalloc(0);
    CHECK(p && aligned(p, page) && malloc_usable_size(p) >= page, "pvalloc(0) is a page");
    free(p);
    errno = 0;
    p = pvalloc(big);
    CHECK(p == NULL && errno == ENOMEM, "pvalloc(SIZE_MAX): ENOMEM");
}

/* "edge NAME: RESULT" for calls whose answer is glibc's choice (its
 * version, the overcommit heuristic): the script runs this without the
 * agent too and compares these lines. */
static void edge(const char *name, void *p, int err, size_t align)
{
    printf("edge %s: %s\n", name,
           p               ? (aligned(p, align) ? "aligned" : "misaligned")
           : err == ENOMEM ? "ENOMEM"
           : err == EINVAL ? "EINVAL"
                           : "other error");
    free(p);
}

static void print_edges(void)
{
    size_t tib = (size_t)1 << 40;
    errno = 0;
    void *p = aligned_alloc(3, 10);
    edge("aligned_alloc(3, 10)", p, errno, 4);
    errno = 0;
    p = aligned_alloc(0, 10);
    edge("aligned_alloc(0, 10)", p, errno, 16);
    errno = 0;
    p = aligned_alloc(24, 10);
    edge("aligned_alloc(24, 10)", p, errno, 32);
    errno = 0;
    p = aligned_alloc(tib, 1);
    edge("aligned_alloc(2^40, 1)", p, errno, tib);
    errno = 0;
    p = memalign(tib, 1);
    edge("memalign(2^40, 1)", p, errno, tib);
    p = NULL;
    int r = posix_memalign(&p, tib, 1);
    edge("posix_memalign(2^40, 1)", p, r, tib);
    errno = 0;
    p = memalign(48, 10);
    edge("memalign(48, 10)", p, errno, 64);
}

static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, res = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2) res = 0;
        fclose(f);
    }
    return res * (size_t)sysconf(_SC_PAGESIZE);
}

/* mallinfo2, mallinfo, malloc_info, malloc_stats see a live 64 MiB block;
 * after its free, malloc_trim gives its pages back. */
static void check_heap_stats(void)
{
    size_t n = (size_t)64 << 20;
    size_t rss0 = rss_bytes();
    char *b = malloc(n);
    CHECK(b != NULL, "malloc(64 MiB)");
    if (!b) return;
    memset(b, 1, n);
    struct mallinfo2 m2 = mallinfo2();
    CHECK(m2.uordblks + m2.hblkhd >= n, "mallinfo2: %zu + %zu in use", m2.uordblks, m2.hblkhd);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* still exported, still used */
    struct mallinfo m = mallinfo();
#pragma GCC diagnostic pop
    CHECK((size_t)(unsigned)m.uordblks + (size_t)(unsigned)m.hblkhd >= n, "mallinfo: %d + %d",
          m.uordblks, m.hblkhd);
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    CHECK(f && malloc_info(0, f) == 0, "malloc_info(0, f) = 0");
    CHECK(f && malloc_info(1, f) == EINVAL, "malloc_info(1, f) = EINVAL");
    if (f) fclose(f);
    CHECK(doc && strncmp(doc, "<malloc version=\"1\">\n", 21) == 0 && strstr(doc, "</malloc>\n"),
          "malloc_info document: %.40s", doc ? doc : "(none)");
    free(doc);
    /* malloc_stats writes to stderr: catch it in a file. */
    FILE *tmp = tmpfile();
    int saved = dup(2);
    unsigned long sys = 0, used = 0;
    if (tmp && saved >= 0 && dup2(fileno(tmp), 2) == 2) {
        malloc_stats();
        dup2(saved, 2);
        rewind(tmp);
        char l[256];
        int total = 0;
        while (fgets(l, sizeof l, tmp)) {
            if (strncmp(l, "Total (incl. mmap):", 19) == 0) total = 1;
            if (total) {
                sscanf(l, "system bytes = %lu", &sys);
                sscanf(l, "in use bytes = %lu", &used);
            }
        }
    }
    if (saved >= 0) close(saved);
    if (tmp) fclose(tmp);
    CHECK(used >= n && sys >= used, "malloc_stats total: system %lu, in use %lu", sys, used);
    free(b);
    malloc_trim(0);
    size_t rss1 = rss_bytes();
    CHECK(rss1 < rss0 + (n >> 2), "after free + malloc_trim: RSS %zu KiB, before %zu KiB",
          rss1 >> 10, rss0 >> 10);
}

/* The blocks the script looks for in the trace. */
static void *leaks[4];

static void leak_known_blocks(void)
{
    leaks[0] = malloc(12345);
    leaks[1] = calloc(7, 111);
    if (posix_memalign(&leaks[2], 64, 4242) != 0) leaks[2] = NULL;
    void *r = malloc(1000);
    leaks[3] = realloc(r, 200000);
    printf("leaked %p %p %p %p\n", leaks[0], leaks[1], leaks[2], leaks[3]);
}

/* With the kernel's default overcommit heuristic, glibc's malloc of more
 * than RAM + swap fails with ENOMEM (its mmap is refused); so must ours. */
static void check_overcommit_heuristic(void)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    int mode = -1;
    if (f) {
        if (fscanf(f, "%d", &mode) != 1) mode = -1;
        fclose(f);
    }
    if (mode != 0) return;
    size_t huge = (size_t)1 << 46; /* 64 TiB: more than any test machine */
    errno = 0;
    void *p = malloc(huge);
    CHECK(p == NULL && errno == ENOMEM, "malloc(64 TiB): %p errno %d", p, errno);
    void *q = malloc(16);
    errno = 0;
    void *r = realloc(q, huge);
    CHECK(r == NULL && errno == ENOMEM, "realloc(p, 64 TiB): %p errno %d", r, errno);
    free(r ? r : q);
    void *a = NULL;
    CHECK(posix_memalign(&a, 64, huge) == ENOMEM && a == NULL, "posix_memalign(64 TiB)");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--glibc") == 0) { /* the rules glibc shares, its edges */
        check_heap_stats();
        print_edges();
        printf("%d failures\n", failures);
        return failures ? 1 : 0;
    }
    check_interposed();
    check_overcommit_heuristic();
    check_malloc();
    check_calloc();
    check_realloc();
    check_aligned();
    check_heap_stats();
    print_edges();
    leak_known_blocks();
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
