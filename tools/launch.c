/* launch.c - run a command under the agent and find the traces it left.
 *
 * Shared by `run` and `check`. Finds the agent (TENSORLEAK_AGENT, the build
 * tree next to this binary, the wheel's package, or the installed
 * pkglibdir), tags the run with a
 * random session id so that its traces can be told from older ones, and picks
 * the main trace: the image of the command's own pid that exec'd last (a shell
 * shim that execs python3 leaves two traces of one pid; python3's is the main
 * one). Without a pattern the traces go to a new directory per run, and the
 * traces of helpers that recorded nothing are removed (launch.h).
 */
#include "config.h"
#include "tools/launch.h"
#include "tools/exit_codes.h"
#include "report/cmd/report.h"
#include "tools/outfile.h"
#include "tools/project.h"
#include "tools/run_notes.h"
#include "tools/settle.h"
#include "tools/say.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_NAME "libtensorleak.so"

/* Set when the agent was found in the build tree: the Python package is
 * then taken from the source tree, not from beside the agent. */
static bool agent_in_build_tree;

/* Writes the agent's path into buf (PATH_MAX bytes at least). Order:
 * $TENSORLEAK_AGENT (made absolute), the build tree (libtool puts the module in .libs/ next
 * to this binary), the wheel's package (this binary in its _bin/), the
 * installed pkglibdir. Returns false if none is readable. */
static bool find_agent(char *buf, size_t len)
{
    const char *env = getenv("TENSORLEAK_AGENT");
    if (env && *env) {
        /* absolute: a relative path would fail in a child that changed
         * directory (ld.so prints its error into the program's stderr) */
        char real[PATH_MAX];
        snprintf(buf, len, "%s", realpath(env, real) ? real : env);
        return access(buf, R_OK) == 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            int k = snprintf(buf, len, "%s/.libs/" AGENT_NAME, self);
            if (k > 0 && (size_t)k < len && access(buf, R_OK) == 0) {
                agent_in_build_tree = true;
                return true;
            }
            /* The wheel's layout: tensorleak/_bin/tensorleak, the agent in
             * tensorleak/, by its canonical path (the agent hides its
             * Python package's frames by that prefix). */
            char up[PATH_MAX + 32];
            size_t sl = strlen(self);
            snprintf(up, sizeof up, "%s/../" AGENT_NAME, self);
            if (sl > 5 && !strcmp(self + sl - 5, "/_bin") && realpath(up, buf) &&
                access(buf, R_OK) == 0)
                return true;
        }
    }
    snprintf(buf, len, "%s/" AGENT_NAME, TL_PKGLIBDIR);
    return access(buf, R_OK) == 0;
}

/* The directory the trace pattern writes into ("." for a bare name), its
 * "%%" as the agent expands them (tl_launch_pattern_bad: no other '%' there). */
static void pattern_dir(const char *pattern, char *buf, size_t len)
{
    const char *slash = strrchr(pattern, '/');
    if (!slash) {
        snprintf(buf, len, ".");
        return;
    }
    size_t k = 0;
    for (const char *s = pattern; s < slash && k + 1 < len; s++) {
        buf[k++] = *s;
        if (s[0] == '%' && s[1] == '%') s++;
    }
    buf[k] = '\0';
    if (slash == pattern) snprintf(buf, len, "/");
}

bool tl_launch_pattern_bad(const char *pattern, const char *flag)
{
    const char *slash = strrchr(pattern, '/');
    for (const char *s = pattern; *s; s++) {
        if (*s != '%') continue;
        if (!s[1]) {
            tl_say("%s: '%s': a '%%' at the end (%%p is the pid, %%h the host name, %%%% a '%%')",
                   flag, pattern);
            return true;
        }
        if (s[1] != 'p' && s[1] != 'h' && s[1] != '%') {
            tl_say("%s: '%s': unknown %%%c (%%p is the pid, %%h the host name, %%%% a '%%')", flag,
                   pattern, s[1]);
            return true;
        }
        if (s[1] != '%' && slash && s < slash) {
            tl_say("%s: '%s': %%%c in the directory (every process writes into one directory "
                   "that exists before the command runs: put %%%c in the file name)",
                   flag, pattern, s[1], s[1]);
            return true;
        }
        s++;
    }
    return false;
}

