/* endsig.c - the SIGTERM and SIGINT end point (see endsig.h).
 *
 * Runs in signal context and inside the program's sigaction calls: atomics
 * only, no locks, no malloc, no stdio.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/endsig.h"

#include "agent/modules.h"
#include "agent/tsd.h"
#include "agent/vm.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <time.h>
#include <unistd.h>

/* The signals taken (endsig.h), each in its slot (slot_of). */
#define NSIGS 2
static const int sigs[NSIGS] = {SIGTERM, SIGINT};

/* Per slot, while the agent's handler stands in for the program's SIG_DFL
 * (whether it does is asked of the kernel, tl_endsig_sigaction): the
 * program's view, SIG_DFL with these flags and mask. */
static atomic_int view_flags[NSIGS];
static sigset_t view_mask[NSIGS]; /* written by the program's rare sigaction calls only */
/* The flags libc's sigaction adds on its way to the kernel (glibc on x86-64:
 * SA_RESTORER), which the kernel then reports: added to a view the program
 * set, as the kernel would have shown them. Learnt at the first install. */
static atomic_int added_flags;
static tl_sigaction_fn real_sigaction;
static bool (*end_trace)(int, bool);
atomic_int tl_endsig_deferred; /* tsd.h */
/* When the first of the signals arrived (CLOCK_MONOTONIC, ns; 0: none). */
static _Atomic int64_t ending_since;
/* A repeat sooner than this after the first is the same signal twice, not
 * a user's second Ctrl-C: `timeout` signals its process group (the
 * program's processes and `tensorleak run`, which forwards it to the
 * command), Slurm and Kubernetes a job's every process. */
#define REPEAT_NS INT64_C(1000000000)

/* Stack the END path (end_trace) may take below the handler's frame. In a
 * 16 KiB thread on x86-64 (tests/integration/agent_sigterm_stack.sh) it took
 * between 1.7 and 2.7 KiB; 4 KiB leaves a margin for other builds. */
#define END_STACK_NEED 4096
/* With the leak scan before the END: on top of the END's, its registers'
 * jmp_buf, its frames (leakscan.c keeps its tables off the stack) and the
 * 4 KiB buffer deadstacks.c reads each thread's syscall file into. */
#define SCAN_STACK_NEED (END_STACK_NEED + 8192)
/* Probe step: at most the smallest page size, so a guard page in the range
 * is always hit. */
#define PROBE_STEP 4096

static int slot_of(int sig)
{
    for (int i = 0; i < NSIGS; i++)
        if (sigs[i] == sig) return i;
    return -1;
}

/* Whether the need bytes below here are readable: one
 * process_vm_readv(2) of one byte per page, which fails with EFAULT (no
 * fault) at a guard page or unmapped memory. Async-signal-safe (a system
 * call). Reading our own memory needs no ptrace permission; where the call
 * is refused otherwise (ENOSYS, EPERM under a seccomp filter), true: the
 * END is written as before the check. A thread stack made without a guard
 * page that borders other writable memory passes the check. */
static bool stack_has_room(size_t need)
{
    enum { N = SCAN_STACK_NEED / PROBE_STEP + 1 };
    int n = (int)(need / PROBE_STEP) + 1;
    char byte;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    struct iovec local[N], remote[N];
    for (int i = 0; i < n; i++) {
        size_t down = (size_t)i * PROBE_STEP;
        if (down > need) down = need;
        remote[i].iov_base = (void *)(here - (i == n - 1 ? need : down));
        remote[i].iov_len = 1;
        local[i].iov_base = &byte;
        local[i].iov_len = 1;
    }
    int saved = errno;
    ssize_t got = process_vm_readv(getpid(), local, (unsigned long)n, remote, (unsigned long)n, 0);
    bool refused = got < 0 && errno != EFAULT;
    errno = saved;
    return got == n || refused;
}

/* Why the room check, and not an alternate stack of the agent's: the
 * program would see that stack through sigaltstack(NULL, &old) and its own
 * altstack would have to be kept apart from ours. With too little room the
 * END is skipped (the trace then ends without one, as at SIGKILL) and the
 * signal re-raised at once, so the process dies of the signal as without the
 * agent. The kernel's signal frame (up to about 3.4 KiB with AVX-512,
 * sysconf(_SC_MINSIGSTKSZ)) lands on the thread's stack before any handler
 * runs: a thread with less room than that still dies of SIGSEGV, where the
 * default action alone needs no frame. */
/* The signal's default action back (the kernel's, not the program's view,
 * which stays SIG_DFL). */
static void give_back(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    real_sigaction(sig, &dfl, NULL);
}

/* Die of sig: its default action given back, the signal re-raised (pending
 * while a handler blocks it) and unblocked. */
static void die_of(int sig)
{
    give_back(sig);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig);
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
}

