/* test_report_check.c - Check suite for the CI parts of src/report:
 * suppression templates and files (suppress.c), region leaks, nesting per
 * thread and growth (regions.c through the model), a region's peak sites,
 * loop steps (steps.c), on traces built in memory with exact bytes.
 */
#include <string.h>

#include "report/analyze/model.h"
#include "report/analyze/steps.h"
#include "report/analyze/suppress.h"
#include "report/check/check.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

/* check -- CMD's recording by its limits: `all` mode for a limit of plain
 * heap blocks, the default mode's every storage for storage limits and a
 * CUDA device's (check/check.h). */
START_TEST(record_by_limits)
{
    static const unsigned every[] = {TL_LIMIT_LEAK, TL_LIMIT_PEAK, TL_LIMIT_GROWTH,
                                     TL_LIMIT_BASELINE};
    static const unsigned storages[] = {TL_LIMIT_LEAK_STORAGE, TL_LIMIT_PINNED, TL_LIMIT_PROBLEM};
    tl_check_opts_t o = {0};
    ck_assert(!tl_check_needs_every_block(&o));
    for (size_t i = 0; i < 3; i++)
        o.set[storages[i]] = true;
    ck_assert(!tl_check_needs_every_block(&o));
    for (size_t i = 0; i < 4; i++) {
        o.set[every[i]] = true;
        o.device = 0; /* every device */
        ck_assert(tl_check_needs_every_block(&o));
        o.device = 1; /* the cpu: its plain heap blocks */
        ck_assert(tl_check_needs_every_block(&o));
        o.device = 2; /* cuda:0: its storages alone */
        ck_assert(!tl_check_needs_every_block(&o));
        o.set[every[i]] = false;
    }
}
END_TEST

/* --leak-kinds and --problem-kinds lists (check/options.c). */
START_TEST(kind_lists)
{
    unsigned m;
    ck_assert(!tl_check_leak_kinds_parse("definite,possible", &m));
    ck_assert_uint_eq(m, (1u << TL_LEAK_DEFINITE) | (1u << TL_LEAK_POSSIBLE));
    ck_assert(!tl_check_leak_kinds_parse("all", &m));
    ck_assert_uint_eq(m, 15u);
    ck_assert(tl_check_leak_kinds_parse("definite,", &m)); /* a trailing comma */
    ck_assert(tl_check_leak_kinds_parse("lost", &m));
    ck_assert(tl_check_leak_kinds_parse("", &m));
    ck_assert(!tl_check_problem_kinds_parse("held_by_autograd,pinned_by_view", &m));
    ck_assert_uint_eq(m, (1u << TL_PROBLEM_AUTOGRAD) | (1u << TL_PROBLEM_PINNED));
    ck_assert(!tl_check_problem_kinds_parse("all", &m));
    ck_assert_uint_eq(m, TL_CHECK_PROBLEM_KINDS_ALL);
    ck_assert(tl_check_problem_kinds_parse("pinned", &m));
}
END_TEST

START_TEST(supp_template_match)
{
    ck_assert(tl_supp_match("leak_a", "leak_a"));
    ck_assert(tl_supp_match("leak", "my_leak_a")); /* a substring, as LSan */
    ck_assert(!tl_supp_match("^leak", "my_leak_a"));
    ck_assert(tl_supp_match("^leak", "leak_a"));
    ck_assert(tl_supp_match("leak_a$", "my_leak_a"));
    ck_assert(!tl_supp_match("leak_a$", "leak_ab"));
    ck_assert(tl_supp_match("^leak_*_b$", "leak_x_y_b"));
    ck_assert(!tl_supp_match("^leak_*_b$", "leak_x_y_bc"));
    ck_assert(tl_supp_match("*/libfoo.so", "/usr/lib/libfoo.so.1"));
    ck_assert(
        tl_supp_match("<frozen importlib._bootstrap", "<frozen importlib._bootstrap_external>"));
    ck_assert(tl_supp_match("a*$", "abc"));
    ck_assert(!tl_supp_match("x", ""));
    ck_assert(!tl_supp_match("x", NULL));
}
END_TEST

