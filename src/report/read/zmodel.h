/* zmodel.h - the block model of a compressed chunk (docs/trace-format.md,
 * "Compressed traces"): a chunk slot's bytes rewritten, before zstd, as
 * separate streams of like fields, its packed FREE records naming their
 * block by its age among the chunk's allocations and its packed ALLOC
 * records their address by its place among the chunk's recent frees.
 * Random addresses do not compress; which of the last allocations a free
 * names, and which recent free an allocation reuses, do (W1: 4.3 -> ~2.6
 * bytes an event, BENCHMARKS.md "Compressed traces: the block model").
 *
 * Lossless and chunk by chunk: the model starts empty at each chunk, so a
 * chunk inflates alone (a cut trace still reads up to its last whole
 * chunk). The encoder is only used when decoding its output gives back the
 * very bytes it was given (tl_zmodel_encode checks). Decoding takes
 * untrusted bytes: every read is bounds-checked; a bad model is a failure,
 * never a read or write outside the buffers. Not thread-safe per context;
 * contexts are independent.
 */
#ifndef TL_REPORT_ZMODEL_H
#define TL_REPORT_ZMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a model may take beyond twice the slot's: its head (version, the
 * streams' lengths). A model longer than 2 n + TL_ZMODEL_SLACK is not made. */
#define TL_ZMODEL_SLACK 128u

/* The room a model of a slot of n bytes may take. */
static inline size_t tl_zmodel_cap(size_t n)
{
    return 2 * n + TL_ZMODEL_SLACK;
}

/* Scratch of the encoder and the decoder, grown as chunks need (malloc);
 * zero it to start, tl_zmodel_free to end. */
typedef struct tl_zmodel {
    uint64_t *allocs, *frees; /* the chunk's ALLOC and FREE addresses in order */
    uint8_t *taken;           /* per FREE: a later ALLOC named it */
    uint32_t *list;           /* the untaken FREEs' indices, oldest first */
    size_t cap;               /* entries of allocs, frees, taken, list */
    size_t untaken;           /* FREEs no ALLOC named yet: list's length */
    /* The encoder's: address -> the latest ALLOC and FREE index of it in
     * the chunk, open addressing, a slot valid when its gens is gen. */
    uint64_t *keys;
    uint32_t (*at)[2];
    uint32_t *gens;
    size_t slots; /* a power of two, or 0 */
    uint32_t gen;
    uint8_t *streams, *check; /* the encoder's streams being made; the decoded copy */
    size_t streams_cap, check_cap;
    uint64_t *frames; /* TL_REC_MAX_FRAMES, for tl_rec_decode's STACK records */
} tl_zmodel_t;

/* The model of the slot [p, p + n) (a chunk header of TL_CHUNK_HEADER_BYTES
 * and its records) into out, which has tl_zmodel_cap(n) bytes. Returns its
 * length, or 0 when the slot is not modelled (too short, out of memory, a
 * model that would be longer, or one that would not decode back to the
 * same bytes): the caller compresses the slot as it is. */
size_t tl_zmodel_encode(tl_zmodel_t *m, const uint8_t *p, size_t n, uint8_t *out);

/* The slot of raw bytes that the model [z, z + zn) holds, into out (raw
 * bytes of room). true on failure: a malformed model, or one that does not
 * make exactly raw bytes. */
bool tl_zmodel_decode(tl_zmodel_t *m, const uint8_t *z, size_t zn, uint8_t *out, size_t raw);

/* Free the scratch; *m is zeroed. */
void tl_zmodel_free(tl_zmodel_t *m);

#endif
