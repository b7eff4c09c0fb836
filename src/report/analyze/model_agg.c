/* model_agg.c - an aggregate-mode trace's exact totals into the model
 * (model.h, tl_model_take_aggregate), and the model's release. */
#include <stdlib.h>
#include <string.h>

#include "report/analyze/model.h"
#include "report/read/aggregate.h"

bool tl_model_take_aggregate(const tl_trace_t *t, tl_model_t *m)
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
        uint32_t site = tl_trace_site_of(t, s->stack_id);
        if (site == UINT32_MAX) continue;
        ss[n++] =
            (tl_site_stat_t){.site = site, .storage = true, .bytes = s->bytes, .blocks = s->allocs};
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
        uint32_t site = tl_trace_site_of(t, s->stack_id);
        if (site == UINT32_MAX) continue;
        ss[n++] =
            (tl_site_stat_t){.site = site, .storage = true, .bytes = s->bytes, .blocks = s->allocs};
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

void tl_model_free(tl_model_t *m)
{
    tl_endpoint_free(&m->end);
    tl_regions_free(&m->regions);
    tl_timeline_free(m->timeline);
    free(m->leaks);
    free(m->peak_sites);
    free(m->storage_sites);
    free(m->site_device);
    memset(m, 0, sizeof *m);
}
