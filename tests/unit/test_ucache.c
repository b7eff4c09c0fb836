/* test_ucache.c - unit tests of `all` mode's fast path: the per-thread
 * unwind cache (stack.c: hit, a changed chain under the same key, eviction,
 * frame-pointer frames proven by their saved rbp, threads), the event
 * clock's reuse of a fenced read (clock.h) and the thread tags of the shadow
 * bytes (blocks.h).
 *
 * Under AddressSanitizer (tools/test-all.sh builds with
 * -fno-omit-frame-pointer) every frame of ours has a frame pointer: the
 * cache takes such chains too (each frame pointer checked), but not those
 * with more of them than an entry checks (TL_UCACHE_RBP): the eviction
 * test's deep chains.
 */
#include <config.h>

#include "agent/blocks.h"
#include "agent/clock.h"
#include "agent/stack.h"
#include "tests/unit/check_main.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define FP_FRAMES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FP_FRAMES 1
#endif
#endif
#ifndef FP_FRAMES
#define FP_FRAMES 0
#endif

#define NOINL __attribute__((noinline, noipa))
#define KEEP  __asm__ volatile("" ::: "memory") /* no tail call: keep the frame */
#define MAXF  64

/* Loop counts the compiler cannot see: a loop it unrolled or peeled would
 * call from several call sites, i.e. from several stacks. */
static volatile unsigned six = 6, five = 5, three = 3, rounds = 200;

static __thread uintptr_t last_cfa;

/* The capture under test, inlined as the hooks do. */
static NOINL size_t capture_here(uint64_t *out)
{
    const uint64_t *f;
    last_cfa = (uintptr_t)__builtin_dwarf_cfa();
    size_t n = tl_stack_capture_inline(&f, MAXF);
    memcpy(out, f, n * sizeof *f);
    KEEP;
    return n;
}

static NOINL size_t mid(uint64_t *out)
{
    size_t n = capture_here(out);
    KEEP;
    return n;
}

/* Two callers of mid with the same frame: capture_here then has the same
 * key (site, return address into mid, CFA) under both. */
static NOINL size_t outer_a(uint64_t *out)
{
    size_t n = mid(out);
    KEEP;
    return n;
}

static NOINL size_t outer_b(uint64_t *out)
{
    size_t n = mid(out);
    KEEP;
    return n;
}

static uint64_t hits(void)
{
    return tl_stack_tbuf ? tl_stack_tbuf->hits : 0;
}

static uint64_t fills(void)
{
    return tl_stack_tbuf ? tl_stack_tbuf->fills : 0;
}

static void same_frames(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
    ck_assert_uint_eq(na, nb);
    for (size_t i = 0; i < na; i++)
        ck_assert_uint_eq(a[i], b[i]);
}

/* The "unwind" tests count captures with a key taken at its second miss
 * (the fewest the cache allows), so that each one's arithmetic stays short;
 * ucache_admit_default checks the agent's own count. */
static void admit_second_miss(void)
{
    tl_ucache_admit = 2;
}

/* The agent's admission: a key's first TL_UCACHE_ADMIT - 1 captures are
 * libunwind's, the next fills the cache, the rest are answered from it. */
START_TEST(ucache_admit_default)
{
    tl_stack_unwind_init();
    enum { N = TL_UCACHE_ADMIT + 4 };
    uint64_t f[N][MAXF];
    size_t n[N];
    uint64_t h0 = hits(), f0 = fills();
    volatile unsigned captures = N;
    for (unsigned i = 0; i < captures; i++) /* one call site: one stack */
        n[i] = outer_a(f[i]);
    for (int i = 1; i < N; i++)
        same_frames(f[0], n[0], f[i], n[i]);
    ck_assert_uint_eq(fills() - f0, 1);
    ck_assert_uint_eq(hits() - h0, N - TL_UCACHE_ADMIT);
}
END_TEST

/* The first capture is libunwind's; the second fills the cache (a key is
 * taken at its second miss); the next ones are answered from it, frame for
 * frame the same. */
