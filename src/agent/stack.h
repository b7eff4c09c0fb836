/* stack.h - call stacks: capture with libunwind, intern into stack ids.
 *
 * The table maps XXH3-64 of a frame array to an id (1, 2, ...; 0 = no stack).
 * It is lock-free (open addressing in mmap'd memory, CAS on the hash), so any
 * thread may intern at any time; only tl_stack_table_reset needs the process
 * to be single-threaded (fork child). Two frame arrays with the same 64-bit
 * hash share an id: at 2^-64 per pair we accept that.
 */
#ifndef TL_AGENT_STACK_H
#define TL_AGENT_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"        /* TL_CONFIG_DEPTH_DEFAULT */
#include "agent/unwinder.h"      /* tl_unwinder_enter */
#include "common/trace_format.h" /* TL_REC_MAX_FRAMES */

#define TL_STACK_PROBES 64 /* probes before the table counts as full */

typedef struct tl_stack_slot {
    _Atomic uint64_t hash; /* 0 = empty */
    _Atomic uint64_t id;   /* 0 until the inserting thread publishes it */
} tl_stack_slot_t;

typedef struct tl_stack_table {
    tl_stack_slot_t *slots; /* mmap'd, 1 << lg_slots entries */
    size_t mask;
    _Atomic uint64_t next_id;    /* last id handed out */
    _Atomic uint64_t full_count; /* interns that found the table full */
} tl_stack_table_t;

/* Map a table of 1 << lg_slots slots. true = failure (mmap). */
bool tl_stack_table_init(tl_stack_table_t *t, unsigned lg_slots);
/* Forget every stack; ids restart at 1. Single-threaded only. */
void tl_stack_table_reset(tl_stack_table_t *t);
void tl_stack_table_destroy(tl_stack_table_t *t);

/* Id of frames[0..n). *is_new is set when the caller is the first to see it
 * (and must write its STACK record before any record using the id). When
 * the table is full, a fresh id is returned with *is_new set: the stack is
 * written again, never lost. n == 0 gives id 0. */
uint64_t tl_stack_intern(tl_stack_table_t *t, const uint64_t *frames, size_t n, bool *is_new);

/* Address ranges [lo, hi) whose leading frames tl_stack_capture drops (the
 * agent and libunwind themselves). Set once at init, before threads record. */
void tl_stack_skip_add(uintptr_t lo, uintptr_t hi);
void tl_stack_skip_clear(void);

/* Per-thread unwinder cache and the key that unmaps a thread's capture
 * buffers at its exit; call once at init. */
void tl_stack_unwind_init(void);

/* Return addresses of the caller's stack, innermost first, after dropping the
 * leading frames in skip ranges; at most depth (<= 1024). *frames points to
 * this thread's buffer (tl_stack_buf_t), valid until its next capture; 0
 * frames when the buffer cannot be mapped. May call malloc
 * (libunwind): call with the reentrancy guard raised. Returns the count. */
size_t tl_stack_capture(const uint64_t **frames, size_t depth);

/* tl_stack_capture for the hooks' hot path: always inlined, so that the
 * unwind starts in the interposed function itself and libunwind walks one
 * agent frame (the hook's) instead of the ~5 of the call chain down to
 * tl_stack_capture (~6 ns each here, BENCHMARKS.md). The hook's frame is
 * dropped by the same skip ranges. Same contract as tl_stack_capture. */
#define TL_STACK_SLACK 16 /* frames captured beyond depth to make up for dropped ones */

/* The per-thread unwind cache (stack.c, "unwind cache"): a capture that
 * starts at the same capture site, with the same return address and the
 * same CFA (stack pointer) as a stack seen before is answered from the
 * cache when the stack still holds every return address of the cached
 * chain at the address where libunwind found it; else libunwind walks as
 * before. Exact, not a guess: each frame's CFA is proven frame by frame
 * from the hook's CFA up. A frame of fixed size at its return address
 * follows from the frames further in; a frame with a frame pointer (its
 * CFA is rbp + 16; alloca or a VLA may vary its size) from its rbp, whose
 * value is checked where a frame further in saved it (the capturing
 * function keeps a frame pointer, so its caller's rbp is at cfa - 16).
 * Realigned frames (GCC's DRAP), signal frames and foreign stacks (not this
 * thread's: sigaltstack, coroutines) are never cached. A key is cached on
 * its TL_UCACHE_ADMIT-th miss. Used by tl_stack_capture_inline: the hooks in `all`
 * mode, and outside it C++ news recorded in full and CPU storages
 * (hooks_cxx.c). */
