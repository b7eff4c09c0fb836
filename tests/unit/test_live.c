/* test_live.c - unit tests of the live block table (live.c) and of aggregate
 * mode's checkpoints (checkpoint.c): probe limits and tombstones, inserts and
 * removals from several threads on one probe chain, and the records a
 * checkpoint writes into its alternating regions of a real trace file.
 */
#include <config.h>

#include "agent/checkpoint.h"
#include "agent/counters.h"
#include "agent/live.h"
#include "agent/writer.h"
#include "common/trace_format.h"
#include "tests/unit/check_main.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The table's slot hash (live.c): the test needs pointers that share a
 * home slot, i.e. one probe chain. */
static size_t home_of(uint64_t p)
{
    return (size_t)(((p >> 4) * UINT64_C(0xff51afd7ed558ccd)) >> (64 - TL_LIVE_LG_SLOTS));
}

/* n distinct 16-byte-aligned pointers above base whose home slot is h. */
static void same_home(uint64_t base, size_t h, uint64_t *out, size_t n)
{
    size_t k = 0;
    for (uint64_t p = base; k < n; p += 16)
        if (home_of(p) == h) out[k++] = p;
}

static tl_live_entry_t entry(uint64_t ptr, uint64_t stack)
{
    return (tl_live_entry_t){.ptr = ptr,
                             .size = ptr % 4093 + 1,
                             .weight = ptr % 4093 + 1,
                             .stack_id = stack,
                             .ts = ptr ^ 0x5555,
                             .kind = TL_KIND_MALLOC};
}

START_TEST(live_insert_remove)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    tl_live_entry_t e = entry(0x7f0000001230, 9), out;
    ck_assert(!tl_live_maybe((void *)(uintptr_t)e.ptr));
    ck_assert(!tl_live_insert(&e));
    ck_assert(tl_live_maybe((void *)(uintptr_t)e.ptr));
    ck_assert_uint_eq(tl_live_count(), 1);
    ck_assert(tl_live_remove(e.ptr + 16, &out)); /* another block */
    ck_assert(!tl_live_has(e.ptr + 16, &out));
    memset(&out, 0, sizeof out);
    ck_assert(tl_live_has(e.ptr, &out)); /* looked at, left in */
    ck_assert_mem_eq(&out, &e, sizeof e);
    ck_assert_uint_eq(tl_live_count(), 1);
    ck_assert(!tl_live_remove(e.ptr, &out));
    ck_assert_mem_eq(&out, &e, sizeof e);
    ck_assert(tl_live_remove(e.ptr, &out)); /* once only */
    ck_assert(!tl_live_has(e.ptr, &out));
    ck_assert(!tl_live_maybe((void *)(uintptr_t)e.ptr));
    ck_assert_uint_eq(tl_live_count(), 0);
    /* 0, 1 and 2 are the slot states, never a block. */
    tl_live_entry_t bad = entry(2, 1);
    ck_assert(tl_live_insert(&bad));
    ck_assert(tl_live_remove(2, &out));
}
END_TEST

/* The table counts its host storages (c10, numpy), not its plain blocks
 * nor aggregate mode's device storages; reset forgets them. */
START_TEST(live_counts_host_storages)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    static const uint32_t kinds[] = {TL_KIND_MALLOC,        TL_KIND_NEW_FULL,
                                     TL_KIND_STORAGE_C10,   TL_KIND_STORAGE_CUDA,
                                     TL_KIND_STORAGE_NUMPY, TL_KIND_STORAGE_PINNED};
    tl_live_entry_t e, out;
    for (size_t i = 0; i < 6; i++) {
        e = entry(0x7f0000100000 + i * 0x1000, i + 1);
        e.kind = kinds[i];
        ck_assert(!tl_live_insert(&e));
    }
    ck_assert_uint_eq(tl_live_count(), 6);
    ck_assert_uint_eq(tl_live_storages(), 2);
    ck_assert(!tl_live_remove(0x7f0000102000, &out)); /* the c10 storage */
    ck_assert_uint_eq(out.kind, TL_KIND_STORAGE_C10);
    ck_assert_uint_eq(tl_live_storages(), 1);
    ck_assert(!tl_live_remove(0x7f0000103000, &out)); /* a device storage */
    ck_assert(!tl_live_remove(0x7f0000100000, &out)); /* a plain block */
    ck_assert_uint_eq(tl_live_storages(), 1);
    /* The numpy storage is one; the plain block, the gone c10 storage, the
     * pinned (device kind) storage and an address inside one are not. */
    const uint64_t q[] = {0x7f0000101000, 0x7f0000102000, 0x7f0000104000, 0x7f0000105000,
                          0x7f0000104010};
    uint8_t live[5];
    ck_assert_int_eq(tl_live_storages_query(q, 5, live), 1);
    const uint8_t want[5] = {0, 0, 1, 0, 0};
    ck_assert_mem_eq(live, want, sizeof want);
    ck_assert_int_eq(tl_live_storages_query(NULL, 0, NULL), 1);
    /* Reset with a storage in (a fork child): its storages are unknown. */
    tl_live_reset(false);
    ck_assert_uint_eq(tl_live_storages(), 0);
    ck_assert(!tl_live_has(0x7f0000104000, &out));
    memset(live, 7, sizeof live);
    ck_assert_int_eq(tl_live_storages_query(q, 5, live), -1);
    const uint8_t none[5] = {0};
    ck_assert_mem_eq(live, none, sizeof none);
}
END_TEST

