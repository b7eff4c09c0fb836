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
#include "agent/vm.h"
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
static region_t regions[TL_CKPT_SETS * 2]; /* current A, B, peak A, B, then each device's A, B */
static uint64_t seq[TL_CKPT_SETS];         /* checkpoints written per set */
static atomic_flag busy = ATOMIC_FLAG_INIT;
static _Atomic uint64_t next_due, period;
/* The current set was written at the script's end point (tl_ckpt_flush's
 * freeze): none after it. */
static atomic_bool frozen;
static _Atomic int64_t live_bytes, live_blocks;
static _Atomic uint64_t peak_bytes, peak_ckpt_bytes, max_stack;

/* --- device storages (kinds 17-19): their own totals and live sets --- */

#define DEVS         17   /* cpu (pinned) and cuda:0..15; beyond share the last, as the report's */
#define DSITES       4096 /* (stack id, kind, device) totals; later ones are dropped */
#define DEV_PTR_MASK ((UINT64_C(1) << TL_CKPT_DEV_TAG_SHIFT) - 1)

typedef struct dev_stat {
    _Atomic uint64_t live[3]; /* bytes now: PyTorch's blocks, segments, pinned (kind - 17) */
    _Atomic uint64_t blocks;  /* storages live now, every kind */
    /* exact peaks: of the storages (segments apart once PyTorch's blocks
     * are seen), of every kind together, of the segments alone */
    _Atomic uint64_t peak_st, ts_st, peak_all, ts_all, peak_seg;
    _Atomic uint64_t peak_set; /* the measure (dev_measure) at its last new peak */
    atomic_bool pending;       /* a new peak not yet in the device's peak set */
    atomic_bool seen;
} dev_stat_t;

typedef struct dsite {
    _Atomic uint64_t stack_id, kind_dev; /* kind_dev = kind << 32 | device + 1; 0 = empty */
    _Atomic uint64_t allocs, frees, bytes, freed;
} dsite_t;

static dev_stat_t devs[DEVS];
static dsite_t dsites[DSITES];
static atomic_flag dev_busy = ATOMIC_FLAG_INIT; /* serializes the device updates */
static atomic_bool blocks_seen; /* PyTorch's CUDA blocks: segments are their reserve */

static unsigned dev_slot(uint64_t device)
{
    return device < DEVS ? (unsigned)device : DEVS - 1;
}

/* The bytes a device's peak set is taken at: its storages, the way the
 * report counts them (segments are storages only while no PyTorch block is
 * known). */
static uint64_t dev_measure(const dev_stat_t *d)
{
    uint64_t st = atomic_load(&d->live[0]) + atomic_load(&d->live[2]);
    return atomic_load(&blocks_seen) ? st : st + atomic_load(&d->live[1]);
}

static void dev_reset(void)
{
    memset(devs, 0, sizeof devs);
    memset(dsites, 0, sizeof dsites);
    atomic_store(&blocks_seen, false);
    atomic_flag_clear(&dev_busy);
}

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
    atomic_store(&frozen, false);
    dev_reset();
    size_t bytes = sizeof(site_tot_t) * TL_CKPT_MAX_SITES;
    if (sites) {
        tl_vm_zero(sites, bytes, true);
        return false;
    }
    void *m;
    if (tl_vm_map_anon(&m, bytes, true)) return true;
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
    int set;   /* which live entries it takes (put_live) */
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

static void put_dlive(out_t *o, const tl_live_entry_t *e)
{
    uint64_t v[7] = {e->kind, e->ptr & DEV_PTR_MASK, e->size, e->stack_id, e->ts, e->device, 0};
    out_put(o, TL_REC_DLIVE, v);
}

/* The current set takes every entry, the host peak set the host blocks, a
 * device's set that device's storages. */
static void put_live(void *ctx, const tl_live_entry_t *e)
{
    out_t *o = ctx;
    bool dev = tl_kind_has_device(e->kind);
    if (o->set >= TL_CKPT_DEVICE) {
        if (dev && dev_slot(e->device) == (unsigned)(o->set - TL_CKPT_DEVICE)) put_dlive(o, e);
        return;
    }
    if (dev) {
        if (o->set == TL_CKPT_CURRENT) put_dlive(o, e);
        return;
    }
    uint64_t v[6] = {e->kind, e->ptr, e->size, e->weight, e->stack_id, e->ts};
    out_put(o, TL_REC_LIVE, v);
}

/* The current set's device totals: each (site, device) and each device's
 * exact peaks. */
