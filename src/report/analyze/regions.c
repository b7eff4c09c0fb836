/* regions.c - region iterations, their leaks and growth (see regions.h).
 *
 * Memory: the open iterations (a few), one live-bytes counter per site, and
 * for each region name repeated at least three times two counters per site
 * plus its candidate list. The leak of an iteration is summed from the live
 * table at its END; per-site lists and the storage capture are made for the
 * last iteration of each name only.
 */
#include "report/analyze/regions.h"

#include <stdlib.h>
#include <string.h>

#include "report/analyze/model.h"
#include "report/read/grow.h"

#define BLOCK_STORAGE 1u /* flag bit in the live table's b >> 32 (model.c BF_STORAGE) */

/* One entry of a last iteration's block log: a block of a site came (bytes
 * > 0) or went (< 0). */
struct tl_region_delta {
    uint32_t site;
    bool storage;
    int64_t bytes;
};

/* canon[site]: the first site with the same frames by content. */
static bool canonical_sites(tl_regions_t *rg)
{
    const tl_trace_t *t = rg->t;
    rg->canon = malloc((t->nsites ? t->nsites : 1) * sizeof *rg->canon);
    if (!rg->canon) return true;
    tl_map_t by = {0};
    for (size_t i = 0; i < t->nsites; i++) {
        if (!t->sites[i].nframes) { /* no stack recorded: only itself */
            rg->canon[i] = (uint32_t)i;
            continue;
        }
        bool created;
        tl_map_entry_t *e = tl_map_put(&by, tl_trace_site_content_hash(t, (uint32_t)i), &created);
        if (!e) {
            tl_map_free(&by);
            return true;
        }
        if (created) e->a = i;
        rg->canon[i] = (uint32_t)e->a;
    }
    tl_map_free(&by);
    return false;
}

static size_t find(const tl_regions_t *rg, const char *name)
{
    tl_map_entry_t *e = tl_map_get(&rg->by_name, tl_str_hash(name));
    if (e && e->a && !strcmp(rg->regions[e->a - 1].name, name)) return (size_t)e->a - 1;
    if (!e) return SIZE_MAX;
    for (size_t i = 0; i < rg->nregions; i++) /* a hash collision */
        if (!strcmp(rg->regions[i].name, name)) return i;
    return SIZE_MAX;
}

const tl_region_t *tl_regions_find(const tl_regions_t *rg, const char *name)
{
    size_t i = find(rg, name);
    return i == SIZE_MAX ? NULL : &rg->regions[i];
}

static bool add_region(tl_regions_t *rg, const char *name, size_t *cap, size_t *out)
{
    tl_region_t *nr = tl_grow(rg->regions, cap, rg->nregions + 1, sizeof *nr, 8);
    if (!nr) return true;
    rg->regions = nr;
    bool created;
    tl_map_entry_t *e = tl_map_put(&rg->by_name, tl_str_hash(name), &created);
    if (!e) return true;
    if (created) e->a = rg->nregions + 1;
    rg->regions[rg->nregions] = (tl_region_t){.name = name};
    *out = rg->nregions++;
    return false;
}

