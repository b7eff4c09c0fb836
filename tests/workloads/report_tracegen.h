/* report_tracegen.h - build v1 trace files in memory, for the report tests.
 *
 * A test appends records to a tl_wbuf_t with the common encoders, then lays
 * them out as chunks after a file header. Test code only: aborts on OOM.
 */
#ifndef TL_REPORT_TRACEGEN_H
#define TL_REPORT_TRACEGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/trace_format.h"

typedef struct tl_tgen {
    uint8_t *buf;
    size_t len, cap;
    uint32_t header_bytes, chunk_bytes;
} tl_tgen_t;

static inline void tl_tgen_grow(tl_tgen_t *g, size_t add)
{
    if (g->len + add <= g->cap) return;
    size_t ncap = (g->len + add) * 2;
    g->buf = realloc(g->buf, ncap);
    if (!g->buf) abort();
    memset(g->buf + g->cap, 0, ncap - g->cap);
    g->cap = ncap;
}

/* Start a file: the header with these values, header_bytes 4096. */
static inline void tl_tgen_header(tl_tgen_t *g, uint32_t chunk_bytes, uint32_t flags,
                                  uint64_t chunk_count, uint64_t pid, uint64_t start_mono)
{
    memset(g, 0, sizeof *g);
    g->header_bytes = TL_TRACE_HEADER_BYTES;
    g->chunk_bytes = chunk_bytes;
    tl_tgen_grow(g, g->header_bytes);
    uint8_t *h = g->buf;
    memcpy(h + TL_HDR_MAGIC, TL_TRACE_MAGIC, TL_TRACE_MAGIC_BYTES);
    tl_store_le32(h + TL_HDR_VERSION, TL_TRACE_VERSION);
    tl_store_le32(h + TL_HDR_HEADER_BYTES, g->header_bytes);
    tl_store_le32(h + TL_HDR_CHUNK_BYTES, chunk_bytes);
    tl_store_le32(h + TL_HDR_FLAGS, flags);
    tl_store_le64(h + TL_HDR_PID, pid);
    tl_store_le64(h + TL_HDR_PPID, 1);
    tl_store_le64(h + TL_HDR_START_REALTIME, 1700000000000000000ull);
    tl_store_le64(h + TL_HDR_START_MONO, start_mono);
    tl_store_le64(h + TL_HDR_SESSION, 77);
    tl_store_le64(h + TL_HDR_CHUNK_COUNT, chunk_count);
    tl_store_le32(h + TL_HDR_EXEC_SEQ, 0);
    g->len = g->header_bytes;
}

/* Append one chunk holding rec[0, n) (n <= chunk_bytes - 32; `used` = n). */
static inline void tl_tgen_chunk(tl_tgen_t *g, uint32_t tid, uint32_t seq, uint64_t base_ts,
                                 const uint8_t *rec, size_t n)
{
    if (n > g->chunk_bytes - TL_CHUNK_HEADER_BYTES) abort();
    tl_tgen_grow(g, g->chunk_bytes);
    uint8_t *c = g->buf + g->len;
    memset(c, 0, g->chunk_bytes);
    tl_store_le32(c + TL_CHK_MAGIC, TL_CHUNK_MAGIC);
    tl_store_le32(c + TL_CHK_TID, tid);
    tl_store_le32(c + TL_CHK_USED, (uint32_t)n);
    tl_store_le32(c + TL_CHK_SEQ, seq);
    tl_store_le64(c + TL_CHK_BASE_TS, base_ts);
    memcpy(c + TL_CHUNK_HEADER_BYTES, rec, n);
    g->len += g->chunk_bytes;
}