/* A probe chain holds TL_LIVE_PROBES blocks: the next one with that home
 * goes to the overflow table. Removing one in the middle leaves a tombstone that keeps the
 * blocks behind it findable and is taken by the next insert. Reset empties
 * the table. */
START_TEST(live_full_chain_and_tombstones)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    enum { N = TL_LIVE_PROBES + 1 };
    static uint64_t p[N];
    same_home(0x10000000, 4242, p, N);
    tl_live_entry_t e, out;
    for (size_t i = 0; i < TL_LIVE_PROBES; i++) {
        e = entry(p[i], i + 1);
        ck_assert_msg(!tl_live_insert(&e), "insert %zu", i);
    }
    e = entry(p[N - 1], 99);
    ck_assert(!tl_live_insert(&e)); /* its chain is full: the overflow table's */
    ck_assert_uint_eq(tl_live_count(), N);
    ck_assert(tl_live_has(p[N - 1], &out));
    ck_assert_uint_eq(out.stack_id, 99);
    ck_assert(!tl_live_remove(p[N - 1], &out));
    ck_assert_uint_eq(out.stack_id, 99);
    ck_assert_uint_eq(tl_live_count(), TL_LIVE_PROBES);
    /* A block with another home is unaffected. */
    tl_live_entry_t other = entry(p[0] + 16, 7);
    ck_assert_uint_ne(home_of(other.ptr), 4242);
    ck_assert(!tl_live_insert(&other));
    ck_assert(!tl_live_remove(other.ptr, &out));

    ck_assert(!tl_live_remove(p[10], &out));
    ck_assert_uint_eq(out.stack_id, 11);
    ck_assert(!tl_live_has(p[10], &out));
    for (size_t i = 11; i < TL_LIVE_PROBES; i++) { /* behind the tombstone */
        ck_assert(tl_live_has(p[i], &out));
        ck_assert_uint_eq(out.stack_id, i + 1);
        ck_assert(!tl_live_remove(p[i], &out));
        ck_assert_uint_eq(out.stack_id, i + 1);
        e = entry(p[i], i + 1);
        ck_assert(!tl_live_insert(&e));
    }
    ck_assert(!tl_live_has(p[N - 1], &out)); /* removed: not in */
    ck_assert(!tl_live_insert(&(tl_live_entry_t){.ptr = p[N - 1], .stack_id = 99})); /* the tomb */
    /* full again: the overflow table's */
    ck_assert(!tl_live_insert(&(tl_live_entry_t){.ptr = p[10], .stack_id = 11}));
    ck_assert(!tl_live_remove(p[N - 1], &out));
    ck_assert_uint_eq(out.stack_id, 99);
    ck_assert(!tl_live_remove(p[10], &out));
    ck_assert_uint_eq(out.stack_id, 11);

    tl_live_reset(false);
    ck_assert_uint_eq(tl_live_count(), 0);
    for (size_t i = 0; i < N; i++) {
        ck_assert(!tl_live_maybe((void *)(uintptr_t)p[i]));
        ck_assert(tl_live_remove(p[i], &out));
    }
    for (size_t i = 0; i < TL_LIVE_PROBES; i++) { /* the whole chain is free again */
        e = entry(p[i], i + 1);
        ck_assert(!tl_live_insert(&e));
    }
}
END_TEST

/* Threads insert and remove their own blocks, all on one probe chain that
 * they fill exactly, while another walks the table: no insert is refused,
 * every remove finds its block with its own entry, and every entry a walk
 * sees is whole. */
