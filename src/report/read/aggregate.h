/* aggregate.h - what the report reads of the agent's recording modes
 * (docs/trace-format.md, "Modes"): the mode and sampling rate from OPTIONS,
 * the exact per-size-class counters (COUNT), and aggregate mode's
 * checkpoints (CKPT_BEGIN ... CKPT_END in their own chunks), which become
 * ordinary events and site totals for the model.
 *
 * In the default mode, plain blocks below big_min_bytes were byte-sampled:
 * the event stream gives each such ALLOC / RALLOC event the size it stands for,
 * size / (1 - exp(-size / sample_bytes)), and flags it TL_EV_F_SAMPLED in
 * tl_event_t.pad (event.h). Untrusted input: every count is bounded.
 */
#ifndef TL_REPORT_AGGREGATE_H
#define TL_REPORT_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"

struct tl_trace;

typedef enum tl_trace_mode {
    TL_TMODE_ALL = 0,
    TL_TMODE_DEFAULT = 1,
    TL_TMODE_AGGREGATE = 2
} tl_trace_mode_t;

typedef struct tl_agg_live {
    uint64_t kind, ptr, size, weight, stack_id, ts;
    uint64_t device; /* DLIVE (a device kind): TL_DEVICE_*; else 0 */
} tl_agg_live_t;

/* A DSITE record: one site's device storages of one kind on one device. */
typedef struct tl_agg_dsite {
    uint64_t stack_id, kind, device, allocs, frees, bytes, freed;
} tl_agg_dsite_t;

/* A DPEAK record: one device's exact peaks (trace_format.h). */
typedef struct tl_agg_dpeak {
    bool seen;
    uint64_t storage, storage_ts, all, all_ts, segments;
} tl_agg_dpeak_t;

typedef struct tl_agg_site {
    uint64_t stack_id, flags, allocs, frees, bytes, freed;
} tl_agg_site_t;

#define TL_AGG_DEVICES 17 /* DPEAK devices kept: cpu and cuda:0..15, as the model's */

/* One decoded checkpoint. */
typedef struct tl_agg_ckpt {
    bool complete;
    uint64_t seq, set, live_bytes, live_blocks, peak_bytes, ts;
    tl_agg_live_t *live;
    size_t nlive, live_cap;
    tl_agg_site_t *sites;
    size_t nsites, site_cap;
    uint64_t count[TL_REC_COUNT_CLASSES], bytes[TL_REC_COUNT_CLASSES], frees;
    bool has_counts;
    tl_agg_dsite_t *dsites; /* the current set's device totals */
    size_t ndsites, dsite_cap;
    tl_agg_dpeak_t dpeak[TL_AGG_DEVICES];
} tl_agg_ckpt_t;

typedef struct tl_agg {
    tl_trace_mode_t mode; /* from OPTIONS "mode"; a trace without it is `all` */
    uint64_t sample_bytes, big_min;
    bool has_counts; /* COUNT records (or a checkpoint's) were read */
    uint64_t count[TL_REC_COUNT_CLASSES], bytes[TL_REC_COUNT_CLASSES], frees;
    tl_agg_ckpt_t
        region[TL_CKPT_SETS * 2]; /* checkpoint regions being read; then the chosen ones */
    int cur, peak;                /* chosen regions, -1 if none */
} tl_agg_t;

/* reader.c hooks. Each returns true when out of memory. */
bool tl_agg_options(struct tl_trace *t, const tl_record_t *rec);
bool tl_agg_record(struct tl_trace *t, const tl_record_t *rec);
/* A chunk whose tid marks an aggregate checkpoint region: decoded here.
 * *taken = it was one (the reader skips it). */
bool tl_agg_chunk(struct tl_trace *t, uint32_t tid, const uint8_t *p, size_t n, bool *taken);
/* After all chunks: aggregate checkpoints as events (intern gives a site
 * index for a stack id, UINT32_MAX on failure; push appends an event,
 * true = OOM). Sampled events get their weight in the stream (stream.c). */
typedef uint32_t (*tl_agg_intern_fn)(void *ctx, uint64_t stack_id);
struct tl_event;
typedef bool (*tl_agg_push_fn)(void *ctx, const struct tl_event *ev);
bool tl_agg_finish(struct tl_trace *t, void *ctx, tl_agg_intern_fn intern, tl_agg_push_fn push);
void tl_agg_free(struct tl_trace *t);
/* Estimated bytes a sampled block of size stands for (sample_bytes = mean). */
uint64_t tl_agg_weight(uint64_t size, uint64_t mean);

/* What the renderers show of a mode (render/mode.c); a NULL a (no OPTIONS
 * record) is `all` mode. "all", "default" or "aggregate". */
const char *tl_agg_mode_name(const tl_agg_t *a);
/* Plain blocks were byte-sampled (default or aggregate mode, a rate > 1). */
bool tl_agg_sampled(const tl_agg_t *a);
/* The exact counters summed over the size classes: allocations, bytes. */
void tl_agg_exact(const tl_agg_t *a, uint64_t *allocations, uint64_t *bytes);

#endif /* TL_REPORT_AGGREGATE_H */
