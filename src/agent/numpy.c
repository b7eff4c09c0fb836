/* numpy.c - numpy's default data-memory handler, wrapped (numpy.h).
 *
 * The wrappers run on numpy's hot path, in any thread, with or without the
 * GIL (numpy's calloc of a big buffer drops it): no lock, and nothing but
 * the recording path of record.h. numpy's own function runs under our
 * reentrancy guard, so the malloc it may call is not a second record; a
 * buffer it hands out again from its small-block cache is still a new
 * storage. Rules of numpy's handler kept: NULL results pass through, free of
 * NULL is numpy's business, errno is the original's.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/numpy.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/clock.h"
#include "agent/record.h"
#include "agent/tsd.h"
#include "common/trace_format.h"

#define NP_HANDLER_NAME "default_allocator"

/* numpy's original functions (and ctx), published before the handler
 * points at our wrappers; never cleared while a wrapper may run. */
static tl_np_allocator_t orig;
static _Atomic(tl_np_handler_t *) wrapped;
__thread uintptr_t tl_numpy_last_buffer_not __attribute__((tls_model("initial-exec")));
__thread size_t tl_numpy_last_bytes __attribute__((tls_model("initial-exec")));

static inline bool tracking(void)
{
    return !tl_tsd.guard && tl_agent_recording();
}

static atomic_bool stored_any; /* tl_numpy_storages */

uint64_t tl_numpy_storages(void)
{
    return atomic_load_explicit(&stored_any, memory_order_relaxed);
}

static void stored(void *p, size_t size)
{
    TL_GUARD_SCOPE;
    /* A load on the hot path (a store once): no line shared for writing. */
    if (!atomic_load_explicit(&stored_any, memory_order_relaxed))
        atomic_store_explicit(&stored_any, true, memory_order_relaxed);
    tl_record_alloc(TL_KIND_STORAGE_NUMPY, p, size);
    tl_numpy_last_buffer_not = ~(uintptr_t)p; /* numpy_copy.c: a copy's new buffer */
    tl_numpy_last_bytes = size;
}

static void released(void *p)
{
    TL_GUARD_SCOPE;
    tl_record_free(TL_KIND_STORAGE_NUMPY, p);
}

static void *np_malloc(void *ctx, size_t size)
{
    bool track = tracking();
    void *p;
    {
        TL_GUARD_SCOPE;
        p = orig.malloc(ctx, size);
    }
    if (track && p && size) stored(p, size);
    return p;
}

static void *np_calloc(void *ctx, size_t nelem, size_t elsize)
{
    bool track = tracking();
    void *p;
    {
        TL_GUARD_SCOPE;
        p = orig.calloc(ctx, nelem, elsize);
    }
    size_t size;
    if (track && p && !__builtin_mul_overflow(nelem, elsize, &size) && size) stored(p, size);
    return p;
}

/* The old buffer's FREE is written before numpy's realloc may release it
 * (no other thread can be handed its address first); when the realloc
 * fails the buffer is still numpy's and is recorded again, with its usable
 * size (numpy's default realloc is the C library's). */
static void *np_realloc(void *ctx, void *ptr, size_t new_size)
{
    bool track = tracking();
    if (track && ptr) released(ptr);
    void *q;
    {
        TL_GUARD_SCOPE;
        q = orig.realloc(ctx, ptr, new_size);
    }
    if (!track) return q;
    if (q && new_size) {
        stored(q, new_size);
    } else if (!q && ptr && new_size) {
        int saved = errno;
        size_t old = malloc_usable_size(ptr);
        errno = saved;
        if (old) stored(ptr, old);
    }
    return q;
}

static void np_free(void *ctx, void *ptr, size_t size)
{
    if (ptr && tracking()) released(ptr); /* timed before the buffer can be reused */
    TL_GUARD_SCOPE;
    orig.free(ctx, ptr, size);
}

/* Copy n bytes between our memory and the handler's through the kernel
 * (process_vm_readv / writev on ourselves): EFAULT instead of a fault for
 * memory that is not there or not writable: true = failure. */
bool tl_numpy_peek(void *dst, const void *src, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)src, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)n;
}

bool tl_numpy_poke(void *dst, const void *src, size_t n)
{
    struct iovec local = {(void *)src, n}, remote = {dst, n};
    return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)n;
}

