/* cudalibs.c - the code ranges of NVIDIA's CUDA libraries (cudalibs.h).
 * Lock free; no stdio, no allocation, no other module of the agent.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/cudalibs.h"

#include <link.h>
#include <stdatomic.h>
#include <string.h>

/* One range per CUDA library (a module's PT_LOAD span, or an executable
 * segment of it): a big PyTorch install loads about 15. */
#define TL_CUDA_RANGES 64
static _Atomic uintptr_t range_lo[TL_CUDA_RANGES], range_hi[TL_CUDA_RANGES];
atomic_uint tl_cudalibs_nranges; /* ranges taken (cudalibs.h, tl_cudalibs_any) */
/* libstdc++'s code: a new it makes (std::string's growth) is made for its
 * caller, whose library decides. */
static _Atomic uintptr_t cxx_lo, cxx_hi;
static atomic_bool ranges_noted;

/* NVIDIA's CUDA libraries, by file-name prefix: the driver and runtime,
 * the JIT compilers, the math and communication libraries pip's torch
 * loads (nvidia-* wheels) and the tools' libraries. Their own host blocks
 * (a kernel launch's, a handle's, a plan's) are theirs, not the program's. */
static const char *const cuda_libs[] = {
    "libcuda.so",    "libcudart.so", "libnvrtc",  "libnvJitLink", "libnvidia-",  "libcublas",
    "libcudnn",      "libcufft",     "libcurand", "libcusparse",  "libcusolver", "libnccl",
    "libnvToolsExt", "libnvperf",    "libcupti",  "libcufile",    "libnvjpeg",   "libnpp",
};

static bool cuda_library(const char *base, size_t len)
{
    for (size_t i = 0; i < sizeof cuda_libs / sizeof cuda_libs[0]; i++) {
        size_t k = strlen(cuda_libs[i]);
        if (len >= k && memcmp(base, cuda_libs[i], k) == 0) return true;
    }
    return false;
}

static bool cxx_runtime(const char *base, size_t len)
{
    static const char name[] = "libstdc++.so";
    return len >= sizeof name - 1 && memcmp(base, name, sizeof name - 1) == 0;
}

static void cxx_range(uintptr_t lo, uintptr_t hi)
{
    atomic_store_explicit(&cxx_hi, hi, memory_order_relaxed);
    atomic_store_explicit(&cxx_lo, lo, memory_order_release);
}

bool tl_cudalibs_is_library(const char *base)
{
    return cuda_library(base, strlen(base));
}

void tl_cudalibs_add_range(uintptr_t lo, uintptr_t hi)
{
    unsigned n = atomic_load_explicit(&tl_cudalibs_nranges, memory_order_acquire);
    for (unsigned i = 0; i < n && i < TL_CUDA_RANGES; i++)
        if (atomic_load_explicit(&range_lo[i], memory_order_relaxed) == lo) return;
    /* A slot taken but not yet filled reads [0, 0): it matches nothing. */
    unsigned k = atomic_fetch_add_explicit(&tl_cudalibs_nranges, 1, memory_order_acq_rel);
    if (k >= TL_CUDA_RANGES) {
        atomic_store_explicit(&tl_cudalibs_nranges, TL_CUDA_RANGES, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&range_hi[k], hi, memory_order_relaxed);
    atomic_store_explicit(&range_lo[k], lo, memory_order_release);
}

void tl_cudalibs_note_module(const char *path, size_t len, uintptr_t lo, uintptr_t hi)
{
    if (!path) return;
    const char *slash = memrchr(path, '/', len);
    const char *base = slash ? slash + 1 : path;
    size_t n = len - (size_t)(base - path);
    if (cuda_library(base, n)) tl_cudalibs_add_range(lo, hi);
    if (cxx_runtime(base, n)) cxx_range(lo, hi);
}

/* The executable PT_LOAD ranges of the CUDA libraries loaded now. */
static int note_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name;
    if (!name || !*name) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (!tl_cudalibs_is_library(base)) return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        tl_cudalibs_add_range(lo, lo + ph->p_memsz);
    }
    return 0;
}

void tl_cudalibs_note_loaded(void)
{
    if (atomic_exchange(&ranges_noted, true)) return;
    dl_iterate_phdr(note_one, NULL);
}

bool tl_cudalibs_in_cxx_runtime(uintptr_t pc)
{
    uintptr_t lo = atomic_load_explicit(&cxx_lo, memory_order_acquire);
    return lo && pc >= lo && pc < atomic_load_explicit(&cxx_hi, memory_order_relaxed);
}

bool tl_cudalibs_is_inside(uintptr_t pc)
{
    unsigned n = atomic_load_explicit(&tl_cudalibs_nranges, memory_order_acquire);
    if (n > TL_CUDA_RANGES) n = TL_CUDA_RANGES;
    for (unsigned i = 0; i < n; i++)
        if (pc >= atomic_load_explicit(&range_lo[i], memory_order_relaxed) &&
            pc < atomic_load_explicit(&range_hi[i], memory_order_relaxed))
            return true;
    return false;
}

void tl_cudalibs_reset(void)
{
    atomic_store(&tl_cudalibs_nranges, 0);
    atomic_store(&ranges_noted, false);
    atomic_store(&cxx_lo, 0);
    atomic_store(&cxx_hi, 0);
    for (unsigned i = 0; i < TL_CUDA_RANGES; i++) {
        atomic_store(&range_lo[i], 0);
        atomic_store(&range_hi[i], 0);
    }
}