/* Pair BEGIN/END per thread as the replay will, counting iterations. */
bool tl_regions_init(tl_regions_t *rg, const tl_trace_t *t, tl_site_filter_fn filter, void *ctx)
{
    memset(rg, 0, sizeof *rg);
    rg->t = t;
    rg->filter = filter;
    rg->filter_ctx = ctx;
    size_t cap = 0;
    struct pend {
        size_t region;
        uint32_t tid;
        uint64_t begin_ts;
    } *open = NULL;
    size_t nopen = 0, open_cap = 0;
    for (size_t i = 0; i < t->nlineage; i++) { /* in the stream's order */
        const tl_lineage_t *l = &t->lineage[t->lineage_by_time[i]];
        if (l->type != TL_REC_REGION_BEGIN && l->type != TL_REC_REGION_END) continue;
        size_t r = find(rg, l->str);
        if (l->type == TL_REC_REGION_BEGIN) {
            if (r == SIZE_MAX && add_region(rg, l->str, &cap, &r)) goto oom;
            struct pend *no = tl_grow(open, &open_cap, nopen + 1, sizeof *no, 8);
            if (!no) goto oom;
            open = no;
            open[nopen++] = (struct pend){r, l->tid, l->ts};
            continue;
        }
        for (size_t k = nopen; r != SIZE_MAX && k-- > 0;) {
            if (open[k].region != r || open[k].tid != l->tid) continue;
            rg->regions[r].expected++;
            rg->regions[r].last_close_begin_ts = open[k].begin_ts;
            rg->regions[r].last_close_tid = open[k].tid;
            memmove(&open[k], &open[k + 1], (nopen - k - 1) * sizeof *open);
            nopen--;
            break;
        }
    }
    free(open);
    size_t nsites = t->nsites ? t->nsites : 1;
    rg->site_live = calloc(nsites, sizeof *rg->site_live);
    rg->filtered = calloc(nsites, 1);
    if (!rg->site_live || !rg->filtered) goto oom_noopen;
    bool repeated = false;
    for (size_t i = 0; i < rg->nregions; i++)
        repeated |= rg->regions[i].expected >= 3;
    if (repeated && canonical_sites(rg)) goto oom_noopen;
    for (size_t i = 0; i < rg->nregions; i++) {
        tl_region_t *r = &rg->regions[i];
        if (r->expected < 3) continue;
        r->first = calloc(nsites, sizeof *r->first);
        r->prev = calloc(nsites, sizeof *r->prev);
        if (!r->first || !r->prev) goto oom_noopen;
    }
    return false;
oom:
    free(open);
oom_noopen:
    tl_regions_free(rg);
    return true;
}

bool tl_regions_filtered(tl_regions_t *rg, uint32_t site)
{
    if (!rg->filter || site >= rg->t->nsites) return false;
    if (!rg->filtered[site]) rg->filtered[site] = rg->filter(rg->filter_ctx, site) ? 2 : 1;
    return rg->filtered[site] == 2;
}

/* Append to o's block log (a last iteration's only). */
static void log_delta(tl_regions_t *rg, struct tl_open_iter *o, uint32_t site, bool storage,
                      int64_t bytes)
{
    if (!o->last || rg->peak_lost) return;
    struct tl_region_delta *nl = tl_grow(o->log, &o->log_cap, o->nlog + 1, sizeof *nl, 256);
    if (!nl) {
        rg->peak_lost = true;
        return;
    }
    o->log = nl;
    o->log[o->nlog++] = (struct tl_region_delta){site, storage, bytes};
}

void tl_regions_on_alloc(tl_regions_t *rg, uint32_t site, uint64_t size, bool storage,
                         unsigned device)
{
    if (rg->canon && site < rg->t->nsites) rg->site_live[rg->canon[site]] += size;
    if (rg->peak_device && device + 1 != rg->peak_device) return; /* not in this peak */
    for (size_t i = 0; i < rg->nopen; i++) {
        struct tl_open_iter *o = &rg->open[i];
        o->cur_bytes += size;
        log_delta(rg, o, site, storage, (int64_t)size);
        if (o->cur_bytes > o->peak_bytes) {
            o->peak_bytes = o->cur_bytes;
            o->peak_len = o->nlog;
        }
    }
}

void tl_regions_on_free(tl_regions_t *rg, uint32_t site, uint64_t size, uint64_t alloc_ts,
                        bool storage, unsigned device)
{
    if (rg->canon && site < rg->t->nsites) rg->site_live[rg->canon[site]] -= size;
    if (rg->peak_device && device + 1 != rg->peak_device) return;
    for (size_t i = 0; i < rg->nopen; i++) {
        struct tl_open_iter *o = &rg->open[i];
        if (alloc_ts >= o->begin_ts && o->cur_bytes >= size) {
            o->cur_bytes -= size;
            log_delta(rg, o, site, storage, -(int64_t)size);
        }
    }
}

