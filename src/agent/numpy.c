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
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/record.h"
#include "agent/tsd.h"
#include "common/trace_format.h"

#define NP_HANDLER_NAME "default_allocator"

/* numpy's original functions (and ctx), published before the handler
 * points at our wrappers; never cleared while a wrapper may run. */
static tl_np_allocator_t orig;
static _Atomic(tl_np_handler_t *) wrapped;

static inline bool tracking(void)
{
    return !tl_tsd.guard && tl_agent_recording();
}

static void stored(void *p, size_t size)
{
    TL_GUARD_SCOPE;
    tl_record_alloc(TL_KIND_STORAGE_NUMPY, p, size);
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
 * memory that is not there or not writable. */
static bool peek(void *dst, const void *src, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)src, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static bool poke(void *dst, const void *src, size_t n)
{
    struct iovec local = {(void *)src, n}, remote = {dst, n};
    return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

int tl_numpy_wrap(void *handler)
{
    tl_np_handler_t *h = handler, now;
    if (!h || !peek(&now, h, sizeof now)) return -EINVAL;
    tl_np_handler_t *had = atomic_load(&wrapped);
    if (had) return had == h ? 0 : -EBUSY;
    if (now.version != 1 || strncmp(now.name, NP_HANDLER_NAME, sizeof now.name) != 0 ||
        !now.allocator.malloc || !now.allocator.calloc || !now.allocator.realloc ||
        !now.allocator.free)
        return -EINVAL;
    /* Writing the values it already holds tells whether the page is
     * writable, without a fault and without changing anything. */
    if (!poke(&h->allocator, &now.allocator, sizeof now.allocator)) return -EFAULT;
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

void tl_numpy_reset(void)
{
    tl_np_handler_t *h = atomic_exchange(&wrapped, NULL);
    if (h) h->allocator = orig;
}
