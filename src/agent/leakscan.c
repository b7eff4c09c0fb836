/* leakscan.c - classify the live blocks at exit as valgrind's memcheck
 * does (see leakscan.h), by a conservative scan of the process's roots.
 *
 * Runs once, in finish(), with the reentrancy guard held: its own memory comes from vm.c (left
 * out of the roots with the agent's other mappings), memory is read through process_vm_readv
 * (a page unmapped meanwhile is skipped, never a fault). No stdio. */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/leakscan.h"

#include <fcntl.h>
#include <setjmp.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/deadstacks.h"
#include "agent/endsig.h"
#include "agent/live.h"
#include "agent/vm.h"
/* --- mappings made through the interposed mmap --- */

#define MAPS_MAX 16384
static tl_vm_range_t map_slot[MAPS_MAX];
/* The program's mappings (the agent's own are vm.c's), tagged with the
 * return address of the code that made them. */
static tl_vm_ranges_t maps = {.slot = map_slot, .cap = MAPS_MAX};

/* A mapping of CPython's arena size (leakscan.h) is tagged so, beside its
 * caller: user-space addresses never have bit 63. */
#define TAG_PY_ARENA (UINT64_C(1) << 63)

void tl_leakscan_on_mmap(const void *addr, size_t len, uintptr_t caller)
{
    tl_vm_ranges_add(&maps, (uintptr_t)addr, len,
                     (uint64_t)caller | (len == TL_PY_ARENA_BYTES ? TAG_PY_ARENA : 0));
}

void tl_leakscan_on_munmap(const void *addr, size_t len)
{
    tl_vm_ranges_remove(&maps, (uintptr_t)addr, len);
}

bool tl_leakscan_has_mapping(const void *addr)
{
    uint64_t r[2], a = (uintptr_t)addr;
    return tl_vm_ranges_has(&maps, a, a + 1, NULL, NULL, r);
}

/* --- the live blocks, sorted by address --- */

typedef tl_leakscan_blk_t blk_t; /* state: st_* while classifying */

enum { ST_NONE = 0, ST_POSSIBLE = 1, ST_REACHABLE = 2, ST_INDIRECT = 3, ST_DEFINITE = 4 };

typedef struct scan {
    blk_t *b;
    size_t n, cap;
    uint32_t *work; /* blocks to scan */
    size_t nwork;
    uint64_t excl[2][2];   /* the agent's and jemalloc's module ranges */
    uint64_t dead[256][2]; /* ended threads' stacks (deadstacks.h) */
    size_t ndead;
    uint64_t root_bytes;
    size_t leader; /* the definitely lost block whose contents are being scanned */
    /* The filter a word passes before the binary search (most words are no
     * heap address): [lo, hi) spans every block; gran, when mapped, has the
     * bit of each 64 KiB granule a block overlaps (hashed, so a bit may
     * stand for others too: a false "maybe", never a false "no"). */
    uint64_t lo, hi;
    uint64_t *gran;
} scan_t;

#define GRAN_SHIFT 16 /* 64 KiB granules */
#define GRAN_LG    24 /* 2^24 bits: 2 MiB */

static size_t gran_bit(uint64_t g)
{
    return (size_t)((g * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - GRAN_LG));
}

/* The filter of the sorted blocks s->b[0, n) (gran mapped or NULL). */
static void filter_build(scan_t *s)
{
    s->lo = s->n ? s->b[0].ptr : 1;
    s->hi = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->b[i].end > s->hi) s->hi = s->b[i].end;
        if (!s->gran) continue;
        uint64_t g0 = s->b[i].ptr >> GRAN_SHIFT, g1 = (s->b[i].end - 1) >> GRAN_SHIFT;
        if (g1 - g0 >= (UINT64_C(1) << GRAN_LG)) { /* a block over 1 TiB: every bit */
            memset(s->gran, 0xff, (size_t)1 << (GRAN_LG - 3));
            continue;
        }
        for (uint64_t g = g0; g <= g1; g++) {
            size_t k = gran_bit(g);
            s->gran[k >> 6] |= UINT64_C(1) << (k & 63);
        }
    }
}

static void *map_anon(size_t bytes)
{
    void *p;
    return tl_vm_map_anon(&p, bytes, false) ? NULL : p;
}

