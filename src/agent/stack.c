/* stack.c - stack capture (libunwind) and the lock-free stack id table.
 *
 * The table lives in its own anonymous mapping, never in the heap we hook.
 * Capture runs with the caller's reentrancy guard raised: libunwind may
 * allocate on its first use in a thread.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#define UNW_LOCAL_ONLY
#include "agent/stack.h"

#include <fcntl.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

#define SKIP_MAX   4
#define SKIP_SLACK TL_STACK_SLACK

static struct {
    uintptr_t lo, hi;
} skip[SKIP_MAX];
static unsigned nskip;

bool tl_stack_table_init(tl_stack_table_t *t, unsigned lg_slots)
{
    size_t n = (size_t)1 << lg_slots;
    void *m = mmap(NULL, n * sizeof(tl_stack_slot_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return true;
    t->slots = m;
    t->mask = n - 1;
    atomic_store(&t->next_id, 0);
    atomic_store(&t->full_count, 0);
    return false;
}

void tl_stack_table_reset(tl_stack_table_t *t)
{
    if (!t->slots) return;
    size_t bytes = (t->mask + 1) * sizeof(tl_stack_slot_t);
    /* Fresh zero pages are cheaper than memset of a mostly untouched table. */
    void *m = mmap(t->slots, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                   -1, 0);
    if (m == MAP_FAILED) memset(t->slots, 0, bytes);
    atomic_store(&t->next_id, 0);
    atomic_store(&t->full_count, 0);
}

void tl_stack_table_destroy(tl_stack_table_t *t)
{
    if (t->slots) munmap(t->slots, (t->mask + 1) * sizeof(tl_stack_slot_t));
    t->slots = NULL;
}

uint64_t tl_stack_intern(tl_stack_table_t *t, const uint64_t *frames, size_t n, bool *is_new)
{
    *is_new = false;
    if (n == 0) return 0;
    uint64_t h = XXH3_64bits(frames, n * sizeof frames[0]);
    if (h == 0) h = 1;
    size_t i = (size_t)h & t->mask;
    for (unsigned probe = 0; probe < TL_STACK_PROBES && probe <= t->mask; probe++) {
        tl_stack_slot_t *s = &t->slots[(i + probe) & t->mask];
        uint64_t cur = atomic_load_explicit(&s->hash, memory_order_acquire);
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong_explicit(
                    &s->hash, &expected, h, memory_order_acq_rel, memory_order_acquire)) {
                uint64_t id = atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
                atomic_store_explicit(&s->id, id, memory_order_release);
                *is_new = true;
                return id;
            }
            cur = expected;
        }
        if (cur == h) {
            uint64_t id;
            /* The inserter publishes the id right after its CAS. */
            while ((id = atomic_load_explicit(&s->id, memory_order_acquire)) == 0)
                __builtin_ia32_pause();
            return id;
        }
    }
    atomic_fetch_add_explicit(&t->full_count, 1, memory_order_relaxed);
    *is_new = true;
    return atomic_fetch_add_explicit(&t->next_id, 1, memory_order_relaxed) + 1;
}

void tl_stack_skip_add(uintptr_t lo, uintptr_t hi)
{
    if (nskip < SKIP_MAX && lo < hi) {
        skip[nskip].lo = lo;
        skip[nskip].hi = hi;
        nskip++;
    }
}

void tl_stack_skip_clear(void)
{
    nskip = 0;
}

/* Pages this thread found readable during its current unwind (addresses
 * of page starts; 0 = empty). Cleared after every unwind (tl_stack_trim),
 * so a page unmapped between two unwinds is checked again. */
#define READABLE_PAGES 8
static __thread uintptr_t readable[READABLE_PAGES] __attribute__((tls_model("initial-exec")));
static __thread unsigned readable_next __attribute__((tls_model("initial-exec")));
__thread uintptr_t tl_stack_unwind_sp __attribute__((tls_model("initial-exec")));

/* Can 8 bytes at addr be read? rt_sigprocmask copies the new mask from
 * user memory before it looks at `how`: with an invalid how it fails with
 * EFAULT for an unreadable address and EINVAL otherwise, and changes
 * nothing. No descriptor, unlike libunwind 1.6's check (a pipe it writes
 * to and drains, which became the program's own files once the program
 * had closed and reused those numbers). */
static bool readable_word(uintptr_t addr)
{
    /* Between our stack pointer and the capturing function's: the frames
     * of the unwind itself (its context and cursor), read on every unwind. */
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    if (addr >= sp && addr + 8 <= tl_stack_unwind_sp) return true;
    uintptr_t first = addr & ~(uintptr_t)4095, last = (addr + 7) & ~(uintptr_t)4095;
    if (first == 0 || last < first) return false; /* page 0 (empty slots hold 0), wrap */
    bool hit_first = false, hit_last = false;
    for (unsigned i = 0; i < READABLE_PAGES; i++) {
        hit_first |= readable[i] == first;
        hit_last |= readable[i] == last;
    }
    if (hit_first && hit_last) return true;
    long r = syscall(SYS_rt_sigprocmask, -1, (void *)addr, NULL, (size_t)8);
    if (r == 0 || errno != EINVAL) return false;
    readable[readable_next++ % READABLE_PAGES] = first;
    if (last != first) readable[readable_next++ % READABLE_PAGES] = last;
    return true;
}

