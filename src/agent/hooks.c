/* hooks.c - the interposed entry points of libtensorleak.so, and nothing else.
 *
 * Every hook checks the thread-local reentrancy guard first; nested calls
 * (libunwind, libc, our own code) and calls before init or after finishing go
 * straight to jemalloc's extended API, untracked. Semantics follow POSIX and
 * glibc exactly (errno values, alignment, realloc(p, 0) frees).
 */
#include <config.h> /* autoconf: HAVE_FREE_SIZED */

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "agent/agent.h"
#include "agent/blocks.h"
#include "agent/c10.h"
#include "agent/leakscan.h"
#include "agent/config.h"
#include "agent/cudart.h"
#include "agent/endsig.h"
#include "agent/heapinfo.h"
#include "agent/record.h"
#include "agent/stack.h"
#include "common/trace_format.h"

#define TL_EXPORT   __attribute__((visibility("default")))
#define MIN_ALIGN   16u /* glibc's MALLOC_ALIGNMENT on x86-64: malloc results are 16-aligned */
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

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
 *   libtensorleak.so, TENSORLEAK_DISABLE=1 (this setting)      0.33
 *   libtensorleak.so tracing (stack + record per event)        0.53
 * Any decay purges the dirty pages of the big extents and the next use pays
 * page faults again (25x glibc); oversize_threshold:0 keeps >8 MiB blocks out
 * of the dedicated arena that purges immediately. The price: freed pages stay
 * resident up to the peak (like glibc's heap below its trim threshold).
 * The remaining ~0.1 us/op over glibc is jemalloc's large-extent path; it is
 * small next to the agent's own cost per recorded event.
 * Command: LD_PRELOAD=$PWD/.libs/libtensorleak.so ./w2_memalign */
TL_EXPORT const char *malloc_conf = "oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1";

/* Requests above this many bytes fail with ENOMEM. glibc serves big blocks
 * with mmap, which the kernel's default overcommit heuristic
 * (vm.overcommit_memory = 0, mm/util.c __vm_enough_memory) refuses when one
 * request exceeds RAM + swap; jemalloc maps with MAP_NORESERVE there and
 * would succeed, so a program that fails cleanly without the agent (PyTorch:
 * "DefaultCPUAllocator: can't allocate memory") would run on under it until
 * the OOM killer came. Set once by the constructor; no limit before. */
static uint64_t refuse_above = UINT64_MAX;

static void overcommit_init(void)
{
    char mode = 0;
    int fd = open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, &mode, 1);
    close(fd);
    struct sysinfo si;
    if (n == 1 && mode == '0' && sysinfo(&si) == 0 && si.mem_unit > 0)
        refuse_above = ((uint64_t)si.totalram + si.totalswap) * si.mem_unit;
}

static inline bool too_big(size_t size)
{
    return UNLIKELY((uint64_t)size > refuse_above);
}

static inline void *raw_alloc(size_t size, int flags)
{
    if (too_big(size)) {
        errno = ENOMEM;
        return NULL;
    }
    /* jemalloc leaves errno at ENOMEM after a success when one of its own
     * mappings was refused (RLIMIT_AS) and it fell back: glibc does not. */
    int saved = errno;
    void *p = mallocx(size < MIN_ALIGN ? MIN_ALIGN : size, flags);
    if (UNLIKELY(!p)) {
        errno = ENOMEM;
        return NULL;
    }
    errno = saved;
    tl_blocks_mark(p);
    return p;
}

/* p (non-NULL) is about to be freed or reallocated: unless it is a live
 * block, report it and abort (blocks.h); release: mark it freed. */
static inline void check_live(const char *op, void *p, bool release)
{
    int state = tl_blocks_check(p, release);
    if (UNLIKELY(state != TL_BLOCK_LIVE)) {
        TL_GUARD_SCOPE; /* the report's unwind may allocate */
        tl_blocks_bad_free(op, p, state);
    }
}

/* Always inlined into the hook, and so is the stack capture of `all` mode:
 * libunwind then starts in the hook's own frame (stack.h). */
