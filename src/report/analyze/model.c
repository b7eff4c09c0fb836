/* model.c - replay the events in time order (see model.h).
 *
 * One pass over the event stream (tl_events_*) with a live-block table (ptr -> size, site,
 * flags, time), the live set by site kept as it changes, and its copy at the peak (all bytes, or
 * tl_model_opts_t.peak_device's), brought up to date at each new peak from the sites touched
 * since the last one (amortised O(1) per event). The pass also tracks storage instances and
 * their lineage (storages.c) to capture the end point. Memory: one table entry per live block,
 * one record per live storage, a few counters per site.
 */
#include "report/analyze/model.h"

#include <stdlib.h>
#include <string.h>

#include "report/analyze/frames.h"
#include "report/analyze/site_stats.h"
#include "report/read/aggregate.h"
#include "report/read/map.h"

/* Block flags, b >> 32 in the live table. */
#define BF_STORAGE 1u  /* the block is a storage */
#define BF_REG     2u  /* a heap block that STORAGE_REG made a storage */
#define BF_PSEUDO  4u  /* a registered buffer that is no heap block (STORAGE_REG) */
#define BF_PINNED  8u  /* a pinned host storage (kind pinned) */
#define BF_SAMPLED 16u /* a sampled plain block: its size is the bytes it stands for */
/* Bits 8-15: the storage's device (TL_DEVICE_*, capped at TL_MODEL_DEVICES - 1). */
#define BF_DEVICE(flags) (((flags) >> 8) & 0xffu)

typedef tl_site_acc_t acc_t; /* site_stats.h */

typedef struct replay {
    const tl_trace_t *t;
    tl_map_t live; /* key ptr; a = size; b = site | flags << 32; c = allocation ts */
    tl_model_t *c; /* the model being built: its counters are kept in place */
    size_t peak_event;
    bool peak_done;                  /* past the end point: the peaks stay (docs/ci.md, "Limits") */
    bool rfree_storage, rfree_known; /* the block released by the RFREE just before */
    uint8_t prev_type;               /* of the event before this one */
    tl_storage_t rfree_info;         /* that storage */
    uint8_t *numpy_site;             /* per site: 0 not yet known, 1 no, 2 yes */
    uint8_t *site_device;            /* tl_model_t.site_device */
    tl_stor_t *st;
    acc_t *sacc;       /* storages created, by site */
    tl_regions_t *rg;  /* region iterations */
    acc_t *cur, *pk;   /* live blocks by site * 2 + storage: now, and at the peak */
    uint32_t *touched; /* indexes of cur changed since pk was last brought up to date */
    uint8_t *is_touched;
    size_t ntouched;
    uint64_t now;               /* time of the event being applied */
    uint8_t new_device;         /* device of the storage new_storage makes (0 = cpu) */
    uint64_t live_pinned_bytes; /* of BF_PINNED blocks (the timeline's pinned series) */
    tl_map_t segs; /* reserve segments (tl_trace_t.ncuda_blocks): key ptr; a = size, b = device */
    /* tl_model_opts_t.peak_device: 1 + the device whose peak pk is taken at (its storages;
     * the cpu's plain heap blocks too), 0 = all bytes; its live bytes now */
    unsigned pk_device;
    uint64_t dev_live;
} replay_t;

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Whether a site's innermost native frame (after any of the agent's and the
 * allocator's own frames) is in numpy's _multiarray_umath module, whose
 * default data allocator calls malloc/calloc/realloc. Never in a trace
 * whose numpy buffers came through numpy's handler: there they are
 * storages of their own kind, and a big block numpy mallocs is something
 * else (an iterator's buffer, a sort's scratch). */
static bool numpy_site(replay_t *r, uint32_t site)
{
    if (site >= r->t->nsites || !r->numpy_site || r->t->nnumpy_buffers) return false;
    if (r->numpy_site[site]) return r->numpy_site[site] == 2;
    size_t n;
    uint64_t buf[TL_REC_MAX_FRAMES]; /* 8 KiB: asked once for each big block's site */
    const uint64_t *frames = tl_trace_site_frames_in(r->t, site, buf, &n);
    bool yes = false;
    for (size_t i = 0; i < n; i++) {
        if (frames[i] & TL_FRAME_PY_TAG) continue;
        const tl_module_t *m = tl_trace_module_at(r->t, frames[i]);
        if (tl_allocator_module(m ? m->path : NULL, TL_ALLOC_AGENT)) continue;
        yes = has_prefix(tl_path_base(m ? m->path : NULL), "_multiarray_umath");
        break;
    }
    r->numpy_site[site] = yes ? 2 : 1;
    return yes;
}