enum { T_THREADS = 4, T_BLOCKS = TL_LIVE_PROBES / T_THREADS, T_ROUNDS = 3000 };
static uint64_t chain[T_THREADS * T_BLOCKS];
static atomic_bool walking;

static void *churn(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    const uint64_t *mine = chain + t * T_BLOCKS;
    for (unsigned r = 0; r < T_ROUNDS; r++) {
        for (unsigned i = 0; i < T_BLOCKS; i++) {
            tl_live_entry_t e = entry(mine[i], t + 1);
            if (tl_live_insert(&e)) return "insert refused";
        }
        /* Every other round, remove in the reverse order. */
        for (unsigned k = 0; k < T_BLOCKS; k++) {
            unsigned i = r & 1 ? T_BLOCKS - 1 - k : k;
            tl_live_entry_t out, want = entry(mine[i], t + 1);
            if (tl_live_remove(mine[i], &out)) return "block not found";
            if (memcmp(&out, &want, sizeof out)) return "wrong entry";
        }
    }
    return NULL;
}

static void check_whole(void *ctx, const tl_live_entry_t *e)
{
    tl_live_entry_t want = entry(e->ptr, e->stack_id);
    if (memcmp(e, &want, sizeof want) || e->stack_id < 1 || e->stack_id > T_THREADS)
        *(int *)ctx += 1;
}

static void *walker(void *arg)
{
    int *torn = arg;
    while (atomic_load(&walking))
        tl_live_foreach(check_whole, torn);
    return NULL;
}

START_TEST(live_concurrent_one_chain)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    same_home(0x20000000, 777, chain, T_THREADS * T_BLOCKS);
    int torn = 0;
    atomic_store(&walking, true);
    pthread_t w, th[T_THREADS];
    pthread_create(&w, NULL, walker, &torn);
    for (uintptr_t t = 0; t < T_THREADS; t++)
        pthread_create(&th[t], NULL, churn, (void *)t);
    for (size_t t = 0; t < T_THREADS; t++) {
        void *rv;
        pthread_join(th[t], &rv);
        ck_assert_msg(rv == NULL, "thread %zu: %s", t, (const char *)rv);
    }
    atomic_store(&walking, false);
    pthread_join(w, NULL);
    ck_assert_int_eq(torn, 0);
    ck_assert_uint_eq(tl_live_count(), 0);
    for (size_t i = 0; i < T_THREADS * T_BLOCKS; i++)
        ck_assert(!tl_live_maybe((void *)(uintptr_t)chain[i]));
}
END_TEST

/* A fork child's reset that keeps the parent's blocks (the leak scan's
 * roots): the child's table starts empty, the parent's blocks stay
 * listed until the child frees them; a grandchild keeps its parent's
 * alone. */
static uint64_t seen_ptrs[8];
static size_t nseen;

static void seen(void *ctx, const tl_live_entry_t *e)
{
    (void)ctx;
    if (nseen < 8) seen_ptrs[nseen++] = e->ptr;
}

static void inherited_ptrs(void)
{
    nseen = 0;
    tl_live_inherited_foreach(seen, NULL);
    if (nseen == 2 && seen_ptrs[0] > seen_ptrs[1]) { /* table order: sort the pair */
        uint64_t t = seen_ptrs[0];
        seen_ptrs[0] = seen_ptrs[1];
        seen_ptrs[1] = t;
    }
}

START_TEST(live_fork_keeps_parents)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    inherited_ptrs();
    ck_assert_uint_eq(nseen, 0);
    tl_live_entry_t a = entry(0x7f0000001000, 1), b = entry(0x7f0000002000, 2);
    tl_live_entry_t c = entry(0x7f0000003000, 3), out;
    ck_assert(!tl_live_insert(&a));
    ck_assert(!tl_live_insert(&b));
    tl_live_reset(true); /* fork child */
    ck_assert_uint_eq(tl_live_count(), 0);
    ck_assert(tl_live_remove(a.ptr, &out)); /* not the child's */
    inherited_ptrs();
    ck_assert_uint_eq(nseen, 2);
    ck_assert_uint_eq(seen_ptrs[0], a.ptr);
    ck_assert_uint_eq(seen_ptrs[1], b.ptr);
    ck_assert(!tl_live_insert(&c));
    ck_assert(!tl_live_inherited_remove(a.ptr)); /* the child frees a */
    ck_assert(tl_live_inherited_remove(a.ptr));
    ck_assert(tl_live_inherited_remove(c.ptr)); /* the child's own */
    inherited_ptrs();
    ck_assert_uint_eq(nseen, 1);
    ck_assert_uint_eq(seen_ptrs[0], b.ptr);
    tl_live_reset(true); /* grandchild: its parent's c alone */
    inherited_ptrs();
    ck_assert_uint_eq(nseen, 1);
    ck_assert_uint_eq(seen_ptrs[0], c.ptr);
    tl_live_reset(false); /* no scan: a plain reset */
    ck_assert_uint_eq(tl_live_count(), 0);
}
END_TEST