static bool set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        tl_say("cannot set %s: %s", name, strerror(errno));
        return false;
    }
    return true;
}

/* Prepares the environment the command inherits. */
static bool prepare_env(const char *agent, const char *pattern, uint64_t session)
{
    const char *old = getenv("LD_PRELOAD");
    size_t need = strlen(agent) + (old ? strlen(old) + 2 : 1);
    char *preload = malloc(need);
    if (!preload) {
        tl_say("out of memory");
        return false;
    }
    if (old && *old)
        snprintf(preload, need, "%s %s", agent, old);
    else
        snprintf(preload, need, "%s", agent);
    char sess[32];
    snprintf(sess, sizeof sess, "%" PRIu64, session);
    bool ok = set_env("LD_PRELOAD", preload) && set_env("TENSORLEAK_OUTPUT", pattern) &&
              set_env("TENSORLEAK_SESSION", sess);
    unsetenv("TENSORLEAK_EXEC_SEQ");
    /* The agent finds its Python package beside itself once installed. */
    if (ok && agent_in_build_tree && !getenv("TENSORLEAK_PYTHON_DIR")) {
        /* Canonical, as Python will name the package's files (abs_top_srcdir
         * is "build/.." in a VPATH build): the agent hides frames by prefix. */
        char dir[PATH_MAX];
        if (!realpath(TL_ABS_SRCDIR "/src/python", dir))
            snprintf(dir, sizeof dir, "%s", TL_ABS_SRCDIR "/src/python");
        ok = set_env("TENSORLEAK_PYTHON_DIR", dir);
    }
    free(preload);
    return ok;
}

/* Runs argv[0..] and waits. Returns its status the way a shell reports it. */
static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0) kill((pid_t)child_pid, sig);
}

/* Waits for the command pid (waitpid: *status), taking the run's notes as
 * they come meanwhile (run_notes.h; with a pidfd to poll beside them,
 * Linux 5.3 and later; else they wait in their queue, where those past
 * its few are lost). */
static pid_t wait_command(pid_t pid, int *status, tl_run_notes_t *notes)
{
#ifdef SYS_pidfd_open
    int pfd = notes ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
    if (pfd >= 0) {
        struct pollfd p[2] = {{pfd, POLLIN, 0}, {tl_run_notes_fd(notes), POLLIN, 0}};
        for (;;) {
            int r = poll(p, 2, -1);
            if (r < 0 && errno != EINTR) break;
            if (r <= 0) continue;
            if (p[1].revents & POLLIN) tl_run_notes_take(notes);
            if (p[1].revents & (POLLERR | POLLHUP | POLLNVAL)) p[1].fd = -1;
            if (p[0].revents) break;
        }
        close(pfd);
    }
#endif
    pid_t r;
    do {
        r = waitpid(pid, status, 0);
    } while (r < 0 && errno == EINTR);
    return r;
}

/* spawn_and_wait with SIGCHLD at its default action in this process;
 * chld is the disposition the command gets back before exec. */