/* A block of site (flags: its BF_*) enters (sign 1) or leaves (-1) the live set. */
static void site_live(replay_t *r, uint32_t site, unsigned flags, int sign, uint64_t size)
{
    if (site >= r->t->nsites) return; /* cannot happen: sites come from the reader */
    size_t i = (size_t)site * 2 + ((flags & BF_STORAGE) ? 1 : 0);
    r->cur[i].bytes += (uint64_t)sign * size;
    r->cur[i].blocks += (uint64_t)sign;
    if (!r->is_touched[i]) {
        r->is_touched[i] = 1;
        r->touched[r->ntouched++] = (uint32_t)i;
    }
}

static void note_peak(replay_t *r, size_t i, uint64_t ts)
{
    if (r->peak_done) return;
    bool snapshot =
        r->pk_device ? r->dev_live > r->c->device_peak_bytes : r->c->live_bytes > r->c->peak_bytes;
    if (r->c->live_bytes > r->c->peak_bytes) {
        r->c->peak_bytes = r->c->live_bytes;
        r->c->peak_blocks = r->c->live_blocks;
        r->c->peak_ts = ts;
        r->peak_event = i;
    }
    if (r->pk_device && r->dev_live > r->c->device_peak_bytes) {
        r->c->device_peak_bytes = r->dev_live;
        r->c->device_peak_ts = ts;
    }
    if (snapshot) {
        for (size_t k = 0; k < r->ntouched; k++) { /* pk = cur, where they differ */
            uint32_t x = r->touched[k];
            r->pk[x] = r->cur[x];
            r->is_touched[x] = 0;
        }
        r->ntouched = 0;
    }
    if (r->c->live_storage_bytes > r->c->peak_storage_bytes) {
        r->c->peak_storage_bytes = r->c->live_storage_bytes;
        r->c->peak_storage_ts = ts;
    }
}

/* A new storage instance (the next id); true when out of memory. */
static bool new_storage(replay_t *r, uint64_t base, uint64_t bytes, uint32_t site, uint64_t ts,
                        uint8_t kind, const char *op)
{
    uint64_t id = ++r->c->storages;
    if (r->sacc && site < r->t->nsites) {
        r->sacc[site * 2 + 1].bytes += bytes;
        r->sacc[site * 2 + 1].blocks++;
    }
    if (!r->st) return false;
    tl_storage_t s = {.id = id,
                      .base = base,
                      .bytes = bytes,
                      .ts = ts,
                      .site = site,
                      .kind = kind,
                      .op = op,
                      .device = r->new_device};
    return tl_stor_add(r->st, &s);
}

/* The device a block's bytes count on: a storage's own, else the cpu. */
static unsigned block_device(unsigned flags)
{
    return (flags & BF_STORAGE) ? BF_DEVICE(flags) : TL_DEVICE_CPU;
}

static void count_block(replay_t *r, uint64_t size, unsigned flags, int sign)
{
    unsigned dev = block_device(flags);
    if (r->pk_device && tl_model_peak_counts(r->pk_device, dev, flags & BF_STORAGE))
        r->dev_live += (uint64_t)sign * size;
    r->c->live_bytes += (uint64_t)sign * size;
    r->c->live_blocks += (uint64_t)sign;
    if (flags & BF_STORAGE) {
        r->c->live_storage_bytes += (uint64_t)sign * size;
        r->c->live_storage_blocks += (uint64_t)sign;
        if (flags & BF_PINNED) r->live_pinned_bytes += (uint64_t)sign * size;
        tl_device_stat_t *d = &r->c->devices[BF_DEVICE(flags)];
        d->seen = true;
        d->live_storage_bytes += (uint64_t)sign * size;
        d->live_storages += (uint64_t)sign;
        if (d->live_storage_bytes > d->peak_storage_bytes) {
            d->peak_storage_bytes = d->live_storage_bytes;
            d->peak_storage_ts = r->now;
        }
    }
}