/* More blocks than 3/4 of the main table's slots: the rest go to the
 * overflow table, and every one is found, walked, inherited by a fork
 * child and removed (before, the table refused them: a script keeping
 * 300,000 numpy arrays dropped their events). */
static size_t nwalked;

static void walked(void *ctx, const tl_live_entry_t *e)
{
    (void)ctx;
    (void)e;
    nwalked++;
}

START_TEST(live_overflow)
{
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    enum { M = (1u << TL_LIVE_LG_SLOTS) + 5000 };
    tl_live_entry_t e, out;
    for (uint64_t i = 0; i < M; i++) {
        e = entry(0x7e0000000000 + i * 48, i % 1000 + 1);
        ck_assert_msg(!tl_live_insert(&e), "insert %" PRIu64, i);
    }
    ck_assert_uint_eq(tl_live_count(), M);
    for (uint64_t i = 0; i < M; i += 997) {
        ck_assert(tl_live_has(0x7e0000000000 + i * 48, &out));
        ck_assert_uint_eq(out.stack_id, i % 1000 + 1);
    }
    nwalked = 0;
    tl_live_foreach(walked, NULL);
    ck_assert_uint_eq(nwalked, M);
    tl_live_reset(true); /* a fork child: all of them its parent's */
    nwalked = 0;
    tl_live_inherited_foreach(walked, NULL);
    ck_assert_uint_eq(nwalked, M);
    ck_assert(!tl_live_inherited_remove(0x7e0000000000 + (M - 1) * 48ull));
    tl_live_reset(false);
    for (uint64_t i = 0; i < M; i++) {
        e = entry(0x7e0000000000 + i * 48, 1);
        ck_assert(!tl_live_insert(&e));
    }
    for (uint64_t i = 0; i < M; i++)
        ck_assert_msg(!tl_live_remove(0x7e0000000000 + i * 48, &out), "remove %" PRIu64, i);
    ck_assert_uint_eq(tl_live_count(), 0);
    tl_live_reset(false);
}
END_TEST

static Suite *make_live_suite(void)
{
    Suite *s = suite_create("live");
    TCase *tc = tcase_create("table");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, live_insert_remove);
    tcase_add_test(tc, live_counts_host_storages);
    tcase_add_test(tc, live_full_chain_and_tombstones);
    tcase_add_test(tc, live_concurrent_one_chain);
    tcase_add_test(tc, live_fork_keeps_parents);
    tcase_add_test(tc, live_overflow);
    suite_add_tcase(s, tc);
    return s;
}

/* --- checkpoints --- */

static char tmpdir[64], path[128];
static tl_writer_t wr;

static void trace_begin(void)
{
    strcpy(tmpdir, "/tmp/tl-test-live.XXXXXX");
    ck_assert(mkdtemp(tmpdir));
    snprintf(path, sizeof path, "%s/t.tlt", tmpdir);
    tl_writer_hdr_t hdr = {.pid = 5, .ppid = 4};
    memset(&wr, 0, sizeof wr);
    ck_assert_int_eq(tl_writer_create(&wr, path, &hdr), 0);
    ck_assert(!tl_live_init());
    tl_live_reset(false);
    tl_counters_reset();
    tl_tsd.slot = tl_counters_take();
}

static void trace_done(void)
{
    tl_writer_release(&wr);
    unlink(path);
    rmdir(tmpdir);
}

typedef struct rec {
    unsigned type;
    uint64_t a[8];
} rec_t;

/* The records of region (TL_CKPT_TID_BASE + region) in the file as it is
 * now, chunk by chunk in the region's order. Returns how many. */
