/* test_tools.c - Check suites for the CLI's pure helpers (size parsing). */
#include "tools/size.h"
#include "tests/unit/check_main.h"

START_TEST(size_valid)
{
    static const struct {
        const char *s;
        uint64_t want;
    } cases[] = {
        {"0", 0},
        {"1", 1},
        {"512KiB", 524288},
        {"512kib", 524288},
        {"1.5GB", 1500000000},
        {"1.5GiB", 1610612736},
        {"64k", 65536},
        {"10MB", 10000000},
        {"1MiB", 1048576},
        {"2 MiB", 2097152},
        {"100B", 100},
        {"0.5KiB", 512},
        {"3T", 3298534883328},
        {"2.0", 2},
        {"1.3KiB", 1331},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        ck_assert_msg(tl_parse_size(cases[i].s, &v), "%s rejected", cases[i].s);
        ck_assert_uint_eq(v, cases[i].want);
    }
}
END_TEST

START_TEST(size_invalid)
{
    static const char *const bad[] = {
        "",  "-1",  "KiB", "1.5XB", "1..5",   "12abc", "1 MiB x", "99999999999999999999TiB",
        ".", "1e6", "1.5", "0.5B",  "2.0001", NULL};
    uint64_t v = 7;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(!tl_parse_size(bad[i], &v), "%s accepted", bad[i] ? bad[i] : "NULL");
        ck_assert_uint_eq(v, 7);
    }
}
END_TEST

START_TEST(size_or_percent)
{
    uint64_t b = 0;
    double pct = 0;
    bool is_pct = false;
    ck_assert(tl_parse_size_or_percent("10%", &b, &pct, &is_pct));
    ck_assert(is_pct);
    ck_assert(pct == 10.0);
    ck_assert(tl_parse_size_or_percent("2.5%", &b, &pct, &is_pct));
    ck_assert(pct == 2.5);
    ck_assert(tl_parse_size_or_percent("4KiB", &b, &pct, &is_pct));
    ck_assert(!is_pct);
    ck_assert_uint_eq(b, 4096);
    ck_assert(!tl_parse_size_or_percent("%", &b, &pct, &is_pct));
    ck_assert(!tl_parse_size_or_percent("x%", &b, &pct, &is_pct));
    ck_assert(!tl_parse_size_or_percent("5%%", &b, &pct, &is_pct));
}
END_TEST

static Suite *make_size_suite(void)
{
    Suite *s = suite_create("size");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, size_valid);
    tcase_add_test(tc, size_invalid);
    tcase_add_test(tc, size_or_percent);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_size_suite)