static void put_device_totals(out_t *o)
{
    for (unsigned i = 0; i < DSITES; i++) {
        dsite_t *d = &dsites[i];
        uint64_t kd = atomic_load_explicit(&d->kind_dev, memory_order_acquire);
        if (!kd) continue;
        uint64_t v[7] = {atomic_load(&d->stack_id), kd >> 32,
                         (kd & 0xffffffffu) - 1,    atomic_load(&d->allocs),
                         atomic_load(&d->frees),    atomic_load(&d->bytes),
                         atomic_load(&d->freed)};
        out_put(o, TL_REC_DSITE, v);
    }
    for (unsigned k = 0; k < DEVS; k++) {
        dev_stat_t *d = &devs[k];
        if (!atomic_load(&d->seen)) continue;
        uint64_t v[6] = {k,
                         atomic_load(&d->peak_st),
                         atomic_load(&d->ts_st),
                         atomic_load(&d->peak_all),
                         atomic_load(&d->ts_all),
                         atomic_load(&d->peak_seg)};
        out_put(o, TL_REC_DPEAK, v);
    }
}

/* Write one checkpoint of `set` into its next region; extra (or NULL): a
 * device storage that is out of the live table already but belongs to the
 * set. Holds `busy`. */
static void write_set_with(int set, uint64_t now, const tl_live_entry_t *extra)
{
    if (!writer || !sites) return;
    unsigned region = (unsigned)set * 2 + (unsigned)(seq[set] & 1);
    out_t o = {.rg = &regions[region], .region = region, .ts = now, .set = set};
    /* Empty the region first: a crash from here on leaves it incomplete (no
     * CKPT_END of this seq), and the other region of the set stands. */
    for (unsigned i = 0; i < o.rg->n; i++)
        __atomic_store_n((uint32_t *)(o.rg->chunk[i] + TL_CHK_USED), 0, __ATOMIC_RELEASE);
    if (out_chunk(&o, 0)) return;
    uint64_t s = ++seq[set];
    int64_t lb = atomic_load(&live_bytes), lk = atomic_load(&live_blocks);
    uint64_t pk = atomic_load(&peak_bytes);
    if (set >= TL_CKPT_DEVICE) { /* the device's own measure */
        dev_stat_t *d = &devs[set - TL_CKPT_DEVICE];
        lb = (int64_t)dev_measure(d);
        lk = (int64_t)atomic_load(&d->blocks);
        pk = (uint64_t)lb;
    }
    uint64_t begin[6] = {
        s, (uint64_t)set, lb > 0 ? (uint64_t)lb : 0, lk > 0 ? (uint64_t)lk : 0, pk, now};
    out_put(&o, TL_REC_CKPT_BEGIN, begin);
    if (set == TL_CKPT_PEAK) {
        atomic_store(&peak_ckpt_bytes, lb > 0 ? (uint64_t)lb : 0);
    } else if (set == TL_CKPT_CURRENT) {
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
        put_device_totals(&o);
    }
    tl_live_foreach(put_live, &o);
    if (extra) put_live(&o, extra);
    uint64_t end[2] = {s, o.records - 1};
    out_put(&o, TL_REC_CKPT_END, end);
    if (o.lost) tl_counters_dropped(o.lost);
}

static void write_set(int set, uint64_t now)
{
    write_set_with(set, now, NULL);
}

/* Write device slot k's peak set now, when a new peak is not in it yet;
 * waits for a checkpoint in progress (device events are few). */
static void dev_write_pending(unsigned k, uint64_t now, const tl_live_entry_t *extra)
{
    if (k >= TL_CKPT_DEVICES || !atomic_exchange(&devs[k].pending, false)) return;
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        __builtin_ia32_pause();
    write_set_with(TL_CKPT_DEVICE + (int)k, now, extra);
    atomic_flag_clear_explicit(&busy, memory_order_release);
}

static void dsite_add(const tl_live_entry_t *e, bool is_free)
{
    uint64_t kd = (uint64_t)e->kind << 32 | (uint64_t)(dev_slot(e->device) + 1);
    uint64_t h = (e->stack_id * UINT64_C(0x9E3779B97F4A7C15) ^ kd) >> 52; /* 12 bits */
    for (unsigned i = 0; i < DSITES; i++) {
        dsite_t *d = &dsites[(h + i) & (DSITES - 1)];
        uint64_t cur = atomic_load_explicit(&d->kind_dev, memory_order_relaxed);
        if (cur == 0) {
            if (is_free) return; /* its allocation found no room */
            atomic_store_explicit(&d->stack_id, e->stack_id, memory_order_relaxed);
            atomic_store_explicit(&d->kind_dev, kd, memory_order_release);
        } else if (cur != kd ||
                   atomic_load_explicit(&d->stack_id, memory_order_relaxed) != e->stack_id) {
            continue;
        }
        if (is_free) {
            atomic_fetch_add_explicit(&d->frees, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&d->freed, e->size, memory_order_relaxed);
        } else {
            atomic_fetch_add_explicit(&d->allocs, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&d->bytes, e->size, memory_order_relaxed);
        }
        return;
    }
}

static void dev_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&dev_busy, memory_order_acquire))
        __builtin_ia32_pause();
}

static void dev_unlock(void)
{
    atomic_flag_clear_explicit(&dev_busy, memory_order_release);
}

static void raise_to(_Atomic uint64_t *peak, _Atomic uint64_t *ts, uint64_t v, uint64_t now)
{
    if (v <= atomic_load(peak)) return;
    atomic_store(peak, v);
    if (ts) atomic_store(ts, now);
}

