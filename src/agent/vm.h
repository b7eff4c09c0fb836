/* vm.h - every mapping the agent makes for itself, and its address-space
 * budget. Ground floor: calls nothing else of the agent.
 *
 * The agent's own mappings (tables, buffers, the trace's extents) never go
 * through the interposed mmap/munmap of hooks_proc.c: tl_vm_* make the
 * system calls themselves (as jemalloc's pages.c does), so they are not the
 * program's mappings, and the same code runs in the unit tests and in the
 * preloaded library. vm.c remembers the agent's private writable anonymous
 * mappings (tl_vm_is_own) so that the leak scan leaves them out of its
 * roots. None of these functions changes errno, allocates, prints or takes
 * a lock; all are safe before the agent's init and in a vfork child.
 *
 * The budget: the agent's tables are reserved whole (MAP_NORESERVE,
 * touched as they fill), which costs no memory but does cost address
 * space: at full size, about 80 MB at start and 64 MiB per GiB region of
 * the heap for the live-block shadow (blocks.h). Under a finite RLIMIT_AS
 * (`ulimit -v`) each table gets at most 1/TL_VM_SHARE of it; a smaller table
 * fills sooner, and what it then cannot take is counted as dropped or
 * unchecked, as for a full table.
 *
 * Errors: int 0 or a negative errno (the predicates tl_vm_fits,
 * tl_vm_is_own and tl_vm_ranges_has answer a question: true = yes).
 */
#ifndef TL_AGENT_VM_H
#define TL_AGENT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* --- mappings --- */

/* mmap(2) for the agent itself: *out = the mapping, or 0 / -errno (errno
 * unchanged). A private writable anonymous mapping is remembered as the
 * agent's until tl_vm_unmap. Thread-safe. */
int tl_vm_map(void **out, void *addr, size_t len, int prot, int flags, int fd, off_t off);

/* The run's mark (common/session_mark.h): a PROT_NONE page of a memfd
 * named for session, mapped and its fd closed, never touched; a fork child
 * inherits it. 0 or -errno (no memfd: the CLI then goes by the
 * environment alone). Not remembered as the agent's: it holds no data.
 * Call once, at the agent's start. */
int tl_vm_mark_session(uint64_t session);

/* Shorthand: len bytes of fresh zero pages, private, read-write (with
 * MAP_NORESERVE when noreserve). 0 or -errno. Thread-safe. */
int tl_vm_map_anon(void **out, size_t len, bool noreserve);

/* Make [addr, addr + len), a mapping of tl_vm_map_anon, fresh zero pages
 * again (a new mapping in place: cheaper than a memset, and no
 * copy-on-write faults in a fork child); memset when that fails. */
void tl_vm_zero(void *addr, size_t len, bool noreserve);

/* munmap(2) for the agent itself; forgets the range. 0 or -errno. */
int tl_vm_unmap(void *addr, size_t len);

/* madvise(2) for the agent itself. 0 or -errno. */
int tl_vm_advise(void *addr, size_t len, int advice);

/* The program unmapped [addr, addr + len) (the interposed munmap): what of
 * it was the agent's is no longer. Lock-free. */
void tl_vm_on_munmap(const void *addr, size_t len);

/* Does [lo, hi) overlap a mapping of the agent's own? true: the first one
 * found in [r[0], r[1]). Lock-free; racy against concurrent maps (the leak
 * scan calls it once, at exit). */
bool tl_vm_is_own(uint64_t lo, uint64_t hi, uint64_t r[2]);

/* Copy len bytes of this process at addr into buf with process_vm_readv,
 * which fails where a plain read would fault (a page unmapped or not
 * readable): false then, buf maybe partly written. errno is kept.
 * Async-signal-safe. */
bool tl_vm_read(uint64_t addr, void *buf, size_t len);

/* How many times the agent's mappings did not fit in vm.c's table (each one
 * is then a root of the leak scan); for tests. */
uint64_t tl_vm_own_missed(void);

/* --- a lock-free set of address ranges, each with a tag --- */

/* One range [start, end); start 0 = a free slot. */
typedef struct tl_vm_range {
    _Atomic uint64_t start;
    uint64_t end, tag;
} tl_vm_range_t;

/* slot[0, cap): the caller's storage, zeroed (static). used: slots [0,
 * used) have been taken at some time (walks stop there; only grows).
 * missed: ranges that found no free slot. */
typedef struct tl_vm_ranges {
    tl_vm_range_t *slot;
    size_t cap;
    _Atomic size_t used;
    _Atomic uint64_t missed;
} tl_vm_ranges_t;

/* Add [start, start + len) with its tag; counts a miss when full.
 * Lock-free; visible to a remove that starts after it returns. */
void tl_vm_ranges_add(tl_vm_ranges_t *s, uint64_t start, uint64_t len, uint64_t tag);

/* Remove [start, start + len) from every range (a range it cuts in the
 * middle becomes two, the part above keeping the tag). Lock-free. */
void tl_vm_ranges_remove(tl_vm_ranges_t *s, uint64_t start, uint64_t len);

/* Does [lo, hi) overlap a range whose tag keep(ctx, tag) accepts (every
 * range when keep is NULL)? true: that range in r. Lock-free. */
bool tl_vm_ranges_has(tl_vm_ranges_t *s, uint64_t lo, uint64_t hi,
                      bool (*keep)(void *ctx, uint64_t tag), void *ctx, uint64_t r[2]);

/* --- the address-space budget --- */

#define TL_VM_SHARE 64 /* one table's share of a finite RLIMIT_AS: 1/64 */

/* The process's RLIMIT_AS soft limit in bytes, UINT64_MAX when there is
 * none (or getrlimit failed). Read at the first call; a limit the program
 * sets later is not seen. Thread-safe (read racily: every thread reads the
 * same value). */
uint64_t tl_vm_limit(void);

/* The largest lg <= want (and >= floor) such that slot_bytes << lg fits
 * in limit / TL_VM_SHARE; want itself when limit is UINT64_MAX; floor when
 * even that does not fit. Pure: tl_vm_fit_lg(tl_vm_limit(), ...) in use. */
unsigned tl_vm_fit_lg(uint64_t limit, unsigned want, unsigned floor, size_t slot_bytes);

/* May a mapping of bytes be made whole under the limit (bytes at most
 * limit / TL_VM_SHARE, or no limit)? Pure. */
bool tl_vm_fits(uint64_t limit, size_t bytes);

#endif /* TL_AGENT_VM_H */
