/* cmd_run.c - `tensorleak run`: run a command under the agent, report on it.
 *
 * Finds the agent (TENSORLEAK_AGENT, the build tree next to this binary, or
 * the installed pkglibdir), tags the run with a random session id so that its
 * traces can be told from older ones, passes the command's exit status through
 * (death by signal N as 128+N) and prints the report of the main process: the
 * image of the command's own pid that exec'd last (a shell shim that execs
 * python3 leaves two traces of one pid; python3's is the main one).
 */
#include "config.h"
#include "tools/cli.h"
#include "report/report.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_NAME "libtensorleak.so"

static const char run_usage[] =
    "usage: tensorleak run [--output=PATTERN] [--format=text|json] [--top=N] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with the tensorleak agent preloaded and prints the report of its main\n"
    "process. Traces of child processes are named on stderr.\n"
    "\n"
    "  -o, --output=PATTERN  trace path; %p is the pid (default tensorleak.%p.tlt)\n"
    "  -f, --format=FORMAT   report format: text (default) or json\n"
    "  -n, --top=N           sites per list in the report (default 10, 0 = all)\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit status: CMD's own (128+N if a signal N ended it), 127 if CMD was not\n"
    "found, 126 if it could not be executed, 2 on a usage error.\n";

/* Parses a --top value: a decimal in [0, 1000000]. Returns false if bad. */
static bool parse_top(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 1000000)
        return false;
    *out = (unsigned)v;
    return true;
}

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
    if (ok && agent_in_build_tree && !getenv("TENSORLEAK_PYTHON_DIR"))
        ok = set_env("TENSORLEAK_PYTHON_DIR", TL_ABS_SRCDIR "/src/python");
    free(preload);
    return ok;
}

/* Runs argv[0..] and waits. Returns its status the way a shell reports it. */
static int spawn_and_wait(char **argv, pid_t *pid_out)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "tensorleak: cannot fork: %s\n", strerror(errno));
        return TL_EXIT_FAILURE;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        int err = errno;
        fprintf(stderr, "tensorleak: cannot run %s: %s\n", argv[0], strerror(err));
        _exit(err == ENOENT ? TL_EXIT_NOT_FOUND : TL_EXIT_CANNOT_EXEC);
    }
    *pid_out = pid;
    /* Like system(3): the terminal's SIGINT/SIGQUIT are for the command. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int status = 0;
    pid_t r;
    do {
        r = waitpid(pid, &status, 0);
    } while (r < 0 && errno == EINTR);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    if (r < 0) {
        fprintf(stderr, "tensorleak: cannot wait for %s: %s\n", argv[0], strerror(errno));
        return TL_EXIT_FAILURE;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Finds this session's traces in dir: the main one (pid == main_pid, highest
 * exec_seq) into main_path; names the others on stderr. */
static bool find_traces(const char *dir, uint64_t session, pid_t main_pid, char *main_path,
                        size_t len)
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
        if (e->d_name[0] == '.')
            continue;
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path)
            continue;
        tl_trace_info_t info;
        if (tl_trace_peek(path, &info) != 0 || info.session != session)
            continue;
        if (info.pid == (uint64_t)main_pid && (!found || info.exec_seq >= best_seq)) {
            found = true;
            best_seq = info.exec_seq;
            snprintf(main_path, len, "%s", path);
        }
    }
    rewinddir(d);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (n < 0 || (size_t)n >= sizeof path)
            continue;
        tl_trace_info_t info;
        if (tl_trace_peek(path, &info) != 0 || info.session != session)
            continue;
        if (found && !strcmp(path, main_path))
            continue;
        const char *what = info.pid == (uint64_t)main_pid ? "earlier image of" : "child process";
        fprintf(stderr, "tensorleak: %s %" PRIu64 " (%s) traced in %s\n", what, info.pid,
                info.exe[0] ? info.exe : "?", path);
    }
    closedir(d);
    return found;
}

int tl_cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'f'},
        {"top", required_argument, NULL, 'n'},    {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *pattern = "tensorleak.%p.tlt";
    tl_report_opts_t opts = {.format = TL_FORMAT_TEXT, .top = 10};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+o:f:n:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                fprintf(stderr, "tensorleak: run: --output needs a path\n");
                return TL_EXIT_USAGE;
            }
            pattern = optarg;
            break;
        case 'f':
            if (!strcmp(optarg, "text")) {
                opts.format = TL_FORMAT_TEXT;
            } else if (!strcmp(optarg, "json")) {
                opts.format = TL_FORMAT_JSON;
            } else {
                fprintf(stderr, "tensorleak: run: unknown format '%s' (text or json)\n", optarg);
                return TL_EXIT_USAGE;
            }
            break;
        case 'n':
            if (!parse_top(optarg, &opts.top)) {
                fprintf(stderr, "tensorleak: run: bad --top '%s' (a number 0-1000000)\n", optarg);
                return TL_EXIT_USAGE;
            }
            break;
        case 'h':
            fputs(run_usage, stdout);
            return TL_EXIT_OK;
        default:
            fprintf(stderr, "tensorleak: run: unknown option '%s' (try tensorleak run --help)\n",
                    argv[optind - 1]);
            return TL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "tensorleak: run: no command given (tensorleak run -- CMD ...)\n");
        return TL_EXIT_USAGE;
    }
    char agent[PATH_MAX];
    if (!find_agent(agent, sizeof agent)) {
        fprintf(stderr, "tensorleak: cannot find the agent %s (set TENSORLEAK_AGENT)\n", agent);
        return TL_EXIT_FAILURE;
    }
    uint64_t session = 0;
    while (session == 0) {
        if (getrandom(&session, sizeof session, 0) != (ssize_t)sizeof session)
            session = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
    }
    if (!prepare_env(agent, pattern, session))
        return TL_EXIT_FAILURE;

    pid_t pid = 0;
    int status = spawn_and_wait(argv + optind, &pid);
    if (pid == 0)
        return status;

    char dir[PATH_MAX], main_path[PATH_MAX];
    pattern_dir(pattern, dir, sizeof dir);
    fflush(stdout);
    if (!find_traces(dir, session, pid, main_path, sizeof main_path)) {
        fprintf(stderr, "tensorleak: %s (pid %d) left no trace in %s\n", argv[optind], (int)pid,
                dir);
        return status;
    }
    fprintf(stderr, "tensorleak: trace of %s (pid %d) written to %s\n", argv[optind], (int)pid,
            main_path);
    int rc = tl_report_file(main_path, &opts, stdout);
    fflush(stdout);
    if (rc != TL_EXIT_OK && rc != TL_EXIT_TRUNCATED && status == 0)
        return rc;
    return status;
}