START_TEST(ucache_hit)
{
    tl_stack_unwind_init();
    uint64_t f[6][MAXF];
    size_t n[6];
    uint64_t h0 = hits(), f0 = fills();
    for (unsigned i = 0; i < six; i++) /* one call site: one stack */
        n[i] = outer_a(f[i]);
    ck_assert_uint_ge(n[0], 4);
    for (int i = 1; i < 6; i++)
        same_frames(f[0], n[0], f[i], n[i]);
    ck_assert_uint_eq(fills() - f0, 1);
    ck_assert_uint_eq(hits() - h0, 4);
}
END_TEST

/* Same key, another chain above it: the cached chain's return addresses no
 * longer match the stack, so the cache is not used and the frames name
 * outer_b, not outer_a. */
START_TEST(ucache_changed_chain_is_a_miss)
{
    tl_stack_unwind_init();
    uint64_t f[5][MAXF];
    size_t n[5];
    uintptr_t cfa[5];
    uint64_t h[5];
    static size_t (*const seq[5])(uint64_t *) = {outer_a, outer_a, outer_a, outer_a, outer_b};
    for (unsigned i = 0; i < five; i++) { /* one call site: outer_a four times, then outer_b */
        n[i] = seq[i](f[i]);
        cfa[i] = last_cfa;
        h[i] = hits();
    }
    const uint64_t *a = f[3], *b = f[4];
    ck_assert_uint_eq(cfa[4], cfa[3]); /* the same key: else this test shows nothing */
    ck_assert_uint_eq(h[3] - h[1], 2);
    ck_assert_uint_eq(h[4], h[3]);
    ck_assert_uint_eq(n[4], n[3]);
    ck_assert_uint_eq(b[1], a[1]); /* into mid, at one address */
    ck_assert_uint_ne(b[2], a[2]);
    ck_assert_uint_lt(b[2] - (uint64_t)(uintptr_t)&outer_b, 256); /* into outer_b */
    ck_assert_uint_lt(a[2] - (uint64_t)(uintptr_t)&outer_a, 256);
    for (size_t i = 3; i < n[3]; i++)
        ck_assert_uint_eq(b[i], a[i]);
}
END_TEST

/* Four leaf callers (four return addresses) at DEPTHS depths: more keys
 * than the cache has entries. The first key is evicted long before the
 * end; captured again it is still right, and taken into the cache again. */
static NOINL size_t leaf0(uint64_t *out)
{
    size_t n = capture_here(out);
    KEEP;
    return n;
}
static NOINL size_t leaf1(uint64_t *out)
{
    size_t n = capture_here(out) + 0;
    KEEP;
    return n;
}
static NOINL size_t leaf2(uint64_t *out)
{
    size_t n = capture_here(out);
    __asm__ volatile("nop" ::: "memory");
    return n;
}
static NOINL size_t leaf3(uint64_t *out)
{
    size_t n = capture_here(out);
    __asm__ volatile("nop; nop" ::: "memory");
    return n;
}

static NOINL size_t down(unsigned depth, unsigned leaf, uint64_t *out)
{
    size_t n;
    if (depth > 1)
        n = down(depth - 1, leaf, out);
    else
        n = leaf == 0 ? leaf0(out) : leaf == 1 ? leaf1(out) : leaf == 2 ? leaf2(out) : leaf3(out);
    KEEP;
    return n;
}

#define DEPTHS ((1u << TL_UCACHE_LG) / 4 + 128)
#define KEYS   (4 * DEPTHS)
static uint64_t key_ref[KEYS][MAXF];
static size_t key_nref[KEYS];

/* Every key reps times, from one call site of down (no branch before it
 * in the loop); pass 0's first capture of each key is its reference, every
 * other one is compared with it. Returns the captures that differ. */
static NOINL unsigned capture_keys(unsigned pass, unsigned reps)
{
    unsigned bad = 0;
    for (unsigned k = 0; k < KEYS; k++) {
        for (unsigned r = 0; r < reps; r++) {
            uint64_t f[MAXF];
            size_t n = down(1 + k / 4, k % 4, f);
            if (pass == 0 && r == 0) {
                key_nref[k] = n;
                memcpy(key_ref[k], f, n * sizeof *f);
            } else if (n != key_nref[k] || memcmp(f, key_ref[k], n * sizeof *f) != 0) {
                bad++;
            }
        }
    }
    KEEP;
    return bad;
}