START_TEST(supp_parse_and_errors)
{
    tl_supp_t s = {0};
    char why[256];
    const char *ok = "# comment\n\n  leak:foo  \r\nleak:*bar*\n\t# indented comment\n";
    ck_assert_int_eq(tl_supp_parse(&s, "a.supp", ok, strlen(ok), why, sizeof why), 0);
    ck_assert_uint_eq(s.nrules, 2);
    ck_assert_str_eq(s.rules[0].pattern, "foo");
    ck_assert_uint_eq(s.rules[0].line, 3);
    ck_assert_str_eq(s.rules[0].source, "a.supp");
    ck_assert_str_eq(s.rules[1].pattern, "*bar*");
    ck_assert_uint_eq(s.rules[1].line, 4);
    ck_assert(s.rules[0].native_file && s.native_file); /* a file's rules match native files */
    const struct {
        const char *text, *why;
    } bad[] = {
        {"leak:a\nfoo\n", "b.supp:2: expected leak:PATTERN"},
        {"\n\nrace:x\n", "b.supp:3: unknown suppression type 'race'"},
        {"leak:\n", "b.supp:1: empty pattern after leak:"},
        {"leak:   \n", "b.supp:1: empty pattern after leak:"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(
            tl_supp_parse(&s, "b.supp", bad[i].text, strlen(bad[i].text), why, sizeof why),
            TL_STATUS_BAD_INPUT);
        ck_assert_msg(strncmp(why, bad[i].why, strlen(bad[i].why)) == 0, "%s: %s", bad[i].text,
                      why);
    }
    ck_assert(!tl_supp_add_defaults(&s));
    ck_assert_uint_gt(s.nrules, 10);
    ck_assert_str_eq(s.rules[s.nrules - 1].source, "default");
    ck_assert(!s.rules[s.nrules - 1].native_file); /* the built-in ones name functions */
    tl_supp_free(&s);
    ck_assert_int_eq(tl_supp_load_file(&s, "/nonexistent/x.supp", why, sizeof why),
                     TL_STATUS_BAD_INPUT);
    tl_supp_free(&s);
}
END_TEST

static tl_trace_t tr;
static tl_model_t m;
static uint8_t rec[2][16384];
static tl_wbuf_t w[2];

static void begin(void)
{
    for (int i = 0; i < 2; i++)
        w[i] = (tl_wbuf_t){rec[i], rec[i] + sizeof rec[i], false};
}

static void region(int th, bool open, const char *name)
{
    uint64_t none[1] = {0};
    tl_rec_put_lineage(&w[th], open ? TL_REC_REGION_BEGIN : TL_REC_REGION_END, 10, none, name,
                       strlen(name));
}

/* Two chunks (threads 1 and 2), both from base_ts 1000. */
static void build(void)
{
    ck_assert(!w[0].overflow && !w[1].overflow);
    tl_tgen_t g;
    tl_tgen_header(&g, 16384 + 64, TL_HDR_F_CLEAN_END, 2, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, rec[0], (size_t)(w[0].p - rec[0]));
    tl_tgen_chunk(&g, 2, 0, 1000, rec[1], (size_t)(w[1].p - rec[1]));
    char why[128];
    ck_assert_int_eq(tl_trace_read_mem(g.buf, g.len, &tr, why, sizeof why), 0);
    free(g.buf);
    ck_assert(!tl_model_build(&tr, &m));
}

static void done(void)
{
    tl_model_free(&m);
    tl_trace_free(&tr);
}

START_TEST(regions_nested_exact)
{
    begin();
    tl_rec_put_alloc(&w[0], 10, 0, 0x10, 7, 1); /* before any region: not a region leak */
    region(0, true, "outer");
    tl_rec_put_alloc(&w[0], 10, 0, 0x20, 100, 2);
    region(0, true, "inner");
    tl_rec_put_alloc(&w[0], 10, 0, 0x30, 200, 3);
    tl_rec_put_alloc(&w[0], 10, 0, 0x40, 50, 4);
    tl_rec_put_free(&w[0], 10, 3, 0x40);
    tl_rec_put_free(&w[0], 10, 3, 0x10); /* allocated before: not counted either way */
    region(0, false, "inner");
    tl_rec_put_free(&w[0], 10, 3, 0x30); /* inner's leak freed inside outer */
    region(0, false, "outer");
    tl_rec_put_lineage(&w[0], TL_REC_REGION_END, 10, (uint64_t[]){0}, "nowhere", 7);
    build();
    ck_assert_uint_eq(m.regions.nregions, 2);
    const tl_region_t *outer = tl_regions_find(&m.regions, "outer");
    const tl_region_t *inner = tl_regions_find(&m.regions, "inner");
    ck_assert_ptr_nonnull(outer);
    ck_assert_ptr_nonnull(inner);
    ck_assert_uint_eq(inner->iterations, 1);
    ck_assert_uint_eq(inner->last.bytes, 200);
    ck_assert_uint_eq(inner->last.blocks, 1);
    ck_assert_uint_eq(inner->last_peak_bytes, 250);
    ck_assert_uint_eq(inner->nsites, 1);
    ck_assert_uint_eq(tr.sites[inner->sites[0].site].stack_id, 3);
    ck_assert_uint_eq(outer->last.bytes, 100);
    ck_assert_uint_eq(outer->last_peak_bytes, 350);
    ck_assert_uint_eq(m.regions.unmatched_ends, 1);
    ck_assert_uint_eq(m.regions.ngrowth, 0);
    done();
}
END_TEST

START_TEST(regions_per_thread)
{
    /* thread 2 opens its own "r" inside thread 1's: each END closes its
     * thread's region; an allocation in thread 2 during thread 1's region
     * belongs to it too */
    begin();
    region(0, true, "r");                        /* t 1010 */
    region(1, true, "r");                        /* t 1010 */
    tl_rec_put_alloc(&w[1], 10, 0, 0x50, 64, 5); /* t 1020, thread 2, in both */
    region(1, false, "r");                       /* t 1030: thread 2's iteration: 64 B */
    tl_rec_put_alloc(&w[0], 30, 0, 0x60, 32, 6); /* t 1040 */
    region(0, false, "r");                       /* t 1050: thread 1's: 64 + 32 */
    build();
    const tl_region_t *r = tl_regions_find(&m.regions, "r");
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->iterations, 2);
    ck_assert_uint_eq(r->last.bytes, 96);
    ck_assert_uint_eq(r->last_tid, 1);
    ck_assert_uint_eq(r->total.bytes, 64 + 96);
    ck_assert_uint_eq(r->total.blocks, 3);
    done();
}
END_TEST

