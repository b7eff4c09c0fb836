/* test_leakscan.c - unit tests of the leak-kind classification
 * (leakscan.c's tl_leakscan_classify) on synthetic blocks and roots:
 * valgrind memcheck's definitions of still reachable, possibly lost,
 * indirectly lost and definitely lost, chains, cycles and the edges of a
 * block. The blocks are slices of a static array whose words the tests
 * set; the roots another one.
 */
#include <config.h>

#include "agent/leakscan.h"
#include "common/trace_format.h"
#include "tests/unit/check_main.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WORDS 64

/* 8 blocks of 8 words each: block k is heap[8k, 8k + 8) */
static uint64_t heap[WORDS] __attribute__((aligned(64)));
static uint64_t root[8];
static tl_leakscan_blk_t b[8];
static uint32_t work[8];

static uint64_t at(unsigned k, unsigned word)
{
    return (uint64_t)(uintptr_t)&heap[8 * k + word];
}

/* n blocks of bytes each (<= 64), memory and roots cleared. */
static void setup(size_t n, uint64_t bytes)
{
    memset(heap, 0, sizeof heap);
    memset(root, 0, sizeof root);
    for (size_t k = 0; k < n; k++)
        b[k] = (tl_leakscan_blk_t){at((unsigned)k, 0), at((unsigned)k, 0) + (bytes ? bytes : 1), 9};
}

static void classify(size_t n)
{
    const uint64_t roots[1][2] = {{(uintptr_t)&root[0], (uintptr_t)&root[8]}};
    tl_leakscan_classify(b, n, work, roots, 1);
}

START_TEST(start_pointer_from_root_is_reachable)
{
    setup(2, 64);
    root[3] = at(0, 0);
    classify(2);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_DEFINITE); /* nothing points to it */
}
END_TEST

START_TEST(interior_pointer_only_is_possibly_lost)
{
    setup(3, 64);
    root[0] = at(0, 5);      /* inside block 0 */
    root[1] = at(1, 0) + 3;  /* inside, unaligned */
    root[2] = at(1, 0) + 64; /* one past block 1's end: block 2's start, reachable */
    classify(3);
    ck_assert_uint_eq(b[0].state, TL_LEAK_POSSIBLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_POSSIBLE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_REACHABLE);
}
END_TEST

START_TEST(start_pointer_wins_over_interior)
{
    setup(1, 64);
    root[0] = at(0, 2);
    root[1] = at(0, 0);
    classify(1);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
    setup(1, 64); /* the other order */
    root[0] = at(0, 0);
    root[1] = at(0, 7);
    classify(1);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
}
END_TEST

START_TEST(chains_from_roots)
{
    /* root -> 0 -> 1 (start) and 0 -> 2 (interior); 2 -> 3 (start):
     * memcheck marks by the kind of pointer, whatever held it */
    setup(5, 64);
    root[0] = at(0, 0);
    heap[8 * 0 + 1] = at(1, 0);
    heap[8 * 0 + 2] = at(2, 4);
    heap[8 * 2 + 7] = at(3, 0);
    heap[8 * 4 + 0] = at(4, 0); /* a block pointing to itself only: lost */
    classify(5);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_POSSIBLE);
    ck_assert_uint_eq(b[3].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[4].state, TL_LEAK_DEFINITE);
}
END_TEST

START_TEST(held_only_by_lost_blocks_is_indirect)
{
    /* 1 -> 0 and 1 -> 2 -> 3 (interior), none from a root: 1 is the only
     * definitely lost one, though 0 comes first in address order */
    setup(4, 64);
    heap[8 * 1 + 0] = at(0, 0);
    heap[8 * 1 + 4] = at(2, 0);
    heap[8 * 2 + 6] = at(3, 3);
    classify(4);
    ck_assert_uint_eq(b[0].state, TL_LEAK_INDIRECT);
    ck_assert_uint_eq(b[1].state, TL_LEAK_DEFINITE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_INDIRECT);
    ck_assert_uint_eq(b[3].state, TL_LEAK_INDIRECT);
}
END_TEST