static inline __attribute__((always_inline)) void *tracked_alloc(uint64_t kind, size_t size,
                                                                 size_t recorded, int flags)
{
    void *p = raw_alloc(size, flags);
    if (p && tl_record_mode == TL_MODE_ALL) {
        TL_GUARD_SCOPE; /* libunwind may allocate on a thread's first unwind */
        int saved = errno;
        const uint64_t *frames;
        size_t n = tl_stack_capture_inline(&frames, tl_record_stack_depth);
        tl_record_alloc_stack(kind, p, recorded, frames, n);
        errno = saved;
        return p;
    }
    /* Outside `all` mode most blocks are only counted (record.h). */
    if (p && !tl_record_alloc_unrecorded(recorded)) {
        TL_GUARD_SCOPE;
        tl_record_alloc(kind, p, recorded);
    }
    return p;
}

/* Free a block already checked and marked freed (check_live). */
static inline void raw_free(void *p)
{
    int saved = errno;
    dallocx(p, 0);
    errno = saved;
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

static inline void free_impl(void *p)
{
    if (tl_tsd.guard || !tl_agent_recording()) {
        if (p) {
            check_live("free", p, true);
            raw_free(p);
        }
        return;
    }
    if (!p) return;
    check_live("free", p, true);
    if (tl_record_free_unrecorded(p)) {
        raw_free(p);
        return;
    }
    TL_GUARD_SCOPE;
    tl_record_free(TL_KIND_FREE, p); /* timed before the block can be reused */
    raw_free(p);
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
    if (xallocx(p, want, 0, 0) != nallocx(want, 0)) {
        q = mallocx(want, 0);
        if (UNLIKELY(!q)) {
            errno = ENOMEM;
            return NULL;
        }
        errno = saved;
        tl_blocks_mark(q);
        size_t old = sallocx(p, 0);
        memcpy(q, p, old < want ? old : want);
    }
    tl_record_realloc(p, q, size);
    if (q != p) {
        check_live("realloc", p, true);
        raw_free(p);
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

/* Is this call to be recorded? The guard is read first, before anything
 * else a hook does: nested calls must not even look at the agent state. */
static inline bool tracking(void)
{
    return !tl_tsd.guard && tl_agent_recording();
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
    return tl_heapinfo_trim() ? 1 : 0;
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

/* --- C++ operator new / delete ---
 *
 * libjemalloc.so.2, our own dependency and so in the global scope ahead of
 * libstdc++, exports operator new/delete that call jemalloc directly. Without
 * these definitions every `new` in the program went to jemalloc unrecorded,
 * while libstdc++'s own deletes (bound to its operator delete, which calls
 * free) reached our free(): ~28,000 FREE records of unknown blocks in
 * `import torch`. So we define all of them here, on the malloc paths: new is
 * recorded as kind malloc, aligned new as kind memalign, delete as free.
 * Failure (rare) is handed to the next definition in the search order
 * (jemalloc's or libstdc++'s), which runs the new_handler loop and throws
 * std::bad_alloc (or returns NULL for nothrow) with the exact standard
 * semantics; the guard is up meanwhile, so a block that it still manages to
 * get is recorded here, once. */

typedef void *(*cxx_new_fn)(size_t, size_t);

static void *cxx_new_retry(const char *name, bool aligned, bool nothrow, uint64_t kind, size_t size,
                           size_t align)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    void *f = dlsym(RTLD_NEXT, name);
    void *p = NULL;
    if (f && aligned)
        p = ((void *(*)(size_t, size_t))f)(size, align); /* nothrow_t& arg: unused, any value */
    else if (f)
        p = ((void *(*)(size_t, const void *))f)(size, NULL);
    if (!p && !nothrow) abort(); /* no next operator new to throw std::bad_alloc */
    if (p) tl_blocks_mark(p);    /* jemalloc's operator new bypasses raw_alloc */
    if (p && track) tl_record_alloc(kind, p, size);
    return p;
}

static inline void *cxx_new(const char *name, bool aligned, bool nothrow, size_t size, size_t align)
{
    uint64_t kind = aligned ? TL_KIND_MEMALIGN : TL_KIND_MALLOC;
    int flags = 0;
    if (aligned) flags = MALLOCX_ALIGN(align < MIN_ALIGN ? MIN_ALIGN : align);
    void *p;
    if (tl_tsd.guard || !tl_agent_recording()) {
        p = raw_alloc(size, flags);
    } else {
        /* Under PyTorch, new'd blocks (a tensor's TensorImpl among them) keep
         * their stacks outside `all` mode too (record.h); not those the CUDA
         * libraries allocate for themselves (a kernel launch's). */
        if (!aligned && atomic_load_explicit(&tl_record_cxx_full, memory_order_relaxed) &&
            !tl_cudart_is_inside((uintptr_t)__builtin_return_address(0)))
            tl_tsd.force_full = true;
        p = tracked_alloc(kind, size, size, flags);
        tl_tsd.force_full = false;
    }
    if (UNLIKELY(!p)) p = cxx_new_retry(name, aligned, nothrow, kind, size, align);
    return p;
}

#define TL_CXX_NEW(sym, aligned, nothrow)                                                          \
    TL_EXPORT void *sym(size_t size, size_t arg2);                                                 \
    TL_EXPORT void *sym(size_t size, size_t arg2)                                                  \
    {                                                                                              \
        return cxx_new(#sym, aligned, nothrow, size, arg2);                                        \
    }
#define TL_CXX_NEW1(sym)                                                                           \
    TL_EXPORT void *sym(size_t size);                                                              \
    TL_EXPORT void *sym(size_t size)                                                               \
    {                                                                                              \
        return cxx_new(#sym, false, false, size, 0);                                               \
    }
#define TL_CXX_DELETE(sym)                                                                         \
    TL_EXPORT void sym(void *p, size_t a2, size_t a3);                                             \
    TL_EXPORT void sym(void *p, size_t a2, size_t a3)                                              \
    {                                                                                              \
        (void)a2;                                                                                  \
        (void)a3;                                                                                  \
        free_impl(p);                                                                              \
    }

/* The extra arguments (size, align_val_t, const nothrow_t &) are passed in
 * registers on x86-64 and ignored here, so one C signature fits every form. */
TL_CXX_NEW1(_Znwm)                            /* new(size_t) */
TL_CXX_NEW1(_Znam)                            /* new[](size_t) */
TL_CXX_NEW(_ZnwmRKSt9nothrow_t, false, true)  /* new(size_t, nothrow_t const&) */
TL_CXX_NEW(_ZnamRKSt9nothrow_t, false, true)  /* new[](size_t, nothrow_t const&) */
TL_CXX_NEW(_ZnwmSt11align_val_t, true, false) /* new(size_t, align_val_t) */
TL_CXX_NEW(_ZnamSt11align_val_t, true, false) /* new[](size_t, align_val_t) */
TL_CXX_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, true, true)
TL_CXX_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, true, true)
TL_CXX_DELETE(_ZdlPv)
TL_CXX_DELETE(_ZdaPv)
TL_CXX_DELETE(_ZdlPvm)
TL_CXX_DELETE(_ZdaPvm)
TL_CXX_DELETE(_ZdlPvRKSt9nothrow_t)
TL_CXX_DELETE(_ZdaPvRKSt9nothrow_t)
TL_CXX_DELETE(_ZdlPvSt11align_val_t)
TL_CXX_DELETE(_ZdaPvSt11align_val_t)
TL_CXX_DELETE(_ZdlPvmSt11align_val_t)
TL_CXX_DELETE(_ZdaPvmSt11align_val_t)
TL_CXX_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t)
TL_CXX_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t)

/* --- PyTorch CPU storages: c10::alloc_cpu(size_t), c10::free_cpu(void *) --- */

TL_EXPORT void *_ZN3c109alloc_cpuEm(size_t nbytes);
TL_EXPORT void _ZN3c108free_cpuEPv(void *data);

TL_EXPORT void *_ZN3c109alloc_cpuEm(size_t nbytes)
{
    bool track = tracking();
    TL_GUARD_SCOPE; /* the real one's posix_memalign is not a second record */
    tl_c10_alloc_fn real = tl_c10_real_alloc();
    void *p;
    if (real) {
        p = real(nbytes); /* may throw c10::Error: the guard scope unwinds */
    } else {
        /* No libc10 found (cannot happen when libc10 called us): behave like
         * it, 64-byte aligned, NULL for 0 bytes. */
        p = nbytes ? mallocx(nbytes, MALLOCX_ALIGN(64)) : NULL;
        if (p) tl_blocks_mark(p);
    }
    if (track && p && nbytes) tl_record_alloc(TL_KIND_STORAGE_C10, p, nbytes);
    return p;
}

TL_EXPORT void _ZN3c108free_cpuEPv(void *data)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    if (track && data) tl_record_free(TL_KIND_STORAGE_C10, data);
    tl_c10_free_fn real = tl_c10_real_free();
    if (real)
        real(data);
    else if (data) {
        check_live("free", data, true);
        dallocx(data, 0);
    }
}