bool tl_ckpt_dev_alloc(uint64_t kind, uint64_t ptr, uint64_t size, uint64_t device,
                       uint64_t stack_id, uint64_t now)
{
    if (!sites || !tl_kind_has_device(kind)) return true;
    tl_ckpt_set_max_stack(stack_id);
    tl_live_entry_t e = {.ptr = (ptr & DEV_PTR_MASK) | kind << TL_CKPT_DEV_TAG_SHIFT,
                         .size = size,
                         .weight = size,
                         .stack_id = stack_id,
                         .ts = now,
                         .kind = (uint32_t)kind,
                         .device = (uint32_t)dev_slot(device)};
    dev_lock();
    /* An address already live (its free was missed: PyTorch's history
     * wrapped) loses its old storage, as the report's replay does: gone
     * without a free. */
    tl_live_entry_t old;
    if (!tl_live_remove(e.ptr, &old)) {
        atomic_fetch_sub(&devs[old.device].live[kind - TL_KIND_STORAGE_CUDA], old.size);
        atomic_fetch_sub(&devs[old.device].blocks, 1);
    }
    if (tl_live_insert(&e)) {
        dev_unlock();
        return true;
    }
    if (kind == TL_KIND_STORAGE_CUDA && !atomic_exchange(&blocks_seen, true))
        for (unsigned k = 0; k < DEVS; k++) /* the measure changed: peaks start again */
            atomic_store(&devs[k].peak_set, 0);
    dev_stat_t *d = &devs[e.device];
    atomic_store(&d->seen, true);
    atomic_fetch_add(&d->live[kind - TL_KIND_STORAGE_CUDA], size);
    atomic_fetch_add(&d->blocks, 1);
    uint64_t seg = atomic_load(&d->live[1]);
    uint64_t st = atomic_load(&d->live[0]) + atomic_load(&d->live[2]);
    raise_to(&d->peak_st, &d->ts_st, st, now);
    raise_to(&d->peak_all, &d->ts_all, st + seg, now);
    raise_to(&d->peak_seg, NULL, seg, now);
    uint64_t m = dev_measure(d);
    if (m > atomic_load(&d->peak_set)) {
        atomic_store(&d->peak_set, m);
        atomic_store(&d->pending, true);
    }
    dsite_add(&e, false);
    dev_unlock();
    return false;
}

bool tl_ckpt_dev_free(uint64_t kind, uint64_t ptr, uint64_t now)
{
    if (!sites || !tl_kind_has_device(kind)) return true;
    tl_live_entry_t e;
    dev_lock();
    if (tl_live_remove((ptr & DEV_PTR_MASK) | kind << TL_CKPT_DEV_TAG_SHIFT, &e)) {
        dev_unlock();
        return true;
    }
    /* The first free after a new peak: the live set just before it is the
     * device's peak set (this storage in it). */
    dev_write_pending(e.device, now, &e);
    dev_stat_t *d = &devs[e.device];
    atomic_fetch_sub(&d->live[kind - TL_KIND_STORAGE_CUDA], e.size);
    atomic_fetch_sub(&d->blocks, 1);
    dsite_add(&e, true);
    dev_unlock();
    return false;
}

void tl_ckpt_tick(uint64_t now)
{
    uint64_t due = atomic_load_explicit(&next_due, memory_order_relaxed);
    if (now < due || !sites || atomic_load_explicit(&frozen, memory_order_relaxed)) return;
    if (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) return;
    atomic_store_explicit(&next_due, now + atomic_load(&period), memory_order_relaxed);
    if (due != 0) /* the first tick only starts the clock */
        write_set(TL_CKPT_CURRENT, now);
    atomic_flag_clear_explicit(&busy, memory_order_release);
}

uint64_t tl_ckpt_flush(uint64_t now, uint64_t max_stack_id, bool freeze)
{
    if (!sites) return 0;
    tl_ckpt_set_max_stack(max_stack_id);
    while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
        __builtin_ia32_pause();
    uint64_t pk = atomic_load(&peak_bytes), pc = atomic_load(&peak_ckpt_bytes);
    int64_t lb = atomic_load(&live_bytes);
    /* The peak set is stale when the highest live bytes were never
     * checkpointed; if we are at that peak now, snapshot it. */
    if (pk > pc && lb > 0 && (uint64_t)lb >= pk) write_set(TL_CKPT_PEAK, now);
    /* A device still at its peak: its live set now is the peak set. */
    for (unsigned k = 0; k < TL_CKPT_DEVICES; k++)
        if (atomic_exchange(&devs[k].pending, false)) write_set(TL_CKPT_DEVICE + (int)k, now);
    if (!atomic_load(&frozen)) write_set(TL_CKPT_CURRENT, now);
    if (freeze) atomic_store(&frozen, true);
    atomic_flag_clear_explicit(&busy, memory_order_release);
    return 0;
}