START_TEST(ucache_eviction)
{
    tl_stack_unwind_init();
    /* Pass 0: each key three times (libunwind, filled, a hit); pass 1: each
     * key once, after all the others; pass 2: twice more. */
    static const unsigned reps[3] = {3, 1, 2};
    uint64_t h[4], f[4];
    h[0] = hits();
    f[0] = fills();
    for (unsigned pass = 0; pass < three; pass++) {
        ck_assert_uint_eq(capture_keys(pass, reps[pass]), 0);
        h[pass + 1] = hits();
        f[pass + 1] = fills();
    }
    for (unsigned k = 0; k < KEYS; k++)
        ck_assert_uint_ge(key_nref[k], 4);
    /* Under ASan deep keys hold more frame pointers than an entry checks
     * (TL_UCACHE_RBP): those are never cached. */
    if (FP_FRAMES) return;
    ck_assert_uint_eq(f[1] - f[0], KEYS);
    ck_assert_uint_eq(h[1] - h[0], KEYS);
    /* The entries held at most 1 << TL_UCACHE_LG of the keys: the others
     * were evicted. */
    ck_assert_uint_le(h[2] - h[1], 1u << TL_UCACHE_LG);
    ck_assert_uint_ge(f[3] - f[1], KEYS - (1u << TL_UCACHE_LG));
}
END_TEST

/* A variable-length array gives its function a frame pointer and a frame
 * whose size varies. Two chains under one key (the same capture CFA, the
 * same return address into vla_mid), whose VLAs split the same bytes the
 * other way round: once chain A (outer_a's VLA big, vla_mid's small) is
 * cached, chain B's stack still holds A's return addresses at A's slots
 * (stale, inside B's big VLA in vla_mid), so only vla_mid's frame pointer,
 * checked where capture_here saved it, tells B from A. */
static NOINL size_t vla_mid(unsigned n, uint64_t *out)
{
    volatile char pad[n];
    pad[0] = 1;
    size_t k = capture_here(out);
    KEEP;
    return k + (size_t)pad[0] - 1;
}

static NOINL size_t vla_outer_a(unsigned m, unsigned n, uint64_t *out)
{
    volatile char pad[m];
    pad[0] = 1;
    size_t k = vla_mid(n, out);
    KEEP;
    return k + (size_t)pad[0] - 1;
}

static NOINL size_t vla_outer_b(unsigned m, unsigned n, uint64_t *out)
{
    volatile char pad[m];
    pad[0] = 1;
    size_t k = vla_mid(n, out);
    __asm__ volatile("nop" ::: "memory");
    return k + (size_t)pad[0] - 1;
}

START_TEST(ucache_frame_pointer_proven)
{
    tl_stack_unwind_init();
    static size_t (*const seq[6])(unsigned, unsigned, uint64_t *) = {
        vla_outer_a, vla_outer_a, vla_outer_a, vla_outer_a, vla_outer_a, vla_outer_b};
    static const unsigned m[6] = {4096, 4096, 4096, 4096, 4096, 16};
    static const unsigned n[6] = {16, 16, 16, 16, 16, 4096};
    uint64_t f[6][MAXF], h[6];
    size_t k[6];
    uintptr_t cfa[6];
    for (unsigned i = 0; i < six; i++) { /* one call site */
        k[i] = seq[i](m[i], n[i], f[i]);
        cfa[i] = last_cfa;
        h[i] = hits();
    }
    ck_assert_uint_eq(cfa[5], cfa[4]); /* the same key: else this test shows nothing */
    for (int i = 1; i < 5; i++)
        same_frames(f[0], k[0], f[i], k[i]);
    ck_assert_uint_eq(h[4] - h[1], 3); /* cached at the second call, then hits */
    ck_assert_uint_eq(h[5], h[4]);     /* B: a miss */
    ck_assert_uint_eq(k[5], k[4]);
    ck_assert_uint_eq(f[5][1], f[4][1]); /* into vla_mid, at one address */
    ck_assert_uint_lt(f[5][2] - (uint64_t)(uintptr_t)&vla_outer_b, 256); /* into vla_outer_b */
    ck_assert_uint_lt(f[4][2] - (uint64_t)(uintptr_t)&vla_outer_a, 256);
    for (size_t i = 3; i < k[4]; i++)
        ck_assert_uint_eq(f[5][i], f[4][i]);
}
END_TEST

/* The entry of a cached chain with a frame pointer checks it: with the
 * value it expects changed, the same stack is a miss. */