/* n iterations of "step": stack 7 keeps 16 B each; stack 8 keeps 1000 B in
 * the first (warm-up); stack 9 keeps 500 B in the second only (plateau). */
static void steps(int n, bool grow)
{
    for (int i = 0; i < n; i++) {
        region(0, true, "step");
        if (grow) tl_rec_put_alloc(&w[0], 1, 0, 0x1000 + (uint64_t)i * 16, 16, 7);
        if (i == 0) tl_rec_put_alloc(&w[0], 1, 0, 0x9000, 1000, 8);
        if (i == 1) tl_rec_put_alloc(&w[0], 1, 0, 0xa000, 500, 9);
        tl_rec_put_alloc(&w[0], 1, 0, 0xb000, 300, 10);
        tl_rec_put_free(&w[0], 1, 3, 0xb000);
        region(0, false, "step");
    }
}

START_TEST(growth_every_iteration)
{
    begin();
    steps(6, true);
    build();
    ck_assert_uint_eq(m.regions.ngrowth, 1);
    const tl_growth_t *g = &m.regions.growth[0];
    ck_assert_uint_eq(tr.sites[g->site].stack_id, 7);
    ck_assert_uint_eq(g->bytes_per_iteration, 16);
    ck_assert_uint_eq(g->iterations, 6);
    ck_assert_uint_eq(g->first_bytes, 16);
    ck_assert_uint_eq(g->last_bytes, 96);
    const tl_region_t *r = tl_regions_find(&m.regions, "step");
    ck_assert_uint_eq(r->last.bytes, 16);
    ck_assert_uint_eq(r->total.bytes, 6 * 16 + 1000 + 500);
    done();
}
END_TEST

START_TEST(growth_not_plateau)
{
    begin();
    steps(6, false);
    build();
    ck_assert_uint_eq(m.regions.ngrowth, 0);
    done();
    begin();
    steps(2, true); /* two iterations: one growth after warm-up is not enough */
    build();
    ck_assert_uint_eq(m.regions.ngrowth, 0);
    done();
    begin();
    steps(3, true);
    build();
    ck_assert_uint_eq(m.regions.ngrowth, 1);
    ck_assert_uint_eq(m.regions.growth[0].iterations, 3);
    done();
}
END_TEST

/* Sites of a region's peak, by stack id: bytes and blocks. */
static void peak_site(const tl_region_t *r, size_t i, uint64_t stack, uint64_t bytes)
{
    ck_assert_uint_gt(r->npeak_sites, i);
    ck_assert_uint_eq(tr.sites[r->peak_sites[i].site].stack_id, stack);
    ck_assert_uint_eq(r->peak_sites[i].bytes, bytes);
    ck_assert_uint_eq(r->peak_sites[i].blocks, 1);
}

