/* hooks.h - what the interposed entry points share (hooks.c: the malloc
 * family; hooks_cxx.c: operator new/delete and the c10 storage hooks;
 * hooks_proc.c: exit, exec, signals, mmap; hooks_cuda.c: libcudart).
 *
 * Only those files include it. The helpers are static inline, and
 * tracked_alloc always inlined, so each hook keeps its own frame as the
 * first one libunwind sees (stack.h) and no call is added to a hot path.
 * Every hook checks the thread-local reentrancy guard first; nested calls
 * (libunwind, libc, our own code) and calls before init or after finishing
 * go straight to jemalloc's extended API, untracked.
 */
#ifndef TL_AGENT_HOOKS_H
#define TL_AGENT_HOOKS_H

#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/blocks.h"
#include "agent/heapinfo.h"
#include "agent/pyframes.h"
#include "agent/record.h"
#include "agent/stack.h"
#include "agent/tsd.h"
#include "common/trace_format.h"

#define TL_EXPORT   __attribute__((visibility("default")))
#define MIN_ALIGN   16u /* glibc's MALLOC_ALIGNMENT on x86-64: malloc results are 16-aligned */
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Requests above this many bytes fail with ENOMEM. glibc serves big blocks
 * with mmap, which the kernel's default overcommit heuristic
 * (vm.overcommit_memory = 0, mm/util.c __vm_enough_memory) refuses when one
 * request exceeds RAM + swap; jemalloc maps with MAP_NORESERVE there and
 * would succeed, so a program that fails cleanly without the agent (PyTorch:
 * "DefaultCPUAllocator: can't allocate memory") would run on under it until
 * the OOM killer came. Set once by the constructor; no limit before. */
extern uint64_t tl_hooks_refuse_above;

/* jemalloc's own malloc and free (the same allocator: mallocx(n, 0) and
 * malloc(n), dallocx(p, 0) and free(p) are one thing in jemalloc), found by
 * the constructor (hooks.c): jemalloc 5.3's mallocx has no fast path and its
 * dallocx none either, malloc and free do (W1 under callgrind: 130 and 104
 * instructions a call against 70 and 52). NULL before and when not found:
 * then mallocx/dallocx, so there is no window without an allocator. */
extern void *(*tl_hooks_je_malloc)(size_t);
extern void (*tl_hooks_je_free)(void *);

static inline bool too_big(size_t size)
{
    return UNLIKELY((uint64_t)size > tl_hooks_refuse_above);
}

/* size bytes from jemalloc (flags: mallocx's), not yet marked live
 * (blocks.h); NULL with errno ENOMEM. */
static inline void *raw_alloc_unmarked(size_t size, int flags)
{
    if (too_big(size)) {
        errno = ENOMEM;
        return NULL;
    }
    /* jemalloc leaves errno at ENOMEM after a success when one of its own
     * mappings was refused (RLIMIT_AS) and it fell back: glibc does not. */
    int saved = errno;
    size_t n = size < MIN_ALIGN ? MIN_ALIGN : size; /* >= 16: a multiple of 16 B, 16-aligned */
    void *p = flags == 0 && tl_hooks_je_malloc ? tl_hooks_je_malloc(n) : mallocx(n, flags);
    if (UNLIKELY(!p)) {
        errno = ENOMEM;
        return NULL;
    }
    if (UNLIKELY(n >= TL_HEAPINFO_OVERSIZE)) tl_heapinfo_oversize_seen(p);
    errno = saved;
    return p;
}

/* raw_alloc_unmarked, the block marked live. */
static inline void *raw_alloc(size_t size, int flags)
{
    void *p = raw_alloc_unmarked(size, flags);
    if (p) tl_blocks_set_live(p);
    return p;
}

/* p (non-NULL) is about to be freed or reallocated: unless it is a live
 * block, report it and abort (blocks.h); release: mark it freed. Returns
 * tl_blocks_foreign of that release. */
static inline bool check_live(const char *op, void *p, bool release)
{
    int state = tl_blocks_check(p, release);
    if (UNLIKELY(state != TL_BLOCK_LIVE)) {
        TL_GUARD_SCOPE; /* the report's unwind may allocate */
        tl_blocks_bad_free(op, p, state);
    }
    return tl_blocks_foreign;
}

/* The largest block scan_zero clears; and the largest scan_alloc clears
 * itself after jemalloc's fast path (a small size class, whose regions
 * come back dirty from the thread cache anyway), where mallocx's
 * MALLOCX_ZERO takes its slow path: W3's check recording (1.1M
 * allocations) took 0.2 s more. */
#define SCAN_ZERO_MAX  ((size_t)1 << 20)
#define SCAN_CLEAR_MAX ((size_t)4096)

