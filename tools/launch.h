/* launch.h - run a command under the agent (used by `run` and `check`). */
#ifndef TL_LAUNCH_H
#define TL_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct tl_launch {
    const char *pattern;       /* in: trace path pattern (TENSORLEAK_OUTPUT) */
    bool quiet;                /* in: do not name child traces on stderr */
    uint64_t session;          /* out: the run's session id */
    pid_t pid;                 /* out: the command's pid, 0 if it never started */
    int status;                /* out: its exit status as a shell reports it (128+N for signal N) */
    char main_trace[PATH_MAX]; /* out: the main process's trace, "" if none */
} tl_launch_t;

/* Runs argv (argv[0] looked up in PATH) with the agent preloaded and waits
 * for it, with extra_env (NAME, VALUE, NAME, VALUE, ..., NULL) added to its
 * environment; the terminal's SIGINT/SIGQUIT go to the command meanwhile.
 * Returns true once the command ran (l->status, l->main_trace set; a missing
 * trace is reported on stderr). Returns false, after one line on stderr, if
 * it could not be started: *exit_code is then the status to exit with (127
 * not found, 126 not executable, 1 no agent). Not thread-safe (changes this
 * process's environment). */
bool tl_launch_run(tl_launch_t *l, char **argv, const char *const *extra_env, int *exit_code);

#endif