/* Write buf[0, n) to path; 0 or -1. */
static inline int tl_tgen_write(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(buf, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/* The sample trace of the CLI tests (numbers in tests/integration/report_*.sh):
 * start_mono 1e9; one thread; a 1 MiB storage (stack 1) at +1 ms, plain 100 B
 * and 200 B (stack 2) at +2 and +3 ms, the 100 B freed at +4 ms, END exit 0.
 * Peak 1048876 B at 3000000 ns; 1048776 B live at end in 2 blocks. */
static inline void tl_tgen_sample(tl_tgen_t *g)
{
    static uint8_t rec[4096];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    static const char *const argv[] = {"./prog", "--epochs=1", "quote\"tab\t"};
    const uint64_t s1[] = {0x401000, 0x402000}, s2[] = {0x403000};
    tl_tgen_header(g, 1024, TL_HDR_F_CLEAN_END, 1, 4242, 1000000000ull);
    tl_rec_put_process(&w, 0, 4242, 1, 0, "/usr/bin/prog", 13, 3, argv);
    tl_rec_put_module(&w, 0, 0, 0x400000, 0x10000, "/nonexistent/prog", 17,
                      (const uint8_t *)"\x01\x02", 2);
    tl_rec_put_stack(&w, 0, 1, s1, 2);
    tl_rec_put_stack(&w, 0, 2, s2, 1);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000, 1048576, 1);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_MALLOC, 0x5000, 100, 2);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_MALLOC, 0x6000, 200, 2);
    tl_rec_put_free(&w, 1000000, TL_KIND_FREE, 0x5000);
    tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 3, 1, 1, 0);
    tl_tgen_chunk(g, 4242, 0, 1000000000ull, rec, (size_t)(w.p - rec));
}

/* A lineage trace (start_mono 1e9, one thread): Python frames prep.py:9 and
 * train.py:41; a 64 MiB storage #1 (origin "randn", prep.py:9) whose only
 * holder at the "script_end" MARK (id 1, +4 ms) is a 16 B "slice" view made
 * at train.py:41 (its object is a 200 B block allocated there); storage #2,
 * 16 B, a "clone" of #1 held by a tensor; a 2 MiB storage #3 registered by
 * "pool" held by autograd. Freed after the MARK: everything; END at +6 ms. */
static inline void tl_tgen_lineage(tl_tgen_t *g)
{
    static uint8_t rec[4096];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    const uint64_t s1[] = {0x401000, TL_FRAME_PY_TAG | 1}, s2[] = {TL_FRAME_PY_TAG | 2};
    tl_tgen_header(g, 4096 + 64, TL_HDR_F_CLEAN_END, 1, 4243, 1000000000ull);
    tl_rec_put_pyframe(&w, 0, 1, 9, "/w/prep.py", 10, "load", 4);
    tl_rec_put_pyframe(&w, 0, 2, 41, "/w/train.py", 11, "step", 4);
    tl_rec_put_stack(&w, 0, 1, s1, 2);
    tl_rec_put_stack(&w, 0, 2, s2, 1);
    const uint64_t origin[] = {0x7000000}, copy[] = {0x5000, 0x7000000, 16},
                   reg[] = {0x9000000, 2097152, 2}, hold1[] = {1, 0x7000000, TL_HELD_VIEW, 0},
                   view1[] = {1, 0x7000000, 0, 16, 16, 0x6000},
                   hold2[] = {1, 0x5000, TL_HELD_TENSOR, 0},
                   hold3[] = {1, 0x9000000, TL_HELD_AUTOGRAD, 0};
    tl_rec_put_alloc(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000, 64u << 20, 1);
    tl_rec_put_lineage(&w, TL_REC_ORIGIN, 0, origin, "randn", 5);
    tl_rec_put_alloc(&w, 1000000, TL_KIND_MALLOC, 0x6000, 200, 2);
    tl_rec_put_alloc(&w, 0, TL_KIND_STORAGE_C10, 0x5000, 16, 2);
    tl_rec_put_lineage(&w, TL_REC_COPY, 0, copy, "clone", 5);
    tl_rec_put_lineage(&w, TL_REC_STORAGE_REG, 1000000, reg, "pool", 4);
    tl_rec_put_mark(&w, 1000000, 1, "script_end", 10);
    tl_rec_put_lineage(&w, TL_REC_SNAP_HOLD, 0, hold1, NULL, 0);
    tl_rec_put_lineage(&w, TL_REC_SNAP_VIEW, 0, view1, "slice", 5);
    tl_rec_put_lineage(&w, TL_REC_SNAP_HOLD, 0, hold2, NULL, 0);
    tl_rec_put_lineage(&w, TL_REC_SNAP_HOLD, 0, hold3, NULL, 0);
    tl_rec_put_free(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000);
    tl_rec_put_free(&w, 0, TL_KIND_STORAGE_C10, 0x5000);
    tl_rec_put_free(&w, 0, TL_KIND_FREE, 0x6000);
    tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 3, 3, 2, 0);
    if (w.overflow) abort();
    tl_tgen_chunk(g, 4243, 0, 1000000000ull, rec, (size_t)(w.p - rec));
}

#endif
