/* skim.h - the load's reading of a block record (ALLOC, FREE, REALLOC):
 * only what the load keeps of one (reader.c: its time delta, the kind it
 * counts, whether it makes events, the stack ids it interns), not the
 * event itself, which the stream decodes on every pass (stream.c).
 *
 * The load reads every record of the trace before the model's pass reads
 * them again, and block records are nearly all of them: decoding them in
 * full was a fifth of W1's report (BENCHMARKS.md, W5). A packed record is
 * decoded by common/block.h's one decoder (its pointer is needed: the next
 * one is its delta; the size it leaves unused costs nothing inline), and
 * counted by event.h's mapping. In an unpacked ALLOC, FREE or REALLOC,
 * pointers and sizes are skipped, not decoded, and the common ALLOC and
 * FREE find where their fields end from one mask (tl_skim_common); a
 * varint longer than 8 bytes, or a record near the end of the bytes at
 * hand, is read by tl_rec_decode_block (common/trace_codec.c) and counted
 * by the mapping. So it accepts exactly the records tl_rec_decode_block
 * accepts (tests/unit/test_report.c compares the two on every kind and
 * field length, and on random bytes). A change of the unpacked block
 * records' encoding changes this file too.
 */
#ifndef TL_REPORT_SKIM_H
#define TL_REPORT_SKIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/block.h"
#include "common/trace_format.h"
#include "report/read/event.h"

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

/* Bit i set: byte i of the 16 at q ends a varint (its top bit is clear).
 * q has 16 bytes at hand. */
static inline uint32_t tl_skim_stops16(const uint8_t *q)
{
    uint64_t a, b;
    memcpy(&a, q, sizeof a);
    memcpy(&b, q + 8, sizeof b);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    a = __builtin_bswap64(a);
    b = __builtin_bswap64(b);
#endif
    a = (~a >> 7) & 0x0101010101010101ull; /* bit 8i: byte i stops */
    b = (~b >> 7) & 0x0101010101010101ull;
    const uint64_t gather = 0x0102040810204080ull; /* bit 8i to bit 56 + i */
    return (uint32_t)((a * gather) >> 56) | (uint32_t)((b * gather) >> 56) << 8;
}