/* Chains of more raw frames are not cached. */
#define TL_UCACHE_FRAMES    (TL_CONFIG_DEPTH_DEFAULT + TL_STACK_SLACK)
#define TL_UCACHE_LG        11 /* 2048 entries: W3's news are ~600 stacks a step */
#define TL_UCACHE_WAYS_LG   3  /* 8 ways per set: an empty one filled first, else in turn */
#define TL_UCACHE_WAYS      (1u << TL_UCACHE_WAYS_LG)
#define TL_UCACHE_SEEN_LG   12 /* keys missed once (admission), */
#define TL_UCACHE_SEEN_WAYS 4u /* in sets of 4, the oldest out */
/* Misses of a key before its fill (a libunwind walk of every frame, ~3x a
 * capture): `import torch`'s stacks mostly come back a few times, a
 * training loop's every step. At the 4th miss rather than the 2nd, torch
 * 2.13's import in `all` mode took 5.2 s instead of 6.9 s (plain 1.3 s),
 * W3's 1000-step loop the same 0.55 s (BENCHMARKS.md). At the 8th rather
 * than the 4th, the 300-step W3 `all` recording (check --max-leak's) made
 * 91k fills instead of 205k and took 7.45 s instead of 8.32 s (medians of
 * 3 alternating runs); the 1000-step loop in the default mode was not
 * slower (0.62 s against 0.70 s). The count lives in the key's low 4 bits
 * (TL_UCACHE_COUNT_MASK). A key evicted from the cache is filled again
 * after as many misses. */
#define TL_UCACHE_ADMIT      8u
#define TL_UCACHE_COUNT_MASK UINT64_C(15)
/* The misses before a fill now: TL_UCACHE_ADMIT, or 2 to 16 as a unit
 * test sets it before any capture. */
extern unsigned tl_ucache_admit;
#define TL_UCACHE_RBP 16 /* frame-pointer frames per chain, at most */

typedef struct tl_ucache_entry {
    uint64_t site, ra, cfa; /* key; site 0 = empty */
    uint64_t gen;           /* tl_stack_gen when stack_id was taken; 0 = none */
    uint64_t native_hash;   /* XXH3-64 of the frames returned (record.c's merged ids) */
    uint64_t stack_id;      /* the native-only stack's id (record.c) */
    uint32_t depth;         /* the capture's depth */
    uint16_t first, k;      /* the frames returned: raw + first, k of them */
    uint16_t nslots;        /* raw[2 .. 2 + nslots) checked at cfa + slot[i] */
    uint16_t nrbp;          /* rbp_val[i] checked at cfa + rbp_off[i] */
    uint64_t raw[TL_UCACHE_FRAMES];
    uint32_t slot[TL_UCACHE_FRAMES];
    /* The frame pointers of the chain's frames that keep one: where each
     * one's rbp is saved (by a frame further in) and its value. */
    int32_t rbp_off[TL_UCACHE_RBP];
    uint64_t rbp_val[TL_UCACHE_RBP];
} tl_ucache_entry_t;

/* A thread's capture buffers: in their own mapping, made on the thread's
 * first capture and unmapped at its exit (a pthread key), never in the
 * static TLS block or on the program's stack: a thread created with a
 * 16 KiB stack has its TLS carved out of those 16 KiB. */
#define TL_STACK_PY_SCRATCH   6144
#define TL_STACK_PY_KEY_WORDS 256 /* tl_pyframes_key: 64 frames at least */
#define TL_STACK_MERGED_LG    11  /* record.c's merged stack ids: 2048 slots, */
#define TL_STACK_MERGED_WAYS  8u  /* in sets of 8 (one cache line of keys), the oldest out */
typedef struct tl_merged_val {
    uint64_t id, gen; /* gen: tl_stack_gen of id */
} tl_merged_val_t;
/* The last stack a thread wrote, the base of its next STACK_DELTA record
 * (stackdelta.h). Valid while gen is tl_stack_gen (the trace's ids) and id
 * is not 0. */
