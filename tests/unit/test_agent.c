/* test_agent.c - Check suites for src/agent: config, stack ids, writer. */
#include "agent/config.h"
#include "tests/unit/check_main.h"

START_TEST(placeholder)
{
    tl_config_t c;
    const char *env[] = {NULL};
    tl_config_parse(&c, env, 1);
    ck_assert_uint_eq(c.stack_depth, 64);
}
END_TEST

static Suite *make_config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, placeholder);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_config_suite)
