/* test_agent.c - Check suites for src/agent: config parsing, stack ids, and
 * the trace writer (concurrent writers, read back, truncated file). Links
 * libtlagent.la, never the preload library: Check's mallocs stay glibc's. */
#include <config.h>

#include "agent/api.h"
#include "agent/blocks.h"
#include "agent/config.h"
#include "agent/cudart_static.h"
#include "agent/follow.h"
#include "agent/numpy.h"
#include "agent/numpy_copy.h"
#include "agent/stack.h"
#include "agent/stackdelta.h"
#include "agent/unwinder.h"
#include "agent/vm.h"
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include "agent/writer.h"
#include "common/trace_format.h"
#include "tests/unit/check_main.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- lineage API ---- */

/* TENSORLEAK_DISABLE=1: the agent serves no table (the Python package and
 * tensorleak.h then stay idle); unknown versions are refused. */
START_TEST(api_disabled_gives_no_table)
{
    ck_assert_ptr_null(tl_api_table(0));
    ck_assert_ptr_null(tl_api_table(TL_AGENT_API_VERSION + 1));
    setenv("TENSORLEAK_DISABLE", "1", 1);
    ck_assert_ptr_null(tl_api_table(TL_AGENT_API_VERSION));
    ck_assert_ptr_null(tl_api_table(1));
}
END_TEST

static Suite *make_api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, api_disabled_gives_no_table);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- live-block shadow ---- */

START_TEST(blocks_states)
{
    static _Alignas(64) unsigned char heap[256]; /* stands for blocks of 16 and 32 bytes */
    void *a = heap, *b = heap + 16, *c = heap + 64;
    tl_blocks_mark(a);
    tl_blocks_mark(b);
    ck_assert_int_eq(tl_blocks_check(a, false), TL_BLOCK_LIVE); /* realloc's look */
    ck_assert_int_eq(tl_blocks_check(a, true), TL_BLOCK_LIVE);
    ck_assert_int_eq(tl_blocks_check(a, true), TL_BLOCK_FREED); /* double free */
    ck_assert_int_eq(tl_blocks_check(b, true), TL_BLOCK_LIVE);  /* the neighbour is its own */
    ck_assert_int_eq(tl_blocks_check(c, true), TL_BLOCK_NEVER);
    ck_assert_int_eq(tl_blocks_check(heap + 8, true), TL_BLOCK_MISALIGNED);
    unsigned char on_stack[16];
    ck_assert_int_ne(tl_blocks_check(on_stack, true), TL_BLOCK_LIVE);
    ck_assert_int_eq(tl_blocks_check((void *)(UINT64_C(1) << 50), true), TL_BLOCK_NEVER);
    tl_blocks_mark(a); /* reused: live again */
    ck_assert_int_eq(tl_blocks_check(a, true), TL_BLOCK_LIVE);
}
END_TEST

/* ---- config ---- */

START_TEST(config_defaults)
{
    tl_config_t c;
    const char *env[] = {"PATH=/bin", NULL};
    tl_config_parse(&c, env, 42);
    ck_assert(!c.disable);
    ck_assert_uint_eq(c.stack_depth, 64);
    ck_assert(!c.depth_invalid);
    ck_assert_uint_eq(c.session, 0);
    ck_assert_uint_eq(c.exec_seq, 0);
    ck_assert_str_eq(c.output, "tensorleak.%p.tlt");
    ck_assert(!c.no_stack_delta); /* STACK_DELTA records unless told */
    const char *off[] = {"TENSORLEAK_STACK_DELTA=0", NULL};
    tl_config_parse(&c, off, 42);
    ck_assert(c.no_stack_delta);
    const char *on[] = {"TENSORLEAK_STACK_DELTA=1", NULL};
    tl_config_parse(&c, on, 42);
    ck_assert(!c.no_stack_delta);
}
END_TEST

/* Secure execution: the environment never counts; the admin file does. */
START_TEST(config_secure)
{
    tl_config_t c;
    tl_config_parse_secure(&c, NULL, 42);
    ck_assert(c.disable); /* no admin file: nothing recorded */
    char admin[] = "# tensorleak for setuid programs\n"
                   "TENSORLEAK_OUTPUT=/var/log/tl/%p.tlt\n"
                   "  TENSORLEAK_MODE=all\n"
                   "PATH=/bin\n"
                   "\n"
                   "TENSORLEAK_STACK_DEPTH=8";
    tl_config_parse_secure(&c, admin, 42);
    ck_assert(!c.disable);
    ck_assert_str_eq(c.output, "/var/log/tl/%p.tlt");
    ck_assert_int_eq(c.mode, TL_MODE_ALL);
    ck_assert_uint_eq(c.stack_depth, 8);
    char relative[] = "TENSORLEAK_OUTPUT=t.%p.tlt\n";
    tl_config_parse_secure(&c, relative, 42);
    ck_assert(c.disable); /* a relative path is the caller's cwd: refused */
    char empty[] = "";
    tl_config_parse_secure(&c, empty, 42);
    ck_assert(c.disable); /* no output named */
}
END_TEST

START_TEST(config_values)
{
    tl_config_t c;
    const char *env[] = {"TENSORLEAK_DISABLE=1",
                         "TENSORLEAK_STACK_DEPTH=12",
                         "TENSORLEAK_SESSION=18446744073709551615",
                         "TENSORLEAK_OUTPUT=/x/%p-%%.tlt",
                         "TENSORLEAK_EXEC_SEQ=42:3",
                         NULL};
    tl_config_parse(&c, env, 42);
    ck_assert(c.disable);
    ck_assert_uint_eq(c.stack_depth, 12);
    ck_assert_uint_eq(c.session, UINT64_MAX);
    ck_assert_uint_eq(c.exec_seq, 3);
    ck_assert_str_eq(c.output, "/x/%p-%%.tlt");
    /* another pid's count was inherited across fork: this image is the first */
    tl_config_parse(&c, env, 43);
    ck_assert_uint_eq(c.exec_seq, 0);
    const char *off[] = {"TENSORLEAK_DISABLE=0", "TENSORLEAK_EXEC_SEQ=junk", NULL};
    tl_config_parse(&c, off, 42);
    ck_assert(!c.disable);
    ck_assert_uint_eq(c.exec_seq, 0);
}
END_TEST

