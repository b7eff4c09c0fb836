/* test_report_model.c - Check suite for src/report/model.c: exact peaks, live
 * sets, realloc chains, unknown frees, storage vs plain accounting.
 */
#include <string.h>

#include "report/analyze/model.h"
#include "report/analyze/storages.h"
#include "report/read/grow.h"
#include "tests/unit/test_report.h"
#include "tests/workloads/report_tracegen.h"

static tl_trace_t tr;
static tl_model_t m;
static uint8_t rec[8192];
static tl_wbuf_t w;

static void begin(void)
{
    w = (tl_wbuf_t){rec, rec + sizeof rec, false};
}

/* Read the records written since begin() as one chunk (start_mono 1000,
 * base_ts 1000) and build the model. */
static void build(void)
{
    ck_assert(!w.overflow);
    tl_tgen_t g;
    tl_tgen_header(&g, 8192 + 64, TL_HDR_F_CLEAN_END, 1, 1, 1000);
    tl_tgen_chunk(&g, 1, 0, 1000, rec, (size_t)(w.p - rec));
    char why[128];
    ck_assert_int_eq(tl_trace_read_mem(g.buf, g.len, &tr, why, sizeof why), 0);
    free(g.buf);
    ck_assert(!tl_model_build(&tr, &m));
}

static void done(void)
{
    tl_model_free(&m);
    tl_trace_free(&tr);
}

static uint64_t stack_of(const tl_site_stat_t *s)
{
    return tr.sites[s->site].stack_id;
}

START_TEST(model_peak_and_live)
{
    begin();
    tl_rec_put_alloc(&w, 10, 0, 0xa, 100, 1); /* t 1010: 100 */
    tl_rec_put_alloc(&w, 10, 0, 0xb, 200, 2); /* t 1020: 300 = peak */
    tl_rec_put_free(&w, 10, 3, 0xa);          /* t 1030: 200 */
    tl_rec_put_alloc(&w, 10, 0, 0xc, 50, 3);  /* t 1040: 250 */
    tl_rec_put_alloc(&w, 10, 0, 0xd, 50, 3);  /* t 1050: 300, not above the peak */
    tl_rec_put_free(&w, 10, 3, 0xd);          /* t 1060: 250 */
    build();
    ck_assert_uint_eq(m.peak_bytes, 300);
    ck_assert_uint_eq(m.peak_ts, 1020);
    ck_assert_uint_eq(m.peak_blocks, 2);
    ck_assert_uint_eq(m.live_bytes, 250);
    ck_assert_uint_eq(m.live_blocks, 2);
    ck_assert_uint_eq(m.allocations, 4);
    ck_assert_uint_eq(m.frees, 2);
    ck_assert_uint_eq(m.storages, 0);
    ck_assert_uint_eq(m.peak_storage_bytes, 0);
    ck_assert_uint_eq(m.npeak_sites, 2);
    ck_assert_uint_eq(m.peak_sites[0].bytes, 200);
    ck_assert_uint_eq(stack_of(&m.peak_sites[0]), 2);
    ck_assert_uint_eq(m.peak_sites[1].bytes, 100);
    ck_assert_uint_eq(stack_of(&m.peak_sites[1]), 1);
    ck_assert_uint_eq(m.nleaks, 2);
    ck_assert_uint_eq(stack_of(&m.leaks[0]), 2);
    ck_assert_uint_eq(m.leaks[1].bytes, 50);
    ck_assert_uint_eq(m.leaks[1].blocks, 1);
    ck_assert_uint_eq(stack_of(&m.leaks[1]), 3);
    done();
}
END_TEST

