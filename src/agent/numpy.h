/* numpy.h - numpy's data buffers as storages, through numpy's own
 * data-memory handler (NEP 49, numpy >= 1.22).
 *
 * numpy allocates every array's data buffer through the handler that its
 * ContextVar names; by default that is one static PyDataMem_Handler inside
 * _multiarray_umath ("default_allocator"). tl_numpy_wrap rewrites that
 * struct's four allocator functions in place to ours, which call the
 * originals and record each buffer as a storage (TL_KIND_STORAGE_NUMPY):
 * every context and thread sees them, and a buffer allocated before the swap
 * is still freed by numpy's own free (through ours). The Python package
 * finds the struct and calls this (docs/python.md, "numpy storages").
 */
#ifndef TL_AGENT_NUMPY_H
#define TL_AGENT_NUMPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* numpy's PyDataMemAllocator and PyDataMem_Handler, version 1: the layout of
 * numpy/ndarraytypes.h, the same in numpy 1.22 to 2.4 (name[127], version,
 * then the allocator at offset 128). */
typedef struct tl_np_allocator {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} tl_np_allocator_t;

typedef struct tl_np_handler {
    char name[127];
    uint8_t version;
    tl_np_allocator_t allocator;
} tl_np_handler_t;

/* Wrap the allocator of handler (a PyDataMem_Handler *): 0 when wrapped now
 * or before; -EINVAL when it is not numpy's default handler of version 1
 * (name "default_allocator"), or not readable; -EFAULT when its memory
 * cannot be written; -EBUSY when another handler was wrapped already (one
 * numpy per process). Call with the GIL held (numpy's cache needs it; the
 * swap itself is a pointer store per function, atomic for a thread that is
 * calling them). Never undone: the wrappers pass straight through once
 * the agent stops recording. */
int tl_numpy_wrap(void *handler);

/* Copy n bytes from src to dst (peek: src is the process's memory that may
 * not be there; poke: dst is) through the kernel (process_vm_readv /
 * writev on ourselves): true = failure (not all n bytes copied) instead of
 * a fault. Any thread. */
bool tl_numpy_peek(void *dst, const void *src, size_t n);
bool tl_numpy_poke(void *dst, const void *src, size_t n);

/* CPython's PyTypeObject (Include/cpython/object.h, the same in 3.8-3.13):
 * byte offsets of tp_alloc and tp_free (tp_new between them), and of an
 * object's type (default builds, not free-threaded ones). The Python
 * package checks them against the running interpreter before it passes a
 * type (tensorleak/_numpy.py). */
#define TL_NP_TP_ALLOC 304
#define TL_NP_TP_FREE  320
#define TL_NP_OB_TYPE  8 /* PyObject's ob_type (after ob_refcnt) */

/* Wrap tp_alloc and tp_free of type (numpy's PyArray_Type, a static type):
 * each ndarray object made from then on gets an ALLOC of TL_KIND_PYOBJECT
 * with its Python stack, and a FREE when it goes, so a view found at a
 * report point names the line that made it. Return values as
 * tl_numpy_wrap's (-EINVAL: a slot is NULL or unreadable). GIL held. */
int tl_numpy_wrap_type(void *type);

/* 0 until the wrapped handler recorded its first storage (in this process
 * image), then 1: 0 tells a report point that no numpy buffer of numpy's
 * module state can be a storage, so it need not look for one
 * (_holders.py). Relaxed; any thread. */
uint64_t tl_numpy_storages(void);

/* Forget the wrapped handler and type, putting numpy's functions back, and
 * that a storage was recorded (unit tests: their fake handlers go away). */
void tl_numpy_reset(void);

/* The thread's last numpy buffer that the wrapped handler recorded,
 * complemented (~, as tl_wcursor_t.prev_ptr_not: static TLS is a root of
 * the leak scan, and a lost buffer must not be held there), and its bytes
 * (set here): what tells numpy_copy.c that a copy's result has a new
 * buffer. 0: none. */
extern __thread uintptr_t tl_numpy_last_buffer_not __attribute__((tls_model("initial-exec")));
extern __thread size_t tl_numpy_last_bytes __attribute__((tls_model("initial-exec")));

#endif /* TL_AGENT_NUMPY_H */