static volatile unsigned seven = 7;

START_TEST(ucache_frame_pointer_checked)
{
    tl_stack_unwind_init();
    uint64_t f[MAXF], h[7];
    size_t k = 0;
    tl_ucache_entry_t *e = NULL;
    for (unsigned i = 0; i < seven; i++) { /* one call site: libunwind, filled, 3 hits, ... */
        if (i == 5) {
            ck_assert_ptr_nonnull(e);
            ck_assert_uint_ge(e->nrbp, 2); /* vla_mid's and vla_outer_a's */
            e->rbp_val[0] ^= 16;
        }
        k = vla_outer_a(64, 64, f);
        h[i] = hits();
        if (i == 4) e = tl_stack_tbuf->hit;
    }
    ck_assert_uint_eq(h[4] - h[1], 3);
    ck_assert_uint_eq(h[5], h[4]); /* the changed value: a miss */
    ck_assert_uint_lt(f[2] - (uint64_t)(uintptr_t)&vla_outer_a, 256);
    ck_assert_uint_ge(k, 4);
}
END_TEST

/* Keys that share a set: vla_outer_a's VLA of m bytes moves the capture's
 * CFA, so each m is a key of its own (the same site and return address).
 * These run on threads of their own (a fresh cache), so they count what
 * is wrong instead of asserting it there. */
static unsigned long probe_bad;

/* A capture under a VLA of m bytes, from one call site. */
static NOINL size_t vla_capture(unsigned m, uint64_t *out)
{
    size_t n = vla_outer_a(m, 16, out);
    KEEP;
    return n;
}

/* The capture's CFA for each m (m / 16) when it was probed. */
static uintptr_t probe_cfa[64 * 1024 / 16];

/* Capture once (a first miss); m's key hash. Inlined into its caller, so
 * the capture's CFA is the one the caller's own captures of m have (a
 * frame of its own would move it); each later capture checks that
 * (probe_same). */
static inline __attribute__((always_inline)) uint64_t probe_key(uintptr_t site, uint64_t ra,
                                                                unsigned m)
{
    uint64_t f[MAXF];
    vla_capture(m, f);
    probe_bad += f[1] != ra; /* into vla_mid: the key's return address */
    probe_cfa[m / 16] = last_cfa;
    return tl_ucache_hash(site, ra, last_cfa);
}

/* The capture just made of m had the key probe_key found. */
static bool probe_same(unsigned m)
{
    return last_cfa == probe_cfa[m / 16];
}

/* The site and return address of vla_outer_a's captures: a key taken into
 * this thread's cache (a miss, filled, a hit). */
static void vla_key(uintptr_t *site, uint64_t *ra)
{
    uint64_t f[MAXF];
    for (unsigned i = 0; i < three; i++)
        vla_outer_a(16, 16, f);
    const tl_ucache_entry_t *e = tl_stack_tbuf ? tl_stack_tbuf->hit : NULL;
    probe_bad += !e;
    *site = e ? e->site : 0;
    *ra = e ? e->ra : 0;
}

static struct {
    unsigned m[3]; /* the keys, by VLA size */
    uint64_t fills, hits, bad;
} shared;

/* One set, three keys: z hit between the others' captures, as a training
 * step's hottest stack is. The ways must not make x and y take turns in
 * one of them (a way chosen after the way last hit did: each step filled
 * both again). */
