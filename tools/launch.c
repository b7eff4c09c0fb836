/* launch.c - run a command under the agent and find the traces it left.
 *
 * Shared by `run` and `check`. Finds the agent (TENSORLEAK_AGENT, the build
 * tree next to this binary, or the installed pkglibdir), tags the run with a
 * random session id so that its traces can be told from older ones, and picks
 * the main trace: the image of the command's own pid that exec'd last (a shell
 * shim that execs python3 leaves two traces of one pid; python3's is the main
 * one).
 */
#include "config.h"
#include "tools/launch.h"
#include "tools/exit_codes.h"
#include "report/report.h"

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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_NAME "libtensorleak.so"

/* Set when the agent was found in the build tree: the Python package is
 * then taken from the source tree, not from beside the agent. */
static bool agent_in_build_tree;

/* Writes the agent's path into buf. Order: $TENSORLEAK_AGENT, the build tree
 * (libtool puts the module in .libs/ next to this binary), the installed
 * pkglibdir. Returns false if none is readable. */
static bool find_agent(char *buf, size_t len)
{
    const char *env = getenv("TENSORLEAK_AGENT");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
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
        }
    }
    snprintf(buf, len, "%s/" AGENT_NAME, TL_PKGLIBDIR);
    return access(buf, R_OK) == 0;
}

/* The directory the trace pattern writes into ("." for a bare name). */
static void pattern_dir(const char *pattern, char *buf, size_t len)
{
    const char *slash = strrchr(pattern, '/');
    if (!slash) {
        snprintf(buf, len, ".");
    } else if (slash == pattern) {
        snprintf(buf, len, "/");
    } else {
        snprintf(buf, len, "%.*s", (int)(slash - pattern), pattern);
    }
}

static bool set_env(const char *name, const char *value)
{
    if (setenv(name, value, 1) != 0) {
        fprintf(stderr, "tensorleak: cannot set %s: %s\n", name, strerror(errno));
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
        fprintf(stderr, "tensorleak: out of memory\n");
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

/* Runs argv and waits. Returns its status the way a shell reports it; sets
 * *pid_out only if the command really started (exec succeeded): a pipe that
 * closes on exec tells the two cases apart. */
static int spawn_and_wait(char **argv, pid_t *pid_out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "tensorleak: cannot create a pipe: %s\n", strerror(errno));
        return TL_EXIT_FAILURE;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "tensorleak: cannot fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return TL_EXIT_FAILURE;
    }
    if (pid == 0) {
        close(fds[0]);
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
        fprintf(stderr, "tensorleak: cannot run %s: %s\n", argv[0], strerror(exec_err));
        return exec_err == ENOENT ? TL_EXIT_NOT_FOUND : TL_EXIT_CANNOT_EXEC;
    }
    *pid_out = pid;
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
    pid_t r;
    do {
        r = waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    child_pid = 0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    if (r < 0) {
        fprintf(stderr, "tensorleak: cannot wait for %s: %s\n", argv[0], strerror(errno));
        return TL_EXIT_FAILURE;
    }
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Finds this session's traces in dir: the main one (pid == main_pid, highest
 * exec_seq) into main_path; names the others on stderr. */
static bool find_traces(const char *dir, uint64_t session, pid_t main_pid, char *main_path,
                        size_t len, bool quiet)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "tensorleak: cannot list %s: %s\n", dir, strerror(errno));
        return false;
    }
    bool found = false;
    uint64_t best_seq = 0;
    struct dirent *e;
    char path[PATH_MAX];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path) continue;
        tl_trace_info_t info;
        if (tl_trace_peek(path, &info) != 0 || info.session != session) continue;
        if (info.pid == (uint64_t)main_pid && (!found || info.exec_seq >= best_seq)) {
            found = true;
            best_seq = info.exec_seq;
            snprintf(main_path, len, "%s", path);
        }
    }
    rewinddir(d);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path) continue;
        tl_trace_info_t info;
        if (tl_trace_peek(path, &info) != 0 || info.session != session) continue;
        if (found && !strcmp(path, main_path)) continue;
        if (quiet) continue;
        const char *what = info.pid == (uint64_t)main_pid ? "earlier image of" : "child process";
        fprintf(stderr, "tensorleak: %s %" PRIu64 " (%s) traced in %s\n", what, info.pid,
                info.exe[0] ? info.exe : "?", path);
    }
    closedir(d);
    return found;
}

bool tl_launch_run(tl_launch_t *l, char **argv, const char *const *extra_env, int *exit_code)
{
    l->pid = 0;
    l->status = 0;
    l->main_trace[0] = '\0';
    char agent[PATH_MAX];
    if (!find_agent(agent, sizeof agent)) {
        fprintf(stderr, "tensorleak: cannot find the agent %s (set TENSORLEAK_AGENT)\n", agent);
        *exit_code = TL_EXIT_FAILURE;
        return false;
    }
    l->session = 0;
    while (l->session == 0) {
        if (getrandom(&l->session, sizeof l->session, 0) != (ssize_t)sizeof l->session)
            l->session = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    }
    if (!prepare_env(agent, l->pattern, l->session)) {
        *exit_code = TL_EXIT_FAILURE;
        return false;
    }
    for (size_t i = 0; extra_env && extra_env[i]; i += 2) {
        if (!set_env(extra_env[i], extra_env[i + 1])) {
            *exit_code = TL_EXIT_FAILURE;
            return false;
        }
    }
    /* The agent would only say on stderr that it cannot create the trace and
     * let the command run untraced: refuse before running anything. */
    char dir[PATH_MAX];
    pattern_dir(l->pattern, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "tensorleak: cannot write traces to %s: %s\n", dir, strerror(errno));
        *exit_code = TL_EXIT_OUTPUT;
        return false;
    }
    l->status = spawn_and_wait(argv, &l->pid);
    if (l->pid == 0) {
        *exit_code = l->status;
        return false;
    }
    fflush(stdout);
    if (!find_traces(dir, l->session, l->pid, l->main_trace, sizeof l->main_trace, l->quiet)) {
        l->main_trace[0] = '\0';
        fprintf(stderr, "tensorleak: %s (pid %d) left no trace in %s\n", argv[0], (int)l->pid, dir);
    }
    return true;
}
