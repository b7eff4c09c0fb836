/* test_report.c - Check runner for src/report, and the reader suite.
 *
 * Traces are built in memory with tests/workloads/report_tracegen.h; the
 * truncation and mutation loops assert that no input crashes the reader.
 */
#include "common/block.h"
#include "report/read/event.h"
#include "report/read/reader.h"
#include "report/read/skim.h"
#include "report/read/stream.h"
#include "report/cmd/report.h"
#include "tests/unit/check_main.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

#include <fcntl.h>
#include <unistd.h>

static tl_trace_t tr;
static char why[256];
static tl_event_t evs[64]; /* the first events of tr's stream (read_buf) */

static int read_buf(const uint8_t *b, size_t n)
{
    int rc = tl_trace_read_mem(b, n, &tr, why, sizeof why);
    if (rc) return rc;
    tl_events_t it;
    ck_assert(!tl_events_open(&tr, &it));
    size_t k = 0;
    for (tl_event_t ev; tl_events_next(&it, &ev); k++)
        if (k < 64) evs[k] = ev;
    tl_events_close(&it);
    ck_assert_uint_eq(k, tr.nevents); /* the load counts what a pass yields */
    return 0;
}

START_TEST(reader_sample)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert(tr.clean_end);
    ck_assert(!tr.truncated);
    ck_assert_uint_eq(tr.bad_chunks + tr.bad_records, 0);
    ck_assert(tr.has_process);
    ck_assert_uint_eq(tr.pid, 4242);
    ck_assert_str_eq(tr.exe, "/usr/bin/prog");
    ck_assert_uint_eq(tr.argc, 3);
    ck_assert_str_eq(tr.argv[2], "quote\"tab\t");
    ck_assert_uint_eq(tr.nmodules, 1);
    ck_assert_str_eq(tr.modules[0].path, "/nonexistent/prog");
    ck_assert_uint_eq(tr.modules[0].build_id_len, 2);
    ck_assert_uint_eq(tr.nevents, 4);
    ck_assert_uint_eq(evs[0].ts, 1001000000ull);
    ck_assert_uint_eq(evs[3].ts, 1004000000ull);
    ck_assert_uint_eq(evs[0].type, TL_EV_ALLOC);
    ck_assert(evs[0].storage);
    ck_assert_uint_eq(evs[3].type, TL_EV_FREE);
    size_t nf;
    const uint64_t *f = tl_trace_site_frames(&tr, evs[0].site, &nf);
    ck_assert_uint_eq(nf, 2);
    ck_assert_uint_eq(f[1], 0x402000);
    ck_assert(tr.has_end);
    ck_assert_uint_eq(tr.end_allocs, 3);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* A STACK record of no frames before any other stack (found by the fuzz
 * target, tests/fuzz/corpus/reader-empty-first-stack.tlt: the frame array
 * was still NULL and got NULL + 0): the site is defined with no frames. */