int tl_numpy_wrap(void *handler)
{
    tl_np_handler_t *h = handler, now;
    if (!h || tl_numpy_peek(&now, h, sizeof now)) return -EINVAL;
    tl_np_handler_t *had = atomic_load(&wrapped);
    if (had) return had == h ? 0 : -EBUSY;
    if (now.version != 1 || strncmp(now.name, NP_HANDLER_NAME, sizeof now.name) != 0 ||
        !now.allocator.malloc || !now.allocator.calloc || !now.allocator.realloc ||
        !now.allocator.free)
        return -EINVAL;
    /* Writing the values it already holds tells whether the page is
     * writable, without a fault and without changing anything. */
    if (tl_numpy_poke(&h->allocator, &now.allocator, sizeof now.allocator)) return -EFAULT;
    orig = now.allocator;
    tl_np_handler_t *none = NULL;
    if (!atomic_compare_exchange_strong(&wrapped, &none, h)) return none == h ? 0 : -EBUSY;
    /* Each store is one aligned pointer: a thread calling through the
     * handler sees numpy's function or ours, and ours calls numpy's. */
    __atomic_store_n(&h->allocator.free, np_free, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.realloc, np_realloc, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.calloc, np_calloc, __ATOMIC_RELEASE);
    __atomic_store_n(&h->allocator.malloc, np_malloc, __ATOMIC_RELEASE);
    return 0;
}

/* --- ndarray objects: where each was made (numpy.h) --- */

typedef void *(*tp_alloc_fn)(void *type, intptr_t nitems);
typedef void (*tp_free_fn)(void *obj);

static tp_alloc_fn orig_tp_alloc;
static tp_free_fn orig_tp_free;
static _Atomic(void *) array_type; /* the PyTypeObject whose slots are ours */

/* A numpy object made (live) or gone (TL_KIND_PYOBJECT): an ALLOC of size 0
 * with its Python stack, or a FREE; outside the END counters and the live
 * table (its ALLOC is not a block), none in aggregate mode. */
static void object_record(const void *obj, bool live)
{
    if (tl_record_mode == TL_MODE_AGGREGATE) return;
    int saved = errno;
    tl_record_thread_begin();
    uint64_t p = (uintptr_t)obj, id = live ? tl_record_py_stack() : 0, ts = tl_record_py_time();
    tl_writer_t *w = tl_record_writer();
    if (live ? tl_writer_alloc(w, &tl_tsd.cur, ts, TL_KIND_PYOBJECT, p, 0, id)
             : tl_writer_free(w, &tl_tsd.cur, ts, TL_KIND_PYOBJECT, p))
        tl_counters_add(&tl_tsd.slot->dropped, 1);
    errno = saved;
}

/* Only ndarray itself: a subclass numpy made before the swap kept the
 * slots it inherited, a gc-tracked subclass frees through its own tp_free
 * (its records would stay open), and its allocation may run a collection,
 * so Python code: that runs as without us, never under our guard. ndarray
 * is not gc-tracked: its tp_alloc is Python's object allocator alone. */
static void *np_tp_alloc(void *type, intptr_t nitems)
{
    if (type != atomic_load_explicit(&array_type, memory_order_relaxed))
        return orig_tp_alloc(type, nitems);
    bool track = tracking();
    void *obj;
    {
        TL_GUARD_SCOPE; /* Python's allocator may use malloc: not a record of its own */
        obj = orig_tp_alloc(type, nitems);
    }
    if (track && obj) {
        TL_GUARD_SCOPE;
        object_record(obj, true);
    }
    return obj;
}

static void np_tp_free(void *obj)
{
    /* ob_type is still set when a deallocator calls tp_free. */
    if (obj && *(void **)((char *)obj + TL_NP_OB_TYPE) == atomic_load(&array_type) && tracking()) {
        TL_GUARD_SCOPE;
        object_record(obj, false);
    }
    TL_GUARD_SCOPE;
    orig_tp_free(obj);
}

int tl_numpy_wrap_type(void *type)
{
    char *t = type;
    void *now[3]; /* tp_alloc, tp_new, tp_free */
    if (!t || tl_numpy_peek(now, t + TL_NP_TP_ALLOC, sizeof now) || !now[0] || !now[2])
        return -EINVAL;
    void *had = atomic_load(&array_type);
    if (had) return had == type ? 0 : -EBUSY;
    if (tl_numpy_poke(t + TL_NP_TP_ALLOC, now, sizeof now)) return -EFAULT;
    orig_tp_alloc = (tp_alloc_fn)now[0];
    orig_tp_free = (tp_free_fn)now[2];
    void *none = NULL;
    if (!atomic_compare_exchange_strong(&array_type, &none, type)) return none == type ? 0 : -EBUSY;
    __atomic_store_n((tp_free_fn *)(void *)(t + TL_NP_TP_FREE), np_tp_free, __ATOMIC_RELEASE);
    __atomic_store_n((tp_alloc_fn *)(void *)(t + TL_NP_TP_ALLOC), np_tp_alloc, __ATOMIC_RELEASE);
    return 0;
}

void tl_numpy_reset(void)
{
    atomic_store(&stored_any, false);
    tl_np_handler_t *h = atomic_exchange(&wrapped, NULL);
    if (h) h->allocator = orig;
    char *t = atomic_exchange(&array_type, NULL);
    if (t) {
        *(tp_alloc_fn *)(void *)(t + TL_NP_TP_ALLOC) = orig_tp_alloc;
        *(tp_free_fn *)(void *)(t + TL_NP_TP_FREE) = orig_tp_free;
    }
}
