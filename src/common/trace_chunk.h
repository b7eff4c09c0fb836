/* trace_chunk.h - the one walk over a trace's chunks and the one validation
 * of a chunk header, shared by the report's reader, tl_trace_peek and the
 * dump tool (tests/workloads/tl_trace_dump.c).
 *
 * Untrusted input: offsets are computed in 64 bits and checked against the
 * bytes at hand; nothing here allocates or prints.
 */
#ifndef TL_COMMON_TRACE_CHUNK_H
#define TL_COMMON_TRACE_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"

/* What tl_chunk_parse found at one chunk slot. */
typedef enum tl_chunk_state {
    TL_CHUNK_OK = 0,     /* a chunk: its records are [data, data + len) */
    TL_CHUNK_UNUSED = 1, /* magic 0: a slot the agent never filled */
    TL_CHUNK_BAD = 2     /* a bad magic, or `used` larger than the chunk can hold */
} tl_chunk_state_t;

/* One chunk of a trace, as tl_chunk_parse validated it. */
typedef struct tl_chunk {
    uint64_t index;      /* slot number in the file, 0 = first after the header */
    uint32_t tid, seq;   /* writer thread's kernel tid, its chunk number */
    uint64_t base_ts;    /* CLOCK_MONOTONIC ns the first ts_delta counts from */
    const uint8_t *data; /* the records */
    size_t len;          /* bytes of records present: `used`, or fewer when cut */
    bool cut;            /* the bytes at hand end before `used` (a truncated file) */
} tl_chunk_t;

/* Validate the chunk header at c, of which avail bytes are at hand, in a
 * trace whose chunks are chunk_bytes long (> TL_CHUNK_HEADER_BYTES). Fills
 * *out on TL_CHUNK_OK (index left 0). avail < TL_CHUNK_HEADER_BYTES is BAD. */
tl_chunk_state_t tl_chunk_parse(const uint8_t *c, uint64_t avail, uint32_t chunk_bytes,
                                tl_chunk_t *out);

/* A walk over the chunk slots of a trace held in [buf, buf + size). */
typedef struct tl_chunk_iter {
    const uint8_t *buf;
    uint64_t size, header_bytes, chunk_bytes;
    uint64_t declared; /* chunk count of the header; 0 = scan to the end of the file */
    uint64_t next;     /* next slot */
    bool truncated;    /* the file ends before the chunks the header promised */
    uint64_t bad_chunks;
} tl_chunk_iter_t;

/* Start a walk. header_bytes and chunk_bytes come from a validated header
 * (tl_reader_parse_header bounds them: <= 1 MiB and <= 1 GiB), declared from
 * its chunk_count. */
void tl_chunk_iter_init(tl_chunk_iter_t *it, const uint8_t *buf, uint64_t size,
                        uint64_t header_bytes, uint64_t chunk_bytes, uint64_t declared);

/* The next good chunk (unused slots skipped, bad ones counted in bad_chunks);
 * false at the end, with `truncated` set when the file was cut short of the
 * header's promise or inside a chunk header. */
bool tl_chunk_iter_next(tl_chunk_iter_t *it, tl_chunk_t *out);

#endif