static void collect(void *ctx, const tl_live_entry_t *e)
{
    scan_t *s = ctx;
    if (s->n == s->cap) return;
    s->b[s->n++] = (blk_t){e->ptr, e->ptr + (e->size ? e->size : 1), ST_NONE};
}

static void sort_blocks(blk_t *a, size_t n)
{
    /* heap sort: no malloc, no recursion */
    for (size_t k = n / 2; k-- > 0;)
        for (size_t i = k;;) {
            size_t c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && a[c + 1].ptr > a[c].ptr) c++;
            if (a[i].ptr >= a[c].ptr) break;
            blk_t t = a[i];
            a[i] = a[c];
            a[c] = t;
            i = c;
        }
    for (size_t m = n; m-- > 1;) {
        blk_t t = a[0];
        a[0] = a[m];
        a[m] = t;
        for (size_t i = 0;;) {
            size_t c = 2 * i + 1;
            if (c >= m) break;
            if (c + 1 < m && a[c + 1].ptr > a[c].ptr) c++;
            if (a[i].ptr >= a[c].ptr) break;
            t = a[i];
            a[i] = a[c];
            a[c] = t;
            i = c;
        }
    }
}

/* The block holding address w, or -1. */
static long find(const scan_t *s, uint64_t w)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->b[mid].ptr <= w)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0) return -1;
    const blk_t *b = &s->b[lo - 1];
    return w < b->end ? (long)(lo - 1) : -1;
}

/* A word w seen in memory: mark its block (from_lost: while finding what a
 * lost block holds) and queue it for its own contents. */
static void saw(scan_t *s, uint64_t w, bool from_lost)
{
    if (w < s->lo || w >= s->hi) return;
    if (s->gran) {
        size_t k = gran_bit(w >> GRAN_SHIFT);
        if (!(s->gran[k >> 6] >> (k & 63) & 1)) return;
    }
    long i = find(s, w);
    if (i < 0) return;
    blk_t *b = &s->b[i];
    uint8_t old = b->state, st;
    if (from_lost) /* an earlier leader found from another lost block is indirect too */
        st = old == ST_NONE || (old == ST_DEFINITE && (size_t)i != s->leader) ? ST_INDIRECT : old;
    else
        st = w == b->ptr ? ST_REACHABLE : (old == ST_REACHABLE ? ST_REACHABLE : ST_POSSIBLE);
    if (st == old) return;
    b->state = st;
    if (old == ST_NONE) s->work[s->nwork++] = (uint32_t)i; /* each block queued once */
}

static uint8_t buf[1 << 16];

/* A word read as the first two digits of a CPython int (ob_digit: 30-bit
 * digits in uint32_t, least significant first, at offset 24 of the object,
 * so 8-aligned: Include/cpython/longintrepr.h of 3.10 to 3.13), or 0. Python
 * code keeps addresses of native objects as ints (torch's StorageWeakRef.cdata
 * in torch.multiprocessing's shared_cache holds a weak reference to each
 * StorageImpl a DataLoader batch passed through shared memory; ctypes
 * addresses; id()): such a block is reachable though no word holds its
 * address. Words with a digit of 2^30 or more are not ints' digits. */
static uint64_t py_int_digits(uint64_t w)
{
    uint64_t lo = w & UINT64_C(0xffffffff), hi = w >> 32;
    if (!hi || lo >> 30 || hi >> 30) return 0;
    return lo | hi << 30;
}

/* The words of at[0, n) (n a multiple of 8), each as saw's. */
static void scan_words(scan_t *s, const uint8_t *at, size_t n, bool from_lost)
{
    for (size_t k = 0; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, at + k, 8);
        saw(s, w, from_lost);
        uint64_t d = py_int_digits(w);
        if (d) saw(s, d, from_lost);
    }
}

/* Scan [lo, hi) word by word, read through process_vm_readv. */
static void scan_range(scan_t *s, uint64_t lo, uint64_t hi, bool from_lost)
{
    lo = (lo + 7) & ~UINT64_C(7);
    while (lo + 8 <= hi) {
        size_t n = hi - lo > sizeof buf ? sizeof buf : (size_t)(hi - lo);
        struct iovec l = {buf, n}, r = {(void *)(uintptr_t)lo, n};
        ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
        if (got <= 0) { /* unreadable: skip to the next page */
            lo = (lo + 4096) & ~UINT64_C(4095);
            continue;
        }
        scan_words(s, buf, (size_t)got & ~(size_t)7, from_lost);
        lo += (uint64_t)got & ~UINT64_C(7);
    }
}

