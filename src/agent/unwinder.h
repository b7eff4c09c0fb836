/* unwinder.h - libunwind's calls into libc during the agent's own unwinds.
 *
 * libunwind 1.6 (CONFIG_BLOCK_SIGNALS, Debian's build) blocks every signal
 * around each dl_iterate_phdr walk of its frame lookups: two rt_sigprocmask
 * calls per frame its 128-entry per-thread cache misses, ~52 per allocation
 * recorded at torch's import (BENCHMARKS.md). Inside the agent's unwinds only
 * (tl_unwinder_enter .. leave, this thread), the sigprocmask hook
 * (hooks_proc.c) answers those pairs without the kernel; every other call
 * goes to glibc's sigprocmask unchanged. No allocation, no lock here.
 */
#ifndef TL_AGENT_UNWINDER_H
#define TL_AGENT_UNWINDER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Skipped blocks awaiting their restore, at most: libunwind nests two (a
 * lookup inside a blocked region); a deeper one goes to the kernel. Static
 * TLS is scarce (agent_small_stacks.sh). */
#define TL_UNWINDER_PENDING 2

typedef struct tl_unwinder_tls {
    unsigned depth;                         /* > 0: inside an agent unwind */
    unsigned npending;                      /* pending[0 .. npending) */
    sigset_t *pending[TL_UNWINDER_PENDING]; /* each skipped block's oset, innermost last */
} tl_unwinder_tls_t;
extern __thread tl_unwinder_tls_t tl_unwinder __attribute__((tls_model("initial-exec")));

/* Around every libunwind call of the agent's captures (stack.c, stack.h).
 * Nests. The first enter forgets pairs left open by an unwind that never
 * returned (a signal handler's longjmp). */
static inline void tl_unwinder_enter(void)
{
    if (tl_unwinder.depth++ == 0) tl_unwinder.npending = 0;
}
static inline void tl_unwinder_leave(void)
{
    tl_unwinder.depth--;
}

/* Find libunwind's code (the caller test) and glibc's sigprocmask; once, at
 * init, before the program's threads. */
void tl_unwinder_init(void);

/* glibc's sigprocmask (dlsym RTLD_NEXT, guarded, on first use if init has not
 * run); NULL when it cannot be found. */
typedef int (*tl_unwinder_sigmask_fn)(int, const sigset_t *, sigset_t *);
tl_unwinder_sigmask_fn tl_unwinder_real_sigprocmask(void);

/* The hook's answer, inside an agent unwind (depth > 0), to a call made from
 * caller (its return address) that is one of libunwind's block/restore
 * pairs: done here (sigprocmask returns 0, no system call made). true =
 * failure: not such a call, nothing done (call glibc's). */
bool tl_unwinder_sigmask_answer(int how, const sigset_t *set, sigset_t *oset, uintptr_t caller);

#endif /* TL_AGENT_UNWINDER_H */
