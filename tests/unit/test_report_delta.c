/* test_report_delta.c - STACK_DELTA records (issue 26,
 * report/read/stackdelta.h): a trace written with deltas gives every site
 * the frames and frames_key of the same trace written with full STACK
 * records, raw and compressed, whether the base is the stack just before,
 * in an earlier chunk, or later in the file; a broken delta (no base, a
 * base id not below its own, more frames kept than the base has, too many
 * frames, a chain too deep) gives an unknown stack; a trace cut at any byte
 * never gives a site wrong frames.
 */
#include <stdlib.h>
#include <string.h>

#include "report/cmd/compress.h"
#include "report/read/reader.h"
#include "report/read/stackdelta.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

#define CB     2048u
#define NSTACK 12
#define NF     30

static uint64_t want[NSTACK + 1][NF + 4]; /* stack id -> frames */
static size_t want_n[NSTACK + 1];

/* Stack id's frames: a trunk of NF - 4 frames and a varying top. */
static void make_frames(void)
{
    for (size_t id = 1; id <= NSTACK; id++) {
        size_t n = NF - 2 + id % 5;
        for (size_t i = 0; i < n; i++)
            want[id][i] = i < 3 ? 0x401000 + id * 0x40 + i : 0x7f0000400000ull + (n - i) * 0x80;
        if (id % 4 == 0) want[id][n - 1] = TL_FRAME_PY_TAG | id;
        want_n[id] = n;
    }
}

/* Stack id's record on base (0: a full STACK), as the agent would. */
static void put(tl_wbuf_t *w, uint64_t id, uint64_t base, bool delta)
{
    const uint64_t *f = want[id], *b = want[base];
    size_t n = want_n[id], nb = want_n[base], h = 0, t = 0;
    if (!delta || !base) {
        tl_rec_put_stack(w, 5, id, f, n);
        return;
    }
    while (h < n && h < nb && f[h] == b[h])
        h++;
    while (t < n - h && t < nb - h && f[n - 1 - t] == b[nb - 1 - t])
        t++;
    tl_rec_put_stack_delta(w, 5, id, base, h, t, f + h, n - h - t);
}

/* Thread 1: stacks 1-5 (a chain) in chunk 0, 6-7 in chunk 2 (bases in
 * chunk 0: resolved at the end of the load); thread 2: 8-10 in chunk 1;
 * thread 3: 12 in chunk 3 on 11, which chunk 4 defines (a base later in
 * the file: not the agent's order, which a reader takes all the same). An ALLOC of each stack. */
static void make_trace(tl_tgen_t *g, bool delta)
{
    static const struct {
        uint32_t tid, seq;
        uint64_t first, last;
    } runs[] = {{1, 0, 1, 5}, {2, 0, 8, 10}, {1, 1, 6, 7}, {3, 0, 12, 12}, {3, 1, 11, 11}};
    static const uint64_t base_of[NSTACK + 1] = {0, 0, 1, 2, 3, 4, 5, 6, 0, 8, 9, 0, 11};
    static uint8_t rec[CB];
    tl_tgen_header(g, CB, TL_HDR_F_CLEAN_END, 5, 77, 1000);
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        tl_wbuf_t w = {rec, rec + sizeof rec, false};
        for (uint64_t id = runs[r].first; id <= runs[r].last; id++) {
            put(&w, id, base_of[id], delta);
            tl_rec_put_alloc(&w, 1, TL_KIND_MALLOC, 0x10000 + id * 64, 16 + id, id);
        }
        ck_assert(!w.overflow);
        tl_tgen_chunk(g, runs[r].tid, runs[r].seq, 1000 + r * 100, rec, (size_t)(w.p - rec));
    }
}

/* Site of stack id in t, or UINT32_MAX. */
static uint32_t site_of(const tl_trace_t *t, uint64_t id)
{
    return tl_trace_site_of(t, id);
}

/* Every stack's frames in t are want's; exact: every one known. Returns
 * how many were known. */
