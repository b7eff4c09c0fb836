/* agent.c - the agent's lifecycle: init from the environment, the trace's
 * opening records, its end (exit, quick_exit, _exit, SIGTERM, SIGINT), fork and exec.
 * The events themselves are recorded by record.c.
 *
 * Runs inside someone else's program: no stdio, getenv only in init, messages
 * through write(2). Everything here runs with the reentrancy guard raised.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "agent/checkpoint.h"
#include "agent/clock.h"
#include "agent/config.h"
#include "agent/cudart_static.h"
#include "agent/endsig.h"
#include "agent/env.h"
#include "agent/live.h"
#include "agent/modules.h"
#include "agent/pyframes.h"
#include "agent/record.h"
#include "agent/record_scan.h"
#include "agent/stack.h"
#include "agent/vm.h"
#include "common/notes.h"
#include "common/trace_format.h"

/* The writer lives in record.c, next to the hot path that uses it. */
#define writer (*tl_record_writer())

static tl_config_t cfg;
static uint64_t self_pid, self_ppid;
static uint32_t exec_seq;
static atomic_int exit_status = -1;
static char cwd[4096];
/* The host name (uname's nodename, '/' as '_'): %h of the output pattern
 * and the OPTIONS key "host"; "" when unknown. */
static char host[sizeof(((struct utsname *)0)->nodename)];
static char exe[4096];
static char trace_file[TL_CONFIG_PATH_MAX]; /* the open trace's path, for the API */
static char cmdline[16384];
static const char *argv_v[TL_REC_MAX_ARGV];
static size_t argc_v;
static char exec_env[96]; /* in environ via tl_env_put: rewritten in place after fork */
static char depth_str[8];
static char sample_str[24], big_str[24];
static _Atomic(void *) real_exit, real_sigaction; /* real_fn() */

static uint64_t now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
    return tl_clock_now();
}

/* Decimal v into buf (at least 21 bytes). */
static void fmt_dec(char *buf, uint64_t v)
{
    char tmp[24];
    size_t nd = 0;
    do
        tmp[nd++] = (char)('0' + v % 10);
    while (v /= 10);
    for (size_t i = 0; i < nd; i++)
        buf[i] = tmp[nd - 1 - i];
    buf[nd] = '\0';
}

/* s with each control byte (< 0x20, 0x7f) as \xNN, into buf[0, n): a
 * path in a note (TENSORLEAK_OUTPUT, the cwd) may carry terminal escapes,
 * which must not reach the program's terminal raw. Cut when it is full. */
static const char *say_escaped(const char *s, char *buf, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (; s && *s && o + 5 <= n; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != 0x7f) {
            buf[o++] = (char)ch;
            continue;
        }
        buf[o++] = '\\';
        buf[o++] = 'x';
        buf[o++] = hex[ch >> 4];
        buf[o++] = hex[ch & 15];
    }
    buf[o] = '\0';
    return buf;
}

/* One line: to the CLI under a session, else on stderr (common/notes.h,
 * tl_notes_say), without stdio or allocation: a few words of stack (this
 * may run on a small thread stack, after fork), the escaped copies of b
 * and c and the note in static buffers (only init and a fork child, one
 * thread each, say anything but constants). */
static void say(const char *a, const char *b, const char *c)
{
    static char eb[4 * TL_CONFIG_PATH_MAX + 1], ec[1024], msg[TL_NOTES_MAX];
    b = say_escaped(b, eb, sizeof eb);
    c = say_escaped(c, ec, sizeof ec);
    tl_notes_say(cfg.session, self_pid ? self_pid : (uint64_t)getpid(), msg, sizeof msg, a, b, c);
}

