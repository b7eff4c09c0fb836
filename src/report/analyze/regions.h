/* regions.h - per-region leaks and growth, computed during the model's replay.
 *
 * A region iteration runs from a REGION_BEGIN to the REGION_END of the same
 * name in the same thread (an END closes the innermost open region of that
 * name there: regions nest). Memory allocated inside an iteration (in any
 * thread) and still live at its END is that iteration's leak. Over the
 * iterations of one name, a site whose live bytes at each iteration's end
 * grow in every iteration after the first (at least two growths: three
 * iterations) is growth (docs/report-schema.md, "regions", "growth").
 * The model (model.c) calls the tl_regions_on_* hooks in its second pass;
 * single-threaded; functions that can fail return bool (true = out of memory).
 */
#ifndef TL_REPORT_REGIONS_H
#define TL_REPORT_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/read/reader.h"
#include "report/analyze/storages.h"

typedef struct tl_site_stat tl_site_stat_t;

/* Sites to leave out of region leaks and growth (suppressions); NULL = none.
 * May be called many times per site: cache. */
typedef bool (*tl_site_filter_fn)(void *ctx, uint32_t site);

typedef struct tl_region_leak {
    uint64_t bytes, blocks, storage_bytes, storage_blocks;
} tl_region_leak_t;

typedef struct tl_region {
    const char *name;                                    /* trace string pool */
    uint64_t iterations;                                 /* closed iterations */
    uint64_t first_begin_ts, last_begin_ts, last_end_ts; /* absolute ns */
    uint32_t last_tid;
    /* Leak of the last iteration, at its end: what it allocated and left
     * live, less what replaces the iteration before's (last_replaced): per
     * site by content, up to the bytes and blocks of that one's leak freed
     * since and allocated before the last began (a training step's
     * gradients, made again at each backward once zero_grad set them to
     * None; a buffer grown by replacing it still leaks its growth). */
    tl_region_leak_t last, last_replaced;
    tl_region_leak_t total;   /* sum over iterations of each one's leak at its end */
    uint64_t last_peak_bytes; /* most bytes allocated inside the last iteration live at once */
    /* What was live at that peak (allocated inside the last iteration), by
     * site, sorted as model.h says (check --region --max-peak names them). */
    tl_site_stat_t *peak_sites;
    size_t npeak_sites;
    tl_site_stat_t *sites; /* the last iteration's leak by site, sorted as model.h says */
    size_t nsites;
    bool has_mark;     /* a MARK (snapshot) was taken inside the last iteration */
    uint64_t mark_id;  /* the last one */
    tl_endpoint_t end; /* storages allocated in the last iteration, live at its end */
    /* growth state (regions with at least 3 expected iterations) */
    uint64_t *first, *prev; /* live bytes per site at the end of iteration 1, and the latest */
    uint32_t *cand;         /* sites still growing in every iteration since the second */
    size_t ncand;
    uint64_t expected; /* iterations the pre-scan found */
    /* the BEGIN of the iteration the pre-scan saw close last: the replay logs
     * that iteration's blocks to name its peak's sites */
    uint64_t last_close_begin_ts;
    uint32_t last_close_tid;
    tl_map_t carry; /* the leak of the iteration before the last, by ptr (regions.c) */
} tl_region_t;

typedef struct tl_growth {
    size_t region; /* index into tl_regions_t.regions */
    uint32_t site; /* the first of the sites with these frames (the agent may give one
                    * stack several ids: growth counts them together) */
    uint64_t bytes_per_iteration; /* (last - first) / (iterations - 1) */
    uint64_t iterations;
    uint64_t first_bytes, last_bytes; /* the site's live bytes at the end of the first / last */
} tl_growth_t;

typedef struct tl_regions {
    tl_region_t *regions; /* in order of first BEGIN */
    size_t nregions;
    tl_growth_t *growth; /* bytes_per_iteration descending, then region, site */
    size_t ngrowth;
    uint64_t unmatched_ends; /* ENDs with no open region of that name in their thread */
    uint64_t unclosed;       /* BEGINs never closed (by the end of the trace) */
    bool peak_lost;          /* out of memory while logging a last iteration */
    /* 1 + the device (TL_DEVICE_*) whose blocks alone make up each
     * iteration's peak (last_peak_bytes, peak_sites: check --region
     * --device --max-peak); 0 = every block. Set after tl_regions_init. */
    unsigned peak_device;
    /* replay state */
    const tl_trace_t *t;
    tl_site_filter_fn filter;
    void *filter_ctx;
    tl_map_t by_name; /* FNV-1a of the name -> a = region index + 1 (collisions: linear search) */
    struct tl_open_iter {
        size_t region;
        uint32_t tid;
        uint64_t begin_ts, cur_bytes, peak_bytes, mark_id;
        bool has_mark, last;
        /* the last iteration's block log (NULL elsewhere): (site, storage,
         * +-bytes) in replay order; peak_len entries make up its peak */
        struct tl_region_delta *log;
        size_t nlog, log_cap, peak_len;
    } * open;
    size_t nopen, open_cap;
    uint64_t *site_live; /* live bytes per canonical site (growth) */
    uint32_t *canon;     /* per site: the first site with the same frames; NULL = no growth */
    uint8_t *filtered;   /* per site: 0 unknown, 1 kept, 2 filtered */
} tl_regions_t;

/* Pre-scan t's REGION records (names, expected iterations). filter may be
 * NULL. *rg is zeroed first. */
bool tl_regions_init(tl_regions_t *rg, const tl_trace_t *t, tl_site_filter_fn filter, void *ctx);

/* Whether blocks appearing and going away matter to rg now (growth is
 * measured, or an iteration is open): tl_regions_on_alloc and _on_free do
 * nothing otherwise, and the model skips the calls, two per event of a
 * trace without regions (BENCHMARKS.md, W5). */
static inline bool tl_regions_busy(const tl_regions_t *rg)
{
    return rg->canon || rg->nopen;
}

/* A block of size bytes at site (a storage with storage) on device (a
 * TL_DEVICE_*: a storage's, TL_DEVICE_CPU for plain blocks), allocated at
 * alloc_ts, appears / goes away. Running out of memory for the last
 * iteration's log sets rg->peak_lost: its END then reports out of memory. */
void tl_regions_on_alloc(tl_regions_t *rg, uint32_t site, uint64_t size, bool storage,
                         unsigned device);
void tl_regions_on_free(tl_regions_t *rg, uint32_t site, uint64_t size, uint64_t alloc_ts,
                        bool storage, unsigned device);

/* A REGION_BEGIN, REGION_END or MARK record (others ignored). live: the
 * model's live block table (key ptr; a size; b site | flags << 32, flag 1 =
 * storage; c allocation ts); st: the live storages. */
bool tl_regions_on_lineage(tl_regions_t *rg, const tl_lineage_t *l, const tl_map_t *live,
                           tl_stor_t *st);

/* After the replay: count unclosed iterations, list growth. */
bool tl_regions_finish(tl_regions_t *rg);

void tl_regions_free(tl_regions_t *rg);

/* Whether site is left out by the filter (cached). */
bool tl_regions_filtered(tl_regions_t *rg, uint32_t site);

/* The region named name, or NULL. */
const tl_region_t *tl_regions_find(const tl_regions_t *rg, const char *name);

#endif