START_TEST(model_storage_vs_plain)
{
    begin();
    tl_rec_put_alloc(&w, 1, TL_KIND_STORAGE_C10, 0x100, 4096, 5);
    tl_rec_put_alloc(&w, 1, TL_KIND_MALLOC, 0x200, 10, 6);
    tl_rec_put_alloc(&w, 1, TL_KIND_STORAGE_C10, 0x300, 1024, 5);
    tl_rec_put_free(&w, 1, TL_KIND_STORAGE_C10, 0x100);
    tl_rec_put_alloc(&w, 1, TL_KIND_STORAGE_C10, 0x400, 8, 7);
    build();
    ck_assert_uint_eq(m.storages, 3);
    ck_assert_uint_eq(m.allocations, 4);
    ck_assert_uint_eq(m.peak_bytes, 5130);
    ck_assert_uint_eq(m.peak_storage_bytes, 5120);
    ck_assert_uint_eq(m.peak_storage_ts, 1003);
    ck_assert_uint_eq(m.live_storage_bytes, 1032);
    ck_assert_uint_eq(m.live_storage_blocks, 2);
    ck_assert_uint_eq(m.live_bytes, 1042);
    /* every storage allocation, by site, bytes = total allocated */
    ck_assert_uint_eq(m.nstorage_sites, 2);
    ck_assert_uint_eq(stack_of(&m.storage_sites[0]), 5);
    ck_assert_uint_eq(m.storage_sites[0].bytes, 5120);
    ck_assert_uint_eq(m.storage_sites[0].blocks, 2);
    ck_assert_uint_eq(m.storage_sites[1].bytes, 8);
    ck_assert(m.storage_sites[0].storage);
    ck_assert_uint_eq(m.nleaks, 3);
    ck_assert(m.leaks[0].storage);
    ck_assert_uint_eq(m.leaks[0].bytes, 1024);
    ck_assert(!m.leaks[1].storage);
    ck_assert_uint_eq(m.leaks[1].bytes, 10);
    done();
}
END_TEST

/* The site of a block grown by realloc is the last realloc's stack. */
START_TEST(model_realloc_chain)
{
    begin();
    tl_rec_put_alloc(&w, 1, 0, 0x10, 10, 1);
    tl_rec_put_realloc(&w, 1, 0x10, 0x20, 20, 2);
    tl_rec_put_realloc(&w, 1, 0x20, 0x30, 40, 3);
    tl_rec_put_realloc(&w, 1, 0, 0x40, 5, 4); /* realloc(NULL, 5): a malloc */
    tl_rec_put_realloc(&w, 1, 0x40, 0, 0, 0); /* realloc(p, 0): a free */
    tl_rec_put_alloc(&w, 1, TL_KIND_STORAGE_C10, 0x50, 100, 8);
    tl_rec_put_realloc(&w, 1, 0x50, 0x60, 300, 9); /* a grown storage stays one */
    build();
    ck_assert_uint_eq(m.allocations, 6);
    ck_assert_uint_eq(m.frees, 4);
    ck_assert_uint_eq(m.storages, 1);
    ck_assert_uint_eq(m.unknown_frees, 0);
    ck_assert_uint_eq(m.nleaks, 2);
    ck_assert_uint_eq(stack_of(&m.leaks[0]), 9);
    ck_assert_uint_eq(m.leaks[0].bytes, 300);
    ck_assert(m.leaks[0].storage);
    ck_assert_uint_eq(stack_of(&m.leaks[1]), 3);
    ck_assert_uint_eq(m.leaks[1].bytes, 40);
    ck_assert(!m.leaks[1].storage);
    ck_assert_uint_eq(m.live_storage_bytes, 300);
    ck_assert_uint_eq(m.peak_bytes, 340);
    done();
}
END_TEST

