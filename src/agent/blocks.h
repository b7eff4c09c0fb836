/* blocks.h - which addresses are the start of a live block, in every mode.
 *
 * One shadow byte per 16-byte granule of the address space (every block the
 * hooks hand out is 16-aligned and at least 16 bytes, so two blocks never
 * share a granule): TL_BLOCK_LIVE from allocation to free, TL_BLOCK_FREED
 * after. The shadow is two-level: a static table of leaf pointers, one per
 * GiB of address space, and leaves of 64 MiB mapped MAP_NORESERVE when the
 * first block of their GiB is marked (only touched pages cost memory: one
 * page of shadow per 64 KiB of heap, one byte per big block). jemalloc's own
 * metadata cannot answer "is this live": a freed small block sits in the
 * thread cache with its slab bit still set, and its lookups are not safe on
 * foreign pointers.
 *
 * Plain byte loads and stores: a block's byte is written only by the thread
 * that allocates or frees it, so a double free from two threads at once is
 * caught only when the second free comes after the first (a free that races
 * with another free of the same block is a bug that no check without a lock
 * per free can catch). No malloc, no lock: safe inside the hooks.
 */
#ifndef TL_AGENT_BLOCKS_H
#define TL_AGENT_BLOCKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_BLOCKS_GRANULE_LG 4  /* 16 bytes per shadow byte */
#define TL_BLOCKS_REGION_LG  30 /* one leaf per GiB of address space */
#define TL_BLOCKS_VA_LG      47 /* x86-64 user address space */

enum { TL_BLOCK_NEVER = 0, TL_BLOCK_LIVE = 1, TL_BLOCK_FREED = 2, TL_BLOCK_MISALIGNED = 3 };

/* A shadow byte holds a state in its low 2 bits and, above them, the tag of
 * the thread that wrote it last: which thread made the last allocation or
 * free at that address. `all` mode's clock (record.c, event_time) needs a
 * fresh, fenced time only for an event that follows another thread's at the
 * same address; this thread's own order is the record order. */
#define TL_BLOCKS_STATE_MASK 3u
#define TL_BLOCKS_TAG_SHIFT  2
#define TL_BLOCKS_TAGS       63u /* tags 1..63; 0 = untagged, never "this thread" */
/* This thread's tag, 0 = none. */
extern __thread uint8_t tl_blocks_tag __attribute__((tls_model("initial-exec")));
/* Take a free tag for this thread (none left: it stays untagged, every
 * event fenced); give it back after the thread's last tagged event (what
 * the thread does later is untagged); in a fork child, free every tag but
 * the calling thread's. Lock-free. */
void tl_blocks_tag_take(void);
void tl_blocks_tag_give(void);
void tl_blocks_tags_reset(void);
/* Set by tl_blocks_mark and by a release in tl_blocks_check: the byte's
 * previous writer may have been another thread (its tag differs, or is 0).
 * Read it right after the call: the next mark overwrites it. */
extern __thread bool tl_blocks_foreign __attribute__((tls_model("initial-exec")));

static inline bool tl_blocks_foreign_of(uint8_t old)
{
    return (old >> TL_BLOCKS_TAG_SHIFT) != tl_blocks_tag || tl_blocks_tag == 0;
}

extern uint8_t *_Atomic tl_blocks_leaf[1u << (TL_BLOCKS_VA_LG - TL_BLOCKS_REGION_LG)];
/* Set when a leaf could not be mapped: some live blocks are unmarked, so a
 * block that is not marked live is no longer proof of a bad free. */
extern atomic_bool tl_blocks_degraded;

/* Map the leaf of p's region (nothing when it is mapped). true = failure:
 * no mapping (p stays unmarked and its free is not checked:
 * tl_blocks_release then says TL_BLOCK_LIVE). */
bool tl_blocks_leaf_make(uintptr_t p);

static inline uint8_t *tl_blocks_byte(uintptr_t p, uint8_t *leaf)
{
    return leaf + ((p & ((UINT64_C(1) << TL_BLOCKS_REGION_LG) - 1)) >> TL_BLOCKS_GRANULE_LG);
}

/* The leaf of p's region, mapped when it is not yet; NULL for an address
 * beyond the user address space or a leaf that could not be mapped. */
