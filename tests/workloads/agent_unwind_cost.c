/* agent_unwind_cost.c - allocations under deep stacks of many functions.
 * Run by tests/integration/agent_unwind_cost.sh.
 *
 * 256 functions call one another in a ring; each allocation is made 60 calls
 * down from one of them, three times over, so the agent's unwind cache
 * fills each stack (a cursor walk, unw_step per frame) and libunwind's
 * 128-entry per-thread frame cache cannot hold the ~256 return addresses:
 * most frames of those walks are looked up again (dwarf_find_proc_info). The
 * program's own sigprocmask calls (SIG_BLOCK of SIGUSR1, BLOCKS of them)
 * must reach the kernel, and SIGUSR1 must be blocked after them. Prints
 * "allocs N" and exits 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define FUNCS  256
#define DEPTH  60
#define ROUNDS 3
#define BLOCKS 10

typedef void *(*step_fn)(unsigned, unsigned);
static step_fn ring[FUNCS];

/* One distinct function (and return address) per index: its own size
 * constant, so that -O2's identical code folding (-fipa-icf; CFLAGS come
 * after the workload's -O0) keeps them apart; no tail call. */
#define STEP(i)                                                                                    \
    static void *step##i(unsigned at, unsigned d)                                                  \
    {                                                                                              \
        void *p = d ? ring[(at + 1) % FUNCS](at + 1, d - 1) : malloc(16 + i % 61);                 \
        __asm__ volatile("" : : "r"(p) : "memory");                                                \
        return p;                                                                                  \
    }
#define STEP4(i)   STEP(i##0) STEP(i##1) STEP(i##2) STEP(i##3)
#define STEP16(i)  STEP4(i##0) STEP4(i##1) STEP4(i##2) STEP4(i##3)
#define STEP64(i)  STEP16(i##0) STEP16(i##1) STEP16(i##2) STEP16(i##3)
#define STEP256(i) STEP64(i##0) STEP64(i##1) STEP64(i##2) STEP64(i##3)
STEP256(1)
#define SET(i)    ring[n++] = step##i;
#define SET4(i)   SET(i##0) SET(i##1) SET(i##2) SET(i##3)
#define SET16(i)  SET4(i##0) SET4(i##1) SET4(i##2) SET4(i##3)
#define SET64(i)  SET16(i##0) SET16(i##1) SET16(i##2) SET16(i##3)
#define SET256(i) SET64(i##0) SET64(i##1) SET64(i##2) SET64(i##3)

int main(void)
{
    unsigned n = 0;
    SET256(1)
    if (n != FUNCS) return 1;
    unsigned allocs = 0;
    for (unsigned r = 0; r < ROUNDS; r++) {
        for (unsigned i = 0; i < FUNCS; i++) {
            void *p = ring[i](i, DEPTH);
            if (!p) return 1;
            free(p);
            allocs++;
        }
    }
    sigset_t usr1, cur;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    for (unsigned i = 0; i < BLOCKS; i++)
        if (sigprocmask(SIG_BLOCK, &usr1, NULL) != 0) return 1;
    if (sigprocmask(SIG_SETMASK, NULL, &cur) != 0 || sigismember(&cur, SIGUSR1) != 1) return 1;
    printf("allocs %u\n", allocs);
    return 0;
}
