/* stack.c - stack capture (libunwind) and the lock-free stack id table.
 *
 * The table lives in its own anonymous mapping, never in the heap we hook.
 * Capture runs with the caller's reentrancy guard raised: libunwind may
 * allocate on its first use in a thread.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#define UNW_LOCAL_ONLY
#include "agent/stack.h"
#include "agent/vm.h"

#include <fcntl.h>
#include <errno.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#define XXH_INLINE_ALL /* inlined: every recorded stack is hashed (hot path) */
#include <xxhash.h>

#define SKIP_MAX   4
#define SKIP_SLACK TL_STACK_SLACK

static struct {
    uintptr_t lo, hi;
} skip[SKIP_MAX];
static unsigned nskip;

bool tl_stack_table_init(tl_stack_table_t *t, unsigned lg_slots)
{
    /* Under `ulimit -v`, a smaller table (full: stacks counted as dropped). */
    lg_slots = tl_vm_fit_lg(tl_vm_limit(), lg_slots, lg_slots < 10 ? lg_slots : 10,
                            sizeof(tl_stack_slot_t));
    size_t n = (size_t)1 << lg_slots;
    void *m;
    if (tl_vm_map_anon(&m, n * sizeof(tl_stack_slot_t), false)) return true;
    t->slots = m;
    t->mask = n - 1;
    atomic_store(&t->next_id, 0);
    atomic_store(&t->full_count, 0);
    return false;
}

_Atomic uint64_t tl_stack_gen = 1;

void tl_stack_table_reset(tl_stack_table_t *t)
{
    atomic_fetch_add(&tl_stack_gen, 1);
    if (!t->slots) return;
    tl_vm_zero(t->slots, (t->mask + 1) * sizeof(tl_stack_slot_t), false);
    atomic_store(&t->next_id, 0);
    atomic_store(&t->full_count, 0);
}

void tl_stack_table_destroy(tl_stack_table_t *t)
{
    if (t->slots) tl_vm_unmap(t->slots, (t->mask + 1) * sizeof(tl_stack_slot_t));
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
    tl_vm_unmap(b, sizeof(tl_stack_buf_t));
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
    tl_unwinder_init();
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
    void *m;
    if (tl_vm_map_anon(&m, sizeof(tl_stack_buf_t), false)) return NULL;
    tl_stack_tbuf = m;
    /* A key below PTHREAD_KEY_2NDLEVEL_SIZE (32): setspecific does not allocate. */
    if (buf_key_ok) pthread_setspecific(buf_key, m);
    return m;
}

static void readable_forget(void)
{
    if (readable_next) {
        memset(readable, 0, sizeof readable);
        readable_next = 0;
    }
}

size_t tl_stack_trim(const tl_stack_buf_t *b, const uint64_t **frames, int n, size_t depth)
{
    readable_forget();
    *frames = (const uint64_t *)b->raw;
    if (n <= 0) return 0;
    int first = 0;
    while (first < n && skipped((uintptr_t)b->raw[first]))
        first++;
    size_t k = (size_t)(n - first) < depth ? (size_t)(n - first) : depth;
    *frames = (const uint64_t *)(b->raw + first);
    return k;
}

/* --- the unwind cache (stack.h) --- */

/* This thread's stack [lo, hi), looked up once: a pthread's from its
 * attributes, the main thread's from the top glibc recorded at start and
 * RLIMIT_STACK (no stdio: pthread_getattr_np would read /proc for it).
 * true = failure: not known (then nothing is cached for this thread). */
static bool stack_bounds(tl_stack_buf_t *b)
{
    if (b->stack_state) return b->stack_state < 0;
    b->stack_state = -1;
    uintptr_t lo, hi;
    if (gettid() == getpid()) {
        extern void *__libc_stack_end;
        struct rlimit rl;
        if (getrlimit(RLIMIT_STACK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
            rl.rlim_cur > ((rlim_t)1 << 32))
            return true;
        hi = (uintptr_t)__libc_stack_end;
        lo = hi - (uintptr_t)rl.rlim_cur;
    } else {
        pthread_attr_t a;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &a) != 0) return true;
        int r = pthread_attr_getstack(&a, &addr, &size);
        pthread_attr_destroy(&a);
        if (r != 0) return true;
        lo = (uintptr_t)addr;
        hi = lo + size;
    }
    b->stack_lo = lo;
    b->stack_hi = hi;
    b->stack_state = 1;
    return false;
}

/* Frame j's rbp (a frame pointer: its CFA is rbp + 16) is saved at loc,
 * by a frame further in whose place is proven (the hook's own push at
 * cfa - 16, or a callee's fixed save slot): checked there on every hit,
 * which proves frame j's CFA and so the place of its return address. true =
 * failure: the slot proves nothing (nothing kept). */