static NOINL void *set_turns_main(void *arg)
{
    (void)arg;
    uintptr_t site;
    uint64_t ra;
    vla_key(&site, &ra);
    size_t first = tl_ucache_set(tl_ucache_hash(site, ra, last_cfa));
    static uint8_t count[(1u << TL_UCACHE_LG) / TL_UCACHE_WAYS];
    static unsigned by_set[(1u << TL_UCACHE_LG) / TL_UCACHE_WAYS][3];
    memset(count, 0, sizeof count);
    for (unsigned m = 32; m < 64 * 1024; m += 16) {
        size_t set = tl_ucache_set(probe_key(site, ra, m));
        if (set == first) continue; /* a set without the first key */
        size_t i = set / TL_UCACHE_WAYS;
        by_set[i][count[i]++] = m;
        if (count[i] == 3) {
            memcpy(shared.m, by_set[i], sizeof shared.m);
            break;
        }
    }
    if (!shared.m[2]) return NULL; /* none found: the test fails */
    unsigned z = shared.m[0], x = shared.m[1], y = shared.m[2];
    const unsigned seq[4] = {z, x, z, y};
    uint64_t ref[4][MAXF], f[MAXF];
    size_t nref[4];
    uint64_t h0 = 0, f0 = 0;
    for (unsigned pass = 0; pass < 12; pass++) {
        if (pass == 4) { /* warm: each key taken at its second miss */
            h0 = hits();
            f0 = fills();
        }
        for (unsigned j = 0; j < 4; j++) {
            size_t n = vla_capture(seq[j], f);
            shared.bad += !probe_same(seq[j]);
            if (pass == 0) {
                nref[j] = n;
                memcpy(ref[j], f, sizeof f);
            } else if (n != nref[j] || memcmp(f, ref[j], n * sizeof *f) != 0) {
                shared.bad++;
            }
        }
    }
    shared.fills = fills() - f0;
    shared.hits = hits() - h0;
    return NULL;
}

/* fn on a thread of its own: a fresh cache. */
static void on_fresh_thread(void *(*fn)(void *))
{
    tl_stack_unwind_init();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, fn, NULL), 0);
    pthread_join(th, NULL);
}

START_TEST(ucache_set_turns)
{
    on_fresh_thread(set_turns_main);
    ck_assert_uint_eq(probe_bad, 0);
    ck_assert_uint_ne(shared.m[2], 0);
    ck_assert_uint_eq(shared.bad, 0);
    ck_assert_uint_eq(shared.fills, 0);
    ck_assert_uint_eq(shared.hits, 8 * 4);
}
END_TEST

/* Two keys whose hashes share a slot of a direct-mapped admission table
 * (4096 slots): captured in turn, each must still be taken at its second
 * miss, not forget the other's first one forever. */
static struct {
    uint64_t fills, hits;
} seen_shared;

static NOINL void *seen_shared_main(void *arg)
{
    (void)arg;
    uintptr_t site;
    uint64_t ra;
    vla_key(&site, &ra);
    static unsigned by_slot[1u << TL_UCACHE_SEEN_LG];
    memset(by_slot, 0, sizeof by_slot);
    unsigned a = 0, b = 0;
    for (unsigned m = 32; m < 64 * 1024 && !b; m += 16) {
        uint64_t h = probe_key(site, ra, m);
        unsigned *slot = &by_slot[h & ((1u << TL_UCACHE_SEEN_LG) - 1)];
        if (*slot) {
            a = *slot;
            b = m;
        }
        *slot = m;
    }
    if (!b) return NULL; /* none found: the test fails */
    uint64_t f[MAXF], h0 = hits(), f0 = fills();
    for (unsigned pass = 0; pass < 6; pass++) {
        vla_capture(a, f);
        probe_bad += !probe_same(a);
        vla_capture(b, f);
        probe_bad += !probe_same(b);
    }
    seen_shared.fills = fills() - f0;
    seen_shared.hits = hits() - h0;
    return NULL;
}

START_TEST(ucache_seen_shared)
{
    on_fresh_thread(seen_shared_main);
    ck_assert_uint_eq(probe_bad, 0);
    /* Each taken once, within the first two passes: 8 hits at least. */
    ck_assert_uint_eq(seen_shared.fills, 2);
    ck_assert_uint_ge(seen_shared.hits, 8);
}
END_TEST

#define THREADS 4
#define ROUNDS  200
static struct {
    uint64_t bad, hits;
    const void *buf;
} per_thread[THREADS];

static pthread_barrier_t all_done;

static NOINL void *thread_main(void *arg)
{
    size_t k = (size_t)(uintptr_t)arg;
    uint64_t ref[MAXF], f[MAXF];
    size_t nref = 0;
    size_t (*fn)(uint64_t *) = (k & 1) ? outer_b : outer_a;
    for (unsigned i = 0; i <= rounds; i++) { /* one call site; the first is the reference */
        size_t n = fn(f);
        if (!i) {
            nref = n;
            memcpy(ref, f, sizeof f);
        } else if (n != nref || memcmp(f, ref, n * sizeof *f) != 0) {
            per_thread[k].bad++;
        }
    }
    per_thread[k].hits = hits();
    per_thread[k].buf = tl_stack_tbuf;
    pthread_barrier_wait(&all_done); /* alive together: distinct buffers */
    KEEP;
    return NULL;
}

