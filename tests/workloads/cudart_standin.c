/* cudart_standin.c - a stand-in for libcudart.so.13 on machines without a
 * GPU: the runtime's allocation entry points (CUDA's cuda_runtime_api.h
 * prototypes, cudaError_t as int, 0 = cudaSuccess) backed by mmap, so that
 * the agent's interposition of libcudart can be tested on the CPU. The
 * tests build it as libcudart.so.13 (soname and symbol version
 * libcudart.so.13, as NVIDIA's is) and link cuda_prog against it.
 * "Device" memory is ordinary anonymous memory here; cudaSetDevice picks
 * the device cudaGetDevice reports.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

static __thread int current_device;

/* Every block starts one page after its mapping, whose first word holds the
 * mapping's length, so the frees can unmap it. */
static int map_block(void **ptr, size_t size)
{
    if (!ptr) return 1; /* cudaErrorInvalidValue */
    size_t len = size + 4096;
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return 2; /* cudaErrorMemoryAllocation */
    *(size_t *)m = len;
    *ptr = (char *)m + 4096;
    return 0;
}

static int unmap_block(void *ptr)
{
    if (!ptr) return 0;
    char *m = (char *)ptr - 4096;
    munmap(m, *(size_t *)m);
    return 0;
}

int cudaSetDevice(int device)
{
    current_device = device;
    return 0;
}

int cudaGetDevice(int *device)
{
    *device = current_device;
    return 0;
}

int cudaMalloc(void **ptr, size_t size)
{
    return map_block(ptr, size);
}

int cudaMallocAsync(void **ptr, size_t size, void *stream)
{
    (void)stream;
    return map_block(ptr, size);
}

int cudaMallocManaged(void **ptr, size_t size, unsigned flags)
{
    (void)flags;
    return map_block(ptr, size);
}

int cudaFree(void *ptr)
{
    return unmap_block(ptr);
}

int cudaFreeAsync(void *ptr, void *stream)
{
    (void)stream;
    return unmap_block(ptr);
}

int cudaHostAlloc(void **ptr, size_t size, unsigned flags)
{
    (void)flags;
    return map_block(ptr, size);
}

int cudaMallocHost(void **ptr, size_t size)
{
    return map_block(ptr, size);
}

int cudaFreeHost(void *ptr)
{
    return unmap_block(ptr);
}