static bool ucache_rbp(const tl_stack_buf_t *b, tl_ucache_entry_t *e, uintptr_t cfa,
                       const unw_save_loc_t *loc, uint64_t rbp)
{
    if (loc->type != UNW_SLT_MEMORY || e->nrbp >= TL_UCACHE_RBP) return true;
    uintptr_t a = (uintptr_t)loc->u.addr;
    if (a < cfa - 16 || a > b->stack_hi - 8 || (a & 7) || *(const uint64_t *)a != rbp) return true;
    e->rbp_off[e->nrbp] = (int32_t)(intptr_t)(a - cfa);
    e->rbp_val[e->nrbp++] = rbp;
    return false;
}

/* Fill e from a walk of the stack with libunwind's cursor, which gives
 * each frame's stack pointer: the frame of raw[1] is the one whose stack
 * pointer is cfa; raw[j]'s return address lives at the next frame's stack
 * pointer - 8. A frame whose size is fixed at its return address is proven
 * by the frames further in; one with a frame pointer (rbp + 16 is its CFA:
 * its size may vary, alloca) by its rbp's value where it is saved
 * (ucache_rbp). true = failure, not cacheable (any frame differs from
 * unw_backtrace's, a signal frame, a frame pointer whose save slot is not
 * in a proven frame, a realigned frame (a copy of its return address at
 * rbp + 8, GCC's DRAP: its CFA is not rbp + 16), a slot outside the stack,
 * a walk that ends elsewhere). */
static bool ucache_fill(tl_stack_buf_t *b, tl_ucache_entry_t *e, uintptr_t cfa, size_t last,
                        bool ends)
{
    unw_context_t uc;
    unw_cursor_t c;
    unw_word_t ip, sp, rbp;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&c, &uc) != 0) return true;
    for (unsigned up = 0;; up++) { /* up through this function and the capture's */
        if (up > 8 || unw_step(&c) <= 0 || unw_get_reg(&c, UNW_REG_SP, &sp) != 0) return true;
        if (sp == cfa) break;
        if (sp > cfa) return true;
    }
    if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || ip != (unw_word_t)b->raw[1] ||
        unw_get_reg(&c, UNW_X86_64_RBP, &rbp) != 0)
        return true;
    unw_word_t prev_sp = sp, prev_rbp = rbp;
    e->nrbp = 0;
    for (size_t j = 2; j <= last; j++) {
        unw_save_loc_t rbp_loc; /* where frame j - 1's rbp is saved */
        if (unw_get_save_loc(&c, UNW_X86_64_RBP, &rbp_loc) != 0) rbp_loc.type = UNW_SLT_NONE;
        if (unw_is_signal_frame(&c) != 0 || unw_step(&c) <= 0) return true;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) != 0 || unw_get_reg(&c, UNW_REG_SP, &sp) != 0 ||
            unw_get_reg(&c, UNW_X86_64_RBP, &rbp) != 0)
            return true;
        if (ip != (unw_word_t)b->raw[j] || sp <= prev_sp || sp > b->stack_hi ||
            sp - 8 - cfa > UINT32_MAX || *(const uint64_t *)(sp - 8) != ip)
            return true;
        /* rbp inside the frame (or just below it) and the frame laid out
         * around it as a frame pointer's: its CFA is rbp + 16, or a copy of
         * its return address sits at rbp + 8 (GCC's realigned frames). rbp
         * merely pointing at a local is no frame pointer. The agent's own
         * frames have fixed sizes (no VLA, no alloca: -Wvla), frame pointer
         * or not (a hook has one: __builtin_dwarf_cfa). */
        if (prev_rbp + 16 >= prev_sp && prev_rbp < sp &&
            (prev_rbp + 16 == sp || *(const uint64_t *)(prev_rbp + 8) == ip) &&
            !skipped((uintptr_t)b->raw[j - 1]) &&
            (prev_rbp + 16 != sp || ucache_rbp(b, e, cfa, &rbp_loc, prev_rbp)))
            return true;
        e->slot[j - 2] = (uint32_t)(sp - 8 - cfa);
        prev_sp = sp;
        prev_rbp = rbp;
    }
    /* A stack that ended before the capture's limit: at its outermost frame. */
    if (ends && (unw_is_signal_frame(&c) != 0 || unw_step(&c) != 0)) return true;
    return false;
}

_Static_assert(TL_UCACHE_ADMIT >= 2 && TL_UCACHE_ADMIT <= TL_UCACHE_COUNT_MASK + 1,
               "a count in the key's low bits");
unsigned tl_ucache_admit = TL_UCACHE_ADMIT;

