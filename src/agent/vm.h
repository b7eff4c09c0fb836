/* vm.h - the agent's address-space budget: how big its own tables may be
 * when the program runs under a finite RLIMIT_AS (`ulimit -v`).
 *
 * The agent's tables are reserved whole (MAP_NORESERVE, touched as they
 * fill), which costs no memory but does cost address space: at full size,
 * about 80 MB at start and 64 MiB per GiB region of the heap for the
 * live-block shadow (blocks.h). Under a limit each table gets at most
 * 1/TL_VM_SHARE of it; a smaller table fills sooner, and what it then
 * cannot take is counted as dropped or unchecked, as for a full table.
 * No malloc, no stdio; thread-safe (the limit is read once, racily: every
 * thread reads the same value).
 */
#ifndef TL_AGENT_VM_H
#define TL_AGENT_VM_H

#include <stddef.h>
#include <stdint.h>

#define TL_VM_SHARE 64 /* one table's share of a finite RLIMIT_AS: 1/64 */

/* The process's RLIMIT_AS soft limit in bytes, UINT64_MAX when there is
 * none (or getrlimit failed). Read at the first call; a limit the program
 * sets later is not seen. */
uint64_t tl_vm_limit(void);

/* The largest lg <= want (and >= floor) such that slot_bytes << lg fits
 * in limit / TL_VM_SHARE; want itself when limit is UINT64_MAX; floor when
 * even that does not fit. Pure: tl_vm_fit_lg(tl_vm_limit(), ...) in use. */
unsigned tl_vm_fit_lg(uint64_t limit, unsigned want, unsigned floor, size_t slot_bytes);

/* May a mapping of bytes be made whole under the limit (bytes at most
 * limit / TL_VM_SHARE, or no limit)? */
int tl_vm_fits(uint64_t limit, size_t bytes);

#endif /* TL_AGENT_VM_H */