static size_t read_region(unsigned region, rec_t *out, size_t max)
{
    int fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    struct stat st;
    ck_assert_int_eq(fstat(fd, &st), 0);
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len);
    ck_assert(read(fd, buf, len) == (ssize_t)len);
    close(fd);
    size_t n = 0, cb = wr.chunk_bytes;
    for (uint32_t seq = 0;; seq++) {
        const uint8_t *ch = NULL;
        for (size_t off = TL_TRACE_HEADER_BYTES; off + cb <= len; off += cb)
            if (tl_load_le32(buf + off + TL_CHK_MAGIC) == TL_CHUNK_MAGIC &&
                tl_load_le32(buf + off + TL_CHK_TID) == TL_CKPT_TID_BASE + region &&
                tl_load_le32(buf + off + TL_CHK_SEQ) == seq)
                ch = buf + off;
        if (!ch) break;
        const uint8_t *p = ch + TL_CHUNK_HEADER_BYTES, *end = p + tl_load_le32(ch + TL_CHK_USED);
        while (p < end) {
            tl_record_t r;
            long k = tl_rec_decode(p, (size_t)(end - p), &r, NULL, NULL);
            ck_assert_int_gt(k, 0);
            p += k;
            ck_assert_uint_lt(n, max);
            out[n].type = r.type;
            unsigned nints;
            bool has_str;
            ck_assert(tl_rec_lineage_shape(r.type, &nints, &has_str));
            for (unsigned i = 0; i < 8; i++)
                out[n].a[i] = i < nints ? r.u.lineage.a[i] : 0;
            n++;
        }
    }
    free(buf);
    return n;
}

static void alloc_live(uint64_t ptr, uint64_t weight, uint64_t stack, uint32_t kind)
{
    tl_live_entry_t e = {.ptr = ptr,
                         .size = weight,
                         .weight = weight,
                         .stack_id = stack,
                         .ts = ptr + 0x1000,
                         .kind = kind};
    ck_assert(!tl_live_insert(&e));
    tl_ckpt_set_max_stack(stack);
    tl_ckpt_on_alloc(&e, 50);
}

static void free_live(uint64_t ptr)
{
    tl_live_entry_t e;
    ck_assert(!tl_live_remove(ptr, &e));
    tl_ckpt_on_free(&e);
}

#define CK_REC(r, t, x0, x1, x2, x3, x4, x5)                                                       \
    do {                                                                                           \
        ck_assert_uint_eq((r).type, t);                                                            \
        uint64_t want_[6] = {x0, x1, x2, x3, x4, x5};                                              \
        for (int i_ = 0; i_ < 6; i_++)                                                             \
            ck_assert_uint_eq((r).a[i_], want_[i_]);                                               \
    } while (0)

/* A current checkpoint: BEGIN with the live and peak bytes, the exact
 * COUNT records, a SITE per stack with totals, a LIVE per live block, END
 * with the record count; the next one goes to the other region and the
 * one after that overwrites the first. */
START_TEST(ckpt_current_records_and_regions)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    tl_ctr_add(&tl_tsd.slot->cls_count[4], 3);
    tl_ctr_add(&tl_tsd.slot->cls_bytes[4], 30);
    tl_ctr_add(&tl_tsd.slot->frees_all, 2);
    alloc_live(0x1000, 100, 1, TL_KIND_MALLOC);
    alloc_live(0x2000, 200, 1, TL_KIND_MALLOC);
    alloc_live(0x3000, 50, 2, TL_KIND_STORAGE_C10);
    free_live(0x1000);
    ck_assert_uint_eq(tl_ckpt_flush(77, 0, false), 0);

    rec_t r[32];
    size_t n = read_region(0, r, 32);
    ck_assert_uint_eq(n, 8);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_CURRENT, 250, 2, 350, 77);
    CK_REC(r[1], TL_REC_COUNT, 4, 3, 30, 0, 0, 0);
    CK_REC(r[2], TL_REC_COUNT, TL_REC_COUNT_FREES, 2, 0, 0, 0, 0);
    CK_REC(r[3], TL_REC_SITE, 1, 0, 2, 1, 300, 100);
    CK_REC(r[4], TL_REC_SITE, 2, 1, 1, 0, 50, 0);
    /* LIVE in table order: find each. */
    bool seen2 = false, seen3 = false;
    for (int i = 5; i < 7; i++) {
        ck_assert_uint_eq(r[i].type, TL_REC_LIVE);
        if (r[i].a[1] == 0x2000) {
            CK_REC(r[i], TL_REC_LIVE, TL_KIND_MALLOC, 0x2000, 200, 200, 1, 0x3000);
            seen2 = true;
        } else {
            CK_REC(r[i], TL_REC_LIVE, TL_KIND_STORAGE_C10, 0x3000, 50, 50, 2, 0x4000);
            seen3 = true;
        }
    }
    ck_assert(seen2 && seen3);
    CK_REC(r[7], TL_REC_CKPT_END, 1, 6, 0, 0, 0, 0);
    /* No peak set: the live bytes stayed below 1 MiB and are not at the peak. */
    ck_assert_uint_eq(read_region(2, r, 32), 0);
    ck_assert_uint_eq(read_region(3, r, 32), 0);

    free_live(0x2000);
    tl_ckpt_flush(88, 0, false);
    n = read_region(1, r, 32);
    ck_assert_uint_eq(n, 7);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 2, TL_CKPT_CURRENT, 50, 1, 350, 88);
    CK_REC(r[3], TL_REC_SITE, 1, 0, 2, 2, 300, 300);
    CK_REC(r[5], TL_REC_LIVE, TL_KIND_STORAGE_C10, 0x3000, 50, 50, 2, 0x4000);
    CK_REC(r[6], TL_REC_CKPT_END, 2, 5, 0, 0, 0, 0);
    ck_assert_uint_eq(read_region(0, r, 32), 8); /* the older one stands */

    free_live(0x3000);
    tl_ckpt_flush(99, 0, false);
    n = read_region(0, r, 32);
    ck_assert_uint_eq(n, 6); /* rewritten: no LIVE left */
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 3, TL_CKPT_CURRENT, 0, 0, 350, 99);
    CK_REC(r[5], TL_REC_CKPT_END, 3, 4, 0, 0, 0, 0);
    ck_assert_uint_eq(read_region(1, r, 32), 7);
    trace_done();
}
END_TEST

