/* unwinder.c - the agent's unwinds without libunwind's signal blocking.
 *
 * Only ever answers calls made by libunwind's code, in this thread, while
 * the agent unwinds (unwinder.h); no allocation, no lock, no stdio.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/unwinder.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdatomic.h>
#include <string.h>

#include "agent/modules.h"
#include "agent/tsd.h"

__thread tl_unwinder_tls_t tl_unwinder __attribute__((tls_model("initial-exec")));

static uintptr_t unw_lo, unw_hi; /* libunwind's object; 0/0 = unknown: nothing skipped */
static sigset_t full_mask;       /* what libunwind blocks: sigfillset's (unwi_full_mask) */
static _Atomic(void *) real_sigmask;

tl_unwinder_sigmask_fn tl_unwinder_real_sigprocmask(void)
{
    void *f = atomic_load_explicit(&real_sigmask, memory_order_acquire);
    if (!f) {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        f = dlsym(RTLD_NEXT, "sigprocmask");
        atomic_store_explicit(&real_sigmask, f, memory_order_release);
    }
    return (tl_unwinder_sigmask_fn)f;
}

void tl_unwinder_init(void)
{
    (void)tl_unwinder_real_sigprocmask();
    sigfillset(&full_mask);
    /* The libunwind the agent links, the object its unwinds run in. */
    uintptr_t lo, hi;
    if (!tl_modules_range_of((uintptr_t)&unw_backtrace, &lo, &hi)) {
        unw_lo = lo;
        unw_hi = hi;
    }
}

/* Why skipping is safe. libunwind blocks signals around its frame lookup
 * (dwarf_find_proc_info: dl_iterate_phdr) and around its global caches'
 * locks so that a signal handler that unwinds in the same thread cannot
 * deadlock on a lock the interrupted unwind holds. Here: (1) the agent sets
 * UNW_CACHE_PER_THREAD (stack.c), whose caches take no lock; (2) the only
 * lock left in the lookup is glibc's dl_load_write_lock, taken by
 * dl_iterate_phdr as a recursive lock, so a handler's own walk in this
 * thread goes through; (3) a handler that allocates during the unwind finds
 * the agent's reentrancy guard raised and goes straight to jemalloc, without
 * an unwind of its own. libunwind itself makes the blocking optional
 * (--disable-block-signals). The mask is never changed, so each skipped
 * block's restore must be skipped too: the pair is matched by its saved-set
 * pointer (libunwind restores from the very oset it blocked with), innermost
 * first, and any other call (another pattern, a caller outside libunwind: a
 * signal handler's own calls) goes to glibc's sigprocmask. */
bool tl_unwinder_sigmask_answer(int how, const sigset_t *set, sigset_t *oset, uintptr_t caller)
{
    tl_unwinder_tls_t *u = &tl_unwinder;
    if (how != SIG_SETMASK || !set || caller < unw_lo || caller >= unw_hi) return true;
    if (oset) { /* block: SIG_SETMASK of the full set, saving the old one */
        if (u->npending == TL_UNWINDER_PENDING || memcmp(set, &full_mask, sizeof full_mask) != 0)
            return true;
        /* Read by nobody but the restore below, which is skipped too. */
        memcpy(oset, set, sizeof *oset);
        u->pending[u->npending++] = oset;
    } else { /* restore: from the innermost skipped block's oset */
        if (u->npending == 0 || u->pending[u->npending - 1] != set) return true;
        u->npending--;
    }
    return false;
}