/* The sites live at the peak of a last iteration: its log's first
 * peak_len entries summed by site. */
static bool peak_sites(tl_region_t *r, const struct tl_open_iter *o)
{
    tl_map_t by = {0}; /* key site * 2 + storage -> a bytes, b blocks */
    for (size_t i = 0; i < o->peak_len; i++) {
        const struct tl_region_delta *d = &o->log[i];
        bool created;
        tl_map_entry_t *a = tl_map_put(&by, (uint64_t)d->site * 2 + d->storage, &created);
        if (!a) goto oom;
        a->a += (uint64_t)d->bytes; /* wraps back for a block's -bytes */
        a->b += d->bytes > 0 ? 1 : (uint64_t)-1;
    }
    free(r->peak_sites);
    r->npeak_sites = 0;
    r->peak_sites = malloc((by.count ? by.count : 1) * sizeof *r->peak_sites);
    if (!r->peak_sites) goto oom;
    size_t pos = 0;
    for (tl_map_entry_t *a; (a = tl_map_next(&by, &pos));)
        if (a->b)
            r->peak_sites[r->npeak_sites++] = (tl_site_stat_t){.site = (uint32_t)(a->key / 2),
                                                               .storage = a->key & 1,
                                                               .bytes = a->a,
                                                               .blocks = a->b};
    qsort(r->peak_sites, r->npeak_sites, sizeof *r->peak_sites, tl_site_stat_cmp);
    tl_map_free(&by);
    return false;
oom:
    tl_map_free(&by);
    return true;
}

/* A live block's key by site: site * 2 + storage. */
static uint64_t site_key(const tl_map_entry_t *e)
{
    return (e->b & 0xffffffffu) * 2 + ((e->b >> 32) & BLOCK_STORAGE);
}

/* A site key by the site's frames' content (the agent may record one stack
 * under several ids: a check recording every block gave each iteration's
 * gradients their own), its low bit the storage bit. */
static uint64_t content_key(const tl_trace_t *t, uint64_t key)
{
    return tl_trace_site_content_hash(t, (uint32_t)(key / 2)) << 1 | (key & 1);
}

/* The iteration before the last one's leak (blocks allocated since
 * begin_ts, live at its end) into r->carry: key ptr, a size, b site_key, c
 * allocation ts. */
static bool carry_build(tl_regions_t *rg, tl_region_t *r, const tl_map_t *live, uint64_t begin_ts)
{
    tl_map_free(&r->carry);
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next((tl_map_t *)live, &pos));) {
        if (e->c < begin_ts || tl_regions_filtered(rg, (uint32_t)(e->b & 0xffffffffu))) continue;
        bool created;
        tl_map_entry_t *a = tl_map_put(&r->carry, e->key, &created);
        if (!a) return true;
        *a = (tl_map_entry_t){e->key, e->a, site_key(e), e->c};
    }
    return false;
}

/* The blocks of r->carry gone by now (freed; an address reused since is
 * another block) and allocated before the last iteration began (an
 * iteration of another thread may overlap it), by content_key into rep:
 * a bytes, b blocks. */
static bool replaced_build(const tl_regions_t *rg, const tl_region_t *r, const tl_map_t *live,
                           uint64_t last_begin_ts, tl_map_t *rep)
{
    tl_map_t by = {0}; /* site_key -> a bytes, b blocks */
    memset(rep, 0, sizeof *rep);
    size_t pos = 0;
    bool created;
    for (tl_map_entry_t *e; (e = tl_map_next((tl_map_t *)&r->carry, &pos));) {
        const tl_map_entry_t *l = tl_map_get(live, e->key);
        if ((l && l->c == e->c) || e->c >= last_begin_ts) continue; /* still live, or ours */
        tl_map_entry_t *a = tl_map_put(&by, e->b, &created);
        if (!a) goto oom;
        a->a += e->a;
        a->b++;
    }
    pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(&by, &pos));) {
        tl_map_entry_t *a = tl_map_put(rep, content_key(rg->t, e->key), &created);
        if (!a) goto oom;
        a->a += e->a;
        a->b += e->b;
    }
    tl_map_free(&by);
    return false;
