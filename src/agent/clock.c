/* clock.c - TSC calibration for the event clock (see clock.h). */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/clock.h"

#include <cpuid.h>

tl_clock_t tl_clock;

/* CPUID 0x80000007 EDX bit 8: invariant TSC (constant rate, runs in every
 * C-state, one value across cores). */
static bool invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

void tl_clock_init(bool force_syscall)
{
    tl_clock.tsc = false;
    if (force_syscall || !invariant_tsc()) return;
    /* Two points 0.5 ms apart; each read brackets clock_gettime with TSC
     * reads and takes the middle, so the error is ~20 ns / 0.5 ms. */
    uint64_t t[2], n[2];
    for (int i = 0; i < 2; i++) {
        if (i == 1) {
            while (tl_clock_mono_ns() - n[0] < 500000)
                __builtin_ia32_pause();
        }
        __builtin_ia32_lfence();
        uint64_t a = __builtin_ia32_rdtsc();
        n[i] = tl_clock_mono_ns();
        __builtin_ia32_lfence();
        uint64_t b = __builtin_ia32_rdtsc();
        t[i] = a + (b - a) / 2;
    }
    if (t[1] <= t[0] || n[1] <= n[0]) return;
    tl_clock.mult = (uint64_t)((((unsigned __int128)(n[1] - n[0])) << 32) / (t[1] - t[0]));
    tl_clock.tsc0 = t[1];
    tl_clock.ns0 = n[1];
    tl_clock.tsc = tl_clock.mult != 0;
}
