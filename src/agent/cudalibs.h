/* cudalibs.h - the code ranges of NVIDIA's CUDA libraries (the driver
 * libcuda, the runtime libcudart, NVRTC, cuBLAS, cuDNN, NCCL, ...), so that
 * the C++ new hook can tell host blocks they allocate for themselves (a
 * kernel launch's, a handle's) from the program's: those are sampled like
 * any small block instead of getting full stacks. Ranges come from the
 * libraries loaded at the first cudaMalloc (hooks_cuda.c) and from every
 * module scan (modules.c) for those loaded later. Lock free, any thread.
 */
#ifndef TL_AGENT_CUDALIBS_H
#define TL_AGENT_CUDALIBS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* After the first allocation through libcudart (the driver is loaded then):
 * note the code ranges of the CUDA libraries loaded now (tl_cudalibs_is_library),
 * so that tl_cudalibs_is_inside can tell host blocks they allocate for
 * themselves (kernel launches) from the program's. Libraries loaded later
 * are added by the module scans (tl_cudalibs_add_range). Cheap to call again. */
void tl_cudalibs_note_loaded(void);

/* Is a file name (its base, after the last '/') one of NVIDIA's CUDA
 * libraries (libcuda, libcudart, libnvrtc, libcublas, libcudnn, libnccl,
 * ...; the list in cudalibs.c)? */
bool tl_cudalibs_is_library(const char *base);

/* [lo, hi) is code of a CUDA library. Lock free, any thread; a range
 * already noted (same lo) is not added twice; past 64 ranges, dropped. */
void tl_cudalibs_add_range(uintptr_t lo, uintptr_t hi);

/* A module the module scan reports (path[0..len), not NUL-terminated;
 * [lo, hi) its span): added with tl_cudalibs_add_range when it is a CUDA
 * library (one loaded after the first cudaMalloc: cuBLAS, cuDNN and NVRTC
 * load at their first use). */
void tl_cudalibs_note_module(const char *path, size_t len, uintptr_t lo, uintptr_t hi);

/* Is the code address pc inside a CUDA library (once noted)? Lock free: a
 * few relaxed loads and compares per library. */
bool tl_cudalibs_is_inside(uintptr_t pc);

/* Is any CUDA library's range noted? One relaxed load: the C++ new hook
 * asks nothing more in a process without CUDA. */
extern atomic_uint tl_cudalibs_nranges;
static inline bool tl_cudalibs_any(void)
{
    return atomic_load_explicit(&tl_cudalibs_nranges, memory_order_relaxed) != 0;
}

/* Is pc inside libstdc++ (its span, from the module scan)? Its std::string
 * and iostream code allocates for its caller: a CUDA library one frame
 * further up (libcublas growing a std::string) owns such a block. */
bool tl_cudalibs_in_cxx_runtime(uintptr_t pc);

/* Forget the ranges (tests). */
void tl_cudalibs_reset(void);

#endif /* TL_AGENT_CUDALIBS_H */
