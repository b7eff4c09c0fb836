/* hooks_cxx.c - the interposed C++ operators new and delete, and PyTorch's
 * CPU storage entry points (c10::alloc_cpu, c10::free_cpu), beside hooks.c's
 * malloc family and nothing else. Same rules as hooks.c (hooks.h).
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "agent/c10.h"
#include "agent/cudalibs.h"
#include "agent/hooks.h"
#include "agent/record.h"
#include "agent/stack.h"
#include "common/trace_format.h"

/* --- C++ operator new / delete ---
 *
 * libjemalloc.so.2, our own dependency and so in the global scope ahead of
 * libstdc++, exports operator new/delete that call jemalloc directly. Without
 * these definitions every `new` in the program went to jemalloc unrecorded,
 * while libstdc++'s own deletes (bound to its operator delete, which calls
 * free) reached our free(): ~28,000 FREE records of unknown blocks in
 * `import torch`. So we define all of them here, on the malloc paths: new is
 * recorded as kind malloc, aligned new as kind memalign, delete as free.
 * Failure (rare) is handed to the next definition in the search order
 * (jemalloc's or libstdc++'s), which runs the new_handler loop and throws
 * std::bad_alloc (or returns NULL for nothrow) with the exact standard
 * semantics; the guard is up meanwhile, so a block that it still manages to
 * get is recorded here, once. */

typedef void *(*cxx_new_fn)(size_t, size_t);

static void *cxx_new_retry(const char *name, bool aligned, bool nothrow, uint64_t kind, size_t size,
                           size_t align)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    void *f = dlsym(RTLD_NEXT, name);
    void *p = NULL;
    if (f && aligned)
        p = ((void *(*)(size_t, size_t))f)(size, align); /* nothrow_t& arg: unused, any value */
    else if (f)
        p = ((void *(*)(size_t, const void *))f)(size, NULL);
    if (!p && !nothrow) abort(); /* no next operator new to throw std::bad_alloc */
    if (p) tl_blocks_mark(p);    /* jemalloc's operator new bypasses raw_alloc */
    if (p && track) tl_record_alloc(kind, p, size);
    return p;
}

/* A new whose caller is libstdc++ (std::string's growth): is the first
 * frame above libstdc++ a CUDA library's? A short capture (the unwind
 * cache answers a repeated one), taken only in a process that loaded a
 * CUDA library. */
#define TL_CXX_CALLER_DEPTH 8
static __attribute__((noinline)) bool cxx_runtime_caller_is_cuda(void)
{
    const uint64_t *frames;
    tl_tsd.guard++; /* libunwind may allocate */
    size_t n = tl_stack_capture(&frames, TL_CXX_CALLER_DEPTH);
    tl_tsd.guard--;
    for (size_t i = 0; i < n; i++)
        if (!tl_cudalibs_in_cxx_runtime((uintptr_t)frames[i]))
            return tl_cudalibs_is_inside((uintptr_t)frames[i]);
    return false;
}

/* Is a new with return address ra one a CUDA library makes for itself
 * (cudalibs.h)? Without CUDA libraries loaded, one load. */
static inline bool cuda_libs_new(uintptr_t ra)
{
    if (!tl_cudalibs_any()) return false;
    if (tl_cudalibs_is_inside(ra)) return true;
    return tl_cudalibs_in_cxx_runtime(ra) && cxx_runtime_caller_is_cuda();
}

/* A block every mode records (tl_record_alloc_captured), its stack
 * captured here, in the hook, as `all` mode's hooks do: inlined into the
 * hook, so that the unwind cache keyed by the hook's return address and
 * stack pointer answers a repeated one (a training loop repeats its
 * TensorImpls' and storages' stacks every step). Guard raised by the
 * caller (libunwind may allocate on a thread's first unwind); keeps errno. */
static inline __attribute__((always_inline)) void record_captured(uint64_t kind, void *p,
                                                                  size_t size)
{
    int saved = errno;
    const uint64_t *frames;
    size_t n = tl_stack_capture_inline(&frames, tl_record_stack_depth);
    errno = saved;
    tl_record_alloc_captured(kind, p, size, frames, n);
}

/* Outside `all` mode, a new recorded in full (record.h). */
static inline __attribute__((always_inline)) void *tracked_new_full(size_t size)
{
    void *p = raw_alloc(size, 0);
    if (p) {
        TL_GUARD_SCOPE;
        record_captured(size < TL_CONFIG_BIG_MIN ? TL_KIND_NEW_FULL : TL_KIND_MALLOC, p, size);
    }
    return p;
}

