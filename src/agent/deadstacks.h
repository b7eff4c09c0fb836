/* deadstacks.h - the stacks of threads that have ended, which the leak scan
 * must not take as roots (issue 28 item 4).
 *
 * glibc keeps an ended thread's stack mapping in its stack cache, stale
 * words and all: a block whose only pointer was a local of that thread is
 * definitely lost (as valgrind and LSan say), not still reachable. Only the
 * stack proper is forgotten, from its low end to below the static TLS:
 * the TLS and the thread descriptor at the top stay roots, since glibc
 * keeps them (and the dtv they point to) for the next thread on that stack.
 * Lock-free; no malloc, no stdio.
 */
#ifndef TL_AGENT_DEADSTACKS_H
#define TL_AGENT_DEADSTACKS_H

#include <stddef.h>
#include <stdint.h>

/* Look up glibc's static TLS size (_dl_get_tls_static_info, as LSan does);
 * without it no stack is ever taken as dead. Called once at init. */
void tl_deadstacks_init(void);
/* The calling thread ends (its key destructors run): its stack, below the
 * static TLS, is dead from now on. Not for the main thread. */
void tl_deadstacks_thread_end(void);
/* The calling thread begins: a cached stack it runs on is alive again. */
void tl_deadstacks_thread_begin(void);
/* The dead stacks at the scan: out[0, n) as [lo, hi); a range that holds
 * the sp of a live thread (its /proc/self/task/TID/syscall) is left out.
 * Then the dead part of the calling thread's CPython frame data stack
 * (pydead.h). Returns n <= cap. */
size_t tl_deadstacks_collect(uint64_t (*out)[2], size_t cap);

#endif /* TL_AGENT_DEADSTACKS_H */