oom:
    tl_map_free(&by);
    return true;
}

/* A last iteration's leak at one site (a bytes, b blocks; site_key key)
 * less what replaces the iteration before's (rep, drawn down): bytes up to
 * what was freed (a buffer grown by replacing it leaks its growth), a block
 * left for bytes left. Adds the part taken out to *out. */
static void take_replaced(const tl_trace_t *t, tl_map_t *rep, tl_map_entry_t *a,
                          tl_region_leak_t *out)
{
    tl_map_entry_t *rp = rep->count ? tl_map_get(rep, content_key(t, a->key)) : NULL;
    if (!rp || !rp->b) return;
    uint64_t bytes = a->a < rp->a ? a->a : rp->a, blocks = a->b < rp->b ? a->b : rp->b;
    rp->a -= bytes;
    rp->b -= blocks;
    a->a -= bytes;
    a->b -= blocks;
    if (!a->a) { /* all bytes replaced: every block */
        blocks += a->b;
        a->b = 0;
    } else if (!a->b) {
        blocks--;
        a->b = 1;
    }
    out->bytes += bytes;
    out->blocks += blocks;
    if (a->key & 1) {
        out->storage_bytes += bytes;
        out->storage_blocks += blocks;
    }
}

/* The last iteration's leak by site (blocks allocated since begin_ts, less
 * what replaces the iteration before's: take_replaced, into *replaced). */
static bool last_sites(tl_regions_t *rg, tl_region_t *r, const tl_map_t *live, uint64_t begin_ts,
                       tl_region_leak_t *replaced)
{
    tl_map_t by = {0}; /* key site_key -> a bytes, b blocks */
    tl_map_t rep = {0};
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next((tl_map_t *)live, &pos));) {
        uint32_t site = (uint32_t)(e->b & 0xffffffffu);
        if (e->c < begin_ts || tl_regions_filtered(rg, site)) continue;
        bool created;
        tl_map_entry_t *a = tl_map_put(&by, site_key(e), &created);
        if (!a) goto oom;
        a->a += e->a;
        a->b++;
    }
    if (replaced_build(rg, r, live, begin_ts, &rep)) goto oom;
    free(r->sites);
    r->nsites = 0;
    r->sites = malloc((by.count ? by.count : 1) * sizeof *r->sites);
    if (!r->sites) goto oom;
    pos = 0;
    for (tl_map_entry_t *a; (a = tl_map_next(&by, &pos));) {
        take_replaced(rg->t, &rep, a, replaced);
        if (a->b)
            r->sites[r->nsites++] = (tl_site_stat_t){.site = (uint32_t)(a->key / 2),
                                                     .storage = a->key & 1,
                                                     .bytes = a->a,
                                                     .blocks = a->b};
    }
    qsort(r->sites, r->nsites, sizeof *r->sites, tl_site_stat_cmp);
    tl_map_free(&by);
    tl_map_free(&rep);
    return false;
oom:
    tl_map_free(&by);
    tl_map_free(&rep);
    return true;
}

/* Keep only the end storages allocated since begin_ts, not filtered and of
 * a site last_sites kept (one whose leak is all replacements is not). */
static bool keep_inside(tl_regions_t *rg, const tl_region_t *r, tl_endpoint_t *e, uint64_t begin_ts)
{
    tl_map_t kept = {0}; /* site + 1 of r->sites' storages */
    bool created;
    for (size_t i = 0; i < r->nsites; i++)
        if (r->sites[i].storage && !tl_map_put(&kept, (uint64_t)r->sites[i].site + 1, &created)) {
            tl_map_free(&kept);
            return true;
        }
    size_t k = 0;
    for (size_t i = 0; i < e->nstorages; i++) {
        tl_end_storage_t *s = &e->storages[i];
        if (s->s.ts >= begin_ts && !tl_regions_filtered(rg, s->s.site) &&
            tl_map_get(&kept, (uint64_t)s->s.site + 1)) {
            if (k != i) e->storages[k] = *s;
            k++;
            continue;
        }
        for (size_t v = 0; v < s->nviews; v++)
            free(s->views[v].op_owned);
        free(s->views);
        free(s->dups);
        free(s->tags);
        free(s->origin_owned);
    }
    e->nstorages = k;
    tl_map_free(&kept);
    return false;
}

