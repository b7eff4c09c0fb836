/* checkpoint.c - aggregate mode's checkpoints (see checkpoint.h).
 *
 * No malloc: the site totals live in their own anonymous mapping, records go
 * straight into the trace's shared mapping.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/checkpoint.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "agent/counters.h"
#include "common/trace_format.h"

typedef struct site_tot {
    _Atomic uint64_t allocs, frees, bytes, freed, flags;
} site_tot_t;

typedef struct region {
    uint8_t *chunk[TL_CKPT_MAX_CHUNKS];
    unsigned n; /* chunks taken */
} region_t;

static tl_writer_t *writer;
static site_tot_t *sites;
static region_t regions[4]; /* current A, B, peak A, B */
static uint64_t seq[2];     /* checkpoints written per set */
static atomic_flag busy = ATOMIC_FLAG_INIT;
static _Atomic uint64_t next_due, period;
static _Atomic int64_t live_bytes, live_blocks;
static _Atomic uint64_t peak_bytes, peak_ckpt_bytes, max_stack;

bool tl_ckpt_init(tl_writer_t *w, uint64_t period_ns)
{
    writer = w;
    memset(regions, 0, sizeof regions);
    memset(seq, 0, sizeof seq);
    atomic_flag_clear(&busy);
    atomic_store(&live_bytes, 0);
    atomic_store(&live_blocks, 0);
    atomic_store(&peak_bytes, 0);
    atomic_store(&peak_ckpt_bytes, 0);
    atomic_store(&max_stack, 0);
    atomic_store(&period, period_ns);
    atomic_store(&next_due, 0);
    size_t bytes = sizeof(site_tot_t) * TL_CKPT_MAX_SITES;
    void *m = mmap(sites ? (void *)sites : NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (sites ? MAP_FIXED : 0), -1, 0);
    if (m == MAP_FAILED) return true;
    sites = m;
    return false;
}

void tl_ckpt_set_max_stack(uint64_t id)
{
    uint64_t cur = atomic_load_explicit(&max_stack, memory_order_relaxed);
    while (id > cur && !atomic_compare_exchange_weak(&max_stack, &cur, id))
        ;
}

static void write_set(int set, uint64_t now);

