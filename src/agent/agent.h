/* agent.h - the agent's state: thread-local guard and cursor, the tracing
 * switch, and the event recorders the hooks call.
 *
 * Rules: every tl_agent_on_* runs with the caller's reentrancy guard raised
 * (TL_GUARD_SCOPE) and never fails the caller's allocation; a record that
 * cannot be written is counted as dropped. No stdio, no getenv after init.
 */
#ifndef TL_AGENT_AGENT_H
#define TL_AGENT_AGENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/writer.h"
#include "common/trace_format.h"

struct tl_counters;

/* Per-thread state. Starts valid as static zero (guard 0, no cursor), so a
 * hook that runs before the constructor or in a brand-new thread is fine. */
typedef struct tl_tsd {
    int guard;                 /* > 0: we are inside the agent; hooks pass through */
    tl_wcursor_t cur;          /* this thread's chunk in the current trace */
    struct tl_counters *slot;  /* this thread's counters (outlive the thread) */
} tl_tsd_t;

extern __thread tl_tsd_t tl_tsd __attribute__((tls_model("initial-exec")));

enum {
    TL_AGENT_OFF = 0,       /* before init, disabled, or no trace file */
    TL_AGENT_ON = 1,        /* recording */
    TL_AGENT_FINISHING = 2, /* the END record is being written */
    TL_AGENT_DONE = 3,      /* finished; hooks pass through */
};
extern atomic_int tl_agent_state;

static inline bool tl_agent_recording(void)
{
    return atomic_load_explicit(&tl_agent_state, memory_order_relaxed) == TL_AGENT_ON;
}

static inline void tl_guard_drop(int *unused)
{
    (void)unused;
    tl_tsd.guard--;
}

/* Raise the reentrancy guard for the rest of the scope; dropped on every
 * exit, C++ exceptions unwinding through us included (-fexceptions). */
#define TL_GUARD_SCOPE                                                                             \
    int tl_guard_tok_ __attribute__((cleanup(tl_guard_drop), unused)) = (tl_tsd.guard++, 0)

/* Constructor / destructor work (called from hooks.c). */
void tl_agent_init(void);
void tl_agent_fini(void);

/* Events. kind is a tl_kind_t; ptr non-NULL; size as requested. */
void tl_agent_on_alloc(uint64_t kind, const void *ptr, size_t size);
void tl_agent_on_free(uint64_t kind, const void *ptr);
void tl_agent_on_realloc(const void *old_ptr, const void *new_ptr, size_t size);

/* exit()/on_exit: remember the status for the END record. */
void tl_agent_set_exit_status(int status);
/* _exit/_Exit: destructors will not run, so finish the trace now. */
void tl_agent_finish_now(int status);

/* exec: write END (TL_END_EXEC) and mark the file; returns true when it did
 * (then call tl_agent_exec_failed if the exec returns). Does nothing in a
 * vfork child (another pid sharing our memory). */
bool tl_agent_exec_begin(void);
void tl_agent_exec_failed(void);
/* "TENSORLEAK_EXEC_SEQ=PID:N" for the next image of this pid. */
const char *tl_agent_exec_env(void);

/* Lineage API support (api.c). Call with the guard raised, and the others
 * only after tl_agent_api_begin returned true (recording; this thread bound
 * to the trace). */
bool tl_agent_api_begin(void);
/* Id of the caller's stack (Python frames merged), written if new. */
uint64_t tl_agent_api_stack(void);
/* One lineage-family record into this thread's chunk (dropped: counted). */
void tl_agent_api_record(tl_rec_type_t type, const uint64_t *ints, const char *str, size_t len);
/* A MARK record. true = dropped. */
bool tl_agent_api_mark(uint64_t id, const char *name, size_t len);
/* TENSORLEAK_FINGERPRINT_MIN in bytes. */
uint64_t tl_agent_fingerprint_min(void);
/* Path of the trace being written, or NULL when not recording. */
const char *tl_agent_trace_path(void);
/* TENSORLEAK_DISABLE was set (valid after tl_agent_init). */
bool tl_agent_disabled(void);

/* The real exit(), resolved with dlsym(RTLD_NEXT). */
typedef void (*tl_exit_fn)(int) __attribute__((noreturn));
tl_exit_fn tl_agent_real_exit(void);

#endif /* TL_AGENT_AGENT_H */
