/* record_scan.h - `all` mode's leak scan (TENSORLEAK_LEAK_SCAN=1) as the
 * recording path sees it: once tl_record_leak_scan_init mapped the live
 * table (record.h), every live block is in it, so that tl_record_leak_scan
 * (record.c, through tl_record_scan_classify) can classify them
 * (leakscan.h). For record.c and record_scan.c only. Guard held; thread-safe (the live table is
 * lock-free).
 */
#ifndef TL_AGENT_RECORD_SCAN_H
#define TL_AGENT_RECORD_SCAN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/leakscan.h"
#include "agent/live.h"
#include "agent/record.h"

/* Blocks the full live table could not take: counted, not classified. */
extern _Atomic uint64_t tl_record_scan_missed;

/* A block of size bytes at ptr (NULL: nothing) became live. */
static inline void tl_record_scan_track(const void *ptr, size_t size)
{
    if (!ptr || !atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed)) return;
    tl_live_entry_t e = {.ptr = (uintptr_t)ptr, .size = size, .weight = size};
    if (tl_live_insert(&e))
        atomic_fetch_add_explicit(&tl_record_scan_missed, 1, memory_order_relaxed);
}

/* The block at ptr is freed. */
static inline void tl_record_scan_untrack(const void *ptr)
{
    tl_live_entry_t e;
    if (atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed) && tl_live_maybe(ptr))
        tl_live_remove((uintptr_t)ptr, &e);
}

/* Classifies every block of the live table once (the first call; later
 * ones return false): each block's kind through emit (leakscan.h), and v
 * the LEAKSCAN record's values (version, blocks, blocks missed, root
 * bytes, nanoseconds taken, lost blocks). false = no scan (done before, or
 * it failed). */
bool tl_record_scan_classify(tl_leakscan_emit_fn emit, uint64_t v[6]);

#endif /* TL_AGENT_RECORD_SCAN_H */