/* The peak set: written when the live bytes first reach 1 MiB, again only
 * once they pass the last peak checkpoint by more than 1/16 (into the other
 * region); a flush at a peak newer than its checkpoint writes it. */
START_TEST(ckpt_peak)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    rec_t r[32];
    const uint64_t K = 1024, A = (1 << 20) + 96 * K;
    alloc_live(0x10000, 512 * K, 3, TL_KIND_MALLOC);
    ck_assert_uint_eq(read_region(2, r, 32), 0);
    alloc_live(0x20000, 512 * K, 3, TL_KIND_MALLOC); /* 1 MiB */
    ck_assert_uint_eq(read_region(2, r, 32), 4);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_PEAK, 1 << 20, 2, 1 << 20, 50);
    ck_assert_uint_eq(r[1].type, TL_REC_LIVE);
    ck_assert_uint_eq(r[2].type, TL_REC_LIVE);
    CK_REC(r[3], TL_REC_CKPT_END, 1, 2, 0, 0, 0, 0);
    alloc_live(0x30000, 32 * K, 3, TL_KIND_MALLOC); /* +1/32: not yet */
    ck_assert_uint_eq(read_region(3, r, 32), 0);
    alloc_live(0x40000, 64 * K, 3, TL_KIND_MALLOC); /* +3/32 */
    ck_assert_uint_eq(read_region(3, r, 32), 6);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 2, TL_CKPT_PEAK, A, 4, A, 50);
    CK_REC(r[5], TL_REC_CKPT_END, 2, 4, 0, 0, 0, 0);
    ck_assert_uint_eq(read_region(2, r, 32), 4); /* the first still stands */

    free_live(0x30000);
    alloc_live(0x50000, 48 * K, 3, TL_KIND_MALLOC); /* a peak of A + 16K, no checkpoint */
    ck_assert_uint_eq(read_region(2, r, 32), 4);
    tl_ckpt_flush(123, 0, false);
    ck_assert_uint_eq(read_region(2, r, 32), 6);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 3, TL_CKPT_PEAK, A + 16 * K, 4, A + 16 * K, 123);
    CK_REC(r[5], TL_REC_CKPT_END, 3, 4, 0, 0, 0, 0);
    ck_assert_uint_eq(read_region(0, r, 32), 8);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_CURRENT, A + 16 * K, 4, A + 16 * K, 123);
    CK_REC(r[2], TL_REC_SITE, 3, 0, 5, 1, A + 48 * K, 32 * K);
    trace_done();
}
END_TEST

/* Current checkpoints come from tl_ckpt_tick once a period has passed: the
 * first tick only starts the clock. */
START_TEST(ckpt_tick_period)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    rec_t r[32];
    alloc_live(0x1000, 10, 1, TL_KIND_MALLOC);
    tl_ckpt_tick(5000);
    tl_ckpt_tick(5999);
    ck_assert_uint_eq(read_region(0, r, 32), 0);
    tl_ckpt_tick(6000);
    ck_assert_uint_eq(read_region(0, r, 32), 5);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_CURRENT, 10, 1, 10, 6000);
    tl_ckpt_tick(6999);
    ck_assert_uint_eq(read_region(1, r, 32), 0);
    tl_ckpt_tick(7000);
    ck_assert_uint_eq(read_region(1, r, 32), 5);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 2, TL_CKPT_CURRENT, 10, 1, 10, 7000);
    trace_done();
}
END_TEST

