/* cudart.h - find libcudart's real allocation functions behind our
 * interposers (hooks_cuda.c).
 *
 * pip's torch links libcudart.so.<major> dynamically (libc10_cuda.so imports
 * cudaMalloc and cudaMallocAsync from it); a CUDA C program links it the same
 * way. Like libc10 it may be loaded RTLD_LOCAL, so the real functions are
 * found the way c10.c finds alloc_cpu: dl_iterate_phdr for a loaded
 * "libcudart.so*", then dlsym on a RTLD_NOLOAD handle. Resolved once, cached
 * atomically; thread-safe. Call with the reentrancy guard raised.
 * The prototypes are CUDA's runtime API (cuda_runtime_api.h): cudaError_t is
 * an int (0 = cudaSuccess), cudaStream_t a pointer.
 */
#ifndef TL_AGENT_CUDART_H
#define TL_AGENT_CUDART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tl_cudart {
    int (*malloc)(void **ptr, size_t size);                         /* cudaMalloc */
    int (*free)(void *ptr);                                         /* cudaFree */
    int (*malloc_async)(void **ptr, size_t size, void *stream);     /* cudaMallocAsync */
    int (*free_async)(void *ptr, void *stream);                     /* cudaFreeAsync */
    int (*malloc_managed)(void **ptr, size_t size, unsigned flags); /* cudaMallocManaged */
    int (*host_alloc)(void **ptr, size_t size, unsigned flags);     /* cudaHostAlloc */
    int (*malloc_host)(void **ptr, size_t size);                    /* cudaMallocHost */
    int (*free_host)(void *ptr);                                    /* cudaFreeHost */
    int (*get_device)(int *device);                                 /* cudaGetDevice */
} tl_cudart_t;

/* The real functions (a member is NULL where libcudart lacks it), or NULL
 * when no libcudart is loaded. */
const tl_cudart_t *tl_cudart_real(void);

/* No libcudart.so loaded, yet a library called our `name` (cudaMalloc,
 * ...): it links the CUDA runtime statically (cudart_static.h) and its call
 * went through its PLT, which LD_PRELOAD bound to us. The definition it
 * would have had without us: the next one in the global scope
 * (dlsym(RTLD_NEXT)), else the one in the object holding the code address
 * caller (a library dlopen'd RTLD_LOCAL). NULL when there is none. Never
 * the agent's own. */
void *tl_cudart_next(const char *name, const void *caller);

/* The current CUDA device of the calling thread (cudaGetDevice), 0 when it
 * cannot be asked. */
int tl_cudart_device(void);

/* Forget the cached functions (tests). */
void tl_cudart_reset(void);

#endif /* TL_AGENT_CUDART_H */