START_TEST(cycle_of_lost_blocks_has_one_definite)
{
    /* 0 <-> 1 and 2 -> 3 -> 2: each cycle's first block in address order
     * is definitely lost, the rest of it indirectly (memcheck's cliques) */
    setup(4, 64);
    heap[8 * 0 + 0] = at(1, 0);
    heap[8 * 1 + 0] = at(0, 0);
    heap[8 * 2 + 3] = at(3, 0);
    heap[8 * 3 + 3] = at(2, 0);
    classify(4);
    ck_assert_uint_eq(b[0].state, TL_LEAK_DEFINITE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_INDIRECT);
    ck_assert_uint_eq(b[2].state, TL_LEAK_DEFINITE);
    ck_assert_uint_eq(b[3].state, TL_LEAK_INDIRECT);
}
END_TEST

START_TEST(reachable_cycle_and_lost_pointer_to_reachable)
{
    /* root -> 0 <-> 1: both reachable; lost 2 -> 0 does not change 0 */
    setup(3, 64);
    root[5] = at(0, 0);
    heap[8 * 0 + 0] = at(1, 0);
    heap[8 * 1 + 0] = at(0, 0);
    heap[8 * 2 + 0] = at(0, 0);
    classify(3);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_DEFINITE);
}
END_TEST

START_TEST(block_edges)
{
    /* blocks of 16 B at 64 B strides: a pointer to byte 15 is inside,
     * to byte 16 (the gap after it) is nothing; an empty block is found
     * by its address */
    setup(3, 16);
    b[2].end = b[2].ptr + 1; /* malloc(0) */
    root[0] = at(0, 1) + 7;  /* byte 15 of block 0 */
    root[1] = at(1, 2);      /* byte 16 of block 1: past its end */
    root[2] = at(2, 0);
    classify(3);
    ck_assert_uint_eq(b[0].state, TL_LEAK_POSSIBLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_DEFINITE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_REACHABLE);
}
END_TEST

START_TEST(words_outside_roots_do_not_count)
{
    /* a root range that stops short of a word holding a pointer */
    setup(1, 64);
    root[7] = at(0, 0);
    const uint64_t roots[1][2] = {{(uintptr_t)&root[0], (uintptr_t)&root[7]}};
    tl_leakscan_classify(b, 1, work, roots, 1);
    ck_assert_uint_eq(b[0].state, TL_LEAK_DEFINITE);
    tl_leakscan_classify(b, 1, work, roots, 0); /* no roots at all */
    ck_assert_uint_eq(b[0].state, TL_LEAK_DEFINITE);
}
END_TEST

/* A CPython int's first two 30-bit digits, as one 8-byte word. */
static uint64_t py_int(uint64_t v)
{
    return (v & 0x3fffffff) | (v >> 30) << 32;
}