static unsigned device_slot(unsigned device)
{
    return device < TL_MODEL_DEVICES ? device : TL_MODEL_DEVICES - 1;
}

/* A cudaMalloc'd segment beside PyTorch's blocks: the reserve, not a
 * storage (alloc: size > 0 entering; else leaving). true = out of memory. */
static bool reserve_segment(replay_t *r, const tl_event_t *ev, bool alloc)
{
    tl_device_stat_t *d;
    if (alloc) {
        bool created;
        tl_map_entry_t *e = tl_map_put(&r->segs, ev->ptr, &created);
        if (!e) return true;
        if (!created)
            r->c->devices[e->b].reserved_bytes -= e->a, r->c->devices[e->b].reserved_segments--;
        e->a = ev->size;
        e->b = device_slot(TL_EV_DEVICE(ev->pad));
        d = &r->c->devices[e->b];
        d->seen = true;
        d->reserved_bytes += ev->size;
        d->reserved_segments++;
        if (d->reserved_bytes > d->peak_reserved_bytes) d->peak_reserved_bytes = d->reserved_bytes;
        return false;
    }
    tl_map_entry_t *e = tl_map_get(&r->segs, ev->ptr);
    if (!e) return false;
    d = &r->c->devices[e->b];
    d->reserved_bytes -= e->a;
    d->reserved_segments--;
    tl_map_remove(&r->segs, ev->ptr);
    return false;
}

static uint8_t storage_kind(const tl_event_t *ev)
{
    switch (TL_EV_DKIND(ev->pad)) {
    case TL_EV_DK_CUDA:
        return TL_STORAGE_CUDA;
    case TL_EV_DK_SEGMENT:
        return TL_STORAGE_CUDA_SEGMENT;
    case TL_EV_DK_PINNED:
        return TL_STORAGE_PINNED;
    case TL_EV_DK_NUMPY:
        return TL_STORAGE_NUMPY;
    default:
        return TL_STORAGE_C10;
    }
}

/* Enter a block; NULL when out of memory. A block already live at the same
 * address (never freed as far as the trace says) is dropped first. */
static tl_map_entry_t *add_block(replay_t *r, uint64_t ptr, uint64_t size, uint32_t site,
                                 unsigned flags, uint64_t ts, bool *oom)
{
    bool created;
    tl_map_entry_t *e = tl_map_put(&r->live, ptr, &created);
    if (!e) {
        *oom = true;
        return NULL;
    }
    if (!created) {
        r->c->replaced_blocks++;
        unsigned old = (unsigned)(e->b >> 32);
        count_block(r, e->a, old, -1);
        site_live(r, (uint32_t)(e->b & 0xffffffffu), old, -1, e->a);
        if (r->rg && tl_regions_busy(r->rg))
            tl_regions_on_free(r->rg, (uint32_t)(e->b & 0xffffffffu), e->a, e->c, old & BF_STORAGE,
                               block_device(old));
        if ((old & BF_STORAGE) && r->st) tl_stor_remove(r->st, ptr, NULL);
    }
    e->a = size;
    e->b = (uint64_t)site | (uint64_t)flags << 32;
    e->c = ts;
    count_block(r, size, flags, 1);
    site_live(r, site, flags, 1, size);
    if (r->rg && tl_regions_busy(r->rg))
        tl_regions_on_alloc(r->rg, site, size, flags & BF_STORAGE, block_device(flags));
    return e;
}

/* Release ptr; returns false when it was not live. *flags: its flags; the
 * storage record, if it was one, to *info. */
static bool drop_block(replay_t *r, uint64_t ptr, unsigned *flags, tl_storage_t *info)
{
    tl_map_entry_t *e = tl_map_get(&r->live, ptr);
    if (!e) {
        r->c->unknown_frees++;
        return false;
    }
    *flags = (unsigned)(e->b >> 32);
    if ((*flags & BF_STORAGE) && (BF_DEVICE(*flags) != TL_DEVICE_CPU || (*flags & BF_PINNED)))
        r->c->device_frees++;
    count_block(r, e->a, *flags, -1);
    site_live(r, (uint32_t)(e->b & 0xffffffffu), *flags, -1, e->a);
    if (r->rg && tl_regions_busy(r->rg))
        tl_regions_on_free(r->rg, (uint32_t)(e->b & 0xffffffffu), e->a, e->c, *flags & BF_STORAGE,
                           block_device(*flags));
    if ((*flags & BF_STORAGE) && r->st) tl_stor_remove(r->st, ptr, info);
    r->c->frees++;
    tl_map_remove_entry(&r->live, e); /* nothing above changes the live table */
    return true;
}

