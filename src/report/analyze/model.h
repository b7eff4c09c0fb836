/* model.h - replay a trace's events: counts, peak, live set, sites, and the
 * storages live at the end point.
 *
 * Sites are tl_trace_t site indexes (one per stack id), split by storage vs
 * plain blocks. A storage is an ALLOC of a storage kind (c10, numpy's
 * handler, the device kinds), a numpy data buffer in a trace without numpy's
 * handler (a plain block of at least TL_NUMPY_MIN_STORAGE bytes whose
 * innermost native frame is in numpy's _multiarray_umath module) or a
 * registered buffer (STORAGE_REG).
 * "End" is the last MARK named "script_end" when the trace has one, else the
 * end of the trace. All sizes in bytes, times as absolute CLOCK_MONOTONIC ns
 * (the trace's clock). The model keeps site indexes and pointers into the
 * trace's string pool; building is single-threaded, results are read-only
 * afterwards (tl_lineage_analyse completes `end`).
 */
#ifndef TL_REPORT_MODEL_H
#define TL_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/reader.h"
#include "report/analyze/regions.h"
#include "report/analyze/site_stats.h"
#include "report/analyze/storages.h"
#include "report/analyze/timeline.h"

/* Storages of one device (cpu, cuda:0, ...), the model's per-device view. */
#define TL_MODEL_DEVICES 17 /* cpu and cuda:0..15; devices beyond share the last */
typedef struct tl_device_stat {
    bool seen;                                    /* a storage (or segment) of it was recorded */
    uint64_t peak_storage_bytes, peak_storage_ts; /* high-water mark of its storages */
    uint64_t live_storage_bytes, live_storages;   /* at the end point */
    /* cudaMalloc'd segments when PyTorch's blocks are known (the reserve
     * the blocks are carved from): now/at the end point, and the highest. */
    uint64_t reserved_bytes, reserved_segments, peak_reserved_bytes;
} tl_device_stat_t;

typedef struct tl_model {
    /* Counting rules (docs/report-schema.md): allocations = ALLOC records with
     * a non-zero pointer + REALLOC records with a non-zero new pointer;
     * frees = FREE records and reallocs that released a known live block;
     * storages = storage instances created (ids handed out). */
    uint64_t allocations, frees, storages;
    uint64_t unknown_frees;   /* FREE / REALLOC of a pointer not live: ignored */
    uint64_t device_frees;    /* of device storages (cuda, cuda_segment, pinned): aggregate mode */
    uint64_t replaced_blocks; /* ALLOC of an address already live: old block dropped */
    uint64_t largest_exact;   /* the largest ALLOC / REALLOC size recorded exactly (not sampled) */

    uint64_t peak_bytes, peak_ts; /* high-water mark of all live bytes up to the end point (the
                                   * script_end mark, else the end); peak_ts valid if peak_bytes */
    uint64_t peak_blocks;
    uint64_t peak_storage_bytes, peak_storage_ts;
    /* tl_model_build_device: 1 + the device (0: none) whose high-water mark
     * peak_sites are taken at, and that mark: the bytes of its storages, and
     * for the cpu of every plain heap block too (check --device) */
    unsigned peak_device;
    uint64_t device_peak_bytes, device_peak_ts;
    uint64_t live_bytes, live_blocks, live_storage_bytes,
        live_storage_blocks;    /* at the end point */
    uint64_t first_ts, last_ts; /* of the events (0 when none) */

    tl_site_stat_t *leaks; /* live at the end point, by site; sorted */
    size_t nleaks;
    tl_site_stat_t *peak_sites; /* live at the all-bytes peak (or peak_device's), by site; sorted */
    size_t npeak_sites;
    tl_site_stat_t *storage_sites; /* every storage created, by site (bytes = total); sorted */
    size_t nstorage_sites;

    tl_device_stat_t devices[TL_MODEL_DEVICES]; /* by the trace's TL_DEVICE_* */
    /* Per site: 1 + the device of its storages (the last one seen), 0 none;
     * nsites entries (check --device). */
    uint8_t *site_device;

    tl_endpoint_t end;       /* the storages live at the end point */
    tl_regions_t regions;    /* region iterations, their leaks, growth */
    tl_timeline_t *timeline; /* live bytes over time, bands, marks, checkpoints (owned) */
} tl_model_t;

/* What a model is built with (tl_model_build_with). */
typedef struct tl_model_opts {
    /* Sites filter rejects (suppressions) are left out of region leaks and
     * growth; the end point and peak still count every block. NULL: none. */
    tl_site_filter_fn filter;
    void *filter_ctx;
    /* Build m->timeline (the HTML report's); else it stays NULL and the
     * replay pays nothing for it (check, diff, the text and JSON reports). */
    bool timeline;
    /* Take peak_sites at the high-water mark of one device: 1 + its
     * TL_DEVICE_* (the cpu's plain heap blocks count with it), 0 = all bytes
     * (m->device_peak_bytes; check --device --max-peak), or
     * TL_MODEL_PEAK_STORAGES: every device's storages, no plain block (diff:
     * storages are recorded in full, so that moment does not move with the
     * sampler's estimate of plain blocks). Regions ignore the latter. */
    unsigned peak_device;
} tl_model_opts_t;

#define TL_MODEL_PEAK_STORAGES (TL_MODEL_DEVICES + 1u) /* tl_model_opts_t.peak_device */

/* Whether a block (a storage of device dev, or a plain heap block: dev is
 * then TL_DEVICE_CPU) counts towards the peak of peak_device (as above). */
static inline bool tl_model_peak_counts(unsigned peak_device, unsigned dev, bool storage)
{
    return peak_device == TL_MODEL_PEAK_STORAGES ? storage : dev + 1 == peak_device;
}

/* Build the model of t, with o (NULL: no filter, no timeline). Sorted
 * lists: bytes descending, then blocks descending, then site index, then
 * plain before storage. Returns true when out of memory (m is then empty). */
bool tl_model_build_with(const tl_trace_t *t, tl_model_t *m, const tl_model_opts_t *o);

/* tl_model_build_with everything: no filter, with the timeline. */
bool tl_model_build(const tl_trace_t *t, tl_model_t *m);

void tl_model_free(tl_model_t *m);

/* Aggregate mode (aggregate.h): the last complete checkpoint's exact site
 * totals replace the storage sites and counts of *m that replay gave;
 * nothing changes for a trace of another mode (model_agg.c; called at the
 * end of tl_model_build_with). true when out of memory. */
bool tl_model_take_aggregate(const tl_trace_t *t, tl_model_t *m);

#endif
