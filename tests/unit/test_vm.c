/* test_vm.c - the agent's own mappings go through vm.c and nowhere else.
 *
 * This runner defines mmap/munmap/madvise/mremap itself, as the preloaded
 * library's hooks_proc.c does: the agent's modules, linked in statically,
 * would call these if they still called mmap. Each one counts its calls and
 * tells the leak scan, as the real hook does; the tests then drive the
 * modules that map memory (live, stack, blocks, checkpoint, writer,
 * cudart_static, the leak scan) and find no call here, their mappings known
 * to vm.c (tl_vm_is_own) and unknown to the leak scan's table. Also: vm.c's
 * range set (holes, a full table) and errno kept.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/blocks.h"
#include "agent/checkpoint.h"
#include "agent/cudart_static.h"
#include "agent/leakscan.h"
#include "agent/live.h"
#include "agent/stack.h"
#include "agent/vm.h"
#include "agent/writer.h"
#include "tests/unit/check_main.h"

/* --- the program's hooks, as in hooks_proc.c --- */

static _Atomic unsigned hook_calls;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    atomic_fetch_add(&hook_calls, 1);
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (r == -1) return MAP_FAILED;
    if (flags & MAP_ANONYMOUS)
        tl_leakscan_on_mmap((void *)r, len, (uintptr_t)__builtin_return_address(0));
    return (void *)r;
}

int munmap(void *addr, size_t len)
{
    atomic_fetch_add(&hook_calls, 1);
    long r = syscall(SYS_munmap, addr, len);
    if (r == 0) tl_leakscan_on_munmap(addr, len);
    return (int)r;
}

int madvise(void *addr, size_t len, int advice)
{
    atomic_fetch_add(&hook_calls, 1);
    return (int)syscall(SYS_madvise, addr, len, advice);
}

void *mremap(void *old, size_t old_len, size_t len, int flags, ...)
{
    (void)old, (void)old_len, (void)len, (void)flags;
    atomic_fetch_add(&hook_calls, 1);
    errno = ENOSYS;
    return MAP_FAILED;
}

/* addr: the agent's (vm.c knows it), not the program's (the scan's table). */
static void assert_own(const void *addr, const char *what)
{
    uint64_t r[2], a = (uintptr_t)addr;
    ck_assert_msg(addr != NULL, "%s: not mapped", what);
    ck_assert_msg(tl_vm_is_own(a, a + 1, r), "%s: not in vm.c's set", what);
    ck_assert_msg(r[0] <= a && a < r[1], "%s: wrong range", what);
    ck_assert_msg(!tl_leakscan_has_mapping(addr), "%s: reached the mmap hook", what);
}

START_TEST(the_hook_sees_the_program)
{
    /* the control: a mapping of the program's own reaches the hook */
    unsigned before = atomic_load(&hook_calls);
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    ck_assert_uint_eq(atomic_load(&hook_calls), before + 1);
    ck_assert(tl_leakscan_has_mapping(p));
    uint64_t r[2];
    ck_assert(!tl_vm_is_own((uintptr_t)p, (uintptr_t)p + 4096, r));
    munmap(p, 4096);
    ck_assert(!tl_leakscan_has_mapping(p));
}
END_TEST

static void __attribute__((unused)) emit(void *ctx, uint64_t ptr, unsigned kind)
{
    (void)ctx, (void)ptr, (void)kind;
}