/* Each thread has its own cache (its own buffers) and its own right frames. */
START_TEST(ucache_threads)
{
    tl_stack_unwind_init();
    pthread_t th[THREADS];
    pthread_barrier_init(&all_done, NULL, THREADS);
    for (size_t k = 0; k < THREADS; k++)
        ck_assert_int_eq(pthread_create(&th[k], NULL, thread_main, (void *)(uintptr_t)k), 0);
    for (size_t k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    for (size_t k = 0; k < THREADS; k++) {
        ck_assert_uint_eq(per_thread[k].bad, 0);
        ck_assert_uint_eq(per_thread[k].hits, ROUNDS - 1); /* 2 misses */
        for (size_t j = 0; j < k; j++)
            ck_assert_ptr_ne(per_thread[k].buf, per_thread[j].buf);
    }
}
END_TEST

/* The event clock: a fenced read, then reuse of it within one tick and
 * TL_CLOCK_REUSE events; a foreign event always reads again. */
START_TEST(clock_event_reuse)
{
    tl_clock_init(false);
    tl_clock_reuse_t r = {0};
    uint64_t t0 = tl_clock_event(&r, false); /* nothing to reuse yet */
    ck_assert_uint_eq(r.left, TL_CLOCK_REUSE);
    bool reused = false;
    for (int tries = 0; tries < 100 && !reused; tries++) {
        uint64_t tick = tl_clock_tick();
        uint64_t a = tl_clock_event(&r, false), b = tl_clock_event(&r, false);
        ck_assert_uint_ge(a, t0);
        if (tick == tl_clock_tick()) {
            ck_assert_uint_eq(b, a); /* the same tick: b reused a */
            reused = true;
        }
    }
    ck_assert(reused);
    uint64_t fine = r.fine, tick = tl_clock_tick();
    while (tl_clock_tick() == tick) /* the next tick: 1-4 ms */
        ;
    uint64_t after_tick = tl_clock_event(&r, false);
    ck_assert_uint_gt(after_tick, fine); /* the tick moved: read again */
    uint64_t foreign = tl_clock_event(&r, true);
    ck_assert_uint_ge(foreign, after_tick);
    ck_assert_uint_eq(r.left, TL_CLOCK_REUSE);
    /* At most TL_CLOCK_REUSE reuses in a row. */
    r.left = 1;
    r.tick = tl_clock_tick();
    uint64_t cheap = tl_clock_event(&r, false);
    if (r.tick == tl_clock_tick()) {
        ck_assert_uint_eq(cheap, r.fine);
        ck_assert_uint_eq(r.left, 0);
        tl_clock_event(&r, false);
        ck_assert_uint_eq(r.left, TL_CLOCK_REUSE); /* read again */
    }
}
END_TEST

static _Alignas(16) unsigned char heap_like[256];

/* The shadow byte keeps the state and the last writer's tag; a release or
 * a mark by the same tagged thread is not foreign, any other is. */
START_TEST(blocks_tags)
{
    void *p = heap_like + 64;
    tl_blocks_tag = 5;
    tl_blocks_mark(p);
    ck_assert(!tl_blocks_foreign); /* never a block start before */
    ck_assert_int_eq(tl_blocks_check(p, true), TL_BLOCK_LIVE);
    ck_assert(!tl_blocks_foreign); /* allocated by this thread */
    ck_assert_int_eq(tl_blocks_check(p, false), TL_BLOCK_FREED);
    tl_blocks_tag = 6;
    tl_blocks_mark(p);
    ck_assert(tl_blocks_foreign); /* freed by tag 5 */
    ck_assert_int_eq(tl_blocks_check(p, true), TL_BLOCK_LIVE);
    ck_assert(!tl_blocks_foreign);
    tl_blocks_mark(p);
    ck_assert(!tl_blocks_foreign);
    tl_blocks_tag = 0; /* untagged: always foreign */
    ck_assert_int_eq(tl_blocks_check(p, true), TL_BLOCK_LIVE);
    ck_assert(tl_blocks_foreign);
    tl_blocks_mark(p);
    ck_assert(tl_blocks_foreign);
    ck_assert_int_eq(tl_blocks_check((char *)p + 8, false), TL_BLOCK_MISALIGNED);
    ck_assert(tl_blocks_foreign);
}
END_TEST

static uint8_t taken_tag[3];
static void *take_tag(void *arg)
{
    tl_blocks_tag_take();
    taken_tag[(uintptr_t)arg] = tl_blocks_tag;
    if ((uintptr_t)arg == 0) tl_blocks_tag_give();
    return NULL;
}

START_TEST(blocks_tag_take_give)
{
    tl_blocks_tags_reset(); /* this thread has no tag: none taken */
    ck_assert_uint_eq(tl_blocks_tag, 0);
    pthread_t t;
    for (uintptr_t k = 0; k < 3; k++) {
        ck_assert_int_eq(pthread_create(&t, NULL, take_tag, (void *)k), 0);
        pthread_join(t, NULL);
    }
    ck_assert_uint_eq(taken_tag[0], 1);
    ck_assert_uint_eq(taken_tag[1], 1); /* given back by the first thread */
    ck_assert_uint_eq(taken_tag[2], 2);
    for (unsigned i = 0; i < TL_BLOCKS_TAGS + 2; i++) { /* 61 more, then none left */
        tl_blocks_tag = 0;
        tl_blocks_tag_take();
        ck_assert_uint_eq(tl_blocks_tag, i + 3 <= TL_BLOCKS_TAGS ? i + 3 : 0);
    }
    tl_blocks_tag = 7;
    tl_blocks_tags_reset(); /* a fork child: only 7 is taken */
    tl_blocks_tag = 0;
    tl_blocks_tag_take();
    ck_assert_uint_eq(tl_blocks_tag, 1);
}
END_TEST

/* An unwind reads the frames above its stack pointer unchecked when they
 * are on the thread's own stack, of known bounds; never those of another
 * stack (a signal's alternate stack, a coroutine's). */
START_TEST(trusted_top)
{
    tl_stack_buf_t *b = calloc(1, sizeof *b);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x2000), 0x2000); /* bounds not looked up */
    b->stack_lo = 0x1000;
    b->stack_hi = 0x9000;
    b->stack_state = -1; /* unknown */
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x2000), 0x2000);
    b->stack_state = 1;
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x1000), 0x9000);
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x8ff8), 0x9000);
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x9000), 0x9000); /* at the top: itself */
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0xfff), 0xfff);
    ck_assert_uint_eq(tl_stack_trusted_top(b, 0x10000), 0x10000);
    free(b);
    /* This thread, after captures that looked its stack up: its own stack
     * pointer is on it, a heap address is not. */
    tl_stack_unwind_init();
    uint64_t f[4][MAXF];
    for (unsigned i = 0; i < 4; i++)
        outer_a(f[i]);
    const tl_stack_buf_t *t = tl_stack_tbuf;
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->stack_state, 1);
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), heap = (uintptr_t)t;
    ck_assert_uint_eq(tl_stack_trusted_top(t, sp), t->stack_hi);
    ck_assert_uint_eq(tl_stack_trusted_top(t, heap), heap);
}
END_TEST

static Suite *make_ucache_suite(void)
{
    Suite *s = suite_create("ucache");
    TCase *ta = tcase_create("admit");
    tcase_add_test(ta, ucache_admit_default);
    suite_add_tcase(s, ta);
    TCase *tc = tcase_create("unwind");
    tcase_add_checked_fixture(tc, admit_second_miss, NULL);
    tcase_add_test(tc, ucache_hit);
    tcase_add_test(tc, ucache_changed_chain_is_a_miss);
    tcase_add_test(tc, ucache_eviction);
    tcase_add_test(tc, ucache_frame_pointer_proven);
    tcase_add_test(tc, ucache_frame_pointer_checked);
    tcase_add_test(tc, ucache_threads);
    tcase_add_test(tc, ucache_set_turns);
    tcase_add_test(tc, ucache_seen_shared);
    tcase_add_test(tc, trusted_top);
    suite_add_tcase(s, tc);
    TCase *tt = tcase_create("time");
    tcase_add_test(tt, clock_event_reuse);
    tcase_add_test(tt, blocks_tags);
    tcase_add_test(tt, blocks_tag_take_give);
    suite_add_tcase(s, tt);
    return s;
}

TL_CHECK_MAIN(make_ucache_suite)
