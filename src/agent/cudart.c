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

#define TL_CUDA_RANGES 8
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

/* The executable PT_LOAD ranges of libcuda.so* and libcudart.so*. */
static int note_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name;
    if (!name || !*name) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libcuda.so", 10) != 0 && strncmp(base, "libcudart.so", 12) != 0) return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        unsigned n = atomic_load_explicit(&nranges, memory_order_relaxed);
        if (n >= TL_CUDA_RANGES) return 1;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        atomic_store_explicit(&range_lo[n], lo, memory_order_relaxed);
        atomic_store_explicit(&range_hi[n], lo + ph->p_memsz, memory_order_relaxed);
        atomic_store_explicit(&nranges, n + 1, memory_order_release);
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
    memset(&real, 0, sizeof real);
}
