/* agent.h - the agent's lifecycle: init, the end of the trace (exit,
 * _exit, exec, fork), and the configuration others read. The events are
 * recorded by record.h; the per-thread state and switch are in tsd.h.
 *
 * Rules: no stdio, no getenv after init. Everything here raises the
 * reentrancy guard itself.
 */
#ifndef TL_AGENT_AGENT_H
#define TL_AGENT_AGENT_H

#include <signal.h>

#include <stdbool.h>
#include <stdint.h>

#include "agent/tsd.h"

/* Constructor / destructor work (called from hooks.c). */
void tl_agent_init(void);
void tl_agent_fini(void);

/* exit()/on_exit: remember the status for the END record. */
void tl_agent_set_exit_status(int status);
/* _exit/_Exit: destructors will not run, so finish the trace now. */
void tl_agent_finish_now(int status);

/* exec: write END (TL_END_EXEC) and mark the file (then call
 * tl_agent_exec_failed if the exec returns). true = failure: nothing done
 * (not recording, or a vfork child: another pid sharing our memory). */
bool tl_agent_exec_begin(void);
void tl_agent_exec_failed(void);
/* "TENSORLEAK_EXEC_SEQ=PID:N" for the next image of this pid. */
const char *tl_agent_exec_env(void);

/* For the lineage API (api.c): */
/* TENSORLEAK_FINGERPRINT_MIN in bytes. */
uint64_t tl_agent_fingerprint_min(void);
/* Path of the trace being written, or NULL when not recording. */
const char *tl_agent_trace_path(void);
/* TENSORLEAK_DISABLE was set (valid after tl_agent_init). */
bool tl_agent_disabled(void);

/* The real sigaction, resolved with dlsym(RTLD_NEXT) on first use (guarded). */
typedef int (*tl_agent_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
tl_agent_sigaction_fn tl_agent_real_sigaction(void);

/* The real exit(), resolved with dlsym(RTLD_NEXT). */
typedef void (*tl_exit_fn)(int) __attribute__((noreturn));
tl_exit_fn tl_agent_real_exit(void);

#endif /* TL_AGENT_AGENT_H */
