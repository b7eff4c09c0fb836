/* cuda_prog.c - a C CUDA program without PyTorch, linked against libcudart
 * (the stand-in of cudart_standin.c in the tests): device, managed and
 * pinned host allocations at known lines; some freed, some leaked. */
#include <stdio.h>
#include <stddef.h>

int cudaSetDevice(int device);
int cudaMalloc(void **ptr, size_t size);
int cudaMallocAsync(void **ptr, size_t size, void *stream);
int cudaMallocManaged(void **ptr, size_t size, unsigned flags);
int cudaFree(void *ptr);
int cudaFreeAsync(void *ptr, void *stream);
int cudaHostAlloc(void **ptr, size_t size, unsigned flags);
int cudaMallocHost(void **ptr, size_t size);
int cudaFreeHost(void *ptr);

static void *weights, *scratch, *staging, *managed, *pinned_kept, *on_dev1;

static void load_weights(void)
{
    cudaMalloc(&weights, 3 << 20); /* SITE:weights leaked, 3 MiB on cuda:0 */
}

static void step(void)
{
    cudaMallocAsync(&scratch, 65536, (void *)0x10); /* SITE:scratch freed */
    cudaFreeAsync(scratch, (void *)0x10);
    cudaMallocHost(&staging, 8192); /* SITE:staging freed */
    cudaFreeHost(staging);
}

int main(void)
{
    cudaFree(NULL); /* context creation: no storage */
    load_weights();
    for (int i = 0; i < 3; i++)
        step();
    cudaMallocManaged(&managed, 12345, 1); /* SITE:managed freed */
    cudaFree(managed);
    cudaHostAlloc(&pinned_kept, 1 << 20, 0); /* SITE:pinned leaked, 1 MiB pinned host */
    cudaSetDevice(1);
    cudaMalloc(&on_dev1, 4096); /* SITE:dev1 leaked on cuda:1 */
    printf("cuda_prog: done\n");
    return 0;
}