static size_t check_frames(const tl_trace_t *t, bool exact)
{
    size_t known = 0;
    for (uint64_t id = 1; id <= NSTACK; id++) {
        uint32_t s = site_of(t, id);
        if (s == UINT32_MAX) {
            ck_assert_msg(!exact, "stack %d: no site", (int)id);
            continue;
        }
        size_t n;
        uint64_t buf[TL_REC_MAX_FRAMES];
        const uint64_t *f = tl_trace_site_frames_in(t, s, buf, &n);
        if (!f) {
            ck_assert_msg(!exact, "stack %d: unknown (compressed %d)", (int)id,
                          (int)t->hdr.compressed);
            ck_assert_uint_eq(t->sites[s].nframes, 0);
            continue;
        }
        known++;
        ck_assert_uint_eq(n, want_n[id]);
        ck_assert(!memcmp(f, want[id], n * sizeof *f));
        ck_assert_uint_eq(t->sites[s].frames_key, tl_frames_key(want[id], n));
        f = tl_trace_site_frames(t, s, &n); /* kept */
        ck_assert_uint_eq(n, want_n[id]);
        ck_assert(!memcmp(f, want[id], n * sizeof *f));
    }
    return known;
}

START_TEST(delta_same_frames)
{
    make_frames();
    tl_tgen_t gd, gf;
    make_trace(&gd, true);
    make_trace(&gf, false);
    size_t used = TL_TRACE_HEADER_BYTES + TL_CHK_USED; /* chunk 0's: stacks 1-5 */
    ck_assert_uint_lt(tl_load_le32(gd.buf + used), tl_load_le32(gf.buf + used));
    tl_trace_t t;
    char why[256];
    ck_assert_int_eq(tl_trace_read_mem(gd.buf, gd.len, &t, why, sizeof why), 0);
    ck_assert_uint_eq(check_frames(&t, true), NSTACK);
    ck_assert_uint_eq(t.nstack_pending, 0);
    tl_trace_free(&t);
    /* compressed: the records are kept copies (zstacks) */
    uint8_t *z;
    size_t zn;
    tl_msgs_t m = {0};
    ck_assert_int_eq(tl_trace_compress_mem(gd.buf, gd.len, 0, &z, &zn, &m), 0);
    ck_assert_int_eq(tl_trace_read_mem(z, zn, &t, why, sizeof why), 0);
    ck_assert(t.hdr.compressed);
    ck_assert_uint_eq(check_frames(&t, true), NSTACK);
    tl_trace_free(&t);
    /* cut anywhere, raw and compressed: never wrong frames */
    for (size_t cut = TL_TRACE_HEADER_BYTES; cut <= gd.len; cut += 7) {
        ck_assert_int_eq(tl_trace_read_mem(gd.buf, cut, &t, why, sizeof why), 0);
        check_frames(&t, false);
        tl_trace_free(&t);
    }
    for (size_t cut = TL_TRACE_HEADER_BYTES; cut <= zn; cut++) {
        if (tl_trace_read_mem(z, cut, &t, why, sizeof why)) continue;
        check_frames(&t, false);
        tl_trace_free(&t);
    }
    free(z);
    tl_msgs_free(&m);
    free(gd.buf);
    free(gf.buf);
}
END_TEST

/* Read one chunk of records rec[0, n) and return the trace. */
static void read_one(tl_trace_t *t, const uint8_t *rec, size_t n)
{
    tl_tgen_t g;
    char why[256];
    tl_tgen_header(&g, 16384, TL_HDR_F_CLEAN_END, 1, 77, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, rec, n);
    ck_assert_int_eq(tl_trace_read_mem(g.buf, g.len, t, why, sizeof why), 0);
    free(g.buf);
}

/* Is stack id unknown in t (no site, or no frames)? */
static bool unknown(const tl_trace_t *t, uint64_t id)
{
    uint32_t s = site_of(t, id);
    size_t n;
    return s == UINT32_MAX || (!tl_trace_site_frames(t, s, &n) && n == 0);
}

