/* test_common.c - Check suites for src/common: varints and record codec. */
#include "common/block.h"
#include "common/trace_chunk.h"
#include "common/trace_format.h"
#include "tests/unit/check_main.h"

#include <string.h>

START_TEST(varint_roundtrip)
{
    static const uint64_t values[] = {
        0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)1 << 63, UINT64_MAX};
    uint8_t buf[16];
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        tl_wbuf_t w = {buf, buf + sizeof buf, false};
        tl_put_varint(&w, values[i]);
        ck_assert(!w.overflow);
        tl_rbuf_t r = {buf, w.p, false};
        ck_assert_uint_eq(tl_get_varint(&r), values[i]);
        ck_assert(!r.err);
        ck_assert_ptr_eq(r.p, w.p);
    }
}
END_TEST

/* Varints followed by more bytes, as inside a chunk: with 8 bytes left the
 * decoder reads a word at a time (varint.h), every length 1 to 10 and both
 * fillers (a continuation byte, a zero) must give the loop's answer. */
START_TEST(varint_in_buffer)
{
    for (unsigned bits = 0; bits <= 64; bits++) {
        uint64_t v = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        for (int fill = 0; fill < 2; fill++) {
            uint8_t buf[32];
            memset(buf, fill ? 0xff : 0x00, sizeof buf);
            tl_wbuf_t w = {buf, buf + sizeof buf, false};
            tl_put_varint(&w, v);
            tl_put_varint(&w, 300);
            tl_rbuf_t r = {buf, buf + sizeof buf, false};
            ck_assert_uint_eq(tl_get_varint(&r), v);
            ck_assert_uint_eq(tl_get_varint(&r), 300);
            ck_assert(!r.err);
            ck_assert_ptr_eq(r.p, w.p);
        }
    }
    /* The 10th byte above 1, and 11 bytes, with bytes after them. */
    uint8_t over[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    tl_rbuf_t r = {over, over + sizeof over, false};
    ck_assert_uint_eq(tl_get_varint(&r), 0);
    ck_assert(r.err);
    memset(over, 0xff, 11);
    r = (tl_rbuf_t){over, over + sizeof over, false};
    tl_get_varint(&r);
    ck_assert(r.err);
}
END_TEST

START_TEST(varint_sizes)
{
    uint8_t buf[16];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_put_varint(&w, 127);
    ck_assert_int_eq(w.p - buf, 1);
    w.p = buf;
    tl_put_varint(&w, 128);
    ck_assert_int_eq(w.p - buf, 2);
    w.p = buf;
    tl_put_varint(&w, UINT64_MAX);
    ck_assert_int_eq(w.p - buf, 10);
}
END_TEST

/* The writer's in-place varint (branch-free below 2^28) gives
 * tl_put_varint's bytes at every length boundary, and writes nothing past
 * its room of TL_VARINT_MAX bytes. */
START_TEST(varint_at_matches_put)
{
    uint64_t v[64 * 3 + 1];
    size_t n = 0;
    v[n++] = 0;
    for (unsigned b = 0; b < 64; b++) {
        uint64_t p = UINT64_C(1) << b;
        v[n++] = p - 1;
        v[n++] = p;
        v[n++] = p | (p >> 1) | 1;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t a[TL_VARINT_MAX + 4], b[16];
        memset(a, 0xee, sizeof a);
        tl_wbuf_t w = {b, b + sizeof b, false};
        tl_put_varint(&w, v[i]);
        uint8_t *end = tl_block_varint_at(a, v[i]);
        ck_assert_int_eq(end - a, w.p - b);
        ck_assert_mem_eq(a, b, (size_t)(w.p - b));
        for (size_t k = TL_VARINT_MAX; k < sizeof a; k++)
            ck_assert_uint_eq(a[k], 0xee);
    }
}
END_TEST

START_TEST(varint_malformed)
{
    /* 11 continuation bytes: longer than any uint64_t */
    uint8_t bad[11];
    memset(bad, 0xff, sizeof bad);
    tl_rbuf_t r = {bad, bad + sizeof bad, false};
    tl_get_varint(&r);
    ck_assert(r.err);
    /* truncated: continuation bit on the last byte */
    uint8_t cut[2] = {0x80, 0x80};
    tl_rbuf_t r2 = {cut, cut + 2, false};
    tl_get_varint(&r2);
    ck_assert(r2.err);
    /* 10th byte above 1 overflows 64 bits */
    uint8_t over[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    tl_rbuf_t r3 = {over, over + 10, false};
    tl_get_varint(&r3);
    ck_assert(r3.err);
}
END_TEST

START_TEST(zigzag)
{
    ck_assert_uint_eq(tl_zigzag(0), 0);
    ck_assert_uint_eq(tl_zigzag(-1), 1);
    ck_assert_uint_eq(tl_zigzag(1), 2);
    ck_assert_int_eq(tl_unzigzag(tl_zigzag(INT64_MIN)), INT64_MIN);
    ck_assert_int_eq(tl_unzigzag(tl_zigzag(INT64_MAX)), INT64_MAX);
}
END_TEST

START_TEST(le_fields)
{
    uint8_t b[8];
    tl_store_le64(b, 0x0102030405060708ull);
    ck_assert_uint_eq(b[0], 8);
    ck_assert_uint_eq(tl_load_le64(b), 0x0102030405060708ull);
    tl_store_le32(b, 0xdeadbeef);
    ck_assert_uint_eq(tl_load_le32(b), 0xdeadbeef);
}
END_TEST

static Suite *make_varint_suite(void)
{
    Suite *s = suite_create("varint");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, varint_roundtrip);
    tcase_add_test(tc, varint_sizes);
    tcase_add_test(tc, varint_in_buffer);      /* the report's word-at-a-time varints */
    tcase_add_test(tc, varint_at_matches_put); /* the writer's packed records */
    tcase_add_test(tc, varint_malformed);
    tcase_add_test(tc, zigzag);
    tcase_add_test(tc, le_fields);
    suite_add_tcase(s, tc);
    return s;
}

START_TEST(codec_alloc_free_realloc)
{
    uint8_t buf[256];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_alloc(&w, 5, TL_KIND_STORAGE_C10, 0x7f0000001000, 33554432, 42);
    tl_rec_put_free(&w, 7, TL_KIND_FREE, 0x7f0000001000);
    tl_rec_put_realloc(&w, 0, 0x1000, 0x2000, 99, 3);
    ck_assert(!w.overflow);
    size_t n = (size_t)(w.p - buf);
    tl_record_t rec;
    long k = tl_rec_decode(buf, n, &rec, NULL, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_int_eq(rec.type, TL_REC_ALLOC);
    ck_assert_uint_eq(rec.ts_delta, 5);
    ck_assert_uint_eq(rec.u.alloc.kind, TL_KIND_STORAGE_C10);
    ck_assert(tl_kind_is_storage(rec.u.alloc.kind));
    ck_assert_uint_eq(rec.u.alloc.ptr, 0x7f0000001000);
    ck_assert_uint_eq(rec.u.alloc.size, 33554432);
    ck_assert_uint_eq(rec.u.alloc.stack_id, 42);
    long k2 = tl_rec_decode(buf + k, n - (size_t)k, &rec, NULL, NULL);
    ck_assert_int_gt(k2, 0);
    ck_assert_int_eq(rec.type, TL_REC_FREE);
    ck_assert_uint_eq(rec.u.free.ptr, 0x7f0000001000);
    long k3 = tl_rec_decode(buf + k + k2, n - (size_t)(k + k2), &rec, NULL, NULL);
    ck_assert_int_eq(k + k2 + k3, (long)n);
    ck_assert_int_eq(rec.type, TL_REC_REALLOC);
    ck_assert_uint_eq(rec.u.realloc.old_ptr, 0x1000);
    ck_assert_uint_eq(rec.u.realloc.new_ptr, 0x2000);
    ck_assert_uint_eq(rec.u.realloc.size, 99);
    ck_assert_uint_eq(rec.u.realloc.stack_id, 3);
}
END_TEST

/* tl_rec_decode_block, the readers' fast path: the three block records as
 * tl_rec_decode gives them, 0 for any other record, -1 for a bad kind. */
START_TEST(codec_block_fast_path)
{
    uint8_t buf[256];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_alloc(&w, 5, TL_KIND_STORAGE_C10, 0x7f0000001000, 33554432, 42);
    tl_rec_put_free(&w, 7, TL_KIND_FREE, 0x7f0000001000);
    tl_rec_put_realloc(&w, 0, 0x1000, 0x2000, 99, 3);
    uint8_t *mark = w.p;
    tl_rec_put_mark(&w, 1, 9, "x", 1);
    ck_assert(!w.overflow);
    size_t n = (size_t)(w.p - buf), off = 0;
    for (int i = 0; i < 3; i++) {
        tl_record_t a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        long ka = tl_rec_decode_block(buf + off, n - off, &a, NULL);
        long kb = tl_rec_decode(buf + off, n - off, &b, NULL, NULL);
        ck_assert_int_gt(ka, 0);
        ck_assert_int_eq(ka, kb);
        ck_assert_int_eq(memcmp(&a, &b, sizeof a), 0);
        off += (size_t)ka;
    }
    ck_assert_ptr_eq(buf + off, mark);
    tl_record_t rec;
    ck_assert_int_eq(tl_rec_decode_block(mark, n - off, &rec, NULL), 0);
    ck_assert_int_eq(tl_rec_decode_block(buf, 0, &rec, NULL), 0);
    ck_assert_int_gt(tl_rec_decode(mark, n - off, &rec, NULL, NULL), 0);
    ck_assert_int_eq(rec.type, TL_REC_MARK);
    uint8_t bad[] = {TL_REC_ALLOC, 0, 0x7f, 1, 1, 1}; /* kind 127: unknown */
    ck_assert_int_eq(tl_rec_decode_block(bad, sizeof bad, &rec, NULL), -1);
    ck_assert_int_eq(tl_rec_decode_block(buf, 3, &rec, NULL), -1); /* cut short */
}
END_TEST

/* One packed record into w by block.h's encoder, as the writer appends it
 * (with TL_BLOCK_MAX bytes of room); prev: the run's previous pointer. */
static void put_block(tl_wbuf_t *w, uint64_t ts, unsigned kind, uint64_t ptr, uint64_t prev,
                      uint64_t size, uint64_t stack)
{
    ck_assert_int_ge(w->end - w->p, TL_BLOCK_MAX);
    w->p = tl_block_put(w->p, ts, kind, ptr - prev, size, stack);
}

/* Version 5's packed block records: the ALLOC and FREE they stand for, in
 * fewer bytes (a zero ts_delta in the type byte, the pointer as a delta of
 * the run's previous one); an OWNER record starts a run again; without a
 * run's state, or cut short, a packed record does not decode. */
START_TEST(codec_packed_blocks)
{
    uint8_t buf[256];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    uint64_t prev = 0;
    put_block(&w, 0, TL_KIND_MALLOC, 0x7f0000001000, prev, 48, 3);
    ck_assert_int_eq(w.p - buf, 1 + 7 + 1 + 1); /* type, ptr from 0, size, stack */
    ck_assert_uint_eq(buf[0], TL_REC_PACKED + TL_KIND_MALLOC + TL_BLOCK_TS0);
    prev = 0x7f0000001000;
    uint8_t *second = w.p;
    put_block(&w, 300, TL_KIND_FREE, 0x7f0000000fc0, prev, 99, 99);
    ck_assert_int_eq(w.p - second, 1 + 2 + 1); /* type, ts_delta 300, ptr -0x40 */
    prev = 0x7f0000000fc0;
    put_block(&w, 1, TL_KIND_MEMALIGN, 0x7f0000002000, prev, 1 << 20, 700);
    prev = 0x7f0000002000;
    uint64_t owner[3] = {7, 1, 5000};
    tl_rec_put_lineage(&w, TL_REC_OWNER, 0, owner, NULL, 0);
    put_block(&w, 0, TL_KIND_CALLOC, 0x5000, 0, 16, 1); /* the new run: from 0 */
    ck_assert(!w.overflow);
    size_t n = (size_t)(w.p - buf);

    static const struct {
        unsigned type;
        uint64_t ts, kind, ptr, size, stack;
    } want[] = {
        {TL_REC_ALLOC, 0, TL_KIND_MALLOC, 0x7f0000001000, 48, 3},
        {TL_REC_FREE, 300, TL_KIND_FREE, 0x7f0000000fc0, 0, 0},
        {TL_REC_ALLOC, 1, TL_KIND_MEMALIGN, 0x7f0000002000, 1 << 20, 700},
        {TL_REC_OWNER, 0, 0, 0, 0, 0},
        {TL_REC_ALLOC, 0, TL_KIND_CALLOC, 0x5000, 16, 1},
    };
    tl_rec_state_t st = {0};
    size_t off = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tl_record_t rec;
        long k = tl_rec_decode(buf + off, n - off, &rec, NULL, &st);
        ck_assert_int_gt(k, 0);
        off += (size_t)k;
        ck_assert_uint_eq(rec.type, want[i].type);
        ck_assert_uint_eq(rec.ts_delta, want[i].ts);
        if (rec.type == TL_REC_OWNER) {
            ck_assert_uint_eq(st.ptr, 0);
            continue;
        }
        if (rec.type == TL_REC_FREE) {
            ck_assert_uint_eq(rec.u.free.kind, want[i].kind);
            ck_assert_uint_eq(rec.u.free.ptr, want[i].ptr);
            ck_assert_uint_eq(rec.u.free.device, 0);
        } else {
            ck_assert_uint_eq(rec.u.alloc.kind, want[i].kind);
            ck_assert_uint_eq(rec.u.alloc.ptr, want[i].ptr);
            ck_assert_uint_eq(rec.u.alloc.size, want[i].size);
            ck_assert_uint_eq(rec.u.alloc.stack_id, want[i].stack);
            ck_assert_uint_eq(rec.u.alloc.device, 0);
            ck_assert_uint_eq(rec.u.alloc.stream, 0);
        }
        ck_assert_uint_eq(st.ptr, want[i].ptr);
    }
    ck_assert_uint_eq(off, n);

    tl_record_t rec;
    tl_rec_state_t st2 = {0};
    ck_assert_int_eq(tl_rec_decode(buf, n, &rec, NULL, NULL), -1);        /* no run state */
    ck_assert_int_eq(tl_rec_decode_block(buf, 8, &rec, &st2), -1);        /* cut short */
    ck_assert_uint_eq(st2.ptr, 0);                                        /* left as it was */
    ck_assert_int_eq(tl_rec_decode_block(buf, n, &rec, &st2), 1 + 7 + 2); /* the fast path too */
    ck_assert_uint_eq(rec.u.alloc.ptr, 0x7f0000001000);
    tl_block_t b;                         /* block.h's decoder itself: never past end */
    for (size_t end = 1; end < 10; end++) /* cut short */
        ck_assert_uint_eq(tl_block_get(buf, end, 0, &b), 0);
    ck_assert_uint_eq(tl_block_get(buf, 10, 0, &b), 10);
    ck_assert_uint_eq(b.ptr, 0x7f0000001000);
    ck_assert_uint_eq(b.size, 48);
    ck_assert_uint_eq(b.stack_id, 3);
}
END_TEST

START_TEST(codec_stack_process_end)
{
    uint8_t buf[512];
    uint64_t frames_in[] = {0x401000, 0x400ff0, 0x7fff12345678, 0x10};
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_stack(&w, 0, 9, frames_in, 4);
    const char *argv[] = {"python3", "train.py"};
    tl_rec_put_process(&w, 1, 100, 1, 2, "/usr/bin/python3", 16, 2, argv);
    tl_rec_put_end(&w, 3, TL_END_EXIT, -9, 10, 8, 2, 1);
    ck_assert(!w.overflow);
    uint64_t frames[TL_REC_MAX_FRAMES];
    tl_record_t rec;
    const uint8_t *p = buf;
    long k = tl_rec_decode(p, (size_t)(w.p - p), &rec, frames, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_uint_eq(rec.u.stack.id, 9);
    ck_assert_uint_eq(rec.u.stack.nframes, 4);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(rec.u.stack.frames[i], frames_in[i]);
    p += k;
    k = tl_rec_decode(p, (size_t)(w.p - p), &rec, frames, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_int_eq(rec.type, TL_REC_PROCESS);
    ck_assert_uint_eq(rec.u.process.pid, 100);
    ck_assert_uint_eq(rec.u.process.exec_seq, 2);
    ck_assert_uint_eq(rec.u.process.argc, 2);
    ck_assert_int_eq(memcmp(rec.u.process.argv[1].p, "train.py", 8), 0);
    ck_assert_uint_eq(rec.u.process.argv[1].n, 8);
    p += k;
    k = tl_rec_decode(p, (size_t)(w.p - p), &rec, frames, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_int_eq(rec.type, TL_REC_END);
    ck_assert_int_eq(rec.u.end.exit_status, -9);
    ck_assert_uint_eq(rec.u.end.dropped, 1);
    ck_assert_ptr_eq(p + k, w.p);
}
END_TEST

/* tl_rec_step_stack steps over a STACK record exactly as far as
 * tl_rec_decode reads it, with its ts_delta, id and frame count, for
 * stacks of 0 to 40 frames of 1- to 10-byte varints; a cut record is -1;
 * another type is 0. */
START_TEST(codec_step_stack)
{
    uint8_t buf[1024];
    uint64_t frames_in[40], frames[TL_REC_MAX_FRAMES];
    for (size_t nf = 0; nf <= 40; nf++) {
        for (size_t i = 0; i < nf; i++) /* deltas from 1 byte to 10 (zigzag of huge ones) */
            frames_in[i] = (i % 5 == 0)   ? i
                           : (i % 5 == 1) ? 0x7f0000000000ull + i * 0x1234567
                           : (i % 5 == 2) ? 0x401000 + i
                           : (i % 5 == 3) ? ~0ull - i
                                          : 1ull << 62;
        tl_wbuf_t w = {buf, buf + sizeof buf, false};
        tl_rec_put_stack(&w, 300 + nf, 7 + nf, frames_in, nf);
        ck_assert(!w.overflow);
        size_t n = (size_t)(w.p - buf);
        tl_record_t dec, st;
        ck_assert_int_eq(tl_rec_decode(buf, n, &dec, frames, NULL), (long)n);
        ck_assert_int_eq(tl_rec_step_stack(buf, n, &st), (long)n);
        ck_assert_uint_eq(st.ts_delta, 300 + nf);
        ck_assert_uint_eq(st.u.stack.id, 7 + nf);
        ck_assert_uint_eq(st.u.stack.nframes, nf);
        ck_assert_ptr_null(st.u.stack.frames);
        for (size_t cut = 0; cut < n; cut++)
            ck_assert_int_le(tl_rec_step_stack(buf, cut, &st), 0);
        buf[n] = 0x80; /* bytes after the record are not read as its own */
        ck_assert_int_eq(tl_rec_step_stack(buf, n + 1, &st), (long)n);
    }
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_end(&w, 3, TL_END_EXIT, 0, 1, 1, 0, 0);
    tl_record_t rec;
    ck_assert_int_eq(tl_rec_step_stack(buf, (size_t)(w.p - buf), &rec), 0);
}
END_TEST

/* issue 26: a STACK_DELTA record round-trips (id, base, head, tail, its
 * new frames), tl_rec_step_stack steps over it as far as tl_rec_decode
 * reads it, every cut of it is -1 (decode) or <= 0 (step); an id_delta of 0
 * or of the id or more names no base (0); more new frames than
 * TL_REC_MAX_FRAMES is malformed; base_id 0 writes a STACK record. */
START_TEST(codec_stack_delta)
{
    uint8_t buf[256];
    uint64_t fresh[3] = {0x7f0000001234ull, 0x401000, TL_FRAME_PY_TAG | 9};
    uint64_t frames[TL_REC_MAX_FRAMES];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_stack_delta(&w, 77, 1000, 993, 5, 40, fresh, 3);
    ck_assert(!w.overflow);
    size_t n = (size_t)(w.p - buf);
    ck_assert_uint_eq(buf[0], TL_REC_STACK_DELTA);
    tl_record_t rec, st;
    ck_assert_int_eq(tl_rec_decode(buf, n, &rec, frames, NULL), (long)n);
    ck_assert_int_eq(rec.type, TL_REC_STACK_DELTA);
    ck_assert_uint_eq(rec.ts_delta, 77);
    ck_assert_uint_eq(rec.u.stack.id, 1000);
    ck_assert_uint_eq(rec.u.stack.base, 993);
    ck_assert_uint_eq(rec.u.stack.head, 5);
    ck_assert_uint_eq(rec.u.stack.tail, 40);
    ck_assert_uint_eq(rec.u.stack.nframes, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(frames[i], fresh[i]);
    ck_assert_str_eq(tl_rec_type_name(TL_REC_STACK_DELTA), "stack_delta");
    ck_assert_int_eq(tl_rec_step_stack(buf, n, &st), (long)n);
    ck_assert_int_eq(st.type, TL_REC_STACK_DELTA);
    ck_assert_uint_eq(st.u.stack.id, 1000);
    ck_assert_uint_eq(st.u.stack.base, 993);
    ck_assert_uint_eq(st.u.stack.nframes, 3);
    for (size_t cut = 0; cut < n; cut++) {
        ck_assert_int_eq(tl_rec_decode(buf, cut, &rec, frames, NULL), -1);
        ck_assert_int_le(tl_rec_step_stack(buf, cut, &st), 0);
    }
    /* id_delta 0 (base = id) and id_delta = id (base 0): no base */
    uint8_t self[] = {TL_REC_STACK_DELTA, 0, 5, 0, 0, 0, 0};
    ck_assert_int_eq(tl_rec_decode(self, sizeof self, &rec, frames, NULL), (long)sizeof self);
    ck_assert_uint_eq(rec.u.stack.base, 0);
    uint8_t below[] = {TL_REC_STACK_DELTA, 0, 5, 5, 0, 0, 0};
    ck_assert_int_eq(tl_rec_decode(below, sizeof below, &rec, frames, NULL), (long)sizeof below);
    ck_assert_uint_eq(rec.u.stack.base, 0);
    /* head and tail past any base decode (the reader checks them), n_new does not */
    uint8_t wide[] = {TL_REC_STACK_DELTA, 0, 5, 1, 0xff, 0x7f, 0xff, 0x7f, 0};
    ck_assert_int_eq(tl_rec_decode(wide, sizeof wide, &rec, frames, NULL), (long)sizeof wide);
    ck_assert_uint_eq(rec.u.stack.base, 4);
    ck_assert_uint_eq(rec.u.stack.head, 16383);
    uint8_t big[] = {TL_REC_STACK_DELTA, 0, 5, 1, 0, 0, 0x81, 0x10};
    ck_assert_int_eq(tl_rec_decode(big, sizeof big, &rec, frames, NULL), -1);
    ck_assert_int_eq(tl_rec_step_stack(big, sizeof big, &st), -1);
    /* no frames buffer: fails as a STACK does */
    ck_assert_int_eq(tl_rec_decode(buf, n, &rec, NULL, NULL), -1);
    w.p = buf;
    tl_rec_put_stack_delta(&w, 1, 9, 0, 5, 5, fresh, 3);
    ck_assert_int_eq(tl_rec_decode(buf, (size_t)(w.p - buf), &rec, frames, NULL),
                     (long)(w.p - buf));
    ck_assert_int_eq(rec.type, TL_REC_STACK);
    ck_assert_uint_eq(rec.u.stack.nframes, 3);
    ck_assert_uint_eq(frames[2], fresh[2]);
}
END_TEST

START_TEST(codec_rejects_bad_input)
{
    uint8_t buf[64];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_alloc(&w, 1, 0, 0x1234, 5000, 1);
    size_t n = (size_t)(w.p - buf);
    tl_record_t rec;
    /* every strict prefix is a truncated record */
    for (size_t cut = 0; cut < n; cut++)
        ck_assert_int_eq(tl_rec_decode(buf, cut, &rec, NULL, NULL), -1);
    uint8_t unknown[4] = {200, 0, 0, 0};
    ck_assert_int_eq(tl_rec_decode(unknown, 4, &rec, NULL, NULL), -1);
    /* a string length past the end */
    uint8_t badstr[] = {TL_REC_THREAD, 0, 1, 0x7f, 'a'};
    ck_assert_int_eq(tl_rec_decode(badstr, sizeof badstr, &rec, NULL, NULL), -1);
    /* a stack claiming more frames than the format allows */
    uint8_t bigstack[] = {TL_REC_STACK, 0, 1, 0x81, 0x10};
    uint64_t frames[TL_REC_MAX_FRAMES];
    ck_assert_int_eq(tl_rec_decode(bigstack, sizeof bigstack, &rec, frames, NULL), -1);
}
END_TEST

START_TEST(codec_overflow_flagged)
{
    uint8_t buf[4];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_alloc(&w, 1, 0, 0x7f0000001000, 5000, 1);
    ck_assert(w.overflow);
    ck_assert_ptr_eq(w.p, buf + 4);
}
END_TEST

START_TEST(codec_lineage_pyframe_mark)
{
    uint8_t buf[256];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    uint64_t view[6] = {7, 0x7f0000000000, 4096, 16, 16, 12};
    tl_rec_put_lineage(&w, TL_REC_VIEW_BEGIN, 2, view, "slice", 5);
    tl_rec_put_pyframe(&w, 0, 3, 41, "train.py", 8, "step", 4);
    tl_rec_put_mark(&w, 1, 1, "script_end", 10);
    uint64_t none[1] = {0};
    tl_rec_put_lineage(&w, TL_REC_REGION_END, 0, none, "step", 4);
    ck_assert(!w.overflow);
    tl_record_t rec;
    const uint8_t *p = buf;
    long k = tl_rec_decode(p, (size_t)(w.p - p), &rec, NULL, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_int_eq(rec.type, TL_REC_VIEW_BEGIN);
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(rec.u.lineage.a[i], view[i]);
    ck_assert_uint_eq(rec.u.lineage.a[6], 0);
    ck_assert_uint_eq(rec.u.lineage.str.n, 5);
    ck_assert_int_eq(memcmp(rec.u.lineage.str.p, "slice", 5), 0);
    p += k;
    k = tl_rec_decode(p, (size_t)(w.p - p), &rec, NULL, NULL);
    ck_assert_int_eq(rec.type, TL_REC_PYFRAME);
    ck_assert_uint_eq(rec.u.pyframe.line, 41);
    ck_assert_int_eq(memcmp(rec.u.pyframe.function.p, "step", 4), 0);
    p += k;
    k = tl_rec_decode(p, (size_t)(w.p - p), &rec, NULL, NULL);
    ck_assert_int_eq(rec.type, TL_REC_MARK);
    ck_assert_uint_eq(rec.u.mark.id, 1);
    ck_assert_uint_eq(rec.u.mark.name.n, 10);
    p += k;
    k = tl_rec_decode(p, (size_t)(w.p - p), &rec, NULL, NULL);
    ck_assert_int_eq(rec.type, TL_REC_REGION_END);
    ck_assert_int_eq(memcmp(rec.u.lineage.str.p, "step", 4), 0);
    ck_assert_ptr_eq(p + k, w.p);
    /* a non-lineage type is refused by the lineage encoder */
    tl_wbuf_t w2 = {buf, buf + sizeof buf, false};
    tl_rec_put_lineage(&w2, TL_REC_ALLOC, 0, view, NULL, 0);
    ck_assert(w2.overflow);
    ck_assert_str_eq(tl_rec_type_name(TL_REC_SNAP_VIEW), "snapshot_view");
    ck_assert_str_eq(tl_rec_type_name(99), "unknown");
}
END_TEST

/* One chunk header at c: magic, tid 7, used, seq 3, base_ts 1000. */
static void put_chunk(uint8_t *c, uint32_t magic, uint32_t used)
{
    memset(c, 0, TL_CHUNK_HEADER_BYTES);
    tl_store_le32(c + TL_CHK_MAGIC, magic);
    tl_store_le32(c + TL_CHK_TID, 7);
    tl_store_le32(c + TL_CHK_USED, used);
    tl_store_le32(c + TL_CHK_SEQ, 3);
    tl_store_le64(c + TL_CHK_BASE_TS, 1000);
}

/* The one chunk validation: unused, bad magic, used beyond the chunk, cut. */
START_TEST(chunk_parse)
{
    uint8_t c[256];
    tl_chunk_t ck;
    put_chunk(c, 0, 0);
    ck_assert_int_eq(tl_chunk_parse(c, sizeof c, 256, &ck), TL_CHUNK_UNUSED);
    put_chunk(c, 0x12345678u, 10);
    ck_assert_int_eq(tl_chunk_parse(c, sizeof c, 256, &ck), TL_CHUNK_BAD);
    put_chunk(c, TL_CHUNK_MAGIC, 256 - TL_CHUNK_HEADER_BYTES + 1);
    ck_assert_int_eq(tl_chunk_parse(c, sizeof c, 256, &ck), TL_CHUNK_BAD);
    ck_assert_int_eq(tl_chunk_parse(c, TL_CHUNK_HEADER_BYTES - 1, 256, &ck), TL_CHUNK_BAD);
    put_chunk(c, TL_CHUNK_MAGIC, 100);
    ck_assert_int_eq(tl_chunk_parse(c, sizeof c, 256, &ck), TL_CHUNK_OK);
    ck_assert_uint_eq(ck.tid, 7);
    ck_assert_uint_eq(ck.seq, 3);
    ck_assert_uint_eq(ck.base_ts, 1000);
    ck_assert_uint_eq(ck.len, 100);
    ck_assert(!ck.cut);
    ck_assert_ptr_eq(ck.data, c + TL_CHUNK_HEADER_BYTES);
    ck_assert_int_eq(tl_chunk_parse(c, TL_CHUNK_HEADER_BYTES + 40, 256, &ck), TL_CHUNK_OK);
    ck_assert_uint_eq(ck.len, 40);
    ck_assert(ck.cut);
}
END_TEST

/* The walk: unused slots skipped, bad ones counted, the header's promise of
 * more chunks than the file holds is truncation. */
START_TEST(chunk_iter)
{
    enum { HB = 64, CB = 128 };
    uint8_t buf[HB + 4 * CB];
    memset(buf, 0, sizeof buf);
    put_chunk(buf + HB, TL_CHUNK_MAGIC, 5);           /* 0: good */
    put_chunk(buf + HB + 2 * CB, 0xdeadbeefu, 5);     /* 2: bad magic; 1 unused */
    put_chunk(buf + HB + 3 * CB, TL_CHUNK_MAGIC, CB); /* 3: used too big */
    tl_chunk_iter_t it;
    tl_chunk_t ck;
    tl_chunk_iter_init(&it, buf, sizeof buf, HB, CB, 0);
    ck_assert(tl_chunk_iter_next(&it, &ck));
    ck_assert_uint_eq(ck.index, 0);
    ck_assert_uint_eq(ck.len, 5);
    ck_assert(!tl_chunk_iter_next(&it, &ck));
    ck_assert(!tl_chunk_iter_next(&it, &ck)); /* stays at the end */
    ck_assert_uint_eq(it.bad_chunks, 2);
    ck_assert(!it.truncated);
    tl_chunk_iter_init(&it, buf, sizeof buf, HB, CB, 6);
    while (tl_chunk_iter_next(&it, &ck))
        ;
    ck_assert(it.truncated);
    tl_chunk_iter_init(&it, buf, HB - 1, HB, CB, 0);
    ck_assert(!tl_chunk_iter_next(&it, &ck));
    ck_assert(it.truncated);
}
END_TEST

/* Version 3: device kinds carry device (and, on ALLOC, stream); other kinds
 * decode with zeros there; a device record cut before its extra fields is
 * malformed. */
START_TEST(codec_device_kinds)
{
    uint8_t buf[256];
    tl_wbuf_t w = {buf, buf + sizeof buf, false};
    tl_rec_put_dalloc(&w, 3, TL_KIND_STORAGE_CUDA, 0x7f5000000000, 268435456, 9, TL_DEVICE_CUDA(1),
                      0x55aa);
    tl_rec_put_dfree(&w, 4, TL_KIND_STORAGE_PINNED, 0x7f6000000000, TL_DEVICE_CPU);
    tl_rec_put_alloc(&w, 5, TL_KIND_STORAGE_C10, 0x1000, 64, 1);
    ck_assert(!w.overflow);
    size_t n = (size_t)(w.p - buf);
    tl_record_t rec;
    long k = tl_rec_decode(buf, n, &rec, NULL, NULL);
    ck_assert_int_gt(k, 0);
    ck_assert_int_eq(rec.type, TL_REC_ALLOC);
    ck_assert(tl_kind_has_device(rec.u.alloc.kind));
    ck_assert_uint_eq(rec.u.alloc.ptr, 0x7f5000000000);
    ck_assert_uint_eq(rec.u.alloc.size, 268435456);
    ck_assert_uint_eq(rec.u.alloc.stack_id, 9);
    ck_assert_uint_eq(rec.u.alloc.device, 2);
    ck_assert_uint_eq(rec.u.alloc.stream, 0x55aa);
    ck_assert_int_eq(tl_rec_decode(buf, (size_t)k - 1, &rec, NULL, NULL), -1); /* stream cut */
    long k2 = tl_rec_decode(buf + k, n - (size_t)k, &rec, NULL, NULL);
    ck_assert_int_gt(k2, 0);
    ck_assert_int_eq(rec.type, TL_REC_FREE);
    ck_assert_uint_eq(rec.u.free.kind, TL_KIND_STORAGE_PINNED);
    ck_assert_uint_eq(rec.u.free.ptr, 0x7f6000000000);
    ck_assert_uint_eq(rec.u.free.device, 0);
    long k3 = tl_rec_decode(buf + k + k2, n - (size_t)(k + k2), &rec, NULL, NULL);
    ck_assert_int_eq(k + k2 + k3, (long)n);
    ck_assert(!tl_kind_has_device(rec.u.alloc.kind));
    ck_assert_uint_eq(rec.u.alloc.device, 0);
    ck_assert_uint_eq(rec.u.alloc.stream, 0);
    ck_assert_uint_eq(rec.u.alloc.stack_id, 1);
}
END_TEST

/* polish: a kind this reader does not know (a future version's, a
 * reserved device kind) is an undecodable record, not a block or storage;
 * the kinds of version 4 (5, 32) decode. */
START_TEST(codec_unknown_kinds)
{
    static const uint64_t unknown[] = {6, 15, 20, 31, 33, 1000};
    static const uint64_t known[] = {
        TL_KIND_MALLOC,      TL_KIND_FREE,           TL_KIND_NEW_FULL,     TL_KIND_PYOBJECT,
        TL_KIND_STORAGE_C10, TL_KIND_STORAGE_PINNED, TL_KIND_STORAGE_NUMPY};
    ck_assert_uint_eq(TL_TRACE_VERSION, 6);
    uint8_t buf[64];
    tl_record_t rec;
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        tl_wbuf_t w = {buf, buf + sizeof buf, false};
        tl_rec_put_alloc(&w, 1, unknown[i], 0x1000, 16, 1);
        ck_assert_int_eq(tl_rec_decode(buf, (size_t)(w.p - buf), &rec, NULL, NULL), -1);
        w.p = buf;
        tl_rec_put_free(&w, 1, unknown[i], 0x1000);
        ck_assert_int_eq(tl_rec_decode(buf, (size_t)(w.p - buf), &rec, NULL, NULL), -1);
    }
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        tl_wbuf_t w = {buf, buf + sizeof buf, false};
        if (tl_kind_has_device(known[i]))
            tl_rec_put_dalloc(&w, 1, known[i], 0x1000, 16, 1, TL_DEVICE_CPU, 0);
        else
            tl_rec_put_alloc(&w, 1, known[i], 0x1000, 16, 1);
        ck_assert_int_eq(tl_rec_decode(buf, (size_t)(w.p - buf), &rec, NULL, NULL),
                         (long)(w.p - buf));
        ck_assert_uint_eq(rec.u.alloc.kind, known[i]);
        ck_assert_uint_eq(rec.u.alloc.size, 16);
    }
}
END_TEST

static Suite *make_codec_suite(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, codec_alloc_free_realloc);
    tcase_add_test(tc, codec_block_fast_path); /* the report's decoder of block records */
    tcase_add_test(tc, codec_packed_blocks);   /* version 5 */
    tcase_add_test(tc, codec_device_kinds);
    tcase_add_test(tc, codec_unknown_kinds);
    tcase_add_test(tc, codec_stack_process_end);
    tcase_add_test(tc, codec_step_stack);
    tcase_add_test(tc, codec_stack_delta);
    tcase_add_test(tc, codec_rejects_bad_input);
    tcase_add_test(tc, codec_overflow_flagged);
    tcase_add_test(tc, codec_lineage_pyframe_mark);
    tcase_add_test(tc, chunk_parse);
    tcase_add_test(tc, chunk_iter);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_varint_suite, make_codec_suite)
