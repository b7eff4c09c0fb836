/* site_stats.h - the model's lists of live (or created) blocks by site
 * (below model.h, which holds them):
 * per-(site, storage) accumulators turned into sorted tl_site_stat_t lists.
 *
 * Accumulator arrays are indexed site * 2 + storage (nsites * 2 + 2 entries
 * allocated by the caller, the last two a spare). Every function here
 * returns true when out of memory, with nothing allocated in *out then;
 * on success *out is malloc'd (the caller frees it) and sorted by
 * tl_site_stat_cmp. Single-threaded, like the model.
 */
#ifndef TL_REPORT_SITE_STATS_H
#define TL_REPORT_SITE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/read/reader.h"

/* Live (or created) blocks of one site, as the model's lists hold them. */
typedef struct tl_site_stat {
    uint32_t site; /* index into tl_trace_t.sites */
    bool storage;  /* these blocks are storages */
    uint64_t bytes;
    uint64_t blocks; /* live blocks (leaks, peak); allocations (storage_sites) */
    /* leaks with a leak scan (tl_trace_t.has_leak_scan): bytes and blocks by
     * tl_leak_kind_t; zero elsewhere. */
    uint64_t kind_bytes[4], kind_blocks[4];
} tl_site_stat_t;

/* The order of every sorted list of tl_site_stat_t (qsort's comparator):
 * bytes descending, then blocks descending, then site index, then plain
 * before storage. */
int tl_site_stat_cmp(const void *a, const void *b);

/* Bytes and blocks of one (site, storage) pair. */
typedef struct tl_site_acc {
    uint64_t bytes, blocks;
} tl_site_acc_t;

/* The non-empty accumulators of acc[0 .. nsites * 2) as a sorted list. */
bool tl_site_stats_collect(const tl_site_acc_t *acc, size_t nsites, tl_site_stat_t **out,
                           size_t *nout);

/* The live set by site: acc[0 .. nsites * 2) the live blocks' bytes and
 * blocks by (site, storage), as the replay keeps them, into a sorted list
 * (no table of nsites entries is made: acc is the replay's own, ~10^6
 * sites in a torch script's `all`-mode trace); with kinds (the leak scan's
 * kind by pointer, NULL without a scan) also by tl_leak_kind_t, from live
 * (key ptr; a = size; b = site | flags << 32, flag bit 0: storage; not
 * changed, the iterator is not const), a block the scan did not name
 * counting as reachable. live must hold exactly the blocks acc sums. */
bool tl_site_stats_live(const tl_site_acc_t *acc, tl_map_t *live, size_t nsites,
                        const tl_map_t *kinds, tl_site_stat_t **out, size_t *nout);

/* The trace's leak-scan kinds (tl_trace_t.leak_kinds) as a map: key ptr,
 * a = tl_leak_kind_t. The caller frees the map, also after a failure. */
bool tl_site_stats_leak_kinds(const tl_trace_t *t, tl_map_t *kinds);

#endif /* TL_REPORT_SITE_STATS_H */