START_TEST(delta_broken)
{
    static uint8_t rec[16000];
    static uint64_t big[1000];
    const uint64_t one[1] = {0x401000}, two[2] = {0x402000, 0x403000};
    for (size_t i = 0; i < 1000; i++)
        big[i] = 0x7f0000000000ull + i * 16;
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    tl_rec_put_stack(&w, 0, 1, two, 2);
    tl_rec_put_stack_delta(&w, 0, 3, 2, 0, 0, one, 1);          /* base 2 never defined */
    tl_rec_put_stack_delta(&w, 0, 4, 4, 0, 0, one, 1);          /* base = its own id */
    tl_rec_put_stack_delta(&w, 0, 5, 1, 2, 1, one, 1);          /* keeps 3 of 2 frames */
    tl_rec_put_stack(&w, 0, 6, big, 1000);                      /* 1000 frames */
    tl_rec_put_stack_delta(&w, 0, 7, 6, 1000, 0, two, 2);       /* 1002: fine */
    tl_rec_put_stack_delta(&w, 0, 8, 7, 1000, 2, big, 30);      /* 1032: too many */
    tl_rec_put_stack_delta(&w, 0, 9, 8, 1, 0, one, 1);          /* on a broken one */
    tl_rec_put_stack_delta(&w, 0, 10, 1, 1, 0, one, 1);         /* fine: {two[0], one[0]} */
    for (uint64_t id = 11; id <= 11 + TL_STACK_CHAIN_MAX; id++) /* the last one too deep */
        tl_rec_put_stack_delta(&w, 0, id, id == 11 ? 1 : id - 1, 2, 0, NULL, 0);
    ck_assert(!w.overflow);
    for (uint64_t id = 1; id <= 11 + TL_STACK_CHAIN_MAX; id++)
        tl_rec_put_alloc(&w, 1, TL_KIND_MALLOC, 0x10000 + id * 64, 16, id);
    ck_assert(!w.overflow);
    tl_trace_t t;
    read_one(&t, rec, (size_t)(w.p - rec));
    for (uint64_t id = 3; id <= 9; id++)
        ck_assert_msg(unknown(&t, id) == (id != 6 && id != 7), "stack %d", (int)id);
    size_t n;
    const uint64_t *f = tl_trace_site_frames(&t, site_of(&t, 7), &n);
    ck_assert_uint_eq(n, 1002);
    ck_assert_uint_eq(f[999], big[999]);
    ck_assert_uint_eq(f[1001], two[1]);
    f = tl_trace_site_frames(&t, site_of(&t, 10), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(f[0], two[0]);
    ck_assert_uint_eq(f[1], one[0]);
    /* a chain of TL_STACK_CHAIN_MAX deltas (11 .. 10 + max) resolves, one
     * more does not */
    ck_assert(!unknown(&t, 10 + TL_STACK_CHAIN_MAX));
    ck_assert(unknown(&t, 11 + TL_STACK_CHAIN_MAX));
    tl_trace_free(&t);
    /* the same through the chain, the base in another chunk */
    tl_tgen_t g;
    char why[256];
    static uint8_t rec2[64];
    tl_wbuf_t w2 = {rec2, rec2 + sizeof rec2, false};
    tl_rec_put_stack_delta(&w2, 0, 200, 10 + TL_STACK_CHAIN_MAX, 2, 0, NULL, 0);
    tl_rec_put_stack_delta(&w2, 0, 201, 9 + TL_STACK_CHAIN_MAX, 2, 0, NULL, 0);
    tl_rec_put_alloc(&w2, 1, TL_KIND_MALLOC, 0x90000, 16, 200);
    tl_rec_put_alloc(&w2, 1, TL_KIND_MALLOC, 0x90040, 16, 201);
    tl_tgen_header(&g, 16384, TL_HDR_F_CLEAN_END, 2, 77, 1000);
    tl_tgen_chunk(&g, 2, 0, 1000, rec2, (size_t)(w2.p - rec2)); /* before the bases */
    tl_tgen_chunk(&g, 1, 0, 1000, rec, (size_t)(w.p - rec));
    ck_assert_int_eq(tl_trace_read_mem(g.buf, g.len, &t, why, sizeof why), 0);
    ck_assert(unknown(&t, 200));
    ck_assert(!unknown(&t, 201));
    f = tl_trace_site_frames(&t, site_of(&t, 201), &n);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(f[1], two[1]);
    ck_assert(unknown(&t, 11 + TL_STACK_CHAIN_MAX));
    tl_trace_free(&t);
    free(g.buf);
}
END_TEST

Suite *make_delta_suite(void)
{
    Suite *s = suite_create("stack_delta");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, delta_same_frames);
    tcase_add_test(tc, delta_broken);
    suite_add_tcase(s, tc);
    return s;
}