/* The plain block live at ptr (with the flags in also) ends, though no free()
 * was called: numpy's cache handing out a buffer it malloc'd before its
 * handler was wrapped (not a replaced block: add_block), a sampled block
 * registered as a storage (its size is its weight: a 4 KiB one read 514 KiB). */
static void end_plain(replay_t *r, uint64_t ptr, unsigned also)
{
    tl_map_entry_t *e = tl_map_get(&r->live, ptr);
    unsigned f, flags = e ? (unsigned)(e->b >> 32) : 0;
    if (e && !(flags & BF_STORAGE) && (flags & also) == also && drop_block(r, ptr, &f, NULL))
        r->c->frees--; /* the program's frees alone */
}

/* STORAGE_REG ptr, size, stack, origin: a live block at ptr becomes a storage
 * (keeping its stack and time); else a storage block of `size` appears. */
static bool register_storage(replay_t *r, const tl_lineage_t *l)
{
    uint64_t ptr = l->a[0], size = l->a[1];
    const char *op = l->str[0] ? l->str : NULL;
    if (ptr == 0) return false;
    end_plain(r, ptr, BF_SAMPLED);
    tl_map_entry_t *e = tl_map_get(&r->live, ptr);
    if (e) {
        unsigned flags = (unsigned)(e->b >> 32);
        if (flags & BF_STORAGE) { /* already one: only its op may be news */
            tl_storage_t *s = r->st ? tl_stor_find(r->st, ptr) : NULL;
            if (s && op) s->op = op;
            return false;
        }
        site_live(r, (uint32_t)(e->b & 0xffffffffu), 0, -1, e->a);
        site_live(r, (uint32_t)(e->b & 0xffffffffu), BF_STORAGE, 1, e->a);
        e->b |= (uint64_t)(BF_STORAGE | BF_REG) << 32;
        r->c->live_storage_bytes += e->a;
        r->c->live_storage_blocks++;
        return new_storage(r, ptr, e->a, (uint32_t)(e->b & 0xffffffffu), e->c,
                           TL_STORAGE_REGISTERED, op);
    }
    bool oom = false;
    add_block(r, ptr, size, l->site, BF_STORAGE | BF_PSEUDO, l->ts, &oom);
    return oom || new_storage(r, ptr, size, l->site, l->ts, TL_STORAGE_REGISTERED, op);
}

/* STORAGE_UNREG ptr: undo a STORAGE_REG (a c10 or numpy storage stays one). */
static void unregister_storage(replay_t *r, uint64_t ptr)
{
    tl_map_entry_t *e = tl_map_get(&r->live, ptr);
    if (!e) return;
    unsigned flags = (unsigned)(e->b >> 32);
    if (!(flags & (BF_REG | BF_PSEUDO))) return;
    if (r->st) tl_stor_remove(r->st, ptr, NULL);
    if (flags & BF_PSEUDO) {
        count_block(r, e->a, flags, -1);
        site_live(r, (uint32_t)(e->b & 0xffffffffu), flags, -1, e->a);
        if (r->rg && tl_regions_busy(r->rg))
            tl_regions_on_free(r->rg, (uint32_t)(e->b & 0xffffffffu), e->a, e->c,
                               flags & BF_STORAGE, block_device(flags));
        tl_map_remove(&r->live, ptr);
        return;
    }
    r->c->live_storage_bytes -= e->a;
    r->c->live_storage_blocks--;
    site_live(r, (uint32_t)(e->b & 0xffffffffu), BF_STORAGE, -1, e->a);
    site_live(r, (uint32_t)(e->b & 0xffffffffu), 0, 1, e->a);
    e->b &= ~((uint64_t)(BF_STORAGE | BF_REG) << 32);
}

