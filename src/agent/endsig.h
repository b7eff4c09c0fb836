/* endsig.h - the agent's SIGTERM and SIGINT end point, hidden from the
 * program.
 *
 * When the program leaves SIGTERM or SIGINT at its default action (death),
 * the agent installs a C handler that writes the trace's END record (reason
 * signal) and re-raises the signal with the default action restored, so the
 * process still dies by it: same exit status, same output. A C handler runs
 * no Python, so no Python end point is taken there (docs/python.md). SIGINT
 * is Ctrl-C, and how CPython ends on an uncaught KeyboardInterrupt: after
 * finalizing, it sets SIGINT to SIG_DFL and kills itself with it (exit
 * status 130 in a shell), which the handler then catches.
 *
 * The program must never see this handler: the sigaction and signal hooks
 * route both signals through tl_endsig_sigaction, which reports SIG_DFL
 * while the agent's handler stands in for it, and gives the signal up to
 * the program's own handler (or SIG_IGN) the moment the program installs one.
 * Async-signal-safe (atomics only, no locks): sigaction may be called from
 * a signal handler.
 */
#ifndef TL_AGENT_ENDSIG_H
#define TL_AGENT_ENDSIG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The real sigaction (dlsym(RTLD_NEXT)), or NULL. */
typedef int (*tl_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* At agent init: install the handler for each signal at SIG_DFL (a
 * background job of a shell starts with SIGINT ignored: left so). real is
 * libc's sigaction. Calls on_signal(sig, scan_room) from the handler, which
 * ends the trace; it must be async-signal-safe. scan_room: the thread's
 * stack has room for the leak scan too (12 KiB below the handler's frame,
 * against 4 KiB for the END alone; with less than that, no call, and the
 * process dies without an END). on_signal returns true (failure: nothing
 * done) when the signal came inside the agent (guard held): it is then held
 * (tl_endsig_deferred, tsd.h) until the guard drops to 0, where
 * tl_endsig_run_deferred calls on_signal again and re-raises it. */
void tl_endsig_init(tl_sigaction_fn real, bool (*on_signal)(int sig, bool scan_room));

/* The context of the fatal signal whose END is being written, on the
 * thread that writes it: its stack pointer there (0: none, the END runs
 * where the agent was left, or no signal) and, in *regs (n words), its
 * registers that are roots: the general ones, or the callee-saved alone
 * when it was blocked in a libc system call (see tl_endsig_dead_ranges).
 * The END's leak scan reads that thread's stack from there, not from its
 * own frame: the kernel's signal frame and the red zone below the
 * interrupted sp hold stale words, such as a returned function's local
 * still pointing at the block it lost (a SIGTERM'd process's last leak was
 * "still reachable"). Async-signal-safe. */
uint64_t tl_endsig_interrupted(const uint64_t **regs, size_t *n);

/* The dead parts of the signal frames on the calling thread's stack, for
 * the leak scan at an exit: a program's own handler that calls exit() (a
 * graceful shutdown) leaves the kernel's frame above the exit path, with
 * the registers of the code it interrupted, and below that code's sp the
 * red zone. When it was a libc system call (pause, a wait), all of it but
 * the callee-saved registers' slots is dead there (the C ABI) and holds
 * stale words, such as memset's last address inside a block just lost, or
 * a returned function's local, which made that block "still reachable".
 * [lo, hi): the stack from the caller's sp, readable. Writes [start, end)
 * ranges, ascending, into dead (at most cap); returns how many. A frame is
 * known by the restorer's address (glibc's, learnt at init) as its first
 * word, an interrupted sp above it within [lo, hi) and a pc in libc right
 * after a `syscall`. x86-64 only (else 0). Async-signal-safe. */
size_t tl_endsig_dead_ranges(uint64_t lo, uint64_t hi, uint64_t (*dead)[2], size_t cap);

/* In the child of fork: forget a signal held for the parent. */
void tl_endsig_fork_child(void);

/* Whether a fatal signal taken here is ending the process (its END being
 * written, or held until the agent is left): the process dies of it next.
 * Async-signal-safe, lock-free; any thread. */
bool tl_endsig_ending(void);

/* sigaction(2) as the program sees it, for every signal (others pass
 * straight to real). Returns 0 or -1 with errno, like sigaction. */
int tl_endsig_sigaction(tl_sigaction_fn real, int sig, const struct sigaction *act,
                        struct sigaction *old);

#endif /* TL_AGENT_ENDSIG_H */
