/* micro_costs.c - unit costs behind the agent's hot path, for BENCHMARKS.md.
 *
 * Build: cc -O2 -g -o micro_costs bench/micro_costs.c -lunwind
 * Prints ns per call of: clock_gettime(CLOCK_MONOTONIC) (one per event in the
 * trace), rdtsc, and unw_backtrace at several stack depths (so the cost per
 * frame is the slope) through a chain of distinct functions, so each frame
 * has its own return address as in a real program. run.sh prints the output
 * under its tables.
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile int sink, guard;
static void *frames[256];

#define NOI __attribute__((noinline, noipa))
static int depth_left, reps;

NOI static int leaf(void)
{
    int n = 0;
    for (int i = 0; i < reps; i++)
        n += unw_backtrace(frames, 256);
    return n / reps;
}

/* f0 .. f31: distinct frames; each calls the next until depth_left runs out. */
#define F(i, next)                                                                                 \
    NOI static int f##i(void)                                                                      \
    {                                                                                              \
        int n = --depth_left > 0 ? next() : leaf();                                                \
        guard++; /* no tail call: the frame stays on the stack */                                  \
        return n;                                                                                  \
    }
F(31, leaf)
F(30, f31) F(29, f30) F(28, f29) F(27, f28) F(26, f27) F(25, f26) F(24, f25) F(23, f24) F(22, f23)
    F(21, f22) F(20, f21) F(19, f20) F(18, f19) F(17, f18) F(16, f17) F(15, f16) F(14, f15)
        F(13, f14) F(12, f13) F(11, f12) F(10, f11) F(9, f10) F(8, f9) F(7, f8) F(6, f7) F(5, f6)
            F(4, f5) F(3, f4) F(2, f3) F(1, f2) F(0, f1)

                static int chain(int depth, int r)
{
    depth_left = depth;
    reps = r;
    return depth > 0 ? f0() : leaf();
}

int main(void)
{
    enum { N = 2000000 };
    struct timespec ts;
    double t0 = now_ns();
    for (int i = 0; i < N; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink += (int)ts.tv_nsec;
    }
    printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns\n", (now_ns() - t0) / N);
    t0 = now_ns();
    for (int i = 0; i < N; i++)
        sink += (int)__rdtsc();
    printf("rdtsc: %.1f ns\n", (now_ns() - t0) / N);
    chain(32, 1000); /* warm libunwind's caches */
    for (int d = 0; d <= 32; d += 8) {
        enum { R = 200000 };
        t0 = now_ns();
        int frames_n = chain(d, R);
        double ns = (now_ns() - t0) / R;
        printf("unw_backtrace: %3d frames %.1f ns (%.1f ns/frame)\n", frames_n, ns, ns / frames_n);
    }
    return 0;
}
