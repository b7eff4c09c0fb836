/* hooks_proc.c - the interposed process entry points: exit and its
 * variants, the exec family, sigaction/signal/sigprocmask and mmap/munmap, beside
 * hooks.c's malloc family and nothing else. Same rules as hooks.c (hooks.h);
 * none of these allocates (the exec hooks may run in a vfork child).
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/config.h"
#include "agent/endsig.h"
#include "agent/follow.h"
#include "agent/hooks.h"
#include "agent/leakscan.h"
#include "agent/shm.h"
#include "agent/unwinder.h"
#include "agent/vm.h"

/* --- process end and exec --- */

TL_EXPORT void exit(int status)
{
    if (!tl_tsd.guard) tl_agent_set_exit_status(status);
    tl_exit_fn real = tl_agent_real_exit();
    if (real) real(status);
    syscall(SYS_exit_group, status);
    for (;;)
        ;
}

static void __attribute__((noreturn)) exit_now(int status)
{
    if (!tl_tsd.guard) tl_agent_finish_now(status); /* destructors will not run */
    for (;;)
        syscall(SYS_exit_group, status);
}

TL_EXPORT void _exit(int status)
{
    exit_now(status);
}

TL_EXPORT void _Exit(int status)
{
    exit_now(status);
}

/* glibc's quick_exit runs the at_quick_exit handlers, then its internal
 * _exit, which no hook sees: the status is kept here and the trace ends in
 * the agent's own at_quick_exit handler, registered first so it runs last. */
TL_EXPORT void quick_exit(int status)
{
    if (!tl_tsd.guard) tl_agent_set_exit_status(status);
    void (*real)(int);
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (void (*)(int))dlsym(RTLD_NEXT, "quick_exit");
    }
    if (real) real(status);
    exit_now(status); /* no quick_exit in libc: end as _exit would */
}

/* Room for a new environment on the caller's stack; a bigger one is
 * mapped. */
#define ENV_ENTRIES 256

typedef struct env_space {
    char *v[ENV_ENTRIES];
    void *map;
    size_t map_bytes;
} env_space_t;

/* A vfork child's mapping of a big environment: made in the parent's
 * memory, it stays there after the exec. The thread that vforked (the
 * same thread-local storage) unmaps it at its next exec hook, by then
 * garbage: one mapping a thread at most. */
static __thread struct {
    void *map;
    size_t bytes;
} vfork_env __attribute__((tls_model("initial-exec")));

/* envp as the exec gives it (follow.h: the run's LD_PRELOAD and
 * TENSORLEAK_* where envp lacks them; TENSORLEAK_EXEC_SEQ = seq when seq),
 * in s, or mapped; envp itself when it lacks nothing or there is no
 * memory. vfork_child: this may run in one (the exec hooks' seq is NULL
 * there; also when the agent is off): a mapping is then left for the
 * thread's next call. Release with env_done. */
static char *const *exec_envp(env_space_t *s, char *const envp[], const char *seq, bool vfork_child)
{
    s->map = NULL;
    if (vfork_env.map) { /* an earlier vfork child's, long exec'd */
        tl_vm_unmap(vfork_env.map, vfork_env.bytes);
        vfork_env.map = NULL;
    }
    size_t entries;
    if (!tl_follow_need(&tl_follow, envp, seq, &entries)) return envp;
    if (entries <= ENV_ENTRIES) return tl_follow_envp(&tl_follow, envp, seq, s->v);
    s->map_bytes = entries * sizeof(char *);
    if (tl_vm_map_anon(&s->map, s->map_bytes, false)) {
        s->map = NULL;
        return envp;
    }
    if (vfork_child) {
        vfork_env.map = s->map;
        vfork_env.bytes = s->map_bytes;
    }
    return tl_follow_envp(&tl_follow, envp, seq, s->map);
}

static void env_done(env_space_t *s)
{
    if (!s->map) return;
    if (vfork_env.map == s->map) vfork_env.map = NULL; /* the exec failed: still ours */
    tl_vm_unmap(s->map, s->map_bytes);                 /* errno unchanged */
}

