/* hooks.c - the interposed malloc family of libtensorleak.so, and nothing
 * else; the other entry points are in hooks_cxx.c (operator new/delete, c10
 * storages), hooks_proc.c (exit, exec, signals, mmap) and hooks_cuda.c.
 *
 * Every hook checks the thread-local reentrancy guard first (hooks.h).
 * Semantics follow POSIX and glibc exactly (errno values, alignment,
 * realloc(p, 0) frees).
 */
#include <config.h> /* autoconf: HAVE_FREE_SIZED */

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/heapinfo.h"
#include "agent/api.h"
#include "agent/follow.h"
#include "agent/hooks.h"
#include "agent/record.h"
#include "common/trace_format.h"

/* jemalloc options, read by jemalloc at its first allocation; the user's
 * MALLOC_CONF (and /etc/malloc.conf) still apply on top of these.
 *
 * bench/w2_memalign.c (200,000 x posix_memalign(64, 1-16 MiB), touch first
 * and last byte, free), gcc -O2, 2-CPU x86-64 VM, Debian jemalloc 5.3.0,
 * glibc 2.36, median of 3, us/iteration:
 *   glibc                                                      0.21-0.22
 *   LD_PRELOAD=libjemalloc.so.2 (defaults)                     5.04
 *   MALLOC_CONF=oversize_threshold:0                           5.69
 *   ...,dirty_decay_ms:600000,muzzy_decay_ms:0                 6.26
 *   background_thread:true                                     5.96
 *   oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1   0.33
 *   ...,narenas:1,tcache:false (no gain)                       0.32-0.34
 *   ...,tcache_max:16777216 (worse)                            1.08
 *   libtensorleak.so, TENSORLEAK_DISABLE=1 (that setting)      0.33
 *   libtensorleak.so tracing (stack + record per event)        0.53
 *   ...,dirty_decay_ms:10000,muzzy_decay_ms:-1 (this setting,
 *     oversize_threshold:33554432), TENSORLEAK_DISABLE=1       0.32-0.41
 * A muzzy decay (muzzy_decay_ms:0 or 10000, dirty 1-30 s) purges the big
 * extents' pages with MADV_DONTNEED and the next use pays page faults
 * again: 5.7-6.5 us (25x glibc). muzzy_decay_ms:-1 leaves the dirty decay
 * lazy: freed pages of blocks under 32 MiB stay for reuse and are turned
 * over to the kernel with MADV_FREE over jemalloc's 10 s (its default),
 * at no cost in W2 (3M iterations: 0.32-0.34 against 0.36 us with
 * dirty_decay_ms:-1, which kept them resident up to the peak). Blocks of
 * 32 MiB and more (TL_HEAPINFO_OVERSIZE: glibc mmaps and unmaps every one)
 * go to the oversize arena, which tl_heapinfo_oversize_seen makes purge at
 * free: `del` of a 2 GiB numpy array leaves VmRSS at 29 MB (glibc 26 MB;
 * oversize_threshold:0 and no decay, before: 2079 MB until exit).
 * Command: LD_PRELOAD=$PWD/.libs/libtensorleak.so ./w2_memalign */
#define CONF "oversize_threshold:33554432,dirty_decay_ms:10000,muzzy_decay_ms:-1"
TL_EXPORT const char *malloc_conf = CONF;

/* Under a finite RLIMIT_AS (`ulimit -v`) jemalloc's retained address space
 * (opt.retain: never unmapped, grown geometrically) takes a fifth of it:
 * 10 MB blocks under a 400 MB limit, plain 40, the agent 29, with
 * retain:false 36 (100 MB: 9, 4, 7). jemalloc reads malloc_conf once, at
 * its own initialisation, which comes before any constructor: so the
 * choice is made by this IFUNC resolver, which the dynamic linker runs
 * while relocating this library (after its other relocations, -z now:
 * getrlimit is bound), before anything can call malloc. */
static void conf_probe_impl(void) {}

static void (*resolve_conf_probe(void))(void)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
        malloc_conf = CONF ",retain:false";
    return conf_probe_impl;
}