typedef struct tl_stack_last {
    uint64_t gen, id;
    uint32_t n;     /* frames[0, n) */
    uint32_t depth; /* STACK_DELTA records between it and a full STACK: 0 = full */
    uint64_t frames[TL_REC_MAX_FRAMES];
} tl_stack_last_t;
typedef struct tl_stack_buf {
    void *raw[TL_REC_MAX_FRAMES + TL_STACK_SLACK]; /* unw_backtrace's output */
    uint64_t merged[TL_REC_MAX_FRAMES];            /* native + Python frames (record.c) */
    /* tl_pyframes_merge's work area (its frame ids, groups, names). */
    _Alignas(8) unsigned char py_scratch[TL_STACK_PY_SCRATCH];
    uint64_t py_key[TL_STACK_PY_KEY_WORDS]; /* tl_pyframes_key's work area */
    /* The merged stack's id of a cached native chain (its native_hash)
     * under Python frames of one key (tl_pyframes_key): the key (0 =
     * empty) and its id, set-associative. */
    _Alignas(64) uint64_t merged_key[1u << TL_STACK_MERGED_LG];
    tl_merged_val_t merged_val[1u << TL_STACK_MERGED_LG];
    /* The unwind cache. hit: the entry of the last capture's frames (a hit
     * or the entry just filled), NULL when they are not in the cache. */
    tl_ucache_entry_t *hit;
    uintptr_t stack_lo, stack_hi; /* this thread's stack; 0/0 = unknown (no cache) */
    int stack_state;              /* 0 bounds not looked up yet, 1 known, -1 unknown */
    uint64_t hits, fills;         /* counts, for tests */
    uint64_t seen[1u << TL_UCACHE_SEEN_LG];
    /* Each entry's key hash (tl_ucache_hash; 0 while empty): a set's
     * tags share one cache line, so a lookup reads one entry only. */
    _Alignas(64) uint64_t tag[1u << TL_UCACHE_LG];
    uint8_t victim[(1u << TL_UCACHE_LG) / TL_UCACHE_WAYS]; /* each full set's way filled next */
    tl_ucache_entry_t cache[1u << TL_UCACHE_LG];
    tl_stack_last_t last; /* stackdelta.c's */
} tl_stack_buf_t;
extern __thread tl_stack_buf_t *tl_stack_tbuf __attribute__((tls_model("initial-exec")));
/* This thread's buffers, mapped on first use; NULL when mmap failed. */
tl_stack_buf_t *tl_stack_buf_get(void);

/* Bumped by tl_stack_table_reset: cached stack ids of an older table are stale. */
extern _Atomic uint64_t tl_stack_gen;

int unw_backtrace(void **buffer, int size); /* libunwind.h, without its macros here */
/* Drop the leading skipped frames of b->raw[0..n) (n from unw_backtrace). */
size_t tl_stack_trim(const tl_stack_buf_t *b, const uint64_t **frames, int n, size_t depth);
/* During an unwind, the top of the memory it reads without a check
 * (stack.c, access_mem): from the unwinder's own stack pointer up to here
 * is this thread's live stack. */
extern __thread uintptr_t tl_stack_unwind_sp __attribute__((tls_model("initial-exec")));

/* tl_stack_unwind_sp for an unwind by a function whose stack pointer is sp:
 * the top of this thread's stack when its bounds are known (a capture that
 * missed the unwind cache looked them up) and sp lies on it, for every page
 * from sp up to there is mapped; else sp itself (a signal's alternate stack,
 * a coroutine's): then only the unwinder's own frames go unchecked. On the
 * main thread of a torch script in `all` mode, nearly all of ~210,000
 * checked reads (a system call each) were of its own stack's frames. */
static inline uintptr_t tl_stack_trusted_top(const tl_stack_buf_t *b, uintptr_t sp)
{
    return b->stack_state == 1 && sp >= b->stack_lo && sp < b->stack_hi ? b->stack_hi : sp;
}

static inline uint64_t tl_ucache_hash(uintptr_t site, uint64_t ra, uintptr_t cfa)
{
    uint64_t h = (site ^ ra) * UINT64_C(0x9e3779b97f4a7c15) ^ cfa;
    h ^= h >> 29;
    return h * UINT64_C(0xbf58476d1ce4e5b9);
}

/* The first entry of h's set of TL_UCACHE_WAYS. */
static inline size_t tl_ucache_set(uint64_t h)
{
    return (size_t)(h >> (64 - TL_UCACHE_LG + TL_UCACHE_WAYS_LG)) << TL_UCACHE_WAYS_LG;
}

/* The cache's answer for a capture at site (an address inside the
 * capturing function's inlined code) whose function has CFA cfa: the
 * frame count with *frames set, or SIZE_MAX (a miss). Sets b->hit.
 * Inline: it is most of a hook's capture in `all` mode. */
