/* model.c - replay allocation events in time order (see model.h).
 *
 * Two passes over the events with a live-block table (ptr -> size, site,
 * storage): the first finds the event at which all live bytes peak, the second
 * stops there to aggregate the live set by site, then runs to the end for the
 * leaks. Memory: one table entry per live block plus two counters per site.
 */
#include "report/model.h"

#include <stdlib.h>
#include <string.h>

#include "report/map.h"

typedef struct replay {
    tl_map_t live; /* key ptr; a = size; b = site | storage << 32 */
    tl_model_t c;  /* counters only */
    size_t peak_event;
    bool rfree_storage; /* the block released by the RFREE just before */
    bool rfree_known;
} replay_t;

static void add_block(replay_t *r, const tl_event_t *ev, bool storage, bool *oom)
{
    bool created;
    tl_map_entry_t *e = tl_map_put(&r->live, ev->ptr, &created);
    if (!e) {
        *oom = true;
        return;
    }
    if (!created) { /* the old block was never freed as far as the trace says */
        r->c.replaced_blocks++;
        bool old_storage = (e->b >> 32) & 1;
        r->c.live_bytes -= e->a;
        r->c.live_blocks--;
        if (old_storage) {
            r->c.live_storage_bytes -= e->a;
            r->c.live_storage_blocks--;
        }
    }
    e->a = ev->size;
    e->b = (uint64_t)ev->site | (uint64_t)storage << 32;
    r->c.allocations++;
    r->c.live_bytes += ev->size;
    r->c.live_blocks++;
    if (storage) {
        r->c.live_storage_bytes += ev->size;
        r->c.live_storage_blocks++;
    }
}

/* Release ptr; returns false when it was not live. *storage: its kind. */
static bool drop_block(replay_t *r, uint64_t ptr, bool *storage)
{
    tl_map_entry_t *e = tl_map_get(&r->live, ptr);
    if (!e) {
        r->c.unknown_frees++;
        return false;
    }
    *storage = (e->b >> 32) & 1;
    r->c.live_bytes -= e->a;
    r->c.live_blocks--;
    if (*storage) {
        r->c.live_storage_bytes -= e->a;
        r->c.live_storage_blocks--;
    }
    r->c.frees++;
    tl_map_remove(&r->live, ptr);
    return true;
}

/* Apply event i; returns true when out of memory. */
static bool step(replay_t *r, const tl_event_t *events, size_t i)
{
    const tl_event_t *ev = &events[i];
    bool oom = false, storage = false;
    switch (ev->type) {
    case TL_EV_ALLOC:
        add_block(r, ev, ev->storage, &oom);
        if (ev->storage) r->c.storages++;
        break;
    case TL_EV_RALLOC:
        /* A realloc'd block keeps the kind of the block it replaced. */
        storage = ev->storage && i > 0 && events[i - 1].type == TL_EV_RFREE && r->rfree_known &&
                  r->rfree_storage;
        add_block(r, ev, storage, &oom);
        break;
    case TL_EV_FREE:
        drop_block(r, ev->ptr, &storage);
        break;
    case TL_EV_RFREE:
        r->rfree_known = drop_block(r, ev->ptr, &storage);
        r->rfree_storage = storage;
        break;
    default:
        break;
    }
    if (ev->type == TL_EV_ALLOC || ev->type == TL_EV_RALLOC) {
        if (r->c.live_bytes > r->c.peak_bytes) {
            r->c.peak_bytes = r->c.live_bytes;
            r->c.peak_blocks = r->c.live_blocks;
            r->c.peak_ts = ev->ts;
            r->peak_event = i;
        }
        if (r->c.live_storage_bytes > r->c.peak_storage_bytes) {
            r->c.peak_storage_bytes = r->c.live_storage_bytes;
            r->c.peak_storage_ts = ev->ts;
        }
    }
    return oom;
}