size_t tl_stack_cache_note(tl_stack_buf_t *b, uintptr_t site, uintptr_t cfa, size_t depth, int n,
                           const uint64_t *frames, size_t k)
{
    b->hit = NULL;
    if (n < 2 || k == 0) return k;
    size_t first = (size_t)(frames - (const uint64_t *)b->raw), last = first + k - 1;
    uint64_t ra = *(const uint64_t *)(cfa - 8);
    if (last >= TL_UCACHE_FRAMES || last < 1 || (uint64_t)b->raw[1] != ra) return k;
    uint64_t h = tl_ucache_hash(site, ra, cfa);
    uint64_t *seen = &b->seen[h & ((1u << TL_UCACHE_SEEN_LG) - TL_UCACHE_SEEN_WAYS)];
    /* A seen entry: the key with its misses so far in the low 4 bits (the
     * fill comes at the one after tl_ucache_admit - 1 of them), or ~key:
     * refused, not cacheable. */
    const uint64_t key = h & ~TL_UCACHE_COUNT_MASK, admitted = tl_ucache_admit - 1;
    unsigned w = 0;
    while (w < TL_UCACHE_SEEN_WAYS && (seen[w] & ~TL_UCACHE_COUNT_MASK) != key && seen[w] != ~key)
        w++;
    if (w == TL_UCACHE_SEEN_WAYS) { /* first miss: remember the key only */
        memmove(seen + 1, seen, (TL_UCACHE_SEEN_WAYS - 1) * sizeof *seen);
        seen[0] = key | 1;
        return k;
    }
    seen += w;
    if (*seen == ~key) return k; /* refused: not cacheable */
    if ((*seen & TL_UCACHE_COUNT_MASK) < admitted) {
        (*seen)++; /* one more miss, not yet admitted */
        return k;
    }
    *seen = ~key; /* until the fill succeeds */
    if (stack_bounds(b) || cfa < b->stack_lo || cfa >= b->stack_hi) return k;
    size_t set = tl_ucache_set(h);
    /* An empty way, else each way in turn (first in, first out: a hit
     * does not move it, so one hot way cannot make the fills of every
     * other key of its set take turns in the way after it). */
    size_t slot = set;
    while (slot < set + TL_UCACHE_WAYS && b->tag[slot] != 0)
        slot++;
    if (slot == set + TL_UCACHE_WAYS) {
        uint8_t *victim = &b->victim[set / TL_UCACHE_WAYS];
        slot = set + *victim;
        *victim = (uint8_t)((*victim + 1) % TL_UCACHE_WAYS);
    }
    tl_ucache_entry_t *e = &b->cache[slot];
    e->site = 0; /* empty while filled */
    b->tag[slot] = 0;
    /* From here up to the top, the stack is this thread's live stack (cfa
     * is in it): its words are read without a check. */
    tl_stack_unwind_sp = b->stack_hi;
    tl_unwinder_enter();
    bool bad =
        ucache_fill(b, e, cfa, last, last + 1 == (size_t)n && (size_t)n < depth + SKIP_SLACK);
    tl_unwinder_leave();
    readable_forget();
    if (bad) return k;
    memcpy(e->raw, b->raw, (last + 1) * sizeof e->raw[0]);
    e->ra = ra;
    e->cfa = cfa;
    e->depth = (uint32_t)depth;
    e->first = (uint16_t)first;
    e->k = (uint16_t)k;
    e->nslots = (uint16_t)(last - 1);
    e->native_hash = XXH3_64bits(frames, k * sizeof frames[0]);
    e->gen = 0;
    e->site = site;
    b->tag[slot] = h;
    /* Evicted later, it is filled again after as many misses: `import
     * torch`'s keys churn through the cache, each refill a walk. */
    *seen = key | 1;
    b->hit = e;
    b->fills++;
    return k;
}

void tl_stack_merged_put(tl_stack_buf_t *b, uint64_t key, uint64_t id, uint64_t gen)
{
    size_t set = key & ((1u << TL_STACK_MERGED_LG) - TL_STACK_MERGED_WAYS);
    const size_t older = TL_STACK_MERGED_WAYS - 1;
    memmove(&b->merged_key[set + 1], &b->merged_key[set], older * sizeof b->merged_key[0]);
    memmove(&b->merged_val[set + 1], &b->merged_val[set], older * sizeof b->merged_val[0]);
    b->merged_key[set] = key;
    b->merged_val[set] = (tl_merged_val_t){.id = id, .gen = gen};
}

size_t tl_stack_capture(const uint64_t **frames, size_t depth)
{
    /* Not cached: its callers are the default mode's sampled and big
     * blocks, numpy's and device storages, whose stacks repeat less; the
     * blocks recorded most often, C++ news and CPU storages under torch,
     * are captured in their hook (tl_stack_capture_inline), where the cache
     * answers all but the first two of each stack of a training loop. */
    tl_stack_buf_t *b = tl_stack_buf_get();
    if (!b) {
        *frames = NULL;
        return 0;
    }
    if (depth > TL_REC_MAX_FRAMES) depth = TL_REC_MAX_FRAMES;
    b->hit = NULL;
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    tl_stack_unwind_sp = tl_stack_trusted_top(b, sp);
    tl_unwinder_enter();
    int n = unw_backtrace(b->raw, (int)(depth + SKIP_SLACK));
    tl_unwinder_leave();
    return tl_stack_trim(b, frames, n, depth);
}
