/* cudart.c - libcudart's real allocation functions (cudart.h). No stdio,
 * no allocation of our own; dlopen/dlsym may allocate, so callers hold the
 * reentrancy guard.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/cudart.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#include "agent/modules.h"

static tl_cudart_t real;
static atomic_int state; /* 0 not tried, 1 resolved, 2 no libcudart (retried later) */

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

void *tl_cudart_next(const char *name, const void *caller)
{
    void *p = sym(RTLD_NEXT, name);
    if (p) return p;
    Dl_info info;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname || !*info.dli_fname) return NULL;
    void *h = dlopen(info.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    if (!h) return NULL;
    p = sym(h, name); /* the caller's object and its dependencies, not the global scope */
    dlclose(h);
    return p;
}

int tl_cudart_device(void)
{
    const tl_cudart_t *r = tl_cudart_real();
    int d = 0;
    if (!r || !r->get_device || r->get_device(&d) != 0 || d < 0) return 0;
    return d;
}

void tl_cudart_reset(void)
{
    atomic_store(&state, 0);
    memset(&real, 0, sizeof real);
}