/* Queued blocks read together: one process_vm_readv for up to BATCH of
 * them (a torch script's ~400,000 live blocks at its end are mostly small:
 * one call each took ~0.8 s of a 300-step MLP's check). */
#define BATCH 256
static struct iovec batch_iov[BATCH];
static uint32_t batch_blk[BATCH];

/* Pops queued blocks into the batch while their words fit in buf: their
 * count (0: the next one does not fit alone). */
static size_t batch_take(scan_t *s, size_t *bytes)
{
    size_t k = 0;
    *bytes = 0;
    while (s->nwork && k < BATCH) {
        const blk_t *b = &s->b[s->work[s->nwork - 1]];
        uint64_t lo = (b->ptr + 7) & ~UINT64_C(7);
        uint64_t len = b->end >= lo + 8 ? (b->end - lo) & ~UINT64_C(7) : 0;
        if (len > sizeof buf - *bytes) break;
        batch_iov[k] = (struct iovec){(void *)(uintptr_t)lo, (size_t)len};
        batch_blk[k++] = s->work[--s->nwork];
        *bytes += (size_t)len;
    }
    return k;
}

/* Scans the queued blocks until none is left. Order does not matter: a
 * block's state only rises and each block is queued once (saw). */
static void drain(scan_t *s, bool from_lost)
{
    while (s->nwork) {
        size_t bytes, k = batch_take(s, &bytes);
        if (k == 0) { /* bigger than buf: on its own */
            const blk_t *b = &s->b[s->work[--s->nwork]];
            scan_range(s, b->ptr, b->end, from_lost);
            continue;
        }
        struct iovec l = {buf, bytes};
        ssize_t got = bytes ? process_vm_readv(getpid(), &l, 1, batch_iov, k, 0) : 0;
        size_t done = got > 0 ? (size_t)got : 0, at = 0, i = 0;
        /* The blocks read whole; a short read stops at an unreadable one. */
        for (; i < k && at + batch_iov[i].iov_len <= done; i++)
            at += batch_iov[i].iov_len;
        scan_words(s, buf, at, from_lost); /* buf is free again after this */
        for (; i < k; i++) {
            const blk_t *b = &s->b[batch_blk[i]];
            scan_range(s, b->ptr, b->end, from_lost);
        }
    }
}

/* After the roots: what is reached from them, then the unreached blocks
 * in address order: each one is definitely lost until another lost block
 * is found to hold it (memcheck's cliques); what it holds, unreached, is
 * indirectly lost. Leaves each block's TL_LEAK_* in its state. */
static void classify_rest(scan_t *s)
{
    drain(s, false);
    for (size_t i = 0; i < s->n; i++) {
        if (s->b[i].state != ST_NONE) continue;
        s->b[i].state = ST_DEFINITE; /* until another lost block is found to hold it */
        s->leader = i;
        scan_range(s, s->b[i].ptr, s->b[i].end, true);
        drain(s, true);
    }
    for (size_t i = 0; i < s->n; i++) {
        uint8_t st = s->b[i].state;
        s->b[i].state = st == ST_DEFINITE   ? TL_LEAK_DEFINITE
                        : st == ST_INDIRECT ? TL_LEAK_INDIRECT
                        : st == ST_POSSIBLE ? TL_LEAK_POSSIBLE
                                            : TL_LEAK_REACHABLE;
    }
}

void tl_leakscan_classify(tl_leakscan_blk_t *b, size_t n, uint32_t *work,
                          const uint64_t (*roots)[2], size_t nroots)
{
    scan_t s = {.b = b, .n = n, .cap = n, .work = work};
    for (size_t i = 0; i < n; i++)
        b[i].state = ST_NONE;
    filter_build(&s); /* [lo, hi) only: no granule map */
    for (size_t i = 0; i < nroots; i++)
        scan_range(&s, roots[i][0], roots[i][1], false);
    classify_rest(&s);
}

/* Was a mapping made by code of the agent's or jemalloc's module (caller:
 * the return address into it)? */
