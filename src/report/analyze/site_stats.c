/* site_stats.c - live blocks by site, sorted (see site_stats.h). */
#include "report/analyze/site_stats.h"

#include <stdlib.h>
#include <string.h>

#include "report/read/aggregate.h"

int tl_site_stat_cmp(const void *pa, const void *pb)
{
    const tl_site_stat_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    if (a->blocks != b->blocks) return a->blocks > b->blocks ? -1 : 1;
    if (a->site != b->site) return a->site < b->site ? -1 : 1;
    return (int)a->storage - (int)b->storage;
}

/* Sorted list of the non-empty accumulators; true when out of memory. */
bool tl_site_stats_collect(const tl_site_acc_t *acc, size_t nsites, tl_site_stat_t **out,
                           size_t *nout)
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
    qsort(*out, n, sizeof **out, tl_site_stat_cmp);
    *nout = n;
    return false;
}

/* Per-(site, storage) bytes and blocks by tl_leak_kind_t (the end point's
 * leaks, with a leak scan). */
typedef struct kind_acc {
    uint64_t bytes[4], blocks[4];
} kind_acc_t;

/* Aggregate the live table by site into a sorted list; with kinds (the
 * leak scan's LEAKKIND blocks by pointer, NULL without a scan) also by leak
 * kind, a block the scan did not name being reachable. */
bool tl_site_stats_live(tl_map_t *live, size_t nsites, const tl_map_t *kinds, tl_site_stat_t **out,
                        size_t *nout)
{
    tl_site_acc_t *acc = calloc(nsites * 2 + 2, sizeof *acc);
    kind_acc_t *kacc = kinds ? calloc(nsites * 2 + 2, sizeof *kacc) : NULL;
    if (!acc || (kinds && !kacc)) {
        free(acc);
        free(kacc);
        return true;
    }
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(live, &pos));) {
        size_t site = (size_t)(e->b & 0xffffffffu), storage = (e->b >> 32) & 1;
        if (site >= nsites) continue; /* cannot happen: sites come from the reader */
        acc[site * 2 + storage].bytes += e->a;
        acc[site * 2 + storage].blocks++;
        if (kacc) {
            const tl_map_entry_t *k = tl_map_get(kinds, e->key);
            unsigned kind = k ? (unsigned)k->a : TL_LEAK_REACHABLE;
            kacc[site * 2 + storage].bytes[kind] += e->a;
            kacc[site * 2 + storage].blocks[kind]++;
        }
    }
    bool oom = tl_site_stats_collect(acc, nsites, out, nout);
    for (size_t i = 0; !oom && kacc && i < *nout; i++) {
        const kind_acc_t *k = &kacc[(*out)[i].site * 2 + (*out)[i].storage];
        memcpy((*out)[i].kind_bytes, k->bytes, sizeof k->bytes);
        memcpy((*out)[i].kind_blocks, k->blocks, sizeof k->blocks);
    }
    free(acc);
    free(kacc);
    return oom;
}

/* The leak scan's kinds by pointer. true = out of memory. */
bool tl_site_stats_leak_kinds(const tl_trace_t *t, tl_map_t *kinds)
{
    for (size_t i = 0; i < t->nleak_kinds; i++) {
        bool created;
        tl_map_entry_t *e = tl_map_put(kinds, t->leak_kinds[i].ptr, &created);
        if (!e) return true;
        e->a = t->leak_kinds[i].kind;
    }
    return false;
}

bool tl_site_stats_aggregate(const tl_trace_t *t, tl_model_t *m)
{
    const tl_agg_t *a = t->agg;
    if (!a || a->mode != TL_TMODE_AGGREGATE || a->cur < 0) return false;
    const tl_agg_ckpt_t *cur = &a->region[a->cur];
    tl_site_stat_t *ss = malloc((cur->nsites + cur->ndsites + m->nstorage_sites + 1) * sizeof *ss);
    if (!ss) return true;
    size_t n = 0;
    uint64_t allocs = 0, frees = 0, storages = 0;
    /* Device storages with totals of their own (DSITE): by site and device;
     * segments are no storages once PyTorch's blocks are known (the
     * replay's rule). */
    uint64_t dev_frees = 0;
    for (size_t i = 0; i < cur->ndsites; i++) {
        const tl_agg_dsite_t *s = &cur->dsites[i];
        if (s->kind == TL_KIND_STORAGE_CUDA_SEGMENT && t->ncuda_blocks) continue;
        allocs += s->allocs;
        storages += s->allocs;
        dev_frees += s->frees;
        tl_map_entry_t *e = tl_map_get(&t->site_by_id, s->stack_id);
        if (!e) continue;
        ss[n++] = (tl_site_stat_t){
            .site = (uint32_t)e->a, .storage = true, .bytes = s->bytes, .blocks = s->allocs};
    }
    /* Their exact peaks (DPEAK), for the CUDA devices: the replay's come
     * from the device's peak set, which a full live table or a device past
     * the first TL_CKPT_DEVICES may lack (cpu's storages are mostly the
     * host's, from the host sets). */
    for (unsigned d = 1; d < TL_AGG_DEVICES && d < TL_MODEL_DEVICES; d++) {
        const tl_agg_dpeak_t *p = &cur->dpeak[d];
        if (!p->seen) continue;
        tl_device_stat_t *ds = &m->devices[d];
        ds->seen = true;
        ds->peak_storage_bytes = t->ncuda_blocks ? p->storage : p->all;
        ds->peak_storage_ts = t->ncuda_blocks ? p->storage_ts : p->all_ts;
        if (t->ncuda_blocks) ds->peak_reserved_bytes = p->segments;
    }
    for (size_t i = 0; i < cur->nsites; i++) {
        const tl_agg_site_t *s = &cur->sites[i];
        allocs += s->allocs;
        frees += s->frees;
        if (!(s->flags & 1)) continue;
        storages += s->allocs;
        tl_map_entry_t *e = tl_map_get(&t->site_by_id, s->stack_id);
        if (!e) continue;
        ss[n++] = (tl_site_stat_t){
            .site = (uint32_t)e->a, .storage = true, .bytes = s->bytes, .blocks = s->allocs};
    }
    /* Sites without totals here (device storages of a trace from before
     * DSITE, whose device storages are events) keep the replay's. */
    tl_map_t with_totals = {0}; /* key site + 1 */
    bool oom = false, created;
    for (size_t k = 0; k < n && !oom; k++)
        oom = !tl_map_put(&with_totals, (uint64_t)ss[k].site + 1, &created);
    for (size_t i = 0; i < m->nstorage_sites && !oom; i++) {
        if (tl_map_get(&with_totals, (uint64_t)m->storage_sites[i].site + 1)) continue;
        ss[n++] = m->storage_sites[i];
        allocs += m->storage_sites[i].blocks;
        storages += m->storage_sites[i].blocks;
    }
    tl_map_free(&with_totals);
    if (oom) {
        free(ss);
        return true;
    }
    qsort(ss, n, sizeof *ss, tl_site_stat_cmp);
    free(m->storage_sites);
    m->storage_sites = ss;
    m->nstorage_sites = n;
    m->allocations = allocs;
    m->frees = frees + (cur->ndsites ? dev_frees : m->device_frees);
    m->storages = storages;
    return false;
}
