/* test_tools.c - Check suites for the CLI's helpers: size parsing, and
 * finding a run's processes in /proc, a project's own programs. */
#include "config.h"
#include "tools/procs.h"
#include "common/session_mark.h"
#include "tools/project.h"
#include "report/read/reader.h"
#include "tools/size.h"
#include "tests/unit/check_main.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
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

/* The bytes of /proc/PID/environ. */
static size_t environ_bytes(pid_t pid)
{
    char path[64], buf[65536];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    FILE *f = fopen(path, "r");
    size_t got = 0, n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        got += n;
    if (f) fclose(f);
    return got;
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
    char path[64], exe[PATH_MAX];
    snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
    for (int tries = 0; tries < 2000; tries++) {
        ssize_t n = readlink(path, exe, sizeof exe - 1);
        if (n > 6 && !strncmp(exe + n - 6, "/sleep", 6) && environ_bytes(pid) == want) return pid;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    ck_abort_msg("sleep (pid %d) did not exec", (int)pid);
    return pid;
}

static void end_all(const pid_t *pids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
    }
}

/* A session id of this test's own. */
static uint64_t test_session(void)
{
    return 100000 + (uint64_t)getpid() * 7 + (uint64_t)time(NULL) % 1000;
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
    uint64_t id = test_session();
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
    size_t n = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
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
    n = tl_procs_of_session(id, "/bin/true", NULL, 0, procs, CAP);
    at = proc_at(procs, n, CAP, p_in);
    ck_assert_int_ge(at, 0);
    ck_assert(!procs[at].agent_mapped);
    /* the first cap only, but all counted */
    size_t all = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
    ck_assert_uint_ge(all, 4);
    ck_assert_uint_eq(tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, 1), all);
    /* zombies are passed: p_in dead but not reaped */
    kill(p_in, SIGKILL);
    for (int tries = 0; tries < 2000; tries++) {
        n = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
        if (proc_at(procs, n, CAP, p_in) < 0) break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    ck_assert_int_eq(proc_at(procs, n, CAP, p_in), -1);
    pid_t all_pids[] = {p_in, p_off, p_on0, p_on_empty, p_long, p_short, p_none};
    end_all(all_pids, sizeof all_pids / sizeof all_pids[0]);
}
END_TEST

/* Each variable's first occurrence counts, as the agent (and getenv)
 * read them; pids to skip are not listed; each process's inner pid is
 * its own outside a pid namespace. */
START_TEST(procs_first_wins_and_skip)
{
    char sess[64], other[64];
    uint64_t id = test_session();
    snprintf(sess, sizeof sess, "TENSORLEAK_SESSION=%" PRIu64, id);
    snprintf(other, sizeof other, "TENSORLEAK_SESSION=%" PRIu64, id + 1);
    char *const off_first[] = {"TENSORLEAK_DISABLE=1", sess, "TENSORLEAK_DISABLE=0", NULL};
    char *const on_first[] = {"TENSORLEAK_DISABLE=0", sess, "TENSORLEAK_DISABLE=1", NULL};
    char *const other_first[] = {other, sess, NULL};
    char *const ours_first[] = {sess, other, NULL};
    char *const ours[] = {sess, NULL};
    pid_t p_off = spawn_sleep(off_first), p_on = spawn_sleep(on_first),
          p_other = spawn_sleep(other_first), p_ours = spawn_sleep(ours_first),
          p_skip = spawn_sleep(ours);
    enum { CAP = 4096 };
    static tl_proc_t procs[CAP];
    uint64_t skip[] = {1, (uint64_t)p_skip};
    size_t n = tl_procs_of_session(id, "/bin/sleep", skip, 2, procs, CAP);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_off), -1);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_other), -1);
    ck_assert_int_eq(proc_at(procs, n, CAP, p_skip), -1);
    int at = proc_at(procs, n, CAP, p_on);
    ck_assert_int_ge(at, 0);
    ck_assert_int_eq(procs[at].inner_pid, p_on);
    ck_assert_int_ge(proc_at(procs, n, CAP, p_ours), 0);
    n = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
    ck_assert_int_ge(proc_at(procs, n, CAP, p_skip), 0);
    pid_t all_pids[] = {p_off, p_on, p_other, p_ours, p_skip};
    end_all(all_pids, sizeof all_pids / sizeof all_pids[0]);
}
END_TEST

/* A process whose environment does not hold the session (a fork child of
 * a program that rewrote its environment area) is of the run when it maps
 * the run's mark, as the agent makes it (tl_session_mark_name); another
 * session's mark is not ours. */