static int cmp_stat(const void *pa, const void *pb)
{
    const tl_site_stat_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->blocks != b->blocks) return a->blocks > b->blocks ? -1 : 1;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    return (int)a->storage - (int)b->storage;
}

/* Per-(site, storage) accumulators, index site * 2 + storage. */
typedef struct acc {
    uint64_t bytes, blocks;
} acc_t;

/* Sorted list of the non-empty accumulators; true when out of memory. */
static bool collect(acc_t *acc, size_t nsites, tl_site_stat_t **out, size_t *nout)
{
    size_t n = 0;
    for (size_t i = 0; i < nsites * 2; i++)
        n += acc[i].blocks != 0;
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out) return true;
    size_t k = 0;
    for (size_t i = 0; i < nsites * 2; i++)
        if (acc[i].blocks)
            (*out)[k++] = (tl_site_stat_t){.site = (uint32_t)(i / 2),
                                           .storage = i & 1,
                                           .bytes = acc[i].bytes,
                                           .blocks = acc[i].blocks};
    qsort(*out, n, sizeof **out, cmp_stat);
    *nout = n;
    return false;
}

/* Aggregate the live table by site into a sorted list. */
static bool live_by_site(replay_t *r, size_t nsites, tl_site_stat_t **out, size_t *nout)
{
    acc_t *acc = calloc(nsites * 2 + 2, sizeof *acc);
    if (!acc) return true;
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(&r->live, &pos));) {
        size_t site = (size_t)(e->b & 0xffffffffu), storage = (e->b >> 32) & 1;
        if (site >= nsites) continue; /* cannot happen: sites come from the reader */
        acc[site * 2 + storage].bytes += e->a;
        acc[site * 2 + storage].blocks++;
    }
    bool oom = collect(acc, nsites, out, nout);
    free(acc);
    return oom;
}

bool tl_model_build(const tl_trace_t *t, tl_model_t *m)
{
    memset(m, 0, sizeof *m);
    const size_t n = t->nevents, nsites = t->nsites;
    replay_t r = {0};
    acc_t *sacc = NULL;

    for (size_t i = 0; i < n; i++)
        if (step(&r, t->events, i)) goto oom;
    bool have_peak = r.c.peak_bytes > 0;
    size_t peak_event = r.peak_event;
    tl_map_free(&r.live);
    r = (replay_t){0};

    sacc = calloc(nsites * 2 + 2, sizeof *sacc);
    if (!sacc) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (step(&r, t->events, i)) goto oom;
        const tl_event_t *ev = &t->events[i];
        if (ev->type == TL_EV_ALLOC && ev->storage && ev->site < nsites) {
            sacc[ev->site * 2 + 1].bytes += ev->size;
            sacc[ev->site * 2 + 1].blocks++;
        }
        if (have_peak && i == peak_event &&
            live_by_site(&r, nsites, &m->peak_sites, &m->npeak_sites))
            goto oom;
    }
    if (live_by_site(&r, nsites, &m->leaks, &m->nleaks) ||
        collect(sacc, nsites, &m->storage_sites, &m->nstorage_sites))
        goto oom;

    tl_site_stat_t *keep[3] = {m->leaks, m->peak_sites, m->storage_sites};
    size_t nkeep[3] = {m->nleaks, m->npeak_sites, m->nstorage_sites};
    *m = r.c;
    m->leaks = keep[0];
    m->nleaks = nkeep[0];
    m->peak_sites = keep[1];
    m->npeak_sites = nkeep[1];
    m->storage_sites = keep[2];
    m->nstorage_sites = nkeep[2];
    if (n) {
        m->first_ts = t->events[0].ts;
        m->last_ts = t->events[n - 1].ts;
    }
    free(sacc);
    tl_map_free(&r.live);
    return false;
oom:
    free(sacc);
    tl_map_free(&r.live);
    tl_model_free(m);
    return true;
}

void tl_model_free(tl_model_t *m)
{
    free(m->leaks);
    free(m->peak_sites);
    free(m->storage_sites);
    memset(m, 0, sizeof *m);
}
