/* zchunk.h - the compressed trace's chunks (trace_format.h TL_ZCHUNK_*,
 * docs/trace-format.md "Compressed traces"): the walk the load makes over
 * a trace's chunks, raw or compressed, and the one chunk the stream
 * inflates again. zstd is used here and in cmd/compress.c only.
 *
 * Untrusted input: every length is checked against the bytes at hand and
 * the slot size; a damaged or cut file yields its whole chunks before the
 * damage. Nothing here prints.
 */
#ifndef TL_REPORT_ZCHUNK_H
#define TL_REPORT_ZCHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_chunk.h"
#include "report/read/reader.h"

/* A compressed chunk's header, validated. */
typedef struct tl_zhead {
    bool model;      /* the frame holds the slot's block model (zmodel.h) */
    uint32_t zbytes; /* bytes of the zstd frame after the header */
    uint32_t raw;    /* bytes the frame holds: the slot's bytes in use */
    uint32_t slot;   /* the chunk's slot number in the uncompressed trace */
} tl_zhead_t;

/* Validate the compressed chunk header at p (TL_ZCHUNK_HEADER_BYTES at
 * hand) of a trace whose chunks are chunk_bytes long. false when it is not
 * one (bad magic, raw > chunk_bytes, a frame larger than zstd makes of
 * chunk_bytes). */
bool tl_zchunk_head(const uint8_t *p, uint32_t chunk_bytes, tl_zhead_t *h);

/* The largest frame a chunk of chunk_bytes compresses to (zstd's bound of
 * the longest model of it). */
size_t tl_zchunk_bound(uint32_t chunk_bytes);

/* Inflate the frame at src (h->zbytes) into dst, which holds h->raw bytes
 * or more, with dctx (tl_zchunk_dctx_new's), decoding a modelled chunk's
 * model. true on failure: a damaged frame or model, one that does not hold
 * exactly h->raw bytes, or no memory for the model. */
bool tl_zchunk_inflate(void *dctx, const uint8_t *src, const tl_zhead_t *h, uint8_t *dst);

/* A new inflating context (zstd's and the model's scratch; NULL when out
 * of memory), and its release (NULL: no-op). One thread at a time each. */
void *tl_zchunk_dctx_new(void);
void tl_zchunk_dctx_free(void *dctx);

/* A walk over the chunks of a trace held in [buf, buf + size) whose header
 * h was validated: tl_chunk_iter's for a raw trace, else one compressed
 * chunk after the other, each inflated into a buffer of the walk's (valid
 * until the next step). */
typedef struct tl_walk {
    tl_chunk_iter_t raw;
    bool z;             /* a compressed trace */
    const uint8_t *buf; /* compressed: the file, and where the next chunk starts */
    uint64_t size, off;
    uint64_t declared; /* compressed chunks the header promises; 0 = to the end */
    uint64_t seen;     /* compressed chunks passed */
    uint32_t chunk_bytes;
    uint8_t *out; /* the inflated chunk slot (chunk_bytes) */
    void *dctx;
    const uint8_t *zchunk; /* the compressed chunk last returned, header included */
    bool truncated;        /* cut short: the file ends inside a chunk or before the promise */
    uint64_t bad_chunks;   /* chunks that did not inflate or whose slot is bad */
} tl_walk_t;

/* Start a walk; true when out of memory (nothing to release then). */
bool tl_walk_init(tl_walk_t *w, const uint8_t *buf, uint64_t size, const tl_trace_hdr_t *h);

/* The next good chunk, as tl_chunk_iter_next; false at the end. */
bool tl_walk_next(tl_walk_t *w, tl_chunk_t *c);

/* The sources [s, s + n) the load made of the chunk last returned (their
 * data pointing into w->out): for a compressed trace, pointed at its
 * compressed chunk (chunk) and their offset in its records (zoff), for the
 * stream to inflate again. */
void tl_walk_rebase(const tl_walk_t *w, const tl_chunk_t *c, struct tl_evsrc *s, size_t n);

/* Give back the pages of the chunk last returned (tl_trace_release). */
void tl_walk_release(const tl_walk_t *w, const tl_trace_t *t, const tl_chunk_t *c);

/* End the walk: its truncated and bad_chunks into t, its buffers freed. */
void tl_walk_end(tl_walk_t *w, tl_trace_t *t);

/* Keep a copy of site s's STACK record, len bytes at s->rec in the chunk
 * being read, in t->zstacks; s->rec becomes its offset there + 1 until
 * tl_zstack_fix. true when out of memory. */
bool tl_zstack_keep(tl_trace_t *t, tl_site_t *s, size_t len);

/* Point the sites' rec at their copies once t->zstacks stopped moving (the
 * end of the load; no-op for a raw trace). */
void tl_zstack_fix(tl_trace_t *t);

/* Give the pages of the compressed chunk at zchunk back to the kernel,
 * as tl_trace_release does for a slot (no-op for a copied buffer). Its
 * neighbours' pages may go too: they are faulted in again when read. */
void tl_zchunk_release(const tl_trace_t *t, const uint8_t *zchunk);

/* Give the raw chunk slot whose records start at data back to the kernel (its
 * pages stay in the page cache; a later pass faults them in again), so
 * resident memory stays that of the chunks being merged. No-op for a
 * copied buffer. */
void tl_trace_release(const tl_trace_t *t, const uint8_t *data);

#endif
