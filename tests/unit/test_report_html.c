/* test_report_html.c - Check runner for the HTML and folded renderers and
 * the timeline (src/report/render/render_html.c, render_folded.c, analyze/timeline.c):
 * hostile names stay inside their JSON block, folded lines stay one line,
 * the timeline keeps the peak while it coarsens, and region bands pair.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/render/json.h"
#include "report/render/render.h"
#include "report/cmd/report.h"
#include "report/analyze/timeline.h"
#include "tests/unit/check_main.h"
#include "tests/workloads/report_tracegen.h"

extern const unsigned char tl_html_page[];

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

START_TEST(html_json_escape)
{
    static const char hostile[] = "</script><script>alert(\"x\")</script>'&<!--";
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    ck_assert_ptr_nonnull(f);
    char *js = NULL;
    size_t jlen = 0;
    FILE *j = open_memstream(&js, &jlen);
    tl_json_write_string(j, hostile, strlen(hostile));
    fclose(j);
    tl_html_write_json(f, js, jlen);
    fclose(f);
    ck_assert_str_eq(
        mem, "\"\\u003c/script>\\u003cscript>alert(\\\"x\\\")\\u003c/script>'&\\u003c!--\"");
    ck_assert_ptr_null(strchr(mem, '<'));
    free(mem);
    free(js);
}
END_TEST

/* A trace whose every string is markup: a Python frame (file, function), a
 * storage's origin, a region's name and a MARK's. */
static const char evil_file[] = "/w/</script><img src=x onerror=alert(1)>\"'&.py";
static const char evil_fn[] = "<script>alert('fn')</script>;semi\ncolon";
static const char evil_region[] = "</script><script>alert(2)</script>";

static void hostile_trace(tl_tgen_t *g)
{
    static uint8_t rec[4096];
    tl_wbuf_t w = {rec, rec + sizeof rec, false};
    const uint64_t s1[] = {TL_FRAME_PY_TAG | 1}, origin[] = {0x7000000};
    tl_tgen_header(g, 4096 + 64, TL_HDR_F_CLEAN_END, 1, 4244, 1000000000ull);
    tl_rec_put_pyframe(&w, 0, 1, 7, evil_file, strlen(evil_file), evil_fn, strlen(evil_fn));
    tl_rec_put_stack(&w, 0, 1, s1, 1);
    tl_rec_put_lineage(&w, TL_REC_REGION_BEGIN, 1000000, NULL, evil_region, strlen(evil_region));
    tl_rec_put_alloc(&w, 1000000, TL_KIND_STORAGE_C10, 0x7000000, 4096, 1);
    tl_rec_put_lineage(&w, TL_REC_ORIGIN, 0, origin, "<b>op</b>", 9);
    tl_rec_put_lineage(&w, TL_REC_REGION_END, 1000000, NULL, evil_region, strlen(evil_region));
    tl_rec_put_mark(&w, 1000000, 1, "<i>snap</i>", 11);
    tl_rec_put_end(&w, 1000000, TL_END_EXIT, 0, 1, 0, 1, 0);
    if (w.overflow) abort();
    tl_tgen_chunk(g, 4244, 0, 1000000000ull, rec, (size_t)(w.p - rec));
}

static char *render_hostile(tl_format_t format)
{
    char dir[] = "/tmp/tl-test-html-XXXXXX", tpath[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tpath, sizeof tpath, "%s/t.tlt", dir);
    tl_tgen_t g;
    hostile_trace(&g);
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    free(g.buf);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    tl_report_opts_t o = {.format = format, .top = 10};
    ck_assert_int_eq(tl_report_file(tpath, &o, f, NULL), TL_STATUS_OK);
    fclose(f);
    unlink(tpath);
    rmdir(dir);
    return out;
}

START_TEST(html_hostile_names)
{
    char *page = render_hostile(TL_FORMAT_HTML);
    const char *page_t = (const char *)tl_html_page;
    /* The page is the template with its two JSON blocks filled in: the same
     * number of script elements, and no '<' inside either block. */
    ck_assert_uint_eq(count(page, "<script"), count(page_t, "<script"));
    ck_assert_uint_eq(count(page, "</script>"), count(page_t, "</script>"));
    const char *ids[] = {"id=\"tl-report\">", "id=\"tl-page\">"};
    for (size_t i = 0; i < 2; i++) {
        const char *b = strstr(page, ids[i]);
        ck_assert_ptr_nonnull(b);
        b += strlen(ids[i]);
        const char *e = strstr(b, "</script>");
        ck_assert_ptr_nonnull(e);
        ck_assert_ptr_null(memchr(b, '<', (size_t)(e - b)));
        ck_assert_uint_gt((size_t)(e - b), 100);
    }
    /* ... and the strings are there, escaped: JSON.parse gives them back. */
    ck_assert_ptr_nonnull(strstr(page, "\\u003cscript>alert('fn')\\u003c/script>;semi\\ncolon"));
    ck_assert_ptr_nonnull(strstr(page, "\"name\": \"\\u003c/script>\\u003cscript>alert(2)"));
    ck_assert_ptr_nonnull(strstr(page, "\\u003cb>op\\u003c/b>"));
    ck_assert_ptr_nonnull(strstr(page, "\\u003ci>snap\\u003c/i>"));
    ck_assert_ptr_null(strstr(page, "@@"));
    free(page);
}
END_TEST

