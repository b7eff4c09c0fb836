/* test_endings.c - unit tests of how a trace ends: the SIGTERM end point's
 * sigaction view (endsig.c) and the writer's reserve chunk for the END on a
 * full disk (writer.c). */
#include <config.h>

#include "agent/endsig.h"
#include "agent/tsd.h"
#include "agent/writer.h"
#include "common/trace_format.h"
#include "tests/unit/check_main.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* A stand-in for libc's sigaction: the SIGTERM and SIGINT dispositions
 * (SIGINT at SIG_DFL unless a test sets it), calls counted; EINVAL for
 * any other signal. */
static struct sigaction fake_term, fake_int;
static int fake_calls;

static int fake_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    fake_calls++;
    struct sigaction *d = sig == SIGTERM ? &fake_term : sig == SIGINT ? &fake_int : NULL;
    if (!d) {
        errno = EINVAL;
        return -1;
    }
    if (old) *old = *d;
    if (act) *d = *act;
    return 0;
}

static void dummy_handler(int sig)
{
    (void)sig;
}

static struct sigaction with_handler(void (*h)(int))
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = h;
    sigemptyset(&a.sa_mask);
    return a;
}

START_TEST(endsig_hidden_while_default)
{
    fake_term = with_handler(SIG_DFL);
    tl_endsig_init(fake_sigaction, NULL);
    ck_assert_ptr_ne((void *)fake_term.sa_handler, (void *)SIG_DFL); /* ours is installed */
    struct sigaction seen;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)SIG_DFL); /* the program sees SIG_DFL */
    ck_assert_int_eq(seen.sa_flags, 0);
    /* Setting SIG_DFL again keeps ours, and remembers the flags asked for. */
    struct sigaction dfl = with_handler(SIG_DFL);
    dfl.sa_flags = SA_RESTART;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, &dfl, NULL), 0);
    ck_assert_ptr_ne((void *)fake_term.sa_handler, (void *)SIG_DFL);
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, NULL, &seen), 0);
    ck_assert_int_eq(seen.sa_flags, SA_RESTART);
}
END_TEST

START_TEST(endsig_program_handler_wins)
{
    fake_term = with_handler(SIG_DFL);
    tl_endsig_init(fake_sigaction, NULL);
    struct sigaction mine = with_handler(dummy_handler), old;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, &mine, &old), 0);
    ck_assert_ptr_eq((void *)old.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_eq((void *)fake_term.sa_handler, (void *)dummy_handler);
    /* From now on the program's calls go straight through. */
    struct sigaction seen;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)dummy_handler);
    /* Back to SIG_DFL: the agent's handler again, the old one reported. */
    struct sigaction dfl = with_handler(SIG_DFL);
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, &dfl, &old), 0);
    ck_assert_ptr_eq((void *)old.sa_handler, (void *)dummy_handler);
    ck_assert_ptr_ne((void *)fake_term.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_ne((void *)fake_term.sa_handler, (void *)dummy_handler);
    /* SIG_IGN is the program's choice too. */
    struct sigaction ign = with_handler(SIG_IGN);
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, &ign, &old), 0);
    ck_assert_ptr_eq((void *)old.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_eq((void *)fake_term.sa_handler, (void *)SIG_IGN);
}
END_TEST

START_TEST(endsig_not_taken_from_a_handler)
{
    fake_term = with_handler(dummy_handler);
    tl_endsig_init(fake_sigaction, NULL);
    ck_assert_ptr_eq((void *)fake_term.sa_handler, (void *)dummy_handler);
    struct sigaction seen;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)dummy_handler);
    /* Other signals always go straight through. */
    int before = fake_calls;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGUSR1, NULL, &seen), -1);
    ck_assert_int_eq(fake_calls, before + 1);
}
END_TEST

/* SIGINT (Ctrl-C; CPython's end on a KeyboardInterrupt) is taken on its
 * own: at SIG_DFL it is the agent's while SIGTERM stays the program's; a
 * SIG_IGN at start (a shell's background job) is left alone; SIG_DFL set
 * later takes it, the view then holding the flags the program asked for. */
START_TEST(endsig_sigint_on_its_own)
{
    fake_term = with_handler(dummy_handler);
    fake_int = with_handler(SIG_DFL);
    tl_endsig_init(fake_sigaction, NULL);
    ck_assert_ptr_eq((void *)fake_term.sa_handler, (void *)dummy_handler);
    ck_assert_ptr_ne((void *)fake_int.sa_handler, (void *)SIG_DFL); /* ours */
    struct sigaction seen;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGINT, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)SIG_DFL);

    fake_int = with_handler(SIG_IGN);
    tl_endsig_init(fake_sigaction, NULL);
    ck_assert_ptr_eq((void *)fake_int.sa_handler, (void *)SIG_IGN);
    struct sigaction dfl = with_handler(SIG_DFL), old;
    dfl.sa_flags = SA_RESTART;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGINT, &dfl, &old), 0);
    ck_assert_ptr_eq((void *)old.sa_handler, (void *)SIG_IGN);
    ck_assert_ptr_ne((void *)fake_int.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_ne((void *)fake_int.sa_handler, (void *)SIG_IGN);
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGINT, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)SIG_DFL);
    ck_assert_int_eq(seen.sa_flags, SA_RESTART);
}
END_TEST

static int end_pipe[2];

static bool on_end(int sig, bool scan_room)
{
    (void)scan_room;
    unsigned char b = (unsigned char)sig;
    if (write(end_pipe[1], &b, 1) != 1) _exit(3);
    return false;
}

static int end_calls;

/* Inside the agent at the first call (the agent's finish_signal sees its
 * guard held): nothing done, 'B' written. */
