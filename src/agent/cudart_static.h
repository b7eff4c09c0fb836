/* cudart_static.h - detect a CUDA runtime linked statically into the
 * executable (nvcc's default, -cudart static: libcudart_static.a). Its
 * cudaMalloc and friends are then the executable's own functions, called
 * directly: LD_PRELOAD cannot interpose them, and the agent says so in a
 * NOTE (build with `nvcc -cudart shared` to have them recorded).
 */
#ifndef TL_AGENT_CUDART_STATIC_H
#define TL_AGENT_CUDART_STATIC_H

#include <stdbool.h>

/* Does the ELF file at path define cudaMalloc, cudaMallocAsync or
 * cudaHostAlloc as a function (its symbol table, or the dynamic one), or,
 * stripped of its symbol table, hold libcudart's error text in its
 * read-only data (up to 64 MiB a section)? false for anything unreadable
 * or not ELF. Maps the file for the call; no allocation, no stdio. Call at
 * init. */
bool tl_cudart_static_in(const char *path);

#endif /* TL_AGENT_CUDART_STATIC_H */
