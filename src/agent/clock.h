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

#endif /* TL_AGENT_CLOCK_H */
