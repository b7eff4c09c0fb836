/* live.c - table of recorded live blocks and the byte sampler (see live.h).
 *
 * No malloc (the table is mmap'd), no locks: safe inside the hooks.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/live.h"
#include "agent/vm.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>

#define EMPTY 0u
#define BUSY  1u /* being filled by an inserter */
#define TOMB  2u /* removed */

typedef struct slot {
    _Atomic uint64_t key; /* ptr, or EMPTY / BUSY / TOMB (no block lives at 0-2) */
    tl_live_entry_t e;
} slot_t;

_Atomic uint8_t tl_live_filter[1u << TL_LIVE_FILTER_LG];
static slot_t *table;
static _Atomic uint64_t count;
/* The overflow table (live.h): 16 times the main one's slots, mapped by the
 * first insert the main table does not take; NULL before. */
static _Atomic(slot_t *) over;
static unsigned over_lg;
static atomic_bool over_refused;    /* its mapping failed: not tried again */
static _Atomic uint64_t main_count; /* entries in the main table */
static _Atomic int64_t storages;    /* entries of tl_live_host_storage kinds */
static atomic_bool storages_missed; /* tl_live_storage_missed, or reset with some */
static unsigned lg = TL_LIVE_LG_SLOTS;
#define MASK ((UINT64_C(1) << lg) - 1)

static size_t home_lg(uint64_t p, unsigned bits)
{
    return (size_t)(((p >> 4) * UINT64_C(0xff51afd7ed558ccd)) >> (64 - bits));
}

bool tl_live_init_lg(unsigned lg_slots)
{
    if (table) return false;
    if (lg_slots < 4 || lg_slots > 24) return true;
    /* Under `ulimit -v`, a smaller table: what it cannot take is counted
     * (tl_live_storage_missed, the leak scan's missed blocks). */
    lg_slots = tl_vm_fit_lg(tl_vm_limit(), lg_slots, lg_slots < 12 ? lg_slots : 12, sizeof(slot_t));
    void *m;
    if (tl_vm_map_anon(&m, sizeof(slot_t) << lg_slots, true)) return true;
    lg = lg_slots;
    over_lg = lg_slots + 4 > 24 ? 24 : lg_slots + 4;
    table = m;
    return false;
}

bool tl_live_init(void)
{
    return tl_live_init_lg(TL_LIVE_LG_SLOTS);
}

/* A fork child's view of its parent's blocks (live.h): the parent's tables,
 * kept whole, read-only but for removals. */
static slot_t *inherited, *inherited_over;
static unsigned inherited_lg, inherited_over_lg;

static void unmap_table(slot_t *t, unsigned bits)
{
    if (t) tl_vm_unmap(t, sizeof(slot_t) << bits);
}

void tl_live_reset(bool keep_parents)
{
    memset(tl_live_filter, 0, sizeof tl_live_filter);
    atomic_store(&count, 0);
    atomic_store(&main_count, 0);
    atomic_store(&over_refused, false);
    /* A fork child: the parent's storages live on in it, outside the table. */
    if (atomic_exchange(&storages, 0) != 0) atomic_store(&storages_missed, true);
    if (!table) return;
    slot_t *o = atomic_exchange(&over, NULL);
    void *fresh;
    if (keep_parents && !tl_vm_map_anon(&fresh, sizeof(slot_t) << lg, true)) {
        unmap_table(inherited, inherited_lg);
        unmap_table(inherited_over, inherited_over_lg);
        inherited = table;
        inherited_lg = lg;
        inherited_over = o;
        inherited_over_lg = over_lg;
        table = fresh;
        return;
    }
    tl_vm_zero(table, sizeof(slot_t) << lg, true);
    unmap_table(o, over_lg);
}

