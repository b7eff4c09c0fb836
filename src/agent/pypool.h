/* pypool.h - CPython's small-object pools as the leak scan (leakscan.h)
 * reads them: which blocks of a pool are allocated, and which words of a
 * block its object uses. obmalloc rounds each request up to 16 bytes
 * (3.10 to 3.13): a tuple of 4 (72 bytes with its GC head) gets 80, and
 * the last 8 keep what an earlier object there held; a str's unused state
 * bits, padding and last characters' word keep stale bytes too. Stale
 * interior addresses there made 1 to 4 of 10 blocks lost by a module body
 * "possibly lost" (not counted by --max-leak) on CPython 3.10, 3.11, 3.13. */
#ifndef TL_AGENT_PYPOOL_H
#define TL_AGENT_PYPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CPython's small-object allocator (Objects/obmalloc.c; 3.10 to 3.13,
 * 64-bit default builds, checked on each): arenas of 1 MiB, each its own
 * mmap, in pools of 16 KiB aligned to 16 KiB. A pool is a 48-byte header
 * (ref.count, freeblock, nextpool, prevpool, arenaindex, szidx, nextoffset,
 * maxnextoffset) and then blocks of (szidx + 1) * 16 bytes; the blocks
 * below nextoffset have been handed out, and those on the free list (from
 * freeblock, each free block's first word the next) were given back. A
 * given-back block keeps what its object held: the leak scan reads a
 * mapping of the arena size block by block, allocated blocks only (stale
 * words there made real leaks "still reachable" or "possibly lost"). */
#define TL_PY_ARENA_BYTES ((size_t)1 << 20)
#define TL_PY_POOL_BYTES  16384
#define TL_PY_POOL_HEADER 48 /* the pool header, rounded up to 16 */

/* Which blocks of a pool are allocated: pool is a copy of the
 * TL_PY_POOL_BYTES at address addr. Bit i of live[0, 16) set: the block
 * at pool + TL_PY_POOL_HEADER + i * *size. Returns the number of blocks handed out so
 * far, or -1 when the bytes are not a pool as obmalloc leaves one (the
 * header, the free list and the count of allocated blocks must agree; a
 * free list that leaves the pool or loops is refused). Pure. */
int tl_pypool_live(const uint8_t *pool, uint64_t addr, uint64_t live[16], unsigned *size);

/* Py_TPFLAGS_* of Include/object.h that the extent depends on. */
#define TL_PY_TPFLAGS_INLINE_VALUES    (UINT64_C(1) << 2)  /* 3.13: values after the object */
#define TL_PY_TPFLAGS_MANAGED_WEAKREF  (UINT64_C(1) << 3)  /* 3.12+: in the pre-header */
#define TL_PY_TPFLAGS_MANAGED_DICT     (UINT64_C(1) << 4)  /* 3.11+: in the pre-header */
#define TL_PY_TPFLAGS_HAVE_GC          (UINT64_C(1) << 14) /* a PyGC_Head (16 bytes) before it */
#define TL_PY_TPFLAGS_LONG_SUBCLASS    (UINT64_C(1) << 24) /* ob_size is not its length (3.12+) */
#define TL_PY_TPFLAGS_UNICODE_SUBCLASS (UINT64_C(1) << 28) /* characters past tp_basicsize */

/* What the extent needs of a type object: tp_basicsize, tp_itemsize,
 * tp_flags (offsets 32, 40 and 168 of PyTypeObject, 3.10 to 3.13). */
typedef struct tl_pytype {
    uint64_t basicsize, itemsize, flags;
} tl_pytype_t;

/* The type object at address type, or NULL when it is not one (the
 * caller's reader: it checks that its own type is PyType_Type, or a
 * metatype's is). */
typedef const tl_pytype_t *(*tl_pytype_fn)(uint64_t type, void *ctx);

/* The words of blk[0, size) (a copy of an allocated pool block, size a
 * multiple of 16, at most 512) the leak scan reads, as a mask (bit i: the
 * word at 8 * i). An object at offset 0 (no GC head), 16 (a GC head) or 32
 * (3.11+'s pre-header too), taken as one only when its type says so, its
 * refcount is 1 to 2^22 (below any address: a block of pointers is not
 * taken for one) or an immortal one's (3.12+: 2^31 to 2^32 - 1) and lookup knows its type, gives
 * the words wholly inside its pre-header, GC head and tp_basicsize + tp_itemsize * |ob_size|
 * (which, rounded up to 8 as CPython's _PyObject_VAR_SIZE does, must end
 * less than 16 bytes before the block: else it is not this block's); a
 * compact str (3.10 to 3.13 of CPython minor version minor) its type,
 * wstr and utf8 words. Anything else (no object, an int, 3.13's inline
 * values) is read whole. Pure. */
uint64_t tl_pypool_scan_words(const uint8_t *blk, unsigned size, unsigned minor,
                              tl_pytype_fn lookup, void *ctx);

/* Finds this process's CPython (pyframes.h: a 3.10 to 3.13 whose frames
 * are read, its minor version in *minor, else 0) and PyType_Type (dlsym)
 * for tl_pypool_type: true when both are there and PyType_Type is its own
 * type at offset 8. Empties the cache. Not thread-safe: the leak scan's,
 * once. */
bool tl_pypool_begin(unsigned *minor);

/* A tl_pytype_fn reading this process's memory (process_vm_readv: an
 * unmapped address is no type, never a fault) through a cache of 4096
 * types, ctx unused. Only after tl_pypool_begin returned true. */
const tl_pytype_t *tl_pypool_type(uint64_t type, void *ctx);

#endif /* TL_AGENT_PYPOOL_H */