static bool made_by_us(void *ctx, uint64_t c)
{
    const scan_t *s = ctx;
    c &= ~TAG_PY_ARENA;
    return (c >= s->excl[0][0] && c < s->excl[0][1]) || (c >= s->excl[1][0] && c < s->excl[1][1]);
}

int tl_leakscan_py_pool(const uint8_t *pool, uint64_t addr, uint64_t live[16], unsigned *size)
{
    enum { OVERHEAD = TL_PY_POOL_HEADER, CLASSES = 32 }; /* 512 B / 16 B */
    uint32_t count, szidx, next, maxnext;
    uint64_t x;
    memcpy(&count, pool, 4); /* ref.count: the union's low half (x86-64) */
    memcpy(&x, pool + 8, 8); /* freeblock */
    memcpy(&szidx, pool + 36, 4);
    memcpy(&next, pool + 40, 4);
    memcpy(&maxnext, pool + 44, 4);
    if (szidx >= CLASSES) return -1;
    uint32_t sz = (szidx + 1) * 16;
    if (maxnext != TL_PY_POOL_BYTES - sz || next < OVERHEAD || next > TL_PY_POOL_BYTES ||
        (next - OVERHEAD) % sz)
        return -1;
    uint32_t carved = (next - OVERHEAD) / sz, nfree = 0;
    if (count > carved) return -1;
    for (uint32_t w = 0; w < 16; w++)
        live[w] = carved >= (w + 1) * 64 ? ~UINT64_C(0)
                  : carved > w * 64      ? (UINT64_C(1) << (carved - w * 64)) - 1
                                         : 0;
    /* the free list: each free block's first word is the next one */
    for (; x; memcpy(&x, pool + (x - addr), 8)) {
        if (x < addr + OVERHEAD || x >= addr + next || (x - addr - OVERHEAD) % sz) return -1;
        uint64_t i = (x - addr - OVERHEAD) / sz;
        if (!(live[i >> 6] >> (i & 63) & 1)) return -1; /* listed twice: a loop */
        live[i >> 6] &= ~(UINT64_C(1) << (i & 63));
        nfree++;
    }
    if (carved - nfree != count) return -1;
    *size = sz;
    return (int)carved;
}

/* One pool of an arena: its allocated blocks, read in one call; the whole
 * pool when its bytes are not a pool as obmalloc leaves one (another
 * allocator's 1 MiB mapping, a header being changed by another thread). */
static void scan_py_pool(scan_t *s, uint64_t p)
{
    struct iovec l = {buf, TL_PY_POOL_BYTES}, r = {(void *)(uintptr_t)p, TL_PY_POOL_BYTES};
    if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != TL_PY_POOL_BYTES) {
        scan_range(s, p, p + TL_PY_POOL_BYTES, false);
        return;
    }
    uint64_t live[16];
    unsigned size = 0;
    int n = tl_leakscan_py_pool(buf, p, live, &size);
    if (n < 0) {
        scan_words(s, buf, TL_PY_POOL_BYTES, false);
        return;
    }
    for (int i = 0; i < n; i++)
        if (live[i >> 6] >> (i & 63) & 1)
            scan_words(s, buf + TL_PY_POOL_HEADER + (size_t)i * size, size, false);
}

/* [lo, hi) of a CPython arena: its pools block by block, what is not in a
 * whole pool word by word. */
static void scan_py_arena(scan_t *s, uint64_t lo, uint64_t hi)
{
    const uint64_t pool = TL_PY_POOL_BYTES;
    uint64_t p = (lo + pool - 1) & ~(pool - 1);
    if (p > lo) scan_range(s, lo, p < hi ? p : hi, false);
    for (; p + pool <= hi; p += pool)
        scan_py_pool(s, p);
    if (p < hi) scan_range(s, p, hi, false);
}

static bool py_arena(void *ctx, uint64_t tag)
{
    (void)ctx;
    return tag & TAG_PY_ARENA;
}

/* A root range less the excluded ones (the agent's and jemalloc's modules
 * and mappings). */