START_TEST(agent_mappings_never_reach_the_hook)
{
    atomic_store(&hook_calls, 0);
    ck_assert(!tl_live_init_lg(12));
    tl_live_entry_t e = {.ptr = 0x1000, .size = 16};
    ck_assert(!tl_live_insert(&e));
    tl_live_reset(false);
    tl_stack_table_t st = {0};
    ck_assert(!tl_stack_table_init(&st, 10));
    assert_own(st.slots, "stack table");
    tl_stack_table_reset(&st);
    assert_own(st.slots, "stack table after reset");
    tl_stack_buf_t *buf = tl_stack_buf_get();
    assert_own(buf, "unwind buffer");
    static char heap[64];
    ck_assert(!tl_blocks_leaf_make((uintptr_t)heap));
    assert_own(tl_blocks_leaf[(uintptr_t)heap >> TL_BLOCKS_REGION_LG], "blocks leaf");
    char path[] = "/tmp/tl_test_vm.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(path));
    char file[64];
    snprintf(file, sizeof file, "%s/t.tlt", path);
    static tl_writer_t w;
    tl_writer_hdr_t hdr = {.session = 1};
    ck_assert_int_eq(tl_writer_create(&w, file, &hdr), 0);
    ck_assert(!tl_ckpt_init(&w, 1000000));
    ck_assert(!tl_ckpt_init(&w, 1000000)); /* again: its sites made zero in place */
    (void)tl_cudart_static_is_in(file);    /* maps the file to read it */
#if !defined(__SANITIZE_ADDRESS__)
    /* (Not under ASan: its shadow, terabytes of rw-p, would be a root.) */
    const uintptr_t excl[2][2] = {{0, 0}, {0, 0}};
    tl_leakscan_stats_t ls;
    ck_assert(!tl_leakscan_run(excl, emit, NULL, &ls));
    ck_assert_uint_eq(ls.blocks, 0);
#endif
    tl_writer_release(&w);
    tl_stack_table_destroy(&st);
    ck_assert_uint_eq(atomic_load(&hook_calls), 0);
    ck_assert_uint_eq(tl_vm_own_missed(), 0);
    unlink(file);
    rmdir(path);
}
END_TEST

START_TEST(unmap_forgets_and_errno_stays)
{
    void *p;
    unsigned calls = atomic_load(&hook_calls);
    errno = 1234;
    ck_assert_int_eq(tl_vm_map_anon(&p, 3 * 4096, false), 0);
    assert_own(p, "anon");
    uint64_t a = (uintptr_t)p, r[2];
    ck_assert_int_eq(tl_vm_unmap((char *)p + 4096, 4096), 0); /* a hole in the middle */
    ck_assert(!tl_vm_is_own(a + 4096, a + 8192, r));
    ck_assert(tl_vm_is_own(a, a + 1, r));
    ck_assert(r[0] == a && r[1] == a + 4096);
    ck_assert(tl_vm_is_own(a + 8192, a + 8193, r));
    ck_assert(r[0] == a + 8192 && r[1] == a + 12288);
    tl_vm_on_munmap(p, 3 * 4096); /* the program unmapped it all */
    ck_assert(!tl_vm_is_own(a, a + 12288, r));
    ck_assert_int_eq(tl_vm_unmap(p, 3 * 4096), 0);
    ck_assert_int_eq(tl_vm_map(&p, NULL, 4096, PROT_READ, MAP_PRIVATE, -1, 0), -EBADF);
    ck_assert_int_eq(tl_vm_advise(NULL, 4096, 12345), -EINVAL);
    ck_assert_int_eq(errno, 1234); /* never the program's errno */
    ck_assert_uint_eq(atomic_load(&hook_calls), calls);
}
END_TEST

START_TEST(a_full_set_counts_its_misses)
{
    static tl_vm_range_t slot[2];
    static tl_vm_ranges_t s = {.slot = slot, .cap = 2};
    uint64_t r[2];
    tl_vm_ranges_add(&s, 0x10000, 0x1000, 7);
    tl_vm_ranges_add(&s, 0x20000, 0x1000, 8);
    tl_vm_ranges_add(&s, 0x30000, 0x1000, 9);
    ck_assert_uint_eq(atomic_load(&s.missed), 1);
    ck_assert(!tl_vm_ranges_has(&s, 0x30000, 0x31000, NULL, NULL, r));
    ck_assert(tl_vm_ranges_has(&s, 0x0, 0x10001, NULL, NULL, r));
    ck_assert(r[0] == 0x10000 && r[1] == 0x11000);
    tl_vm_ranges_remove(&s, 0x10000, 0x1000);
    tl_vm_ranges_add(&s, 0x30000, 0x1000, 9); /* the freed slot */
    ck_assert(tl_vm_ranges_has(&s, 0x30fff, 0x40000, NULL, NULL, r));
    ck_assert_uint_eq(atomic_load(&s.missed), 1);
}
END_TEST

static Suite *make_vm_suite(void)
{
    Suite *s = suite_create("vm");
    TCase *tc = tcase_create("mappings");
    tcase_add_test(tc, the_hook_sees_the_program);
    tcase_add_test(tc, agent_mappings_never_reach_the_hook);
    tcase_add_test(tc, unmap_forgets_and_errno_stays);
    tcase_add_test(tc, a_full_set_counts_its_misses);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_vm_suite)
