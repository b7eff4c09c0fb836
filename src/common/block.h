/* block.h - the packed block record (version 5, TL_REC_PACKED ..
 * TL_BLOCK_LAST; docs/trace-format.md, "Packed block records"): its one
 * encoder (tl_block_put) and its one decoder (tl_block_get), both inline.
 *
 * The agent appends it through writer.h's tl_writer_block_append (the
 * `all`-mode hooks' fast path and the writer's own ALLOC / FREE); the
 * report reads it through tl_rec_decode_block (trace_codec.c), the load's
 * skim (report/read/skim.h) and the stream (report/read/stream.c). A
 * change of the layout is a change of this file and of TL_TRACE_VERSION.
 * No calls, no allocation: safe inside the agent's malloc hooks.
 */
#ifndef TL_COMMON_BLOCK_H
#define TL_COMMON_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"
#include "common/varint.h"

/* Type byte: TL_REC_PACKED + kind (bits 0-1: 0-2 an ALLOC of that kind,
 * 3 a FREE of kind TL_KIND_FREE), + TL_BLOCK_TS0 when ts_delta is 0 and
 * left out. Then zigzag(ptr - the run's previous packed pointer) and, for
 * an ALLOC, size and stack_id (varints). */
#define TL_BLOCK_TS0  4u
#define TL_BLOCK_LAST (TL_REC_PACKED + 7)
#define TL_BLOCK_MAX  (1 + 4 * TL_VARINT_MAX) /* the longest record, bytes */

/* Is type (a record's first byte) a packed block record? */
static inline bool tl_block_is(uint8_t type)
{
    return type >= TL_REC_PACKED && type <= TL_BLOCK_LAST;
}

/* A varint at p, which has TL_VARINT_MAX bytes of room; returns its end. */
static inline __attribute__((always_inline)) uint8_t *tl_block_varint_at(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* Below 2^28 (nearly every pointer delta, size and stack id) without a
     * branch on the length, which varies from record to record (W1: the
     * loop's mispredicted exits were ~8% of `all` mode's time): the 7-bit
     * groups spread, continuation bits on all but the last byte, one 8-byte
     * store (the room is 10). */
    if (v < (UINT64_C(1) << 28)) {
        unsigned bits = 64u - (unsigned)__builtin_clzll(v | 1); /* 1..28 */
        unsigned len = (bits + 6) / 7;                          /* 1..4 */
        uint64_t x = (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f0000) |
                     ((v << 3) & 0x7f000000) | (UINT64_C(0x808080) >> (8 * (4 - len)));
        __builtin_memcpy(p, &x, sizeof x);
        return p + len;
    }
#endif
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* Encode the record of kind 0-3 (see above) at p, which has TL_BLOCK_MAX
 * bytes of room; ptr_delta = ptr - the run's previous packed pointer; size
 * and stack_id are ignored for a FREE. Returns its end. */
static inline __attribute__((always_inline)) uint8_t *tl_block_put(uint8_t *p, uint64_t ts_delta,
                                                                   unsigned kind,
                                                                   uint64_t ptr_delta,
                                                                   uint64_t size, uint64_t stack_id)
{
    *p++ = (uint8_t)(TL_REC_PACKED + kind + (ts_delta ? 0 : TL_BLOCK_TS0));
    if (ts_delta) p = tl_block_varint_at(p, ts_delta);
    p = tl_block_varint_at(p, tl_zigzag((int64_t)ptr_delta));
    if (kind != TL_KIND_FREE) {
        p = tl_block_varint_at(p, size);
        p = tl_block_varint_at(p, stack_id);
    }
    return p;
}

/* One decoded record. */
typedef struct tl_block {
    uint64_t ts_delta;
    uint64_t ptr;      /* the run's previous packed pointer + the delta; 0: no block */
    uint64_t size;     /* an ALLOC's bytes as requested; 0 for a FREE */
    uint64_t stack_id; /* an ALLOC's; 0 for a FREE */
    unsigned kind;     /* TL_KIND_MALLOC, _CALLOC, _MEMALIGN (ALLOC) or TL_KIND_FREE */
} tl_block_t;

/* Bytes at hand for tl_block_get's fast path: the longest record and the
 * word tl_varint8 reads from its last varint on. */
#define TL_BLOCK_SPAN (TL_BLOCK_MAX + 8)

/* A field of the fast path: the varint at *q (8 bytes at hand), *q stepped
 * past it; *ok cleared (*q not moved) when it is longer than 8 bytes. */
static inline __attribute__((always_inline)) uint64_t tl_block_field(const uint8_t **q, bool *ok)
{
    unsigned len;
    uint64_t v = tl_varint8(*q, &len);
    *q += len;
    *ok &= len != 0;
    return v;
}

/* Decode the record at p (tl_block_is(p[0])) of the n bytes at hand, prev
 * being the run's previous packed pointer (tl_rec_state_t; the caller
 * moves it to out->ptr). Returns its length, or 0 when a varint is
 * malformed or runs past the n bytes (*out is then partly written). Never
 * reads outside [p, p + n); untrusted bytes are fine. Inline: the report
 * decodes millions (BENCHMARKS.md, W5), and a caller that leaves a field
 * unused pays nothing for it. */
static inline __attribute__((always_inline)) size_t tl_block_get(const uint8_t *p, size_t n,
                                                                 uint64_t prev, tl_block_t *out)
{
    out->kind = p[0] & 3u;
    bool alloc = out->kind != TL_KIND_FREE, ok = true;
    if (n >= TL_BLOCK_SPAN) { /* all but a chunk's last records: no bound checks */
        const uint8_t *q = p + 1;
        out->ts_delta = p[0] & TL_BLOCK_TS0 ? 0 : tl_block_field(&q, &ok);
        out->ptr = prev + (uint64_t)tl_unzigzag(tl_block_field(&q, &ok));
        out->size = alloc ? tl_block_field(&q, &ok) : 0;
        out->stack_id = alloc ? tl_block_field(&q, &ok) : 0;
        if (ok) return (size_t)(q - p);
    }
    tl_rbuf_t r = {p + 1, p + n, false}; /* a varint over 8 bytes, the last bytes */
    out->ts_delta = p[0] & TL_BLOCK_TS0 ? 0 : tl_get_varint(&r);
    out->ptr = prev + (uint64_t)tl_unzigzag(tl_get_varint(&r));
    out->size = alloc ? tl_get_varint(&r) : 0;
    out->stack_id = alloc ? tl_get_varint(&r) : 0;
    return r.err ? 0 : (size_t)(r.p - p);
}

#endif /* TL_COMMON_BLOCK_H */
