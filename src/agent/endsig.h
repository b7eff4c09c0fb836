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