/* A flush that freezes (the script_end report point) writes the last
 * current set: later ticks and the END's flush write none, so the set
 * read is the script's end point's, not the one after the teardown. */
START_TEST(ckpt_freeze)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    rec_t r[32];
    alloc_live(0x1000, 10, 1, TL_KIND_MALLOC);
    alloc_live(0x2000, 20, 1, TL_KIND_STORAGE_C10);
    ck_assert_uint_eq(tl_ckpt_flush(50, 0, true), 0);
    size_t n = read_region(0, r, 32); /* BEGIN, COUNT, SITEs, 2 LIVE, END */
    ck_assert_uint_ge(n, 5);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_CURRENT, 30, 2, 30, 50);
    free_live(0x2000); /* the teardown frees the storage */
    tl_ckpt_tick(1000);
    tl_ckpt_tick(5000);
    tl_ckpt_flush(6000, 0, false);
    ck_assert_uint_eq(read_region(1, r, 32), 0); /* no later current set */
    ck_assert_uint_eq(read_region(0, r, 32), n);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_CURRENT, 30, 2, 30, 50);
    trace_done();
}
END_TEST

/* A checkpoint larger than a chunk continues in the region's next chunks;
 * a later, smaller one reuses them and leaves no stale records behind. */
START_TEST(ckpt_many_chunks)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    enum { N = 3000 };
    static rec_t r[N + 16];
    for (uint64_t i = 0; i < N; i++)
        alloc_live(0x100000 + i * 64, 8, 1, TL_KIND_MALLOC);
    tl_ckpt_flush(10, 0, false);
    ck_assert_uint_eq(read_region(0, r, N + 16), N + 4);
    CK_REC(r[N + 3], TL_REC_CKPT_END, 1, N + 2, 0, 0, 0, 0);
    size_t live = 0;
    for (size_t i = 0; i < N + 4; i++)
        live += r[i].type == TL_REC_LIVE;
    ck_assert_uint_eq(live, N);
    for (uint64_t i = 0; i < N - 10; i++)
        free_live(0x100000 + i * 64);
    tl_ckpt_flush(11, 0, false); /* region 1 */
    tl_ckpt_flush(12, 0, false); /* region 0 again */
    ck_assert_uint_eq(read_region(0, r, N + 16), 14);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 3, TL_CKPT_CURRENT, 80, 10, N * 8, 12);
    CK_REC(r[13], TL_REC_CKPT_END, 3, 12, 0, 0, 0, 0);
    trace_done();
}
END_TEST

/* The record of `type` whose first two fields are a0, a1 (NULL if none). */
static const rec_t *find_rec(const rec_t *r, size_t n, unsigned type, uint64_t a0, uint64_t a1)
{
    for (size_t i = 0; i < n; i++)
        if (r[i].type == type && r[i].a[0] == a0 && r[i].a[1] == a1) return &r[i];
    return NULL;
}

/* Device storages: totals by (site, kind, device), exact peaks, live sets
 * in the current checkpoint, and a peak set per device written at the
 * first free after a new peak (holding the storage being freed) or at the
 * flush; a PyTorch block at its segment's address is a storage of its own,
 * and once one is seen the segments no longer count toward the peak set. */