static inline __attribute__((always_inline)) void *cxx_new(const char *name, bool aligned,
                                                           bool nothrow, size_t size, size_t align)
{
    uint64_t kind = aligned ? TL_KIND_MEMALIGN : TL_KIND_MALLOC;
    int flags = 0;
    if (aligned) flags = MALLOCX_ALIGN(align < MIN_ALIGN ? MIN_ALIGN : align);
    void *p;
    if (tl_tsd.guard || !tl_agent_recording()) {
        p = raw_alloc(size, flags);
    } else if (!aligned && tl_record_mode != TL_MODE_ALL &&
               atomic_load_explicit(&tl_record_cxx_full, memory_order_relaxed) &&
               tl_record_new_in_full(size) &&
               !cuda_libs_new((uintptr_t)__builtin_return_address(0))) {
        /* Under PyTorch, new'd blocks of a TensorImpl's size class (of
         * every size until the Python package named one) keep their stacks
         * outside `all` mode too (record.h); not those the
         * CUDA libraries allocate for themselves (a kernel launch's, a
         * std::string of theirs that libstdc++ grows). */
        p = tracked_new_full(size);
    } else {
        p = tracked_alloc(kind, size, size, flags);
    }
    if (UNLIKELY(!p)) p = cxx_new_retry(name, aligned, nothrow, kind, size, align);
    return p;
}

#define TL_CXX_NEW(sym, aligned, nothrow)                                                          \
    TL_EXPORT void *sym(size_t size, size_t arg2);                                                 \
    TL_EXPORT void *sym(size_t size, size_t arg2)                                                  \
    {                                                                                              \
        return cxx_new(#sym, aligned, nothrow, size, arg2);                                        \
    }
#define TL_CXX_NEW1(sym)                                                                           \
    TL_EXPORT void *sym(size_t size);                                                              \
    TL_EXPORT void *sym(size_t size)                                                               \
    {                                                                                              \
        return cxx_new(#sym, false, false, size, 0);                                               \
    }
#define TL_CXX_DELETE(sym)                                                                         \
    TL_EXPORT void sym(void *p, size_t a2, size_t a3);                                             \
    TL_EXPORT void sym(void *p, size_t a2, size_t a3)                                              \
    {                                                                                              \
        (void)a2;                                                                                  \
        (void)a3;                                                                                  \
        free_impl(p);                                                                              \
    }

/* The extra arguments (size, align_val_t, const nothrow_t &) are passed in
 * registers on x86-64 and ignored here, so one C signature fits every form. */
TL_CXX_NEW1(_Znwm)                            /* new(size_t) */
TL_CXX_NEW1(_Znam)                            /* new[](size_t) */
TL_CXX_NEW(_ZnwmRKSt9nothrow_t, false, true)  /* new(size_t, nothrow_t const&) */
TL_CXX_NEW(_ZnamRKSt9nothrow_t, false, true)  /* new[](size_t, nothrow_t const&) */
TL_CXX_NEW(_ZnwmSt11align_val_t, true, false) /* new(size_t, align_val_t) */
TL_CXX_NEW(_ZnamSt11align_val_t, true, false) /* new[](size_t, align_val_t) */
TL_CXX_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, true, true)
TL_CXX_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, true, true)
TL_CXX_DELETE(_ZdlPv)
TL_CXX_DELETE(_ZdaPv)
TL_CXX_DELETE(_ZdlPvm)
TL_CXX_DELETE(_ZdaPvm)
TL_CXX_DELETE(_ZdlPvRKSt9nothrow_t)
TL_CXX_DELETE(_ZdaPvRKSt9nothrow_t)
TL_CXX_DELETE(_ZdlPvSt11align_val_t)
TL_CXX_DELETE(_ZdaPvSt11align_val_t)
TL_CXX_DELETE(_ZdlPvmSt11align_val_t)
TL_CXX_DELETE(_ZdaPvmSt11align_val_t)
TL_CXX_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t)
TL_CXX_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t)

/* --- PyTorch CPU storages: c10::alloc_cpu(size_t), c10::free_cpu(void *) --- */

TL_EXPORT void *_ZN3c109alloc_cpuEm(size_t nbytes);
TL_EXPORT void _ZN3c108free_cpuEPv(void *data);

TL_EXPORT void *_ZN3c109alloc_cpuEm(size_t nbytes)
{
    bool track = tracking();
    TL_GUARD_SCOPE; /* the real one's posix_memalign is not a second record */
    tl_c10_alloc_fn real = tl_c10_real_alloc();
    void *p;
    if (real) {
        p = real(nbytes); /* may throw c10::Error: the guard scope unwinds */
    } else {
        /* No libc10 found (cannot happen when libc10 called us): behave like
         * it, 64-byte aligned, NULL for 0 bytes. */
        p = nbytes ? mallocx(nbytes, MALLOCX_ALIGN(64)) : NULL;
        if (p) tl_blocks_mark(p);
    }
    if (track && p && nbytes) record_captured(TL_KIND_STORAGE_C10, p, nbytes);
    return p;
}

TL_EXPORT void _ZN3c108free_cpuEPv(void *data)
{
    bool track = tracking();
    TL_GUARD_SCOPE;
    if (track && data) tl_record_free(TL_KIND_STORAGE_C10, data);
    tl_c10_free_fn real = tl_c10_real_free();
    if (real)
        real(data);
    else if (data) {
        check_live("free", data, true);
        dallocx(data, 0);
    }
}
