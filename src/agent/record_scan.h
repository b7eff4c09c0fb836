/* record_scan.h - `all` mode's leak scan (TENSORLEAK_LEAK_SCAN=1) as the
 * recording path sees it: once tl_record_scan_init mapped the live table,
 * every live block is in it (tl_record_scan_track, untrack), so that
 * tl_record_scan_classify can classify them (leakscan.h); record.c writes
 * what it finds (tl_record_leak_scan). A module below record: it calls
 * live, leakscan, modules, deadstacks and clock, never record. Guard held;
 * thread-safe (the live table is lock-free). Errors: bool true = failure.
 */
#ifndef TL_AGENT_RECORD_SCAN_H
#define TL_AGENT_RECORD_SCAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/leakscan.h"
#include "agent/live.h"

/* Whether the leak scan follows every live block: set by
 * tl_record_scan_init, cleared by the scan itself (tl_record_scan_classify:
 * frees from then on are not the scan's). Read by the hot paths, relaxed. */
extern atomic_bool tl_record_scan_on;
/* Blocks the full live table could not take: counted, not classified. */
extern _Atomic uint64_t tl_record_scan_missed;

/* Map the live table that then follows every live block, find the agent's
 * and jemalloc's modules (left out of the roots), and turn the scan on.
 * true = failure (no memory for the table: no scan). Once, at init. */
bool tl_record_scan_init(void);

/* A block of size bytes at ptr (NULL: nothing) became live. */
static inline void tl_record_scan_track(const void *ptr, size_t size)
{
    if (!ptr || !atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed)) return;
    tl_live_entry_t e = {.ptr = (uintptr_t)ptr, .size = size, .weight = size};
    if (tl_live_insert(&e))
        atomic_fetch_add_explicit(&tl_record_scan_missed, 1, memory_order_relaxed);
}

/* The block at ptr is freed (in a fork child, maybe one of its parent's:
 * live.h). */
static inline void tl_record_scan_untrack(const void *ptr)
{
    tl_live_entry_t e;
    if (!atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed)) return;
    if (!tl_live_maybe(ptr) || tl_live_remove((uintptr_t)ptr, &e))
        tl_live_inherited_remove((uintptr_t)ptr);
}

/* Classifies every block of the live table once (the first call; later
 * ones fail): each block's kind through emit (leakscan.h), and v the
 * LEAKSCAN record's values (version, blocks, blocks missed, root bytes,
 * nanoseconds taken, lost blocks). true = failure: no scan (done before,
 * or no memory for it); v is then not set. */
bool tl_record_scan_classify(tl_leakscan_emit_fn emit, uint64_t v[6]);

#endif /* TL_AGENT_RECORD_SCAN_H */
