/* test_report_json.c - Check suite for src/report/json.c (escaping, UTF-8
 * repair, nesting and separators, byte for byte) and escape.c.
 */
#include "report/render/escape.h"
#include "report/render/json.h"
#include "tests/unit/test_report.h"

#include <stdlib.h>
#include <string.h>

static char *mem;
static size_t memlen;

static FILE *open_mem(void)
{
    FILE *f = open_memstream(&mem, &memlen);
    ck_assert_ptr_nonnull(f);
    return f;
}

static void check_mem(FILE *f, const char *want)
{
    fclose(f);
    ck_assert_str_eq(mem, want);
    free(mem);
    mem = NULL;
}

static void check_string(const char *in, size_t n, const char *want)
{
    FILE *f = open_mem();
    tl_json_write_string(f, in, n);
    check_mem(f, want);
}

START_TEST(json_escapes)
{
    check_string("plain", 5, "\"plain\"");
    check_string("a\"b\\c", 5, "\"a\\\"b\\\\c\"");
    check_string("\n\t\r\b\f", 5, "\"\\n\\t\\r\\b\\f\"");
    check_string("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"");
    check_string("nul\0x", 5, "\"nul\\u0000x\"");
    check_string("", 0, "\"\"");
}
END_TEST

START_TEST(json_utf8)
{
    check_string("\xc3\xa9t\xc3\xa9", 5, "\"\xc3\xa9t\xc3\xa9\"");                       /* kept */
    check_string("\xe2\x82\xac\xf0\x9f\x98\x80", 7, "\"\xe2\x82\xac\xf0\x9f\x98\x80\""); /* kept */
    check_string("a\xff"
                 "b",
                 3,
                 "\"a\xef\xbf\xbd"
                 "b\"");                                                         /* bad byte */
    check_string("\xc0\xaf", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");                 /* overlong */
    check_string("\xed\xa0\x80", 3, "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate */
    check_string("\xe2\x82", 2, "\"\xef\xbf\xbd\xef\xbf\xbd\"");                 /* cut sequence */
}
END_TEST

START_TEST(json_nesting_compact)
{
    FILE *f = open_mem();
    tl_json_t j;
    tl_json_init(&j, f, false);
    tl_json_obj_begin(&j);
    tl_json_key(&j, "a");
    tl_json_u64(&j, 18446744073709551615ull);
    tl_json_key(&j, "b");
    tl_json_arr_begin(&j);
    tl_json_i64(&j, -5);
    tl_json_bool(&j, true);
    tl_json_null(&j);
    tl_json_str(&j, NULL);
    tl_json_obj_begin(&j);
    tl_json_obj_end(&j);
    tl_json_arr_begin(&j);
    tl_json_arr_end(&j);
    tl_json_arr_end(&j);
    tl_json_key(&j, "k\"");
    tl_json_strn(&j, "xy", 1);
    tl_json_obj_end(&j);
    tl_json_finish(&j);
    check_mem(f, "{\"a\":18446744073709551615,\"b\":[-5,true,null,null,{},[]],\"k\\\"\":\"x\"}\n");
}
END_TEST

START_TEST(json_nesting_pretty)
{
    FILE *f = open_mem();
    tl_json_t j;
    tl_json_init(&j, f, true);
    tl_json_obj_begin(&j);
    tl_json_key(&j, "a");
    tl_json_arr_begin(&j);
    tl_json_u64(&j, 1);
    tl_json_u64(&j, 2);
    tl_json_arr_end(&j);
    tl_json_key(&j, "e");
    tl_json_arr_begin(&j);
    tl_json_arr_end(&j);
    tl_json_obj_end(&j);
    tl_json_finish(&j);
    check_mem(f, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": []\n}\n");
}
END_TEST

/* finish closes whatever is still open, with the right brackets. */
START_TEST(json_finish_closes)
{
    FILE *f = open_mem();
    tl_json_t j;
    tl_json_init(&j, f, false);
    tl_json_obj_begin(&j);
    tl_json_key(&j, "x");
    tl_json_arr_begin(&j);
    tl_json_obj_begin(&j);
    tl_json_finish(&j);
    check_mem(f, "{\"x\":[{}]}\n");
}
END_TEST

/* Text escaping (escape.h): control bytes, C1 in UTF-8, invalid UTF-8 as
 * \xNN; valid UTF-8 kept; a cut never splits a character or an escape. */
START_TEST(text_escapes)
{
    char buf[64];
    ck_assert_str_eq(tl_esc("a\x1b]0;t\x07"
                            "b\n\t\x7f",
                            buf, sizeof buf),
                     "a\\x1b]0;t\\x07b\\x0a\\x09\\x7f");
    ck_assert_str_eq(tl_esc("\xc2\x9b"
                            "31m \xc3\xa9 \xe2\x82\xac",
                            buf, sizeof buf),
                     "\\xc2\\x9b"
                     "31m \xc3\xa9 \xe2\x82\xac");
    ck_assert_str_eq(tl_esc("\xff\xc3(\xed\xa0\x80", buf, sizeof buf),
                     "\\xff\\xc3(\\xed\\xa0\\x80");
    ck_assert_str_eq(tl_esc(NULL, buf, sizeof buf), "");
    ck_assert_str_eq(tl_esc("ab\x1b", buf, 6), "ab");   /* the escape does not fit */
    ck_assert_str_eq(tl_esc("a\xc3\xa9", buf, 3), "a"); /* nor does the whole é */
    ck_assert_str_eq(tl_esc("\x01\x02", buf, 9), "\\x01\\x02");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    tl_esc_write(f,
                 "l1\nl\x1b"
                 "2\n",
                 7, true);
    tl_esc_puts(f, "|\n");
    fclose(f);
    ck_assert_str_eq(text, "l1\nl\\x1b"
                           "2\n|\\x0a");
    free(text);
}
END_TEST

Suite *make_json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("json");
    tcase_add_test(tc, json_escapes);
    tcase_add_test(tc, text_escapes);
    tcase_add_test(tc, json_utf8);
    tcase_add_test(tc, json_nesting_compact);
    tcase_add_test(tc, json_nesting_pretty);
    tcase_add_test(tc, json_finish_closes);
    suite_add_tcase(s, tc);
    return s;
}