START_TEST(folded_hostile_names)
{
    char *f = render_hostile(TL_FORMAT_FOLDED);
    /* ';' would split the frame, a newline the line: both replaced. */
    ck_assert_str_eq(f, "end;<script>alert('fn')</script>,semi?colon (/w/</script><img src=x "
                        "onerror=alert(1)>\"'&.py:7) 4096\n"
                        "peak;<script>alert('fn')</script>,semi?colon (/w/</script><img src=x "
                        "onerror=alert(1)>\"'&.py:7) 4096\n");
    free(f);
}
END_TEST

/* A trace of FLAME_N storages (100 + i bytes), each allocated at main.py:1
 * -> f at a line of its own (i + 2), all live to the end; and two more of
 * 1 and 2 bytes at two Python frame ids that carry one label (same file,
 * function and line), so their stacks fold into one. */
#define FLAME_N 4100
static char *render_wide(tl_format_t format)
{
    char dir[] = "/tmp/tl-test-html-XXXXXX", tpath[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tpath, sizeof tpath, "%s/t.tlt", dir);
    size_t cap = 1u << 20;
    uint8_t *rec = malloc(cap);
    ck_assert_ptr_nonnull(rec);
    tl_wbuf_t w = {rec, rec + cap, false};
    tl_tgen_t g;
    tl_tgen_header(&g, (uint32_t)cap + 64, TL_HDR_F_CLEAN_END, 1, 4245, 1000000000ull);
    tl_rec_put_pyframe(&w, 0, 1, 1, "/w/main.py", 10, "<module>", 8);
    for (uint64_t i = 0; i < FLAME_N + 2; i++) {
        uint64_t line = i < FLAME_N ? i + 2 : 9999; /* the last two: one label */
        tl_rec_put_pyframe(&w, 0, i + 2, line, "/w/f.py", 7, "f", 1);
        const uint64_t st[] = {TL_FRAME_PY_TAG | (i + 2), TL_FRAME_PY_TAG | 1};
        tl_rec_put_stack(&w, 0, i + 1, st, 2);
        tl_rec_put_alloc(&w, 1000, TL_KIND_STORAGE_C10, 0x7000000 + i * 0x10000,
                         i < FLAME_N ? 100 + i : i - FLAME_N + 1, i + 1);
    }
    tl_rec_put_end(&w, 1000, TL_END_EXIT, 0, FLAME_N + 2, 0, 1, 0);
    ck_assert(!w.overflow);
    tl_tgen_chunk(&g, 4245, 0, 1000000000ull, rec, (size_t)(w.p - rec));
    free(rec);
    ck_assert_int_eq(tl_tgen_write(tpath, g.buf, g.len), 0);
    free(g.buf);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    tl_report_opts_t o = {.format = format, .top = 10};
    ck_assert_int_eq(tl_report_file(tpath, &o, f, NULL), TL_STATUS_OK);
    fclose(f);
    unlink(tpath);
    rmdir(dir);
    return out;
}

