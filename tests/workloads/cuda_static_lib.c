/* cuda_static_lib.c - a shared library built as nvcc builds one by default
 * (-cudart static), imitated without CUDA: the runtime's cudaMalloc,
 * cudaFree and cudaHostAlloc are the library's own exported functions
 * (libcudart_static.a puts them there). cuda_static_lib.sh builds it as
 * libkernels.so and checks that the agent names it in a NOTE, and that the
 * library's own calls still reach its own runtime. */
#include <stdlib.h>

int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaHostAlloc(void **ptr, size_t size, unsigned flags);

int cudaMalloc(void **ptr, size_t size)
{
    *ptr = malloc(size);
    return *ptr ? 0 : 2;
}

int cudaFree(void *ptr)
{
    free(ptr);
    return 0;
}

int cudaHostAlloc(void **ptr, size_t size, unsigned flags)
{
    (void)flags;
    return cudaMalloc(ptr, size);
}

/* One device buffer made and freed through the library's runtime: its
 * status (0 = cudaSuccess). */
int kernels_run(void);
int kernels_run(void)
{
    void *p = NULL;
    int err = cudaMalloc(&p, 1 << 20);
    if (err == 0) cudaFree(p);
    return err;
}