void tl_ckpt_on_alloc(const tl_live_entry_t *e, uint64_t now)
{
    if (!sites) return;
    if (e->stack_id && e->stack_id < TL_CKPT_MAX_SITES) {
        site_tot_t *s = &sites[e->stack_id];
        atomic_fetch_add_explicit(&s->allocs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->bytes, e->weight, memory_order_relaxed);
        if (tl_kind_is_storage(e->kind))
            atomic_fetch_or_explicit(&s->flags, 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&live_blocks, 1, memory_order_relaxed);
    int64_t lb = atomic_fetch_add_explicit(&live_bytes, (int64_t)e->weight, memory_order_relaxed) +
                 (int64_t)e->weight;
    uint64_t pk = atomic_load_explicit(&peak_bytes, memory_order_relaxed);
    while (lb > 0 && (uint64_t)lb > pk &&
           !atomic_compare_exchange_weak_explicit(&peak_bytes, &pk, (uint64_t)lb,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
    /* A new peak 1/16 above the last peak checkpoint: snapshot the live set
     * now (at most ~log(peak)/log(17/16) times in a run). */
    uint64_t pc = atomic_load_explicit(&peak_ckpt_bytes, memory_order_relaxed);
    if (lb > 0 && (uint64_t)lb > pc + pc / 16 && (uint64_t)lb >= (UINT64_C(1) << 20) &&
        !atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) {
        write_set(TL_CKPT_PEAK, now);
        atomic_flag_clear_explicit(&busy, memory_order_release);
    }
}

void tl_ckpt_on_free(const tl_live_entry_t *e)
{
    if (!sites) return;
    if (e->stack_id && e->stack_id < TL_CKPT_MAX_SITES) {
        site_tot_t *s = &sites[e->stack_id];
        atomic_fetch_add_explicit(&s->frees, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->freed, e->weight, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&live_blocks, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&live_bytes, (int64_t)e->weight, memory_order_relaxed);
}

/* --- writing a checkpoint into a region --- */

typedef struct out {
    region_t *rg;
    unsigned region, idx; /* region number, chunk index being filled */
    uint8_t *ch;
    uint32_t used;
    uint64_t ts;
    uint64_t records, lost;
    bool dead; /* no chunk could be had: the rest is lost */
} out_t;

static bool out_chunk(out_t *o, unsigned idx)
{
    region_t *rg = o->rg;
    if (idx >= TL_CKPT_MAX_CHUNKS) return true;
    if (idx >= rg->n) {
        uint8_t *ch = tl_writer_chunk_raw(writer);
        if (!ch) return true;
        rg->chunk[rg->n++] = ch;
        tl_store_le32(ch + TL_CHK_TID, TL_CKPT_TID_BASE + o->region);
        tl_store_le32(ch + TL_CHK_SEQ, idx);
        __atomic_store_n((uint32_t *)(ch + TL_CHK_USED), 0, __ATOMIC_RELEASE);
        __atomic_store_n((uint32_t *)(ch + TL_CHK_MAGIC), TL_CHUNK_MAGIC, __ATOMIC_RELEASE);
    }
    o->idx = idx;
    o->ch = rg->chunk[idx];
    o->used = 0;
    tl_store_le64(o->ch + TL_CHK_BASE_TS, o->ts);
    return false;
}

static void out_put(out_t *o, tl_rec_type_t type, const uint64_t *ints)
{
    for (int tries = 0; tries < 2 && !o->dead; tries++) {
        tl_wbuf_t b = {.p = o->ch + TL_CHUNK_HEADER_BYTES + o->used,
                       .end = o->ch + writer->chunk_bytes};
        tl_rec_put_lineage(&b, type, 0, ints, NULL, 0);
        if (!b.overflow) {
            o->used = (uint32_t)(b.p - (o->ch + TL_CHUNK_HEADER_BYTES));
            __atomic_store_n((uint32_t *)(o->ch + TL_CHK_USED), o->used, __ATOMIC_RELEASE);
            o->records++;
            return;
        }
        if (out_chunk(o, o->idx + 1)) o->dead = true;
    }
    o->lost++;
}

static void put_live(void *ctx, const tl_live_entry_t *e)
{
    uint64_t v[6] = {e->kind, e->ptr, e->size, e->weight, e->stack_id, e->ts};
    out_put(ctx, TL_REC_LIVE, v);
}

/* Write one checkpoint of `set` into its next region. Holds `busy`. */
static void write_set(int set, uint64_t now)
{
    if (!writer || !sites) return;
    unsigned region = (unsigned)set * 2 + (unsigned)(seq[set] & 1);
    out_t o = {.rg = &regions[region], .region = region, .ts = now};
    /* Empty the region first: a crash from here on leaves it incomplete (no
     * CKPT_END of this seq), and the other region of the set stands. */
    for (unsigned i = 0; i < o.rg->n; i++)
        __atomic_store_n((uint32_t *)(o.rg->chunk[i] + TL_CHK_USED), 0, __ATOMIC_RELEASE);
    if (out_chunk(&o, 0)) return;
    uint64_t s = ++seq[set];
    int64_t lb = atomic_load(&live_bytes), lk = atomic_load(&live_blocks);
    uint64_t pk = atomic_load(&peak_bytes);
    uint64_t begin[6] = {
        s, (uint64_t)set, lb > 0 ? (uint64_t)lb : 0, lk > 0 ? (uint64_t)lk : 0, pk, now};
    out_put(&o, TL_REC_CKPT_BEGIN, begin);
    if (set == TL_CKPT_PEAK) {
        atomic_store(&peak_ckpt_bytes, lb > 0 ? (uint64_t)lb : 0);
    } else {
        uint64_t cnt[TL_REC_COUNT_CLASSES], bytes[TL_REC_COUNT_CLASSES], frees;
        tl_counters_classes(cnt, bytes, &frees);
        for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
            if (!cnt[c]) continue;
            uint64_t v[3] = {c, cnt[c], bytes[c]};
            out_put(&o, TL_REC_COUNT, v);
        }
        uint64_t fv[3] = {TL_REC_COUNT_FREES, frees, 0};
        out_put(&o, TL_REC_COUNT, fv);
        uint64_t n = atomic_load(&max_stack);
        for (uint64_t id = 1; id <= n && id < TL_CKPT_MAX_SITES; id++) {
            site_tot_t *st = &sites[id];
            uint64_t a = atomic_load_explicit(&st->allocs, memory_order_relaxed);
            if (!a) continue;
            uint64_t v[6] = {id,
                             atomic_load_explicit(&st->flags, memory_order_relaxed),
                             a,
                             atomic_load_explicit(&st->frees, memory_order_relaxed),
                             atomic_load_explicit(&st->bytes, memory_order_relaxed),
                             atomic_load_explicit(&st->freed, memory_order_relaxed)};
            out_put(&o, TL_REC_SITE, v);
        }
    }
    tl_live_foreach(put_live, &o);
    uint64_t end[2] = {s, o.records - 1};
    out_put(&o, TL_REC_CKPT_END, end);
    if (o.lost) tl_counters_dropped(o.lost);
}

void tl_ckpt_tick(uint64_t now)
{
    uint64_t due = atomic_load_explicit(&next_due, memory_order_relaxed);
    if (now < due || !sites) return;
    if (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) return;
    atomic_store_explicit(&next_due, now + atomic_load(&period), memory_order_relaxed);
    if (due != 0) /* the first tick only starts the clock */
        write_set(TL_CKPT_CURRENT, now);
    atomic_flag_clear_explicit(&busy, memory_order_release);
}

uint64_t tl_ckpt_flush(uint64_t now)
{
    if (!sites) return 0;
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        __builtin_ia32_pause();
    uint64_t pk = atomic_load(&peak_bytes), pc = atomic_load(&peak_ckpt_bytes);
    int64_t lb = atomic_load(&live_bytes);
    /* The peak set is stale when the highest live bytes were never
     * checkpointed; if we are at that peak now, snapshot it. */
    if (pk > pc && lb > 0 && (uint64_t)lb >= pk) write_set(TL_CKPT_PEAK, now);
    write_set(TL_CKPT_CURRENT, now);
    atomic_flag_clear_explicit(&busy, memory_order_release);
    return 0;
}