START_TEST(flame_tree_folded_and_page)
{
    /* folded: a line per stack, the two of one label summed (1 + 2 B) */
    char *f = render_wide(TL_FORMAT_FOLDED_PEAK);
    ck_assert_uint_eq(count(f, "\n"), FLAME_N + 1);
    ck_assert_ptr_nonnull(strstr(f, "\n<module> (/w/main.py:1);f (/w/f.py:9999) 3\n"));
    ck_assert_ptr_nonnull(strstr(f, "<module> (/w/main.py:1);f (/w/f.py:2) 100\n"));
    free(f);
    /* the page: the same tree, its root and <module> carrying every byte,
     * the smallest frames beyond the 4000 drawn summed under <module>:
     * 4103 nodes (root, <module>, 4101 f), 3998 f kept, so the 103 smallest
     * (3 B, and 100 + 0 .. 100 + 101) are one node of 10200 + 5151 + 3 B. */
    char *page = render_wide(TL_FORMAT_HTML);
    uint64_t all = 0;
    for (uint64_t i = 0; i < FLAME_N; i++)
        all += 100 + i;
    all += 3;
    char want[160];
    snprintf(want, sizeof want, "[0,\"peak\",null,%llu,%u,%llu,%u,0]", (unsigned long long)all,
             FLAME_N + 2, (unsigned long long)all, FLAME_N + 2);
    ck_assert_ptr_nonnull(strstr(page, want));
    snprintf(want, sizeof want, "[0,\"\\u003cmodule> (/w/main.py:1)\",0,%llu,%u,%llu,%u,0]",
             (unsigned long long)all, FLAME_N + 2, (unsigned long long)all, FLAME_N + 2);
    ck_assert_ptr_nonnull(strstr(page, want));
    ck_assert_ptr_nonnull(strstr(page, "[1,\"103 smaller frames\",null,15354,104,15354,104,103]"));
    ck_assert_ptr_nonnull(strstr(page, "\"f (/w/f.py:4101)\","));
    ck_assert_ptr_null(strstr(page, "\"f (/w/f.py:103)\","));
    free(page);
}
END_TEST

START_TEST(timeline_keeps_peak)
{
    tl_trace_t t;
    memset(&t, 0, sizeof t);
    tl_timeline_t *tl = tl_timeline_new(&t);
    ck_assert_ptr_nonnull(tl);
    /* No END record: the width starts at 1 ns and must double until 1024
     * buckets cover 51 us; a one-event spike survives every merge. */
    for (uint64_t i = 0; i < 5000; i++) {
        tl_event_t ev = {.ts = 1000 + i * 10, .type = TL_EV_ALLOC};
        uint64_t v = i == 1234 ? 1000000000ull : i;
        uint64_t sv[TL_SERIES_COUNT] = {v, v / 2, [TL_SERIES_CUDA + 1] = v / 4};
        ck_assert(!tl_timeline_step(tl, &t, &ev, sv));
    }
    ck_assert_uint_eq(tl->t0, 0);
    ck_assert_uint_eq(tl->width_ns, 64); /* 50990 ns / 1024 buckets -> 49.8 -> 64 */
    size_t n = tl_timeline_nbuckets(tl);
    ck_assert_uint_eq(n, 50990 / 64 + 1);
    uint64_t max = 0, smax = 0, dmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (tl->buckets[i].max[TL_SERIES_ALL] > max) max = tl->buckets[i].max[TL_SERIES_ALL];
        if (tl->buckets[i].max[TL_SERIES_STORAGES] > smax)
            smax = tl->buckets[i].max[TL_SERIES_STORAGES];
        if (tl->buckets[i].max[TL_SERIES_CUDA + 1] > dmax) /* cuda:1 */
            dmax = tl->buckets[i].max[TL_SERIES_CUDA + 1];
    }
    ck_assert_uint_eq(max, 1000000000ull);
    ck_assert_uint_eq(smax, 500000000ull);
    ck_assert_uint_eq(dmax, 250000000ull);
    ck_assert_uint_eq(tl->buckets[n - 1].last[TL_SERIES_CUDA + 1], 4999 / 4);
    ck_assert_uint_eq(tl->buckets[13340 / 64].max[TL_SERIES_ALL], 1000000000ull);
    ck_assert_uint_eq(tl->buckets[n - 1].last[TL_SERIES_ALL], 4999);
    tl_timeline_free(tl);

    /* With an END record the width fits the span from the start. */
    t.has_end = true;
    t.hdr.start_mono = 1000;
    t.end_ts = 1000 + 3000000;
    tl = tl_timeline_new(&t);
    ck_assert_uint_eq(tl->width_ns, 4096); /* 3e6 / 1024 = 2929.7 -> 4096 */
    tl_timeline_free(tl);
}
END_TEST