/* Does nothing; referenced so that its resolver runs (hooks_init). */
void tl_hooks_conf_probe(void) __attribute__((ifunc("resolve_conf_probe")));

/* No limit before the constructor has run (hooks.h). */
uint64_t tl_hooks_refuse_above = UINT64_MAX;

void *(*tl_hooks_je_malloc)(size_t);
void (*tl_hooks_je_free)(void *);

/* jemalloc's malloc and free (hooks.h), looked up in jemalloc's own module
 * (the process's malloc and free are ours) and checked to lie in it. */
static void jemalloc_fast_init(void)
{
    TL_GUARD_SCOPE; /* dlopen and dlsym may allocate */
    Dl_info je, m, f;
    if (!dladdr((void *)&mallocx, &je) || !je.dli_fname) return;
    void *h = dlopen(je.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return;
    void *pm = dlsym(h, "malloc"), *pf = dlsym(h, "free");
    if (pm && pf && dladdr(pm, &m) && dladdr(pf, &f) && m.dli_fbase == je.dli_fbase &&
        f.dli_fbase == je.dli_fbase) {
        *(void **)&tl_hooks_je_malloc = pm;
        *(void **)&tl_hooks_je_free = pf;
    }
    dlclose(h); /* jemalloc stays: libtensorleak.so needs it */
}

static void overcommit_init(void)
{
    char mode = 0;
    int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, &mode, 1);
    close(fd);
    struct sysinfo si;
    if (n == 1 && mode == '0' && sysinfo(&si) == 0 && si.mem_unit > 0)
        tl_hooks_refuse_above = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}

TL_EXPORT void *malloc(size_t size)
{
    if (tl_tsd.guard || !tl_agent_recording()) return raw_alloc(size, 0);
    return tracked_alloc(TL_KIND_MALLOC, size, size, 0);
}

TL_EXPORT void *calloc(size_t n, size_t size)
{
    size_t total;
    if (tl_tsd.guard || !tl_agent_recording()) {
        if (__builtin_mul_overflow(n, size, &total)) {
            errno = ENOMEM;
            return NULL;
        }
        return raw_alloc(total, MALLOCX_ZERO);
    }
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return tracked_alloc(TL_KIND_CALLOC, total, total, MALLOCX_ZERO);
}

TL_EXPORT void free(void *p)
{
    free_impl(p);
}

static void *realloc_untracked(void *p, size_t size)
{
    if (!p) return raw_alloc(size, 0);
    /* Marked freed before rallocx: once it moved the block, another thread
     * may be handed p and mark it live. */
    check_live("realloc", p, true);
    if (size == 0) { /* glibc: realloc(p, 0) frees p and returns NULL */
        raw_free(p);
        return NULL;
    }
    int saved = errno; /* as in raw_alloc */
    void *q = too_big(size) ? NULL : rallocx(p, size < MIN_ALIGN ? MIN_ALIGN : size, 0);
    if (UNLIKELY(!q)) {
        errno = ENOMEM;
        tl_blocks_mark(p); /* still p's */
        return NULL;
    }
    errno = saved;
    if (UNLIKELY(size >= TL_HEAPINFO_OVERSIZE)) tl_heapinfo_oversize_seen(q);
    tl_blocks_mark(q);
    return q;
}