static void read_cmdline(void)
{
    argc_v = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof cmdline - 1 && (r = read(fd, cmdline + n, sizeof cmdline - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    cmdline[n] = '\0';
    for (size_t i = 0; i < n && argc_v < TL_REC_MAX_ARGV;) {
        argv_v[argc_v++] = cmdline + i;
        i += strlen(cmdline + i) + 1;
    }
}

/* Open this process's trace and write its first records. true = failure. */
static bool trace_open(void)
{
    /* Static: only init and a fork child (one thread each) open a trace,
     * and the child may run on a thread's small stack. */
    static char path[TL_CONFIG_PATH_MAX];
    int err = -EEXIST;
    for (unsigned uniq = 0; uniq < 10000 && err == -EEXIST; uniq++) {
        if (tl_config_expand(cfg.output, cwd[0] ? cwd : NULL, self_pid, host[0] ? host : NULL, uniq,
                             path, sizeof path)) {
            err = -ENAMETOOLONG;
            break;
        }
        tl_writer_hdr_t hdr = {.pid = self_pid,
                               .ppid = self_ppid,
                               .start_realtime_ns = now_ns(CLOCK_REALTIME),
                               .start_mono_ns = mono(),
                               .session = cfg.session,
                               .exec_seq = exec_seq};
        err = tl_writer_create(&writer, path, &hdr);
    }
    if (err) {
        /* strerrordesc_np: a static English string, no locale, no allocation. */
        const char *why = strerrordesc_np(-err);
        char msg[256] = ": ";
        strncat(msg, why ? why : "unknown error", sizeof msg - 3);
        say("cannot create trace ", path, msg);
        return true;
    }
    memcpy(trace_file, path, sizeof trace_file);
    tl_record_thread_begin();
    if (tl_writer_process(&writer, &tl_tsd.cur, mono(), self_pid, self_ppid, exec_seq, exe,
                          strlen(exe), argc_v, argv_v))
        tl_counters_dropped(1);
    const char *keys[16] = {"mode",  "stack_depth",  "output",        "allocator",
                            "clock", "sample_bytes", "big_min_bytes", "host"};
    const char *values[16] = {
        tl_config_mode_name(cfg.mode),      depth_str,  cfg.output, "jemalloc",
        tl_clock.tsc ? "tsc" : "monotonic", sample_str, big_str,    host};
    size_t nopts = 8;
    /* A distributed job's place of this process, as torchrun (and
     * torch.distributed's env:// init) set it: the reporter's "rank N"; the
     * working directory (check: a run's programs built in it are its own). */
    static const char *const dist[] = {"RANK", "LOCAL_RANK", "WORLD_SIZE"};
    static const char *const dist_keys[] = {"rank", "local_rank", "world_size", "cwd"};
    for (size_t i = 0; i < 4; i++) {
        const char *v = i < 3 ? getenv(dist[i]) : cwd;
        if (v && *v) {
            keys[nopts] = dist_keys[i];
            values[nopts++] = v;
        }
    }
    tl_record_options(nopts, keys, values);
    tl_modules_scan(true, false, tl_record_module, NULL);
    if (tl_cudart_static_is_in("/proc/self/exe"))
        tl_record_cudart_static_note("the executable", strlen("the executable"));
    if (cfg.mode == TL_MODE_AGGREGATE &&
        tl_ckpt_init(&writer, (uint64_t)cfg.checkpoint_ms * 1000000u))
        say("cannot map the aggregate site table: ", "allocations are not recorded", "");
    return false;
}

static void prefork(void)
{
    /* Dead already without us: a fatal signal's END is being written (a
     * Pool's worker handler would replace the workers it ended). */
    while (tl_endsig_ending())
        pause();
    tl_tsd.guard++;
    tl_modules_prefork();
    tl_writer_prefork(&writer);
}

static void postfork_parent(void)
{
    tl_writer_postfork(&writer);
    tl_modules_postfork();
    tl_tsd.guard--;
}

/* The child of fork: drop the parent's trace (without touching it) and start
 * this pid's own, self-contained one. Only this thread exists here. */
static void postfork_child(void)
{
    tl_modules_fork_child(); /* first: everything below may scan or unwind */
    tl_endsig_fork_child();
    tl_writer_postfork(&writer);
    tl_modules_postfork();
    if (atomic_load(&tl_agent_state) == TL_AGENT_ON) {
        tl_writer_release(&writer);
        self_ppid = self_pid;
        self_pid = (uint64_t)getpid();
        exec_seq = 0;
        tl_config_exec_seq_env(exec_env, sizeof exec_env, self_pid, 1);
        atomic_store(&exit_status, -1);
        tl_record_reset();
        tl_pyframes_reset();
        tl_modules_reset(); /* the lineage API's mark ids: its own handler (api.c) */
        if (trace_open()) atomic_store(&tl_agent_state, TL_AGENT_DONE);
    } else if (atomic_load(&tl_agent_state) != TL_AGENT_OFF) {
        /* Forked while finishing: the child is untraced; never write the parent's file. */
        tl_writer_release(&writer);
        atomic_store(&tl_agent_state, TL_AGENT_DONE);
    }
    tl_tsd.guard--;
}

static void finish(int status);
static bool finish_signal(int sig, bool scan_room);
static bool on_exit_registered;

/* Registered in our constructor, i.e. before __libc_start_main registers
 * _dl_fini: exit handlers run last-in first-out, so this runs after every
 * destructor (ours included) and C++ static destructor, with the status of
 * exit() or of main's return, which no hook sees. It ends the trace. */
static void on_exit_status(int status, void *arg)
{
    (void)arg;
    TL_GUARD_SCOPE;
    atomic_store(&exit_status, status);
    finish(status);
}

/* Registered by the constructor with at_quick_exit, so it runs after the
 * program's own handlers: quick_exit then ends with glibc's internal _exit,
 * which no hook sees. The status is the one the quick_exit hook kept. */
static void on_quick_exit(void)
{
    TL_GUARD_SCOPE;
    finish(atomic_load(&exit_status));
}

/* CPython reads PYTHONPATH when it initialises, after our constructor: put
 * the tensorleak package directory first there, so its sitecustomize starts
 * the Python side with no change to the program. The directory is
 * TENSORLEAK_PYTHON_DIR (the CLI sets it in the build tree), else
 * <directory of libtensorleak.so>/python (the installed layout, and the
 * wheel's: tensorleak/libtensorleak.so, tensorleak/python/), if it
 * exists. Nothing is changed when it is already on the path. */
static void python_path(void)
{
    char dir[TL_CONFIG_PATH_MAX];
    if (cfg.python_dir[0]) {
        strcpy(dir, cfg.python_dir);
    } else {
        Dl_info info;
        if (!dladdr((void *)&tl_agent_init, &info) || !info.dli_fname) return;
        const char *slash = strrchr(info.dli_fname, '/');
        size_t n = slash ? (size_t)(slash - info.dli_fname) : 0;
        static const char sub[] = "/python";
        if (n + sizeof sub > sizeof dir) return;
        memcpy(dir, info.dli_fname, n);
        memcpy(dir + n, sub, sizeof sub);
        if (!slash) /* loaded by a bare name: no directory to go by */
            return;
    }
    if (access(dir, R_OK | X_OK) != 0) return;
    /* The wheel's layout: python/ inside the package (tensorleak/python/),
     * whose code is the agent's as well: the package is hidden. */
    static const char up_init[] = "/../__init__.py";
    char init[TL_CONFIG_PATH_MAX + sizeof up_init];
    size_t dn = strlen(dir);
    char *up = strrchr(dir, '/');
    memcpy(init, dir, dn);
    memcpy(init + dn, up_init, sizeof up_init);
    bool wheel = up && up != dir && access(init, R_OK) == 0;
    if (wheel) *up = '\0';
    tl_pyframes_hide_dir(dir);
    if (wheel) *up = '/';
    const char *old = getenv("PYTHONPATH");
    size_t dl = strlen(dir);
    for (const char *p = old; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == dl && memcmp(p, dir, dl) == 0) return;
        p += len + (colon ? 1 : 0);
    }
    /* A static string, not setenv's: setenv's copy and tree node (glibc's
     * known values) are blocks the live table never saw, so the program's
     * nodes below it were lost (torchrun's launcher: 24 B, check failed);
     * tl_env_put, not putenv: no array of glibc's either. */
    static const char name[] = "PYTHONPATH=";
    static char env[sizeof name + 2 * TL_CONFIG_PATH_MAX + 1];
    size_t nl = sizeof name - 1, ol = old ? strlen(old) : 0;
    if (nl + dl + 1 + ol + 1 > sizeof env) return;
    memcpy(env, name, nl);
    memcpy(env + nl, dir, dl);
    if (ol) {
        env[nl + dl] = ':';
        memcpy(env + nl + dl + 1, old, ol + 1);
    } else {
        env[nl + dl] = '\0';
    }
    tl_env_put(env);
}

/* A secure-execution process (setuid, setgid, capabilities) runs on behalf
 * of a user who does not own it: TENSORLEAK_* of that user's environment
 * must not choose where a privileged process writes, or whether it records
 * at all. Only TL_CONFIG_ADMIN_PATH does, when root owns it and no one
 * else can write it. */
static void secure_config(void)
{
    static char text[TL_CONFIG_ADMIN_MAX + 1];
    char *admin = NULL;
    int fd = open(TL_CONFIG_ADMIN_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
        !(st.st_mode & (S_IWGRP | S_IWOTH))) {
        ssize_t n = read(fd, text, TL_CONFIG_ADMIN_MAX);
        if (n >= 0) {
            text[n] = '\0';
            admin = text;
        }
    }
    if (fd >= 0) close(fd);
    tl_config_parse_secure(&cfg, admin, self_pid);
}

void tl_agent_init(void)
{
    TL_GUARD_SCOPE;
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_load(&tl_agent_state) != TL_AGENT_OFF || writer.gen ||
        atomic_flag_test_and_set(&once))
        return;
    self_pid = (uint64_t)getpid();
    self_ppid = (uint64_t)getppid();
    extern char **environ;
    if (getauxval(AT_SECURE))
        secure_config();
    else
        tl_config_parse(&cfg, (const char *const *)environ, self_pid);
    if (cfg.disable) return;
    if (cfg.depth_invalid) say("TENSORLEAK_STACK_DEPTH is not a number; using ", "64", "");
    if (cfg.fingerprint_min_invalid)
        say("TENSORLEAK_FINGERPRINT_MIN is not a size; using ", "1MiB", "");
    exec_seq = cfg.exec_seq;
    fmt_dec(depth_str, cfg.stack_depth);
    fmt_dec(sample_str, cfg.sample_bytes);
    fmt_dec(big_str, TL_CONFIG_BIG_MIN);
    if (cfg.mode_invalid)
        say("TENSORLEAK_MODE is not default, all or aggregate; using ", "default", "");
    if (cfg.sample_bytes_invalid)
        say("TENSORLEAK_SAMPLE_BYTES is not a size; using ", "512KiB", "");
    tl_clock_init(false);
    if (cfg.mode != TL_MODE_ALL && tl_live_init()) {
        say("cannot map the live block table; using mode ", "all", "");
        cfg.mode = TL_MODE_ALL;
    }
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    struct utsname u;
    if (uname(&u) == 0) {
        memcpy(host, u.nodename, sizeof host);
        host[sizeof host - 1] = '\0';
        for (char *h = host; *h; h++)
            if (*h == '/') *h = '_';
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    read_cmdline();
    tl_modules_set_paths(exe, cwd);

    /* Every exec path (execvp, posix_spawn, Python's os.exec*) inherits this;
     * the next image counts only when it is still our pid. */
    if (tl_config_exec_seq_env(exec_env, sizeof exec_env, self_pid, (uint64_t)exec_seq + 1) == 0)
        tl_env_put(exec_env);

    if (tl_record_init(&cfg)) {
        say("cannot map the stack table", "", "");
        return;
    }
    if (cfg.mode == TL_MODE_ALL && cfg.leak_scan && tl_record_scan_init())
        say("cannot map the live block table; no leak scan", "", "");
    uintptr_t lo, hi;
    if (!tl_modules_range_of((uintptr_t)&tl_agent_init, &lo, &hi)) tl_stack_skip_add(lo, hi);
    if (!tl_modules_range_of((uintptr_t)&tl_stack_capture, &lo, &hi)) tl_stack_skip_add(lo, hi);
    void *unw = dlsym(RTLD_DEFAULT, "_ULx86_64_step");
    if (unw && !tl_modules_range_of((uintptr_t)unw, &lo, &hi)) tl_stack_skip_add(lo, hi);
    tl_stack_unwind_init();
    atomic_store(&real_exit, dlsym(RTLD_NEXT, "exit"));
    const tl_pyframes_cpython_t *py = tl_pyframes_cpython();
    if ((!cfg.no_python_frames && !tl_pyframes_init()) || (py && py->supported) ||
        dlsym(RTLD_DEFAULT, "Py_Version"))
        python_path();

    if (cfg.session) tl_vm_mark_session(cfg.session); /* for the CLI: tools/procs.c */
    if (trace_open()) return;
    pthread_atfork(prefork, postfork_parent, postfork_child);
    on_exit_registered = on_exit(on_exit_status, NULL) == 0;
    at_quick_exit(on_quick_exit);
    tl_endsig_init(tl_agent_real_sigaction(), finish_signal);
    atomic_store(&tl_agent_state, TL_AGENT_ON);
}

/* The longest a fatal SIGTERM waits for another thread's END (its leak
 * scan of a big heap takes a few hundred milliseconds), in nanoseconds. */
#define END_WAIT_NS (5 * UINT64_C(1000000000))

static void finish(int status)
{
    int expected = TL_AGENT_ON;
    if (!atomic_compare_exchange_strong(&tl_agent_state, &expected, TL_AGENT_FINISHING)) return;
    if ((uint64_t)getpid() != self_pid) {
        atomic_store(&tl_agent_state, TL_AGENT_ON); /* a vfork child: not our trace */
        return;
    }
    /* A SIGTERM now (a Pool's terminate() while its worker exits) is held
     * on this thread, which has the guard (endsig.h), and waited out by
     * finish_signal on the others, until the END is written. */
    tl_record_thread_begin();
    tl_modules_scan(false, false, tl_record_module, NULL);
    tl_record_leak_scan();
    tl_record_end(TL_END_EXIT, status);
    tl_writer_mark_end(&writer, TL_WRITER_FINISHED, true);
    atomic_store(&tl_agent_state, TL_AGENT_DONE);
}

/* A fatal SIGTERM or SIGINT (endsig.h; signal context): the leak scan (when the stack
 * has room for it, scan_room) and END with reason signal and the signal's
 * number. A worker its parent terminates (a Pool leaving its with block)
 * is so judged by what it leaks, not by every block it has live. true =
 * failure, nothing done, when the signal interrupted the agent itself (this
 * thread's records or counters may be half-written): endsig.c holds the
 * signal until the agent is left. When another thread is writing the END,
 * it waits for it (at most END_WAIT_NS), so the signal cannot cut it. No
 * module scan: it takes the loader's lock, which the interrupted code may
 * hold. The scan takes no lock and no malloc (leakscan.h). */
static bool finish_signal(int sig, bool scan_room)
{
    if (tl_tsd.guard) return true;
    /* By hand, not TL_GUARD_SCOPE: its drop would run the held signal */
    tl_tsd.guard++;
    int expected = TL_AGENT_ON;
    if (!atomic_compare_exchange_strong(&tl_agent_state, &expected, TL_AGENT_FINISHING)) {
        struct timespec tick = {0, 1000000};
        for (uint64_t waited = 0;
             atomic_load(&tl_agent_state) == TL_AGENT_FINISHING && waited < END_WAIT_NS;
             waited += (uint64_t)tick.tv_nsec)
            nanosleep(&tick, NULL);
    } else if ((uint64_t)getpid() != self_pid) {
        atomic_store(&tl_agent_state, TL_AGENT_ON);
    } else {
        tl_record_thread_begin();
        if (scan_room) tl_record_leak_scan();
        tl_record_end(TL_END_SIGNAL, sig);
        tl_writer_mark_end(&writer, TL_WRITER_FINISHED, true);
        atomic_store(&tl_agent_state, TL_AGENT_DONE);
    }
    tl_tsd.guard--;
    return false;
}

void tl_agent_fini(void)
{
    /* With the exit handler in place, the trace ends there (later, with the
     * status); a destructor without exit (impossible for a preload) ends it here. */
    if (on_exit_registered) return;
    TL_GUARD_SCOPE;
    finish(atomic_load(&exit_status));
}

void tl_agent_set_exit_status(int status)
{
    atomic_store(&exit_status, status);
}

void tl_agent_finish_now(int status)
{
    TL_GUARD_SCOPE;
    atomic_store(&exit_status, status);
    finish(status);
}

bool tl_agent_exec_begin(void)
{
    TL_GUARD_SCOPE;
    if (!tl_agent_recording() || (uint64_t)getpid() != self_pid) return true;
    tl_record_thread_begin();
    tl_record_end(TL_END_EXEC, -1);
    tl_writer_mark_end(&writer, TL_WRITER_EXEC, false);
    return false;
}

void tl_agent_exec_failed(void)
{
    TL_GUARD_SCOPE;
    tl_writer_unmark_end(&writer);
}

const char *tl_agent_exec_env(void)
{
    return exec_env[0] && (uint64_t)getpid() == self_pid ? exec_env : NULL;
}

/* libc's definition of name, looked up once (dlsym may allocate: guarded). */
static void *real_fn(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load(slot);
    if (!f) {
        TL_GUARD_SCOPE;
        f = dlsym(RTLD_NEXT, name);
        atomic_store(slot, f);
    }
    return f;
}

tl_agent_sigaction_fn tl_agent_real_sigaction(void)
{
    return (tl_agent_sigaction_fn)real_fn(&real_sigaction, "sigaction");
}

tl_exit_fn tl_agent_real_exit(void)
{
    return (tl_exit_fn)real_fn(&real_exit, "exit");
}

/* --- configuration the lineage API reads (api.c) --- */

uint64_t tl_agent_fingerprint_min(void)
{
    return cfg.fingerprint_min;
}

bool tl_agent_disabled(void)
{
    return cfg.disable;
}

const char *tl_agent_trace_path(void)
{
    return tl_agent_recording() && trace_file[0] ? trace_file : NULL;
}
