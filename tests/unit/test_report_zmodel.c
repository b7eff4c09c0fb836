/* test_report_zmodel.c - the block model of compressed chunks
 * (report/read/zmodel.h): its exact streams for a small chunk, the same
 * bytes back for chunks of every kind of record, and untrusted models (cut,
 * damaged) that fail or decode without reading or writing outside their
 * buffers (the ASan pass of the unit suite sees any overrun). */
#include <stdlib.h>
#include <string.h>

#include "common/block.h"
#include "report/read/zmodel.h"
#include "tests/unit/test_report.h"

/* A slot: a chunk header (magic, tid 7, then zeros) and the records made so far. */
typedef struct slot {
    uint8_t b[16384];
    uint8_t *p;
    uint64_t prev; /* the run's previous packed pointer */
} slot_t;

static void slot_init(slot_t *s)
{
    memset(s->b, 0, TL_CHUNK_HEADER_BYTES);
    tl_store_le32(s->b + TL_CHK_MAGIC, TL_CHUNK_MAGIC);
    tl_store_le32(s->b + TL_CHK_TID, 7);
    s->p = s->b + TL_CHUNK_HEADER_BYTES;
    s->prev = 0;
}

static void slot_block(slot_t *s, uint64_t ts, unsigned kind, uint64_t ptr, uint64_t size,
                       uint64_t stack)
{
    ck_assert_int_ge(s->b + sizeof s->b - s->p, TL_BLOCK_MAX + 8);
    s->p = tl_block_put(s->p, ts, kind, ptr - s->prev, size, stack);
    s->prev = ptr;
}

/* Encode the slot, check the model decodes to the same bytes; its length. */
static size_t round_trip(tl_zmodel_t *m, const slot_t *s, uint8_t *model)
{
    size_t n = (size_t)(s->p - s->b);
    size_t len = tl_zmodel_encode(m, s->b, n, model);
    ck_assert_uint_gt(len, 0);
    uint8_t *back = malloc(n); /* exactly n: ASan sees an overrun */
    ck_assert(!tl_zmodel_decode(m, model, len, back, n));
    ck_assert(!memcmp(back, s->b, n));
    ck_assert(tl_zmodel_decode(m, model, len, back, n - 1)); /* not exactly n bytes */
    free(back);
    return len;
}

START_TEST(zmodel_streams)
{
    slot_t s;
    slot_init(&s);
    slot_block(&s, 0, TL_KIND_MALLOC, 0x1000, 16, 1);
    slot_block(&s, 0, TL_KIND_MALLOC, 0x2000, 32, 1);
    slot_block(&s, 0, TL_KIND_FREE, 0x1000, 0, 0);    /* the ALLOC 2 back */
    slot_block(&s, 5, TL_KIND_MALLOC, 0x1000, 16, 2); /* the newest free's address */
    tl_zmodel_t m = {0};
    static uint8_t model[2 * sizeof s.b + TL_ZMODEL_SLACK];
    size_t len = round_trip(&m, &s, model);
    /* version; lengths of op, ts, age, aidx, ptrd, size, stack, len, raw */
    const uint8_t head[] = {1, 4, 1, 1, 3, 4, 3, 3, 0, TL_CHUNK_HEADER_BYTES};
    const uint8_t ops[] = {TL_REC_PACKED + TL_KIND_MALLOC + TL_BLOCK_TS0,
                           TL_REC_PACKED + TL_KIND_MALLOC + TL_BLOCK_TS0,
                           TL_REC_PACKED + TL_KIND_FREE + TL_BLOCK_TS0,
                           TL_REC_PACKED + TL_KIND_MALLOC};
    const uint8_t rest[] = {5,                             /* ts */
                            2,                             /* age */
                            0,    0,    1,                 /* aidx */
                            0x80, 0x40, 0x80, 0x40,        /* ptrd: zigzag 0x1000, twice */
                            16,   32,   16,   1,    1, 2}; /* sizes, stacks */
    ck_assert_uint_eq(len, sizeof head + sizeof ops + sizeof rest + TL_CHUNK_HEADER_BYTES);
    ck_assert(!memcmp(model, head, sizeof head));
    ck_assert(!memcmp(model + sizeof head, ops, sizeof ops));
    ck_assert(!memcmp(model + sizeof head + sizeof ops, rest, sizeof rest));
    ck_assert(!memcmp(model + sizeof head + sizeof ops + sizeof rest, s.b, TL_CHUNK_HEADER_BYTES));
    tl_zmodel_free(&m);
}
END_TEST

