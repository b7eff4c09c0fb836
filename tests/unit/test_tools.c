/* test_tools.c - Check suites for the CLI's helpers: size parsing, and
 * finding a run's processes in /proc. */
#include "config.h"
#include "tools/procs.h"
#include "tools/size.h"
#include "tests/unit/check_main.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* Starts /bin/sleep 30 with the environment env; returns once it has
 * exec'd (its exe is sleep, its environment reads what env holds). */
static pid_t spawn_sleep(char *const env[])
{
    char *const argv[] = {"sleep", "30", NULL};
    pid_t pid;
    ck_assert_int_eq(posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, env), 0);
    size_t want = 0;
    for (size_t i = 0; env[i]; i++)
        want += strlen(env[i]) + 1;
    char path[64], exe[PATH_MAX], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    for (int tries = 0; tries < 2000; tries++) {
        ssize_t n = readlink(path, exe, sizeof exe - 1);
        snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
        FILE *f = fopen(path, "r");
        size_t got = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (f) fclose(f);
        snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
        if (n > 6 && !strncmp(exe + n - 6, "/sleep", 6) && got == want) return pid;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    ck_abort_msg("sleep (pid %d) did not exec", (int)pid);
    return pid;
}

/* Where pid is in the n (of cap) procs: its index, or -1. */
static int proc_at(const tl_proc_t *procs, size_t n, size_t cap, pid_t pid)
{
    for (size_t i = 0; i < n && i < cap; i++)
        if (procs[i].pid == pid) return (int)i;
    return -1;
}

/* A session is matched whole (not as a prefix either way), and the
 * agent's own off switch takes a process out, as the agent reads it
 * (TENSORLEAK_DISABLE set and not "0"). agent_mapped says whether the
 * process maps the file named. A process with an empty environment,
 * started after the caller, is listed for any session, as one that maps
 * no agent (it may be in the midst of an exec). */
START_TEST(procs_of_session)
{
    char sess[64], longer[64], shorter[64];
    uint64_t id = 100000 + (uint64_t)getpid() * 7 + (uint64_t)time(NULL) % 1000;
    snprintf(sess, sizeof sess, "TENSORLEAK_SESSION=%" PRIu64, id);
    snprintf(longer, sizeof longer, "TENSORLEAK_SESSION=%" PRIu64 "0", id);
    snprintf(shorter, sizeof shorter, "TENSORLEAK_SESSION=%" PRIu64, id / 10);
    char *const in[] = {"A=1", sess, NULL};
    char *const off[] = {sess, "TENSORLEAK_DISABLE=1", NULL};
    char *const on0[] = {"TENSORLEAK_DISABLE=0", sess, NULL};
    char *const on_empty[] = {sess, "TENSORLEAK_DISABLE=", NULL};
    char *const other_long[] = {longer, NULL};
    char *const other_short[] = {shorter, NULL};
    char *const none[] = {NULL};
    pid_t p_in = spawn_sleep(in), p_off = spawn_sleep(off), p_on0 = spawn_sleep(on0),
          p_on_empty = spawn_sleep(on_empty), p_long = spawn_sleep(other_long),
          p_short = spawn_sleep(other_short), p_none = spawn_sleep(none);
    enum { CAP = 4096 };
    static tl_proc_t procs[CAP];
    size_t n = tl_procs_of_session(id, "/bin/sleep", procs, CAP);
    ck_assert_uint_le(n, CAP);
    int at = proc_at(procs, n, CAP, p_in);
    ck_assert_int_ge(at, 0);
    ck_assert(procs[at].agent_mapped); /* sleep maps /bin/sleep */
    ck_assert_int_ge(proc_at(procs, n, CAP, p_on0), 0);
    ck_assert_int_ge(proc_at(procs, n, CAP, p_on_empty), 0);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_off), -1);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_long), -1);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_short), -1);
    at = proc_at(procs, n, CAP, p_none);
    ck_assert_int_ge(at, 0);
    ck_assert(!procs[at].agent_mapped);
    ck_assert_int_eq(proc_at(procs, n, CAP, getpid()), -1);
    /* another file: mapped by none of them */
    n = tl_procs_of_session(id, "/bin/true", procs, CAP);
    at = proc_at(procs, n, CAP, p_in);
    ck_assert_int_ge(at, 0);
    ck_assert(!procs[at].agent_mapped);
    /* the first cap only, but all counted */
    size_t all = tl_procs_of_session(id, "/bin/sleep", procs, CAP);
    ck_assert_uint_ge(all, 4);
    ck_assert_uint_eq(tl_procs_of_session(id, "/bin/sleep", procs, 1), all);
    /* zombies are passed: p_in dead but not reaped */
    kill(p_in, SIGKILL);
    for (int tries = 0; tries < 2000; tries++) {
        n = tl_procs_of_session(id, "/bin/sleep", procs, CAP);
        if (proc_at(procs, n, CAP, p_in) < 0) break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    ck_assert_int_eq(proc_at(procs, n, CAP, p_in), -1);
    pid_t all_pids[] = {p_in, p_off, p_on0, p_on_empty, p_long, p_short, p_none};
    for (size_t i = 0; i < sizeof all_pids / sizeof all_pids[0]; i++) {
        kill(all_pids[i], SIGKILL);
        waitpid(all_pids[i], NULL, 0);
    }
}
END_TEST

static Suite *make_procs_suite(void)
{
    Suite *s = suite_create("procs");
    TCase *tc = tcase_create("session");
    tcase_add_test(tc, procs_of_session);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_size_suite, make_procs_suite)