/* Growth bookkeeping at the end of iteration n (1-based) of r. */
static bool growth_step(tl_regions_t *rg, tl_region_t *r, uint64_t n)
{
    if (!r->first) return false;
    size_t nsites = rg->t->nsites;
    if (n == 1) {
        memcpy(r->first, rg->site_live, nsites * sizeof *r->first);
        return false;
    }
    if (n == 2) {
        size_t c = 0;
        for (size_t s = 0; s < nsites; s++)
            c += rg->site_live[s] > r->first[s];
        r->cand = malloc((c ? c : 1) * sizeof *r->cand);
        if (!r->cand) return true;
        for (size_t s = 0; s < nsites; s++) {
            if (rg->site_live[s] > r->first[s]) r->cand[r->ncand++] = (uint32_t)s;
            r->prev[s] = rg->site_live[s];
        }
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->ncand; i++) {
        uint32_t s = r->cand[i];
        if (rg->site_live[s] > r->prev[s]) r->cand[k++] = s;
        r->prev[s] = rg->site_live[s];
    }
    r->ncand = k;
    return false;
}

static bool end_iteration(tl_regions_t *rg, size_t k, const tl_map_t *live, tl_stor_t *st,
                          uint64_t ts)
{
    struct tl_open_iter o = rg->open[k];
    memmove(&rg->open[k], &rg->open[k + 1], (rg->nopen - k - 1) * sizeof *rg->open);
    rg->nopen--;
    tl_region_t *r = &rg->regions[o.region];
    tl_region_leak_t leak = {0};
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next((tl_map_t *)live, &pos));) {
        uint32_t site = (uint32_t)(e->b & 0xffffffffu);
        if (e->c < o.begin_ts || tl_regions_filtered(rg, site)) continue;
        leak.bytes += e->a;
        leak.blocks++;
        if ((e->b >> 32) & BLOCK_STORAGE) {
            leak.storage_bytes += e->a;
            leak.storage_blocks++;
        }
    }
    r->iterations++;
    if (r->iterations == 1) r->first_begin_ts = o.begin_ts;
    r->last_begin_ts = o.begin_ts;
    r->last_end_ts = ts;
    r->last_tid = o.tid;
    r->last = leak;
    r->total.bytes += leak.bytes; /* each iteration whole */
    r->total.blocks += leak.blocks;
    r->total.storage_bytes += leak.storage_bytes;
    r->total.storage_blocks += leak.storage_blocks;
    r->last_peak_bytes = o.peak_bytes;
    r->has_mark = o.has_mark;
    r->mark_id = o.mark_id;
    bool oom = o.last && (rg->peak_lost || peak_sites(r, &o));
    free(o.log);
    if (oom) return true;
    if (r->iterations + 1 == r->expected && carry_build(rg, r, live, o.begin_ts)) return true;
    if (r->iterations == r->expected) { /* the last one: sites and storages */
        tl_region_leak_t rp = {0};
        if (last_sites(rg, r, live, o.begin_ts, &rp)) return true;
        r->last_replaced = rp;
        r->last.bytes -= rp.bytes;
        r->last.blocks -= rp.blocks;
        r->last.storage_bytes -= rp.storage_bytes;
        r->last.storage_blocks -= rp.storage_blocks;
        tl_map_free(&r->carry);
        tl_endpoint_free(&r->end);
        if (st && tl_stor_capture(st, rg->t, live, o.has_mark, o.mark_id, ts, &r->end)) return true;
        if (keep_inside(rg, r, &r->end, o.begin_ts)) return true;
    }
    return growth_step(rg, r, r->iterations);
}