static int spawn_and_wait_dfl(char **argv, pid_t *pid_out, const struct sigaction *chld,
                              tl_run_notes_t *notes)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        tl_say("cannot create a pipe: %s", strerror(errno));
        return TL_EXIT_FAILURE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        tl_say("cannot fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return TL_EXIT_FAILURE;
    }
    if (pid == 0) {
        close(fds[0]);
        sigaction(SIGCHLD, chld, NULL);
        execvp(argv[0], argv);
        int err = errno;
        if (write(fds[1], &err, sizeof err) < 0) _exit(TL_EXIT_CANNOT_EXEC);
        _exit(err == ENOENT ? TL_EXIT_NOT_FOUND : TL_EXIT_CANNOT_EXEC);
    }
    close(fds[1]);
    int exec_err = 0;
    ssize_t got;
    do {
        got = read(fds[0], &exec_err, sizeof exec_err);
    } while (got < 0 && errno == EINTR);
    close(fds[0]);
    if (got == (ssize_t)sizeof exec_err) {
        waitpid(pid, NULL, 0);
        tl_say("cannot run %s: %s", argv[0], strerror(exec_err));
        return exec_err == ENOENT ? TL_EXIT_NOT_FOUND : TL_EXIT_CANNOT_EXEC;
    }
    *pid_out = pid;
    /* A reader of stdout that leaves early (`| head -1`) gets the command
     * its SIGPIPE, never this process: its report or verdict then fails to
     * write, said on stderr, and the command's status stays the exit status
     * (it was 141, this process's death). Set after the fork: the command
     * keeps the default. */
    signal(SIGPIPE, SIG_IGN);
    /* Like system(3): the terminal's SIGINT/SIGQUIT are for the command. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal};
    struct sigaction old_int, old_quit, old_term, old_hup;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    /* A SIGTERM or SIGHUP meant for `tensorleak run` ends the command too
     * (which then writes its trace's end), instead of orphaning it. */
    child_pid = pid;
    sigaction(SIGTERM, &fwd, &old_term);
    sigaction(SIGHUP, &fwd, &old_hup);
    int status = 0;
    pid_t r = wait_command(pid, &status, notes);
    child_pid = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (r < 0) {
        tl_say("cannot wait for %s: %s", argv[0], strerror(errno));
        return TL_EXIT_FAILURE;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Runs argv and waits. Returns its status the way a shell reports it; sets
 * *pid_out only if the command really started (exec succeeded): a pipe that
 * closes on exec tells the two cases apart. A SIGCHLD that was ignored (or
 * SA_NOCLDWAIT) when we were started would let the kernel reap the command
 * and lose its status: we wait with the default action, the command starts
 * with the disposition it would have had without us. The run's notes are
 * taken while it runs. */
static int spawn_and_wait(char **argv, pid_t *pid_out, tl_run_notes_t *notes)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL}, old;
    sigemptyset(&dfl.sa_mask);
    if (sigaction(SIGCHLD, &dfl, &old) != 0) {
        tl_say("cannot reset SIGCHLD: %s", strerror(errno));
        return TL_EXIT_FAILURE;
    }
    int status = spawn_and_wait_dfl(argv, pid_out, &old, notes);
    sigaction(SIGCHLD, &old, NULL);
    return status;
}

/* The one line about the run's other traces (launch.h). */
static void say_others(const tl_launch_t *l, const char *dir)
{
    unsigned n = l->others, kept = n - l->helpers_removed;
    /* "1 other process or image", "2 other processes and images" */
    const char *es = n == 1 ? " or" : "es and", *s = n == 1 ? "" : "s";
    if (!kept)
        tl_say("%u other process%s image%s traced: helpers with nothing of "
               "interest, traces removed",
               n, es, s);
    else if (!l->helpers_removed)
        tl_say("%u other process%s image%s traced: their traces are in %s", n, es, s, dir);
    else
        tl_say("%u other process%s image%s traced: %u trace%s kept in %s, %u of "
               "helpers with nothing of interest removed",
               n, es, s, kept, kept == 1 ? "" : "s", dir, l->helpers_removed);
}

/* Appends a trace to l->traces; false when out of memory (it is then left
 * out of the list, not of the run). */
static bool add_trace(tl_launch_t *l, const char *path, const tl_trace_info_t *info)
{
    tl_launch_trace_t *nt = realloc(l->traces, (l->ntraces + 1) * sizeof *nt);
    if (!nt) return false;
    l->traces = nt;
    tl_launch_trace_t *t = &nt[l->ntraces++];
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->pid = info->pid;
    t->ppid = info->ppid;
    t->exec_seq = info->exec_seq;
    t->start_mono = info->start_mono;
    return true;
}

