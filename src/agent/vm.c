/* vm.c - the agent's own mappings through the system calls themselves, the
 * set of ranges that remembers them, and the address-space budget under
 * RLIMIT_AS (vm.h). Ground floor: nothing else of the agent is called from
 * here. No malloc, no stdio, no lock; errno is always put back.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/vm.h"
#include "common/session_mark.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* --- a lock-free set of ranges --- */

static size_t bound(tl_vm_ranges_t *s)
{
    return atomic_load_explicit(&s->used, memory_order_acquire);
}

void tl_vm_ranges_add(tl_vm_ranges_t *s, uint64_t start, uint64_t len, uint64_t tag)
{
    for (size_t i = 0; i < s->cap; i++) {
        tl_vm_range_t *r = &s->slot[i];
        uint64_t z = 0;
        if (atomic_load_explicit(&r->start, memory_order_relaxed) != 0) continue;
        r->end = start + len;
        r->tag = tag;
        if (atomic_compare_exchange_strong(&r->start, &z, start)) {
            /* Before the map returns: no unmap of it can miss the slot. */
            size_t u = atomic_load_explicit(&s->used, memory_order_relaxed);
            while (u <= i && !atomic_compare_exchange_weak_explicit(
                                 &s->used, &u, i + 1, memory_order_release, memory_order_relaxed))
                ;
            return;
        }
    }
    atomic_fetch_add(&s->missed, 1);
}

void tl_vm_ranges_remove(tl_vm_ranges_t *s, uint64_t start, uint64_t len)
{
    uint64_t e = start + len;
    for (size_t i = 0, n = bound(s); i < n; i++) {
        tl_vm_range_t *r = &s->slot[i];
        uint64_t ms = atomic_load_explicit(&r->start, memory_order_relaxed);
        if (!ms || r->end <= start || ms >= e) continue;
        uint64_t me = r->end;
        if (ms >= start && me <= e) {
            atomic_store(&r->start, 0);
        } else if (ms < start) {
            r->end = start;
            /* a hole in the middle: the part above it is an entry of its own,
             * so that what is mapped into the hole later is not in the set */
            if (me > e) tl_vm_ranges_add(s, e, me - e, r->tag);
        } else {
            atomic_store(&r->start, e);
        }
    }
}

bool tl_vm_ranges_has(tl_vm_ranges_t *s, uint64_t lo, uint64_t hi,
                      bool (*keep)(void *ctx, uint64_t tag), void *ctx, uint64_t r[2])
{
    for (size_t i = 0, n = bound(s); i < n; i++) {
        uint64_t ms = atomic_load_explicit(&s->slot[i].start, memory_order_relaxed);
        uint64_t me = s->slot[i].end;
        if (!ms || me <= lo || ms >= hi) continue;
        if (keep && !keep(ctx, s->slot[i].tag)) continue;
        r[0] = ms;
        r[1] = me;
        return true;
    }
    return false;
}

/* --- the agent's own mappings --- */

/* Slots for the tables, the blocks' shadow leaves and one unwind buffer per
 * live thread (stack.c); a mapping that finds no slot is counted. */
#define OWN_MAX 16384
static tl_vm_range_t own_slot[OWN_MAX];
static tl_vm_ranges_t own = {.slot = own_slot, .cap = OWN_MAX};

static bool is_remembered(int prot, int flags)
{
    return (flags & MAP_ANONYMOUS) && !(flags & MAP_SHARED) && (prot & PROT_WRITE);
}

int tl_vm_map(void **out, void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    int saved = errno;
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    int err = r == -1 ? -errno : 0;
    errno = saved;
    if (err) return err;
    /* MAP_FIXED may replace a range of ours: one entry, not two */
    if (flags & MAP_FIXED) tl_vm_ranges_remove(&own, (uintptr_t)r, len);
    if (is_remembered(prot, flags)) tl_vm_ranges_add(&own, (uintptr_t)r, len, 0);
    *out = (void *)r;
    return 0;
}

int tl_vm_mark_session(uint64_t session)
{
    char name[TL_SESSION_MARK_LEN];
    tl_session_mark_name(session, name);
    int saved = errno;
    int fd = (int)syscall(SYS_memfd_create, name, (unsigned)MFD_CLOEXEC);
    int err = fd < 0 ? -errno : 0;
    if (fd >= 0) {
        void *m;
        long page = sysconf(_SC_PAGESIZE);
        err = tl_vm_map(&m, NULL, page > 0 ? (size_t)page : 4096, PROT_NONE, MAP_PRIVATE, fd, 0);
        close(fd);
    }
    errno = saved;
    return err;
}

int tl_vm_map_anon(void **out, size_t len, bool noreserve)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0);
    return tl_vm_map(out, NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
}

void tl_vm_zero(void *addr, size_t len, bool noreserve)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | (noreserve ? MAP_NORESERVE : 0);
    int saved = errno;
    /* the same range as before, still ours: the set is left as it is */
    long r = syscall(SYS_mmap, addr, len, PROT_READ | PROT_WRITE, flags, -1, 0);
    errno = saved;
    if (r == -1) memset(addr, 0, len);
}

int tl_vm_unmap(void *addr, size_t len)
{
    int saved = errno;
    int err = syscall(SYS_munmap, addr, len) == -1 ? -errno : 0;
    errno = saved;
    if (!err) tl_vm_ranges_remove(&own, (uintptr_t)addr, len);
    return err;
}

int tl_vm_advise(void *addr, size_t len, int advice)
{
    int saved = errno;
    int err = syscall(SYS_madvise, addr, len, advice) == -1 ? -errno : 0;
    errno = saved;
    return err;
}

void tl_vm_on_munmap(const void *addr, size_t len)
{
    tl_vm_ranges_remove(&own, (uintptr_t)addr, len);
}

bool tl_vm_is_own(uint64_t lo, uint64_t hi, uint64_t r[2])
{
    return tl_vm_ranges_has(&own, lo, hi, NULL, NULL, r);
}

uint64_t tl_vm_own_missed(void)
{
    return atomic_load(&own.missed);
}

/* --- the budget --- */

uint64_t tl_vm_limit(void)
{
    static uint64_t limit; /* 0: not read yet */
    if (limit) return limit;
    int saved = errno; /* never the program's errno */
    struct rlimit r;
    uint64_t v = UINT64_MAX;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) v = (uint64_t)r.rlim_cur;
    errno = saved;
    limit = v ? v : 1;
    return limit;
}

bool tl_vm_fits(uint64_t limit, size_t bytes)
{
    return limit == UINT64_MAX || (uint64_t)bytes <= limit / TL_VM_SHARE;
}

unsigned tl_vm_fit_lg(uint64_t limit, unsigned want, unsigned floor, size_t slot_bytes)
{
    unsigned lg = want;
    while (lg > floor && !tl_vm_fits(limit, slot_bytes << lg))
        lg--;
    return lg;
}

bool tl_vm_read(uint64_t addr, void *buf, size_t len)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    int saved = errno;
    bool ok = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)len;
    errno = saved;
    return ok;
}
