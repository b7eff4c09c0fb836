/* tsd.h - the agent's per-thread state, its reentrancy guard and the
 * tracing switch: what every module of the agent and every hook reads.
 *
 * The thread-local state starts valid as static zero (guard 0, no cursor,
 * no counter slot), so a hook that runs before the constructor or in a
 * brand-new thread is fine. Header of data only: it includes only types
 * (clock.h's tl_clock_reuse_t, wcursor.h's tl_wcursor_t), never a module
 * it calls; its guard drop calls endsig (declared here, below).
 */
#ifndef TL_AGENT_TSD_H
#define TL_AGENT_TSD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/clock.h"
#include "agent/wcursor.h"

struct tl_counters;

/* Per-thread state (initial-exec TLS: no allocation on first touch). */
typedef struct tl_tsd {
    int guard;                /* > 0: we are inside the agent; hooks pass through */
    bool sample_ready;        /* sample_left holds a drawn interval */
    bool sample_hit;          /* the fast path just counted a sampled block */
    int64_t sample_left;      /* bytes until this thread's next sample */
    uint64_t rng;             /* xorshift state of the sampler */
    tl_wcursor_t cur;         /* this thread's chunk in the current trace */
    struct tl_counters *slot; /* this thread's counters (outlive the thread) */
    tl_clock_reuse_t clk;     /* `all` mode's event clock (clock.h, tl_clock_event) */
} tl_tsd_t;

extern __thread tl_tsd_t tl_tsd __attribute__((tls_model("initial-exec")));

enum {
    TL_AGENT_OFF = 0,       /* before init, disabled, or no trace file */
    TL_AGENT_ON = 1,        /* recording */
    TL_AGENT_FINISHING = 2, /* the END record is being written */
    TL_AGENT_DONE = 3,      /* finished; hooks pass through */
};
/* The tracing switch: written by the lifecycle (agent.c), read by all. */
extern atomic_int tl_agent_state;

static inline bool tl_agent_recording(void)
{
    return atomic_load_explicit(&tl_agent_state, memory_order_relaxed) == TL_AGENT_ON;
}

/* A fatal SIGTERM that came while a thread was inside the agent (endsig.h):
 * its number until the first guard drop outside the agent ends the trace
 * and re-raises it (tl_endsig_run_deferred), else 0. */
extern atomic_int tl_endsig_deferred;
void tl_endsig_run_deferred(void);

static inline void tl_guard_drop(int *unused)
{
    (void)unused;
    if (--tl_tsd.guard == 0 &&
        __builtin_expect(atomic_load_explicit(&tl_endsig_deferred, memory_order_relaxed), 0))
        tl_endsig_run_deferred();
}

/* Raise the reentrancy guard for the rest of the scope; dropped on every
 * exit, C++ exceptions unwinding through us included (-fexceptions). */
#define TL_GUARD_SCOPE                                                                             \
    int tl_guard_tok_ __attribute__((cleanup(tl_guard_drop), unused)) = (tl_tsd.guard++, 0)

#endif /* TL_AGENT_TSD_H */