START_TEST(region_peak_sites)
{
    /* outer: 100 + 200 + 50 live at its peak (350); inner: 200 + 50 (250);
     * the last of two iterations of "r" is the one named: 64 B, not 96 */
    begin();
    region(0, true, "r");
    tl_rec_put_alloc(&w[0], 10, 0, 0x70, 96, 11);
    tl_rec_put_free(&w[0], 10, 3, 0x70);
    region(0, false, "r");
    region(0, true, "outer");
    tl_rec_put_alloc(&w[0], 10, 0, 0x20, 100, 2);
    region(0, true, "inner");
    tl_rec_put_alloc(&w[0], 10, 0, 0x30, 200, 3);
    tl_rec_put_alloc(&w[0], 10, 0, 0x40, 50, 4);
    tl_rec_put_free(&w[0], 10, 3, 0x40);
    tl_rec_put_alloc(&w[0], 10, 0, 0x50, 20, 5); /* after the peak */
    region(0, false, "inner");
    region(0, false, "outer");
    region(0, true, "r");
    tl_rec_put_alloc(&w[0], 10, 0, 0x80, 64, 12);
    region(0, false, "r");
    build();
    const tl_region_t *outer = tl_regions_find(&m.regions, "outer");
    const tl_region_t *inner = tl_regions_find(&m.regions, "inner");
    const tl_region_t *r = tl_regions_find(&m.regions, "r");
    ck_assert_uint_eq(outer->last_peak_bytes, 350);
    ck_assert_uint_eq(outer->npeak_sites, 3);
    peak_site(outer, 0, 3, 200);
    peak_site(outer, 1, 2, 100);
    peak_site(outer, 2, 4, 50);
    ck_assert_uint_eq(inner->npeak_sites, 2);
    peak_site(inner, 0, 3, 200);
    peak_site(inner, 1, 4, 50);
    ck_assert_uint_eq(r->iterations, 2);
    ck_assert_uint_eq(r->npeak_sites, 1);
    peak_site(r, 0, 12, 64);
    done();
}
END_TEST

/* STACK id with frames f[0, n) */
static void stack_n(int th, uint64_t id, const uint64_t *f, size_t n)
{
    tl_rec_put_stack(&w[th], 0, id, f, n);
}

#define PY(id) (TL_FRAME_PY_TAG | (id))