/* --- process end and exec --- */

TL_EXPORT void exit(int status)
{
    if (!tl_tsd.guard) tl_agent_set_exit_status(status);
    tl_exit_fn real = tl_agent_real_exit();
    if (real) real(status);
    syscall(SYS_exit_group, status);
    for (;;)
        ;
}

static void __attribute__((noreturn)) exit_now(int status)
{
    if (!tl_tsd.guard) tl_agent_finish_now(status); /* destructors will not run */
    for (;;)
        syscall(SYS_exit_group, status);
}

TL_EXPORT void _exit(int status)
{
    exit_now(status);
}

TL_EXPORT void _Exit(int status)
{
    exit_now(status);
}

/* glibc's quick_exit runs the at_quick_exit handlers, then its internal
 * _exit, which no hook sees: the status is kept here and the trace ends in
 * the agent's own at_quick_exit handler, registered first so it runs last. */
TL_EXPORT void quick_exit(int status)
{
    if (!tl_tsd.guard) tl_agent_set_exit_status(status);
    void (*real)(int);
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (void (*)(int))dlsym(RTLD_NEXT, "quick_exit");
    }
    if (real) real(status);
    exit_now(status); /* no quick_exit in libc: end as _exit would */
}

/* envp with TENSORLEAK_EXEC_SEQ set to ours, in an anonymous mapping (no
 * malloc: this may run in a vfork child). NULL when not needed or on error. */