/* libunwind's local access_mem, with its address check done by
 * readable_word. Every read is checked (libunwind checks only after its
 * DWARF step failed, a flag we cannot see); the per-thread frame cache
 * keeps this off the path of stacks seen before. */
static int access_mem_checked(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                              void *arg)
{
    (void)as;
    (void)arg;
    int saved = errno;
    if (write) {
        *(unw_word_t *)addr = *val;
        return 0;
    }
    bool ok = readable_word((uintptr_t)addr);
    errno = saved;
    if (!ok) return -UNW_EINVAL;
    *val = *(const unw_word_t *)addr;
    return 0;
}

/* Close a and b when they are the two ends of one non-blocking,
 * close-on-exec pipe (libunwind's, made by its first initialisation). */
static void close_unwinder_pipe(int a, int b)
{
    struct stat sa, sb;
    if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0 || !S_ISFIFO(sa.st_mode) ||
        !S_ISFIFO(sb.st_mode) || sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev)
        return;
    int fa = fcntl(a, F_GETFL), fb = fcntl(b, F_GETFL);
    if (fa < 0 || fb < 0 || !(fa & O_NONBLOCK) || !(fb & O_NONBLOCK) ||
        (fa & O_ACCMODE) != O_RDONLY || (fb & O_ACCMODE) != O_WRONLY ||
        !(fcntl(a, F_GETFD) & FD_CLOEXEC) || !(fcntl(b, F_GETFD) & FD_CLOEXEC))
        return;
    close(a);
    close(b);
}

__thread tl_stack_buf_t *tl_stack_tbuf __attribute__((tls_model("initial-exec")));
static pthread_key_t buf_key;
static bool buf_key_ok;

/* Thread exit: unmap the buffers. A later capture in the same thread (a
 * destructor that allocates) maps new ones and sets the key again; glibc
 * runs destructors again for it (PTHREAD_DESTRUCTOR_ITERATIONS rounds). */
static void buf_release(void *b)
{
    if (tl_stack_tbuf == b) tl_stack_tbuf = NULL;
    munmap(b, sizeof(tl_stack_buf_t));
}

void tl_stack_unwind_init(void)
{
    /* libunwind's first initialisation (here, in unw_get_accessors) opens
     * its address-check pipe on the two lowest free descriptors: find which
     * they will be, then close that pipe, which access_mem_checked makes
     * unused. Runs in our constructor, before the program has threads. */
    int probe[2];
    bool probed = pipe2(probe, O_CLOEXEC) == 0;
    if (probed) {
        close(probe[0]);
        close(probe[1]);
    }
    unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space);
    if (acc) {
        acc->access_mem = access_mem_checked;
        if (probed) close_unwinder_pipe(probe[0], probe[1]);
    }
    if (!buf_key_ok) buf_key_ok = pthread_key_create(&buf_key, buf_release) == 0;
    /* One unwind now binds libunwind's lazy PLT slots: the first resolution
     * saves the whole register file on the caller's stack (glibc's
     * _dl_runtime_resolve_xsavec, kilobytes with AVX-512), which a thread
     * with a 16 KiB stack has no room for. */
    void *warm[8];
    unw_backtrace(warm, 8);
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

static bool skipped(uintptr_t ip)
{
    for (unsigned i = 0; i < nskip; i++)
        if (ip >= skip[i].lo && ip < skip[i].hi) return true;
    return false;
}

_Static_assert(sizeof(void *) == sizeof(uint64_t), "frames are converted in place");

tl_stack_buf_t *tl_stack_buf_get(void)
{
    if (tl_stack_tbuf) return tl_stack_tbuf;
    void *m = mmap(NULL, sizeof(tl_stack_buf_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    tl_stack_tbuf = m;
    /* A key below PTHREAD_KEY_2NDLEVEL_SIZE (32): setspecific does not allocate. */
    if (buf_key_ok) pthread_setspecific(buf_key, m);
    return m;
}

size_t tl_stack_trim(const tl_stack_buf_t *b, const uint64_t **frames, int n, size_t depth)
{
    if (readable_next) {
        memset(readable, 0, sizeof readable);
        readable_next = 0;
    }
    *frames = (const uint64_t *)b->raw;
    if (n <= 0) return 0;
    int first = 0;
    while (first < n && skipped((uintptr_t)b->raw[first]))
        first++;
    size_t k = (size_t)(n - first) < depth ? (size_t)(n - first) : depth;
    *frames = (const uint64_t *)(b->raw + first);
    return k;
}

size_t tl_stack_capture(const uint64_t **frames, size_t depth)
{
    tl_stack_buf_t *b = tl_stack_buf_get();
    if (!b) {
        *frames = NULL;
        return 0;
    }
    if (depth > TL_REC_MAX_FRAMES) depth = TL_REC_MAX_FRAMES;
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    tl_stack_unwind_sp = sp;
    return tl_stack_trim(b, frames, unw_backtrace(b->raw, (int)(depth + SKIP_SLACK)), depth);
}
