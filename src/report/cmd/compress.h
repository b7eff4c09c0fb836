/* compress.h - a trace rewritten as a compressed trace (docs/trace-format.md
 * "Compressed traces"): `tensorleak compress` and `run`/`check
 * --compress`. Each chunk slot in use becomes one zstd frame of its own, so
 * a compressed trace cut at any byte still reads up to its last whole
 * chunk. Not thread-safe; prints nothing (lines go to msgs).
 */
#ifndef TL_REPORT_COMPRESS_H
#define TL_REPORT_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "report/status.h"

/* zstd's level when the caller gives 0: fast enough to keep up with a
 * disk (BENCHMARKS.md, W4). */
#define TL_ZLEVEL_DEFAULT 3
/* The levels a caller may ask for: zstd's 1 to 19. */
#define TL_ZLEVEL_MAX 19

/* What a compression did. */
typedef struct tl_zstats {
    uint64_t raw_bytes; /* bytes of the trace read */
    uint64_t z_bytes;   /* bytes of the compressed trace */
    uint64_t chunks;    /* compressed chunks written */
    int already;        /* the trace was compressed already: left as it is */
} tl_zstats_t;

/* Compress the trace at path in place: the compressed trace is written to
 * a temporary file beside it (".NAME.zXXXXXX") and renamed over path once
 * whole, so path is a whole trace, raw or compressed, at every moment.
 * level: 1-19, 0 for TL_ZLEVEL_DEFAULT. A compressed trace is left as is
 * (st->already). Returns 0, or NO_TRACE (cannot read it, or a symbolic
 * link: it is not followed), BAD_TRACE (not
 * a trace), OUTPUT (cannot write beside it), INCOMPLETE (its writer went
 * on meanwhile: left raw) or NOMEM, with one line "PATH: why" in msgs. */
tl_status_t tl_trace_compress(const char *path, int level, tl_zstats_t *st, tl_msgs_t *msgs);

/* The same for a raw trace held in [raw, raw + n): a malloc'd compressed
 * trace in *out, *outn bytes (tests and the fuzz corpus). */
tl_status_t tl_trace_compress_mem(const uint8_t *raw, size_t n, int level, uint8_t **out,
                                  size_t *outn, tl_msgs_t *msgs);

#endif