START_TEST(procs_mark)
{
    uint64_t id = test_session();
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        ck_assert_int_ge(kids[k], 0);
        if (kids[k] == 0) {
            char name[TL_SESSION_MARK_LEN];
            tl_session_mark_name(id + (uint64_t)k, name); /* the second: another run's */
            int fd = memfd_create(name, MFD_CLOEXEC);
            if (fd < 0 || mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE, fd, 0) == MAP_FAILED) _exit(1);
            close(fd);
            char c = 1;
            if (write(go[1], &c, 1) != 1) _exit(1);
            pause();
            _exit(0);
        }
    }
    char c;
    ck_assert_int_eq(read(go[0], &c, 1), 1);
    ck_assert_int_eq(read(go[0], &c, 1), 1);
    enum { CAP = 4096 };
    static tl_proc_t procs[CAP];
    size_t n = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
    int at = proc_at(procs, n, CAP, kids[0]);
    ck_assert_int_ge(at, 0);
    ck_assert(!procs[at].agent_mapped);
    ck_assert_int_eq(proc_at(procs, n, CAP, kids[1]), -1);
    end_all(kids, 2);
    close(go[0]);
    close(go[1]);
}
END_TEST

/* An environment of several MiB (a quarter of a 64 MiB stack limit may
 * hold 16), the session at its end, is read to its end. */
START_TEST(procs_big_environment)
{
    struct rlimit old, big = {64u << 20, 64u << 20};
    ck_assert_int_eq(getrlimit(RLIMIT_STACK, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < big.rlim_max) big.rlim_max = old.rlim_max;
    if (big.rlim_cur > big.rlim_max) big.rlim_cur = big.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_STACK, &big), 0);
    if (big.rlim_cur < (64u << 20)) { /* a hard limit below: nothing to try here */
        setrlimit(RLIMIT_STACK, &old);
        return;
    }
    enum { NVARS = 40, VAR = 120000 };
    static char vars[NVARS][VAR + 16];
    char *env[NVARS + 2];
    for (int i = 0; i < NVARS; i++) {
        int k = snprintf(vars[i], sizeof vars[i], "BIG%d=", i);
        memset(vars[i] + k, 'x', VAR);
        vars[i][k + VAR] = '\0';
        env[i] = vars[i];
    }
    char sess[64];
    uint64_t id = test_session();
    snprintf(sess, sizeof sess, "TENSORLEAK_SESSION=%" PRIu64, id);
    env[NVARS] = sess;
    env[NVARS + 1] = NULL;
    pid_t p = spawn_sleep(env);
    setrlimit(RLIMIT_STACK, &old);
    ck_assert_uint_gt(environ_bytes(p), 4u << 20);
    enum { CAP = 4096 };
    static tl_proc_t procs[CAP];
    size_t n = tl_procs_of_session(id, "/bin/sleep", NULL, 0, procs, CAP);
    ck_assert_int_ge(proc_at(procs, n, CAP, p), 0);
    end_all(&p, 1);
}
END_TEST

static Suite *make_procs_suite(void)
{
    Suite *s = suite_create("procs");
    TCase *tc = tcase_create("session");
    tcase_add_test(tc, procs_of_session);
    tcase_add_test(tc, procs_first_wins_and_skip);
    tcase_add_test(tc, procs_mark);
    tcase_add_test(tc, procs_big_environment);
    suite_add_tcase(s, tc);
    return s;
}

/* A project's own program: under the working directory, out of Python
 * environments; never with "/" or "" for the directory. */