static void filter_add(uint64_t p, int d)
{
    _Atomic uint8_t *f = &tl_live_filter[tl_live_bucket(p)];
    uint8_t cur = atomic_load_explicit(f, memory_order_relaxed);
    /* A saturated bucket stays saturated: it may hold more than 255. */
    while (cur != 255 &&
           !atomic_compare_exchange_weak_explicit(f, &cur, (uint8_t)(cur + d), memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* Enter e into t (1 << bits slots). true = its probe chain there is full. */
static bool put(slot_t *t, unsigned bits, const tl_live_entry_t *e)
{
    size_t h = home_lg(e->ptr, bits), mask = ((size_t)1 << bits) - 1;
    for (unsigned i = 0; i < TL_LIVE_PROBES; i++) {
        slot_t *s = &t[(h + i) & mask];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
        if (k != EMPTY && k != TOMB) continue;
        if (!atomic_compare_exchange_strong_explicit(&s->key, &k, BUSY, memory_order_acquire,
                                                     memory_order_relaxed))
            continue;
        s->e = *e;
        /* The filter counts before the key shows: a free that finds the key
         * also finds the filter set. */
        filter_add(e->ptr, 1);
        atomic_store_explicit(&s->key, e->ptr, memory_order_release);
        return false;
    }
    return true;
}

/* The overflow table, mapped now if it is not yet (one mapping wins a
 * race; the others are given back); NULL when it cannot be mapped. */
static slot_t *overflow(void)
{
    slot_t *o = atomic_load_explicit(&over, memory_order_acquire);
    if (o || atomic_load_explicit(&over_refused, memory_order_relaxed)) return o;
    void *m;
    size_t bytes = sizeof(slot_t) << over_lg;
    if (!tl_vm_fits(tl_vm_limit(), bytes) || tl_vm_map_anon(&m, bytes, true)) {
        atomic_store(&over_refused, true);
        return NULL;
    }
    if (atomic_compare_exchange_strong_explicit(&over, &o, (slot_t *)m, memory_order_acq_rel,
                                                memory_order_acquire))
        return m;
    tl_vm_unmap(m, bytes);
    return o;
}

bool tl_live_insert(const tl_live_entry_t *e)
{
    if (!table || e->ptr <= TOMB) return true;
    /* The main table up to 3/4 of its slots (probe chains stay short), then
     * the overflow table; and the overflow table for a full chain. */
    if (atomic_load_explicit(&main_count, memory_order_relaxed) < (MASK + 1) / 4 * 3 &&
        !put(table, lg, e)) {
        atomic_fetch_add_explicit(&main_count, 1, memory_order_relaxed);
    } else {
        slot_t *o = overflow();
        if (!o || put(o, over_lg, e)) return true;
    }
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    if (tl_live_host_storage(e->kind))
        atomic_fetch_add_explicit(&storages, 1, memory_order_relaxed);
    return false;
}

/* The slot of ptr in t (1 << bits slots), or NULL. Inlined: a free's
 * lookup in the default mode. */
static inline __attribute__((always_inline)) slot_t *find(slot_t *t, unsigned bits, uint64_t ptr)
{
    size_t h = home_lg(ptr, bits), mask = ((size_t)1 << bits) - 1;
    for (unsigned i = 0; i < TL_LIVE_PROBES; i++) {
        slot_t *s = &t[(h + i) & mask];
        uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);
        if (k == EMPTY) return NULL;
        if (k == ptr) return s;
    }
    return NULL;
}

/* The slot of ptr in the main table, else in the overflow table, or NULL;
 * *in_main says which. */
static slot_t *lookup(uint64_t ptr, bool *in_main)
{
    slot_t *s = table && ptr > TOMB ? find(table, lg, ptr) : NULL;
    *in_main = s != NULL;
    if (s || !table || ptr <= TOMB) return s;
    slot_t *o = atomic_load_explicit(&over, memory_order_acquire);
    return o ? find(o, over_lg, ptr) : NULL;
}

bool tl_live_remove(uint64_t ptr, tl_live_entry_t *out)
{
    bool in_main;
    slot_t *s = lookup(ptr, &in_main);
    if (!s) return true;
    *out = s->e;
    atomic_store_explicit(&s->key, TOMB, memory_order_release);
    filter_add(ptr, -1);
    atomic_fetch_sub_explicit(&count, 1, memory_order_relaxed);
    if (in_main) atomic_fetch_sub_explicit(&main_count, 1, memory_order_relaxed);
    if (tl_live_host_storage(out->kind))
        atomic_fetch_sub_explicit(&storages, 1, memory_order_relaxed);
    return false;
}

bool tl_live_has(uint64_t ptr, tl_live_entry_t *out)
{
    bool in_main;
    const slot_t *s = lookup(ptr, &in_main);
    if (!s) return false;
    *out = s->e;
    /* Still the same block's: not removed (and the slot reused) meanwhile. */
    return atomic_load_explicit(&s->key, memory_order_acquire) == ptr && out->ptr == ptr;
}

/* fn for each entry present now of t[0, n). */
static void each(const slot_t *t, size_t n, void (*fn)(void *ctx, const tl_live_entry_t *e),
                 void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t k = atomic_load_explicit(&t[i].key, memory_order_acquire);
        if (k <= TOMB) continue;
        tl_live_entry_t e = t[i].e;
        if (atomic_load_explicit(&t[i].key, memory_order_acquire) == k && e.ptr == k) fn(ctx, &e);
    }
}

void tl_live_foreach(void (*fn)(void *ctx, const tl_live_entry_t *e), void *ctx)
{
    if (!table || atomic_load_explicit(&count, memory_order_relaxed) == 0) return;
    each(table, (size_t)MASK + 1, fn, ctx);
    slot_t *o = atomic_load_explicit(&over, memory_order_acquire);
    if (o) each(o, (size_t)1 << over_lg, fn, ctx);
}

bool tl_live_inherited_remove(uint64_t ptr)
{
    slot_t *s = inherited && ptr > TOMB ? find(inherited, inherited_lg, ptr) : NULL;
    if (!s && inherited_over && ptr > TOMB) s = find(inherited_over, inherited_over_lg, ptr);
    uint64_t k = ptr;
    return !s || !atomic_compare_exchange_strong(&s->key, &k, TOMB);
}

void tl_live_inherited_foreach(void (*fn)(void *ctx, const tl_live_entry_t *e), void *ctx)
{
    if (inherited) each(inherited, (size_t)1 << inherited_lg, fn, ctx);
    if (inherited_over) each(inherited_over, (size_t)1 << inherited_over_lg, fn, ctx);
}

uint64_t tl_live_count(void)
{
    return atomic_load_explicit(&count, memory_order_relaxed);
}

uint64_t tl_live_storages(void)
{
    int64_t n = atomic_load_explicit(&storages, memory_order_relaxed);
    return n < 0 ? 0 : (uint64_t)n; /* a remove counted before its insert */
}

void tl_live_storage_missed(void)
{
    atomic_store(&storages_missed, true);
}

int64_t tl_live_storages_query(const uint64_t *ptrs, size_t n, uint8_t *is_live)
{
    if (n) memset(is_live, 0, n);
    if (!table || atomic_load_explicit(&storages_missed, memory_order_relaxed)) return -1;
    for (size_t i = 0; i < n; i++) {
        tl_live_entry_t e;
        is_live[i] = tl_live_has(ptrs[i], &e) && tl_live_host_storage(e.kind);
    }
    return (int64_t)tl_live_storages();
}

int64_t tl_sample_next(uint64_t *rng, uint64_t mean)
{
    uint64_t x = *rng ? *rng : UINT64_C(0x2545F4914F6CDD1D);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    /* u in (0, 1]: 53 random bits. */
    double u = (double)((x >> 11) + 1) * (1.0 / 9007199254740992.0);
    double v = -log(u) * (double)mean;
    if (v < 1.0) return 1;
    if (v > 9.0e18) return INT64_MAX;
    return (int64_t)v;
}

uint64_t tl_sample_weight(uint64_t size, uint64_t mean)
{
    if (size == 0 || mean <= 1) return size;
    double p = -expm1(-(double)size / (double)mean);
    double w = p > 0 ? (double)size / p : (double)mean;
    return w > 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
}