/* An ALLOC's block, and a storage if its kind is one or numpy's. true = OOM. */
static bool step_alloc(replay_t *r, const tl_event_t *ev)
{
    bool oom = false;
    bool numpy = !ev->storage && !(ev->pad & TL_EV_F_SAMPLED) && ev->size >= TL_NUMPY_MIN_STORAGE &&
                 numpy_site(r, ev->site);
    unsigned dev = device_slot(TL_EV_DEVICE(ev->pad));
    unsigned pinned = ev->storage && storage_kind(ev) == TL_STORAGE_PINNED ? BF_PINNED : 0;
    if (ev->storage && storage_kind(ev) == TL_STORAGE_NUMPY) end_plain(r, ev->ptr, 0);
    add_block(r, ev->ptr, ev->size, ev->site,
              ev->storage || numpy        ? BF_STORAGE | pinned | dev << 8
              : ev->pad & TL_EV_F_SAMPLED ? BF_SAMPLED
                                          : 0,
              ev->ts, &oom);
    if (!oom && (ev->storage || numpy)) {
        if (r->site_device && ev->site < r->t->nsites)
            r->site_device[ev->site] = (uint8_t)(dev + 1);
        r->new_device = (uint8_t)dev;
        oom = new_storage(r, ev->ptr, ev->size, ev->site, ev->ts,
                          numpy ? TL_STORAGE_NUMPY : storage_kind(ev), NULL);
        r->new_device = 0;
    }
    return oom;
}

/* An RALLOC's block (i, prev: step's): it keeps the kind of the one it replaced. */
static bool step_ralloc(replay_t *r, const tl_event_t *ev, size_t i, uint8_t prev)
{
    bool oom = false;
    bool carry = ev->storage && i > 0 && prev == TL_EV_RFREE && r->rfree_known && r->rfree_storage;
    bool numpy = !carry && !(ev->pad & TL_EV_F_SAMPLED) && ev->size >= TL_NUMPY_MIN_STORAGE &&
                 numpy_site(r, ev->site);
    add_block(r, ev->ptr, ev->size, ev->site, carry || numpy ? BF_STORAGE : 0, ev->ts, &oom);
    if (!oom && carry && r->st) {
        tl_storage_t s = r->rfree_info; /* the same storage, moved */
        s.base = ev->ptr, s.bytes = ev->size, s.site = ev->site, s.ts = ev->ts;
        oom = tl_stor_add(r->st, &s);
    } else if (!oom && numpy) {
        oom = new_storage(r, ev->ptr, ev->size, ev->site, ev->ts, TL_STORAGE_NUMPY, NULL);
    }
    return oom;
}

/* A LINEAGE event, number i of the pass. true = OOM. */
static bool step_lineage(replay_t *r, const tl_event_t *ev, size_t i)
{
    if (ev->site >= r->t->nlineage) return false;
    const tl_lineage_t *l = &r->t->lineage[ev->site];
    bool oom = false;
    if (l->type == TL_REC_STORAGE_REG) {
        oom = register_storage(r, l);
        note_peak(r, i, ev->ts);
    } else if (l->type == TL_REC_STORAGE_UNREG) {
        unregister_storage(r, l->a[0]);
    } else if (l->type == TL_REC_REGION_BEGIN || l->type == TL_REC_REGION_END ||
               l->type == TL_REC_MARK) {
        if (r->rg) oom = tl_regions_on_lineage(r->rg, l, &r->live, r->st);
    } else if (r->st) {
        oom = tl_stor_lineage(r->st, r->t, ev->site);
    }
    return oom;
}

/* Apply event number i of the pass; returns true when out of memory. */
static bool step(replay_t *r, const tl_event_t *ev, size_t i)
{
    uint8_t prev = r->prev_type;
    r->prev_type = ev->type;
    unsigned flags = 0;
    r->now = ev->ts;
    if (ev->pad & TL_EV_F_OBJECT) /* not a block: where a (numpy) object was made */
        return (ev->type == TL_EV_ALLOC || ev->type == TL_EV_FREE) && r->st &&
               tl_stor_object(r->st, ev->ptr, ev->site, ev->type == TL_EV_ALLOC);
    if (TL_EV_DKIND(ev->pad) == TL_EV_DK_SEGMENT && r->t->ncuda_blocks) /* ALLOC, FREE */
        return reserve_segment(r, ev, ev->type == TL_EV_ALLOC);
    if (ev->type == TL_EV_ALLOC || ev->type == TL_EV_RALLOC) {
        r->c->allocations++;
        if (!(ev->pad & TL_EV_F_SAMPLED) && ev->size > r->c->largest_exact)
            r->c->largest_exact = ev->size;
        bool oom = ev->type == TL_EV_ALLOC ? step_alloc(r, ev) : step_ralloc(r, ev, i, prev);
        note_peak(r, i, ev->ts);
        return oom;
    }
    switch (ev->type) {
    case TL_EV_FREE: /* not a buffer numpy made before its handler was wrapped (sampled) */
        if (TL_EV_DKIND(ev->pad) != TL_EV_DK_NUMPY || tl_map_get(&r->live, ev->ptr))
            drop_block(r, ev->ptr, &flags, NULL);
        return false;
    case TL_EV_RFREE:
        r->rfree_known = drop_block(r, ev->ptr, &flags, &r->rfree_info);
        r->rfree_storage = (flags & BF_STORAGE) != 0;
        return false;
    case TL_EV_LINEAGE:
        return step_lineage(r, ev, i);
    default:
        return false;
    }
}

