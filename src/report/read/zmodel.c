/* zmodel.c - the block model of a compressed chunk (see zmodel.h).
 *
 * A model is: a version byte (1), the byte lengths of its S_COUNT streams
 * (varints), then the streams one after the other:
 *   op     a byte per record: a packed record's type byte, or 0 for any
 *          other record (copied as it is);
 *   ts     the ts_delta varint of each packed record without TL_BLOCK_TS0;
 *   age    per packed FREE: 0, or how many ALLOCs of the chunk back (1 =
 *          the last) allocated the block it frees;
 *   aidx   per packed ALLOC: 0, or which of the chunk's FREEs whose address
 *          no later ALLOC took yet, counted back (1 = the last, at most
 *          WINDOW), freed the address it gets (a FREE so named is taken);
 *   ptrd   the pointer delta varint (common/block.h) of the records whose
 *          age or aidx is 0;
 *   size, stack  each packed ALLOC's varints;
 *   len    the length of each record copied as it is (op 0);
 *   raw    the chunk header, then the records copied as they are.
 * The packed records are made again with common/block.h's encoder.
 */
#include "report/read/zmodel.h"

#include <stdlib.h>
#include <string.h>

#include "common/block.h"
#include "common/trace_format.h"

enum { S_OP, S_TS, S_AGE, S_AIDX, S_PTRD, S_SIZE, S_STACK, S_LEN, S_RAW, S_COUNT };

#define MODEL_VERSION 1u
/* The recent frees an ALLOC's address is looked for among: W1 (4 sites,
 * 8-4096 B, a ring of 1024 blocks) compresses to 2.93 B an event at 32,
 * 2.65 at 255 (BENCHMARKS.md, "the block model"). */
#define WINDOW 255u
#define NONE   UINT32_MAX

/* Room for a slot of n bytes: a record takes 2 bytes or more. true when
 * out of memory. */
static bool grow(tl_zmodel_t *m, size_t n)
{
    size_t recs = n / 2 + 1;
    if (recs <= m->cap) return false;
    uint64_t *a = realloc(m->allocs, recs * sizeof *a);
    if (a) m->allocs = a;
    uint64_t *f = a ? realloc(m->frees, recs * sizeof *f) : NULL;
    if (f) m->frees = f;
    uint8_t *t = f ? realloc(m->taken, recs) : NULL;
    if (t) m->taken = t;
    uint32_t *l = t ? realloc(m->list, recs * sizeof *l) : NULL;
    if (!l) return true;
    m->list = l;
    m->cap = recs;
    return false;
}

/* The map's slots for cap entries, the streams and the check copy of a
 * slot of n bytes, the frames scratch (grow first). true when out of
 * memory. */
static bool grow_encoder(tl_zmodel_t *m, size_t n)
{
    size_t slots = 16;
    while (slots < 2 * m->cap)
        slots *= 2;
    if (slots > m->slots) {
        free(m->keys), free(m->at), free(m->gens);
        m->keys = malloc(slots * sizeof *m->keys);
        m->at = malloc(slots * sizeof *m->at);
        m->gens = calloc(slots, sizeof *m->gens);
        m->slots = m->keys && m->at && m->gens ? slots : 0;
        m->gen = 0;
        if (!m->slots) return true;
    }
    size_t sc = S_COUNT * (2 * n + 16);
    if (sc > m->streams_cap) {
        free(m->streams);
        m->streams = malloc(sc);
        m->streams_cap = m->streams ? sc : 0;
        if (!m->streams) return true;
    }
    if (n > m->check_cap) {
        free(m->check);
        m->check = malloc(n);
        m->check_cap = m->check ? n : 0;
        if (!m->check) return true;
    }
    if (!m->frames) m->frames = malloc(TL_REC_MAX_FRAMES * sizeof *m->frames);
    return !m->frames;
}

/* A new chunk: no blocks, no FREEs. */
static void start(tl_zmodel_t *m)
{
    m->untaken = 0;
}

/* A FREE of ptr, the nf-th of the chunk: the newest untaken one. */
static void free_add(tl_zmodel_t *m, size_t nf, uint64_t ptr)
{
    m->frees[nf] = ptr;
    m->taken[nf] = 0;
    m->list[m->untaken++] = (uint32_t)nf;
}

/* The untaken FREE back places from the newest (1: the newest) taken by an
 * ALLOC, out of the list (the memmove is short: back <= WINDOW); its index. */
static uint32_t free_take(tl_zmodel_t *m, uint64_t back)
{
    size_t k = m->untaken - back;
    uint32_t j = m->list[k];
    memmove(m->list + k, m->list + k + 1, (back - 1) * sizeof *m->list);
    m->untaken--;
    m->taken[j] = 1;
    return j;
}

/* How many places from the newest untaken FREE j is (1: the newest), 0
 * when more than WINDOW. */
static uint64_t back_of(const tl_zmodel_t *m, uint32_t j)
{
    for (uint64_t d = 1; d <= WINDOW && d <= m->untaken; d++)
        if (m->list[m->untaken - d] == j) return d;
    return 0;
}

