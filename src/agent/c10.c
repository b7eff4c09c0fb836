/* c10.c - locate libc10.so's own alloc_cpu/free_cpu behind our interposers.
 *
 * Mangled names: c10::alloc_cpu(size_t) = _ZN3c109alloc_cpuEm,
 * c10::free_cpu(void*) = _ZN3c108free_cpuEPv (exported by libc10.so).
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/c10.h"

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>

static _Atomic(tl_c10_alloc_fn) real_alloc;
static _Atomic(tl_c10_free_fn) real_free;

/* The path is the loader's own string (its link map's l_name), valid while
 * libc10 stays loaded: no copy on the caller's stack. */
struct find_ctx {
    const char *path;
    int found;
};

static int find_one(struct dl_phdr_info *info, size_t size, void *data)
{
    struct find_ctx *ctx = data;
    const char *name = info->dlpi_name;
    if (!name || !*name) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "libc10.so", 9) != 0) return 0;
    ctx->path = name;
    ctx->found = 1;
    return 1;
}

static void resolve(void)
{
    struct find_ctx ctx;
    ctx.found = 0;
    dl_iterate_phdr(find_one, &ctx);
    if (!ctx.found) return;
    void *h = dlopen(ctx.path, RTLD_NOLOAD | RTLD_LAZY);
    if (!h) return;
    /* The handle's reference is kept: libc10 stays while we may call it. */
    tl_c10_alloc_fn a = (tl_c10_alloc_fn)dlsym(h, "_ZN3c109alloc_cpuEm");
    tl_c10_free_fn f = (tl_c10_free_fn)dlsym(h, "_ZN3c108free_cpuEPv");
    if (a && f) {
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