START_TEST(project_program)
{
    char dir[] = "/tmp/tl-project-XXXXXX", p[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/venv", dir);
    ck_assert_int_eq(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/venv/pyvenv.cfg", dir);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(p, sizeof p, "%s/build/test_a", dir);
    ck_assert(tl_project_program(p, dir));
    char slash[256];
    snprintf(slash, sizeof slash, "%s/", dir);
    ck_assert(tl_project_program(p, slash));
    snprintf(p, sizeof p, "%s/venv/bin/ninja", dir);
    ck_assert(!tl_project_program(p, dir));
    snprintf(p, sizeof p, "%s/lib/site-packages/triton/bin/ptxas", dir);
    ck_assert(!tl_project_program(p, dir));
    snprintf(p, sizeof p, "%sx/test_a", dir); /* a sibling that starts alike */
    ck_assert(!tl_project_program(p, dir));
    ck_assert(!tl_project_program("/usr/bin/bash", "/"));
    ck_assert(!tl_project_program("/usr/bin/bash", ""));
    ck_assert(!tl_project_program("/usr/bin/bash", "/usr/lib"));
    /* a third party's tool: a GPU toolkit's, a Python environment's */
    ck_assert(tl_project_third_party("/usr/local/cuda-12.4/bin/nvcc"));
    ck_assert(tl_project_third_party("/opt/rocm/bin/hipcc"));
    ck_assert(!tl_project_third_party("/usr/local/bin/myserver"));
    snprintf(p, sizeof p, "%s/venv/bin/ninja", dir);
    ck_assert(tl_project_third_party(p));
    snprintf(p, sizeof p, "%s/lib/python3.12/site-packages/triton/bin/ptxas", dir);
    ck_assert(tl_project_third_party(p));
    snprintf(p, sizeof p, "%s/build/test_a", dir);
    ck_assert(!tl_project_third_party(p));
    /* from a subdirectory of a repository: its root is the project's */
    char sub[256], git[256];
    snprintf(sub, sizeof sub, "%s/tests", dir);
    snprintf(p, sizeof p, "%s/build/test_a", dir);
    ck_assert(!tl_project_program(p, sub));
    snprintf(git, sizeof git, "%s/.git", dir);
    ck_assert_int_eq(mkdir(git, 0700), 0);
    ck_assert(tl_project_program(p, sub));
    rmdir(git);
    snprintf(p, sizeof p, "%s/venv/pyvenv.cfg", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/venv", dir);
    rmdir(p);
    rmdir(dir);
}
END_TEST

/* tl_project_own: a program named by a path under the project's root, its
 * real executable elsewhere (bazel-bin), and one in pytest's temporary
 * directories are the project's own; a system or third party's tool never. */
static tl_trace_info_t *proc_info(tl_trace_info_t *p, const char *exe, const char *argv0,
                                  const char *cwd)
{
    memset(p, 0, sizeof *p);
    p->has_process = true;
    snprintf(p->exe, sizeof p->exe, "%s", exe);
    snprintf(p->argv0, sizeof p->argv0, "%s", argv0);
    snprintf(p->cwd, sizeof p->cwd, "%s", cwd);
    return p;
}

/* tl_project_own of a process (exe, argv0, cwd) of a run whose main
 * process ran in /w/proj */
static bool own(const char *exe, const char *argv0, const char *cwd)
{
    static tl_trace_info_t main, info;
    proc_info(&main, "/usr/bin/python3.11", "python3", "/w/proj");
    return tl_project_own(proc_info(&info, exe, argv0, cwd), &main);
}

START_TEST(project_own)
{
    const char *cache = "/root/.cache/bazel/_bazel_root/1f/execroot/ws/bazel-out/k8/bin/pkg/t";
    ck_assert(own("/w/proj/build/t", "/w/proj/build/t", "/w"));
    ck_assert(!own(cache, "t", "/w/proj"));
    ck_assert(own(cache, "bazel-bin/pkg/t", "/w/proj"));
    ck_assert(own(cache, "./bazel-bin/pkg/../pkg/t", "/w/proj"));
    ck_assert(own(cache, "/w/proj/bazel-bin/pkg/t", "/"));
    ck_assert(own(cache, "../proj/bazel-bin/pkg/t", "/w/x"));
    ck_assert(!own(cache, "../bazel-bin/pkg/t", "/w/proj"));
    ck_assert(!own(cache, "bazel-bin/pkg/t", ""));
    ck_assert(!own(cache, "/w/projx/t", "/"));
    ck_assert(own("/tmp/pytest-of-ci/pytest-3/test_leak0/prog", "prog", "/"));
    ck_assert(!own("/tmp/pytest-of-ci", "/tmp/pytest-of-ci", "/"));
    ck_assert(!own("/tmp/build/prog", "/tmp/build/prog", "/tmp"));
    /* tools stay tools, however they are named */
    ck_assert(!own("/usr/bin/make", "/w/proj/bin/make", "/"));
    ck_assert(!own("/usr/local/cuda/bin/nvcc", "tools/nvcc", "/w/proj"));
    tl_trace_info_t main, none;
    proc_info(&main, "/usr/bin/python3.11", "python3", "/w/proj");
    proc_info(&none, "/w/proj/build/t", "t", "/w/proj");
    none.has_process = false;
    ck_assert(!tl_project_own(&none, &main));
}
END_TEST

static Suite *make_project_suite(void)
{
    Suite *s = suite_create("project");
    TCase *tc = tcase_create("own");
    tcase_add_test(tc, project_program);
    tcase_add_test(tc, project_own);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_size_suite, make_procs_suite, make_project_suite)
