/* live.h - the agent's table of recorded live blocks, outside `all` mode.
 *
 * In the default and aggregate modes only some blocks are recorded (sampled
 * ones, big ones, storages), and a FREE must be written exactly for those.
 * free() asks tl_live_maybe first: one load from a 64 KiB filter of
 * per-bucket counts, so a free of an unrecorded block costs a hash and a
 * load. Behind it, a lock-free open-addressing table (ptr -> size, stack id,
 * kind, time) in its own anonymous mapping: CAS on the key, tombstones on
 * removal, never a lock. Past 3/4 of its slots, and for a full probe chain,
 * blocks go to an overflow table of 16 times the slots (at most 2^24),
 * mapped by the first such insert: a script keeping 300,000 numpy arrays
 * (each a storage) filled the table alone, and its dropped events made
 * check's verdict INCOMPLETE; a table that big from the start cost W3 31 MB
 * of RSS. A block is inserted after its allocation returned
 * and removed before it is released, so one pointer is never in the table
 * twice. Readers of the whole table (checkpoints) see a racy but valid
 * snapshot. tl_live_reset needs a single-threaded process (fork child).
 */
#ifndef TL_AGENT_LIVE_H
#define TL_AGENT_LIVE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"

#define TL_LIVE_LG_SLOTS  18 /* 262,144 slots; filled to 3/4, then the overflow table */
#define TL_LIVE_PROBES    64
#define TL_LIVE_FILTER_LG 16

typedef struct tl_live_entry {
    uint64_t ptr, size; /* size as requested */
    uint64_t weight;    /* estimated bytes this block stands for (size for unsampled) */
    uint64_t stack_id;
    uint64_t ts;     /* allocation time, ns */
    uint32_t kind;   /* tl_kind_t */
    uint32_t device; /* device storages (aggregate mode, checkpoint.h): TL_DEVICE_* */
} tl_live_entry_t;

extern _Atomic uint8_t tl_live_filter[1u << TL_LIVE_FILTER_LG];

static inline size_t tl_live_bucket(uint64_t p)
{
    return (size_t)(((p >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - TL_LIVE_FILTER_LG));
}

/* Might p be in the table? False: certainly not (no false negatives). */
static inline bool tl_live_maybe(const void *p)
{
    return atomic_load_explicit(&tl_live_filter[tl_live_bucket((uintptr_t)p)],
                                memory_order_relaxed) != 0;
}

/* Map the table. true = failure. */
bool tl_live_init(void);
/* Map a table of 1 << lg_slots slots (lg_slots <= 24) instead: every live
 * block of an `all`-mode run with the leak scan. true = failure. */
bool tl_live_init_lg(unsigned lg_slots);
/* Empty the table (fork child). Single-threaded only. keep_parents (the
 * leak scan's table): the parent's table is kept as the child's inherited
 * blocks, a fresh one mapped for its own (no copy: the pages stay shared
 * until written); a grandchild keeps its parent's alone. Blocks the child
 * keeps only through memory its parent allocated were definitely lost
 * without them (a fork child that stores into a list made before the
 * fork, CPython 3.10's thread state). When no table can be mapped, the
 * parent's blocks are forgotten, as before. */
void tl_live_reset(bool keep_parents);
/* A fork child frees a block its parent allocated: out of the inherited
 * blocks. true = not one of them. Lock-free. */
bool tl_live_inherited_remove(uint64_t ptr);
/* Call fn for each inherited block still live (none outside a fork child
 * of a leak scan's run). */
void tl_live_inherited_foreach(void (*fn)(void *ctx, const tl_live_entry_t *e), void *ctx);
/* Enter e. true = both tables are full around e->ptr, or the overflow
 * table cannot be mapped (not entered). */
bool tl_live_insert(const tl_live_entry_t *e);
/* Take ptr out (then *out holds its entry). true = not found: it was not
 * in the table (*out untouched). */
bool tl_live_remove(uint64_t ptr, tl_live_entry_t *out);
/* Is ptr in the table? true: its entry copied into *out, left in. Racy against a concurrent remove
 * of ptr (as tl_live_foreach): the answer of one moment. */
bool tl_live_has(uint64_t ptr, tl_live_entry_t *out);
/* Call fn for each entry present now. */
void tl_live_foreach(void (*fn)(void *ctx, const tl_live_entry_t *e), void *ctx);
/* Entries present (approximate under concurrency). */
uint64_t tl_live_count(void);
/* Is an entry of this kind (tl_kind_t) a host storage: a storage kind
 * (tl_kind_is_storage) and no device kind (aggregate mode keeps device
 * storages here too, checkpoint.h)? */
static inline bool tl_live_host_storage(uint32_t kind)
{
    return tl_kind_is_storage(kind) && !tl_kind_has_device(kind);
}
/* Entries present of host storages (approximate under concurrency). */
uint64_t tl_live_storages(void);
/* A live host storage is not in the table (it had no room): from now on
 * tl_live_storages_query does not know. */
void tl_live_storage_missed(void);
/* A report point's question (include/tensorleak.h, storages_live), for a
 * table of the default or aggregate mode's blocks: is_live[i] = 1 when
 * ptrs[i] is the base of a host storage in the table, else 0. Returns how
 * many are in it, all of them, or -1 when one may be missing (no table,
 * tl_live_storage_missed, a reset, a fork child's, that dropped some);
 * is_live is then all 0. Any thread, no lock: the answer of one moment. */
int64_t tl_live_storages_query(const uint64_t *ptrs, size_t n, uint8_t *is_live);

/* Bytes until the next sample: exponential with mean `mean` (a Poisson
 * process over allocated bytes, as jemalloc's and tcmalloc's heap profilers
 * do), from the caller's xorshift state (*rng, non-zero). At least 1. */
int64_t tl_sample_next(uint64_t *rng, uint64_t mean);

/* Estimated bytes a sampled block of `size` stands for: size / P(sampled),
 * P = 1 - exp(-size / mean). The reader computes the same from OPTIONS. */
uint64_t tl_sample_weight(uint64_t size, uint64_t mean);

#endif /* TL_AGENT_LIVE_H */
