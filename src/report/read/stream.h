/* stream.h - the reader's internal view of the event stream (reader.c loads
 * the sources, stream.c merges them): the decoding of records into events
 * (the load counts and interns what it would make: skim.h for block
 * records, a unit test holding the two together). Not for analyses or
 * renderers: they use tl_events_* of reader.h.
 */
#ifndef TL_REPORT_STREAM_H
#define TL_REPORT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"
#include "report/read/aggregate.h"
#include "report/read/reader.h"

/* One run of a thread's records that holds events: records [data, data +
 * len) of the chunk whose records start at `chunk`, len ending where the load
 * stopped decoding (an error) or where an OWNER record hands the chunk on.
 * In a compressed trace, `chunk` is the compressed chunk (its header, in
 * the file), data NULL, and the run starts zoff bytes into the records the
 * stream inflates from it (zchunk.h). */
typedef struct tl_evsrc {
    const uint8_t *chunk;
    const uint8_t *data;
    size_t len;
    uint32_t zoff;
    uint64_t base_ts;
    uint32_t lineage_base; /* index in tl_trace_t.lineage of the chunk's first lineage record */
    uint32_t tid;          /* kernel tid of the thread whose run of records this is */
} tl_evsrc_t;

/* The last sites looked up by stack id, direct-mapped on the id's low bits:
 * a trace's events mostly come from a few sites, and a hash lookup per
 * event was a tenth of a report's time (BENCHMARKS.md, W5). Zeroed: empty. */
#define TL_SITE_CACHE 64
typedef struct tl_site_cache {
    uint64_t id[TL_SITE_CACHE];
    uint32_t site1[TL_SITE_CACHE]; /* site index + 1; 0 = empty slot */
} tl_site_cache_t;

/* The site of stack id, cached; UINT32_MAX when the id was never interned. */
static inline uint32_t tl_site_cache_find(tl_site_cache_t *c, const tl_trace_t *t, uint64_t id)
{
    unsigned k = (unsigned)(id % TL_SITE_CACHE);
    if (c->site1[k] && c->id[k] == id) return c->site1[k] - 1;
    tl_map_entry_t *e = tl_map_get(&t->site_by_id, id);
    if (!e) return UINT32_MAX;
    c->id[k] = id;
    c->site1[k] = (uint32_t)e->a + 1;
    return (uint32_t)e->a;
}

/* Load the trace held in buf (mapped: an mmap of n bytes, open.c; else
 * malloc'd), which t owns from here on, even on failure (tl_trace_free
 * releases it). Returns as tl_trace_read. */
tl_status_t tl_reader_load(const uint8_t *buf, size_t n, bool mapped, tl_trace_t *t, char *why,
                           size_t whylen);

/* Whether a record type is a MARK or lineage-family record (a LINEAGE event). */
bool tl_rec_is_lineage(unsigned type);

/* The pad bits of a device kind's ALLOC / FREE (aggregate.h). */
static inline uint16_t tl_device_pad(uint64_t kind, uint64_t device)
{
    unsigned dk = kind == TL_KIND_STORAGE_CUDA           ? TL_EV_DK_CUDA
                  : kind == TL_KIND_STORAGE_CUDA_SEGMENT ? TL_EV_DK_SEGMENT
                  : kind == TL_KIND_STORAGE_PINNED       ? TL_EV_DK_PINNED
                  : kind == TL_KIND_STORAGE_NUMPY        ? TL_EV_DK_NUMPY
                                                         : TL_EV_DK_NONE;
    if (dk == TL_EV_DK_NONE) return 0;
    return (uint16_t)(dk << 4 | (device > 255 ? 255u : (unsigned)device) << 8);
}

/* The events one decoded record makes at time ts: 0, 1 or 2 (a REALLOC's
 * RFREE, then its RALLOC). ALLOC and RALLOC events leave `site` 0 and put
 * the record's stack id in stack[i]; LINEAGE events leave `site` for the
 * caller (the lineage index). Sizes are as recorded (no sampling weight).
 * Inline: the stream makes it for every record (BENCHMARKS.md, W5). */
static inline int tl_rec_events(const tl_record_t *rec, uint64_t ts, tl_event_t ev[2],
                                uint64_t stack[2])
{
    int n = 0;
    stack[0] = stack[1] = 0;
    switch (rec->type) {
    case TL_REC_ALLOC:
        if (rec->u.alloc.ptr == 0) return 0; /* a failed allocation made no block */
        ev[0] = (tl_event_t){.ts = ts,
                             .type = TL_EV_ALLOC,
                             .ptr = rec->u.alloc.ptr,
                             .size = rec->u.alloc.size,
                             .storage = tl_kind_is_storage(rec->u.alloc.kind),
                             .pad = rec->u.alloc.kind == TL_KIND_NEW_FULL ? TL_EV_F_EXACT
                                    : rec->u.alloc.kind == TL_KIND_PYOBJECT
                                        ? TL_EV_F_OBJECT
                                        : tl_device_pad(rec->u.alloc.kind, rec->u.alloc.device)};
        stack[0] = rec->u.alloc.stack_id;
        return 1;
    case TL_REC_FREE:
        if (rec->u.free.ptr == 0) return 0;
        ev[0] = (tl_event_t){.ts = ts,
                             .type = TL_EV_FREE,
                             .ptr = rec->u.free.ptr,
                             .storage = tl_kind_is_storage(rec->u.free.kind),
                             .pad = rec->u.free.kind == TL_KIND_PYOBJECT
                                        ? TL_EV_F_OBJECT
                                        : tl_device_pad(rec->u.free.kind, rec->u.free.device)};
        return 1;
    case TL_REC_REALLOC:
        if (rec->u.realloc.old_ptr != 0)
            ev[n++] = (tl_event_t){.ts = ts, .type = TL_EV_RFREE, .ptr = rec->u.realloc.old_ptr};
        if (rec->u.realloc.new_ptr != 0) {
            ev[n] = (tl_event_t){.ts = ts,
                                 .type = TL_EV_RALLOC,
                                 .ptr = rec->u.realloc.new_ptr,
                                 .size = rec->u.realloc.size,
                                 .storage = rec->u.realloc.old_ptr != 0}; /* an RFREE precedes */
            stack[n++] = rec->u.realloc.stack_id;
        }
        return n;
    default:
        if (!tl_rec_is_lineage(rec->type)) return 0;
        ev[0] = (tl_event_t){.ts = ts, .type = TL_EV_LINEAGE};
        return 1;
    }
}

/* Give the chunk slot whose records start at data back to the kernel (its
 * pages stay in the page cache; a later pass faults them in again), so
 * resident memory stays that of the chunks being merged. No-op for a
 * copied buffer. */
void tl_trace_release(const tl_trace_t *t, const uint8_t *data);

#endif
