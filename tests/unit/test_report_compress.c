/* test_report_compress.c - compressed traces (report/cmd/compress.h,
 * report/read/zchunk.h): the same events as the raw trace, event by event;
 * a compressed trace cut at every byte reads exactly the chunks wholly
 * before the cut, as the raw trace cut after the same chunk does; damaged
 * frames and headers cost their chunk, not the process. */
#include <stdlib.h>
#include <string.h>

#include "common/block.h"
#include "report/cmd/compress.h"
#include "report/read/reader.h"
#include "report/read/zchunk.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

#define NCHUNKS 12
#define CB      1024u

/* A raw trace of two threads: chunk 0 has the stacks, then NCHUNKS chunks
 * of packed and plain ALLOC/FREE records, slot 5 left unused. */
static void make_raw(tl_tgen_t *g)
{
    static uint8_t rec[CB];
    const uint64_t s1[] = {0x401000, 0x402000};
    tl_tgen_header(g, CB, TL_HDR_F_CLEAN_END, NCHUNKS + 2, 4242, 1000000000ull);
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    tl_rec_put_stack(&w, 0, 1, s1, 2);
    tl_tgen_chunk(g, 100, 0, 1000000000ull, rec, (size_t)(w.p - rec));
    for (uint32_t i = 0; i < NCHUNKS; i++) {
        if (i == 5) { /* an unused slot: left out of the compressed trace */
            tl_tgen_grow(g, CB);
            memset(g->buf + g->len, 0, CB);
            g->len += CB;
        }
        w = (tl_wbuf_t){rec, rec + sizeof rec, false};
        uint64_t prev = 0;
        for (uint64_t j = 0; j < 20 + i; j++) {
            uint64_t p = 0x100000 + i * 0x10000 + j * 48;
            ck_assert_int_ge(w.end - w.p, TL_BLOCK_MAX);
            w.p = tl_block_put(w.p, j % 3, TL_KIND_MALLOC, p - prev, 16 + j, 1);
            tl_rec_put_free(&w, 7, TL_KIND_FREE, p);
            prev = p;
        }
        tl_tgen_chunk(g, 100 + i % 2, 1 + i / 2, 1000000000ull + i * 1000000ull, rec,
                      (size_t)(w.p - rec));
    }
}

/* Events a pass over the trace in buf[0, n) yields (-1: not loaded, -2: the
 * load refused it); *trunc its truncated flag. */
static long events_of(const uint8_t *b, size_t n, bool *trunc, uint64_t *bad)
{
    tl_trace_t t;
    char why[256];
    int rc = tl_trace_read_mem(b, n, &t, why, sizeof why);
    if (rc) return -2;
    tl_events_t it;
    ck_assert(!tl_events_open(&t, &it));
    long k = 0;
    for (tl_event_t ev; tl_events_next(&it, &ev);)
        k++;
    tl_events_close(&it);
    ck_assert_uint_eq((uint64_t)k, t.nevents);
    if (trunc) *trunc = t.truncated;
    if (bad) *bad = t.bad_chunks;
    tl_trace_free(&t);
    return k;
}

START_TEST(compress_same_events)
{
    tl_tgen_t g;
    make_raw(&g);
    uint8_t *z;
    size_t zn;
    tl_msgs_t m = {0};
    ck_assert_int_eq(tl_trace_compress_mem(g.buf, g.len, 0, &z, &zn, &m), 0);
    ck_assert_uint_lt(zn, g.len);
    ck_assert(!memcmp(z, TL_TRACE_ZMAGIC, TL_TRACE_MAGIC_BYTES));
    ck_assert_uint_eq(tl_load_le64(z + TL_HDR_CHUNK_COUNT), NCHUNKS + 1);
    tl_trace_t a, b;
    char why[256];
    ck_assert_int_eq(tl_trace_read_mem(g.buf, g.len, &a, why, sizeof why), 0);
    ck_assert_int_eq(tl_trace_read_mem(z, zn, &b, why, sizeof why), 0);
    ck_assert(b.hdr.compressed && !b.truncated && !b.bad_chunks && !b.bad_records);
    ck_assert_uint_eq(a.nevents, b.nevents);
    ck_assert_uint_eq(a.chunks_read, b.chunks_read);
    ck_assert_uint_eq(a.nsites, b.nsites);
    for (uint32_t i = 0; i < a.nsites; i++) { /* frames decoded from the kept STACK records */
        size_t na, nb;
        const uint64_t *fa = tl_trace_site_frames(&a, i, &na),
                       *fb = tl_trace_site_frames(&b, i, &nb);
        ck_assert_uint_eq(na, nb);
        ck_assert(na == 0 || !memcmp(fa, fb, na * sizeof *fa));
    }
    size_t nf;
    ck_assert(a.nsites == 1 && tl_trace_site_frames(&b, 0, &nf) && nf == 2);
    tl_events_t ia, ib;
    ck_assert(!tl_events_open(&a, &ia) && !tl_events_open(&b, &ib));
    size_t k = 0;
    for (tl_event_t ea, eb; tl_events_next(&ia, &ea); k++) {
        ck_assert(tl_events_next(&ib, &eb));
        ck_assert_uint_eq(ea.ts, eb.ts);
        ck_assert_uint_eq(ea.type, eb.type);
        ck_assert_uint_eq(ea.ptr, eb.ptr);
        ck_assert_uint_eq(ea.size, eb.size);
        ck_assert_uint_eq(ea.site, eb.site);
        ck_assert_uint_eq(ia.tid, ib.tid);
    }
    ck_assert_uint_eq(k, a.nevents);
    tl_event_t e;
    ck_assert(!tl_events_next(&ib, &e));
    tl_events_close(&ia);
    tl_events_close(&ib);
    tl_trace_free(&a);
    tl_trace_free(&b);
    /* compressed again: a copy, as it is */
    uint8_t *z2;
    size_t zn2;
    ck_assert_int_eq(tl_trace_compress_mem(z, zn, 9, &z2, &zn2, &m), 0);
    ck_assert(zn2 == zn && !memcmp(z, z2, zn));
    free(z2);
    ck_assert_int_eq(tl_trace_compress_mem((const uint8_t *)"hello", 5, 0, &z2, &zn2, &m),
                     TL_STATUS_BAD_TRACE);
    ck_assert_uint_eq(m.n, 1);
    tl_msgs_free(&m);
    ck_assert_ptr_null(z2);
    free(z);
    free(g.buf);
}
END_TEST

