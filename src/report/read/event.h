/* event.h - the report's event (tl_event_t), its flag bits, and the one
 * mapping from trace records to events (tl_event_block, tl_rec_events).
 *
 * The stream (stream.c) makes events of the records with it, the load
 * (reader.c, skim.h) counts what it would make, aggregate.c makes the
 * checkpoints' events with the same flags; the model and every analysis
 * read them (tl_events_next, reader.h). Header only, no calls out: every
 * reader of the read floor may include it.
 */
#ifndef TL_REPORT_EVENT_H
#define TL_REPORT_EVENT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/trace_format.h"

/* Event types after decoding. A REALLOC record becomes an RFREE of the old
 * pointer (if non-zero) immediately followed by an RALLOC of the new one (if
 * non-zero), both at the record's time. A MARK or lineage-family record
 * becomes a LINEAGE event whose `site` indexes tl_trace_t.lineage. */
enum { TL_EV_ALLOC = 1, TL_EV_FREE = 2, TL_EV_RFREE = 3, TL_EV_RALLOC = 4, TL_EV_LINEAGE = 5 };

/* One event: 32 bytes, so millions fit. */
typedef struct tl_event {
    uint64_t ts;     /* absolute CLOCK_MONOTONIC ns (chunk base_ts + deltas) */
    uint64_t ptr;    /* never 0, except for LINEAGE events (0 there) */
    uint64_t size;   /* bytes, for ALLOC / RALLOC */
    uint32_t site;   /* index into tl_trace_t.sites, for ALLOC / RALLOC;
                      * into tl_trace_t.lineage for LINEAGE */
    uint8_t type;    /* TL_EV_* */
    uint8_t storage; /* ALLOC / FREE: the record's kind is a storage kind;
                      * RALLOC: 1 when the RFREE of its old pointer precedes it */
    uint16_t pad;    /* TL_EV_F_* bits, and a device kind's TL_EV_DKIND / TL_EV_DEVICE */
} tl_event_t;

#define TL_EV_F_SAMPLED 1u /* tl_event_t.pad: the size is an estimate (stream.c) */
#define TL_EV_F_EXACT   2u /* tl_event_t.pad: recorded in full though small (TL_KIND_NEW_FULL) */
#define TL_EV_F_OBJECT  4u /* tl_event_t.pad: a Python object's ALLOC / FREE (TL_KIND_PYOBJECT) */
/* tl_event_t.pad of an ALLOC / FREE of a device kind (trace v3) or of
 * numpy's handler (TL_KIND_STORAGE_NUMPY, host memory): bits 4-7 the kind
 * (TL_EV_DK_*), bits 8-15 the device (TL_DEVICE_* of the trace, capped at
 * 255). */
enum {
    TL_EV_DK_NONE = 0,
    TL_EV_DK_CUDA = 1,
    TL_EV_DK_SEGMENT = 2,
    TL_EV_DK_PINNED = 3,
    TL_EV_DK_NUMPY = 4,
};
#define TL_EV_DKIND(pad)  (((unsigned)(pad) >> 4) & 0xfu)
#define TL_EV_DEVICE(pad) (((unsigned)(pad) >> 8) & 0xffu)

/* The pad bits of a device kind's ALLOC / FREE (or numpy's): 0 for
 * other kinds. device as TL_DEVICE_*. */
static inline uint16_t tl_event_device_pad(uint64_t kind, uint64_t device)
{
    unsigned dk = kind == TL_KIND_STORAGE_CUDA           ? TL_EV_DK_CUDA
                  : kind == TL_KIND_STORAGE_CUDA_SEGMENT ? TL_EV_DK_SEGMENT
                  : kind == TL_KIND_STORAGE_PINNED       ? TL_EV_DK_PINNED
                  : kind == TL_KIND_STORAGE_NUMPY        ? TL_EV_DK_NUMPY
                                                         : TL_EV_DK_NONE;
    if (dk == TL_EV_DK_NONE) return 0;
    return (uint16_t)(dk << 4 | (device > 255 ? 255u : (unsigned)device) << 8);
}

/* The event an ALLOC (is_free false: size bytes) or FREE record of kind
 * (TL_KIND_*) at ptr makes at time ts, into *ev: returns 1, or 0 (nothing
 * made) for a zero pointer, a failed allocation. `site` is left 0 (the
 * stream resolves the record's stack id). The one place that says which
 * kinds are storages and which pad bits a kind gets; inline, so that a
 * caller that knows the kind (a packed record's are plain blocks) pays for
 * none of it. */
static inline __attribute__((always_inline)) int tl_event_block(tl_event_t *ev, uint64_t ts,
                                                                bool is_free, uint64_t kind,
                                                                uint64_t ptr, uint64_t size,
                                                                uint64_t device)
{
    if (ptr == 0) return 0;
    uint16_t pad = kind == TL_KIND_PYOBJECT               ? TL_EV_F_OBJECT
                   : !is_free && kind == TL_KIND_NEW_FULL ? TL_EV_F_EXACT
                                                          : tl_event_device_pad(kind, device);
    *ev = (tl_event_t){.ts = ts,
                       .type = is_free ? TL_EV_FREE : TL_EV_ALLOC,
                       .ptr = ptr,
                       .size = is_free ? 0 : size,
                       .storage = tl_kind_is_storage(kind),
                       .pad = pad};
    return 1;
}

/* Whether a record type is a MARK or lineage-family record (a LINEAGE event). */
static inline bool tl_rec_is_lineage(unsigned type)
{
    switch (type) {
    case TL_REC_MARK:
    case TL_REC_STORAGE_REG:
    case TL_REC_STORAGE_UNREG:
    case TL_REC_VIEW_BEGIN:
    case TL_REC_VIEW_END:
    case TL_REC_COPY:
    case TL_REC_TAG:
    case TL_REC_SNAP_HOLD:
    case TL_REC_SNAP_VIEW:
    case TL_REC_FINGERPRINT:
    case TL_REC_ORIGIN:
    case TL_REC_REGION_BEGIN:
    case TL_REC_REGION_END:
    case TL_REC_NOTE:
    case TL_REC_SNAP_WHY:
        return true;
    default:
        return false;
    }
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
        stack[0] = rec->u.alloc.stack_id;
        return tl_event_block(&ev[0], ts, false, rec->u.alloc.kind, rec->u.alloc.ptr,
                              rec->u.alloc.size, rec->u.alloc.device);
    case TL_REC_FREE:
        return tl_event_block(&ev[0], ts, true, rec->u.free.kind, rec->u.free.ptr, 0,
                              rec->u.free.device);
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

#endif /* TL_REPORT_EVENT_H */
