/* test_shm.c - unit tests of the agent's table of shared-memory storages
 * (shm.c): a base is remembered once, forgotten by an munmap of any range
 * that holds it and by no other, and a registration beyond the table's
 * TL_SHM_SLOTS is refused (its caller unregisters it at once). Without the
 * agent's init nothing is recorded: the table alone is tested.
 */
#include <config.h>

#include "agent/shm.h"
#include "tests/unit/check_main.h"

#define PAGE 4096u

static const void *at(uint64_t a)
{
    return (const void *)(uintptr_t)a;
}

START_TEST(munmap_forgets_the_bases_it_covers)
{
    uint64_t a = 0x7f0000000000, b = a + 16 * PAGE;
    ck_assert(!tl_shm_on_register(a));
    ck_assert(!tl_shm_on_register(a)); /* again: the same slot */
    ck_assert(!tl_shm_on_register(b));
    tl_shm_on_munmap(at(a + PAGE), 15 * PAGE); /* past a, short of b: neither */
    tl_shm_on_munmap(at(a), 16 * PAGE);        /* a's mapping: a only */
    /* the table takes TL_SHM_SLOTS - 1 more beside b, then refuses */
    for (uint64_t i = 1; i < TL_SHM_SLOTS; i++)
        ck_assert_msg(!tl_shm_on_register(b + i * PAGE), "slot %lu", (unsigned long)i);
    ck_assert(tl_shm_on_register(b + TL_SHM_SLOTS * PAGE));
    ck_assert(!tl_shm_on_register(b)); /* b is still there */
    tl_shm_on_munmap(at(b), PAGE);     /* b's slot freed: a new base takes it */
    ck_assert(!tl_shm_on_register(b + TL_SHM_SLOTS * PAGE));
    ck_assert(tl_shm_on_register(a));
    tl_shm_on_munmap(at(b), (TL_SHM_SLOTS + 1) * PAGE); /* all of them */
    ck_assert(!tl_shm_on_register(a));
}
END_TEST

static Suite *make_shm_suite(void)
{
    Suite *s = suite_create("shm");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, munmap_forgets_the_bases_it_covers);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_shm_suite)
