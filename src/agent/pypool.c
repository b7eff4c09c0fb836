/* pypool.c - CPython's small-object pools as the leak scan reads them
 * (pypool.h): allocated blocks, and the words of each its object uses. */
#include <config.h> /* autoconf first: _GNU_SOURCE (process_vm_readv, RTLD_DEFAULT) */

#include "agent/pypool.h"

#include "agent/pyframes.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int tl_pypool_live(const uint8_t *pool, uint64_t addr, uint64_t live[16], unsigned *size)
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

static uint64_t word(const uint8_t *blk, unsigned at)
{
    uint64_t w;
    memcpy(&w, blk + at, 8);
    return w;
}

/* The words of a str at blk that may hold an address (Include/cpython/
 * unicodeobject.h): its type, and wstr (3.10, 3.11) and utf8 (a non-ASCII
 * one), when it is compact (its characters in the block); else every one.
 * Its state's unused bits and padding keep stale bytes, as its characters'
 * last word does. */
static uint64_t str_words(const uint8_t *blk, uint64_t all, unsigned minor)
{
    uint32_t state;
    memcpy(&state, blk + 32, 4);
    if (!(state >> 5 & 1)) return all; /* not compact: a str subclass's data pointer */
    bool ascii = state >> 6 & 1;
    uint64_t m = UINT64_C(1) << 1;
    if (minor <= 11)
        m |= (UINT64_C(1) << 5) | (ascii ? 0 : UINT64_C(1) << 7);
    else if (!ascii)
        m |= UINT64_C(1) << 6;
    return m & all;
}

uint64_t tl_pypool_scan_words(const uint8_t *blk, unsigned size, unsigned minor,
                              tl_pytype_fn lookup, void *ctx)
{
    static const uint64_t skip = TL_PY_TPFLAGS_INLINE_VALUES | TL_PY_TPFLAGS_LONG_SUBCLASS,
                          pre = TL_PY_TPFLAGS_MANAGED_DICT | TL_PY_TPFLAGS_MANAGED_WEAKREF;
    uint64_t all = size >= 512 ? ~UINT64_C(0) : (UINT64_C(1) << (size / 8)) - 1;
    for (unsigned at = 0; at <= 32 && at + 24 <= size; at += 16) {
        uint64_t refcnt = word(blk, at);
        /* 3.12+'s immortal objects: 2^31 to 2^32 - 1 */
        if (refcnt == 0 || (refcnt >= (UINT64_C(1) << 22) && refcnt >> 31 != 1)) continue;
        const tl_pytype_t *t = lookup(word(blk, at + 8), ctx);
        if (!t) continue;
        unsigned want = (t->flags & TL_PY_TPFLAGS_HAVE_GC ? 16 : 0) + (t->flags & pre ? 16 : 0);
        if (want != at || t->flags & skip) continue;
        if (t->flags & TL_PY_TPFLAGS_UNICODE_SUBCLASS)
            return at || size < 40 ? all : str_words(blk, all, minor);
        int64_t n = (int64_t)word(blk, at + 16);
        uint64_t items = !t->itemsize ? 0 : n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
        if (t->itemsize && items > size) return all;
        uint64_t end = at + t->basicsize + t->itemsize * items; /* bytes it uses */
        /* a block of another size class: not this object's */
        if (((end + 7) & ~UINT64_C(7)) > size || size - ((end + 7) & ~UINT64_C(7)) >= 16)
            return all;
        return end >= 512 ? all : ((UINT64_C(1) << (end / 8)) - 1) & all;
    }
    return all;
}

/* PyTypeObject's fields read (Include/cpython/object.h, 3.10 to 3.13). */
enum { OB_TYPE = 8, TP_BASICSIZE = 32, TP_ITEMSIZE = 40, TP_FLAGS = 168, TYPE_READ = 176 };

#define CACHE 4096
static struct {
    uint64_t addr; /* 0: empty */
    bool is_type;
    tl_pytype_t t;
} cache[CACHE];
static uint64_t type_type;

static bool read_at(uint64_t addr, void *to, size_t n)
{
    struct iovec l = {to, n}, r = {(void *)(uintptr_t)addr, n};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n;
}

bool tl_pypool_begin(unsigned *minor)
{
    memset(cache, 0, sizeof cache);
    const tl_pyframes_cpython_t *py = tl_pyframes_cpython();
    *minor = py && py->supported ? (unsigned)atoi(py->version + 2) : 0;
    if (!*minor) return false;
    uint64_t self = 0;
    type_type = (uintptr_t)dlsym(RTLD_DEFAULT, "PyType_Type");
    if (!type_type || !read_at(type_type + OB_TYPE, &self, 8) || self != type_type) type_type = 0;
    return type_type != 0;
}

const tl_pytype_t *tl_pypool_type(uint64_t type, void *ctx)
{
    (void)ctx;
    if (!type_type || !type || type & 7) return NULL;
    size_t k = (size_t)((type * UINT64_C(0x9E3779B97F4A7C15)) >> 52) % CACHE;
    if (cache[k].addr != type) {
        uint8_t b[TYPE_READ];
        uint64_t meta = 0, metameta = 0;
        bool ok = read_at(type, b, sizeof b);
        if (ok) memcpy(&meta, b + OB_TYPE, 8);
        /* its type is PyType_Type, or a metaclass whose type is */
        ok = ok && (meta == type_type ||
                    (meta && read_at(meta + OB_TYPE, &metameta, 8) && metameta == type_type));
        cache[k].addr = type;
        cache[k].is_type = ok;
        if (ok) {
            memcpy(&cache[k].t.basicsize, b + TP_BASICSIZE, 8);
            memcpy(&cache[k].t.itemsize, b + TP_ITEMSIZE, 8);
            memcpy(&cache[k].t.flags, b + TP_FLAGS, 8);
        }
    }
    return cache[k].is_type ? &cache[k].t : NULL;
}
