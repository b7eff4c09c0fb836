/* skim.h - the load's reading of a block record (ALLOC, FREE, REALLOC):
 * only what the load keeps of one (reader.c: its time delta, the kind it
 * counts, whether it makes events, the stack ids it interns), not the
 * event itself, which the stream decodes on every pass (stream.c).
 *
 * The load reads every record of the trace before the model's pass reads
 * them again, and block records are nearly all of them: skimming them,
 * the pointers and sizes skipped rather than decoded, took the load from
 * a fifth of W1's report to (BENCHMARKS.md, W5). It follows the layout of
 * tl_rec_decode_block (common/trace_codec.c) and accepts exactly the
 * records it accepts: a varint longer than 8 bytes, or a record near the
 * end of the bytes at hand, is read by tl_rec_decode_block itself
 * (tests/unit/test_report.c compares the two on every kind and length).
 */
#ifndef TL_REPORT_SKIM_H
#define TL_REPORT_SKIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/trace_format.h"

/* What the load keeps of a block record. */
typedef struct tl_skim {
    uint64_t ts_delta;
    uint64_t kind;     /* ALLOC: the record's kind (TL_KIND_*); else 0 */
    uint64_t stack[2]; /* stack ids of its ALLOC / RALLOC events */
    uint8_t nevents;   /* as tl_rec_events makes: 0, 1 or 2 */
    bool alloc[2];     /* event i is an ALLOC or RALLOC (its stack id in stack[i]) */
} tl_skim_t;

/* Bytes a record needs at hand for the fast path: its type and at most 7
 * varints of up to 8 bytes each, plus the word read past the last one. */
#define TL_SKIM_SPAN 72

/* The varint at *q, of at most 8 bytes: steps *q past it and returns
 * true, with *zero telling whether its value is 0; false (nothing moved)
 * when it is longer. *q has 8 bytes at hand. */
static inline bool tl_skim_skip(const uint8_t **q, bool *zero)
{
    uint64_t x;
    memcpy(&x, *q, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    uint64_t stop = ~x & 0x8080808080808080ull;
    if (!stop) return false;
    unsigned len = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;
    if (zero) *zero = (x & (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full) == 0;
    *q += len;
    return true;
}

/* Skim the record at p[0, n): its length, *out filled; 0 when it is not a
 * block record; -1 when tl_rec_decode_block would fail on it. rec: scratch
 * for the records the fast path leaves to tl_rec_decode_block. */
static inline long tl_rec_skim_block(const uint8_t *p, size_t n, tl_record_t *rec, tl_skim_t *out)
{
    if (n == 0 || (p[0] != TL_REC_ALLOC && p[0] != TL_REC_FREE && p[0] != TL_REC_REALLOC)) return 0;
    out->kind = 0;
    out->alloc[0] = out->alloc[1] = false;
    if (n >= TL_SKIM_SPAN) {
        tl_rbuf_t r = {p + 1, p + n, false};
        const uint8_t *q;
        bool z0, z1;
        out->ts_delta = tl_get_varint(&r);
        switch (p[0]) {
        case TL_REC_ALLOC: {
            uint64_t kind = tl_get_varint(&r);
            if (!tl_kind_known(kind)) return -1;
            q = r.p;
            if (!tl_skim_skip(&q, &z0) || !tl_skim_skip(&q, NULL)) break; /* ptr, size */
            r.p = q;
            out->kind = kind;
            out->stack[0] = tl_get_varint(&r);
            if (tl_kind_has_device(kind)) {
                q = r.p;
                if (!tl_skim_skip(&q, NULL) || !tl_skim_skip(&q, NULL)) break; /* device, stream */
                r.p = q;
            }
            if (r.err) break;
            out->nevents = !z0;
            out->alloc[0] = !z0;
            return (long)(r.p - p);
        }
        case TL_REC_FREE: {
            uint64_t kind = tl_get_varint(&r);
            if (!tl_kind_known(kind)) return -1;
            q = r.p;
            if (!tl_skim_skip(&q, &z0)) break;                              /* ptr */
            if (tl_kind_has_device(kind) && !tl_skim_skip(&q, NULL)) break; /* device */
            if (r.err) break;
            out->nevents = !z0;
            return (long)(q - p);
        }
        default: /* TL_REC_REALLOC */
            q = r.p;
            if (!tl_skim_skip(&q, &z0) || !tl_skim_skip(&q, &z1) || !tl_skim_skip(&q, NULL))
                break; /* old_ptr, new_ptr, size */
            r.p = q;
            uint64_t stack = tl_get_varint(&r);
            if (r.err) break;
            out->nevents = (uint8_t)(!z0 + !z1);
            out->stack[!z0] = stack;
            out->alloc[!z0] = !z1;
            return (long)(r.p - p);
        }
    }
    long used = tl_rec_decode_block(p, n, rec); /* long varints, the chunk's last bytes */
    if (used <= 0) return used;
    out->ts_delta = rec->ts_delta;
    out->nevents = 0;
    switch (rec->type) {
    case TL_REC_ALLOC:
        out->kind = rec->u.alloc.kind;
        if (rec->u.alloc.ptr) {
            out->nevents = 1;
            out->alloc[0] = true;
            out->stack[0] = rec->u.alloc.stack_id;
        }
        break;
    case TL_REC_FREE:
        out->nevents = rec->u.free.ptr != 0;
        break;
    default:
        out->nevents = (uint8_t)((rec->u.realloc.old_ptr != 0) + (rec->u.realloc.new_ptr != 0));
        out->stack[rec->u.realloc.old_ptr != 0] = rec->u.realloc.stack_id;
        out->alloc[rec->u.realloc.old_ptr != 0] = rec->u.realloc.new_ptr != 0;
        break;
    }
    return used;
}

#endif
