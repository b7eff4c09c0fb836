/* cuda_region.c - device allocations inside a region, through libcudart
 * (the tests' stand-in, cudart_standin.c): each of two iterations of region
 * "step" takes a 2 MiB scratch buffer on cuda:0 and frees it, then an 8 MiB
 * heap block and frees it, then keeps 256 KiB on cuda:0. Inside an
 * iteration, the all-bytes peak is the heap block and cuda:0's own peak the
 * scratch buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

#include "tensorleak.h"

int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);

static void *volatile keep[2];

static void step(int i)
{
    void *scratch, *kept;
    tl_region_begin("step");
    cudaMalloc(&scratch, 2 << 20); /* SITE:scratch freed, 2 MiB on cuda:0 */
    cudaFree(scratch);
    void *heap = malloc(8 << 20); /* SITE:heap freed, 8 MiB plain heap block */
    free(heap);
    cudaMalloc(&kept, 256 << 10); /* SITE:kept leaked, 256 KiB */
    keep[i] = kept;
    tl_region_end("step");
}

int main(void)
{
    cudaFree(NULL);
    step(0);
    step(1);
    printf("cuda_region: done\n");
    return 0;
}
