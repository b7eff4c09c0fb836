/* check_main.h - the shared main() of the Check unit-test runners.
 *
 * Each runner lists its suites (one Suite *make_<module>_suite(void) per
 * module) and calls tl_check_main. Results are printed as TAP on stdout for
 * Automake's tap-driver.sh; CK_FORK=no in the environment runs in-process for
 * gdb and valgrind, as Check documents.
 */
#ifndef TL_CHECK_MAIN_H
#define TL_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int tl_check_main(Suite *(*const makers[])(void), size_t n)
{
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < n; i++)
        srunner_add_suite(sr, makers[i]());
    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#define TL_CHECK_MAIN(...)                                                                         \
    int main(void)                                                                                 \
    {                                                                                              \
        Suite *(*const makers[])(void) = {__VA_ARGS__};                                            \
        return tl_check_main(makers, sizeof makers / sizeof makers[0]);                            \
    }

#endif
