/* agent.h - the agent's state: thread-local guard and cursor, the tracing
 * switch, and the event recorders the hooks call.
 *
 * Rules: every tl_agent_on_* runs with the caller's reentrancy guard raised
 * (TL_GUARD_SCOPE) and never fails the caller's allocation; a record that
 * cannot be written is counted as dropped. No stdio, no getenv after init.
 */
#ifndef TL_AGENT_AGENT_H
#define TL_AGENT_AGENT_H

#include <signal.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"
#include "agent/live.h"
#include "agent/writer.h"
#include "common/trace_format.h"

/* Event counters of one thread. The owner updates its slot with relaxed
 * load + store (plain moves, no contended atomics); the END and COUNTS
 * records sum all slots. Threads past TL_SLOTS share the last slot, which
 * only the slow paths update, with atomic adds. */
typedef struct tl_counters {
    _Atomic uint64_t allocs, frees, storages, dropped; /* records written / lost */
    _Atomic uint64_t frees_all; /* every free of a block (all modes but `all`) */
    /* Every plain allocation by size class c = bit length of the size
     * (class 0: 0 bytes; c: [2^(c-1), 2^c)): how many, and their bytes. */
    _Atomic uint64_t cls_count[TL_REC_COUNT_CLASSES], cls_bytes[TL_REC_COUNT_CLASSES];
} __attribute__((aligned(64))) tl_counters_t;

#define TL_SLOTS 1024
extern tl_counters_t tl_agent_slots[TL_SLOTS];
/* TENSORLEAK_MODE (tl_mode_t), fixed at init. */
extern int tl_agent_mode;
/* TENSORLEAK_STACK_DEPTH, fixed at init. */
extern unsigned tl_agent_stack_depth;

/* Per-thread state. Starts valid as static zero (guard 0, no cursor), so a
 * hook that runs before the constructor or in a brand-new thread is fine. */
typedef struct tl_tsd {
    int guard;           /* > 0: we are inside the agent; hooks pass through */
    bool sample_ready;   /* sample_left holds a drawn interval */
    bool sample_hit;     /* the fast path just counted a sampled block */
    bool force_full;     /* the next block is recorded in full (C++ new under torch) */
    int64_t sample_left; /* bytes until this thread's next sample */
    uint64_t rng;        /* xorshift state of the sampler */
    tl_wcursor_t cur;    /* this thread's chunk in the current trace */
    tl_counters_t *slot; /* this thread's counters (outlive the thread) */
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

static inline void tl_ctr_add(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

static inline unsigned tl_size_class(uint64_t size)
{
    return size ? 64u - (unsigned)__builtin_clzll(size) : 0u;
}

/* Outside `all` mode, the hooks' fast path for a plain allocation of size
 * bytes (guard not raised, recording): counts it and draws it against the
 * thread's sampling countdown. True: nothing more to do (not recorded).
 * False: call tl_agent_on_alloc, which records it (sampled here, big, or
 * a thread's first call). No lock, no atomic read-modify-write. */
static inline bool tl_agent_alloc_unrecorded(size_t size)
{
    tl_counters_t *s = tl_tsd.slot;
    if (tl_agent_mode == TL_MODE_ALL || !s || s == &tl_agent_slots[TL_SLOTS - 1] ||
        !tl_tsd.sample_ready || size >= TL_CONFIG_BIG_MIN || tl_tsd.force_full)
        return false;
    unsigned c = tl_size_class(size);
    tl_ctr_add(&s->cls_count[c], 1);
    tl_ctr_add(&s->cls_bytes[c], size);
    if ((tl_tsd.sample_left -= (int64_t)size) > 0) return true;
    tl_tsd.sample_hit = true;
    return false;
}

/* Set once the first PyTorch storage was recorded outside `all` mode: from
 * then on C++ operator new blocks are recorded in full (TL_KIND_NEW_FULL). */
extern atomic_bool tl_agent_cxx_full;

/* Outside `all` mode, the fast path of a free of p (non-NULL): true when p
 * is certainly not a recorded block (nothing to write). */
static inline bool tl_agent_free_unrecorded(const void *p)
{
    tl_counters_t *s = tl_tsd.slot;
    if (tl_agent_mode == TL_MODE_ALL || !s || s == &tl_agent_slots[TL_SLOTS - 1] ||
        tl_live_maybe(p))
        return false;
    tl_ctr_add(&s->frees_all, 1);
    return true;
}

/* Constructor / destructor work (called from hooks.c). */
void tl_agent_init(void);
void tl_agent_fini(void);

/* Events. kind is a tl_kind_t; ptr non-NULL; size as requested. */
void tl_agent_on_alloc(uint64_t kind, const void *ptr, size_t size);
/* `all` mode, with the stack the hook captured itself (tl_stack_capture_inline):
 * frames[0..n) innermost first, skip ranges already dropped. Leaves errno
 * to the caller. */
void tl_agent_on_alloc_stack(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                             size_t n);
void tl_agent_on_free(uint64_t kind, const void *ptr);
void tl_agent_on_realloc(const void *old_ptr, const void *new_ptr, size_t size);

/* The exact per-class counters summed over all threads: count[] and
 * bytes[] hold TL_REC_COUNT_CLASSES entries; *frees every free seen. */
void tl_agent_counts(uint64_t *count, uint64_t *bytes, uint64_t *frees);
/* n records could not be written (checkpoints). */
void tl_agent_count_dropped(uint64_t n);

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

/* The real sigaction, resolved with dlsym(RTLD_NEXT) on first use (guarded). */
typedef int (*tl_agent_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
tl_agent_sigaction_fn tl_agent_real_sigaction(void);

/* The real exit(), resolved with dlsym(RTLD_NEXT). */
typedef void (*tl_exit_fn)(int) __attribute__((noreturn));
tl_exit_fn tl_agent_real_exit(void);

#endif /* TL_AGENT_AGENT_H */