static inline __attribute__((always_inline)) size_t
tl_stack_cache_lookup(tl_stack_buf_t *b, uintptr_t site, uintptr_t cfa, size_t depth,
                      const uint64_t **frames)
{
    /* The capturing function's own return address slot: always readable. */
    uint64_t ra = *(const uint64_t *)(cfa - 8);
    uint64_t h = tl_ucache_hash(site, ra, cfa);
    size_t set = tl_ucache_set(h);
    b->hit = NULL;
    for (size_t w = 0; w < TL_UCACHE_WAYS; w++) {
        if (b->tag[set + w] != h) continue;
        tl_ucache_entry_t *e = &b->cache[set + w];
        if (e->site != site || e->ra != ra || e->cfa != cfa || e->depth != depth) continue;
        /* Each return address still in its slot (inside this thread's
         * stack, above cfa: checked when filled). */
        const uint32_t *o = e->slot, *end = o + e->nslots;
        const uint64_t *v = e->raw + 2;
        while (o != end && *(const uint64_t *)(cfa + *o) == *v) {
            o++;
            v++;
        }
        if (o != end) continue;
        /* Each frame pointer the same (saved in frames proven above). */
        const int32_t *r = e->rbp_off, *rend = r + e->nrbp;
        v = e->rbp_val;
        while (r != rend && *(const uint64_t *)(cfa + (intptr_t)*r) == *v) {
            r++;
            v++;
        }
        if (r != rend) continue;
        b->hit = e;
        b->hits++;
        *frames = e->raw + e->first;
        return e->k;
    }
    return SIZE_MAX;
}
/* After a miss and unw_backtrace's n raw frames (b->raw): admit the key
 * (second miss) by a checked walk of the same stack. Returns k unchanged. */
size_t tl_stack_cache_note(tl_stack_buf_t *b, uintptr_t site, uintptr_t cfa, size_t depth, int n,
                           const uint64_t *frames, size_t k);

/* The cache entry of frames when they are the last capture's answer from
 * the cache (or its new entry), else NULL; its stack id of table
 * generation gen (tl_stack_gen), for record.c. */
static inline tl_ucache_entry_t *tl_stack_cache_entry_of(const uint64_t *frames)
{
    tl_ucache_entry_t *e = tl_stack_tbuf ? tl_stack_tbuf->hit : NULL;
    return e && frames == e->raw + e->first ? e : NULL;
}
static inline void tl_stack_cache_set_id(tl_ucache_entry_t *e, uint64_t id, uint64_t gen)
{
    e->stack_id = id;
    e->gen = gen;
}

/* record.c's merged stack ids (tl_stack_buf_t.merged_key): the key of the
 * cached chain e under Python frames of key pk (tl_pyframes_key, non-zero);
 * never 0. */
static inline uint64_t tl_stack_merged_key(const tl_ucache_entry_t *e, uint64_t pk)
{
    uint64_t k = e->native_hash ^ pk * UINT64_C(0x9e3779b97f4a7c15);
    k ^= k >> 31;
    return k + !k;
}
/* The merged stack id kept under key, of table generation gen, into *id.
 * true = not found (*id untouched). */
static inline bool tl_stack_merged_get(const tl_stack_buf_t *b, uint64_t key, uint64_t gen,
                                       uint64_t *id)
{
    size_t set = key & ((1u << TL_STACK_MERGED_LG) - TL_STACK_MERGED_WAYS);
    for (size_t w = set; w < set + TL_STACK_MERGED_WAYS; w++) {
        if (b->merged_key[w] == key && b->merged_val[w].gen == gen) {
            *id = b->merged_val[w].id;
            return false;
        }
    }
    return true;
}
/* Keep id (of generation gen) under key: first in its set, whose oldest
 * goes. */
void tl_stack_merged_put(tl_stack_buf_t *b, uint64_t key, uint64_t id, uint64_t gen);

#define TL_STACK_SITE(out) __asm__ volatile("lea 0(%%rip), %0" : "=r"(out))

static inline __attribute__((always_inline)) size_t tl_stack_capture_inline(const uint64_t **frames,
                                                                            size_t depth)
{
    tl_stack_buf_t *b = tl_stack_tbuf;
    if (__builtin_expect(!b, 0) && !(b = tl_stack_buf_get())) {
        *frames = NULL;
        return 0;
    }
    if (depth > TL_REC_MAX_FRAMES) depth = TL_REC_MAX_FRAMES;
    uintptr_t site, cfa = (uintptr_t)__builtin_dwarf_cfa();
    /* A frame pointer in the capturing function: its prologue saves the
     * caller's rbp at cfa - 16 before anything else, which the cache's
     * check of a caller's frame pointer reads (stack.c, ucache_rbp). */
    __asm__ volatile("" : : "r"(__builtin_frame_address(0)));
    TL_STACK_SITE(site);
    size_t k = tl_stack_cache_lookup(b, site, cfa, depth, frames);
    if (__builtin_expect(k != SIZE_MAX, 1)) return k;
    uintptr_t sp;
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
    tl_stack_unwind_sp = tl_stack_trusted_top(b, sp);
    tl_unwinder_enter();
    int n = unw_backtrace(b->raw, (int)(depth + TL_STACK_SLACK));
    tl_unwinder_leave();
    k = tl_stack_trim(b, frames, n, depth);
    return tl_stack_cache_note(b, site, cfa, depth, n, *frames, k);
}

#endif /* TL_AGENT_STACK_H */