static inline uint8_t *tl_blocks_leaf_for(uintptr_t a)
{
    if (a >> TL_BLOCKS_VA_LG) return NULL;
    uint8_t *leaf =
        atomic_load_explicit(&tl_blocks_leaf[a >> TL_BLOCKS_REGION_LG], memory_order_acquire);
    if (__builtin_expect(!leaf, 0)) {
        if (tl_blocks_leaf_make(a)) return NULL;
        leaf =
            atomic_load_explicit(&tl_blocks_leaf[a >> TL_BLOCKS_REGION_LG], memory_order_acquire);
    }
    return leaf;
}

/* p (non-NULL, from the allocator) is live now. */
static inline void tl_blocks_mark(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    tl_blocks_foreign = true; /* unless the byte says otherwise */
    uint8_t *leaf = tl_blocks_leaf_for(a);
    if (!leaf) return;
    uint8_t *b = tl_blocks_byte(a, leaf);
    /* Never a block start before: no earlier event at this address. */
    tl_blocks_foreign = *b != TL_BLOCK_NEVER && tl_blocks_foreign_of(*b);
    *b = (uint8_t)(TL_BLOCK_LIVE | tl_blocks_tag << TL_BLOCKS_TAG_SHIFT);
}

/* tl_blocks_mark for a caller that does not ask whose the byte was
 * (tl_blocks_foreign is left as it is): a store and no load, so a hook that
 * records nothing (the default mode's unrecorded blocks, a disabled agent)
 * does not wait for the byte's cache line (W1-20M with TENSORLEAK_DISABLE=1:
 * that load was a quarter of malloc's time, BENCHMARKS.md). */
static inline void tl_blocks_set_live(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint8_t *leaf = tl_blocks_leaf_for(a);
    if (leaf)
        *tl_blocks_byte(a, leaf) = (uint8_t)(TL_BLOCK_LIVE | tl_blocks_tag << TL_BLOCKS_TAG_SHIFT);
}

/* Is p (non-NULL) a live block? TL_BLOCK_LIVE: yes, and it is marked freed
 * now (release=true) or left live (release=false, e.g. before a realloc that
 * may fail). Else TL_BLOCK_FREED (freed before: double free),
 * TL_BLOCK_NEVER (no block starts there) or TL_BLOCK_MISALIGNED (not
 * 16-aligned: no block can start there). Addresses outside every marked
 * leaf and beyond the user address space are TL_BLOCK_NEVER; once a leaf
 * could not be mapped (tl_blocks_degraded), unmarked ones are TL_BLOCK_LIVE
 * (unchecked: never a false report). */
static inline int tl_blocks_check(const void *p, bool release)
{
    uintptr_t a = (uintptr_t)p;
    tl_blocks_foreign = true; /* unless the byte says otherwise */
    if (a & ((1u << TL_BLOCKS_GRANULE_LG) - 1)) return TL_BLOCK_MISALIGNED;
    if (a >> TL_BLOCKS_VA_LG) return TL_BLOCK_NEVER;
    uint8_t *leaf =
        atomic_load_explicit(&tl_blocks_leaf[a >> TL_BLOCKS_REGION_LG], memory_order_relaxed);
    if (__builtin_expect(!leaf, 0))
        return atomic_load_explicit(&tl_blocks_degraded, memory_order_relaxed) ? TL_BLOCK_LIVE
                                                                               : TL_BLOCK_NEVER;
    uint8_t *b = tl_blocks_byte(a, leaf);
    uint8_t old = *b, s = old & TL_BLOCKS_STATE_MASK;
    if (__builtin_expect(s != TL_BLOCK_LIVE, 0)) {
        if (s == TL_BLOCK_NEVER && atomic_load_explicit(&tl_blocks_degraded, memory_order_relaxed))
            return TL_BLOCK_LIVE;
        return s ? TL_BLOCK_FREED : TL_BLOCK_NEVER;
    }
    if (release) {
        tl_blocks_foreign = tl_blocks_foreign_of(old);
        *b = (uint8_t)(TL_BLOCK_FREED | tl_blocks_tag << TL_BLOCKS_TAG_SHIFT);
    }
    return TL_BLOCK_LIVE;
}

/* A free (or realloc) of p found it not live (state from tl_blocks_check):
 * one line on stderr, "tensorleak: double free of 0x...: freed again at
 * f+0x12 (prog) <- main+0x40 (prog)" (or "free of a pointer never
 * allocated", "realloc of a freed pointer", ...), then abort(), as glibc
 * does ("free(): double free detected in tcache 2"): the heap is never
 * touched with it. op is "free" or "realloc". Call with the guard raised. */
__attribute__((noreturn, cold)) void tl_blocks_bad_free(const char *op, const void *p, int state);

#endif /* TL_AGENT_BLOCKS_H */