/* A W1-like chunk (a ring of 64 blocks, a random slot freed and filled
 * again, the address reused when the size class matches), with a STACK
 * record, plain FREE and REALLOC records and an OWNER record among them. */
static void make_mixed(slot_t *s)
{
    slot_init(s);
    uint64_t ring[64] = {0}, x = 88172645463325252ull, next = 0x7f0000000000ull;
    uint64_t freed[8] = {0};
    const uint64_t frames[] = {0x401000, 0x402000, 0x403000};
    for (int i = 0; i < 600; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        unsigned k = (unsigned)(x % 64), cls = (unsigned)(x >> 20) % 8;
        if (ring[k]) slot_block(s, x >> 60 ? 0 : 3, TL_KIND_FREE, ring[k], 0, 0);
        uint64_t ptr = freed[cls] ? freed[cls] : (next += 4096);
        freed[cls] = ring[k];
        ring[k] = ptr;
        slot_block(s, 0, (unsigned)(x >> 40) % 3, ptr, 16u << cls, 1 + (x >> 50) % 4);
        tl_wbuf_t w = {s->p, s->b + sizeof s->b, false};
        if (i == 100) tl_rec_put_stack(&w, 0, 9, frames, 3);
        if (i == 200) tl_rec_put_free(&w, 1, TL_KIND_FREE, 0xdead0);
        if (i == 300) tl_rec_put_realloc(&w, 0, 0xbeef0, 0xbeef8, 24, 2);
        if (i == 400) {
            const uint64_t owner[] = {8, 3, 1000};
            tl_rec_put_lineage(&w, TL_REC_OWNER, 0, owner, NULL, 0);
            s->prev = 0; /* a new run */
        }
        ck_assert(!w.overflow);
        s->p = w.p;
    }
}

START_TEST(zmodel_round_trips)
{
    slot_t s;
    make_mixed(&s);
    tl_zmodel_t m = {0};
    static uint8_t model[2 * sizeof s.b + TL_ZMODEL_SLACK];
    round_trip(&m, &s, model);
    round_trip(&m, &s, model); /* the scratch reused: the same */
    /* a bad record: the rest of the chunk is kept as it is */
    *s.p++ = 0xee, *s.p++ = 0x80;
    round_trip(&m, &s, model);
    /* a chunk header alone; shorter than a chunk header: not modelled */
    slot_init(&s);
    round_trip(&m, &s, model);
    ck_assert_uint_eq(tl_zmodel_encode(&m, s.b, TL_CHUNK_HEADER_BYTES - 1, model), 0);
    tl_zmodel_free(&m);
}
END_TEST

START_TEST(zmodel_untrusted)
{
    slot_t s;
    make_mixed(&s);
    size_t n = (size_t)(s.p - s.b);
    tl_zmodel_t m = {0};
    static uint8_t model[2 * sizeof s.b + TL_ZMODEL_SLACK];
    size_t len = round_trip(&m, &s, model);
    uint8_t *out = malloc(n);
    for (size_t cut = 0; cut < len; cut++) { /* cut short: fails */
        uint8_t *p = malloc(cut ? cut : 1);
        memcpy(p, model, cut);
        ck_assert_msg(tl_zmodel_decode(&m, p, cut, out, n), "cut at %zu decoded", cut);
        free(p);
    }
    for (size_t i = 0; i < len; i += 3) { /* damaged: fails or decodes, inside its buffers */
        for (unsigned bit = 0; bit < 8; bit += 3) {
            model[i] ^= (uint8_t)(1u << bit);
            (void)tl_zmodel_decode(&m, model, len, out, n);
            model[i] ^= (uint8_t)(1u << bit);
        }
    }
    ck_assert(!tl_zmodel_decode(&m, model, len, out, n));
    ck_assert(!memcmp(out, s.b, n));
    free(out);
    tl_zmodel_free(&m);
}
END_TEST

Suite *make_zmodel_suite(void)
{
    Suite *s = suite_create("zmodel");
    TCase *tc = tcase_create("zmodel");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, zmodel_streams);
    tcase_add_test(tc, zmodel_round_trips);
    tcase_add_test(tc, zmodel_untrusted);
    suite_add_tcase(s, tc);
    return s;
}