START_TEST(config_depth_clamp)
{
    static const struct {
        const char *env;
        unsigned depth;
        bool invalid;
    } cases[] = {
        {"TENSORLEAK_STACK_DEPTH=0", 1, false},
        {"TENSORLEAK_STACK_DEPTH=1", 1, false},
        {"TENSORLEAK_STACK_DEPTH=1024", 1024, false},
        {"TENSORLEAK_STACK_DEPTH=1025", 1024, false},
        {"TENSORLEAK_STACK_DEPTH=99999999999999999999999", 64, true},
        {"TENSORLEAK_STACK_DEPTH=-5", 64, true},
        {"TENSORLEAK_STACK_DEPTH=12x", 64, true},
        {"TENSORLEAK_STACK_DEPTH=", 64, true},
        {"TENSORLEAK_STACK_DEPTH= 8", 64, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_config_t c;
        const char *env[] = {cases[i].env, NULL};
        tl_config_parse(&c, env, 1);
        ck_assert_msg(c.stack_depth == cases[i].depth, "%s -> %u", cases[i].env, c.stack_depth);
        ck_assert_msg(c.depth_invalid == cases[i].invalid, "%s invalid flag", cases[i].env);
    }
}
END_TEST

START_TEST(config_parse_u64)
{
    uint64_t v = 7;
    ck_assert(!tl_config_parse_u64("0", &v) && v == 0);
    ck_assert(!tl_config_parse_u64("18446744073709551615", &v) && v == UINT64_MAX);
    ck_assert(tl_config_parse_u64("18446744073709551616", &v));
    ck_assert(tl_config_parse_u64("", &v));
    ck_assert(tl_config_parse_u64(NULL, &v));
    ck_assert(tl_config_parse_u64("+1", &v));
    ck_assert(tl_config_parse_u64("1 ", &v));
}
END_TEST

START_TEST(config_expand)
{
    char out[64];
    ck_assert_int_eq(tl_config_expand("tensorleak.%p.tlt", NULL, 1234, NULL, 0, out, sizeof out),
                     0);
    ck_assert_str_eq(out, "tensorleak.1234.tlt");
    ck_assert_int_eq(tl_config_expand("tensorleak.%p.tlt", "/w", 1234, NULL, 1, out, sizeof out),
                     0);
    ck_assert_str_eq(out, "/w/tensorleak.1234.1.tlt");
    ck_assert_int_eq(tl_config_expand("/abs/t.tlt", "/w", 5, NULL, 12, out, sizeof out), 0);
    ck_assert_str_eq(out, "/abs/t.12.tlt");
    ck_assert_int_eq(tl_config_expand("a%%b%p%q", NULL, 7, NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "a%b7%q");
    ck_assert_int_eq(tl_config_expand("d.x/trace", NULL, 7, NULL, 2, out, sizeof out), 0);
    ck_assert_str_eq(out, "d.x/trace.2"); /* no extension: appended */
    ck_assert_int_eq(tl_config_expand("d/.hidden", NULL, 7, NULL, 3, out, sizeof out), 0);
    ck_assert_str_eq(out, "d/.hidden.3");
    ck_assert_int_eq(tl_config_expand("%p", NULL, 0, NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "0");
    ck_assert_int_eq(tl_config_expand("t.%h.%p.tlt", NULL, 9, "node-a", 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "t.node-a.9.tlt");
    ck_assert_int_eq(tl_config_expand("t.%h.tlt", NULL, 9, NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "t.%h.tlt");
    ck_assert_int_eq(tl_config_expand("%p", NULL, 0, NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "0");
    ck_assert_int_eq(tl_config_expand("0123456789", NULL, 1, NULL, 0, out, 10), -ENAMETOOLONG);
    ck_assert_int_eq(tl_config_expand("012345678", NULL, 1, NULL, 0, out, 10), 0);
    ck_assert_int_eq(tl_config_expand("0123456.x", NULL, 1, NULL, 1, out, 10), -ENAMETOOLONG);
    char env[64];
    ck_assert_int_eq(tl_config_exec_seq_env(env, sizeof env, 99, 2), 0);
    ck_assert_str_eq(env, "TENSORLEAK_EXEC_SEQ=99:2");
    ck_assert_int_eq(tl_config_exec_seq_env(env, 10, 99, 2), -ENAMETOOLONG);
}
END_TEST

START_TEST(config_parse_size)
{
    uint64_t v = 7;
    ck_assert(!tl_config_parse_size("0", &v) && v == 0);
    ck_assert(!tl_config_parse_size("1048576", &v) && v == 1048576);
    ck_assert(!tl_config_parse_size("4096B", &v) && v == 4096);
    ck_assert(!tl_config_parse_size("4K", &v) && v == 4096);
    ck_assert(!tl_config_parse_size("4KiB", &v) && v == 4096);
    ck_assert(!tl_config_parse_size("4KB", &v) && v == 4000);
    ck_assert(!tl_config_parse_size("2MiB", &v) && v == 2u << 20);
    ck_assert(!tl_config_parse_size("3MB", &v) && v == 3000000);
    ck_assert(!tl_config_parse_size("1GiB", &v) && v == 1u << 30);
    ck_assert(!tl_config_parse_size("1TiB", &v) && v == UINT64_C(1) << 40);
    ck_assert(!tl_config_parse_size("18446744073709551615", &v) && v == UINT64_MAX);
    v = 7;
    const char *bad[] = {"",
                         "-1",
                         " 1",
                         "1 ",
                         "1.5MiB",
                         "MiB",
                         "1Mi",
                         "1kb",
                         "17179869184GiB",
                         "18446744073709551616",
                         "99999999999999999999999",
                         NULL};
    for (const char **b = bad; *b; b++)
        ck_assert_msg(tl_config_parse_size(*b, &v), "accepted '%s'", *b);
    ck_assert_uint_eq(v, 7);
    ck_assert(tl_config_parse_size(NULL, &v));
}
END_TEST

START_TEST(config_fingerprint_and_python_dir)
{
    tl_config_t c;
    const char *none[] = {NULL};
    tl_config_parse(&c, none, 1);
    ck_assert_uint_eq(c.fingerprint_min, 1u << 20);
    ck_assert(!c.fingerprint_min_invalid);
    ck_assert_str_eq(c.python_dir, "");
    const char *env[] = {"TENSORLEAK_FINGERPRINT_MIN=65536", "TENSORLEAK_PYTHON_DIR=/opt/tl/py",
                         NULL};
    tl_config_parse(&c, env, 1);
    ck_assert_uint_eq(c.fingerprint_min, 65536);
    ck_assert_str_eq(c.python_dir, "/opt/tl/py");
    ck_assert(!c.no_python_frames);
    const char *nopy[] = {"TENSORLEAK_PYTHON_FRAMES=0", NULL};
    tl_config_parse(&c, nopy, 1);
    ck_assert(c.no_python_frames);
    const char *unit[] = {"TENSORLEAK_FINGERPRINT_MIN=8MiB", NULL};
    tl_config_parse(&c, unit, 1);
    ck_assert_uint_eq(c.fingerprint_min, 8u << 20);
    const char *bad[] = {"TENSORLEAK_FINGERPRINT_MIN=lots", NULL};
    tl_config_parse(&c, bad, 1);
    ck_assert_uint_eq(c.fingerprint_min, 1u << 20);
    ck_assert(c.fingerprint_min_invalid);
}
END_TEST

/* vm.h: a table's share of a finite RLIMIT_AS is 1/64; none: as asked. */
START_TEST(vm_fit_lg_under_limits)
{
    ck_assert_uint_eq(tl_vm_fit_lg(UINT64_MAX, 20, 12, 48), 20);
    /* 400000 KiB / 64 = 6.4 MB: 48 B x 2^18 = 12.6 MB is over, 2^17 (6.29 MB) fits */
    ck_assert_uint_eq(tl_vm_fit_lg(400000u * 1024, 20, 12, 48), 17);
    ck_assert_uint_eq(tl_vm_fit_lg((uint64_t)48 << 26, 20, 12, 48), 20); /* exactly 1/64 */
    ck_assert_uint_eq(tl_vm_fit_lg(1 << 20, 20, 12, 48), 12);            /* the floor */
    ck_assert(tl_vm_fits(UINT64_MAX, (size_t)1 << 40));
    ck_assert(tl_vm_fits((uint64_t)4 << 30, (size_t)64 << 20));
    ck_assert(!tl_vm_fits((uint64_t)4 << 30, ((size_t)64 << 20) + 1));
}
END_TEST

static Suite *make_config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, config_defaults);
    tcase_add_test(tc, blocks_states);
    tcase_add_test(tc, config_values);
    tcase_add_test(tc, config_secure);
    tcase_add_test(tc, config_depth_clamp);
    tcase_add_test(tc, config_parse_u64);
    tcase_add_test(tc, config_expand);
    tcase_add_test(tc, config_parse_size);
    tcase_add_test(tc, config_fingerprint_and_python_dir);
    tcase_add_test(tc, vm_fit_lg_under_limits);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- stack ---- */

START_TEST(stack_intern_same_and_different)
{
    tl_stack_table_t t = {0};
    ck_assert(!tl_stack_table_init(&t, 10));
    uint64_t a[] = {0x401000, 0x402000, 0x403000}, b[] = {0x401000, 0x402000, 0x403001};
    bool is_new;
    uint64_t ida = tl_stack_intern(&t, a, 3, &is_new);
    ck_assert_uint_eq(ida, 1);
    ck_assert(is_new);
    ck_assert_uint_eq(tl_stack_intern(&t, a, 3, &is_new), 1);
    ck_assert(!is_new);
    uint64_t idb = tl_stack_intern(&t, b, 3, &is_new);
    ck_assert_uint_eq(idb, 2);
    ck_assert(is_new);
    ck_assert_uint_eq(tl_stack_intern(&t, a, 2, &is_new), 3); /* a prefix is another stack */
    ck_assert_uint_eq(tl_stack_intern(&t, b, 3, &is_new), 2);
    ck_assert(!is_new);
    ck_assert_uint_eq(tl_stack_intern(&t, a, 0, &is_new), 0);
    ck_assert(!is_new);
    tl_stack_table_reset(&t);
    ck_assert_uint_eq(tl_stack_intern(&t, b, 3, &is_new), 1); /* ids restart */
    ck_assert(is_new);
    tl_stack_table_destroy(&t);
}
END_TEST

START_TEST(stack_table_full)
{
    tl_stack_table_t t = {0};
    ck_assert(!tl_stack_table_init(&t, 3)); /* 8 slots */
    bool is_new;
    uint64_t f[1];
    for (uint64_t i = 0; i < 8; i++) {
        f[0] = 0x1000 + i;
        ck_assert_uint_eq(tl_stack_intern(&t, f, 1, &is_new), i + 1);
        ck_assert(is_new);
    }
    ck_assert_uint_eq(atomic_load(&t.full_count), 0);
    /* Full: a new stack still gets a fresh id and must be written. */
    f[0] = 0x9999;
    ck_assert_uint_eq(tl_stack_intern(&t, f, 1, &is_new), 9);
    ck_assert(is_new);
    ck_assert_uint_eq(tl_stack_intern(&t, f, 1, &is_new), 10);
    ck_assert(is_new);
    ck_assert_uint_eq(atomic_load(&t.full_count), 2);
    /* Stacks already in the table keep their ids. */
    f[0] = 0x1003;
    ck_assert_uint_eq(tl_stack_intern(&t, f, 1, &is_new), 4);
    ck_assert(!is_new);
    tl_stack_table_destroy(&t);
}
END_TEST

#define INTERN_THREADS 4
static tl_stack_table_t shared_table;
static uint64_t seen_ids[INTERN_THREADS][256];

static void *intern_thread(void *arg)
{
    size_t k = (size_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 256; i++) {
        uint64_t f[2] = {i, i * 3};
        bool is_new;
        seen_ids[k][i] = tl_stack_intern(&shared_table, f, 2, &is_new);
    }
    return NULL;
}

START_TEST(stack_intern_concurrent)
{
    ck_assert(!tl_stack_table_init(&shared_table, 12));
    pthread_t th[INTERN_THREADS];
    for (size_t k = 0; k < INTERN_THREADS; k++)
        pthread_create(&th[k], NULL, intern_thread, (void *)(uintptr_t)k);
    for (size_t k = 0; k < INTERN_THREADS; k++)
        pthread_join(th[k], NULL);
    for (size_t i = 0; i < 256; i++)
        for (size_t k = 1; k < INTERN_THREADS; k++)
            ck_assert_uint_eq(seen_ids[k][i], seen_ids[0][i]);
    ck_assert_uint_eq(atomic_load(&shared_table.next_id), 256);
    tl_stack_table_destroy(&shared_table);
}
END_TEST

static size_t __attribute__((noinline)) capture_here(bool inl, uint64_t *out, size_t max)
{
    const uint64_t *f;
    size_t n = inl ? tl_stack_capture_inline(&f, max) : tl_stack_capture(&f, max);
    memcpy(out, f, n * sizeof *f);
    __asm__ volatile("" ::: "memory"); /* no tail call: keep this frame */
    return n;
}

/* One call site for both captures, so the frame above capture_here is the
 * same return address (the test's own callers may differ). */
static size_t __attribute__((noinline)) capture_via(bool inl, uint64_t *out, size_t max)
{
    size_t n = capture_here(inl, out, max);
    __asm__ volatile("" ::: "memory");
    return n;
}

/* Issue 9: libunwind's reads go through our check, which needs no
 * descriptor: a readable word is read, an unreadable, unmapped or
 * page-straddling-into-unreadable one is refused without a fault. */
START_TEST(stack_access_mem_checked)
{
    tl_stack_unwind_init();
    unw_accessors_t *acc = unw_get_accessors(unw_local_addr_space);
    ck_assert_ptr_nonnull(acc);
    unw_word_t v = 0;
    static unw_word_t word = 0x1122334455667788u;
    ck_assert_int_eq(acc->access_mem(unw_local_addr_space, (unw_word_t)&word, &v, 0, NULL), 0);
    ck_assert_uint_eq(v, word);
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(m != MAP_FAILED);
    memset(m, 0x5a, pg);
    ck_assert_int_eq(mprotect(m + pg, pg, PROT_NONE), 0);
    ck_assert_int_eq(acc->access_mem(unw_local_addr_space, (unw_word_t)(m + pg - 8), &v, 0, NULL),
                     0);
    ck_assert_uint_eq(v, 0x5a5a5a5a5a5a5a5au);
    ck_assert_int_lt(acc->access_mem(unw_local_addr_space, (unw_word_t)(m + pg - 4), &v, 0, NULL),
                     0);
    ck_assert_int_lt(acc->access_mem(unw_local_addr_space, (unw_word_t)(m + pg), &v, 0, NULL), 0);
    ck_assert_int_lt(acc->access_mem(unw_local_addr_space, 16, &v, 0, NULL), 0);
    /* An unwind (which forgets the pages found readable in it) still
     * works through the check; a page unmapped after it is refused. */
    const uint64_t *frames;
    ck_assert_uint_gt(tl_stack_capture(&frames, 8), 0);
    munmap(m, 2 * pg);
    ck_assert_int_lt(acc->access_mem(unw_local_addr_space, (unw_word_t)m, &v, 0, NULL), 0);
}
END_TEST

START_TEST(stack_capture_inline_starts_in_caller)
{
    uint64_t in[64], out[64];
    size_t no = capture_via(false, out, 64);
    size_t ni = capture_via(true, in, 64);
    /* Out of line: tl_stack_capture's own frame first, then capture_here.
     * Inlined: capture_here first, then capture_via at one address. */
    ck_assert_uint_ge(no, 3);
    ck_assert_uint_eq(ni + 1, no);
    ck_assert_uint_eq(in[1], out[2]);
    /* A skip range over the capturing frame drops exactly it. */
    tl_stack_skip_add((uintptr_t)in[0], (uintptr_t)in[0] + 1);
    uint64_t again[64];
    size_t na = capture_via(true, again, 64);
    tl_stack_skip_clear();
    ck_assert_uint_eq(na + 1, ni);
    ck_assert_uint_eq(again[0], in[1]);
}
END_TEST

/* libunwind's block/restore pairs, called from libunwind's code inside an
 * agent unwind, are answered without the kernel (nested two deep); any
 * other call (another pattern, another caller, a third nested block, a
 * restore from another set) is left to glibc's sigprocmask. */
START_TEST(unwinder_sigmask_pairs)
{
    tl_stack_unwind_init(); /* tl_unwinder_init */
    uintptr_t unw = (uintptr_t)dlsym(RTLD_DEFAULT, "_ULx86_64_step");
    ck_assert(unw != 0);
    sigset_t full, one, a, b, c;
    sigfillset(&full);
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1);
    ck_assert_ptr_nonnull(tl_unwinder_real_sigprocmask());
    tl_unwinder_enter();
    ck_assert(
        tl_unwinder_sigmask_answer(SIG_SETMASK, &full, &a, (uintptr_t)&full)); /* not libunwind */
    ck_assert(tl_unwinder_sigmask_answer(SIG_BLOCK, &full, &a, unw));
    ck_assert(tl_unwinder_sigmask_answer(SIG_SETMASK, &one, &a, unw)); /* not the full set */
    ck_assert(tl_unwinder_sigmask_answer(SIG_SETMASK, &a, NULL, unw)); /* nothing pending */
    ck_assert(!tl_unwinder_sigmask_answer(SIG_SETMASK, &full, &a, unw));
    ck_assert(!tl_unwinder_sigmask_answer(SIG_SETMASK, &full, &b, unw));
    ck_assert(tl_unwinder_sigmask_answer(SIG_SETMASK, &full, &c, unw)); /* third: the kernel's */
    ck_assert(tl_unwinder_sigmask_answer(SIG_SETMASK, &a, NULL, unw));  /* b is innermost */
    ck_assert(!tl_unwinder_sigmask_answer(SIG_SETMASK, &b, NULL, unw));
    ck_assert(!tl_unwinder_sigmask_answer(SIG_SETMASK, &a, NULL, unw));
    ck_assert(tl_unwinder_sigmask_answer(SIG_SETMASK, &a, NULL, unw));
    tl_unwinder_leave();
    ck_assert_uint_eq(tl_unwinder.depth, 0);
    /* An unwind records as before with the pairs skipped. */
    const uint64_t *frames;
    ck_assert_uint_gt(tl_stack_capture(&frames, 8), 0);
    ck_assert_uint_eq(tl_unwinder.npending, 0);
}
END_TEST

/* issue 26: tl_stack_delta_plan keeps the common head and tail of the
 * thread's last stack, and says no to a base of another generation, a base
 * id not below the id, a chain at its bound, or a delta no smaller than the
 * full record; tl_stack_delta_keep counts the chain. */
START_TEST(stack_delta_plan)
{
    static tl_stack_last_t last; /* 8 KiB: not on the stack */
    uint64_t f[12];
    for (int i = 0; i < 12; i++)
        f[i] = 0x7f0000100000ull + (uint64_t)i * 0x1000;
    tl_stack_delta_keep(&last, 3, 40, f, 10, false);
    ck_assert_uint_eq(last.depth, 0);
    ck_assert_uint_eq(last.n, 10);
    /* frames 2 and 3 replaced by three others: head 2, tail 6 */
    uint64_t g[11] = {f[0], f[1], 0x401000, 0x402000, 0x403000, f[4], f[5], f[6], f[7], f[8], f[9]};
    size_t head = 99, tail = 99;
    ck_assert(tl_stack_delta_plan(&last, 3, 41, g, 11, &head, &tail));
    ck_assert_uint_eq(head, 2);
    ck_assert_uint_eq(tail, 6);
    ck_assert(!tl_stack_delta_plan(&last, 4, 41, g, 11, &head, &tail)); /* another trace */
    ck_assert(!tl_stack_delta_plan(&last, 3, 40, g, 11, &head, &tail)); /* id not above */
    /* the same frames: head takes them all, tail none */
    ck_assert(tl_stack_delta_plan(&last, 3, 41, f, 10, &head, &tail));
    ck_assert_uint_eq(head, 10);
    ck_assert_uint_eq(tail, 0);
    /* a prefix of the base: head only; a suffix: tail only */
    ck_assert(tl_stack_delta_plan(&last, 3, 41, f, 7, &head, &tail));
    ck_assert_uint_eq(head, 7);
    ck_assert_uint_eq(tail, 0);
    ck_assert(tl_stack_delta_plan(&last, 3, 41, f + 4, 6, &head, &tail));
    ck_assert_uint_eq(head, 0);
    ck_assert_uint_eq(tail, 6);
    /* nothing in common: the full record is smaller */
    ck_assert(!tl_stack_delta_plan(&last, 3, 41, g + 2, 3, &head, &tail));
    /* the chain's bound */
    for (unsigned d = 1; d <= TL_STACK_DELTA_MAX_DEPTH; d++) {
        tl_stack_delta_keep(&last, 3, 40 + d, g, 11, true);
        ck_assert_uint_eq(last.depth, d);
    }
    ck_assert(!tl_stack_delta_plan(&last, 3, 100, g, 11, &head, &tail));
    tl_stack_delta_keep(&last, 3, 100, g, 11, false);
    ck_assert_uint_eq(last.depth, 0);
    ck_assert(tl_stack_delta_plan(&last, 3, 101, g, 11, &head, &tail));
    /* no last stack yet (a fresh thread's zeroed buffer) */
    static tl_stack_last_t none;
    ck_assert(!tl_stack_delta_plan(&none, 0, 1, g, 11, &head, &tail));
}
END_TEST

static Suite *make_stack_suite(void)
{
    Suite *s = suite_create("stack");
    TCase *tc = tcase_create("intern");
    tcase_add_test(tc, stack_intern_same_and_different);
    tcase_add_test(tc, stack_table_full);
    tcase_add_test(tc, stack_intern_concurrent);
    tcase_add_test(tc, stack_capture_inline_starts_in_caller);
    tcase_add_test(tc, stack_access_mem_checked);
    tcase_add_test(tc, unwinder_sigmask_pairs);
    tcase_add_test(tc, stack_delta_plan);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- writer ---- */

#define W_THREADS 4
#define W_RECORDS 12000 /* ~3 chunks per thread (packed records: ~5 bytes) */

static tl_writer_t wr;

static void *writer_thread(void *arg)
{
    uint32_t k = (uint32_t)(uintptr_t)arg;
    tl_wcursor_t c = {0};
    tl_wcursor_reset(&c, &wr, 1000 + k);
    uint64_t ts = 1000000;
    char name[16];
    snprintf(name, sizeof name, "w%u", k);
    if (tl_writer_thread(&wr, &c, ts, 1000 + k, name, strlen(name))) return (void *)1;
    for (uint64_t i = 0; i < W_RECORDS; i++) {
        ts += 7;
        bool failed;
        if (i % 1000 == 0) {
            uint64_t frames[3] = {0x400000 + i, 0x7f0000000000 + k, 0x400000};
            failed = tl_writer_stack(&wr, &c, ts, i + 1, frames, 3);
        } else if (i % 2) {
            failed = tl_writer_alloc(&wr, &c, ts, TL_KIND_MALLOC, ((uint64_t)k << 32) | i, i, k);
        } else {
            failed = tl_writer_free(&wr, &c, ts, TL_KIND_FREE, ((uint64_t)k << 32) | i);
        }
        if (failed) return (void *)1;
    }
    return NULL;
}

/* Expected record i of thread k (after its THREAD record). */
static void check_rec(uint32_t k, uint64_t i, const tl_record_t *r)
{
    if (i % 1000 == 0) {
        ck_assert_int_eq(r->type, TL_REC_STACK);
        ck_assert_uint_eq(r->u.stack.id, i + 1);
        ck_assert_uint_eq(r->u.stack.nframes, 3);
        ck_assert_uint_eq(r->u.stack.frames[0], 0x400000 + i);
        ck_assert_uint_eq(r->u.stack.frames[1], 0x7f0000000000 + k);
        ck_assert_uint_eq(r->u.stack.frames[2], 0x400000);
    } else if (i % 2) {
        ck_assert_int_eq(r->type, TL_REC_ALLOC);
        ck_assert_uint_eq(r->u.alloc.kind, TL_KIND_MALLOC);
        ck_assert_uint_eq(r->u.alloc.ptr, ((uint64_t)k << 32) | i);
        ck_assert_uint_eq(r->u.alloc.size, i);
        ck_assert_uint_eq(r->u.alloc.stack_id, k);
    } else {
        ck_assert_int_eq(r->type, TL_REC_FREE);
        ck_assert_uint_eq(r->u.free.ptr, ((uint64_t)k << 32) | i);
    }
}

/* Minimal reader: per thread, chunks in seq order, records in order. Checks
 * each record against the expected sequence and returns the count per
 * thread in got[]. used is clamped to the bytes present (a cut file). */
static void read_back(const uint8_t *buf, size_t len, uint64_t got[W_THREADS])
{
    static uint64_t frames[TL_REC_MAX_FRAMES];
    uint32_t cb = tl_load_le32(buf + TL_HDR_CHUNK_BYTES);
    size_t nchunks = (len - TL_TRACE_HEADER_BYTES + cb - 1) / cb;
    for (uint32_t k = 0; k < W_THREADS; k++) {
        got[k] = 0;
        uint64_t ts = 0;
        bool have_thread = false, stop = false;
        for (uint32_t seq = 0; !stop; seq++) {
            const uint8_t *ch = NULL;
            size_t avail = 0;
            for (size_t c = 0; c < nchunks; c++) {
                size_t off = TL_TRACE_HEADER_BYTES + c * cb;
                if (off + TL_CHUNK_HEADER_BYTES > len) break;
                const uint8_t *p = buf + off;
                if (tl_load_le32(p + TL_CHK_MAGIC) == TL_CHUNK_MAGIC &&
                    tl_load_le32(p + TL_CHK_TID) == 1000 + k &&
                    tl_load_le32(p + TL_CHK_SEQ) == seq) {
                    ch = p;
                    avail = len - off - TL_CHUNK_HEADER_BYTES;
                    break;
                }
            }
            if (!ch) break;
            size_t used = tl_load_le32(ch + TL_CHK_USED);
            ck_assert_uint_le(used, cb - TL_CHUNK_HEADER_BYTES);
            if (used > avail) used = avail;
            ts = tl_load_le64(ch + TL_CHK_BASE_TS);
            const uint8_t *p = ch + TL_CHUNK_HEADER_BYTES, *end = p + used;
            tl_rec_state_t st = {0};
            while (p < end) {
                tl_record_t r;
                long n = tl_rec_decode(p, (size_t)(end - p), &r, frames, &st);
                if (n < 0) {
                    stop = true; /* the cut record */
                    break;
                }
                p += n;
                ts += r.ts_delta;
                if (!have_thread) {
                    ck_assert_int_eq(r.type, TL_REC_THREAD);
                    ck_assert_uint_eq(r.u.thread.tid, 1000 + k);
                    ck_assert_uint_eq(ts, 1000000);
                    have_thread = true;
                    continue;
                }
                check_rec(k, got[k], &r);
                ck_assert_uint_eq(ts, 1000000 + 7 * (got[k] + 1));
                got[k]++;
            }
        }
    }
}

static char tmpdir[64];

static uint8_t *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    fstat(fd, &st);
    uint8_t *b = malloc((size_t)st.st_size);
    ck_assert(read(fd, b, (size_t)st.st_size) == st.st_size);
    close(fd);
    *len = (size_t)st.st_size;
    return b;
}

START_TEST(writer_roundtrip)
{
    strcpy(tmpdir, "/tmp/tl-test-agent.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/t.tlt", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 77,
                           .ppid = 66,
                           .start_realtime_ns = 5,
                           .start_mono_ns = 6,
                           .session = 99,
                           .exec_seq = 2};
    ck_assert_int_eq(tl_writer_create(&wr, path, &hdr), 0);
    tl_writer_t other = {0};
    ck_assert_int_eq(tl_writer_create(&other, path, &hdr), -EEXIST); /* never clobbers */

    pthread_t th[W_THREADS];
    for (uintptr_t k = 0; k < W_THREADS; k++)
        pthread_create(&th[k], NULL, writer_thread, (void *)k);
    for (size_t k = 0; k < W_THREADS; k++) {
        void *rv;
        pthread_join(th[k], &rv);
        ck_assert_ptr_null(rv);
    }
    tl_writer_mark_end(&wr, TL_WRITER_FINISHED, true);
    /* After the end, new chunks are refused: the record is dropped. */
    tl_wcursor_t late = {0};
    tl_wcursor_reset(&late, &wr, 5);
    ck_assert(tl_writer_alloc(&wr, &late, 1, 0, 1, 1, 0));

    size_t len;
    uint8_t *buf = slurp(path, &len);
    ck_assert_mem_eq(buf, TL_TRACE_MAGIC, TL_TRACE_MAGIC_BYTES);
    ck_assert_uint_eq(tl_load_le32(buf + TL_HDR_VERSION), TL_TRACE_VERSION);
    ck_assert_uint_eq(tl_load_le32(buf + TL_HDR_FLAGS), TL_HDR_F_CLEAN_END);
    ck_assert_uint_eq(tl_load_le64(buf + TL_HDR_PID), 77);
    ck_assert_uint_eq(tl_load_le64(buf + TL_HDR_PPID), 66);
    ck_assert_uint_eq(tl_load_le64(buf + TL_HDR_SESSION), 99);
    ck_assert_uint_eq(tl_load_le32(buf + TL_HDR_EXEC_SEQ), 2);
    uint64_t nch = tl_load_le64(buf + TL_HDR_CHUNK_COUNT);
    ck_assert_uint_ge(nch, 2 * W_THREADS);
    ck_assert_uint_eq(len,
                      TL_TRACE_HEADER_BYTES + nch * TL_TRACE_CHUNK_BYTES); /* truncated to use */
    uint64_t got[W_THREADS];
    read_back(buf, len, got);
    for (size_t k = 0; k < W_THREADS; k++)
        ck_assert_uint_eq(got[k], W_RECORDS);

    /* A copy cut in the middle of a chunk: every record of the complete
     * chunks, and the cut chunk's records up to the cut. */
    size_t cut = TL_TRACE_HEADER_BYTES + (nch - 2) * TL_TRACE_CHUNK_BYTES + 5000;
    uint64_t part[W_THREADS];
    read_back(buf, cut, part);
    uint64_t total = 0;
    for (size_t k = 0; k < W_THREADS; k++)
        total += part[k];
    /* Count what lies wholly before the cut, straight from the full file. */
    uint64_t expect = 0;
    for (size_t c = 0; c < nch; c++) {
        const uint8_t *ch = buf + TL_TRACE_HEADER_BYTES + c * TL_TRACE_CHUNK_BYTES;
        const uint8_t *p = ch + TL_CHUNK_HEADER_BYTES, *end = p + tl_load_le32(ch + TL_CHK_USED);
        static uint64_t frames[TL_REC_MAX_FRAMES];
        tl_rec_state_t st = {0};
        while (p < end) {
            tl_record_t r;
            long n = tl_rec_decode(p, (size_t)(end - p), &r, frames, &st);
            ck_assert_int_gt(n, 0);
            p += n;
            if ((size_t)(p - buf) <= cut && r.type != TL_REC_THREAD) expect++;
        }
    }
    ck_assert_uint_eq(total, expect);
    ck_assert_uint_lt(total, (uint64_t)W_THREADS * W_RECORDS);
    ck_assert_uint_gt(total, 0);
    free(buf);
    tl_writer_release(&wr);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* Does any descriptor of this process refer to path? */
static bool fd_open_on(const char *path)
{
    char link[64], target[4096];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        if (strcmp(target, path) == 0) return true;
    }
    return false;
}

/* The next record of chunk ch at *off (advanced; 0 starts the chunk's
 * records again); false at the end. */
static bool next_rec(const uint8_t *ch, size_t *off, tl_record_t *r)
{
    static uint64_t frames[TL_REC_MAX_FRAMES];
    static tl_rec_state_t st;
    if (*off == 0) st = (tl_rec_state_t){0};
    size_t used = tl_load_le32(ch + TL_CHK_USED);
    if (*off >= used) return false;
    long n = tl_rec_decode(ch + TL_CHUNK_HEADER_BYTES + *off, used - *off, r, frames, &st);
    ck_assert_int_gt(n, 0);
    *off += (size_t)n;
    return true;
}

/* Issue 9: no descriptor between calls; an ended thread's chunk goes to
 * the next thread after an OWNER record; retired extents are unmapped; a
 * file replaced under the writer stops it without touching the new file. */
START_TEST(writer_parked_chunk_and_no_descriptor)
{
    strcpy(tmpdir, "/tmp/tl-test-agent.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    char path[128], other[160];
    snprintf(path, sizeof path, "%s/p.tlt", tmpdir);
    snprintf(other, sizeof other, "%s/other", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 1};
    tl_writer_t *w = calloc(1, sizeof *w);
    ck_assert_int_eq(tl_writer_create(w, path, &hdr), 0);
    ck_assert(!fd_open_on(path));

    tl_wcursor_t a = {0}, b = {0};
    tl_wcursor_reset(&a, w, 11);
    tl_wcursor_reset(&b, w, 12);
    for (uint64_t i = 0; i < 3; i++)
        ck_assert(!tl_writer_alloc(w, &a, 100 + i, 0, 0x1000 + i, 8, 0));
    uint8_t *first = a.chunk;
    tl_wcursor_park(w, &a);
    ck_assert_ptr_null(a.chunk);
    ck_assert(!tl_writer_alloc(w, &b, 500, 0, 0x2000, 16, 0));
    ck_assert(!tl_writer_alloc(w, &b, 507, 0, 0x2001, 16, 0));
    ck_assert_ptr_eq(b.chunk, first); /* the parked chunk, not a fresh one */
    ck_assert_uint_eq(tl_load_le32(first + TL_CHK_TID), 11);
    size_t off = 0;
    tl_record_t r;
    for (uint64_t i = 0; i < 3; i++) {
        ck_assert(next_rec(first, &off, &r));
        ck_assert_int_eq(r.type, TL_REC_ALLOC);
        ck_assert_uint_eq(r.u.alloc.ptr, 0x1000 + i);
    }
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_OWNER);
    ck_assert_uint_eq(r.u.lineage.a[0], 12);  /* tid */
    ck_assert_uint_eq(r.u.lineage.a[1], 0);   /* b's first chunk */
    ck_assert_uint_eq(r.u.lineage.a[2], 500); /* base_ts */
    ck_assert(next_rec(first, &off, &r));
    ck_assert_uint_eq(r.u.alloc.ptr, 0x2000);
    ck_assert_uint_eq(r.ts_delta, 0);
    ck_assert(next_rec(first, &off, &r));
    ck_assert_uint_eq(r.ts_delta, 7);
    ck_assert(!next_rec(first, &off, &r));

    /* Past the first extent: the file grows by path, extent 0 (all its
     * chunks left behind) is unmapped, and still no descriptor. */
    uint64_t i = 0;
    while (w->nextents < 2 || b.extent < 1) {
        ck_assert(!tl_writer_alloc(w, &b, 600 + i, 0, 0x10000 + i, 24, 0));
        i++;
    }
    ck_assert_ptr_null(w->extent[0]);
    ck_assert(!fd_open_on(path));

    /* Another file renamed over the path: the next growth refuses it. */
    int fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "program", 7), 7);
    close(fd);
    ck_assert_int_eq(rename(other, path), 0);
    bool dropped = false;
    for (uint64_t k = 0; k < 1000000 && !dropped; k++) {
        dropped = tl_writer_alloc(w, &b, 600 + i, 0, 0x10000 + i, 24, 0);
        i++;
    }
    ck_assert(dropped);
    ck_assert_int_eq(atomic_load(&w->closed), TL_WRITER_FULL);
    tl_writer_mark_end(w, TL_WRITER_FINISHED, true);
    size_t len;
    uint8_t *buf = slurp(path, &len);
    ck_assert_uint_eq(len, 7);
    ck_assert_mem_eq(buf, "program", 7);
    free(buf);
    tl_writer_release(w);
    free(w);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* Version 5: the writer packs plain blocks' ALLOC and FREE records, and
 * starts their pointer deltas again wherever a reader's run starts: after
 * the OWNER record of a rewind, and in a fresh chunk. Other kinds keep
 * the full records. */
START_TEST(writer_packed_runs)
{
    strcpy(tmpdir, "/tmp/tl-test-agent.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/k.tlt", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 1};
    tl_writer_t *w = calloc(1, sizeof *w);
    ck_assert_int_eq(tl_writer_create(w, path, &hdr), 0);
    tl_wcursor_t a = {0};
    tl_wcursor_reset(&a, w, 11);
    ck_assert(!tl_writer_alloc(w, &a, 100, TL_KIND_CALLOC, 0x7f0000005000, 24, 2));
    ck_assert(!tl_writer_free(w, &a, 100, TL_KIND_FREE, 0x7f0000005000));
    ck_assert(!tl_writer_alloc(w, &a, 110, TL_KIND_STORAGE_C10, 0x7f0000009000, 4096, 3));
    ck_assert(!tl_writer_rewind(w, &a, 50));
    ck_assert(!tl_writer_alloc(w, &a, 60, TL_KIND_MALLOC, 0x7f0000006000, 8, 1));
    uint8_t *first = a.chunk;
    uint8_t *rec0 = first + TL_CHUNK_HEADER_BYTES;
    /* The chunk's base_ts is its first record's time: ts_delta 0, left out. */
    ck_assert_uint_eq(rec0[0], TL_REC_PACKED + TL_KIND_CALLOC + TL_BLOCK_TS0);
    size_t off = 0;
    tl_record_t r;
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_ALLOC);
    ck_assert_uint_eq(r.u.alloc.kind, TL_KIND_CALLOC);
    ck_assert_uint_eq(r.u.alloc.ptr, 0x7f0000005000);
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_FREE);
    ck_assert_uint_eq(r.u.free.ptr, 0x7f0000005000);
    ck_assert_uint_eq(r.ts_delta, 0);
    ck_assert_uint_eq(off, (1 + 7 + 1 + 1) + (1 + 1)); /* the FREE: type, pointer delta 0 */
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_ALLOC);
    ck_assert_uint_eq(r.u.alloc.kind, TL_KIND_STORAGE_C10);
    ck_assert_uint_eq(r.u.alloc.ptr, 0x7f0000009000);
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_OWNER);
    ck_assert(next_rec(first, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_ALLOC);
    ck_assert_uint_eq(r.u.alloc.ptr, 0x7f0000006000); /* a delta from 0 again */
    ck_assert(!next_rec(first, &off, &r));
    /* A fresh chunk: its first packed record's delta is from 0 too. */
    uint64_t i = 0;
    while (a.chunk == first)
        ck_assert(!tl_writer_free(w, &a, 70, TL_KIND_FREE, 0x7f0000006000 + 16 * i++));
    off = 0;
    ck_assert(next_rec(a.chunk, &off, &r));
    ck_assert_int_eq(r.type, TL_REC_FREE);
    ck_assert_uint_eq(r.u.free.ptr, 0x7f0000006000 + 16 * (i - 1));
    ck_assert(!next_rec(a.chunk, &off, &r));
    tl_writer_mark_end(w, TL_WRITER_FINISHED, true);
    tl_writer_release(w);
    free(w);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(writer_big_record_and_exec_mark)
{
    strcpy(tmpdir, "/tmp/tl-test-agent.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/b.tlt", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 1};
    memset(&wr, 0, sizeof wr);
    ck_assert_int_eq(tl_writer_create(&wr, path, &hdr), 0);
    tl_wcursor_t c = {0};
    tl_wcursor_reset(&c, &wr, 9);
    static uint64_t frames[1024];
    for (size_t i = 0; i < 1024; i++)
        frames[i] = 0x7fff00000000ull * (i % 2) + i * 0x123457;
    /* ~7 KiB per 1024-frame stack: five do not fit one 32 KiB chunk. */
    for (uint64_t i = 0; i < 5; i++)
        ck_assert(!tl_writer_stack(&wr, &c, 10 + i, i + 1, frames, 1024));
    ck_assert_uint_eq(c.seq, 2);
    /* exec marks the end (an exec's: run and check tell it from the header),
     * a failed exec unmarks it and writing goes on */
    tl_writer_mark_end(&wr, TL_WRITER_EXEC, false);
    ck_assert_uint_eq(tl_load_le32(wr.header + TL_HDR_FLAGS),
                      TL_HDR_F_CLEAN_END | TL_HDR_F_EXEC_END);
    ck_assert_uint_eq(tl_load_le64(wr.header + TL_HDR_CHUNK_COUNT), c.seq);
    tl_writer_unmark_end(&wr);
    ck_assert_uint_eq(tl_load_le32(wr.header + TL_HDR_FLAGS), 0);
    ck_assert_uint_eq(tl_load_le64(wr.header + TL_HDR_CHUNK_COUNT), 0);
    ck_assert(!tl_writer_stack(&wr, &c, 13, 4, frames, 1024));
    tl_writer_release(&wr);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

/* PYFRAME, MARK and every lineage-family record: written by the writer,
 * decoded with the fields in the documented order. */
START_TEST(writer_lineage_records)
{
    strcpy(tmpdir, "/tmp/tl-test-agent.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    char path[128];
    snprintf(path, sizeof path, "%s/l.tlt", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 1};
    memset(&wr, 0, sizeof wr);
    ck_assert_int_eq(tl_writer_create(&wr, path, &hdr), 0);
    tl_wcursor_t c = {0};
    tl_wcursor_reset(&c, &wr, 3);
    ck_assert(!tl_writer_pyframe(&wr, &c, 10, 5, 42, "x.py", 4, "f", 1));
    ck_assert(!tl_writer_mark(&wr, &c, 11, 1, "script_end", 10));
    static const struct {
        tl_rec_type_t type;
        uint64_t ints[6];
        const char *str;
    } recs[] = {
        {TL_REC_STORAGE_REG, {0x1000, 64, 3}, "pool"},
        {TL_REC_STORAGE_UNREG, {0x1000}, NULL},
        {TL_REC_VIEW_BEGIN, {0x77, 0x2000, 8, 16, 16, 4}, "slice"},
        {TL_REC_VIEW_END, {0x77}, NULL},
        {TL_REC_COPY, {0x3000, 0x2000, 128}, "clone"},
        {TL_REC_TAG, {0x2000}, "weights"},
        {TL_REC_REGION_BEGIN, {0}, "step"},
        {TL_REC_REGION_END, {0}, "step"},
        {TL_REC_SNAP_HOLD, {1, 0x2000, 2, 0x99}, NULL},
        {TL_REC_SNAP_VIEW, {1, 0x2000, 8, 16, 16, 0x98}, "slice"},
        {TL_REC_FINGERPRINT, {1, 0x2000, 128, UINT64_MAX}, NULL},
        {TL_REC_ORIGIN, {0x3000}, "aten::clone"},
    };
    size_t nrecs = sizeof recs / sizeof recs[0];
    for (size_t i = 0; i < nrecs; i++)
        ck_assert(!tl_writer_lineage(&wr, &c, 12 + i, recs[i].type, recs[i].ints, recs[i].str,
                                     recs[i].str ? strlen(recs[i].str) : 0));
    /* Not a lineage type: refused, nothing written. */
    uint32_t used = c.used;
    ck_assert(tl_writer_lineage(&wr, &c, 30, TL_REC_ALLOC, recs[0].ints, NULL, 0));
    ck_assert_uint_eq(c.used, used);
    tl_writer_mark_end(&wr, TL_WRITER_FINISHED, true);

    size_t len;
    uint8_t *buf = slurp(path, &len);
    const uint8_t *ch = buf + TL_TRACE_HEADER_BYTES;
    const uint8_t *p = ch + TL_CHUNK_HEADER_BYTES, *end = p + tl_load_le32(ch + TL_CHK_USED);
    tl_record_t r;
    long n = tl_rec_decode(p, (size_t)(end - p), &r, NULL, NULL);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(r.type, TL_REC_PYFRAME);
    ck_assert_uint_eq(r.u.pyframe.id, 5);
    ck_assert_uint_eq(r.u.pyframe.line, 42);
    ck_assert_mem_eq(r.u.pyframe.file.p, "x.py", 4);
    ck_assert_uint_eq(r.u.pyframe.function.n, 1);
    p += n;
    n = tl_rec_decode(p, (size_t)(end - p), &r, NULL, NULL);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(r.type, TL_REC_MARK);
    ck_assert_uint_eq(r.u.mark.id, 1);
    ck_assert_uint_eq(r.u.mark.name.n, 10);
    p += n;
    for (size_t i = 0; i < nrecs; i++) {
        n = tl_rec_decode(p, (size_t)(end - p), &r, NULL, NULL);
        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(r.type, recs[i].type);
        unsigned nints;
        bool has_str;
        ck_assert(tl_rec_lineage_shape(r.type, &nints, &has_str));
        for (unsigned k = 0; k < nints; k++)
            ck_assert_uint_eq(r.u.lineage.a[k], recs[i].ints[k]);
        size_t sl = recs[i].str ? strlen(recs[i].str) : 0;
        ck_assert_uint_eq(r.u.lineage.str.n, sl);
        if (sl) ck_assert_mem_eq(r.u.lineage.str.p, recs[i].str, sl);
        p += n;
    }
    ck_assert_ptr_eq(p, end);
    free(buf);
    tl_writer_release(&wr);
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

static Suite *make_writer_suite(void)
{
    Suite *s = suite_create("writer");
    TCase *tc = tcase_create("file");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, writer_roundtrip);
    tcase_add_test(tc, writer_big_record_and_exec_mark);
    tcase_add_test(tc, writer_parked_chunk_and_no_descriptor);
    tcase_add_test(tc, writer_packed_runs); /* version 5 */
    tcase_add_test(tc, writer_lineage_records);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- numpy's data-memory handler (numpy.h) ---- */

/* A stand-in for numpy's default handler: its functions count their calls
 * and check that they get numpy's ctx. */
static int np_calls[4];
static void *np_ctx = &np_calls;

static void *fake_malloc(void *ctx, size_t size)
{
    ck_assert_ptr_eq(ctx, np_ctx);
    np_calls[0]++;
    return malloc(size);
}

static void *fake_calloc(void *ctx, size_t n, size_t size)
{
    ck_assert_ptr_eq(ctx, np_ctx);
    np_calls[1]++;
    return calloc(n, size);
}

static void *fake_realloc(void *ctx, void *p, size_t size)
{
    ck_assert_ptr_eq(ctx, np_ctx);
    np_calls[2]++;
    if (size > (size_t)1 << 40) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, size);
}

static void fake_free(void *ctx, void *p, size_t size)
{
    (void)size;
    ck_assert_ptr_eq(ctx, np_ctx);
    np_calls[3]++;
    free(p);
}

static void fake_handler(tl_np_handler_t *h)
{
    memset(h, 0, sizeof *h);
    strcpy(h->name, "default_allocator");
    h->version = 1;
    h->allocator = (tl_np_allocator_t){np_ctx, fake_malloc, fake_calloc, fake_realloc, fake_free};
}

/* numpy's layout: the allocator at offset 128 (numpy/ndarraytypes.h). */
_Static_assert(offsetof(tl_np_handler_t, allocator) == 128, "PyDataMem_Handler layout");

/* Wrapped, every call reaches numpy's function with its ctx and its result
 * (NULL, errno, free of NULL, realloc of NULL, size 0 included); wrapping
 * twice is a no-op, a second handler is refused, reset puts numpy's back. */
START_TEST(numpy_wrap_passes_through)
{
    tl_np_handler_t h, other;
    fake_handler(&h);
    fake_handler(&other);
    memset(np_calls, 0, sizeof np_calls);
    ck_assert_int_eq(tl_numpy_wrap(&h), 0);
    ck_assert_ptr_ne((void *)h.allocator.malloc, (void *)fake_malloc);
    ck_assert_ptr_ne((void *)h.allocator.free, (void *)fake_free);
    ck_assert_ptr_eq(h.allocator.ctx, np_ctx);
    ck_assert_int_eq(tl_numpy_wrap(&h), 0);
    ck_assert_int_eq(tl_numpy_wrap(&other), -EBUSY);
    tl_np_allocator_t *a = &h.allocator;
    char *p = a->malloc(a->ctx, 24);
    ck_assert_ptr_nonnull(p);
    memset(p, 1, 24);
    double *z = a->calloc(a->ctx, 3, sizeof(double));
    ck_assert(z && z[0] == 0 && z[2] == 0);
    char *r = a->realloc(a->ctx, NULL, 16); /* realloc of NULL: numpy's */
    ck_assert_ptr_nonnull(r);
    r = a->realloc(a->ctx, r, 4096);
    ck_assert_ptr_nonnull(r);
    errno = 0;
    ck_assert_ptr_null(a->realloc(a->ctx, r, (size_t)1 << 41)); /* fails: r stays */
    ck_assert_int_eq(errno, ENOMEM);
    void *empty = a->malloc(a->ctx, 0);
    a->free(a->ctx, empty, 0);
    a->free(a->ctx, NULL, 0); /* numpy's free of NULL: still numpy's call */
    a->free(a->ctx, p, 24);
    a->free(a->ctx, z, 3 * sizeof(double));
    a->free(a->ctx, r, 4096);
    ck_assert_int_eq(np_calls[0], 2);
    ck_assert_int_eq(np_calls[1], 1);
    ck_assert_int_eq(np_calls[2], 3);
    ck_assert_int_eq(np_calls[3], 5);
    tl_numpy_reset();
    tl_numpy_copy_reset();
    ck_assert_ptr_eq((void *)h.allocator.malloc, (void *)fake_malloc);
    ck_assert_ptr_eq((void *)h.allocator.free, (void *)fake_free);
}
END_TEST

/* Only numpy's default handler of version 1, readable and writable, is
 * wrapped; anything else is left as it was. */
START_TEST(numpy_wrap_refuses)
{
    tl_np_handler_t h;
    ck_assert_int_eq(tl_numpy_wrap(NULL), -EINVAL);
    fake_handler(&h);
    strcpy(h.name, "my_allocator");
    ck_assert_int_eq(tl_numpy_wrap(&h), -EINVAL);
    ck_assert_ptr_eq((void *)h.allocator.malloc, (void *)fake_malloc);
    fake_handler(&h);
    h.version = 2;
    ck_assert_int_eq(tl_numpy_wrap(&h), -EINVAL);
    fake_handler(&h);
    h.allocator.free = NULL;
    ck_assert_int_eq(tl_numpy_wrap(&h), -EINVAL);
    long page = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    fake_handler((tl_np_handler_t *)m);
    ck_assert_int_eq(mprotect(m, (size_t)page, PROT_READ), 0);
    ck_assert_int_eq(tl_numpy_wrap(m), -EFAULT); /* read-only: no fault, no change */
    ck_assert_ptr_eq((void *)((tl_np_handler_t *)m)->allocator.malloc, (void *)fake_malloc);
    ck_assert_int_eq(mprotect(m, (size_t)page, PROT_NONE), 0);
    ck_assert_int_eq(tl_numpy_wrap(m), -EINVAL); /* unreadable */
    munmap(m, (size_t)page);
}
END_TEST

/* A stand-in for ndarray's PyTypeObject: tp_alloc and tp_free at CPython's
 * offsets, an object whose ob_type names the type. */
static int tp_calls[2];
static _Alignas(16) char fake_type[400];

static void *fake_tp_alloc(void *type, intptr_t n)
{
    ck_assert_ptr_eq(type, fake_type);
    ck_assert_int_eq(n, 0);
    tp_calls[0]++;
    void **obj = calloc(4, sizeof(void *));
    obj[1] = type; /* ob_type */
    return obj;
}

static void fake_tp_free(void *obj)
{
    tp_calls[1]++;
    free(obj);
}

/* The type's tp_alloc / tp_free reach CPython's with their arguments and
 * result; a NULL slot is refused; reset puts them back. */
START_TEST(numpy_wrap_type_passes_through)
{
    void **alloc_slot = (void **)(void *)(fake_type + TL_NP_TP_ALLOC);
    void **free_slot = (void **)(void *)(fake_type + TL_NP_TP_FREE);
    *alloc_slot = NULL;
    *free_slot = (void *)fake_tp_free;
    ck_assert_int_eq(tl_numpy_wrap_type(fake_type), -EINVAL);
    ck_assert_int_eq(tl_numpy_wrap_type(NULL), -EINVAL);
    *alloc_slot = (void *)fake_tp_alloc;
    memset(tp_calls, 0, sizeof tp_calls);
    ck_assert_int_eq(tl_numpy_wrap_type(fake_type), 0);
    ck_assert_int_eq(tl_numpy_wrap_type(fake_type), 0);
    ck_assert_ptr_ne(*alloc_slot, (void *)fake_tp_alloc);
    ck_assert_ptr_ne(*free_slot, (void *)fake_tp_free);
    void *(*tp_alloc)(void *, intptr_t) = (void *(*)(void *, intptr_t)) * alloc_slot;
    void (*tp_free)(void *) = (void (*)(void *)) * free_slot;
    void *obj = tp_alloc(fake_type, 0);
    ck_assert_ptr_nonnull(obj);
    tp_free(obj);
    ck_assert_int_eq(tp_calls[0], 1);
    ck_assert_int_eq(tp_calls[1], 1);
    tl_numpy_reset();
    tl_numpy_copy_reset();
    ck_assert_ptr_eq(*alloc_slot, (void *)fake_tp_alloc);
    ck_assert_ptr_eq(*free_slot, (void *)fake_tp_free);
}
END_TEST

static Suite *make_numpy_suite(void)
{
    Suite *s = suite_create("numpy");
    TCase *tc = tcase_create("handler");
    tcase_add_test(tc, numpy_wrap_passes_through);
    tcase_add_test(tc, numpy_wrap_refuses);
    tcase_add_test(tc, numpy_wrap_type_passes_through);
    suite_add_tcase(s, tc);
    return s;
}

/* --- cudart_static: the static CUDA runtime's detection reads untrusted files --- */

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(p, 1, n, f), n);
    fclose(f);
}

START_TEST(cudart_static_bad_files)
{
    char dir[] = "/tmp/tl-cudart-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f", dir);
    ck_assert(!tl_cudart_static_is_in("/nonexistent/tensorleak"));
    ck_assert(!tl_cudart_static_is_in(dir)); /* a directory */
    write_file(path, "", 0);
    ck_assert(!tl_cudart_static_is_in(path));
    write_file(path, "not an ELF file at all", 22);
    ck_assert(!tl_cudart_static_is_in(path));
    /* this test program (no CUDA runtime), whole and cut at every few bytes
     * of its headers and section table */
    ck_assert(!tl_cudart_static_is_in("/proc/self/exe"));
    FILE *f = fopen("/proc/self/exe", "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t img[1 << 16];
    size_t n = fread(img, 1, sizeof img, f);
    fclose(f);
    for (size_t cut = 0; cut < n; cut += cut < 256 ? 1 : 997) {
        write_file(path, img, cut);
        ck_assert(!tl_cudart_static_is_in(path));
    }
    /* an ELF header whose section table lies past the file's end */
    ElfW(Ehdr) eh;
    memcpy(&eh, img, sizeof eh);
    eh.e_shoff = UINT64_MAX - 8;
    write_file(path, &eh, sizeof eh);
    ck_assert(!tl_cudart_static_is_in(path));
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite *make_cudart_suite(void)
{
    Suite *s = suite_create("cudart");
    TCase *tc = tcase_create("static");
    tcase_add_test(tc, cudart_static_bad_files);
    suite_add_tcase(s, tc);
    return s;
}

/* ---- the run's environment for an exec (follow.h) ---- */

/* n entries of env (NULL-closed) as one line, each entry then '|'. */
static const char *env_line(char *const *env)
{
    static char line[1024];
    size_t at = 0;
    for (size_t i = 0; env[i]; i++)
        at += (size_t)snprintf(line + at, sizeof line - at, "%s|", env[i]);
    line[at] = '\0';
    return line;
}

/* What a run's process takes at its start (the run's variables first),
 * and what each kind of child environment becomes: scrubbed, none at all,
 * a blank LD_PRELOAD, its own LD_PRELOAD (it stands: a sanitizer's runtime
 * must come first), a variable of its own, complete already. */
START_TEST(follow_envp)
{
    const char *self = "/opt/tl/libtensorleak.so";
    const char *start[] = {"HOME=/root",
                           "TENSORLEAK_STACK_DEPTH=8",
                           "LD_PRELOAD=/opt/tl/libtensorleak.so:/x/libother.so",
                           "TENSORLEAK_OUTPUT=/r/t.%p.tlt",
                           "TENSORLEAK_EXEC_SEQ=7:1",
                           "TENSORLEAK_MODE=all",
                           "TENSORLEAK_",
                           "PATH=/bin",
                           NULL};
    tl_follow_t f;
    tl_follow_take(&f, start, self);
    ck_assert_str_eq(f.preload, "LD_PRELOAD=/opt/tl/libtensorleak.so");
    ck_assert_uint_eq(f.nvars, 3); /* not EXEC_SEQ (one pid's), not a name without '=' */
    ck_assert_str_eq(f.vars[0], "TENSORLEAK_OUTPUT=/r/t.%p.tlt");
    ck_assert_str_eq(f.vars[1], "TENSORLEAK_MODE=all");
    ck_assert_str_eq(f.vars[2], "TENSORLEAK_STACK_DEPTH=8");

    char *out[16];
    size_t entries;
    /* env={"PATH": ...} */
    char *scrubbed[] = {"PATH=/bin", NULL};
    ck_assert(tl_follow_need(&f, scrubbed, NULL, &entries));
    ck_assert_uint_eq(entries, 7);
    ck_assert_str_eq(env_line(tl_follow_envp(&f, scrubbed, NULL, out)),
                     "PATH=/bin|LD_PRELOAD=/opt/tl/libtensorleak.so|"
                     "TENSORLEAK_OUTPUT=/r/t.%p.tlt|TENSORLEAK_MODE=all|TENSORLEAK_STACK_DEPTH=8|");
    /* none at all (env -i), with the exec's sequence number */
    char *empty[] = {NULL};
    ck_assert(tl_follow_need(&f, empty, "TENSORLEAK_EXEC_SEQ=9:2", &entries));
    ck_assert_str_eq(env_line(tl_follow_envp(&f, empty, "TENSORLEAK_EXEC_SEQ=9:2", out)),
                     "LD_PRELOAD=/opt/tl/libtensorleak.so|TENSORLEAK_OUTPUT=/r/t.%p.tlt|"
                     "TENSORLEAK_MODE=all|TENSORLEAK_STACK_DEPTH=8|TENSORLEAK_EXEC_SEQ=9:2|");
    /* a blank LD_PRELOAD gets the agent in its place */
    char *blank[] = {"LD_PRELOAD= :", "TENSORLEAK_OUTPUT=o", "TENSORLEAK_MODE=all",
                     "TENSORLEAK_STACK_DEPTH=8", NULL};
    ck_assert(tl_follow_need(&f, blank, NULL, &entries));
    ck_assert_str_eq(env_line(tl_follow_envp(&f, blank, NULL, out)),
                     "LD_PRELOAD=/opt/tl/libtensorleak.so|TENSORLEAK_OUTPUT=o|TENSORLEAK_MODE=all|"
                     "TENSORLEAK_STACK_DEPTH=8|");
    /* its own LD_PRELOAD and TENSORLEAK_MODE stand; an old sequence number
     * is replaced, a missing variable given */
    char *own[] = {"LD_PRELOAD=/y/libasan.so", "TENSORLEAK_MODE=default", "TENSORLEAK_EXEC_SEQ=7:1",
                   "TENSORLEAK_STACK_DEPTH=8", NULL};
    ck_assert(tl_follow_need(&f, own, "TENSORLEAK_EXEC_SEQ=7:2", &entries));
    ck_assert_uint_eq(entries, 10);
    ck_assert_str_eq(env_line(tl_follow_envp(&f, own, "TENSORLEAK_EXEC_SEQ=7:2", out)),
                     "LD_PRELOAD=/y/libasan.so|TENSORLEAK_MODE=default|TENSORLEAK_STACK_DEPTH=8|"
                     "TENSORLEAK_OUTPUT=/r/t.%p.tlt|TENSORLEAK_EXEC_SEQ=7:2|");
    /* complete already: nothing to do without a sequence number */
    char *full[] = {"LD_PRELOAD=/x/a.so /opt/tl/libtensorleak.so", "TENSORLEAK_MODE=all",
                    "TENSORLEAK_OUTPUT=elsewhere", "TENSORLEAK_STACK_DEPTH=1", NULL};
    ck_assert(!tl_follow_need(&f, full, NULL, &entries));
    char *own_full[] = {"LD_PRELOAD=/y/libasan.so", "TENSORLEAK_MODE=all", "TENSORLEAK_OUTPUT=o",
                        "TENSORLEAK_STACK_DEPTH=1", NULL};
    ck_assert(!tl_follow_need(&f, own_full, NULL, &entries));
}
END_TEST

/* An agent that LD_PRELOAD does not name (linked, dlopen'ed) follows
 * nothing: only the sequence number is set. The run's own variables are
 * kept ahead of many others a user set. */
START_TEST(follow_not_preloaded)
{
    const char *start[] = {"LD_PRELOAD=/x/libother.so", "TENSORLEAK_MODE=all", NULL};
    tl_follow_t f;
    tl_follow_take(&f, start, "/opt/tl/libtensorleak.so");
    ck_assert_ptr_null(f.preload);
    ck_assert_uint_eq(f.nvars, 0);
    char *scrubbed[] = {"PATH=/bin", NULL};
    size_t entries;
    ck_assert(!tl_follow_need(&f, scrubbed, NULL, &entries));
    char *out[4];
    ck_assert(tl_follow_need(&f, scrubbed, "TENSORLEAK_EXEC_SEQ=1:1", &entries));
    ck_assert_uint_eq(entries, 4);
    ck_assert_str_eq(env_line(tl_follow_envp(&f, scrubbed, "TENSORLEAK_EXEC_SEQ=1:1", out)),
                     "PATH=/bin|TENSORLEAK_EXEC_SEQ=1:1|");
    const char *none[] = {"TENSORLEAK_MODE=all", NULL};
    tl_follow_take(&f, none, "/opt/tl/libtensorleak.so");
    ck_assert_ptr_null(f.preload);

    static char user[100][32];
    const char *many[104];
    size_t n = 0;
    many[n++] = "LD_PRELOAD=/opt/tl/libtensorleak.so";
    for (int i = 0; i < 100; i++) {
        snprintf(user[i], sizeof user[i], "TENSORLEAK_ZZ%d=1", i);
        many[n++] = user[i];
    }
    many[n++] = "TENSORLEAK_OUTPUT=/r/t.%p.tlt";
    many[n++] = "TENSORLEAK_SESSION=42";
    many[n] = NULL;
    tl_follow_take(&f, many, "/opt/tl/libtensorleak.so");
    ck_assert_uint_eq(f.nvars, TL_FOLLOW_VARS_MAX);
    ck_assert_str_eq(f.vars[0], "TENSORLEAK_OUTPUT=/r/t.%p.tlt");
    ck_assert_str_eq(f.vars[1], "TENSORLEAK_SESSION=42");
    ck_assert_str_eq(f.vars[2], "TENSORLEAK_ZZ0=1");
}
END_TEST

static Suite *make_follow_suite(void)
{
    Suite *s = suite_create("follow");
    TCase *tc = tcase_create("envp");
    tcase_add_test(tc, follow_envp);
    tcase_add_test(tc, follow_not_preloaded);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_config_suite, make_stack_suite, make_writer_suite, make_api_suite,
              make_numpy_suite, make_cudart_suite, make_follow_suite)