static void scan_root(scan_t *s, uint64_t lo, uint64_t hi)
{
    for (int k = 0; k < 2; k++)
        if (s->excl[k][0] < hi && s->excl[k][1] > lo) {
            if (s->excl[k][0] > lo) scan_root(s, lo, s->excl[k][0]);
            if (s->excl[k][1] < hi) scan_root(s, s->excl[k][1], hi);
            return;
        }
    for (size_t k = 0; k < s->ndead; k++)
        if (s->dead[k][0] < hi && s->dead[k][1] > lo) {
            if (s->dead[k][0] > lo) scan_root(s, lo, s->dead[k][0]);
            if (s->dead[k][1] < hi) scan_root(s, s->dead[k][1], hi);
            return;
        }
    uint64_t r[2];
    if (tl_vm_is_own(lo, hi, r) || tl_vm_ranges_has(&maps, lo, hi, made_by_us, s, r)) {
        if (r[0] > lo) scan_root(s, lo, r[0]);
        if (r[1] < hi) scan_root(s, r[1], hi);
        return;
    }
    if (tl_vm_ranges_has(&maps, lo, hi, py_arena, NULL, r)) {
        uint64_t a = r[0] > lo ? r[0] : lo, b = r[1] < hi ? r[1] : hi;
        if (a > lo) scan_root(s, lo, a);
        s->root_bytes += b - a;
        scan_py_arena(s, a, b);
        if (b < hi) scan_root(s, b, hi);
        return;
    }
    s->root_bytes += hi - lo;
    scan_range(s, lo, hi, false);
}

static uint64_t hex(const char **p)
{
    uint64_t v = 0;
    for (;; (*p)++) {
        char c = **p;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16;
        if (d == 16) return v;
        v = v * 16 + d;
    }
}

/* Roots from /proc/self/maps: every private writable mapping (modules' data
 * and bss, thread stacks with their TLS, the interpreter's own arenas), the
 * current thread's stack from sp only. */
static void scan_roots(scan_t *s, uint64_t sp, char *text, size_t cap)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    size_t len = 0;
    for (ssize_t r; len < cap - 1 && (r = read(fd, text + len, cap - 1 - len)) > 0;)
        len += (size_t)r;
    close(fd);
    text[len] = 0;
    for (const char *p = text; *p;) {
        const char *line = p;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
        uint64_t lo = hex(&line);
        if (*line++ != '-') continue;
        uint64_t hi = hex(&line);
        if (line[0] != ' ' || line[1] != 'r' || line[2] != 'w' || line[4] != 'p') continue;
        /* file-backed data segments are modules' data: roots too */
        const char *br = memchr(line, '[', (size_t)(p - line));
        if (br && (!strncmp(br, "[vvar]", 6) || !strncmp(br, "[vdso]", 6) ||
                   !strncmp(br, "[vsyscall]", 10)))
            continue;
        if (sp < lo || sp >= hi) {
            scan_root(s, lo, hi);
            continue;
        }
        /* this thread's stack from sp, but for its signal frames' dead parts */
        uint64_t dead[30][2];
        lo = sp & ~UINT64_C(7);
        size_t n = tl_endsig_dead_ranges(lo, hi, dead, sizeof dead / sizeof dead[0]);
        for (size_t i = 0; i < n; lo = dead[i++][1])
            if (dead[i][0] > lo) scan_root(s, lo, dead[i][0]);
        scan_root(s, lo, hi);
    }
}

/* The environment's array of pointers, a root of its own: the agent's
 * variables at its start (env.h, tl_env_put: TENSORLEAK_EXEC_SEQ,
 * PYTHONPATH) may put it in a mapping of the agent's, not a heap block, so
 * never read; a string the program then putenv()s in place of a variable
 * would be definitely lost. Read a word at a time (at most 2^20 of them,
 * to the NULL that ends it): environ may point anywhere. */
static void scan_environ(scan_t *s)
{
    extern char **environ;
    uint64_t lo = (uintptr_t)environ, hi = lo;
    if (!lo || lo & 7) return;
    for (size_t n = 0; n < ((size_t)1 << 20); n++) {
        uint64_t w;
        struct iovec l = {&w, 8}, r = {(void *)(uintptr_t)hi, 8};
        if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 8) break;
        hi += 8;
        if (!w) break;
    }
    s->root_bytes += hi - lo;
    scan_range(s, lo, hi, false);
}

/* A block a fork child's parent allocated before the fork (live.h), still
 * live: a root, never classified (the parent's, not the child's). */