/* The timeline's sample after ev: every series' bytes live now. */
static bool timeline_step(const replay_t *r, tl_timeline_t *tl, const tl_event_t *ev)
{
    _Static_assert(TL_MODEL_DEVICES - 1 == TL_TIMELINE_CUDA_DEVICES, "a series per CUDA device");
    uint64_t v[TL_SERIES_COUNT] = {r->c->live_bytes, r->c->live_storage_bytes,
                                   r->live_pinned_bytes};
    for (unsigned d = 1; d < TL_MODEL_DEVICES; d++)
        v[TL_SERIES_CUDA + d - 1] = r->c->devices[d].live_storage_bytes;
    return tl_timeline_step(tl, r->t, ev, v);
}

/* Shared-memory storages the end point's walk registered after its mark were live at it. */
static bool found_at_end(replay_t *r, size_t end_lin)
{
    const tl_trace_t *t = r->t;
    bool oom = false, any = false;
    for (size_t i = 0; i < t->nlineage && !oom; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->ts < t->lineage[end_lin].ts) continue;
        if (l->type == TL_REC_STORAGE_REG && !strcmp(l->str, TL_ORIGIN_SHARED))
            any = true, oom = register_storage(r, l);
        else if (any && l->type == TL_REC_TAG && !strncmp(l->str, "shm /dev/shm/", 13))
            oom = tl_stor_lineage(r->st, t, i);
    }
    return oom;
}

/* Take the end point after an event at ts (0: before any): the counters,
 * the live set by site, the live storages. true when out of memory. */
static bool capture_end(replay_t *r, tl_model_t *at_end, bool script_end, uint64_t mark_id,
                        uint64_t ts, tl_model_t *m)
{
    const tl_trace_t *t = r->t;
    if (!script_end && t->has_end && t->end_ts > ts) ts = t->end_ts;
    *at_end = *r->c; /* its counters (the pointers in it are not used) */
    tl_map_t kinds = {0};
    bool oom = tl_site_stats_leak_kinds(t, &kinds) ||
               tl_site_stats_live(r->cur, &r->live, t->nsites, t->has_leak_scan ? &kinds : NULL,
                                  &m->leaks, &m->nleaks);
    tl_map_free(&kinds);
    return oom || tl_stor_capture(r->st, t, &r->live, script_end, mark_id, ts, &m->end);
}

static void free_acc(replay_t *r)
{
    free(r->cur);
    free(r->pk);
    free(r->touched);
    free(r->is_touched);
    r->cur = r->pk = NULL;
    r->touched = NULL;
    r->is_touched = NULL;
}

bool tl_model_build(const tl_trace_t *t, tl_model_t *m)
{
    static const tl_model_opts_t all = {.timeline = true};
    return tl_model_build_with(t, m, &all);
}

/* The end point's live figures into m (the rest of m: peaks, seen devices). */
static void take_end(tl_model_t *m, const tl_model_t *at_end)
{
    m->live_bytes = at_end->live_bytes;
    m->live_blocks = at_end->live_blocks;
    m->live_storage_bytes = at_end->live_storage_bytes;
    m->live_storage_blocks = at_end->live_storage_blocks;
    for (size_t d = 0; d < TL_MODEL_DEVICES; d++) {
        tl_device_stat_t pass = m->devices[d];
        m->devices[d] = at_end->devices[d]; /* live and reserved at the end point */
        m->devices[d].seen = pass.seen;
        m->devices[d].peak_storage_bytes = pass.peak_storage_bytes;
        m->devices[d].peak_storage_ts = pass.peak_storage_ts;
        m->devices[d].peak_reserved_bytes = pass.peak_reserved_bytes;
    }
}

