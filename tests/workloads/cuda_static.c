/* cuda_static.c - a CUDA program linked as nvcc links by default
 * (-cudart static), imitated without CUDA: the runtime's cudaMalloc and
 * cudaFree are the executable's own functions (libcudart_static.a puts them
 * there), and so is cudaGetErrorString with the runtime's text. The agent
 * cannot interpose them; cuda_static.sh checks that it says so. */
#include <stdio.h>
#include <stdlib.h>

static const char *const error_text[] = {
    "no error",
    "CUDA driver version is insufficient for CUDA runtime version",
};

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

const char *cudaGetErrorString(int error)
{
    return error_text[error == 35];
}

int main(void)
{
    void *p;
    int err = cudaMalloc(&p, 1 << 20);
    printf("cuda_static: %s\n", cudaGetErrorString(err));
    cudaFree(p);
    return 0;
}
