/* cuda_devices.c - device allocations of a size and on a device the
 * command line picks, through libcudart (the tests' stand-in,
 * cudart_standin.c): `cuda_devices DEVICE KIB` keeps KIB KiB on cuda:DEVICE
 * from one line, after a 1 MiB scratch buffer on cuda:0 and an 8 MiB heap
 * block were freed: the all-bytes peak (the heap block), cuda:0's peak and
 * the end are three moments. */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>

int cudaSetDevice(int device);
int cudaMalloc(void **ptr, size_t size);
int cudaFree(void *ptr);
int cudaMallocHost(void **ptr, size_t size);

static void *scratch, *kept, *host;

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    cudaFree(NULL);
    cudaMalloc(&scratch, 1 << 20); /* SITE:scratch freed, 1 MiB on cuda:0 */
    cudaMallocHost(&host, 4096);   /* SITE:host leaked, pinned host */
    cudaFree(scratch);
    void *heap = malloc(8 << 20); /* SITE:heap freed, 8 MiB plain heap block */
    free(heap);
    cudaSetDevice(atoi(argv[1]));
    cudaMalloc(&kept, (size_t)atoi(argv[2]) << 10); /* SITE:kept leaked */
    printf("cuda_devices: done\n");
    return 0;
}