static void *realloc_tracked(void *p, size_t size)
{
    if (!p) return tracked_alloc(TL_KIND_MALLOC, size, size, 0);
    check_live("realloc", p, false);
    TL_GUARD_SCOPE;
    if (size == 0) {
        check_live("realloc", p, true);
        tl_record_free(TL_KIND_FREE, p);
        raw_free(p);
        return NULL;
    }
    /* Resize in place, or allocate-copy-free ourselves, so the REALLOC record
     * is timed while both blocks exist: no other thread can have been handed
     * the old address before the record says it was released. */
    size_t want = size < MIN_ALIGN ? MIN_ALIGN : size;
    void *q = p;
    if (too_big(size)) {
        errno = ENOMEM;
        return NULL;
    }
    int saved = errno; /* as in raw_alloc */
    /* While the leak scan is on (hooks.h, scan_zero) the bytes of a block
     * past its size are zero: a moved block copies the program's bytes
     * alone (up to size) into a zeroed one, one resized in place clears the
     * rest of its size class (a shrink leaves the old words there, and a
     * growth in place within the class would hand them out again). */
    int zero = scan_zero(want);
    if (xallocx(p, want, 0, zero) != nallocx(want, 0)) {
        q = mallocx(want, zero);
        if (UNLIKELY(!q)) {
            errno = ENOMEM;
            return NULL;
        }
        errno = saved;
        if (UNLIKELY(want >= TL_HEAPINFO_OVERSIZE)) tl_heapinfo_oversize_seen(q);
        tl_blocks_mark(q);
        size_t old = sallocx(p, 0);
        memcpy(q, p, old < size ? old : size);
    } else if (zero) {
        size_t usable = sallocx(p, 0);
        if (usable > size) memset((char *)p + size, 0, usable - size);
    }
    tl_record_realloc(p, q, size);
    if (q != p) {
        check_live("realloc", p, true);
        raw_free(p);
    } else {
        tl_blocks_mark(p); /* resized in place: this thread's event at p now */
    }
    return q;
}

TL_EXPORT void *realloc(void *p, size_t size)
{
    if (tl_tsd.guard || !tl_agent_recording()) return realloc_untracked(p, size);
    return realloc_tracked(p, size);
}

TL_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (tl_tsd.guard || !tl_agent_recording()) {
        if (__builtin_mul_overflow(n, size, &total)) {
            errno = ENOMEM;
            return NULL;
        }
        return realloc_untracked(p, total);
    }
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_tracked(p, total);
}

static inline void *aligned_any(bool track, size_t align, size_t size)
{
    if (align < MIN_ALIGN) align = MIN_ALIGN;
    /* jemalloc reserves size + align of address space for a big alignment
     * (2^40: a TiB each time); glibc's mmap of as much is refused by the
     * overcommit heuristic, so the same request fails here (ENOMEM). */
    size_t reserved;
    if (align > MIN_ALIGN &&
        (__builtin_add_overflow(size, align, &reserved) || too_big(reserved))) {
        errno = ENOMEM;
        return NULL;
    }
    if (!track) return raw_alloc(size, MALLOCX_ALIGN(align));
    return tracked_alloc(TL_KIND_MEMALIGN, size, size, MALLOCX_ALIGN(align));
}

TL_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    bool track = tracking();
    /* POSIX: a power of two multiple of sizeof(void *), else EINVAL; the
     * error is returned and errno is left alone. */
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    int saved = errno;
    void *p = aligned_any(track, align, size);
    errno = saved;
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

/* glibc: alignments above SIZE_MAX/2+1 fail with EINVAL; others that are not
 * a power of two are rounded up to the next one. */
static void *memalign_impl(bool track, size_t align, size_t size)
{
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    if (align & (align - 1)) {
        size_t a = MIN_ALIGN;
        while (a < align)
            a <<= 1;
        align = a;
    }
    return aligned_any(track, align, size);
}

/* glibc >= 2.38 (C17 DR 460): aligned_alloc fails with EINVAL unless the
 * alignment is a power of two; before, aligned_alloc was memalign (rounds
 * up). The host's glibc decides, so a program sees what it sees without us. */
static bool aligned_alloc_strict(void)
{
    static int strict = -1; /* racy first read: every thread computes the same */
    if (strict < 0) {
        const char *v = gnu_get_libc_version(); /* "2.36": a static string */
        unsigned major = 0, minor = 0;
        while (*v >= '0' && *v <= '9')
            major = major * 10 + (unsigned)(*v++ - '0');
        if (*v == '.') v++;
        while (*v >= '0' && *v <= '9')
            minor = minor * 10 + (unsigned)(*v++ - '0');
        strict = major > 2 || (major == 2 && minor >= 38);
    }
    return strict;
}

TL_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    bool track = tracking();
    if ((align == 0 || (align & (align - 1))) && aligned_alloc_strict()) {
        errno = EINVAL;
        return NULL;
    }
    return memalign_impl(track, align, size);
}