static char **exec_envp(char *const envp[], const char *seq, size_t *map_bytes)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    *map_bytes = (n + 2) * sizeof(char *);
    char **v = mmap(NULL, *map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED) return NULL;
    size_t k = 0;
    static const char name[] = TL_CONFIG_EXEC_SEQ_ENV "=";
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], name, sizeof name - 1) != 0) v[k++] = envp[i];
    v[k++] = (char *)seq;
    v[k] = NULL;
    return v;
}

TL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    if (tl_tsd.guard) return (int)syscall(SYS_execve, path, argv, envp);
    const char *seq = tl_agent_exec_env(); /* NULL in a vfork child */
    size_t map_bytes = 0;
    char **env = seq ? exec_envp(envp, seq, &map_bytes) : NULL;
    bool marked = tl_agent_exec_begin();
    int r = (int)syscall(SYS_execve, path, argv, env ? env : envp);
    int saved = errno;
    if (marked) tl_agent_exec_failed(); /* still running: the trace goes on */
    if (env) munmap(env, map_bytes);
    errno = saved;
    return r;
}

/* glibc's execv, execvp and execvpe call its internal __execve, not the
 * execve above: without these the image they replace would end without an
 * END record, and its report would say it was killed. The environment is
 * already right for them (the agent keeps TENSORLEAK_EXEC_SEQ current in
 * its own environment). */
typedef int (*exec_fn)(const char *, char *const[], char *const[]);

static int exec_marked(const char *name, const char *file, char *const argv[], char *const envp[],
                       bool with_env)
{
    void *real;
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = dlsym(RTLD_NEXT, name);
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    bool marked = !tl_tsd.guard && tl_agent_exec_begin();
    int r = with_env ? ((exec_fn)real)(file, argv, envp)
                     : ((int (*)(const char *, char *const[]))real)(file, argv);
    int saved = errno;
    if (marked) tl_agent_exec_failed(); /* still running: the trace goes on */
    errno = saved;
    return r;
}

TL_EXPORT int execv(const char *path, char *const argv[])
{
    return exec_marked("execv", path, argv, NULL, false);
}

TL_EXPORT int execvp(const char *file, char *const argv[])
{
    return exec_marked("execvp", file, argv, NULL, false);
}