static bool on_end_busy_once(int sig, bool scan_room)
{
    if (end_calls++ == 0) {
        if (write(end_pipe[1], "B", 1) != 1) _exit(3);
        return true;
    }
    return on_end(sig, scan_room);
}

/* The real thing in a child: the end callback runs, then the child still
 * dies by SIGTERM. */
/* What the kernel holds decides, not the agent's flag: a handler put in
 * behind the hooks' back (sigset, a raw rt_sigaction, or a vfork child's
 * reset in shared memory) is reported as it is, and the program's SIG_DFL
 * then reaches the kernel as the agent's handler. */
START_TEST(endsig_kernel_decides)
{
    fake_term = with_handler(SIG_DFL);
    fake_int = with_handler(SIG_DFL);
    tl_endsig_init(fake_sigaction, NULL);
    void (*ours)(int) = fake_int.sa_handler;
    struct sigaction ours_act = fake_int; /* the handler with its flags (SA_SIGINFO) */
    ck_assert_ptr_ne((void *)ours, (void *)SIG_DFL);
    fake_int = with_handler(dummy_handler); /* unseen by the hooks */
    struct sigaction seen;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGINT, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)dummy_handler);
    struct sigaction dfl = with_handler(SIG_DFL), old;
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGINT, &dfl, &old), 0);
    ck_assert_ptr_eq((void *)old.sa_handler, (void *)dummy_handler);
    ck_assert_ptr_eq((void *)fake_int.sa_handler, (void *)ours);
    /* and the other way: ours back in the kernel while the flag says not */
    struct sigaction mine = with_handler(dummy_handler);
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, &mine, NULL), 0);
    fake_term = ours_act; /* a vfork child's SIG_DFL left ours in the parent */
    ck_assert_int_eq(tl_endsig_sigaction(fake_sigaction, SIGTERM, NULL, &seen), 0);
    ck_assert_ptr_eq((void *)seen.sa_handler, (void *)SIG_DFL);
}
END_TEST

START_TEST(endsig_reraises)
{
    ck_assert_int_eq(pipe(end_pipe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        tl_endsig_init(sigaction, on_end);
        kill(getpid(), SIGTERM);
        for (int i = 0; i < 100; i++)
            usleep(10000);
        _exit(0); /* not reached when the signal killed us */
    }
    close(end_pipe[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(WTERMSIG(status), SIGTERM);
    unsigned char b = 0;
    ck_assert_int_eq(read(end_pipe[0], &b, 1), 1);
    ck_assert_int_eq(b, SIGTERM);
    close(end_pipe[0]);
}
END_TEST

/* A SIGTERM inside the agent is held: the program goes on ('C') until the
 * guard drops to 0, where the end callback runs again and the signal kills. */
START_TEST(endsig_held_inside_agent)
{
    ck_assert_int_eq(pipe(end_pipe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        tl_endsig_init(sigaction, on_end_busy_once);
        tl_tsd.guard++;
        kill(getpid(), SIGTERM);
        if (write(end_pipe[1], "C", 1) != 1) _exit(3);
        int tok = 0;
        tl_guard_drop(&tok);
        _exit(0); /* not reached when the held signal killed us */
    }
    close(end_pipe[1]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    ck_assert_int_eq(WTERMSIG(status), SIGTERM);
    unsigned char b[4] = {0};
    ck_assert_int_eq(read(end_pipe[0], b, sizeof b), 3);
    ck_assert_int_eq(b[0], 'B');
    ck_assert_int_eq(b[1], 'C');
    ck_assert_int_eq(b[2], SIGTERM);
    close(end_pipe[0]);
}
END_TEST

/* A file that cannot grow past its first extent: the chunks run out, and
 * the reserve chunk is handed out once, for the END. */
START_TEST(writer_reserve_after_full)
{
    char dir[] = "/tmp/tl-endings.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/t.tlt", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {TL_TRACE_HEADER_BYTES + 128u * TL_TRACE_CHUNK_BYTES + 4096,
                            RLIM_INFINITY};
        rl.rlim_max = rl.rlim_cur;
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(77);
        static tl_writer_t w;
        tl_writer_hdr_t hdr = {.pid = 1, .ppid = 1};
        if (tl_writer_create(&w, path, &hdr) != 0) _exit(10);
        int taken = 0;
        while (tl_writer_chunk_raw(&w))
            taken++;
        if (taken != 127) _exit(11); /* one of the 128 mapped chunks is kept back */
        tl_wcursor_t c = {0};
        tl_wcursor_reset(&c, &w, 1);
        if (tl_writer_take_reserve(&w, &c, 5)) _exit(12);
        if (tl_writer_end(&w, &c, 6, TL_END_EXIT, 0, 1, 1, 0, 99)) _exit(13);
        if (!tl_writer_take_reserve(&w, &c, 7)) _exit(14); /* only once */
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite *make_endsig_suite(void)
{
    Suite *s = suite_create("endsig");
    TCase *tc = tcase_create("sigterm");
    tcase_add_test(tc, endsig_hidden_while_default);
    tcase_add_test(tc, endsig_program_handler_wins);
    tcase_add_test(tc, endsig_not_taken_from_a_handler);
    tcase_add_test(tc, endsig_sigint_on_its_own);
    tcase_add_test(tc, endsig_kernel_decides);
    tcase_add_test(tc, endsig_reraises);
    tcase_add_test(tc, endsig_held_inside_agent);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *make_reserve_suite(void)
{
    Suite *s = suite_create("writer_reserve");
    TCase *tc = tcase_create("full");
    tcase_add_test(tc, writer_reserve_after_full);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_endsig_suite, make_reserve_suite)
