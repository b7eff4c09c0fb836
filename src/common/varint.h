/* varint.h - LEB128 varints and zigzag, the integer encoding of trace records.
 *
 * Shared by the agent (encoding, hot path: no calls, no allocation) and the
 * reader (decoding untrusted bytes: every read is bounds-checked).
 */
#ifndef TL_VARINT_H
#define TL_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Longest encoding of a uint64_t: ceil(64 / 7) bytes. */
#define TL_VARINT_MAX 10

/* Cursor for encoding into [p, end). Writes past end set overflow and are
 * dropped, so a caller checks overflow once after a whole record. */
typedef struct tl_wbuf {
    uint8_t *p;
    uint8_t *end;
    bool overflow;
} tl_wbuf_t;

/* Cursor for decoding [p, end). A read past end, or a varint longer than
 * TL_VARINT_MAX bytes, sets err and yields 0. */
typedef struct tl_rbuf {
    const uint8_t *p;
    const uint8_t *end;
    bool err;
} tl_rbuf_t;

static inline uint64_t tl_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t tl_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline void tl_put_u8(tl_wbuf_t *w, uint8_t v)
{
    if (w->p < w->end)
        *w->p++ = v;
    else
        w->overflow = true;
}

static inline void tl_put_varint(tl_wbuf_t *w, uint64_t v)
{
    while (v >= 0x80) {
        tl_put_u8(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    tl_put_u8(w, (uint8_t)v);
}

/* Length-prefixed bytes (varint length, then the bytes). */
static inline void tl_put_bytes(tl_wbuf_t *w, const void *s, size_t n)
{
    tl_put_varint(w, n);
    if ((size_t)(w->end - w->p) < n) {
        w->overflow = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        w->p[i] = ((const uint8_t *)s)[i];
    w->p += n;
}

static inline uint8_t tl_get_u8(tl_rbuf_t *r)
{
    if (r->p >= r->end) {
        r->err = true;
        return 0;
    }
    return *r->p++;
}

/* The varint at q, of at most 8 bytes (56 bits: sizes, pointers, ids),
 * with 8 bytes at hand: read as one word, without a bound check or a
 * branch per byte. Its value, *len its length; *len 0 (value 0) when it is
 * longer. The fast path of tl_get_varint and of common/block.h. */
static inline __attribute__((always_inline)) uint64_t tl_varint8(const uint8_t *q, unsigned *len)
{
    *len = 1;
    if (q[0] < 0x80) return q[0]; /* most deltas, kinds, small sizes */
    uint64_t x;
    memcpy(&x, q, sizeof x);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    uint64_t stop = ~x & 0x8080808080808080ull; /* the top bit of each last byte */
    *len = stop ? ((unsigned)__builtin_ctzll(stop) >> 3) + 1 : 0;
    x &= (stop ^ (stop - 1)) & 0x7f7f7f7f7f7f7f7full; /* its bytes, up to the last */
    x = (x & 0x007f007f007f007full) | ((x & 0x7f007f007f007f00ull) >> 1);
    x = (x & 0x00003fff00003fffull) | ((x & 0x3fff00003fff0000ull) >> 2);
    x = (x & 0x000000000fffffffull) | ((x & 0x0fffffff00000000ull) >> 4);
    return stop ? x : 0;
}

static inline uint64_t tl_get_varint(tl_rbuf_t *r)
{
    /* The report decodes every record of a trace, millions (docs/internals.md,
     * "Memory"): with 8 bytes left, tl_varint8; longer varints and the
     * file's last bytes take the loop. */
    if (r->end - r->p >= 8) {
        unsigned len;
        uint64_t x = tl_varint8(r->p, &len);
        if (len) {
            r->p += len;
            return x;
        }
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 7 * TL_VARINT_MAX; shift += 7) {
        if (r->p >= r->end) {
            r->err = true;
            return 0;
        }
        uint8_t b = *r->p++;
        if (shift == 63 && b > 1) { /* would overflow 64 bits */
            r->err = true;
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    r->err = true;
    return 0;
}

/* Length-prefixed bytes; *n receives the length, the result points into the
 * buffer (not NUL-terminated). NULL with err set when the length overruns. */
static inline const uint8_t *tl_get_bytes(tl_rbuf_t *r, size_t *n)
{
    uint64_t len = tl_get_varint(r);
    if (r->err || len > (uint64_t)(r->end - r->p)) {
        r->err = true;
        *n = 0;
        return NULL;
    }
    const uint8_t *s = r->p;
    r->p += len;
    *n = (size_t)len;
    return s;
}

/* Fixed-width little-endian fields of the file and chunk headers. */
static inline void tl_store_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void tl_store_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t tl_load_le32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static inline uint64_t tl_load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

#endif /* TL_VARINT_H */