TL_EXPORT void *memalign(size_t align, size_t size)
{
    bool track = tracking();
    return memalign_impl(track, align, size);
}

TL_EXPORT void *valloc(size_t size)
{
    bool track = tracking();
    return memalign_impl(track, (size_t)sysconf(_SC_PAGESIZE), size);
}

TL_EXPORT void *pvalloc(size_t size)
{
    bool track = tracking();
    size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded;
    if (__builtin_add_overflow(size, page - 1, &rounded)) {
        errno = ENOMEM;
        return NULL;
    }
    rounded &= ~(page - 1);
    /* pvalloc(0) is one page, like glibc's minimum. */
    return memalign_impl(track, page, rounded ? rounded : page);
}

TL_EXPORT size_t malloc_usable_size(void *p)
{
    return p ? sallocx(p, 0) : 0; /* no state touched: nothing to guard */
}

/* --- heap statistics: jemalloc's, not glibc's empty heap (heapinfo.h) --- */

TL_EXPORT struct mallinfo2 mallinfo2(void)
{
    TL_GUARD_SCOPE; /* mallctl may allocate */
    tl_heapinfo_t h;
    tl_heapinfo_read(&h);
    struct mallinfo2 m = {0};
    m.arena = h.active; /* glibc: bytes of the heap obtained from the system */
    m.ordblks = 1;
    m.uordblks = h.allocated;
    m.fordblks = h.active > h.allocated ? h.active - h.allocated : 0;
    return m;
}

/* The int fields wrap like glibc's (its own mallinfo truncates the same). */
TL_EXPORT struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo m = {0};
    m.arena = (int)m2.arena;
    m.ordblks = (int)m2.ordblks;
    m.uordblks = (int)m2.uordblks;
    m.fordblks = (int)m2.fordblks;
    return m;
}

TL_EXPORT int malloc_trim(size_t pad)
{
    (void)pad; /* jemalloc purges whole extents; there is no top chunk to pad */
    TL_GUARD_SCOPE;
    return tl_heapinfo_trim() ? 0 : 1;
}

TL_EXPORT void malloc_stats(void)
{
    TL_GUARD_SCOPE;
    tl_heapinfo_t h;
    tl_heapinfo_read(&h);
    char buf[512];
    size_t n = tl_heapinfo_stats_text(&h, buf, sizeof buf);
    if (write(2, buf, n) < 0) {
        /* glibc ignores a failed write to stderr too */
    }
}

TL_EXPORT int malloc_info(int options, FILE *fp)
{
    if (options != 0) return EINVAL; /* glibc: no options defined */
    TL_GUARD_SCOPE;                  /* the program's FILE may allocate its buffer */
    tl_heapinfo_t h;
    tl_heapinfo_read(&h);
    return tl_heapinfo_xml(&h, fp);
}

#ifdef HAVE_FREE_SIZED
TL_EXPORT void free_sized(void *p, size_t size)
{
    (void)size;
    free(p);
}
#endif

#ifdef HAVE_FREE_ALIGNED_SIZED
TL_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    free(p);
}
#endif

/* tl_api_size_class: a live block of ours is jemalloc's (the one linked
 * here), which sallocx may be asked about. Only small objects are asked
 * for their class's lower end (api.c, TL_API_VIEW_OBJECT_MAX): a few
 * steps down, jemalloc's classes being at most 1/4 apart. */
static void size_class(const void *obj, size_t *usable, size_t *lo)
{
    *usable = *lo = sallocx((void *)(uintptr_t)obj, 0);
    if (*usable > TL_API_VIEW_OBJECT_MAX) return;
    while (*lo > 1 && nallocx(*lo - 1, 0) == *usable)
        --*lo;
}

__attribute__((constructor)) static void hooks_init(void)
{
    tl_hooks_conf_probe();
    tl_api_size_class = size_class;
    overcommit_init();
    jemalloc_fast_init();
    tl_follow_init(); /* environ as the run gave it, before the agent's putenv */
    tl_agent_init();
}

__attribute__((destructor)) static void hooks_fini(void)
{
    tl_agent_fini();
}
