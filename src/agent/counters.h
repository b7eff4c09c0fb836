/* counters.h - the agent's event counters: one cache-line slot per thread,
 * summed into the END, COUNT and checkpoint records.
 *
 * The owner updates its slot with relaxed load + store (plain moves, no
 * contended atomics). Threads past TL_COUNTERS_SLOTS, and threads that
 * already ended, share the last slot, which is updated with atomic adds.
 * A slot outlives its thread and goes to the next new one.
 */
#ifndef TL_AGENT_COUNTERS_H
#define TL_AGENT_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "agent/tsd.h"
#include "common/trace_format.h"

typedef struct tl_counters {
    _Atomic uint64_t allocs, frees, storages, dropped; /* records written / lost */
    _Atomic uint64_t frees_all; /* every free of a block (all modes but `all`) */
    /* Every plain allocation by size class c = bit length of the size
     * (class 0: 0 bytes; c: [2^(c-1), 2^c)): how many, and their bytes. */
    _Atomic uint64_t cls_count[TL_REC_COUNT_CLASSES], cls_bytes[TL_REC_COUNT_CLASSES];
} __attribute__((aligned(64))) tl_counters_t;

#define TL_COUNTERS_SLOTS 1024
extern tl_counters_t tl_counters_slots[TL_COUNTERS_SLOTS];
/* The slot that late and ended threads share (atomic adds). */
#define TL_COUNTERS_SHARED (&tl_counters_slots[TL_COUNTERS_SLOTS - 1])

/* Owner-only add: a relaxed load and store, no read-modify-write. */
static inline void tl_ctr_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* Add v to counter c of the calling thread's slot (tl_tsd.slot), atomically
 * when that slot is the shared one. */
static inline void tl_counters_add(_Atomic uint64_t *c, uint64_t v)
{
    if (tl_tsd.slot == TL_COUNTERS_SHARED)
        atomic_fetch_add_explicit(c, v, memory_order_relaxed);
    else
        tl_ctr_add(c, v);
}

/* Size class of an allocation of size bytes (its bit length, 0 for 0). */
static inline unsigned tl_size_class(uint64_t size)
{
    return size ? 64u - (unsigned)__builtin_clzll(size) : 0u;
}

/* A slot for a new thread: an ended thread's, a fresh one, or the shared
 * one when all are taken. Takes a spin lock (thread start and end only). */
tl_counters_t *tl_counters_take(void);
/* An ending thread gives its slot s back (the shared one is kept). */
void tl_counters_give(tl_counters_t *s);
/* Zero every slot and forget the free list (fork child: one thread). */
void tl_counters_reset(void);

/* The exact per-class counters summed over all threads: count[] and
 * bytes[] hold TL_REC_COUNT_CLASSES entries; *frees every free seen. */
void tl_counters_classes(uint64_t *count, uint64_t *bytes, uint64_t *frees);
/* The record totals of the END record, summed over all threads. */
void tl_counters_totals(uint64_t *allocs, uint64_t *frees, uint64_t *storages, uint64_t *dropped);
/* n records of this thread could not be written (nothing without a slot). */
void tl_counters_dropped(uint64_t n);

#endif /* TL_AGENT_COUNTERS_H */
