/* clock.h - the agent's event clock: CLOCK_MONOTONIC nanoseconds, read from
 * the TSC where the CPU has an invariant one (constant_tsc + nonstop_tsc).
 *
 * Why it keeps cross-thread order (docs/trace-format.md, "Time"): the TSC is
 * one counter for all cores (invariant TSC, which the kernel also uses as
 * its clocksource); `lfence; rdtsc` reads it only after every earlier
 * instruction of this thread completed, so an ALLOC timed after mallocx
 * returned a block reads a later value than the FREE (timed before the
 * block was released) of the thread that released it. Conversion to ns is
 * one multiply and shift with a factor calibrated at init against
 * CLOCK_MONOTONIC (error < 1e-4). Without an invariant TSC, clock_gettime.
 * Thread-safe: read-only after tl_clock_init.
 */
#ifndef TL_AGENT_CLOCK_H
#define TL_AGENT_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef struct tl_clock {
    bool tsc;      /* use the TSC */
    uint64_t tsc0; /* TSC at calibration */
    uint64_t ns0;  /* CLOCK_MONOTONIC ns at tsc0 */
    uint64_t mult; /* ns per tick, << 32 */
} tl_clock_t;

extern tl_clock_t tl_clock;

/* Calibrate (about 0.5 ms of spinning when the TSC is used). force_syscall:
 * always clock_gettime (TENSORLEAK_CLOCK=monotonic). Call once, before
 * threads record; again in a fork child is not needed. */
void tl_clock_init(bool force_syscall);

static inline uint64_t tl_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t tl_clock_now(void)
{
    if (__builtin_expect(tl_clock.tsc, 1)) {
        __builtin_ia32_lfence();
        uint64_t d = __builtin_ia32_rdtsc() - tl_clock.tsc0;
        return tl_clock.ns0 + (uint64_t)(((unsigned __int128)d * tl_clock.mult) >> 32);
    }
    return tl_clock_mono_ns();
}

/* The kernel's tick: CLOCK_MONOTONIC_COARSE (the time at the last timer
 * interrupt, 1-4 ms apart; a vDSO read without the TSC), as one number that
 * changes when a tick passes. */
static inline uint64_t tl_clock_tick(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* `all` mode's time of a malloc-family ALLOC or FREE (docs/trace-format.md,
 * "Time"), per thread. A fenced TSC read costs ~45 ns in a KVM guest, two
 * per malloc/free pair. An event that follows another thread's event at the
 * same address (foreign: the shadow byte's tag, blocks.h) needs it: that is
 * the cross-thread order of address reuse. Any other event is ordered after
 * this thread's earlier records by their order in its chunk, so it may take
 * the time of this thread's last fenced read, no later than now: while the
 * kernel's tick has not moved, and at most TL_CLOCK_REUSE events in a row. */
#define TL_CLOCK_REUSE 64u
typedef struct tl_clock_reuse {
    uint64_t fine; /* the last fenced read (tl_clock_now) */
    uint64_t tick; /* tl_clock_tick when it was checked last */
    uint32_t left; /* events that may still reuse fine; 0 = read again */
} tl_clock_reuse_t;

static inline uint64_t tl_clock_event(tl_clock_reuse_t *r, bool foreign)
{
    if (!foreign && r->left) {
        uint64_t tick = tl_clock_tick();
        if (tick == r->tick) {
            r->left--;
            return r->fine;
        }
        r->tick = tick;
    }
    r->left = TL_CLOCK_REUSE;
    return r->fine = tl_clock_now();
}

#endif /* TL_AGENT_CLOCK_H */