/* MALLOCX_ZERO while the leak scan follows every live block (record_scan.h)
 * for a block of at most SCAN_ZERO_MAX bytes, else 0. The scan reads a live
 * block whole, and a block jemalloc hands out again keeps its last
 * occupant's words where the program has not written yet: CPython 3.12's
 * stdin BufferedReader buffer (4096 B, never read) kept the item array of
 * the list marshal fills while it loads a module, and so the address of an
 * object freed since, which a ctypes malloc(3000) then got back: that
 * block, lost, was still reachable in every run. Memcheck does not take
 * such words for pointers: its leak scan reads a word only when its bits
 * are defined (mc_leakcheck.c lc_scan_memory, MC_(is_valid_aligned_word)),
 * and a block made zeroed holds only what the program wrote there. jemalloc
 * clears only what is not known to be zero (pages fresh from the kernel
 * are, and stay untouched); the bound spares big buffers reused from its
 * dirty extents a clearing at every allocation. */
static inline int scan_zero(size_t size)
{
    return size <= SCAN_ZERO_MAX && atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed)
               ? MALLOCX_ZERO
               : 0;
}

/* raw_alloc_unmarked with scan_zero's clearing. A block of a small size
 * class (at most SCAN_CLEAR_MAX bytes) comes from jemalloc's fast path and
 * is cleared here, all of its size class as MALLOCX_ZERO would (a realloc
 * in place may give the program the rest). */
static inline void *scan_alloc(size_t size, int flags)
{
    int zero = scan_zero(size);
    if (!zero || flags || size > SCAN_CLEAR_MAX) return raw_alloc_unmarked(size, flags | zero);
    void *p = raw_alloc_unmarked(size, 0);
    if (p) memset(p, 0, nallocx(size < MIN_ALIGN ? MIN_ALIGN : size, 0));
    return p;
}

/* Always inlined into the hook, and so is the stack capture of `all` mode:
 * libunwind then starts in the hook's own frame (stack.h). */
static inline __attribute__((always_inline)) void *tracked_alloc(uint64_t kind, size_t size,
                                                                 size_t recorded, int flags)
{
    void *p = scan_alloc(size, flags);
    if (p && tl_record_mode == TL_MODE_ALL) {
        tl_blocks_mark(p);
        bool foreign = tl_blocks_foreign; /* of p's mark, before anything else marks */
        TL_GUARD_SCOPE;                   /* libunwind may allocate on a thread's first unwind */
        int saved = errno;
        const uint64_t *frames;
        size_t n = tl_stack_capture_inline(&frames, tl_record_stack_depth);
        /* The unwind cache's answer with its stack's id, and no Python
         * frames to merge: the record in place (record_frames' answer). */
        tl_ucache_entry_t *e = tl_stack_cache_entry_of(frames);
        if (kind > TL_KIND_MEMALIGN || !e ||
            e->gen != atomic_load_explicit(&tl_stack_gen, memory_order_relaxed) ||
            atomic_load_explicit(&tl_pyframes_on, memory_order_relaxed) ||
            !tl_record_packed_fast((unsigned)kind, (uintptr_t)p, recorded, e->stack_id, foreign))
            tl_record_alloc_stack(kind, p, recorded, frames, n, foreign);
        errno = saved;
        return p;
    }
    if (p) tl_blocks_set_live(p);
    /* Outside `all` mode most blocks are only counted (record.h). */
    if (p && !tl_record_alloc_unrecorded(recorded)) {
        TL_GUARD_SCOPE;
        tl_record_alloc(kind, p, recorded);
    }
    return p;
}

/* Free a block already checked and marked freed (check_live). */
static inline void raw_free(void *p)
{
    int saved = errno;
    if (tl_hooks_je_free)
        tl_hooks_je_free(p);
    else
        dallocx(p, 0);
    errno = saved;
}

static inline void free_impl(void *p)
{
    if (tl_tsd.guard || !tl_agent_recording()) {
        if (p) {
            check_live("free", p, true);
            raw_free(p);
        }
        return;
    }
    if (!p) return;
    bool foreign = check_live("free", p, true);
    if (tl_record_free_unrecorded(p)) {
        raw_free(p);
        return;
    }
    TL_GUARD_SCOPE;
    /* Timed before the block can be reused. */
    if (tl_record_mode != TL_MODE_ALL ||
        !tl_record_packed_fast(TL_KIND_FREE, (uintptr_t)p, 0, 0, foreign))
        tl_record_free_block(TL_KIND_FREE, p, foreign);
    raw_free(p);
}

/* Is this call to be recorded? The guard is read first, before anything
 * else a hook does: nested calls must not even look at the agent state. */
static inline bool tracking(void)
{
    return !tl_tsd.guard && tl_agent_recording();
}

#endif /* TL_AGENT_HOOKS_H */
