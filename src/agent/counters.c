/* counters.c - per-thread event counter slots and their sums (counters.h).
 *
 * No malloc, no stdio: runs inside the hooks with the guard raised.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/counters.h"

#include <string.h>

tl_counters_t tl_counters_slots[TL_COUNTERS_SLOTS];
#define slots tl_counters_slots
static atomic_uint nslots;

/* Slots of ended threads, for the next new ones (a spin lock: taken once
 * per thread start and end; the fork child starts with none free). */
static unsigned free_slot[TL_COUNTERS_SLOTS];
static unsigned nfree_slots;
static atomic_flag free_slot_lock = ATOMIC_FLAG_INIT;

static void free_slots_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&free_slot_lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void free_slots_unlock(void)
{
    atomic_flag_clear_explicit(&free_slot_lock, memory_order_release);
}

/* Slots in use: the first n handed out, and the shared last one, which an
 * ended thread uses before that many threads ever existed. */
static unsigned slots_in_use(void)
{
    unsigned n = atomic_load(&nslots);
    return n < TL_COUNTERS_SLOTS - 1 ? n : TL_COUNTERS_SLOTS - 1;
}

tl_counters_t *tl_counters_take(void)
{
    free_slots_lock();
    unsigned i = nfree_slots ? free_slot[--nfree_slots] : TL_COUNTERS_SLOTS;
    free_slots_unlock();
    if (i == TL_COUNTERS_SLOTS) i = atomic_fetch_add_explicit(&nslots, 1, memory_order_relaxed);
    return &slots[i < TL_COUNTERS_SLOTS ? i : TL_COUNTERS_SLOTS - 1];
}

void tl_counters_give(tl_counters_t *s)
{
    if (s == TL_COUNTERS_SHARED) return;
    free_slots_lock();
    free_slot[nfree_slots++] = (unsigned)(s - slots);
    free_slots_unlock();
}

void tl_counters_reset(void)
{
    memset(slots, 0, sizeof slots);
    atomic_store(&nslots, 0);
    nfree_slots = 0;
    atomic_flag_clear(&free_slot_lock);
}

/* Slot k of a walk over the n + 1 slots in use (slots_in_use() = n): the
 * shared one last. */
static tl_counters_t *slot_at(unsigned k, unsigned n)
{
    return &slots[k == n ? TL_COUNTERS_SLOTS - 1 : k];
}

static uint64_t get(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

void tl_counters_classes(uint64_t *count, uint64_t *bytes, uint64_t *frees)
{
    memset(count, 0, TL_REC_COUNT_CLASSES * sizeof *count);
    memset(bytes, 0, TL_REC_COUNT_CLASSES * sizeof *bytes);
    *frees = 0;
    for (unsigned k = 0, n = slots_in_use(); k <= n; k++) {
        tl_counters_t *s = slot_at(k, n);
        for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
            count[c] += get(&s->cls_count[c]);
            bytes[c] += get(&s->cls_bytes[c]);
        }
        *frees += get(&s->frees_all);
    }
}

void tl_counters_totals(uint64_t *allocs, uint64_t *frees, uint64_t *storages, uint64_t *dropped)
{
    *allocs = *frees = *storages = *dropped = 0;
    for (unsigned k = 0, n = slots_in_use(); k <= n; k++) {
        tl_counters_t *s = slot_at(k, n);
        *allocs += get(&s->allocs);
        *frees += get(&s->frees);
        *storages += get(&s->storages);
        *dropped += get(&s->dropped);
    }
}

void tl_counters_dropped(uint64_t n)
{
    if (tl_tsd.slot) tl_counters_add(&tl_tsd.slot->dropped, n);
}
