/* c10.c - locate libc10.so's own alloc_cpu/free_cpu behind our interposers.
 *
 * Mangled names: c10::alloc_cpu(size_t) = _ZN3c109alloc_cpuEm,
 * c10::free_cpu(void*) = _ZN3c108free_cpuEPv (exported by libc10.so).
 * The library is found by its file name wherever it was loaded from (Debian:
 * /usr/lib/<triplet>/libc10.so; pip and conda: site-packages/torch/lib/
 * libc10.so; a repaired wheel may name it libc10-<hash>.so or add a version):
 * "libc10" then ".so" or "-", never libc10_cuda.so and the like. A candidate
 * whose symbols resolve into the agent itself (our interposers) is refused.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/c10.h"
#include "agent/modules.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

static _Atomic(tl_c10_alloc_fn) real_alloc;
static _Atomic(tl_c10_free_fn) real_free;

/* "libc10" then ".so" or "-", and ".so" somewhere (file name only). */
static bool is_libc10(const char *base, const void *arg)
{
    (void)arg;
    return strncmp(base, "libc10", 6) == 0 &&
           (strncmp(base + 6, ".so", 3) == 0 || base[6] == '-') && strstr(base, ".so");
}

/* Is code address p inside the agent's own object? */
static bool in_agent(void *p)
{
    Dl_info mine, theirs;
    if (!dladdr((void *)in_agent, &mine) || !dladdr(p, &theirs)) return false;
    return mine.dli_fbase == theirs.dli_fbase;
}

static void resolve(void)
{
    void *h = tl_modules_open_if(is_libc10, NULL); /* the loaded libc10 (modules.h) */
    if (!h) return;
    /* The handle's reference is kept: libc10 stays while we may call it. */
    tl_c10_alloc_fn a = (tl_c10_alloc_fn)dlsym(h, "_ZN3c109alloc_cpuEm");
    tl_c10_free_fn f = (tl_c10_free_fn)dlsym(h, "_ZN3c108free_cpuEPv");
    if (a && f && !in_agent((void *)a) && !in_agent((void *)f)) {
        atomic_store_explicit(&real_free, f, memory_order_release);
        atomic_store_explicit(&real_alloc, a, memory_order_release);
    }
}

tl_c10_alloc_fn tl_c10_real_alloc(void)
{
    tl_c10_alloc_fn a = atomic_load_explicit(&real_alloc, memory_order_acquire);
    if (!a) {
        resolve();
        a = atomic_load_explicit(&real_alloc, memory_order_acquire);
    }
    return a;
}

tl_c10_free_fn tl_c10_real_free(void)
{
    tl_c10_free_fn f = atomic_load_explicit(&real_free, memory_order_acquire);
    if (!f) {
        resolve();
        f = atomic_load_explicit(&real_free, memory_order_acquire);
    }
    return f;
}

void tl_c10_reset(void)
{
    atomic_store(&real_alloc, NULL);
    atomic_store(&real_free, NULL);
}