START_TEST(ckpt_device_sets)
{
    trace_begin();
    ck_assert(!tl_ckpt_init(&wr, 1000));
    const uint64_t M = 1 << 20, SEG = TL_KIND_STORAGE_CUDA_SEGMENT, PIN = TL_KIND_STORAGE_PINNED,
                   BLK = TL_KIND_STORAGE_CUDA, CUDA0 = TL_DEVICE_CUDA(0);
    rec_t r[64];
    ck_assert(!tl_ckpt_dev_alloc(SEG, 0x100000, 3 * M, CUDA0, 7, 10));
    ck_assert(!tl_ckpt_dev_alloc(SEG, 0x400000, M, CUDA0, 8, 20));
    unsigned r0 = (TL_CKPT_DEVICE + (unsigned)CUDA0) * 2; /* cuda:0's regions */
    ck_assert_uint_eq(read_region(r0, r, 64), 0);         /* no free yet: pending */
    ck_assert(!tl_ckpt_dev_free(SEG, 0x400000, 30));
    ck_assert(tl_ckpt_dev_free(SEG, 0x999000, 31)); /* never live */
    ck_assert_uint_eq(read_region(r0, r, 64), 4);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 1, TL_CKPT_DEVICE + CUDA0, 4 * M, 2, 4 * M, 30);
    const rec_t *l = find_rec(r, 4, TL_REC_DLIVE, SEG, 0x400000);
    ck_assert(l);
    CK_REC(*l, TL_REC_DLIVE, SEG, 0x400000, M, 8, 20, CUDA0);
    ck_assert(find_rec(r, 4, TL_REC_DLIVE, SEG, 0x100000));
    CK_REC(r[3], TL_REC_CKPT_END, 1, 2, 0, 0, 0, 0);
    ck_assert(!tl_ckpt_dev_alloc(SEG, 0x400000, M / 2, CUDA0, 8, 40)); /* below the peak */
    ck_assert(!tl_ckpt_dev_alloc(PIN, 0x800000, 8192, TL_DEVICE_CPU, 9, 50));
    ck_assert(!tl_ckpt_dev_alloc(BLK, 0x100000, 4096, CUDA0, 10, 60)); /* inside its segment */
    ck_assert_uint_eq(tl_ckpt_flush(100, 0, false), 0);
    /* cuda:0's second peak set (blocks only now) and cpu's, at the flush */
    ck_assert_uint_eq(read_region(r0 + 1, r, 64), 5);
    CK_REC(r[0], TL_REC_CKPT_BEGIN, 2, TL_CKPT_DEVICE + CUDA0, 4096, 3, 4096, 100);
    ck_assert_uint_eq(read_region(TL_CKPT_DEVICE * 2, r, 64), 3);
    CK_REC(r[1], TL_REC_DLIVE, PIN, 0x800000, 8192, 9, 50, TL_DEVICE_CPU);
    /* the current set: no host LIVE; DSITE, DPEAK, DLIVE for each */
    size_t n = read_region(0, r, 64);
    ck_assert_uint_eq(r[0].type, TL_REC_CKPT_BEGIN);
    const rec_t *d = find_rec(r, n, TL_REC_DSITE, 8, SEG);
    ck_assert(d);
    CK_REC(*d, TL_REC_DSITE, 8, SEG, CUDA0, 2, 1, M + M / 2);
    ck_assert_uint_eq(d->a[6], M);
    d = find_rec(r, n, TL_REC_DSITE, 10, BLK);
    ck_assert(d);
    CK_REC(*d, TL_REC_DSITE, 10, BLK, CUDA0, 1, 0, 4096);
    d = find_rec(r, n, TL_REC_DPEAK, CUDA0, 4096);
    ck_assert(d);
    CK_REC(*d, TL_REC_DPEAK, CUDA0, 4096, 60, 4 * M, 20, 4 * M);
    d = find_rec(r, n, TL_REC_DPEAK, TL_DEVICE_CPU, 8192);
    ck_assert(d);
    ck_assert(find_rec(r, n, TL_REC_DLIVE, SEG, 0x100000));
    ck_assert(find_rec(r, n, TL_REC_DLIVE, BLK, 0x100000));
    ck_assert(find_rec(r, n, TL_REC_DLIVE, SEG, 0x400000));
    ck_assert(find_rec(r, n, TL_REC_DLIVE, PIN, 0x800000));
    ck_assert(!find_rec(r, n, TL_REC_LIVE, SEG, 0x100000));
    /* the block goes, its segment stays */
    ck_assert(!tl_ckpt_dev_free(BLK, 0x100000, 110));
    tl_ckpt_flush(120, 0, false);
    n = read_region(1, r, 64);
    ck_assert(find_rec(r, n, TL_REC_DLIVE, SEG, 0x100000));
    ck_assert(!find_rec(r, n, TL_REC_DLIVE, BLK, 0x100000));
    trace_done();
}
END_TEST

static Suite *make_ckpt_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("regions");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ckpt_current_records_and_regions);
    tcase_add_test(tc, ckpt_peak);
    tcase_add_test(tc, ckpt_tick_period);
    tcase_add_test(tc, ckpt_many_chunks);
    tcase_add_test(tc, ckpt_freeze);
    tcase_add_test(tc, ckpt_device_sets);
    suite_add_tcase(s, tc);
    return s;
}

TL_CHECK_MAIN(make_live_suite, make_ckpt_suite)
