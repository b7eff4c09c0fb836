/* site_stats.c - live blocks by site, sorted (see site_stats.h). */
#include "report/analyze/site_stats.h"

#include <stdlib.h>
#include <string.h>

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

/* The live blocks' bytes and blocks by leak kind into the sorted list
 * out[0, n): a block the scan did not name is reachable. An index from
 * site x storage to its entry (4 bytes a site) rather than a sum per site
 * and kind (64 bytes a site: 146 MB for the ~10^6 sites of a torch
 * script's `all`-mode trace). true when out of memory. */
static bool add_kinds(tl_map_t *live, size_t nsites, const tl_map_t *kinds, tl_site_stat_t *out,
                      size_t n)
{
    uint32_t *at = malloc((nsites * 2 + 2) * sizeof *at);
    if (!at) return true;
    memset(at, 0xff, (nsites * 2 + 2) * sizeof *at);
    for (size_t i = 0; i < n; i++)
        at[out[i].site * 2 + out[i].storage] = (uint32_t)i;
    size_t pos = 0;
    for (tl_map_entry_t *e; (e = tl_map_next(live, &pos));) {
        size_t site = (size_t)(e->b & 0xffffffffu), storage = (e->b >> 32) & 1;
        if (site >= nsites || at[site * 2 + storage] == UINT32_MAX) continue;
        const tl_map_entry_t *k = tl_map_get(kinds, e->key);
        unsigned kind = k ? (unsigned)k->a : TL_LEAK_REACHABLE;
        tl_site_stat_t *o = &out[at[site * 2 + storage]];
        o->kind_bytes[kind] += e->a;
        o->kind_blocks[kind]++;
    }
    free(at);
    return false;
}

/* The live set by site (acc: what the replay keeps up to date) as a sorted
 * list; with kinds, also by leak kind from the live table. */
bool tl_site_stats_live(const tl_site_acc_t *acc, tl_map_t *live, size_t nsites,
                        const tl_map_t *kinds, tl_site_stat_t **out, size_t *nout)
{
    bool oom = tl_site_stats_collect(acc, nsites, out, nout);
    return oom || (kinds && add_kinds(live, nsites, kinds, *out, *nout));
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