/* tl_project_before_exec of t (not the main trace), its pid's first image
 * from l->traces. */
static bool before_exec(const tl_launch_t *l, const tl_launch_trace_t *t, uint64_t main_start)
{
    uint64_t start = t->start_mono, seq = t->exec_seq;
    bool tool = t->tool;
    for (size_t i = 0; i < l->ntraces; i++) {
        const tl_launch_trace_t *o = &l->traces[i];
        if (o->pid != t->pid || o->main) continue;
        if (o->start_mono < start) start = o->start_mono;
        if (o->exec_seq < seq) {
            seq = o->exec_seq;
            tool = o->tool;
        }
    }
    return tl_project_before_exec(start, tool, t->ppid, (uint64_t)l->pid, main_start);
}

/* The run's system tools (tl_project_tool) among l->traces, and whether
 * the main one is a launcher: a system tool, and some other image that did
 * not exec is not one (launch.h). */
static void find_launcher(tl_launch_t *l, const tl_trace_info_t *main_info)
{
    bool program = false;
    for (size_t i = 0; i < l->ntraces; i++)
        program |= !l->traces[i].main && !l->traces[i].execd && !l->traces[i].tool;
    l->launcher = l->ntraces && l->traces[0].main && tl_project_tool(main_info) && program;
    if (l->launcher || !l->ntraces || !l->traces[0].main || tl_project_tool(main_info)) return;
    bool tool_before = false;
    program = false;
    for (size_t i = 1; i < l->ntraces; i++) {
        const tl_launch_trace_t *t = &l->traces[i];
        tool_before |= t->pid == main_info->pid && t->tool;
        program |= !t->execd && !t->tool && before_exec(l, t, main_info->start_mono);
    }
    l->exec_launcher = tool_before && program;
}

/* Under an exec launcher (launch.h), whether t is one of the script's:
 * its pid started before the main image (the main trace is l->traces[0]). */
static bool script_started(const tl_launch_t *l, const tl_launch_trace_t *t)
{
    return l->exec_launcher && !t->main && before_exec(l, t, l->traces[0].start_mono);
}

/* Takes out of l->traces the helpers with nothing of interest, their files
 * removed unless keep_helpers; under a launcher, the system tools are
 * those and every other program is kept (launch.h). */
static void drop_quiet(tl_launch_t *l)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->ntraces; i++) {
        tl_launch_trace_t *t = &l->traces[i];
        if (l->launcher && !t->main) t->quiet = t->tool;
        /* the tool images that exec'd stay (the command's own, a fork's
         * copy that became a program), for check --trace=DIR */
        if ((t->script = script_started(l, t))) t->quiet = t->tool && !t->execd;
        if (t->quiet && !l->keep_helpers && unlink(t->path) == 0) {
            l->helpers_removed++;
            continue;
        }
        if (kept != i) l->traces[kept] = *t;
        kept++;
    }
    l->ntraces = kept;
}

/* Finds this session's traces in dir: the main one (pid == main_pid, highest
 * exec_seq) into l->main_trace; lists them all in l->traces, counts the
 * others and removes the helpers' (unless keep_helpers). */
