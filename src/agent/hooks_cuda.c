/* hooks_cuda.c - the interposed entry points of libcudart (cudaMalloc and
 * friends), beside hooks.c's malloc family and nothing else: the real
 * functions are found in the loaded libcudart (cudart.h), the events go to
 * record.h. Same rules as hooks.c: the reentrancy guard is checked first,
 * the real function's result and errno are the caller's.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/cudalibs.h"
#include "agent/cudart.h"
#include "agent/hooks.h"
#include "agent/record.h"
#include "agent/tsd.h"
#include "common/trace_format.h"

/* --- libcudart: device and pinned host memory (cudart.h) ---
 *
 * The real function runs first, then a successful allocation is recorded
 * with the caller's stack; a free is recorded before the real one runs, so
 * that no reuse of the address precedes it in time. cudaFree(NULL) (a
 * program's way to create the context) records nothing. Without a
 * libcudart to forward to (cannot happen when it called us) the answer is
 * cudaErrorInitializationError (3). */

#define TL_CUDA_NOT_READY 3

static void cuda_allocated(uint64_t kind, bool track, int err, void **ptr, size_t size,
                           uint64_t device, void *stream)
{
    tl_cudalibs_note_loaded(); /* the driver is loaded now */
    if (track && err == 0 && ptr && *ptr)
        tl_record_dalloc(kind, *ptr, size, device, (uintptr_t)stream);
}

static uint64_t cuda_device(void)
{
    return TL_DEVICE_CUDA(tl_cudart_device());
}

/* real: libcudart's function, else (a static runtime in the caller's
 * library, cudart.h) that runtime's own, called untracked: its blocks are
 * not seen (the NOTE of cudart_static.h says so), and a free of one must
 * not be taken for a free of a block we never saw. */
#define TL_CUDA_REAL(field, name)                                                                  \
    const tl_cudart_t *rt = tl_cudart_real();                                                      \
    __typeof__(rt->field) real = rt ? rt->field : NULL;                                            \
    if (!real) {                                                                                   \
        *(void **)&real = tl_cudart_next(name, __builtin_return_address(0));                       \
        track = false;                                                                             \
    }                                                                                              \
    if (!real) return TL_CUDA_NOT_READY

TL_EXPORT int cudaMalloc(void **ptr, size_t size);
TL_EXPORT int cudaMalloc(void **ptr, size_t size)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(malloc, "cudaMalloc");
    int err = real(ptr, size);
    cuda_allocated(TL_KIND_STORAGE_CUDA_SEGMENT, track, err, ptr, size, track ? cuda_device() : 0,
                   NULL);
    return err;
}

TL_EXPORT int cudaMallocAsync(void **ptr, size_t size, void *stream);
TL_EXPORT int cudaMallocAsync(void **ptr, size_t size, void *stream)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(malloc_async, "cudaMallocAsync");
    int err = real(ptr, size, stream);
    cuda_allocated(TL_KIND_STORAGE_CUDA_SEGMENT, track, err, ptr, size, track ? cuda_device() : 0,
                   stream);
    return err;
}

TL_EXPORT int cudaMallocManaged(void **ptr, size_t size, unsigned flags);
TL_EXPORT int cudaMallocManaged(void **ptr, size_t size, unsigned flags)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(malloc_managed, "cudaMallocManaged");
    int err = real(ptr, size, flags);
    cuda_allocated(TL_KIND_STORAGE_CUDA_SEGMENT, track, err, ptr, size, track ? cuda_device() : 0,
                   NULL);
    return err;
}

TL_EXPORT int cudaFree(void *ptr);
TL_EXPORT int cudaFree(void *ptr)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(free, "cudaFree");
    if (track && ptr) tl_record_dfree(TL_KIND_STORAGE_CUDA_SEGMENT, ptr, cuda_device());
    return real(ptr);
}

TL_EXPORT int cudaFreeAsync(void *ptr, void *stream);
TL_EXPORT int cudaFreeAsync(void *ptr, void *stream)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(free_async, "cudaFreeAsync");
    if (track && ptr) tl_record_dfree(TL_KIND_STORAGE_CUDA_SEGMENT, ptr, cuda_device());
    return real(ptr, stream);
}

TL_EXPORT int cudaHostAlloc(void **ptr, size_t size, unsigned flags);
TL_EXPORT int cudaHostAlloc(void **ptr, size_t size, unsigned flags)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(host_alloc, "cudaHostAlloc");
    int err = real(ptr, size, flags);
    cuda_allocated(TL_KIND_STORAGE_PINNED, track, err, ptr, size, TL_DEVICE_CPU, NULL);
    return err;
}

TL_EXPORT int cudaMallocHost(void **ptr, size_t size);
TL_EXPORT int cudaMallocHost(void **ptr, size_t size)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(malloc_host, "cudaMallocHost");
    int err = real(ptr, size);
    cuda_allocated(TL_KIND_STORAGE_PINNED, track, err, ptr, size, TL_DEVICE_CPU, NULL);
    return err;
}

TL_EXPORT int cudaFreeHost(void *ptr);
TL_EXPORT int cudaFreeHost(void *ptr)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    TL_CUDA_REAL(free_host, "cudaFreeHost");
    if (track && ptr) tl_record_dfree(TL_KIND_STORAGE_PINNED, ptr, TL_DEVICE_CPU);
    return real(ptr);
}
