/* shm.c - shared-memory storages the API registered, unregistered at their
 * munmap (shm.h). */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/shm.h"

#include <stdatomic.h>

#include "agent/record.h"
#include "agent/tsd.h"
#include "common/trace_format.h"

static _Atomic uint64_t bases[TL_SHM_SLOTS]; /* 0 = free */
/* Slots [0, used) have been taken at some time: munmap looks no further.
 * Only grows. */
static _Atomic size_t used;

bool tl_shm_on_register(uint64_t base)
{
    if (!base) return false;
    size_t n = atomic_load_explicit(&used, memory_order_acquire);
    for (size_t i = 0; i < n; i++) /* one slot a base */
        if (atomic_load_explicit(&bases[i], memory_order_relaxed) == base) return false;
    for (size_t i = 0; i < TL_SHM_SLOTS; i++) {
        uint64_t z = 0;
        if (atomic_compare_exchange_strong(&bases[i], &z, base)) {
            size_t u = atomic_load_explicit(&used, memory_order_relaxed);
            while (u <= i && !atomic_compare_exchange_weak_explicit(
                                 &used, &u, i + 1, memory_order_release, memory_order_relaxed))
                ;
            return false;
        }
    }
    return true;
}

void tl_shm_on_munmap(const void *addr, size_t len)
{
    size_t n = atomic_load_explicit(&used, memory_order_acquire);
    uint64_t s = (uint64_t)(uintptr_t)addr, e = s + len;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = atomic_load_explicit(&bases[i], memory_order_relaxed);
        if (!b || b < s || b >= e || !atomic_compare_exchange_strong(&bases[i], &b, 0)) continue;
        TL_GUARD_SCOPE;
        if (tl_tsd.guard == 1 && !tl_record_api_begin()) {
            uint64_t ints[1] = {b};
            tl_record_lineage(TL_REC_STORAGE_UNREG, ints, "", 0);
        }
    }
}