START_TEST(timeline_checkpoints)
{
    tl_trace_t t;
    memset(&t, 0, sizeof t);
    t.nsites = 2;
    t.has_end = true;
    t.end_ts = 1024 * 100; /* width 100 -> 128 */
    tl_timeline_t *tl = tl_timeline_new(&t);
    ck_assert_uint_eq(tl->width_ns, 128);
    tl_map_t live = {0};
    bool created;
    tl_map_entry_t *e = tl_map_put(&live, 0x1000, &created);
    e->a = 100; /* site 0, plain */
    e = tl_map_put(&live, 0x2000, &created);
    e->a = 300;
    e->b = 1 | (uint64_t)1 << 32; /* site 1, storage */
    /* The first boundary is bucket 16, at 2048 ns: an event at 5000 ns
     * passes two (2048, 4096), which see the same live set. */
    ck_assert(!tl_timeline_before(tl, &t, 2047, &live));
    ck_assert_uint_eq(tl->ncps, 0);
    ck_assert(!tl_timeline_before(tl, &t, 5000, &live));
    ck_assert_uint_eq(tl->ncps, 2);
    ck_assert_uint_eq(tl->cps[0].ts, 2048);
    ck_assert_uint_eq(tl->cps[1].ts, 4096);
    ck_assert_uint_eq(tl->cps[1].bytes, 400);
    ck_assert_uint_eq(tl->cps[1].storage_bytes, 300);
    ck_assert_uint_eq(tl->cps[1].site_count, 2);
    ck_assert_uint_eq(tl->cps[1].sites[0].site, 1);
    ck_assert(tl->cps[1].sites[0].storage);
    ck_assert_uint_eq(tl->cps[1].sites[1].bytes, 100);
    tl_event_t ev = {.ts = 5000, .type = TL_EV_ALLOC};
    ck_assert(!tl_timeline_step(tl, &t, &ev, (uint64_t[TL_SERIES_COUNT]){400, 300}));
    tl_map_remove(&live, 0x1000);
    ck_assert(!tl_timeline_finish(tl, &t, &live));
    ck_assert_uint_eq(tl->ncps, 3);
    ck_assert_uint_eq(tl->cps[2].ts, 5000);
    ck_assert_uint_eq(tl->cps[2].bytes, 300);
    /* Past the grid: the width doubles, the checkpoint at 2048 (an odd
     * boundary of the new grid) goes, 4096 stays. */
    ck_assert(!tl_timeline_before(tl, &t, 1024 * 128 + 1, &live));
    ck_assert_uint_eq(tl->width_ns, 256);
    ck_assert_uint_eq(tl->cps[0].ts, 4096);
    tl_map_free(&live);
    tl_timeline_free(tl);
}
END_TEST

START_TEST(timeline_bands_nest)
{
    /* outer { inner { } } in thread 1, an END without a BEGIN, a mark */
    tl_lineage_t l[] = {
        {.ts = 10, .type = TL_REC_REGION_BEGIN, .tid = 1, .str = "outer"},
        {.ts = 20, .type = TL_REC_REGION_BEGIN, .tid = 1, .str = "inner"},
        {.ts = 30, .type = TL_REC_REGION_END, .tid = 1, .str = "inner"},
        {.ts = 35, .type = TL_REC_REGION_END, .tid = 2, .str = "outer"},
        {.ts = 40, .type = TL_REC_REGION_END, .tid = 1, .str = "outer"},
        {.ts = 50, .type = TL_REC_MARK, .a = {7}, .str = "snap"},
    };
    tl_trace_t t;
    memset(&t, 0, sizeof t);
    t.lineage = l;
    t.nlineage = sizeof l / sizeof l[0];
    tl_timeline_t *tl = tl_timeline_new(&t);
    for (uint32_t i = 0; i < t.nlineage; i++) {
        tl_event_t ev = {.ts = l[i].ts, .type = TL_EV_LINEAGE, .site = i};
        ck_assert(!tl_timeline_step(tl, &t, &ev, (uint64_t[TL_SERIES_COUNT]){0}));
    }
    ck_assert_uint_eq(tl->nbands, 2);
    ck_assert_str_eq(tl->bands[0].name, "inner");
    ck_assert_uint_eq(tl->bands[0].begin_ts, 20);
    ck_assert_uint_eq(tl->bands[0].end_ts, 30);
    ck_assert_uint_eq(tl->bands[0].depth, 1);
    ck_assert_str_eq(tl->bands[1].name, "outer");
    ck_assert_uint_eq(tl->bands[1].end_ts, 40);
    ck_assert_uint_eq(tl->bands[1].depth, 0);
    ck_assert_uint_eq(tl->nmarks, 1);
    ck_assert_uint_eq(tl->marks[0].id, 7);
    ck_assert_uint_eq(tl->marks[0].ts, 50);
    tl_timeline_free(tl);
}
END_TEST

static Suite *make_html_suite(void)
{
    Suite *s = suite_create("html");
    TCase *tc = tcase_create("html");
    tcase_add_test(tc, html_json_escape);
    tcase_add_test(tc, html_hostile_names);
    tcase_add_test(tc, folded_hostile_names);
    tcase_add_test(tc, flame_tree_folded_and_page);
    tcase_add_test(tc, timeline_keeps_peak);
    tcase_add_test(tc, timeline_checkpoints);
    tcase_add_test(tc, timeline_bands_nest);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_html_suite)