static size_t home(const tl_zmodel_t *m, uint64_t ptr)
{
    return (size_t)(((ptr >> 4) * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (m->slots - 1);
}

/* The encoder's map: ptr -> its slot, made when absent (then no ALLOC and
 * no FREE of it yet: NONE). */
static size_t map_slot(tl_zmodel_t *m, uint64_t ptr)
{
    size_t i = home(m, ptr);
    while (m->gens[i] == m->gen && m->keys[i] != ptr)
        i = (i + 1) & (m->slots - 1);
    if (m->gens[i] != m->gen) {
        m->gens[i] = m->gen, m->keys[i] = ptr;
        m->at[i][0] = m->at[i][1] = NONE;
    }
    return i;
}

/* n bytes at p onto w (overflow set when they do not fit). */
static void put_run(tl_wbuf_t *w, const uint8_t *p, size_t n)
{
    if ((size_t)(w->end - w->p) < n) {
        w->overflow = true;
        return;
    }
    memcpy(w->p, p, n);
    w->p += n;
}

/* One packed record's fields into the streams. */
static void put_block(tl_zmodel_t *m, tl_wbuf_t *s, uint8_t type, const tl_block_t *b,
                      uint64_t prev, size_t *na, size_t *nf)
{
    tl_put_u8(&s[S_OP], type);
    if (!(type & TL_BLOCK_TS0)) tl_put_varint(&s[S_TS], b->ts_delta);
    size_t slot = map_slot(m, b->ptr);
    uint32_t *at = m->at[slot]; /* the latest ALLOC and FREE of b->ptr */
    uint64_t back = 0;
    if (b->kind == TL_KIND_FREE) {
        back = at[0] == NONE ? 0 : *na - at[0];
        tl_put_varint(&s[S_AGE], back);
        at[1] = (uint32_t)*nf;
        free_add(m, (*nf)++, b->ptr);
    } else {
        if (at[1] != NONE && !m->taken[at[1]] && (back = back_of(m, at[1])) != 0)
            free_take(m, back);
        tl_put_u8(&s[S_AIDX], (uint8_t)back);
        tl_put_varint(&s[S_SIZE], b->size);
        tl_put_varint(&s[S_STACK], b->stack_id);
        at[0] = (uint32_t)*na;
        m->allocs[(*na)++] = b->ptr;
    }
    if (!back) tl_put_varint(&s[S_PTRD], tl_zigzag((int64_t)(b->ptr - prev)));
}

/* The records [p, end) into the streams s. */
static void put_records(tl_zmodel_t *m, tl_wbuf_t *s, const uint8_t *p, const uint8_t *end)
{
    tl_rec_state_t st = {0};
    size_t na = 0, nf = 0;
    while (p < end) {
        size_t left = (size_t)(end - p);
        tl_block_t b;
        size_t used = tl_block_is(p[0]) ? tl_block_get(p, left, st.ptr, &b) : 0;
        if (used) {
            put_block(m, s, p[0], &b, st.ptr, &na, &nf);
            st.ptr = b.ptr;
        } else {
            tl_record_t rec;
            long r = tl_block_is(p[0]) ? -1
                     : p[0] == TL_REC_STACK || p[0] == TL_REC_STACK_DELTA
                         ? tl_rec_step_stack(p, left, &rec) /* no frames decoded */
                         : tl_rec_decode(p, left, &rec, m->frames, &st);
            used = r > 0 ? (size_t)r : left; /* a bad record: the rest as it is */
            tl_put_u8(&s[S_OP], 0);
            tl_put_varint(&s[S_LEN], used);
            put_run(&s[S_RAW], p, used);
        }
        p += used;
    }
}

size_t tl_zmodel_encode(tl_zmodel_t *m, const uint8_t *p, size_t n, uint8_t *out)
{
    if (n < TL_CHUNK_HEADER_BYTES || grow(m, n) || grow_encoder(m, n)) return 0;
    start(m);
    if (++m->gen == 0) { /* wrapped: every slot looks written by this chunk */
        memset(m->gens, 0, m->slots * sizeof *m->gens);
        m->gen = 1;
    }
    tl_wbuf_t s[S_COUNT];
    size_t each = 2 * n + 16;
    for (unsigned i = 0; i < S_COUNT; i++)
        s[i] = (tl_wbuf_t){m->streams + i * each, m->streams + (i + 1) * each, false};
    put_run(&s[S_RAW], p, TL_CHUNK_HEADER_BYTES);
    put_records(m, s, p + TL_CHUNK_HEADER_BYTES, p + n);
    tl_wbuf_t w = {out, out + tl_zmodel_cap(n), false};
    tl_put_u8(&w, MODEL_VERSION);
    for (unsigned i = 0; i < S_COUNT; i++) {
        if (s[i].overflow) return 0;
        tl_put_varint(&w, (size_t)(s[i].p - (m->streams + i * each)));
    }
    for (unsigned i = 0; i < S_COUNT; i++)
        put_run(&w, m->streams + i * each, (size_t)(s[i].p - (m->streams + i * each)));
    size_t len = (size_t)(w.p - out);
    if (w.overflow || tl_zmodel_decode(m, out, len, m->check, n) || memcmp(m->check, p, n))
        return 0;
    return len;
}

/* Copy k bytes of stream r to *o (below end). true on failure. */
static bool copy(tl_rbuf_t *r, uint8_t **o, const uint8_t *end, uint64_t k)
{
    if (k > (uint64_t)(r->end - r->p) || k > (uint64_t)(end - *o)) return true;
    memcpy(*o, r->p, (size_t)k);
    r->p += k, *o += k;
    return false;
}

/* The decoder's place: its streams, what it wrote, the chunk's blocks. */
typedef struct zin {
    tl_rbuf_t s[S_COUNT];
    uint8_t *o, *end;
    uint64_t prev;
    size_t na, nf;
} zin_t;

/* The packed record of type byte op, made again at d->o. true on failure. */
static bool get_block(tl_zmodel_t *m, zin_t *d, uint8_t op)
{
    tl_block_t b = {.kind = op & 3u};
    b.ts_delta = op & TL_BLOCK_TS0 ? 0 : tl_get_varint(&d->s[S_TS]);
    uint64_t back;
    if (b.kind == TL_KIND_FREE) {
        back = tl_get_varint(&d->s[S_AGE]);
        if (back > d->na || d->nf >= m->cap) return true;
        b.ptr = back ? m->allocs[d->na - back] : 0;
    } else {
        back = tl_get_u8(&d->s[S_AIDX]);
        if (back > WINDOW || back > m->untaken || d->na >= m->cap) return true;
        if (back) b.ptr = m->frees[free_take(m, back)];
        b.size = tl_get_varint(&d->s[S_SIZE]);
        b.stack_id = tl_get_varint(&d->s[S_STACK]);
    }
    if (!back) b.ptr = d->prev + (uint64_t)tl_unzigzag(tl_get_varint(&d->s[S_PTRD]));
    if (b.kind == TL_KIND_FREE)
        free_add(m, d->nf++, b.ptr);
    else
        m->allocs[d->na++] = b.ptr;
    uint64_t delta = b.ptr - d->prev;
    d->prev = b.ptr;
    if (d->end - d->o >= (ptrdiff_t)TL_BLOCK_MAX) { /* the encoder's room */
        d->o = tl_block_put(d->o, b.ts_delta, b.kind, delta, b.size, b.stack_id);
        return false;
    }
    uint8_t tmp[TL_BLOCK_MAX];
    size_t len = (size_t)(tl_block_put(tmp, b.ts_delta, b.kind, delta, b.size, b.stack_id) - tmp);
    tl_rbuf_t r = {tmp, tmp + len, false};
    return copy(&r, &d->o, d->end, len);
}

/* The streams of the model [z, z + zn) into d; true when malformed. */
static bool open_streams(zin_t *d, const uint8_t *z, size_t zn)
{
    tl_rbuf_t h = {z, z + zn, false};
    if (tl_get_u8(&h) != MODEL_VERSION) return true;
    uint64_t len[S_COUNT];
    for (unsigned i = 0; i < S_COUNT; i++)
        len[i] = tl_get_varint(&h);
    if (h.err) return true;
    const uint8_t *q = h.p, *end = z + zn;
    for (unsigned i = 0; i < S_COUNT; i++) {
        if (len[i] > (uint64_t)(end - q)) return true;
        d->s[i] = (tl_rbuf_t){q, q + len[i], false};
        q += len[i];
    }
    return q != end;
}

bool tl_zmodel_decode(tl_zmodel_t *m, const uint8_t *z, size_t zn, uint8_t *out, size_t raw)
{
    zin_t d = {.o = out, .end = out + raw};
    if (open_streams(&d, z, zn) || grow(m, raw) ||
        copy(&d.s[S_RAW], &d.o, d.end, TL_CHUNK_HEADER_BYTES))
        return true;
    start(m);
    tl_rbuf_t *ops = &d.s[S_OP];
    while (ops->p < ops->end) {
        uint8_t op = *ops->p++;
        if (op == 0) {
            uint8_t *rec = d.o;
            uint64_t k = tl_get_varint(&d.s[S_LEN]);
            if (!k || copy(&d.s[S_RAW], &d.o, d.end, k)) return true;
            if (rec[0] == TL_REC_OWNER) d.prev = 0; /* another run starts (tl_rec_state_t) */
        } else if (!tl_block_is(op) || get_block(m, &d, op)) {
            return true;
        }
    }
    for (unsigned i = 0; i < S_COUNT; i++)
        if (d.s[i].err || d.s[i].p != d.s[i].end) return true;
    return d.o != d.end;
}

void tl_zmodel_free(tl_zmodel_t *m)
{
    free(m->allocs), free(m->frees), free(m->taken), free(m->list);
    free(m->keys), free(m->at), free(m->gens);
    free(m->streams), free(m->check), free(m->frames);
    *m = (tl_zmodel_t){0};
}