START_TEST(loop_steps_seen)
{
    begin();
    tl_rec_put_pyframe(&w[0], 0, 1, 5, "/w/a.py", 7, "<module>", 8); /* the kept line */
    tl_rec_put_pyframe(&w[0], 0, 2, 4, "/w/a.py", 7, "<module>", 8); /* another line */
    tl_rec_put_pyframe(&w[0], 0, 3, 9, "/w/a.py", 7, "f", 1);        /* a call's line */
    stack_n(0, 20, (uint64_t[]){0x100, PY(1)}, 2);
    stack_n(0, 21, (uint64_t[]){0x100, PY(1)}, 2); /* the same frames again, another id */
    stack_n(0, 22, (uint64_t[]){0x200, PY(2)}, 2);
    stack_n(0, 30, (uint64_t[]){0x300, PY(3), PY(1)}, 3);
    stack_n(0, 31, (uint64_t[]){0x301, PY(3), PY(1)}, 3);
    stack_n(0, 40, (uint64_t[]){0x400}, 1);
    /* t 1010..: stack 20 kept in 3 steps (the line left for line 4 between) */
    tl_rec_put_alloc(&w[0], 10, 0, 0x10, 8, 20);
    tl_rec_put_alloc(&w[0], 10, 0, 0x11, 8, 22);
    tl_rec_put_alloc(&w[0], 10, 0, 0x12, 8, 21);
    tl_rec_put_alloc(&w[0], 10, 0, 0x13, 8, 22);
    tl_rec_put_alloc(&w[0], 10, 0, 0x14, 8, 20);
    tl_rec_put_alloc(&w[0], 10, 0, 0x15, 8, 20); /* same step as 0x14 */
    /* t 1070..: one call of f keeps 3 blocks at stack 30, with another
     * native site under the same Python frames between: one step */
    tl_rec_put_alloc(&w[0], 10, 0, 0x20, 8, 30);
    tl_rec_put_alloc(&w[0], 10, 0, 0x21, 8, 31);
    tl_rec_put_alloc(&w[0], 30, 0, 0x22, 8, 30); /* t 1110 */
    tl_rec_put_alloc(&w[0], 10, 0, 0x23, 8, 30);
    /* native frames only: a region boundary between is a step */
    tl_rec_put_alloc(&w[0], 10, 0, 0x30, 8, 40);
    tl_rec_put_alloc(&w[0], 10, 0, 0x31, 8, 40);
    region(0, true, "r");
    tl_rec_put_alloc(&w[0], 10, 0, 0x32, 8, 40);
    region(0, false, "r");
    /* thread 2 leaves the Python line of stack 30 while thread 1 is in f:
     * not thread 1's boundary */
    stack_n(1, 50, (uint64_t[]){0x500, PY(2)}, 2);
    tl_rec_put_alloc(&w[1], 100, 0, 0x90, 8, 50); /* t 1100 */
    build();
    uint32_t sites[4];
    const uint64_t ids[4] = {20, 30, 40, 21};
    for (size_t k = 0; k < 4; k++)
        for (uint32_t i = 0; i < tr.nsites; i++)
            if (tr.sites[i].stack_id == ids[k]) sites[k] = i;
    uint64_t steps[4];
    ck_assert(!tl_steps_count(&tr, sites, 4, 0, UINT64_MAX, steps));
    ck_assert_uint_eq(steps[0], 3);
    ck_assert_uint_eq(steps[1], 0);
    ck_assert_uint_eq(steps[2], 2);
    ck_assert_uint_eq(steps[3], 3); /* the same frames as stack 20 */
    /* from t 1050 on: only 0x14 and 0x15, one step; until t 1030: 0x10, 0x12 */
    ck_assert(!tl_steps_count(&tr, sites, 1, 1050, UINT64_MAX, steps));
    ck_assert_uint_eq(steps[0], 0);
    ck_assert(!tl_steps_count(&tr, sites, 1, 0, 1030, steps));
    ck_assert_uint_eq(steps[0], 2);
    /* the same questions in one pass, in any order of until_ts, with a
     * site asked twice and a question of no site: the same answers */
    uint64_t a[4], b[1], c[2], d[1] = {99};
    const uint32_t two[2] = {sites[2], sites[0]};
    tl_steps_query_t q[4] = {
        {sites, 4, UINT64_MAX, a}, {sites, 1, 1030, b}, {two, 2, 1095, c}, {sites, 0, 5, d}};
    ck_assert(!tl_steps_count_many(&tr, 0, q, 4));
    ck_assert_uint_eq(a[0], 3);
    ck_assert_uint_eq(a[1], 0);
    ck_assert_uint_eq(a[2], 2);
    ck_assert_uint_eq(a[3], 3);
    ck_assert_uint_eq(b[0], 2);
    ck_assert(!tl_steps_count(&tr, two, 2, 0, 1095, steps));
    ck_assert_uint_eq(c[0], steps[0]);
    ck_assert_uint_eq(c[1], steps[1]);
    ck_assert_uint_eq(c[1], 3);  /* 0x10, 0x12, 0x14/0x15 by t 1095 */
    ck_assert_uint_eq(d[0], 99); /* n = 0: nothing written */
    done();
}
END_TEST

START_TEST(loop_steps_freed)
{
    /* of two steps' blocks one is freed: one step live, no loop to name */
    begin();
    tl_rec_put_pyframe(&w[0], 0, 1, 5, "/w/a.py", 7, "<module>", 8);
    tl_rec_put_pyframe(&w[0], 0, 2, 4, "/w/a.py", 7, "<module>", 8);
    stack_n(0, 20, (uint64_t[]){0x100, PY(1)}, 2);
    stack_n(0, 22, (uint64_t[]){0x200, PY(2)}, 2);
    tl_rec_put_alloc(&w[0], 10, 0, 0x10, 8, 20);
    tl_rec_put_alloc(&w[0], 10, 0, 0x11, 8, 22);
    tl_rec_put_alloc(&w[0], 10, 0, 0x12, 8, 20);
    tl_rec_put_free(&w[0], 10, 3, 0x10);
    build();
    uint32_t site = 0;
    for (uint32_t i = 0; i < tr.nsites; i++)
        if (tr.sites[i].stack_id == 20) site = i;
    uint64_t steps[1];
    ck_assert(!tl_steps_count(&tr, &site, 1, 0, UINT64_MAX, steps));
    ck_assert_uint_eq(steps[0], 0);
    done();
}
END_TEST

Suite *make_check_suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("check");
    tcase_add_test(tc, record_by_limits);
    tcase_add_test(tc, kind_lists);
    tcase_add_test(tc, supp_template_match);
    tcase_add_test(tc, supp_parse_and_errors);
    tcase_add_test(tc, regions_nested_exact);
    tcase_add_test(tc, regions_per_thread);
    tcase_add_test(tc, growth_every_iteration);
    tcase_add_test(tc, growth_not_plateau);
    tcase_add_test(tc, region_peak_sites);
    tcase_add_test(tc, loop_steps_seen);
    tcase_add_test(tc, loop_steps_freed);
    suite_add_tcase(s, tc);
    return s;
}