/* What to exec: a path (execve's system call), a descriptor (glibc's
 * fexecve, through real) or a file to look up in PATH (glibc's execvpe,
 * through vpe). */
typedef struct exec_target {
    const char *path;
    int fd;
    int (*real)(int, char *const[], char *const[]);
    int (*vpe)(const char *, char *const[], char *const[]);
} exec_target_t;

static int exec_call(const exec_target_t *to, char *const argv[], char *const envp[])
{
    if (to->vpe) return to->vpe(to->path, argv, envp);
    return to->real ? to->real(to->fd, argv, envp) : (int)syscall(SYS_execve, to->path, argv, envp);
}

/* Exec with TENSORLEAK_EXEC_SEQ set to ours, the trace marked as ending by
 * exec; if the exec fails the program goes on, and so does its trace. */
static int exec_seq(const exec_target_t *to, char *const argv[], char *const envp[])
{
    if (tl_tsd.guard) return exec_call(to, argv, envp);
    const char *seq = tl_agent_exec_env(); /* NULL in a vfork child */
    env_space_t space;
    char *const *env = exec_envp(&space, envp, seq, seq == NULL);
    bool marked = !tl_agent_exec_begin();
    int r = exec_call(to, argv, env);
    int saved = errno;
    if (marked) tl_agent_exec_failed(); /* still running: the trace goes on */
    env_done(&space);
    errno = saved;
    return r;
}

TL_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    const exec_target_t to = {.path = path};
    return exec_seq(&to, argv, envp);
}

/* glibc's execv, execvp and execvpe call its internal __execve, not the
 * execve above: without these the image they replace would end without an
 * END record, and its report would say it was killed. execv and execvp
 * are execve and execvpe of environ, as in glibc. */
TL_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    int (*real)(const char *, char *const[], char *const[]);
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    const exec_target_t to = {.path = file, .vpe = real};
    return exec_seq(&to, argv, envp);
}

TL_EXPORT int execv(const char *path, char *const argv[])
{
    extern char **environ;
    return execve(path, argv, environ);
}

TL_EXPORT int execvp(const char *file, char *const argv[])
{
    extern char **environ;
    return execvpe(file, argv, environ);
}

/* posix_spawn and posix_spawnp: glibc's run their internal __execve in the
 * new process; the environment is settled here, in the caller, for a
 * child of another pid (no TENSORLEAK_EXEC_SEQ). system() and popen() go
 * through glibc's internal posix_spawn with environ: not seen here. */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static int spawn(const char *name, pid_t *pid, const char *file,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                 char *const argv[], char *const envp[])
{
    spawn_fn real;
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (spawn_fn)dlsym(RTLD_NEXT, name);
    }
    if (!real) return ENOSYS;
    if (tl_tsd.guard) return real(pid, file, fa, attr, argv, envp);
    env_space_t space;
    char *const *env = exec_envp(&space, envp, NULL, false);
    int r = real(pid, file, fa, attr, argv, env);
    env_done(&space);
    return r;
}

TL_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn("posix_spawn", pid, path, fa, attr, argv, envp);
}

TL_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn("posix_spawnp", pid, file, fa, attr, argv, envp);
}

/* sigaction and signal: SIGTERM and SIGINT go through the agent's end-point
 * handler while the program leaves them at SIG_DFL, and the program sees SIG_DFL
 * (endsig.h). glibc's signal() calls its internal __sigaction, so it needs
 * its own hook; sigset, sysv_signal and raw rt_sigaction calls simply
 * replace the agent's handler. */
TL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    tl_sigaction_fn real = tl_agent_real_sigaction();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return tl_endsig_sigaction(real, sig, act, old);
}

/* sigprocmask: libunwind's block/restore pairs inside the agent's own
 * unwinds are answered without the kernel (unwinder.h); every other call is
 * glibc's, unchanged. libunwind calls sigprocmask, not pthread_sigmask. */