static void scan_inherited(void *ctx, const tl_live_entry_t *e)
{
    scan_t *s = ctx;
    s->root_bytes += e->size;
    scan_range(s, e->ptr, e->ptr + e->size, false);
}

/* Where the scan reads this thread's stack from: where a fatal signal
 * interrupted it (endsig.h, within 1 MiB above; its registers a root), or sp. */
static uint64_t stack_from(scan_t *s, uint64_t sp)
{
    const uint64_t *regs = NULL;
    size_t n = 0;
    uint64_t isp = tl_endsig_interrupted(&regs, &n);
    if (!isp || isp <= sp || isp - sp > ((uint64_t)1 << 20)) return sp;
    s->root_bytes += n * 8;
    scan_range(s, (uintptr_t)regs, (uintptr_t)(regs + n), false);
    return isp;
}

/* The scan proper, below the caller's frame that holds the registers. */
__attribute__((noinline)) static bool run(const uintptr_t excl[2][2], tl_leakscan_emit_fn emit,
                                          void *ctx, tl_leakscan_stats_t *st, uint64_t sp)
{
    memset(st, 0, sizeof *st);
    static scan_t s; /* 4 KiB of dead ranges: not on the stack; one scan */
    memset(&s, 0, sizeof s);
    s.ndead = tl_deadstacks_collect(s.dead, sizeof s.dead / sizeof s.dead[0]);
    uint64_t count = tl_live_count() + 1024;
    s.cap = count;
    s.b = map_anon(count * sizeof *s.b);
    s.work = map_anon(count * sizeof *s.work);
    enum { TEXT_CAP = 8 << 20, GRAN_BYTES = 1 << (GRAN_LG - 3) };
    char *text = map_anon(TEXT_CAP);
    s.gran = map_anon(GRAN_BYTES); /* none: the search alone, as slow as it was */
    if (!s.b || !s.work || !text) return true;
    for (int k = 0; k < 2; k++) {
        s.excl[k][0] = excl[k][0];
        s.excl[k][1] = excl[k][1];
    }
    tl_live_foreach(collect, &s);
    sort_blocks(s.b, s.n);
    /* One block per address: the table may hold an address twice when a
     * block was freed where the agent does not look (with its guard held)
     * and the address came back; the reader knows which one is live. */
    size_t m = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (m && s.b[m - 1].ptr == s.b[i].ptr) {
            if (s.b[i].end > s.b[m - 1].end) s.b[m - 1].end = s.b[i].end;
            continue;
        }
        s.b[m++] = s.b[i];
    }
    s.n = m;
    filter_build(&s);
    scan_roots(&s, stack_from(&s, sp), text, TEXT_CAP);
    scan_environ(&s);
    tl_live_inherited_foreach(scan_inherited, &s);
    st->root_bytes = s.root_bytes;
    classify_rest(&s);
    for (size_t i = 0; i < s.n; i++) {
        uint8_t k = s.b[i].state;
        if (k != TL_LEAK_REACHABLE) {
            st->lost_blocks++;
            emit(ctx, s.b[i].ptr, k);
        }
    }
    st->blocks = s.n;
    tl_vm_unmap(s.b, count * sizeof *s.b);
    tl_vm_unmap(s.work, count * sizeof *s.work);
    tl_vm_unmap(text, TEXT_CAP);
    if (s.gran) tl_vm_unmap(s.gran, GRAN_BYTES);
    return false;
}

bool tl_leakscan_run(const uintptr_t excl[2][2], tl_leakscan_emit_fn emit, void *ctx,
                     tl_leakscan_stats_t *st)
{
    /* The registers, as the caller left them, spilled into a jmp_buf on
     * this stack before the scan's own work (sorting block addresses) can
     * leave any in them; the stack is scanned from here up. Zeroed first:
     * setjmp leaves its signal mask (128 bytes) unwritten, and what was
     * there is stale: the slots of an earlier call at this depth, such as
     * a malloc hook's local holding the block it returned (a Python script
     * ending in sys.exit calls the agent through ctypes at the depth its
     * ctypes malloc call ran: its leak was "still reachable"). */
    jmp_buf regs;
    memset(&regs, 0, sizeof regs);
    setjmp(regs);
    __asm__ volatile("" ::"r"(&regs) : "memory");
    return run(excl, emit, ctx, st, (uintptr_t)&regs);
}