static bool find_traces(const char *dir, tl_launch_t *l)
{
    pid_t main_pid = l->pid;
    uint64_t session = l->session;
    char *main_path = l->main_trace;
    size_t len = sizeof l->main_trace;
    DIR *d = opendir(dir);
    if (!d) {
        tl_say("cannot list %s: %s", dir, strerror(errno));
        return false;
    }
    bool found = false;
    uint64_t best_seq = 0;
    char path[PATH_MAX];
    tl_trace_info_t main_info;
    tl_trace_info_t info;
    while (tl_settle_next_trace(d, dir, session, path, &info)) {
        if (info.pid == (uint64_t)main_pid && (!found || info.exec_seq >= best_seq)) {
            found = true;
            best_seq = info.exec_seq;
            main_info = info;
            snprintf(main_path, len, "%s", path);
            snprintf(l->main_exe, sizeof l->main_exe, "%s", info.exe);
        }
    }
    if (found && add_trace(l, main_path, &main_info)) l->traces[0].main = true;
    rewinddir(d);
    while (tl_settle_next_trace(d, dir, session, path, &info)) {
        if (found && !strcmp(path, main_path)) continue;
        l->others++;
        if (!add_trace(l, path, &info)) continue;
        /* A helper: an earlier image of the command's pid (the shim itself)
         * or another program (env, bash, basename); a forked copy of the
         * main program keeps its trace. */
        tl_launch_trace_t *t = &l->traces[l->ntraces - 1];
        t->helper = info.pid == (uint64_t)main_pid || !found || strcmp(info.exe, l->main_exe);
        t->tool = tl_project_tool(&info);
        t->quiet =
            t->helper && !(found && tl_project_own(&info, &main_info)) && tl_project_quiet(path);
    }
    closedir(d);
    for (size_t i = 0; i < l->ntraces; i++)
        for (size_t k = 0; k < l->ntraces && !l->traces[i].execd; k++)
            l->traces[i].execd = l->traces[k].pid == l->traces[i].pid &&
                                 l->traces[k].exec_seq > l->traces[i].exec_seq;
    if (found) find_launcher(l, &main_info);
    l->main_execd = found && main_info.exec_end;
    drop_quiet(l);
    snprintf(l->trace_dir, sizeof l->trace_dir, "%s", dir);
    return found;
}

/* A new directory for this run's traces, in the current directory:
 * tensorleak-<pid of this process>, or with .1, .2, ... when that exists. */
static bool make_run_dir(tl_launch_t *l, char *pattern, size_t len)
{
    for (unsigned uniq = 0; uniq < 1000; uniq++) {
        if (uniq)
            snprintf(l->run_dir, sizeof l->run_dir, "tensorleak-%d.%u", (int)getpid(), uniq);
        else
            snprintf(l->run_dir, sizeof l->run_dir, "tensorleak-%d", (int)getpid());
        if (mkdir(l->run_dir, 0777) == 0) {
            snprintf(pattern, len, "%s/tensorleak.%%p.tlt", l->run_dir);
            return true;
        }
        if (errno != EEXIST) break;
    }
    tl_say("cannot make a directory for the traces (%s): %s", l->run_dir, strerror(errno));
    l->run_dir[0] = '\0';
    return false;
}

/* The command did not run: the run's directory, still empty, goes. */
static bool not_started(const tl_launch_t *l, int code, int *exit_code)
{
    if (l->run_dir[0]) rmdir(l->run_dir);
    *exit_code = code;
    return false;
}