bool tl_model_build_with(const tl_trace_t *t, tl_model_t *m, const tl_model_opts_t *o)
{
    static const tl_model_opts_t none = {0};
    if (!o) o = &none;
    const unsigned peak_device = o->peak_device;
    memset(m, 0, sizeof *m);
    bool failed = true; /* until the end is reached */
    const size_t nsites = t->nsites;
    replay_t r = {.t = t, .c = m, .pk_device = peak_device};
    m->peak_device = peak_device;
    tl_events_t it = {0};
    tl_event_t ev;
    size_t n = 0;
    tl_stor_t st = {0};
    acc_t *sacc = NULL;
    uint8_t *numpy = calloc(nsites ? nsites : 1, 1);
    if (!numpy) return true;
    r.numpy_site = numpy;
    tl_timeline_t *tl = NULL;
    if (o->timeline && !(tl = m->timeline = tl_timeline_new(t))) goto oom;

    uint64_t mark_id = 0;
    size_t end_lin = tl_endpoint_mark(t, &mark_id);
    bool script_end = end_lin != SIZE_MAX, ended = false;
    sacc = calloc(nsites * 2 + 2, sizeof *sacc);
    r.cur = calloc(nsites * 2 + 2, sizeof *r.cur);
    r.pk = calloc(nsites * 2 + 2, sizeof *r.pk);
    r.touched = malloc((nsites * 2 + 2) * sizeof *r.touched);
    r.is_touched = calloc(nsites * 2 + 2, 1);
    m->site_device = calloc(nsites ? nsites : 1, 1);
    r.site_device = m->site_device;
    if (!m->site_device || !sacc || !r.cur || !r.pk || !r.touched || !r.is_touched) goto oom;
    if (tl_regions_init(&m->regions, t, o->filter, o->filter_ctx)) goto oom;
    m->regions.peak_device = peak_device < TL_MODEL_PEAK_STORAGES ? peak_device : 0;
    r.st = &st;
    r.sacc = sacc;
    r.rg = &m->regions;
    tl_model_t at_end = {0};
    if (tl_events_open(t, &it)) goto oom;
    for (; tl_events_next(&it, &ev); n++) {
        if (n == 0) m->first_ts = ev.ts;
        m->last_ts = ev.ts;
        bool timed = tl && !ended; /* the timeline ends at the end point, as the peaks do */
        if ((timed && tl_timeline_before(tl, t, ev.ts, &r.live)) || step(&r, &ev, n) ||
            (timed && timeline_step(&r, tl, &ev)))
            goto oom;
        if (script_end && !ended && ev.type == TL_EV_LINEAGE && ev.site == end_lin) {
            if (found_at_end(&r, end_lin) || capture_end(&r, &at_end, true, mark_id, ev.ts, m) ||
                (tl && tl_timeline_finish(tl, t, &r.live)))
                goto oom;
            ended = r.peak_done = true;
        }
    }
    tl_events_close(&it);
    if (tl && !ended && tl_timeline_finish(tl, t, &r.live)) goto oom;
    if ((peak_device ? r.c->device_peak_bytes : r.c->peak_bytes) > 0 &&
        tl_site_stats_collect(r.pk, nsites, &m->peak_sites, &m->npeak_sites))
        goto oom;
    /* No script_end (or its event was not streamed): the end of the trace. */
    if (!ended && capture_end(&r, &at_end, false, mark_id, m->last_ts, m)) goto oom;
    if (tl_site_stats_collect(sacc, nsites, &m->storage_sites, &m->nstorage_sites)) goto oom;
    if (tl_regions_finish(&m->regions)) goto oom;

    take_end(m, &at_end);
    failed = tl_model_take_aggregate(t, m); /* aggregate mode: exact site totals, after replay's */
oom:
    tl_events_close(&it); /* closed already on success: closing twice is harmless */
    free_acc(&r);
    free(sacc);
    free(numpy);
    tl_stor_free(&st);
    tl_map_free(&r.live);
    tl_map_free(&r.segs);
    if (failed) tl_model_free(m);
    return failed;
}