TL_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *oset)
{
    if (UNLIKELY(tl_unwinder.depth) &&
        !tl_unwinder_sigmask_answer(how, set, oset, (uintptr_t)__builtin_return_address(0)))
        return 0;
    tl_unwinder_sigmask_fn real = tl_unwinder_real_sigprocmask();
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(how, set, oset);
}

TL_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig != SIGTERM && sig != SIGINT) { /* endsig.c's signals */
        sighandler_t (*real)(int, sighandler_t);
        {
            TL_GUARD_SCOPE; /* dlsym may allocate */
            real = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
        }
        if (!real) {
            errno = ENOSYS;
            return SIG_ERR;
        }
        return real(sig, handler);
    }
    if (handler == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    /* glibc's signal() is BSD's: restart, and block the signal in its handler. */
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    if (sigaction(sig, &act, &old) < 0) return SIG_ERR;
    return old.sa_handler;
}

/* fexecve: glibc runs execveat (or __execve on /proc/self/fd/N) itself. */
TL_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    int (*real)(int, char *const[], char *const[]);
    {
        TL_GUARD_SCOPE; /* dlsym may allocate */
        real = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    }
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    const exec_target_t to = {.fd = fd, .real = real};
    return exec_seq(&to, argv, envp);
}

/* The execl family: glibc builds the vector and calls __execve or
 * __execvpe directly; here the vector goes to the hooks above. It lives in
 * an anonymous mapping (no malloc: this may run in a vfork child). After
 * the last argument execle has its envp. */
static char **list_argv(const char *arg0, va_list ap, size_t *map_bytes, char ***envp)
{
    va_list count;
    va_copy(count, ap);
    size_t n = 1;
    while (arg0 && va_arg(count, char *))
        n++;
    va_end(count);
    *map_bytes = (n + 1) * sizeof(char *);
    char **v;
    int err = tl_vm_map_anon((void **)&v, *map_bytes, false);
    if (err) {
        errno = -err; /* execl's own failure: ENOMEM */
        return NULL;
    }
    v[0] = (char *)arg0;
    for (size_t i = 1; arg0 && i < n; i++)
        v[i] = va_arg(ap, char *);
    v[n] = NULL;
    if (arg0) (void)va_arg(ap, char *); /* the terminating NULL */
    if (envp) *envp = va_arg(ap, char **);
    return v;
}

static int list_done(int r, char **argv, size_t map_bytes)
{
    tl_vm_unmap(argv, map_bytes); /* errno unchanged */
    return r;
}

TL_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **argv = list_argv(arg, ap, &map_bytes, NULL);
    va_end(ap);
    if (!argv) return -1; /* errno from mmap (ENOMEM) */
    extern char **environ;
    return list_done(execve(path, argv, environ), argv, map_bytes);
}

TL_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **envp = NULL;
    char **argv = list_argv(arg, ap, &map_bytes, &envp);
    va_end(ap);
    if (!argv) return -1;
    return list_done(execve(path, argv, envp), argv, map_bytes);
}

TL_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    size_t map_bytes;
    char **argv = list_argv(arg, ap, &map_bytes, NULL);
    va_end(ap);
    if (!argv) return -1;
    return list_done(execvp(file, argv), argv, map_bytes);
}

/* mmap and munmap: the program's mappings (jemalloc's among them) are known
 * to the leak scan, which leaves jemalloc's out of its roots (leakscan.h);
 * the agent's own never come here (vm.h). The system call itself, never
 * glibc's wrapper through dlsym (which may allocate, and these run before
 * init). */
TL_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);
    if (r == -1) return MAP_FAILED;
    if (flags & MAP_ANONYMOUS)
        tl_leakscan_on_mmap((void *)r, len, (uintptr_t)__builtin_return_address(0));
    return (void *)r;
}

TL_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

TL_EXPORT int munmap(void *addr, size_t len)
{
    long r = syscall(SYS_munmap, addr, len);
    if (r == 0) {
        tl_leakscan_on_munmap(addr, len);
        tl_shm_on_munmap(addr, len);
        tl_vm_on_munmap(addr, len); /* the program unmapped ours: no longer ours */
    }
    return (int)r;
}