START_TEST(model_unknown_and_replaced)
{
    begin();
    tl_rec_put_free(&w, 1, 3, 0x999);             /* unknown: ignored */
    tl_rec_put_realloc(&w, 1, 0x998, 0x10, 7, 1); /* unknown old pointer */
    tl_rec_put_alloc(&w, 1, 0, 0x20, 100, 2);
    tl_rec_put_alloc(&w, 1, 0, 0x20, 30, 3); /* same address still live */
    tl_rec_put_free(&w, 1, 3, 0x20);
    tl_rec_put_free(&w, 1, 3, 0x20);       /* double free: unknown */
    tl_rec_put_alloc(&w, 1, 0, 0, 100, 2); /* failed allocation: no block */
    build();
    ck_assert_uint_eq(m.unknown_frees, 3);
    ck_assert_uint_eq(m.replaced_blocks, 1);
    ck_assert_uint_eq(m.allocations, 3);
    ck_assert_uint_eq(m.frees, 1);
    ck_assert_uint_eq(m.live_bytes, 7);
    ck_assert_uint_eq(m.live_blocks, 1);
    ck_assert_uint_eq(m.peak_bytes, 107);
    ck_assert_uint_eq(m.nleaks, 1);
    ck_assert_uint_eq(stack_of(&m.leaks[0]), 1);
    done();
}
END_TEST

/* Equal bytes: more blocks first, then first-seen site, then plain first. */
START_TEST(model_tie_order)
{
    begin();
    tl_rec_put_alloc(&w, 1, 0, 0x10, 60, 4);
    tl_rec_put_alloc(&w, 1, 0, 0x20, 30, 5);
    tl_rec_put_alloc(&w, 1, 0, 0x30, 30, 5);
    tl_rec_put_alloc(&w, 1, 0, 0x40, 60, 6);
    tl_rec_put_alloc(&w, 1, TL_KIND_STORAGE_C10, 0x50, 60, 4);
    build();
    ck_assert_uint_eq(m.nleaks, 4);
    ck_assert_uint_eq(stack_of(&m.leaks[0]), 5); /* 60 B in 2 blocks */
    ck_assert_uint_eq(stack_of(&m.leaks[1]), 4);
    ck_assert(!m.leaks[1].storage);
    ck_assert_uint_eq(stack_of(&m.leaks[2]), 4);
    ck_assert(m.leaks[2].storage);
    ck_assert_uint_eq(stack_of(&m.leaks[3]), 6);
    done();
}
END_TEST

START_TEST(model_empty)
{
    begin();
    build();
    ck_assert_uint_eq(m.peak_bytes, 0);
    ck_assert_uint_eq(m.nleaks + m.npeak_sites + m.nstorage_sites, 0);
    done();
}
END_TEST

/* The model's largest exactly recorded block (tools/launch.c's helper
 * test), and the timeline only when asked for. */
START_TEST(model_largest_exact_and_timeline)
{
    begin();
    tl_rec_put_alloc(&w, 10, 0, 0xa, 100, 1);
    tl_rec_put_alloc(&w, 10, 0, 0xb, 70000, 2);
    tl_rec_put_free(&w, 10, 3, 0xb);
    tl_rec_put_alloc(&w, 10, 0, 0xc, 300, 3);
    build();
    ck_assert_uint_eq(m.largest_exact, 70000);
    ck_assert_ptr_nonnull(m.timeline); /* tl_model_build: everything */
    tl_model_t m2;
    tl_model_opts_t o = {.timeline = false};
    ck_assert(!tl_model_build_with(&tr, &m2, &o));
    ck_assert_ptr_null(m2.timeline);
    ck_assert_uint_eq(m2.peak_bytes, m.peak_bytes);
    ck_assert_uint_eq(m2.live_bytes, 400);
    ck_assert_uint_eq(m2.largest_exact, 70000);
    tl_model_free(&m2);
    done();
}
END_TEST

