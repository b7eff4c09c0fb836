/* timeline.h - live bytes over time, region bands, snapshot marks and
 * "what was live then" checkpoints, gathered during the model's replay for
 * the HTML report's timeline (docs/report-html.md).
 *
 * Sized for any trace: the series is TL_TIMELINE_BUCKETS buckets of a
 * power-of-two width, chosen from the trace's span when its END record
 * gives one, that doubles (neighbours merged) when the trace runs past the
 * last bucket; each keeps the most bytes live in it and the bytes live at
 * its last event. Checkpoints of the live set by site are taken at every
 * TL_TIMELINE_CP_EVERY-th bucket boundary (every other one dropped when
 * the width doubles) and at the last event. Bands and marks are capped.
 * One pass: the model calls tl_timeline_before and tl_timeline_step around
 * each event it applies, in time order, then tl_timeline_finish. Times are
 * absolute CLOCK_MONOTONIC ns. Single-threaded; functions that can fail
 * return bool (true = out of memory).
 */
#ifndef TL_REPORT_TIMELINE_H
#define TL_REPORT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/map.h"
#include "report/read/reader.h"

#define TL_TIMELINE_BUCKETS     1024u /* even */
#define TL_TIMELINE_CP_EVERY    16u   /* buckets between checkpoints */
#define TL_TIMELINE_CHECKPOINTS (TL_TIMELINE_BUCKETS / TL_TIMELINE_CP_EVERY + 1) /* + the end */
#define TL_TIMELINE_CP_SITES    15u /* sites kept per checkpoint, by bytes */
#define TL_TIMELINE_MAX_BANDS   4096u
#define TL_TIMELINE_MAX_MARKS   1024u

/* Series, index into tl_timeline_bucket_t's arrays: all blocks, storages
 * (every kind and device), pinned host storages (kind pinned), and the
 * storages of each CUDA device (cuda:0 at TL_SERIES_CUDA, the trace's
 * TL_DEVICE_CUDA(d) - 1 + TL_SERIES_CUDA; the model's devices beyond share
 * the last). */
#define TL_TIMELINE_CUDA_DEVICES 16u
enum {
    TL_SERIES_ALL = 0,
    TL_SERIES_STORAGES = 1,
    TL_SERIES_PINNED = 2,
    TL_SERIES_CUDA = 3,
    TL_SERIES_COUNT = TL_SERIES_CUDA + TL_TIMELINE_CUDA_DEVICES
};

typedef struct tl_timeline_bucket {
    bool used;                      /* an event fell in it */
    uint64_t max[TL_SERIES_COUNT];  /* most bytes live after an event in it */
    uint64_t last[TL_SERIES_COUNT]; /* bytes live after its last event */
} tl_timeline_bucket_t;

/* One iteration of a region (a pytest test is one). */
typedef struct tl_timeline_band {
    const char *name; /* trace string pool */
    uint64_t begin_ts, end_ts;
    uint32_t depth; /* regions open in its thread when it began */
} tl_timeline_band_t;

typedef struct tl_timeline_mark {
    const char *name; /* trace string pool */
    uint64_t id, ts;
} tl_timeline_mark_t;

typedef struct tl_timeline_cp_site {
    uint32_t site; /* tl_trace_t site index */
    bool storage;
    uint64_t bytes, blocks;
} tl_timeline_cp_site_t;

/* The live set at one time, by site (the largest TL_TIMELINE_CP_SITES). */
typedef struct tl_timeline_cp {
    uint64_t ts;
    uint64_t bytes, blocks, storage_bytes;
    uint64_t site_count; /* sites with live blocks, before the cut */
    tl_timeline_cp_site_t sites[TL_TIMELINE_CP_SITES];
    size_t nsites;
} tl_timeline_cp_t;

typedef struct tl_timeline {
    bool any;              /* an event was seen */
    uint64_t t0, width_ns; /* bucket i covers [t0 + i * width_ns, + width_ns) */
    uint64_t last_ts;
    tl_timeline_bucket_t buckets[TL_TIMELINE_BUCKETS];
    tl_timeline_band_t *bands; /* by end time */
    size_t nbands;
    uint64_t bands_dropped; /* closed beyond TL_TIMELINE_MAX_BANDS */
    tl_timeline_mark_t *marks;
    size_t nmarks;
    uint64_t marks_dropped;
    tl_timeline_cp_t *cps; /* by time: boundaries, then (finish) the last event */
    size_t ncps;
    uint64_t next_cp; /* boundary index (in buckets) of the next checkpoint */
    /* replay state */
    struct tl_timeline_open {
        const char *name;
        uint32_t tid, depth;
        uint64_t ts;
    } * open;
    size_t nopen, open_cap;
    uint64_t *acc; /* per site * 2 + storage: bytes, blocks (checkpoints) */
} tl_timeline_t;

/* A new, empty timeline for t (heap: it is ~320 KiB), or NULL. Bucket 0
 * starts at the trace's start (the header's start_mono); the width fits
 * the span to t's END record, if any. */
tl_timeline_t *tl_timeline_new(const tl_trace_t *t);
void tl_timeline_free(tl_timeline_t *tl);

/* After the model applied event ev: the bytes live now in each series
 * (v[TL_SERIES_*]). Region and MARK lineage events become bands and marks. */
bool tl_timeline_step(tl_timeline_t *tl, const tl_trace_t *t, const tl_event_t *ev,
                      const uint64_t v[TL_SERIES_COUNT]);

/* Before the model applies an event at ts: takes the checkpoints due by ts
 * from live, the model's live block table (key ptr; a size; b site | flags
 * << 32, flag 1 = storage). */
bool tl_timeline_before(tl_timeline_t *tl, const tl_trace_t *t, uint64_t ts, tl_map_t *live);

/* After the last event: its checkpoint (what is live at the end of the
 * trace). */
bool tl_timeline_finish(tl_timeline_t *tl, const tl_trace_t *t, tl_map_t *live);

/* Buckets in use: 1 + the last one an event fell in (0 when none). */
size_t tl_timeline_nbuckets(const tl_timeline_t *tl);

#endif
