/* zchunk.c - the compressed trace's chunks: header check, inflation, the
 * load's walk over raw or compressed chunks (see zchunk.h).
 *
 * A compressed chunk is found only after the previous one (lengths chain
 * them), so a damaged header ends the walk there: what came before is
 * read, the rest counts as one bad chunk.
 */
#include "report/read/zchunk.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "report/read/grow.h"
#include "report/read/stream.h"
#include "report/read/zmodel.h"

/* What inflating takes: zstd's context, and for a modelled chunk the
 * model's bytes and the decoder's scratch. */
typedef struct zctx {
    ZSTD_DCtx *z;
    uint8_t *model;
    size_t model_cap;
    tl_zmodel_t m;
} zctx_t;

size_t tl_zchunk_bound(uint32_t chunk_bytes)
{
    return ZSTD_compressBound(tl_zmodel_cap(chunk_bytes));
}

bool tl_zchunk_head(const uint8_t *p, uint32_t chunk_bytes, tl_zhead_t *h)
{
    uint32_t magic = tl_load_le32(p + TL_ZCHK_MAGIC);
    if (magic != TL_ZCHUNK_MAGIC && magic != TL_ZCHUNK_MAGIC_MODEL) return false;
    *h = (tl_zhead_t){.model = magic == TL_ZCHUNK_MAGIC_MODEL,
                      .zbytes = tl_load_le32(p + TL_ZCHK_ZBYTES),
                      .raw = tl_load_le32(p + TL_ZCHK_RAW),
                      .slot = tl_load_le32(p + TL_ZCHK_SLOT)};
    return h->raw <= chunk_bytes && h->zbytes <= tl_zchunk_bound(chunk_bytes);
}

bool tl_zchunk_inflate(void *dctx, const uint8_t *src, const tl_zhead_t *h, uint8_t *dst)
{
    zctx_t *c = dctx;
    if (!h->model) {
        size_t n = ZSTD_decompressDCtx(c->z, dst, h->raw, src, h->zbytes);
        return ZSTD_isError(n) || n != h->raw;
    }
    size_t cap = tl_zmodel_cap(h->raw);
    if (cap > c->model_cap) {
        free(c->model);
        c->model = malloc(cap);
        c->model_cap = c->model ? cap : 0;
        if (!c->model) return true;
    }
    size_t n = ZSTD_decompressDCtx(c->z, c->model, cap, src, h->zbytes);
    return ZSTD_isError(n) || tl_zmodel_decode(&c->m, c->model, n, dst, h->raw);
}

void *tl_zchunk_dctx_new(void)
{
    zctx_t *c = calloc(1, sizeof *c);
    if (c && !(c->z = ZSTD_createDCtx())) {
        free(c);
        return NULL;
    }
    return c;
}

void tl_zchunk_dctx_free(void *dctx)
{
    zctx_t *c = dctx;
    if (!c) return;
    ZSTD_freeDCtx(c->z);
    free(c->model);
    tl_zmodel_free(&c->m);
    free(c);
}

bool tl_walk_init(tl_walk_t *w, const uint8_t *buf, uint64_t size, const tl_trace_hdr_t *h)
{
    *w = (tl_walk_t){.z = h->compressed,
                     .buf = buf,
                     .size = size,
                     .off = h->header_bytes,
                     .declared = h->chunk_count,
                     .chunk_bytes = h->chunk_bytes};
    if (!w->z) {
        tl_chunk_iter_init(&w->raw, buf, size, h->header_bytes, h->chunk_bytes, h->chunk_count);
        return false;
    }
    w->truncated = size < h->header_bytes;
    w->out = malloc(h->chunk_bytes);
    w->dctx = tl_zchunk_dctx_new();
    if (w->out && w->dctx) return false;
    free(w->out);
    tl_zchunk_dctx_free(w->dctx);
    return true;
}

/* The next compressed chunk's slot inflated into w->out: its bytes, -1 at
 * the end of the walk, -2 for a chunk that does not inflate (skipped). */
static long next_slot(tl_walk_t *w, tl_zhead_t *zh)
{
    if (w->off >= w->size || (w->declared && w->seen >= w->declared)) {
        if (w->declared && w->seen < w->declared) w->truncated = true;
        return -1;
    }
    uint64_t avail = w->size - w->off;
    const uint8_t *p = w->buf + w->off;
    if (avail < TL_ZCHUNK_HEADER_BYTES) {
        w->truncated = true;
        return -1;
    }
    if (!tl_zchunk_head(p, w->chunk_bytes, zh)) {
        w->bad_chunks++; /* the chain is broken: nothing after it can be found */
        return -1;
    }
    if (zh->zbytes > avail - TL_ZCHUNK_HEADER_BYTES) {
        w->truncated = true; /* cut inside this chunk */
        return -1;
    }
    w->zchunk = p;
    w->off += TL_ZCHUNK_HEADER_BYTES + (uint64_t)zh->zbytes;
    w->seen++;
    if (tl_zchunk_inflate(w->dctx, p + TL_ZCHUNK_HEADER_BYTES, zh, w->out)) return -2;
    return zh->raw;
}