START_TEST(pointer_held_as_python_int_is_reachable)
{
    /* torch keeps a StorageImpl's address as an int (StorageWeakRef.cdata) */
    setup(3, 64);
    root[2] = py_int(at(0, 0));
    heap[0] = py_int(at(1, 0));                     /* and from a reached block */
    root[4] = py_int(at(2, 0)) | UINT64_C(1) << 31; /* not a digit: no int */
    classify(3);
    ck_assert_uint_eq(b[0].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[1].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(b[2].state, TL_LEAK_DEFINITE);
}
END_TEST

/* Blocks are read in batches, one process_vm_readv for many (leakscan.c,
 * drain). An unreadable block (a PROT_NONE page) in the middle of a batch
 * stops the read there: the blocks after it are still scanned. */
START_TEST(unreadable_block_inside_a_batch)
{
    long page = sysconf(_SC_PAGESIZE);
    char *m =
        mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    uint64_t *w = (uint64_t *)(void *)m;
    tl_leakscan_blk_t k[6];
    uint32_t q[6];
    uint64_t at6[6] = {
        (uintptr_t)m,       (uintptr_t)m + 64,           (uintptr_t)m + 128,
        (uintptr_t)m + 192, (uintptr_t)m + (size_t)page, (uintptr_t)m + 2 * (size_t)page};
    for (int i = 0; i < 6; i++)
        k[i] = (tl_leakscan_blk_t){at6[i], at6[i] + 64, 9};
    w[0] = at6[2];                                                    /* block 0 holds block 2 */
    w[8] = at6[3];                                                    /* block 1 holds block 3 */
    ck_assert_int_eq(mprotect(m + page, (size_t)page, PROT_NONE), 0); /* block 4 */
    uint64_t r[3] = {at6[0], at6[4], at6[1]}; /* queued 0, 4, 1: read 1, 4, 0 */
    const uint64_t roots[1][2] = {{(uintptr_t)&r[0], (uintptr_t)&r[3]}};
    tl_leakscan_classify(k, 6, q, roots, 1);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(k[i].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(k[5].state, TL_LEAK_DEFINITE);
    munmap(m, 3 * (size_t)page);
}
END_TEST

/* More queued blocks than one batch takes (256), and a block bigger than
 * the read buffer (64 KiB), read on its own: what each holds is found. */
START_TEST(many_blocks_and_a_big_one)
{
    enum { SMALL = 600, BIG = 80 << 10, N = SMALL + 3 };
    size_t bytes = SMALL * 64 + BIG + 128;
    char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(m, MAP_FAILED);
    tl_leakscan_blk_t *k = calloc(N, sizeof *k);
    uint32_t *q = calloc(N, sizeof *q);
    uint64_t *r = calloc(SMALL, sizeof *r);
    ck_assert(k && q && r);
    for (size_t i = 0; i < SMALL; i++) {
        k[i] = (tl_leakscan_blk_t){(uintptr_t)m + 64 * i, (uintptr_t)m + 64 * i + 64, 9};
        r[i] = k[i].ptr;
    }
    uintptr_t big = (uintptr_t)m + SMALL * 64;
    k[SMALL] = (tl_leakscan_blk_t){big, big + BIG, 9};
    k[SMALL + 1] = (tl_leakscan_blk_t){big + BIG, big + BIG + 64, 9};
    k[SMALL + 2] = (tl_leakscan_blk_t){big + BIG + 64, big + BIG + 128, 9};
    memcpy(m + 64 * (SMALL - 1) + 8, &big, 8); /* the last small block holds the big one */
    uint64_t last = big + BIG;
    memcpy((char *)big + BIG - 8, &last, 8); /* whose last word holds the next */
    const uint64_t roots[1][2] = {{(uintptr_t)r, (uintptr_t)(r + SMALL)}};
    tl_leakscan_classify(k, N, q, roots, 1);
    for (size_t i = 0; i < SMALL + 2; i++)
        ck_assert_uint_eq(k[i].state, TL_LEAK_REACHABLE);
    ck_assert_uint_eq(k[SMALL + 2].state, TL_LEAK_DEFINITE);
    free(k);
    free(q);
    free(r);
    munmap(m, bytes);
}
END_TEST

/* ---- CPython's pools (obmalloc.c; leakscan.h) ---- */

static uint8_t pool[TL_PY_POOL_BYTES] __attribute__((aligned(TL_PY_POOL_BYTES)));

/* A pool header: count allocated, free list from slot first (-1: none),
 * size class szidx, nextoffset next. */
static void pool_header(uint32_t count, int first, uint32_t szidx, uint32_t next)
{
    memset(pool, 0, sizeof pool);
    uint32_t size = (szidx + 1) * 16, maxnext = TL_PY_POOL_BYTES - size;
    uint64_t fb = first < 0 ? 0 : (uintptr_t)pool + 48 + (uint64_t)first * size;
    memcpy(pool, &count, 4);
    memcpy(pool + 8, &fb, 8);
    memcpy(pool + 36, &szidx, 4);
    memcpy(pool + 40, &next, 4);
    memcpy(pool + 44, &maxnext, 4);
}

/* Slot from's first word: slot to (-1: the list's end), size bytes a slot. */
static void pool_link(int from, int to, uint32_t size)
{
    uint64_t v = to < 0 ? 0 : (uintptr_t)pool + 48 + (uint64_t)to * size;
    memcpy(pool + 48 + (size_t)from * size, &v, 8);
}

static int pool_live(uint64_t live[16], unsigned *size)
{
    return tl_leakscan_py_pool(pool, (uintptr_t)pool, live, size);
}

/* 10 blocks of 64 B handed out, 3 given back (5 -> 2 -> 9): the other 7
 * are the allocated ones; a pool given back whole has none; a full pool of
 * 16-byte blocks has all 1021. */
START_TEST(py_pool_allocated_blocks)
{
    uint64_t live[16];
    unsigned size = 0;
    pool_header(7, 5, 3, 48 + 10 * 64);
    pool_link(5, 2, 64);
    pool_link(2, 9, 64);
    pool_link(9, -1, 64);
    ck_assert_int_eq(pool_live(live, &size), 10);
    ck_assert_uint_eq(size, 64);
    ck_assert_uint_eq(live[0], 0x1db); /* 0, 1, 3, 4, 6, 7, 8 */
    for (int w = 1; w < 16; w++)
        ck_assert_uint_eq(live[w], 0);

    pool_header(0, 0, 3, 48 + 2 * 64); /* empty: both on the free list */
    pool_link(0, 1, 64);
    pool_link(1, -1, 64);
    ck_assert_int_eq(pool_live(live, &size), 2);
    ck_assert_uint_eq(live[0], 0);

    pool_header(1021, -1, 0, TL_PY_POOL_BYTES); /* full */
    ck_assert_int_eq(pool_live(live, &size), 1021);
    ck_assert_uint_eq(size, 16);
    ck_assert_uint_eq(live[14], ~UINT64_C(0));
    ck_assert_uint_eq(live[15], (UINT64_C(1) << 61) - 1); /* 1021 - 960 */
}
END_TEST

/* Bytes that are not a pool as obmalloc leaves one: the caller then reads
 * the whole pool, as before. */
START_TEST(py_pool_refused)
{
    uint64_t live[16];
    unsigned size = 0;
    memset(pool, 0, sizeof pool); /* never used: maxnextoffset 0 */
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_header(8, 5, 3, 48 + 10 * 64); /* the count disagrees with the list */
    pool_link(5, 2, 64);
    pool_link(2, 9, 64);
    pool_link(9, -1, 64);
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_header(7, 5, 3, 48 + 10 * 64); /* a loop */
    pool_link(5, 2, 64);
    pool_link(2, 9, 64);
    pool_link(9, 5, 64);
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_link(9, 10, 64); /* past nextoffset */
    ck_assert_int_eq(pool_live(live, &size), -1);
    uint64_t odd = (uintptr_t)pool + 48 + 9 * 64 + 8; /* inside a block */
    memcpy(pool + 48 + 2 * 64, &odd, 8);
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_header(1, -1, 32, 48 + 528); /* no such size class (512 B at most) */
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_header(1, -1, 3, 48 + 64 + 8); /* nextoffset between blocks */
    ck_assert_int_eq(pool_live(live, &size), -1);
    pool_header(10, -1, 3, 48 + 10 * 64);         /* maxnextoffset of another class */
    ck_assert_int_eq(pool_live(live, &size), 10); /* valid as it stands */
    uint32_t maxnext = TL_PY_POOL_BYTES - 32;
    memcpy(pool + 44, &maxnext, 4);
    ck_assert_int_eq(pool_live(live, &size), -1);
}
END_TEST

static Suite *make_leakscan_suite(void)
{
    Suite *s = suite_create("leakscan");
    TCase *tc = tcase_create("kinds");
    tcase_add_test(tc, start_pointer_from_root_is_reachable);
    tcase_add_test(tc, interior_pointer_only_is_possibly_lost);
    tcase_add_test(tc, start_pointer_wins_over_interior);
    tcase_add_test(tc, chains_from_roots);
    tcase_add_test(tc, held_only_by_lost_blocks_is_indirect);
    tcase_add_test(tc, cycle_of_lost_blocks_has_one_definite);
    tcase_add_test(tc, reachable_cycle_and_lost_pointer_to_reachable);
    tcase_add_test(tc, block_edges);
    tcase_add_test(tc, words_outside_roots_do_not_count);
    tcase_add_test(tc, pointer_held_as_python_int_is_reachable);
    tcase_add_test(tc, unreadable_block_inside_a_batch);
    tcase_add_test(tc, many_blocks_and_a_big_one);
    tcase_add_test(tc, py_pool_allocated_blocks);
    tcase_add_test(tc, py_pool_refused);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_leakscan_suite)
