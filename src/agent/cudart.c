/* cudart.c - libcudart's real allocation functions and the CUDA libraries'
 * code ranges (cudart.h). No stdio, no allocation of our own; dlopen/dlsym
 * may allocate, so callers hold the reentrancy guard.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/cudart.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

#include "agent/modules.h"

static tl_cudart_t real;
static atomic_int state; /* 0 not tried, 1 resolved, 2 no libcudart (retried later) */

/* One range per CUDA library (a module's PT_LOAD span, or an executable
 * segment of it): a big PyTorch install loads about 15. */
#define TL_CUDA_RANGES 64
static _Atomic uintptr_t range_lo[TL_CUDA_RANGES], range_hi[TL_CUDA_RANGES];
static atomic_uint nranges;
static atomic_bool ranges_noted;

/* Is code address p inside the agent's own object? (a lookup that found our
 * interposer would call itself for ever) */
static bool in_agent(void *p)
{
    Dl_info mine, theirs;
    if (!p || !dladdr((void *)in_agent, &mine) || !dladdr(p, &theirs)) return false;
    return mine.dli_fbase == theirs.dli_fbase;
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    return in_agent(p) ? NULL : p;
}

#define SYM(field, name) *(void **)&real.field = sym(h, name)

const tl_cudart_t *tl_cudart_real(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == 1) return &real;
    /* Not loaded yet (or never): each call retries, as c10.c does; only a
     * call that libcudart made to us, or a program linked against it, gets
     * here, so the library is normally there. */
    void *h = tl_modules_open_loaded("libcudart.so");
    if (!h) return NULL;
    SYM(malloc, "cudaMalloc");
    SYM(free, "cudaFree");
    SYM(malloc_async, "cudaMallocAsync");
    SYM(free_async, "cudaFreeAsync");
    SYM(malloc_managed, "cudaMallocManaged");
    SYM(host_alloc, "cudaHostAlloc");
    SYM(malloc_host, "cudaMallocHost");
    SYM(free_host, "cudaFreeHost");
    SYM(get_device, "cudaGetDevice");
    atomic_store_explicit(&state, 1, memory_order_release);
    return &real;
}

int tl_cudart_device(void)
{
    const tl_cudart_t *r = tl_cudart_real();
    int d = 0;
    if (!r || !r->get_device || r->get_device(&d) != 0 || d < 0) return 0;
    return d;
}

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

bool tl_cudart_library(const char *base)
{
    return cuda_library(base, strlen(base));
}

void tl_cudart_add_range(uintptr_t lo, uintptr_t hi)
{
    unsigned n = atomic_load_explicit(&nranges, memory_order_acquire);
    for (unsigned i = 0; i < n && i < TL_CUDA_RANGES; i++)
        if (atomic_load_explicit(&range_lo[i], memory_order_relaxed) == lo) return;
    /* A slot taken but not yet filled reads [0, 0): it matches nothing. */
    unsigned k = atomic_fetch_add_explicit(&nranges, 1, memory_order_acq_rel);
    if (k >= TL_CUDA_RANGES) {
        atomic_store_explicit(&nranges, TL_CUDA_RANGES, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&range_hi[k], hi, memory_order_relaxed);
    atomic_store_explicit(&range_lo[k], lo, memory_order_release);
}

void tl_cudart_note_module(const char *path, size_t len, uintptr_t lo, uintptr_t hi)
{
    if (!path) return;
    const char *slash = memrchr(path, '/', len);
    const char *base = slash ? slash + 1 : path;
    if (cuda_library(base, len - (size_t)(base - path))) tl_cudart_add_range(lo, hi);
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
    if (!tl_cudart_library(base)) return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        tl_cudart_add_range(lo, lo + ph->p_memsz);
    }
    return 0;
}

void tl_cudart_note_ranges(void)
{
    if (atomic_exchange(&ranges_noted, true)) return;
    dl_iterate_phdr(note_one, NULL);
}

bool tl_cudart_is_inside(uintptr_t pc)
{
    unsigned n = atomic_load_explicit(&nranges, memory_order_acquire);
    if (n > TL_CUDA_RANGES) n = TL_CUDA_RANGES;
    for (unsigned i = 0; i < n; i++)
        if (pc >= atomic_load_explicit(&range_lo[i], memory_order_relaxed) &&
            pc < atomic_load_explicit(&range_hi[i], memory_order_relaxed))
            return true;
    return false;
}

void tl_cudart_reset(void)
{
    atomic_store(&state, 0);
    atomic_store(&nranges, 0);
    atomic_store(&ranges_noted, false);
    for (unsigned i = 0; i < TL_CUDA_RANGES; i++) {
        atomic_store(&range_lo[i], 0);
        atomic_store(&range_hi[i], 0);
    }
    memset(&real, 0, sizeof real);
}
