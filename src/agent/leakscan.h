/* leakscan.h - the leak kinds of the live blocks at exit (`all` mode with
 * TENSORLEAK_LEAK_SCAN=1, which `tensorleak check` sets).
 *
 * valgrind memcheck's definitions: a block is still reachable when a start
 * pointer to it is found from a root chain, possibly lost when only
 * interior pointers are, indirectly lost when only lost blocks point to it,
 * definitely lost when nothing does. Roots: the private writable mappings
 * of the process (modules' data and bss, every thread's stack mapping whole
 * and its TLS, memory other allocators mapped, such as CPython's object
 * arenas: their allocated blocks only, below), the calling thread's stack
 * from its sp (or from where a fatal signal interrupted it) and its
 * registers, but for the dead parts of its signal frames (endsig.h), and
 * in a fork child the blocks its parent allocated before the fork (live.h:
 * tl_live_inherited_foreach); excluded: the agent's and jemalloc's
 * modules, the agent's own mappings (vm.h) and the ones jemalloc made (its
 * metadata, the heap itself), and the stacks of threads that have ended
 * (deadstacks.h). Other threads are not stopped: their whole stack mapping
 * is scanned, stale words included (conservative: errs toward reachable).
 * Blocks come from the live table.
 */
#ifndef TL_AGENT_LEAKSCAN_H
#define TL_AGENT_LEAKSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"

/* Remember a mapping made by the code at return address caller (the
 * interposed mmap); lock-free, safe before the agent's init. */
void tl_leakscan_on_mmap(const void *addr, size_t len, uintptr_t caller);
/* Forget [addr, addr + len). */
void tl_leakscan_on_munmap(const void *addr, size_t len);
/* Is addr in a mapping the interposed mmap told of (and not unmapped
 * since)? The agent's own mappings (vm.h) never are. Lock-free; for tests. */
bool tl_leakscan_has_mapping(const void *addr);

typedef struct tl_leakscan_stats {
    uint64_t blocks;      /* live blocks classified */
    uint64_t lost_blocks; /* of them not reachable (emitted) */
    uint64_t root_bytes;  /* bytes of roots scanned */
} tl_leakscan_stats_t;

typedef void (*tl_leakscan_emit_fn)(void *ctx, uint64_t ptr, unsigned kind);

/* One block being classified: [ptr, end), end = ptr + 1 for an empty one;
 * state: its TL_LEAK_* once classified. */
typedef struct tl_leakscan_blk {
    uint64_t ptr, end;
    uint8_t state;
} tl_leakscan_blk_t;

/* The classification proper (the pure part of tl_leakscan_run, for
 * tests): b[0, n) sorted by ptr, distinct and not overlapping; roots[0,
 * nroots) the [lo, hi) ranges to start from, taken whole (no exclusions).
 * Memory of this process is read as aligned 8-byte words through
 * process_vm_readv (an unreadable page is skipped); work: room for n
 * indices. Sets each b[i].state to its TL_LEAK_* by memcheck's rules (a
 * start pointer from what roots reach: still reachable; only interior
 * ones: possibly lost; reached only from lost blocks: indirectly lost;
 * else definitely lost, the first in address order of a cycle of lost
 * blocks). No allocation, no lock. */
void tl_leakscan_classify(tl_leakscan_blk_t *b, size_t n, uint32_t *work,
                          const uint64_t (*roots)[2], size_t nroots);

/* CPython's small-object allocator (Objects/obmalloc.c; 3.10 to 3.13,
 * 64-bit default builds, checked on each): arenas of 1 MiB, each its own
 * mmap, in pools of 16 KiB aligned to 16 KiB. A pool is a 48-byte header
 * (ref.count, freeblock, nextpool, prevpool, arenaindex, szidx, nextoffset,
 * maxnextoffset) and then blocks of (szidx + 1) * 16 bytes; the blocks
 * below nextoffset have been handed out, and those on the free list (from
 * freeblock, each free block's first word the next) were given back. A
 * given-back block keeps what its object held: the leak scan reads a
 * mapping of the arena size block by block, allocated blocks only (stale
 * words there made real leaks "still reachable" or "possibly lost"). */
#define TL_PY_ARENA_BYTES ((size_t)1 << 20)
#define TL_PY_POOL_BYTES  16384
#define TL_PY_POOL_HEADER 48 /* the pool header, rounded up to 16 */

/* Which blocks of a pool are allocated: pool is a copy of the
 * TL_PY_POOL_BYTES at address addr. Bit i of live[0, 16) set: the block
 * at pool + TL_PY_POOL_HEADER + i * *size. Returns the number of blocks handed out so
 * far, or -1 when the bytes are not a pool as obmalloc leaves one (the
 * header, the free list and the count of allocated blocks must agree; a
 * free list that leaves the pool or loops is refused). Pure. */
int tl_leakscan_py_pool(const uint8_t *pool, uint64_t addr, uint64_t live[16], unsigned *size);

/* Classify the live table's blocks; emit(ctx, ptr, TL_LEAK_*) for each one
 * not reachable. excl: the [lo, hi) ranges of the agent's and jemalloc's
 * modules. true = failure (no memory for the scan; nothing emitted).
 * Called once, single pass, with the reentrancy guard held. */
bool tl_leakscan_run(const uintptr_t excl[2][2], tl_leakscan_emit_fn emit, void *ctx,
                     tl_leakscan_stats_t *st);

#endif /* TL_AGENT_LEAKSCAN_H */