START_TEST(reader_empty_first_stack)
{
    uint8_t rec[256];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    tl_rec_put_stack(&w, 0, 5, NULL, 0);
    tl_rec_put_alloc(&w, 10, TL_KIND_MALLOC, 0x5000, 64, 5);
    tl_tgen_t g;
    tl_tgen_header(&g, 1024, 0, 0, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.nevents, 1);
    size_t nf = 1;
    ck_assert_ptr_null(tl_trace_site_frames(&tr, evs[0].site, &nf));
    ck_assert_uint_eq(nf, 0);
    ck_assert(tr.sites[evs[0].site].defined);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* A site's frames are decoded from its STACK record when asked: the same
 * frames as written, the first definition of an id kept, the pointer stable
 * after other sites' frames are decoded, and tl_trace_site_frames_in's
 * transient copy equal to the kept one. */
START_TEST(reader_lazy_frames)
{
    static const uint64_t fa[3] = {0x401000, 0x7f0000123456, 0x400010};
    static const uint64_t fb[2] = {0x7fffffff0000, 0x10};
    static const uint64_t other[1] = {0x999};
    uint8_t rec[512];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    tl_rec_put_stack(&w, 0, 7, fa, 3);
    tl_rec_put_stack(&w, 0, 8, fb, 2);
    tl_rec_put_stack(&w, 0, 7, other, 1); /* a second definition: ignored */
    tl_rec_put_alloc(&w, 10, TL_KIND_MALLOC, 0x5000, 64, 7);
    tl_rec_put_alloc(&w, 10, TL_KIND_MALLOC, 0x6000, 32, 8);
    tl_tgen_t g;
    tl_tgen_header(&g, 1024, 0, 0, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.nevents, 2);
    uint32_t sa = evs[0].site, sb = evs[1].site;
    uint64_t buf[TL_REC_MAX_FRAMES];
    size_t n = 0;
    const uint64_t *t1 = tl_trace_site_frames_in(&tr, sb, buf, &n); /* not kept */
    ck_assert_ptr_eq(t1, buf);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(t1[0], fb[0]);
    ck_assert_uint_eq(t1[1], fb[1]);
    const uint64_t *a = tl_trace_site_frames(&tr, sa, &n);
    ck_assert_uint_eq(n, 3);
    for (size_t i = 0; i < 3; i++)
        ck_assert_uint_eq(a[i], fa[i]);
    const uint64_t *b = tl_trace_site_frames(&tr, sb, &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(b[1], fb[1]);
    ck_assert_ptr_eq(tl_trace_site_frames(&tr, sa, &n), a); /* kept where it was */
    ck_assert_ptr_eq(tl_trace_site_frames_in(&tr, sa, buf, &n), a);
    ck_assert_uint_eq(a[2], fa[2]);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* Version 5's packed ALLOC/FREE records read as the full ones of a
 * version 4 file: the same events, the pointer deltas starting again at
 * the OWNER record of another thread's run in the same chunk. */
static void packed_or_not(bool packed, tl_event_t *out, size_t *n)
{
    static const struct {
        uint64_t kind, ptr, size, stack;
    } b[] = {
        {TL_KIND_MALLOC, 0x7f0000001000, 100, 5}, {TL_KIND_CALLOC, 0x7f0000000800, 300, 5},
        {TL_KIND_FREE, 0x7f0000001000, 0, 0},     {TL_KIND_MEMALIGN, 0x7f0000004000, 4096, 5},
        {TL_KIND_FREE, 0x7f0000004000, 0, 0},
    };
    uint8_t rec[512];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    tl_rec_put_stack(&w, 0, 5, (const uint64_t[]){0x401000}, 1);
    for (int run = 0; run < 2; run++) {
        if (run) {
            const uint64_t owner[3] = {2, 0, 1500};
            tl_rec_put_lineage(&w, TL_REC_OWNER, 0, owner, NULL, 0);
        }
        uint64_t prev = 0;
        for (size_t i = 0; i < sizeof b / sizeof b[0]; i++) {
            uint64_t ptr = b[i].ptr + (uint64_t)run * 0x100000, ts = i % 2 ? 0 : 10;
            if (packed)
                w.p = tl_block_put(w.p, ts, (unsigned)b[i].kind, ptr - prev, b[i].size, b[i].stack);
            else if (b[i].kind == TL_KIND_FREE)
                tl_rec_put_free(&w, ts, b[i].kind, ptr);
            else
                tl_rec_put_alloc(&w, ts, b[i].kind, ptr, b[i].size, b[i].stack);
            prev = ptr;
        }
    }
    ck_assert(!w.overflow);
    tl_tgen_t g;
    tl_tgen_header(&g, 1024, 0, 0, 1, 1000);
    tl_store_le32(g.buf + TL_HDR_VERSION, packed ? 5 : 4);
    tl_tgen_chunk(&g, 1, 0, 1000, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.bad_chunks + tr.bad_records, 0);
    *n = tr.nevents;
    memcpy(out, evs, sizeof evs);
    tl_trace_free(&tr);
    free(g.buf);
}

START_TEST(reader_packed_blocks)
{
    static tl_event_t plain[64], packed[64];
    size_t np, nk;
    packed_or_not(false, plain, &np);
    packed_or_not(true, packed, &nk);
    ck_assert_uint_eq(np, 10);
    ck_assert_uint_eq(nk, np);
    for (size_t i = 0; i < np; i++) {
        ck_assert_uint_eq(packed[i].type, plain[i].type);
        ck_assert_uint_eq(packed[i].ts, plain[i].ts);
        ck_assert_uint_eq(packed[i].ptr, plain[i].ptr);
        ck_assert_uint_eq(packed[i].size, plain[i].size);
        ck_assert_uint_eq(packed[i].site, plain[i].site);
    }
    /* the merge: thread 2's run (from 1500) after thread 1's (1000..1030) */
    ck_assert_uint_eq(packed[5].ptr, 0x7f0000101000);
    ck_assert_uint_eq(packed[5].ts, 1510);
}
END_TEST

/* Two threads' chunks interleave by absolute time; ties keep chunk order. */
START_TEST(reader_merge_threads)
{
    uint8_t a[256], b[256];
    tl_wbuf_t wa = {a, a + sizeof a, false}, wb = {b, b + sizeof b, false};
    tl_rec_put_alloc(&wa, 10, 0, 0xa1, 1, 7); /* 1010 */
    tl_rec_put_alloc(&wa, 20, 0, 0xa2, 1, 7); /* 1030 */
    tl_rec_put_alloc(&wb, 0, 0, 0xb1, 1, 0);  /* 1005 */
    tl_rec_put_alloc(&wb, 25, 0, 0xb2, 1, 0); /* 1030: tie, after chunk 0 */
    tl_rec_put_alloc(&wb, 1, 0, 0xb3, 1, 0);  /* 1031 */
    uint64_t fr[] = {0x1234};
    tl_rec_put_stack(&wb, 0, 7, fr, 1); /* defined after its use, in another chunk */
    tl_tgen_t g;
    tl_tgen_header(&g, 512, 0, 0, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, a, (size_t)(wa.p - a));
    tl_tgen_chunk(&g, 2, 0, 1005, b, (size_t)(wb.p - b));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.nevents, 5);
    const uint64_t want[] = {0xb1, 0xa1, 0xa2, 0xb2, 0xb3};
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(evs[i].ptr, want[i]);
    size_t nf;
    const uint64_t *f = tl_trace_site_frames(&tr, evs[1].site, &nf);
    ck_assert_uint_eq(nf, 1);
    ck_assert_uint_eq(f[0], 0x1234);
    ck_assert_uint_eq(tr.sites[evs[0].site].stack_id, 0);
    ck_assert(!tr.truncated);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* A v2 chunk handed on by OWNER to a thread whose records start earlier
 * than the first owner's: each run keeps its own time base, and the stream
 * merges the runs with the other chunk by time. */
START_TEST(reader_owner_runs)
{
    uint8_t a[256], b[256];
    tl_wbuf_t wa = {a, a + sizeof a, false}, wb = {b, b + sizeof b, false};
    tl_rec_put_alloc(&wa, 10, 0, 0xa1, 1, 0); /* tid 1: 1010 */
    const uint64_t own[] = {2, 0, 1005};
    tl_rec_put_lineage(&wa, TL_REC_OWNER, 0, own, NULL, 0);
    tl_rec_put_alloc(&wa, 0, 0, 0xb1, 1, 0);  /* tid 2: 1005 */
    tl_rec_put_alloc(&wa, 20, 0, 0xb2, 1, 0); /* 1025 */
    tl_rec_put_alloc(&wb, 0, 0, 0xc1, 1, 0);  /* tid 1 again: 1015 */
    tl_tgen_t g;
    tl_tgen_header(&g, 512, 0, 0, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, a, (size_t)(wa.p - a));
    tl_tgen_chunk(&g, 1, 1, 1015, b, (size_t)(wb.p - b));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.nevents, 4);
    const uint64_t want[] = {0xb1, 0xa1, 0xc1, 0xb2}, ts[] = {1005, 1010, 1015, 1025};
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(evs[i].ptr, want[i]);
        ck_assert_uint_eq(evs[i].ts, ts[i]);
    }
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* Every prefix of a trace reads without crashing and yields a prefix of its
 * events; below the fixed header fields it is rejected. */
START_TEST(reader_truncate_everywhere)
{
    uint8_t a[512];
    tl_wbuf_t w = {a, a + sizeof a, false};
    for (uint64_t i = 0; i < 12; i++)
        tl_rec_put_alloc(&w, 5, 0, 0x100 + i * 16, 1 + i, 0);
    tl_rec_put_end(&w, 1, 0, 0, 12, 0, 0, 0);
    tl_tgen_t g;
    tl_tgen_header(&g, 1024, TL_HDR_F_CLEAN_END, 1, 1, 0);
    tl_tgen_chunk(&g, 1, 0, 0, a, (size_t)(w.p - a));
    size_t full_end = g.header_bytes + TL_CHUNK_HEADER_BYTES + (size_t)(w.p - a);
    size_t last = 0;
    for (size_t n = 0; n <= g.len; n++) {
        int rc = read_buf(g.buf, n);
        if (n < TL_HDR_RESERVED) {
            ck_assert_int_eq(rc, TL_STATUS_BAD_TRACE);
            continue;
        }
        ck_assert_int_eq(rc, 0);
        ck_assert_uint_eq(tr.bad_records + tr.bad_chunks, 0);
        ck_assert_int_eq(tr.truncated, n < full_end);
        ck_assert_uint_ge(tr.nevents, last); /* monotone prefix */
        last = tr.nevents;
        for (size_t i = 0; i < tr.nevents; i++)
            ck_assert_uint_eq(evs[i].ptr, 0x100 + i * 16);
        ck_assert_int_eq(tr.has_end, n >= full_end);
        tl_trace_free(&tr);
    }
    ck_assert_uint_eq(last, 12);
    free(g.buf);
}
END_TEST

START_TEST(reader_bad_headers)
{
    tl_tgen_t g;
    tl_tgen_sample(&g);
    uint8_t *copy = malloc(g.len);
    struct {
        size_t off;
        uint32_t v;
    } cases[] = {
        {TL_HDR_MAGIC, 0x41414141}, {TL_HDR_VERSION, TL_TRACE_VERSION + 1}, {TL_HDR_VERSION, 0},
        {TL_HDR_HEADER_BYTES, 0},   {TL_HDR_HEADER_BYTES, 0xffffffff},      {TL_HDR_CHUNK_BYTES, 0},
        {TL_HDR_CHUNK_BYTES, 32},   {TL_HDR_CHUNK_BYTES, 0xffffffff},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(copy, g.buf, g.len);
        tl_store_le32(copy + cases[i].off, cases[i].v);
        ck_assert_int_eq(read_buf(copy, g.len), TL_STATUS_BAD_TRACE);
        ck_assert(why[0] != '\0');
        if (cases[i].off == TL_HDR_VERSION) /* names the versions this build reads */
            ck_assert_str_eq(why,
                             "unsupported trace version (this tensorleak reads versions 1 to 6)");
        ck_assert_ptr_null(tr.buf);
    }
    free(copy);
    free(g.buf);
}
END_TEST

START_TEST(reader_bad_chunks)
{
    uint8_t a[64], b[64];
    tl_wbuf_t wa = {a, a + sizeof a, false}, wb = {b, b + sizeof b, false};
    tl_rec_put_alloc(&wa, 1, 0, 0x10, 8, 0);
    tl_rec_put_alloc(&wb, 1, 0, 0x20, 8, 0);
    size_t nb = (size_t)(wb.p - b);
    b[nb++] = 0xee; /* an unknown record type after a good record */
    tl_tgen_t g;
    tl_tgen_header(&g, 256, 0, 0, 1, 0);
    tl_tgen_chunk(&g, 1, 0, 0, a, (size_t)(wa.p - a));
    tl_tgen_chunk(&g, 1, 1, 0, a, (size_t)(wa.p - a)); /* used > chunk: corrupt */
    tl_store_le32(g.buf + g.header_bytes + 256 + TL_CHK_USED, 256 - 31);
    tl_tgen_chunk(&g, 1, 2, 0, a, (size_t)(wa.p - a)); /* bad magic */
    tl_store_le32(g.buf + g.header_bytes + 512, 0x12345678);
    tl_tgen_chunk(&g, 1, 3, 0, a, 0); /* never used */
    tl_store_le32(g.buf + g.header_bytes + 768, 0);
    tl_tgen_chunk(&g, 2, 0, 0, b, nb);
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_eq(tr.bad_chunks, 2);
    ck_assert_uint_eq(tr.bad_records, 1);
    ck_assert(!tr.truncated);
    ck_assert_uint_eq(tr.nevents, 2);
    ck_assert_uint_eq(evs[1].ptr, 0x20);
    tl_trace_free(&tr);
    /* The header promises 9 chunks: the file is truncated. */
    tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 9);
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert(tr.truncated);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

START_TEST(reader_garbage)
{
    uint8_t junk[8192];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof junk; i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (uint8_t)(x >> 16);
    }
    ck_assert_int_eq(read_buf(junk, sizeof junk), TL_STATUS_BAD_TRACE);
    /* A valid header followed by garbage chunks: damaged, never a crash. */
    tl_tgen_t g;
    tl_tgen_header(&g, 512, 0, 0, 1, 0);
    tl_tgen_grow(&g, sizeof junk);
    memcpy(g.buf + g.len, junk, sizeof junk);
    for (size_t c = 0; c < sizeof junk / 512; c++) /* chunk magic, sane `used` */
        tl_store_le32(g.buf + g.len + c * 512, TL_CHUNK_MAGIC),
            tl_store_le32(g.buf + g.len + c * 512 + TL_CHK_USED, 400);
    g.len += sizeof junk;
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert_uint_gt(tr.bad_records, 0);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

/* OPTIONS python keys: the last value of each wins (a later record for a
 * libpython loaded late); untrusted strings are cut and made printable. */
START_TEST(reader_python_options)
{
    tl_tgen_t g;
    uint8_t rec[512];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    const char *k1[] = {"mode", "python_frames", "python", "python_build"};
    const char *v1[] = {"all", "unsupported", "3.13.0\x01\xff", "free-threaded build"};
    const char *k2[] = {"python", "python_frames"};
    const char *v2[] = {"3.9.18-and-a-version-longer-than-31-bytes", "unsupported"};
    const char *k3[] = {"python_frames"};
    const char *v3[] = {"on"};
    tl_tgen_header(&g, 1024, TL_HDR_F_CLEAN_END, 1, 4242, 1000000000ull);
    tl_rec_put_options(&w, 0, 4, k1, v1);
    tl_tgen_chunk(&g, 4242, 0, 1000000000ull, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert(tr.python_unsupported);
    ck_assert_str_eq(tr.python, "3.13.0??");
    ck_assert_str_eq(tr.python_build, "free-threaded build");
    tl_trace_free(&tr);
    tl_rec_put_options(&w, 0, 2, k2, v2);
    tl_tgen_chunk(&g, 4242, 1, 1001000000ull, rec, (size_t)(w.p - rec));
    tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 2);
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert(tr.python_unsupported);
    ck_assert_str_eq(tr.python, "3.9.18-and-a-version-longer-tha");
    tl_trace_free(&tr);
    tl_rec_put_options(&w, 0, 1, k3, v3);
    tl_tgen_chunk(&g, 4242, 2, 1002000000ull, rec, (size_t)(w.p - rec));
    tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 3);
    ck_assert_int_eq(read_buf(g.buf, g.len), 0);
    ck_assert(!tr.python_unsupported);
    tl_trace_free(&tr);
    free(g.buf);
}
END_TEST

static char tmpdir[] = "/tmp/tl-test-report-XXXXXX";

START_TEST(reader_files)
{
    strcpy(tmpdir, "/tmp/tl-test-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char path[512];
    snprintf(path, sizeof path, "%s/missing.tlt", tmpdir);
    ck_assert_int_eq(tl_trace_read(path, &tr, why, sizeof why), TL_STATUS_NO_TRACE);
    ck_assert_str_eq(why, "No such file or directory");
    ck_assert_int_eq(tl_trace_read(tmpdir, &tr, why, sizeof why), TL_STATUS_NO_TRACE);
    snprintf(path, sizeof path, "%s/empty.tlt", tmpdir);
    ck_assert_int_eq(tl_tgen_write(path, (const uint8_t *)"", 0), 0);
    ck_assert_int_eq(tl_trace_read(path, &tr, why, sizeof why), TL_STATUS_BAD_TRACE);
    tl_tgen_t g;
    tl_tgen_sample(&g);
    snprintf(path, sizeof path, "%s/sample.tlt", tmpdir);
    ck_assert_int_eq(tl_tgen_write(path, g.buf, g.len), 0);
    ck_assert_int_eq(tl_trace_read(path, &tr, why, sizeof why), 0);
    ck_assert_uint_eq(tr.nevents, 4);
    tl_trace_free(&tr);

    tl_trace_info_t info;
    ck_assert_int_eq(tl_trace_peek(path, &info), 0);
    ck_assert(info.has_process);
    ck_assert(info.clean_end);
    ck_assert_uint_eq(info.pid, 4242);
    ck_assert_uint_eq(info.ppid, 1);
    ck_assert_uint_eq(info.session, 77);
    ck_assert_uint_eq(info.start_mono, 1000000000ull);
    ck_assert_str_eq(info.exe, "/usr/bin/prog");
    ck_assert_str_eq(info.argv0, "./prog");
    ck_assert(!info.exec_end);
    /* ended by an exec: EXEC_END beside CLEAN_END */
    tl_store_le32(g.buf + TL_HDR_FLAGS, TL_HDR_F_CLEAN_END | TL_HDR_F_EXEC_END);
    ck_assert_int_eq(tl_tgen_write(path, g.buf, g.len), 0);
    ck_assert_int_eq(tl_trace_peek(path, &info), 0);
    ck_assert(info.clean_end && info.exec_end);
    /* EXEC_END without CLEAN_END (a writer unmarked after a failed exec,
     * torn): not an end */
    tl_store_le32(g.buf + TL_HDR_FLAGS, TL_HDR_F_EXEC_END);
    ck_assert_int_eq(tl_tgen_write(path, g.buf, g.len), 0);
    ck_assert_int_eq(tl_trace_peek(path, &info), 0);
    ck_assert(!info.clean_end && !info.exec_end);
    /* peek on bad input: codes, no output */
    ck_assert_int_eq(tl_trace_peek(tmpdir, &info), TL_STATUS_NO_TRACE);
    snprintf(path, sizeof path, "%s/empty.tlt", tmpdir);
    ck_assert_int_eq(tl_trace_peek(path, &info), TL_STATUS_BAD_TRACE);
    snprintf(path, sizeof path, "%s/nope.tlt", tmpdir);
    ck_assert_int_eq(tl_trace_peek(path, &info), TL_STATUS_NO_TRACE);
    /* header only: header facts, no process */
    snprintf(path, sizeof path, "%s/hdr.tlt", tmpdir);
    ck_assert_int_eq(tl_tgen_write(path, g.buf, g.header_bytes), 0);
    ck_assert_int_eq(tl_trace_peek(path, &info), 0);
    ck_assert(!info.has_process);
    ck_assert_uint_eq(info.pid, 4242);
    ck_assert_str_eq(info.exe, "");
    free(g.buf);
    const char *names[] = {"empty.tlt", "sample.tlt", "hdr.tlt"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, names[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}
END_TEST

/* The extent of a trace still being written (open.c): found with pread
 * only, through the last slot in use and no further; any write since the
 * scan shows in tl_trace_moved. */
START_TEST(reader_extent)
{
    strcpy(tmpdir, "/tmp/tl-test-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    char path[512];
    snprintf(path, sizeof path, "%s/live.tlt", tmpdir);
    tl_tgen_t g;
    tl_tgen_sample(&g); /* chunk 0; then made live: no CLEAN_END, count 0 */
    tl_store_le32(g.buf + TL_HDR_FLAGS, 0);
    tl_store_le64(g.buf + TL_HDR_CHUNK_COUNT, 0);
    uint32_t used = tl_load_le32(g.buf + g.header_bytes + TL_CHK_USED);
    tl_tgen_grow(&g, 8 * g.chunk_bytes); /* slot 1 unused, slot 2 a copy of 0, 5 zero */
    memcpy(g.buf + g.len + g.chunk_bytes, g.buf + g.header_bytes, g.chunk_bytes);
    g.len += 8 * g.chunk_bytes;
    ck_assert_int_eq(tl_tgen_write(path, g.buf, g.len), 0);
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    tl_extent_t e;
    tl_trace_extent(fd, g.len, &e);
    ck_assert(!e.ended);
    ck_assert_uint_eq(e.size, g.len);
    ck_assert_uint_eq(e.bytes, 4096 + 3 * 1024);
    ck_assert_uint_eq(e.last, 4096 + 2 * 1024);
    ck_assert_uint_eq(e.last_used, used);
    ck_assert(!tl_trace_moved(fd, &e));
    ck_assert_int_eq(tl_trace_read(path, &tr, why, sizeof why), 0);
    ck_assert_uint_eq(tr.buf_len, 4096 + 3 * 1024);
    ck_assert_uint_eq(tr.nevents, 8);
    ck_assert(!tr.live && !tr.truncated && !tr.clean_end);
    tl_trace_free(&tr);
    uint8_t b[4] = {1, 0, 0, 0}, got[8];
    ck_assert_int_eq(pwrite(fd, b, 1, 4096 + 2 * 1024 + TL_CHK_USED), 1); /* a record more */
    ck_assert(tl_trace_moved(fd, &e));
    tl_trace_extent(fd, g.len, &e);
    ck_assert_int_eq(pwrite(fd, b, 1, 4096 + 5 * 1024 + 31), 1); /* a slot handed out */
    ck_assert(tl_trace_moved(fd, &e));
    tl_trace_extent(fd, g.len, &e);
    ck_assert_uint_eq(e.bytes, 4096 + 6 * 1024);
    ck_assert_int_eq(ftruncate(fd, 4096 + 5 * 1024 + 10), 0); /* cut in a slot header */
    ck_assert(tl_trace_moved(fd, &e));
    tl_trace_extent(fd, 4096 + 5 * 1024 + 10, &e);
    ck_assert_uint_eq(e.bytes, 4096 + 3 * 1024); /* its 10 bytes are zero */
    ck_assert_int_eq(tl_read_at(fd, got, sizeof got, 4096 + 5 * 1024 + 4), 6); /* short at EOF */
    tl_store_le32(b, TL_HDR_F_CLEAN_END); /* ended, one chunk: the header bounds it */
    ck_assert_int_eq(pwrite(fd, b, 4, TL_HDR_FLAGS), 4);
    ck_assert(tl_trace_moved(fd, &e));
    tl_store_le32(b, 1);
    ck_assert_int_eq(pwrite(fd, b, 4, TL_HDR_CHUNK_COUNT), 4);
    tl_trace_extent(fd, 4096 + 5 * 1024 + 10, &e);
    ck_assert(e.ended && e.bytes == 4096 + 1024 && !tl_trace_moved(fd, &e));
    ck_assert_int_eq(pwrite(fd, "TLTRACE", 7, 100), 7); /* not a trace: the fixed header */
    ck_assert_int_eq(pwrite(fd, "x", 1, 0), 1);
    tl_trace_extent(fd, 4096 + 5 * 1024 + 10, &e);
    ck_assert_uint_eq(e.bytes, TL_HDR_RESERVED);
    close(fd);
    unlink(path);
    rmdir(tmpdir);
    free(g.buf);
}
END_TEST

/* The load's skim of a block record (skim.h) against the codec's decoder:
 * the same length and verdict on every record, kind and varint length, at
 * hand in full (the fast path) or cut at every length (the decoder's), and
 * on random bytes (non-canonical varints, unknown kinds); the same facts
 * as the events tl_rec_events makes of the decoded record. */
static void skim_check(const uint8_t *p, size_t n)
{
    static tl_record_t rec, scratch;
    tl_skim_t b;
    tl_rec_state_t sd = {0x7f0000001000ull}, ss = sd; /* packed records: a run's state */
    long want = tl_rec_decode_block(p, n, &rec, &sd);
    long got = tl_rec_skim_block(p, n, &scratch, &b, &ss);
    ck_assert_int_eq(got, want);
    ck_assert_uint_eq(ss.ptr, sd.ptr);
    if (want <= 0) return;
    tl_event_t ev[2];
    uint64_t stack[2];
    int k = tl_rec_events(&rec, 0, ev, stack);
    ck_assert_uint_eq(b.ts_delta, rec.ts_delta);
    ck_assert_int_eq(b.nevents, k);
    ck_assert_uint_eq(b.kind, rec.type == TL_REC_ALLOC ? rec.u.alloc.kind : 0);
    for (int i = 0; i < k; i++) {
        bool alloc = ev[i].type == TL_EV_ALLOC || ev[i].type == TL_EV_RALLOC;
        ck_assert_int_eq(b.alloc[i], alloc);
        if (alloc) ck_assert_uint_eq(b.stack[i], stack[i]);
    }
}

START_TEST(reader_skim_matches_decode)
{
    static const uint64_t vals[] = {
        0, 1, 127, 128, 300, (1ull << 49) + 12345, (1ull << 56) - 1, 1ull << 56, UINT64_MAX};
    const size_t nv = sizeof vals / sizeof vals[0];
    uint8_t buf[160];
    uint32_t x = 777;
    for (uint64_t kind = 0; kind < 20; kind++)
        for (size_t a = 0; a < nv; a++)
            for (size_t c = 0; c < nv; c++)
                for (int type = 0; type < 6; type++) {
                    for (size_t i = 0; i < sizeof buf; i++) { /* what follows the record */
                        x = x * 1103515245u + 12345u;
                        buf[i] = (uint8_t)(x >> 16);
                    }
                    tl_wbuf_t w = {buf, buf + sizeof buf, false};
                    uint64_t ts = vals[(a + c) % nv], v = vals[(a * 3 + c) % nv];
                    if (type == 0) tl_rec_put_alloc(&w, ts, kind, vals[a], v, vals[c]);
                    if (type == 1) tl_rec_put_free(&w, ts, kind, vals[a]);
                    if (type == 2) tl_rec_put_dalloc(&w, ts, kind, vals[a], v, vals[c], v, ts);
                    if (type == 3) tl_rec_put_dfree(&w, ts, kind, vals[a], vals[c]);
                    if (type == 4) tl_rec_put_realloc(&w, ts, vals[a], vals[c], v, kind);
                    if (type == 5) /* packed (version 5): kind 0-3, 3 a FREE */
                        w.p = tl_block_put(buf, ts, kind & 3u, vals[a], v, vals[c]);
                    ck_assert(!w.overflow);
                    size_t len = (size_t)(w.p - buf);
                    skim_check(buf, sizeof buf);
                    for (size_t n = 0; n <= len; n++)
                        skim_check(buf, n);
                }
    for (int round = 0; round < 200000; round++) { /* random bytes after a block type */
        for (size_t i = 0; i < 96; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (uint8_t)(x >> 16);
            if (i > 0 && (x >> 8) % 3 == 0) buf[i] &= 0x7f; /* more short varints */
            if (i > 0 && (x >> 12) % 7 == 0) buf[i] = 0x80; /* non-canonical zeros */
        }
        buf[0] = (uint8_t)(TL_REC_ALLOC + (x >> 4) % 3);
        if ((x >> 28) % 2) buf[0] = (uint8_t)(TL_REC_PACKED + (x >> 4) % 8);
        if ((x >> 20) % 2) buf[2] = (uint8_t)((x >> 24) % 20); /* a kind, often known */
        skim_check(buf, 96);
        skim_check(buf, (x >> 7) % 96);
    }
}
END_TEST

Suite *make_reader_suite(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("reader");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reader_sample);
    tcase_add_test(tc, reader_merge_threads);
    tcase_add_test(tc, reader_owner_runs);
    tcase_add_test(tc, reader_empty_first_stack);
    tcase_add_test(tc, reader_lazy_frames);
    tcase_add_test(tc, reader_packed_blocks); /* version 5 */
    tcase_add_test(tc, reader_truncate_everywhere);
    tcase_add_test(tc, reader_bad_headers);
    tcase_add_test(tc, reader_bad_chunks);
    tcase_add_test(tc, reader_garbage);
    tcase_add_test(tc, reader_skim_matches_decode);
    tcase_add_test(tc, reader_files);
    tcase_add_test(tc, reader_extent);
    tcase_add_test(tc, reader_python_options);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_reader_suite, make_model_suite, make_lineage_suite, make_json_suite,
              make_symbolize_suite, make_report_suite, make_check_suite, make_progress_suite,
              make_compress_suite, make_zmodel_suite, make_delta_suite)
