/* test_report_progress.c - the progress line (report/progress.h): its text
 * (bytes, rate, ETA) to the character, and what reaches the descriptor:
 * a line redrawn with \r and cleared at the end, nothing when off. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "report/progress.h"
#include "tests/unit/test_report.h"

#define MiB (1024ull * 1024)
#define MS  1000000ull

START_TEST(progress_format)
{
    static const struct {
        const char *phase;
        uint64_t done, total, elapsed_ns;
        const char *want;
    } cases[] = {
        {"reading", 0, 4 * MiB, 0, "reading 0 B of 4.00 MiB (0%)"},
        {"reading", 0, 4 * MiB, 900 * MS, "reading 0 B of 4.00 MiB (0%)"}, /* no rate yet */
        {"replaying", MiB, 4 * MiB, 100 * MS, "replaying 1.00 MiB of 4.00 MiB (25%)"},
        {"reading", MiB, 4 * MiB, 500 * MS,
         "reading 1.00 MiB of 4.00 MiB (25%), 2.00 MiB/s, ETA 2s"}, /* 1.5 s, rounded */
        {"reading", MiB, 66 * MiB, 1000 * MS,
         "reading 1.00 MiB of 66.0 MiB (1%), 1.00 MiB/s, ETA 1m05s"},
        {"replaying", MiB, 7381 * MiB, 1000 * MS,
         "replaying 1.00 MiB of 7.21 GiB (0%), 1.00 MiB/s, ETA 2h03m"},
        {"reading", 300 * MiB, 600 * MiB, 2000 * MS,
         "reading 300.0 MiB of 600.0 MiB (50%), 150.0 MiB/s, ETA 2s"},
        {"reading", 5, 4, 1000 * MS, "reading 4 B of 4 B (100%), 4 B/s, ETA 0s"}, /* capped */
        {"reading", 0, 0, 0, "reading 0 B of 0 B (100%)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128];
        size_t n = tl_progress_format(buf, sizeof buf, cases[i].phase, cases[i].done,
                                      cases[i].total, cases[i].elapsed_ns);
        ck_assert_str_eq(buf, cases[i].want);
        ck_assert_uint_eq(n, strlen(cases[i].want));
    }
    char small[10];
    size_t n = tl_progress_format(small, sizeof small, "reading", 0, 4 * MiB, 0);
    ck_assert_str_eq(small, "reading 0"); /* cut, NUL-terminated, full length returned */
    ck_assert_uint_eq(n, strlen("reading 0 B of 4.00 MiB (0%)"));
}
END_TEST

/* What a pass writes to fd: read back from the pipe. */
static size_t drain(int fd, char *buf, size_t n)
{
    ssize_t got = read(fd, buf, n - 1);
    buf[got > 0 ? got : 0] = '\0';
    return got > 0 ? (size_t)got : 0;
}

START_TEST(progress_draw_and_clear)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    char buf[1024];

    tl_progress_begin("reading", 4 * MiB); /* off: counts, writes nothing */
    tl_progress_add(4 * MiB);
    tl_progress_end();

    tl_progress_enable(p[1]);
    tl_progress_begin("reading", 4 * MiB); /* the first line: drawn at once */
    tl_progress_end();
    size_t n = drain(p[0], buf, sizeof buf);
    const char *line = "\rtensorleak: reading 0 B of 4.00 MiB (0%)";
    size_t len = strlen(line);
    ck_assert_uint_eq(n, len + 1 + (len - 1) + 1); /* the line, then \r, spaces, \r */
    ck_assert(!memcmp(buf, line, len));
    ck_assert_int_eq(buf[len], '\r');
    for (size_t i = len + 1; i < n - 1; i++)
        ck_assert_int_eq(buf[i], ' ');
    ck_assert_int_eq(buf[n - 1], '\r');

    tl_progress_end(); /* nothing drawn: nothing to clear */
    ck_assert_uint_eq(drain(p[0], buf, sizeof buf), 0);
    tl_progress_enable(-1);
    close(p[0]);
    close(p[1]);
}
END_TEST

Suite *make_progress_suite(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("line");
    tcase_add_test(tc, progress_format);
    tcase_add_test(tc, progress_draw_and_clear);
    suite_add_tcase(s, tc);
    return s;
}
