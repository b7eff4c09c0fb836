/* cuda_loop.c - a long CUDA run of constant live set on the stand-in
 * libcudart (cudart_standin.c): weights kept on cuda:0 and pinned host
 * memory kept, then argv[1] steps that each make and free device scratch on
 * cuda:0 and cuda:1 and pinned staging. cuda_aggregate_size.sh runs it for
 * 1x and 10x the steps. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

int cudaSetDevice(int device);
int cudaMalloc(void **ptr, size_t size);
int cudaMallocAsync(void **ptr, size_t size, void *stream);
int cudaFree(void *ptr);
int cudaFreeAsync(void *ptr, void *stream);
int cudaMallocHost(void **ptr, size_t size);
int cudaFreeHost(void *ptr);

static void *weights, *pinned;

static void step(void)
{
    void *scratch, *staging, *other;
    cudaSetDevice(0);
    cudaMallocAsync(&scratch, 1 << 20, NULL); /* SITE:scratch 1 MiB on cuda:0, freed */
    cudaMallocHost(&staging, 8192);           /* SITE:staging freed */
    cudaFreeHost(staging);
    cudaFreeAsync(scratch, NULL);
    cudaSetDevice(1);
    cudaMalloc(&other, 4096); /* SITE:other 4 KiB on cuda:1, freed */
    cudaFree(other);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 1;
    cudaMalloc(&weights, 3 << 20);     /* SITE:weights kept, 3 MiB on cuda:0 */
    cudaMallocHost(&pinned, 1 << 20);  /* SITE:pinned kept, 1 MiB pinned */
    for (int i = 0; i < steps; i++)
        step();
    printf("cuda_loop: %d steps\n", steps);
    return 0;
}