/* tl_grow: capacity first, doubled to fit; untouched when it fits or fails. */
START_TEST(grow_doubles)
{
    size_t cap = 0;
    int *a = tl_grow(NULL, &cap, 5, sizeof *a, 4);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(cap, 8);
    a[7] = 7;
    ck_assert_ptr_eq(tl_grow(a, &cap, 8, sizeof *a, 4), a);
    ck_assert_uint_eq(cap, 8);
    int *b = tl_grow(a, &cap, 9, sizeof *b, 4);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(b[7], 7);
    ck_assert_ptr_null(tl_grow(b, &cap, SIZE_MAX / 2, sizeof *b, 4)); /* bytes overflow */
    ck_assert_uint_eq(cap, 16);
    ck_assert_int_eq(b[7], 7);
    free(b);
}
END_TEST

/* tl_stor_find of an address inside a storage: the smallest storage that
 * holds it (nested ones too), the same whether it came from the pass over
 * the slots (a few misses after a change) or from the index by base (a run
 * of them), before and after adds and removes; NULL at a storage's end
 * and between storages. */
static uint64_t stor_find_base(tl_stor_t *st, uint64_t ptr)
{
    const tl_storage_t *s = tl_stor_find(st, ptr);
    return s ? s->base : 0;
}

START_TEST(stor_find_inside)
{
    tl_stor_t st;
    memset(&st, 0, sizeof st);
    for (uint64_t i = 0; i < 1000; i++) /* 1000 storages of 256 B, 4 KiB apart */
        ck_assert(!tl_stor_add(&st, &(tl_storage_t){.base = 0x100000 + i * 4096, .bytes = 256}));
    ck_assert(!tl_stor_add(&st, &(tl_storage_t){.base = 0x90000000, .bytes = 1 << 20}));
    ck_assert(!tl_stor_add(&st, &(tl_storage_t){.base = 0x90001000, .bytes = 64})); /* nested */
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < 20; k++) { /* the first misses by the pass, then by the index */
            ck_assert_uint_eq(stor_find_base(&st, 0x100000 + 500 * 4096 + 10),
                              0x100000 + 500 * 4096);
            ck_assert_uint_eq(stor_find_base(&st, 0x100000 + 500 * 4096 + 256), 0); /* its end */
            ck_assert_uint_eq(stor_find_base(&st, 0x100000 + 999 * 4096 + 255),
                              0x100000 + 999 * 4096);
            ck_assert_uint_eq(stor_find_base(&st, 0x90001000 + 8), 0x90001000); /* the smaller */
            ck_assert_uint_eq(stor_find_base(&st, 0x90001000 + 64), 0x90000000);
            ck_assert_uint_eq(stor_find_base(&st, 0x90000000 + (1 << 20)), 0);
            ck_assert_uint_eq(stor_find_base(&st, 0x100000 - 1), 0);
            ck_assert_uint_eq(stor_find_base(&st, 0x100000), 0x100000); /* a base: the map */
        }
        ck_assert(tl_stor_remove(&st, 0x90001000, NULL)); /* the index is stale again */
        ck_assert(tl_stor_remove(&st, 0x100000 + 500 * 4096, NULL));
        ck_assert(!tl_stor_add(&st, &(tl_storage_t){.base = 0x90001000, .bytes = 64}));
        ck_assert(!tl_stor_add(&st, &(tl_storage_t){.base = 0x100000 + 500 * 4096, .bytes = 256}));
    }
    ck_assert(tl_stor_remove(&st, 0x90001000, NULL));
    for (int k = 0; k < 20; k++)
        ck_assert_uint_eq(stor_find_base(&st, 0x90001000 + 8), 0x90000000);
    tl_stor_free(&st);
}
END_TEST

Suite *make_model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, model_peak_and_live);
    tcase_add_test(tc, model_storage_vs_plain);
    tcase_add_test(tc, model_realloc_chain);
    tcase_add_test(tc, model_unknown_and_replaced);
    tcase_add_test(tc, model_tie_order);
    tcase_add_test(tc, model_empty);
    tcase_add_test(tc, model_largest_exact_and_timeline);
    tcase_add_test(tc, grow_doubles);
    tcase_add_test(tc, stor_find_inside);
    suite_add_tcase(s, tc);
    return s;
}