TL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_marked("execvpe", file, argv, envp, true);
}

/* sigaction and signal: SIGTERM goes through the agent's end-point handler
 * while the program leaves it at SIG_DFL, and the program sees SIG_DFL
 * (endsig.h). glibc's signal() calls its internal __sigaction, so it needs
 * its own hook; sigset, sysv_signal and raw rt_sigaction calls simply
 * replace the agent's handler. */
TL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    tl_sigaction_fn real = tl_agent_real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return tl_endsig_sigaction(real, sig, act, old);
}

TL_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig != SIGTERM) {
        sighandler_t (*real)(int, sighandler_t);
        {
            TL_GUARD_SCOPE; /* dlsym may allocate */
            real = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
        }
        if (!real) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return real(sig, handler);
    }
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    /* glibc's signal() is BSD's: restart, and block the signal in its handler. */
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
    return old.sa_handler;
}

/* fexecve: glibc runs execveat (or __execve on /proc/self/fd/N) itself. */
TL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    int (*real)(int, char *const[], char *const[]);
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    if (tl_tsd.guard) return real(fd, argv, envp);
    const char *seq = tl_agent_exec_env();
    size_t map_bytes = 0;
    char **env = seq ? exec_envp(envp, seq, &map_bytes) : NULL;
    bool marked = tl_agent_exec_begin();
    int r = real(fd, argv, env ? env : envp);
    int saved = errno;
    if (marked) tl_agent_exec_failed();
    if (env) munmap(env, map_bytes);
    errno = saved;
    return r;
}

/* The execl family: glibc builds the vector and calls __execve or
 * __execvpe directly; here the vector goes to the hooks above. It lives in
 * an anonymous mapping (no malloc: this may run in a vfork child). After
 * the last argument execle has its envp. */
static char **list_argv(const char *arg0, va_list ap, size_t *map_bytes, char ***envp)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    while (arg0 && va_arg(count, char *))
        n++;
    va_end(count);
    *map_bytes = (n + 1) * sizeof(char *);
    char **v = mmap(NULL, *map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED) return NULL;
    v[0] = (char *)arg0;
    for (size_t i = 1; arg0 && i < n; i++)
        v[i] = va_arg(ap, char *);
    v[n] = NULL;
    if (arg0) (void)va_arg(ap, char *); /* the terminating NULL */
    if (envp) *envp = va_arg(ap, char **);
    return v;
}

static int list_done(int r, char **argv, size_t map_bytes)
{
    int saved = errno;
    munmap(argv, map_bytes);
    errno = saved;
    return r;
}

TL_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **argv = list_argv(arg, ap, &map_bytes, NULL);
    va_end(ap);
    if (!argv) return -1; /* errno from mmap (ENOMEM) */
    extern char **environ;
    return list_done(execve(path, argv, environ), argv, map_bytes);
}

TL_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **envp = NULL;
    char **argv = list_argv(arg, ap, &map_bytes, &envp);
    va_end(ap);
    if (!argv) return -1;
    return list_done(execve(path, argv, envp), argv, map_bytes);
}

TL_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **argv = list_argv(arg, ap, &map_bytes, NULL);
    va_end(ap);
    if (!argv) return -1;
    return list_done(execvp(file, argv), argv, map_bytes);
}

__attribute__((constructor)) static void hooks_init(void)
{
    overcommit_init();
    tl_agent_init();
}

__attribute__((destructor)) static void hooks_fini(void)
{
    tl_agent_fini();
}

/* mmap and munmap: the mappings jemalloc and the agent make are known to the
 * leak scan, which leaves them out of its roots (leakscan.h). The system
 * call itself, never glibc's wrapper through dlsym (which may allocate, and
 * these run before init). */
TL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (r == -1) return MAP_FAILED;
    if (flags & MAP_ANONYMOUS)
        tl_leakscan_on_mmap((void *)r, len, (uintptr_t)__builtin_return_address(0));
    return (void *)r;
}

TL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

TL_EXPORT int munmap(void *addr, size_t len)
{
    long r = syscall(SYS_munmap, addr, len);
    if (r == 0) tl_leakscan_on_munmap(addr, len);
    return (int)r;
}