/* The raw trace's slot after the compressed chunks wholly in z[0, cut). */
static uint64_t raw_cut_for(const uint8_t *z, size_t zn, size_t cut, int *whole)
{
    uint64_t off = TL_TRACE_HEADER_BYTES, slot_end = 0;
    *whole = 0;
    tl_zhead_t h;
    while (off + TL_ZCHUNK_HEADER_BYTES <= zn && tl_zchunk_head(z + off, CB, &h)) {
        uint64_t end = off + TL_ZCHUNK_HEADER_BYTES + h.zbytes;
        if (end > cut) break;
        slot_end = h.slot + 1;
        (*whole)++;
        off = end;
    }
    return TL_TRACE_HEADER_BYTES + slot_end * CB;
}

START_TEST(compress_cut_anywhere)
{
    tl_tgen_t g;
    make_raw(&g);
    uint8_t *z;
    size_t zn;
    ck_assert_int_eq(tl_trace_compress_mem(g.buf, g.len, 0, &z, &zn, NULL), 0);
    long full = events_of(g.buf, g.len, NULL, NULL);
    ck_assert_int_gt(full, 400);
    for (size_t cut = 0; cut <= zn; cut++) {
        uint8_t *p = malloc(cut ? cut : 1); /* exactly cut bytes: ASan sees any overread */
        memcpy(p, z, cut);
        bool tz, tr;
        long got = events_of(p, cut, &tz, NULL);
        if (cut < TL_HDR_RESERVED) { /* not even the fixed header */
            ck_assert_int_eq(got, -2);
        } else if (cut >= TL_TRACE_HEADER_BYTES) {
            int whole;
            uint64_t rc = raw_cut_for(z, zn, cut, &whole);
            long want = whole ? events_of(g.buf, rc, &tr, NULL) : 0;
            ck_assert_msg(got == want, "cut at %zu: %ld events, the raw trace %ld", cut, got, want);
            ck_assert(tz == (cut < zn));
        }
        free(p);
    }
    free(z);
    free(g.buf);
}
END_TEST

START_TEST(compress_damage)
{
    tl_tgen_t g;
    make_raw(&g);
    uint8_t *z;
    size_t zn;
    ck_assert_int_eq(tl_trace_compress_mem(g.buf, g.len, 0, &z, &zn, NULL), 0);
    long full = events_of(z, zn, NULL, NULL);
    size_t c2 = TL_TRACE_HEADER_BYTES; /* the third compressed chunk */
    for (int k = 0; k < 2; k++)
        c2 += TL_ZCHUNK_HEADER_BYTES + tl_load_le32(z + c2 + TL_ZCHK_ZBYTES);
    uint64_t bad;
    bool trunc;
    z[c2 + TL_ZCHUNK_HEADER_BYTES + 20] ^= 0x5a; /* inside its frame: the checksum says */
    long got = events_of(z, zn, &trunc, &bad);
    ck_assert_int_lt(got, full);
    ck_assert_int_gt(got, 0);
    ck_assert_uint_eq(bad, 1);
    z[c2 + TL_ZCHUNK_HEADER_BYTES + 20] ^= 0x5a;
    z[c2 + TL_ZCHK_MAGIC] ^= 1; /* the chain is broken: the chunks before it only */
    got = events_of(z, zn, &trunc, &bad);
    ck_assert_uint_eq(bad, 1);
    ck_assert_int_gt(got, 0);
    z[c2 + TL_ZCHK_MAGIC] ^= 1;
    tl_store_le32(z + c2 + TL_ZCHK_RAW, CB + 1); /* more than a slot */
    ck_assert_int_gt(events_of(z, zn, &trunc, &bad), 0);
    ck_assert_uint_eq(bad, 1);
    tl_store_le32(z + c2 + TL_ZCHK_ZBYTES, 0xffffffffu);
    ck_assert_int_gt(events_of(z, zn, &trunc, &bad), 0);
    ck_assert_uint_eq(bad, 1);
    free(z);
    free(g.buf);
}
END_TEST

Suite *make_compress_suite(void)
{
    Suite *s = suite_create("compress");
    TCase *tc = tcase_create("compress");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, compress_same_events);
    tcase_add_test(tc, compress_cut_anywhere);
    tcase_add_test(tc, compress_damage);
    suite_add_tcase(s, tc);
    return s;
}