/* End the trace for sig (unless the stack is too short) and die of it
 * (die_of). true = failure (nothing done): end_trace found this thread
 * inside the agent. */
static bool end_and_raise(int sig)
{
    if (end_trace && stack_has_room(END_STACK_NEED) &&
        end_trace(sig, stack_has_room(SCAN_STACK_NEED)))
        return true;
    die_of(sig);
    return false;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1;
}

/* libc's loaded range (the object that holds getppid), learnt at init:
 * tl_modules_range_of (dl_iterate_phdr) is not async-signal-safe. */
static uintptr_t libc_lo, libc_hi;
/* glibc's signal return trampoline (sa_restorer: a signal frame's first
 * word), learnt at the first install; 0: unknown. */
static uintptr_t restorer;

/* Whether the thread was blocked in a system call of libc's: pc in libc,
 * after x86-64's `syscall` (0f 05). A system call the program made inline
 * (its own code) may keep live pointers in any register the kernel
 * preserves. Read with tl_vm_read, which fails rather than faults
 * (async-signal-safe). */
static bool after_syscall(uint64_t pc)
{
    if (pc < libc_lo || pc >= libc_hi) return false;
    unsigned char op[2];
    return tl_vm_read(pc - 2, op, 2) && op[0] == 0x0f && op[1] == 0x05;
}

static uint64_t int_sp, int_regs[32];
static size_t int_nregs;

static void set_interrupted(uint64_t sp, const uint64_t *regs, size_t nregs)
{
    int_nregs = sp ? (nregs < 32 ? nregs : 32) : 0;
    for (size_t i = 0; i < int_nregs; i++)
        int_regs[i] = regs[i];
    int_sp = sp;
}

uint64_t tl_endsig_interrupted(const uint64_t **regs, size_t *n)
{
    if (int_sp) {
        *regs = int_regs;
        *n = int_nregs;
    }
    return int_sp;
}

/* The leak scan of the END reads this thread's stack from where the
 * signal interrupted it, with its registers as roots (leakscan.h): all the
 * general ones when it ran the program's code; when it was blocked in a
 * system call (pause, sleep, a wait: a SIGTERM'd process, mostly) the
 * callee-saved ones alone (rbx, rbp, r12 to r15), as at an exit, where the
 * scan's jmp_buf holds only those: the caller-saved ones are dead across
 * the libc call (the C ABI) and hold stale words, such as memset's last
 * destination inside a block the program then lost ("possibly lost"). */
static void interrupted(void *uc)
{
    const ucontext_t *u = uc;
    if (!u) return;
#if defined(__x86_64__)
    const greg_t *g = u->uc_mcontext.gregs;
    static const int callee[] = {REG_RBX, REG_RBP, REG_R12, REG_R13, REG_R14, REG_R15};
    uint64_t regs[REG_RCX + 1];
    size_t n = 0;
    if (after_syscall((uint64_t)g[REG_RIP]))
        for (size_t i = 0; i < sizeof callee / sizeof callee[0]; i++)
            regs[n++] = (uint64_t)g[callee[i]];
    else
        for (int i = REG_R8; i <= REG_RCX; i++) /* the 15 general registers but rsp */
            regs[n++] = (uint64_t)g[i];
    set_interrupted((uint64_t)g[REG_RSP], regs, n);
#elif defined(__aarch64__)
    set_interrupted(u->uc_mcontext.sp, u->uc_mcontext.regs, 31);
#endif
}

/* A signal that interrupted the agent (a malloc hook mid-record, the
 * Python end point's walk) is held until the agent is left, at the next
 * guard drop to 0 (tsd.h): dying there would leave the trace without its
 * END, so a Pool's terminate() would make its workers' every live block a
 * leak. A second signal while the END is written (the leak scan: seconds
 * in a big process) kills at once, unless it came within REPEAT_NS of the
 * first: then it is the first one again (another thread takes it and goes
 * on), which killed the process before its END (a Pool's main process
 * under `timeout ... tensorleak check`: 5 runs in 6). */
static void on_term(int sig, siginfo_t *info, void *uc)
{
    (void)info;
    int saved = errno;
    int64_t now = now_ns(), none = 0;
    if (!atomic_compare_exchange_strong(&ending_since, &none, now)) {
        if (now - none < REPEAT_NS) {
            errno = saved;
            return;
        }
        die_of(sig);
        errno = saved;
        return;
    }
    interrupted(uc);
    if (end_and_raise(sig)) {
        set_interrupted(0, NULL, 0);
        atomic_store(&tl_endsig_deferred, sig);
    }
    errno = saved; /* only reached if the default action did not end us */
}

void tl_endsig_run_deferred(void)
{
    int sig = atomic_exchange(&tl_endsig_deferred, 0);
    if (!sig) return;
    int saved = errno;
    if (end_and_raise(sig)) atomic_store(&tl_endsig_deferred, sig);
    errno = saved;
}