bool tl_regions_on_lineage(tl_regions_t *rg, const tl_lineage_t *l, const tl_map_t *live,
                           tl_stor_t *st)
{
    if (l->type == TL_REC_MARK) {
        for (size_t i = 0; i < rg->nopen; i++) {
            rg->open[i].has_mark = true;
            rg->open[i].mark_id = l->a[0];
        }
        return false;
    }
    if (l->type != TL_REC_REGION_BEGIN && l->type != TL_REC_REGION_END) return false;
    size_t r = find(rg, l->str);
    if (r == SIZE_MAX) { /* cannot happen after the pre-scan */
        if (l->type == TL_REC_REGION_END) rg->unmatched_ends++;
        return false;
    }
    if (l->type == TL_REC_REGION_BEGIN) {
        struct tl_open_iter *no = tl_grow(rg->open, &rg->open_cap, rg->nopen + 1, sizeof *no, 8);
        if (!no) return true;
        rg->open = no;
        const tl_region_t *reg = &rg->regions[r];
        rg->open[rg->nopen++] =
            (struct tl_open_iter){.region = r,
                                  .tid = l->tid,
                                  .begin_ts = l->ts,
                                  .last = reg->expected && l->ts == reg->last_close_begin_ts &&
                                          l->tid == reg->last_close_tid};
        return false;
    }
    for (size_t k = rg->nopen; k-- > 0;)
        if (rg->open[k].region == r && rg->open[k].tid == l->tid)
            return end_iteration(rg, k, live, st, l->ts);
    rg->unmatched_ends++;
    return false;
}

static int cmp_growth(const void *pa, const void *pb)
{
    const tl_growth_t *a = pa, *b = pb;
    if (a->bytes_per_iteration != b->bytes_per_iteration)
        return a->bytes_per_iteration > b->bytes_per_iteration ? -1 : 1;
    if (a->region != b->region) return a->region < b->region ? -1 : 1;
    return a->site < b->site ? -1 : a->site > b->site;
}

bool tl_regions_finish(tl_regions_t *rg)
{
    rg->unclosed += rg->nopen;
    size_t n = 0;
    for (size_t i = 0; i < rg->nregions; i++)
        if (rg->regions[i].iterations >= 3) n += rg->regions[i].ncand;
    rg->growth = malloc((n ? n : 1) * sizeof *rg->growth);
    if (!rg->growth) return true;
    for (size_t i = 0; i < rg->nregions; i++) {
        tl_region_t *r = &rg->regions[i];
        if (r->iterations < 3) continue;
        for (size_t k = 0; k < r->ncand; k++) {
            uint32_t s = r->cand[k];
            if (tl_regions_filtered(rg, s)) continue;
            tl_growth_t g = {.region = i,
                             .site = s,
                             .iterations = r->iterations,
                             .first_bytes = r->first[s],
                             .last_bytes = r->prev[s]};
            g.bytes_per_iteration = (g.last_bytes - g.first_bytes) / (r->iterations - 1);
            rg->growth[rg->ngrowth++] = g;
        }
    }
    if (rg->ngrowth > 1) qsort(rg->growth, rg->ngrowth, sizeof *rg->growth, cmp_growth);
    return false;
}

void tl_regions_free(tl_regions_t *rg)
{
    for (size_t i = 0; i < rg->nregions; i++) {
        tl_region_t *r = &rg->regions[i];
        free(r->sites);
        free(r->peak_sites);
        free(r->first);
        free(r->prev);
        free(r->cand);
        tl_map_free(&r->carry);
        tl_endpoint_free(&r->end);
    }
    for (size_t i = 0; i < rg->nopen; i++)
        free(rg->open[i].log);
    free(rg->regions);
    free(rg->growth);
    free(rg->open);
    free(rg->site_live);
    free(rg->filtered);
    free(rg->canon);
    tl_map_free(&rg->by_name);
    memset(rg, 0, sizeof *rg);
}