/* Whether the len (1 to 8) bytes at q are a varint of value 0. */
static inline bool tl_skim_zero(const uint8_t *q, unsigned len)
{
    uint64_t x;
    memcpy(&x, q, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    uint64_t keep = len >= 8 ? ~0ull : (1ull << (8 * len)) - 1;
    return (x & keep & 0x7f7f7f7f7f7f7f7full) == 0;
}

/* The common ALLOC and FREE (a host kind, a one-byte time delta and kind,
 * fields of at most 8 bytes): where every field ends is read off one mask
 * of the bytes after the kind, so that a record's length does not wait on
 * its fields one after another (the load is bound by that chain). 0 when
 * the record is not one of them. p has TL_SKIM_SPAN bytes at hand. */
static inline long tl_skim_common(const uint8_t *p, tl_skim_t *out)
{
    if (p[1] >= 0x80 || p[2] >= 0x80) return 0;
    uint64_t kind = p[2];
    if (!tl_kind_known(kind)) return -1;
    if (tl_kind_has_device(kind)) return 0;
    uint32_t stop = tl_skim_stops16(p + 3);
    if (!stop) return 0;
    unsigned e0 = (unsigned)__builtin_ctz(stop); /* the pointer's last byte */
    if (e0 > 7) return 0;
    bool zero = tl_skim_zero(p + 3, e0 + 1);
    out->ts_delta = p[1];
    if (p[0] == TL_REC_FREE) {
        out->nevents = !zero;
        return (long)(3 + e0 + 1);
    }
    uint32_t s1 = stop & (stop - 1), s2 = s1 & (s1 - 1);
    if (!s2) return 0;
    unsigned e1 = (unsigned)__builtin_ctz(s1), e2 = (unsigned)__builtin_ctz(s2); /* size, stack */
    if (e1 - e0 > 8 || e2 - e1 > 8) return 0;
    tl_rbuf_t r = {p + 3 + e1 + 1, p + TL_SKIM_SPAN, false};
    out->kind = kind;
    out->stack[0] = tl_get_varint(&r);
    out->nevents = !zero;
    out->alloc[0] = !zero;
    return (long)(3 + e2 + 1);
}

/* A packed record (common/block.h; the bulk of an `all`-mode trace) at p,
 * of the n bytes at hand: decoded in full by block.h's decoder (its
 * pointer is a delta of the run's last one), counted by event.h's
 * mapping; st updated. -1 when it is malformed (st untouched). */
static inline long tl_skim_packed(const uint8_t *p, size_t n, tl_skim_t *out, tl_rec_state_t *st)
{
    tl_block_t b;
    size_t used = tl_block_get(p, n, st->ptr, &b);
    if (!used) return -1;
    tl_event_t ev;
    out->ts_delta = b.ts_delta;
    out->nevents = (uint8_t)tl_event_block(&ev, 0, b.kind == TL_KIND_FREE, b.kind, b.ptr, 0, 0);
    out->alloc[0] = out->nevents && ev.type == TL_EV_ALLOC;
    out->alloc[1] = false;
    out->kind = b.kind == TL_KIND_FREE ? 0 : b.kind;
    out->stack[0] = b.stack_id;
    st->ptr = b.ptr;
    return (long)used;
}

/* An unpacked ALLOC, FREE or REALLOC with TL_SKIM_SPAN bytes at hand,
 * its pointers and sizes skipped, not decoded. 0 when a varint is longer
 * than 8 bytes (tl_rec_decode_block then reads it); -1 for an unknown kind. */
static inline long tl_skim_full(const uint8_t *p, tl_skim_t *out)
{
    if (p[0] != TL_REC_REALLOC) {
        long used = tl_skim_common(p, out);
        if (used) return used;
    }
    tl_rbuf_t r = {p + 1, p + TL_SKIM_SPAN, false};
    const uint8_t *q;
    bool z0, z1;
    out->ts_delta = tl_get_varint(&r);
    switch (p[0]) {
    case TL_REC_ALLOC: {
        uint64_t kind = tl_get_varint(&r);
        if (!tl_kind_known(kind)) return -1;
        q = r.p;
        if (!tl_skim_skip(&q, &z0) || !tl_skim_skip(&q, NULL)) return 0; /* ptr, size */
        r.p = q;
        out->kind = kind;
        out->stack[0] = tl_get_varint(&r);
        if (tl_kind_has_device(kind)) {
            q = r.p;
            if (!tl_skim_skip(&q, NULL) || !tl_skim_skip(&q, NULL)) return 0; /* device, stream */
            r.p = q;
        }
        if (r.err) return 0;
        out->nevents = !z0;
        out->alloc[0] = !z0;
        return (long)(r.p - p);
    }
    case TL_REC_FREE: {
        uint64_t kind = tl_get_varint(&r);
        if (!tl_kind_known(kind)) return -1;
        q = r.p;
        if (!tl_skim_skip(&q, &z0)) return 0;                              /* ptr */
        if (tl_kind_has_device(kind) && !tl_skim_skip(&q, NULL)) return 0; /* device */
        if (r.err) return 0;
        out->nevents = !z0;
        return (long)(q - p);
    }
    default: /* TL_REC_REALLOC */
        q = r.p;
        if (!tl_skim_skip(&q, &z0) || !tl_skim_skip(&q, &z1) || !tl_skim_skip(&q, NULL))
            return 0; /* old_ptr, new_ptr, size */
        r.p = q;
        uint64_t stack = tl_get_varint(&r);
        if (r.err) return 0;
        out->nevents = (uint8_t)(!z0 + !z1);
        out->stack[!z0] = stack;
        out->alloc[!z0] = !z1;
        return (long)(r.p - p);
    }
}

/* What the load keeps of a decoded block record: the events event.h's
 * mapping makes of it, counted. */
static inline void tl_skim_record(const tl_record_t *rec, tl_skim_t *out)
{
    tl_event_t ev[2];
    int n = tl_rec_events(rec, 0, ev, out->stack);
    out->ts_delta = rec->ts_delta;
    out->kind = rec->type == TL_REC_ALLOC ? rec->u.alloc.kind : 0;
    out->nevents = (uint8_t)n;
    for (int i = 0; i < n; i++)
        out->alloc[i] = ev[i].type == TL_EV_ALLOC || ev[i].type == TL_EV_RALLOC;
}

/* Skim the record at p[0, n): its length, *out filled; 0 when it is not a
 * block record; -1 when tl_rec_decode_block would fail on it. rec: scratch
 * for the records the fast path leaves to tl_rec_decode_block (long
 * varints, the chunk's last bytes). st: the run's state (tl_rec_state_t),
 * which packed records read and update; NULL fails them as
 * tl_rec_decode_block does. */
static inline long tl_rec_skim_block(const uint8_t *p, size_t n, tl_record_t *rec, tl_skim_t *out,
                                     tl_rec_state_t *st)
{
    if (n == 0) return 0;
    if (tl_block_is(p[0])) return st ? tl_skim_packed(p, n, out, st) : -1;
    if (p[0] != TL_REC_ALLOC && p[0] != TL_REC_FREE && p[0] != TL_REC_REALLOC) return 0;
    out->kind = 0;
    out->alloc[0] = out->alloc[1] = false;
    if (n >= TL_SKIM_SPAN) {
        long used = tl_skim_full(p, out);
        if (used) return used;
        out->kind = 0;
        out->alloc[0] = out->alloc[1] = false;
    }
    long used = tl_rec_decode_block(p, n, rec, st);
    if (used > 0) tl_skim_record(rec, out);
    return used;
}

#endif