bool tl_walk_next(tl_walk_t *w, tl_chunk_t *c)
{
    if (!w->z) return tl_chunk_iter_next(&w->raw, c);
    for (;;) {
        tl_zhead_t zh;
        long n = next_slot(w, &zh);
        if (n == -1) return false;
        if (n == -2) {
            w->bad_chunks++;
            continue;
        }
        if (n < (long)TL_CHUNK_HEADER_BYTES) { /* the compressor's mark of a cut trace */
            w->truncated = true;
            continue;
        }
        switch (tl_chunk_parse(w->out, (uint64_t)n, w->chunk_bytes, c)) {
        case TL_CHUNK_OK:
            c->index = zh.slot;
            if (c->cut) w->truncated = true;
            return true;
        case TL_CHUNK_UNUSED:
            continue;
        case TL_CHUNK_BAD:
            w->bad_chunks++;
            continue;
        }
    }
}

void tl_walk_rebase(const tl_walk_t *w, const tl_chunk_t *c, struct tl_evsrc *s, size_t n)
{
    if (!w->z) return;
    for (size_t i = 0; i < n; i++) {
        s[i].zoff = (uint32_t)(s[i].data - c->data);
        s[i].data = NULL;
        s[i].chunk = w->zchunk;
    }
}

/* How far behind a compressed chunk its release reaches: a read fault maps
 * the pages around it that are in the page cache (the kernel's
 * fault_around_bytes, 64 KiB), and compressed chunks share pages, so the
 * pages of chunks released before would stay mapped. The stream inflates a
 * chunk once, so dropping a page it still needs costs a fault, no more. */
#define RELEASE_BEHIND 65536u

void tl_zchunk_release(const tl_trace_t *t, const uint8_t *zchunk)
{
    if (!t->buf_mapped) return;
    size_t n = TL_ZCHUNK_HEADER_BYTES + tl_load_le32(zchunk + TL_ZCHK_ZBYTES);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), b = (uintptr_t)t->buf;
    uintptr_t lo = (uintptr_t)zchunk - b > RELEASE_BEHIND ? (uintptr_t)zchunk - RELEASE_BEHIND : b;
    uintptr_t hi = ((uintptr_t)zchunk + n + page - 1) & ~(page - 1);
    uintptr_t end = (b + t->buf_len + page - 1) & ~(page - 1);
    lo &= ~(page - 1);
    if (hi > end) hi = end;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void tl_walk_release(const tl_walk_t *w, const tl_trace_t *t, const tl_chunk_t *c)
{
    if (w->z)
        tl_zchunk_release(t, w->zchunk);
    else
        tl_trace_release(t, c->data);
}

bool tl_zstack_keep(tl_trace_t *t, tl_site_t *s, size_t len)
{
    uint8_t *p = tl_grow(t->zstacks, &t->zstacks_cap, t->zstacks_len + len, 1, 65536);
    if (!p) {
        s->rec = NULL, s->nframes = 0; /* as if unknown */
        return true;
    }
    t->zstacks = p;
    memcpy(p + t->zstacks_len, s->rec, len);
    s->rec = (const uint8_t *)(uintptr_t)(t->zstacks_len + 1); /* + 1: not NULL */
    t->zstacks_len += len;
    return false;
}

void tl_zstack_fix(tl_trace_t *t)
{
    if (!t->hdr.compressed) return;
    for (size_t i = 0; i < t->nsites; i++)
        if (t->sites[i].defined && t->sites[i].rec)
            t->sites[i].rec = t->zstacks + ((uintptr_t)t->sites[i].rec - 1);
}

void tl_walk_end(tl_walk_t *w, tl_trace_t *t)
{
    if (w->z) {
        t->truncated |= w->truncated;
        t->bad_chunks += w->bad_chunks;
        free(w->out);
        tl_zchunk_dctx_free(w->dctx);
    } else {
        t->truncated |= w->raw.truncated;
        t->bad_chunks += w->raw.bad_chunks;
    }
    *w = (tl_walk_t){0};
}

void tl_trace_release(const tl_trace_t *t, const uint8_t *data)
{
    if (!t->buf_mapped) return;
    /* The whole slot, header included: slots are page-aligned when the
     * header and chunk sizes are (the agent's are), so nothing stays. */
    const uint8_t *p = data - TL_CHUNK_HEADER_BYTES, *end = t->buf + t->buf_len;
    size_t n = (size_t)(end - p) < t->hdr.chunk_bytes ? (size_t)(end - p) : t->hdr.chunk_bytes;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