bool tl_launch_run(tl_launch_t *l, char **argv, const char *const *extra_env, int *exit_code)
{
    l->pid = 0;
    l->status = 0;
    l->main_trace[0] = '\0';
    l->main_exe[0] = '\0';
    l->run_dir[0] = '\0';
    l->others = l->helpers_removed = l->still_running = l->unstarted = 0;
    l->launcher = l->exec_launcher = l->main_execd = false;
    l->traces = NULL;
    l->ntraces = 0;
    char agent[PATH_MAX];
    if (!find_agent(agent, sizeof agent)) {
        tl_say("cannot find the agent %s (set TENSORLEAK_AGENT)", agent);
        *exit_code = TL_EXIT_FAILURE;
        return false;
    }
    /* LD_PRELOAD splits its list at spaces and colons (ld.so(8)): such a
     * path would reach no process, and ld.so would say so in each one's
     * stderr */
    if (strpbrk(agent, " :\t\n")) {
        tl_say("the agent's path has a space or a colon, which LD_PRELOAD cannot carry: %s "
               "(set TENSORLEAK_AGENT to a copy of it elsewhere)",
               agent);
        *exit_code = TL_EXIT_FAILURE;
        return false;
    }
    l->session = 0;
    while (l->session == 0) {
        if (getrandom(&l->session, sizeof l->session, 0) != (ssize_t)sizeof l->session)
            l->session = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    }
    static char run_pattern[2 * PATH_MAX + 32];
    if (!l->pattern) {
        if (!make_run_dir(l, run_pattern, sizeof run_pattern)) {
            *exit_code = TL_EXIT_OUTPUT;
            return false;
        }
        l->pattern = run_pattern;
    }
    /* The agent expands a relative pattern in each process's own working
     * directory: a shim's helpers that cd elsewhere would scatter traces. */
    static char abs_pattern[2 * PATH_MAX + 32];
    char cwd[PATH_MAX];
    if (l->pattern[0] != '/' && getcwd(cwd, sizeof cwd)) {
        size_t k = 0; /* the directory's own '%' as "%%": the agent expands the pattern */
        for (const char *c = cwd; *c && k + 3 < sizeof abs_pattern; c++) {
            abs_pattern[k++] = *c;
            if (*c == '%') abs_pattern[k++] = '%';
        }
        snprintf(abs_pattern + k, sizeof abs_pattern - k, "/%s", l->pattern);
        l->pattern = abs_pattern;
    }
    if (!prepare_env(agent, l->pattern, l->session))
        return not_started(l, TL_EXIT_FAILURE, exit_code);
    for (size_t i = 0; extra_env && extra_env[i]; i += 2)
        if (!set_env(extra_env[i], extra_env[i + 1]))
            return not_started(l, TL_EXIT_FAILURE, exit_code);
    /* The agent would only say on stderr that it cannot create the trace and
     * let the command run untraced: refuse before running anything. */
    char dir[PATH_MAX];
    pattern_dir(l->pattern, dir, sizeof dir);
    if (!tl_outfile_dir_takes_files(dir)) {
        tl_say("cannot write traces to %s: %s", dir, strerror(errno));
        return not_started(l, TL_EXIT_OUTPUT, exit_code);
    }
    tl_run_notes_t *notes = tl_run_notes_open(l->session);
    l->status = spawn_and_wait(argv, &l->pid, notes);
    if (l->pid == 0) {
        tl_run_notes_close(notes);
        return not_started(l, l->status, exit_code);
    }
    fflush(stdout);
    if (l->wait_ms || l->start_wait_ms) tl_settle_wait(dir, l, agent, notes);
    if (l->unstarted) tl_settle_say_unstarted(l);
    tl_run_notes_say(notes);
    if (!find_traces(dir, l)) {
        l->main_trace[0] = '\0';
        tl_say("%s (pid %d) left no trace in %s", argv[0], (int)l->pid, dir);
    }
    return true;
}

void tl_launch_say_others(const tl_launch_t *l)
{
    if (l->others && !l->quiet) say_others(l, l->trace_dir);
}

bool tl_launch_remove_run_dir(const tl_launch_t *l)
{
    if (!l->run_dir[0]) return false;
    DIR *d = opendir(l->run_dir);
    if (d) {
        char path[PATH_MAX];
        for (struct dirent *e; (e = readdir(d));) {
            size_t n = strlen(e->d_name);
            if (strncmp(e->d_name, "tensorleak.", 11) || n < 15 ||
                strcmp(e->d_name + n - 4, ".tlt"))
                continue; /* only what the agent wrote there */
            int k = snprintf(path, sizeof path, "%s/%s", l->run_dir, e->d_name);
            if (k > 0 && (size_t)k < sizeof path) unlink(path);
        }
        closedir(d);
    }
    return rmdir(l->run_dir) != 0;
}

void tl_launch_free(tl_launch_t *l)
{
    free(l->traces);
    l->traces = NULL;
    l->ntraces = 0;
}