bool tl_endsig_ending(void)
{
    return atomic_load_explicit(&ending_since, memory_order_relaxed) != 0;
}

void tl_endsig_fork_child(void)
{
    atomic_store(&tl_endsig_deferred, 0); /* the parent's, not this process's */
    atomic_store(&ending_since, 0);
}

static int install(int sig)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_sigaction = on_term;
    ours.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&ours.sa_mask);
    struct sigaction now;
    if (real_sigaction(sig, &ours, NULL) != 0) return -1;
    if (real_sigaction(sig, NULL, &now) == 0) {
        atomic_store(&added_flags, now.sa_flags & ~ours.sa_flags);
        if (now.sa_restorer) restorer = (uintptr_t)now.sa_restorer;
    }
    return 0;
}

static size_t put_range(uint64_t (*d)[2], size_t n, uint64_t lo, uint64_t hi)
{
    d[n][0] = lo;
    d[n][1] = hi;
    return n + 1;
}

size_t tl_endsig_dead_ranges(uint64_t lo, uint64_t hi, uint64_t (*dead)[2], size_t cap)
{
    size_t n = 0;
#if defined(__x86_64__)
    for (uint64_t a = lo; restorer && a + 8 + sizeof(ucontext_t) <= hi && n + 3 <= cap; a += 8) {
        if (*(const uint64_t *)(uintptr_t)a != restorer) continue;
        const ucontext_t *u = (const ucontext_t *)(uintptr_t)(a + 8);
        const greg_t *g = u->uc_mcontext.gregs;
        uint64_t sp = (uint64_t)g[REG_RSP];
        if (sp <= a || sp > hi || !after_syscall((uint64_t)g[REG_RIP])) continue;
        /* all but the callee-saved registers' slots: r12 to r15, rbp, rbx */
        uint64_t r12 = (uintptr_t)&g[REG_R12], rdi = (uintptr_t)&g[REG_RDI];
        uint64_t rbp = (uintptr_t)&g[REG_RBP], rdx = (uintptr_t)&g[REG_RDX];
        n = put_range(dead, n, a, r12);
        n = put_range(dead, n, rdi, rbp);
        n = put_range(dead, n, rdx, sp);
        a = sp - 8; /* on from the interrupted sp */
    }
#else
    (void)lo, (void)hi, (void)dead, (void)cap;
#endif
    return n;
}

void tl_endsig_init(tl_sigaction_fn real, bool (*on_signal)(int sig, bool scan_room))
{
    if (!real) return;
    real_sigaction = real;
    end_trace = on_signal;
    tl_modules_range_of((uintptr_t)&getppid, &libc_lo, &libc_hi); /* 0, 0: not found */
    for (int i = 0; i < NSIGS; i++) {
        struct sigaction cur;
        if (real(sigs[i], NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) ||
            cur.sa_handler != SIG_DFL)
            continue; /* the program's handler, or SIG_IGN (a background job's SIGINT) */
        atomic_store(&view_flags[i], cur.sa_flags);
        view_mask[i] = cur.sa_mask;
        install(sigs[i]);
    }
}

/* The view of slot i after the program set act (SIG_DFL) while ours stands. */
static void set_view(int i, const struct sigaction *act)
{
    atomic_store(&view_flags[i], act->sa_flags | atomic_load(&added_flags));
    view_mask[i] = act->sa_mask;
}

int tl_endsig_sigaction(tl_sigaction_fn real, int sig, const struct sigaction *act,
                        struct sigaction *old)
{
    int i = slot_of(sig);
    if (i < 0 || !real_sigaction) return real(sig, act, old);
    /* Ours is what the kernel holds, never a flag of ours: a vfork child
     * shares this memory, not the signal table (CPython's subprocess
     * resets SIGINT there: the parent then took its own SIG_DFL for a
     * view, and died in its Python handler after finalizing), and sigset,
     * sysv_signal or a raw rt_sigaction replace ours unseen. */
    struct sigaction cur;
    if (real(sig, NULL, &cur) != 0) return -1;
    bool ours = (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_term;
    bool dfl = act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
    if (!ours) {
        /* The program's handler (or SIG_IGN) stands; SIG_DFL gives the signal back to us. */
        if (!dfl) return real(sig, act, old);
        if (install(sig) != 0) return real(sig, act, old);
        set_view(i, act);
        if (old) *old = cur;
        return 0;
    }
    struct sigaction view;
    memset(&view, 0, sizeof view);
    view.sa_handler = SIG_DFL;
    view.sa_flags = atomic_load(&view_flags[i]);
    view.sa_mask = view_mask[i];
    if (act && !dfl) {
        if (real(sig, act, NULL) != 0) return -1; /* EINVAL etc.: ours stays */
    } else if (act) {
        set_view(i, act);
    }
    if (old) *old = view;
    return 0;
}
