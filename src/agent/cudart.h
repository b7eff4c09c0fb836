/* cudart.h - find libcudart's real allocation functions behind our
 * interposers (hooks_cuda.c), and the code ranges of the CUDA runtime and driver.
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

/* The current CUDA device of the calling thread (cudaGetDevice), 0 when it
 * cannot be asked. */
int tl_cudart_device(void);

/* After the first allocation through libcudart (the driver is loaded then):
 * note the code ranges of the CUDA libraries loaded now (tl_cudart_library),
 * so that tl_cudart_is_inside can tell host blocks they allocate for
 * themselves (kernel launches) from the program's. Libraries loaded later
 * are added by the module scans (tl_cudart_add_range). Cheap to call again. */
void tl_cudart_note_ranges(void);

/* Is a file name (its base, after the last '/') one of NVIDIA's CUDA
 * libraries (libcuda, libcudart, libnvrtc, libcublas, libcudnn, libnccl,
 * ...; the list in cudart.c)? */
bool tl_cudart_library(const char *base);

/* [lo, hi) is code of a CUDA library. Lock free, any thread; a range
 * already noted (same lo) is not added twice; past 64 ranges, dropped. */
void tl_cudart_add_range(uintptr_t lo, uintptr_t hi);

/* A module the module scan reports (path[0..len), not NUL-terminated;
 * [lo, hi) its span): added with tl_cudart_add_range when it is a CUDA
 * library (one loaded after the first cudaMalloc: cuBLAS, cuDNN and NVRTC
 * load at their first use). */
void tl_cudart_note_module(const char *path, size_t len, uintptr_t lo, uintptr_t hi);

/* Is the code address pc inside a CUDA library (once noted)? Lock free: a
 * few relaxed loads and compares per library. */
bool tl_cudart_is_inside(uintptr_t pc);

/* Forget the cached functions and ranges (tests). */
void tl_cudart_reset(void);

#endif /* TL_AGENT_CUDART_H */
