/* launch.h - run a command under the agent (used by `run` and `check`). */
#ifndef TL_LAUNCH_H
#define TL_LAUNCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One trace of the run (tl_launch_t.traces). */
typedef struct tl_launch_trace {
    char path[PATH_MAX];
    uint64_t pid, ppid, exec_seq;
    uint64_t start_mono; /* CLOCK_MONOTONIC ns at the agent's start (the header's) */
    bool main;           /* the main trace (tl_launch_t.main_trace) */
    bool helper;         /* an earlier image of the command's pid, or another program */
    bool quiet;  /* a helper whose trace holds nothing of interest (kept with keep_helpers) */
    bool execd;  /* a later image of its pid was traced: this one ended by exec */
    bool tool;   /* a system tool's image (tl_project_tool) */
    bool script; /* started by an exec launcher's script (tl_launch_t.exec_launcher) */
} tl_launch_trace_t;

/* How many pids of processes still running tl_launch_t keeps. */
#define TL_LAUNCH_RUNNING_PIDS 8

/* The start_wait_ms of run and check: a process's agent opens its trace
 * within milliseconds of its fork or exec; this leaves room for a loaded
 * machine. */
#define TL_LAUNCH_START_WAIT_MS 2000

typedef struct tl_launch {
    const char *pattern;    /* in: trace path pattern (TENSORLEAK_OUTPUT); NULL: a new
                               directory for this run (run_dir), tensorleak.%p.tlt in it */
    bool quiet;             /* in: no line on stderr about the other traces */
    bool keep_helpers;      /* in: keep the traces of helpers that recorded nothing */
    unsigned wait_ms;       /* in: after the command, wait at most this many milliseconds
                               for the run's other traced processes to end (0: none) */
    unsigned still_running; /* out: of those, how many still ran at that bound */
    uint64_t running_pids[TL_LAUNCH_RUNNING_PIDS]; /* out: the first of their pids */
    unsigned start_wait_ms; /* in: after the command, wait at most this many milliseconds
                               for the run's live processes that have not opened their
                               trace yet (forked or exec'd as it ended; 0: don't look) */
    unsigned unstarted;     /* out: of those, how many still had none at that bound */
    uint64_t unstarted_pids[TL_LAUNCH_RUNNING_PIDS]; /* out: the first of their pids */
    char run_dir[PATH_MAX];    /* out: the directory made for this run, "" when pattern given */
    char trace_dir[PATH_MAX];  /* out: the directory the traces were looked for in */
    char main_exe[PATH_MAX];   /* out: the main trace's program (its PROCESS record), or "" */
    unsigned others;           /* out: other processes' and images' traces of this run */
    unsigned helpers_removed;  /* out: of those, helpers' traces removed (see tl_launch_run) */
    uint64_t session;          /* out: the run's session id */
    pid_t pid;                 /* out: the command's pid, 0 if it never started */
    int status;                /* out: its exit status as a shell reports it (128+N for signal N) */
    char main_trace[PATH_MAX]; /* out: the main process's trace, "" if none */
    tl_launch_trace_t *traces; /* out: every trace of the run still on disk, the main one
                                  first (when found); free with tl_launch_free */
    size_t ntraces;
    /* out: the main process is a launcher: a system tool (a shell running a
     * script, make, timeout, env) that ran a program which is not one.
     * Its blocks and those of the run's other system tools are the tools',
     * not the program's (bash leaves definitely lost blocks at every exit):
     * they count as helpers with nothing of interest (quiet, removed unless
     * keep_helpers), and every other program's trace is kept, whatever it
     * made (a C test binary of 100 B is the program under test here). */
    bool launcher;
    /* out: the main trace is a program, and an earlier image of its pid a
     * system tool: a script that ran programs and then exec'd one
     * (`./a; exec ./b`). The programs that started before the main image
     * are the script's, kept and checked whatever they made, as under a
     * launcher; the command's tool image's trace is kept too (not checked:
     * it exec'd), so that check --trace=DIR finds the same rule. */
    bool exec_launcher;
    /* out: the main trace ended by exec, and no later image of its pid was
     * traced: the program it became left no trace (a static or setuid
     * program, or one given TENSORLEAK_DISABLE=1) */
    bool main_execd;
} tl_launch_t;

/* Runs argv (argv[0] looked up in PATH) with the agent preloaded and waits
 * for it, with extra_env (NAME, VALUE, NAME, VALUE, ..., NULL) added to its
 * environment; the terminal's SIGINT/SIGQUIT go to the command meanwhile.
 * Returns true once the command ran (l->status, l->main_trace set; a missing
 * trace is reported on stderr). The traces of the run's other processes and
 * images stay where the pattern put them, but for those of helpers that
 * recorded nothing (a shim's env, bash, basename: a clean END, no recorded
 * allocation, no storage, no lineage record), which are removed unless
 * keep_helpers (under a launcher: the system tools; see launcher);
 * tl_launch_say_others then says how many there were and
 * where the rest are. With wait_ms, it first waits for every traced process
 * of the run (found by its trace) to end its trace or be gone, up to that
 * bound (still_running, running_pids). With start_wait_ms, it waits for the
 * run's live processes (found in /proc by the session in their environment
 * or the run's mark they map: procs.h) to open their traces, up to that bound; those that did not
 * (unstarted) are said on stderr (even when quiet). Returns false, after one line on stderr, if it
 * could not be started: *exit_code is then the status to exit with (127 not found, 126 not
 * executable, 1 no agent). Not thread-safe (changes this process's environment). */
bool tl_launch_run(tl_launch_t *l, char **argv, const char *const *extra_env, int *exit_code);

/* One line on stderr (unless l->quiet, or there were none): how many other
 * processes and images the run traced, and where their traces are. Called
 * after the caller's own line about the main trace. */
void tl_launch_say_others(const tl_launch_t *l);

/* Whether a trace path pattern would not be expanded as meant: a '%' that
 * starts neither "%p" (the pid) nor "%%" (a '%'), or a "%p" in the
 * directory part (the agent does not make directories). true after one line
 * on stderr naming flag (e.g. "--trace-output"). */
bool tl_launch_pattern_bad(const char *pattern, const char *flag);

/* Removes the traces (tensorleak.*.tlt) in the directory made for the run
 * (l->run_dir) and the directory; true when it could not be removed (it
 * holds other files, or an error). Nothing to do without a run_dir. */
bool tl_launch_remove_run_dir(const tl_launch_t *l);

/* Frees l->traces (the files stay). */
void tl_launch_free(tl_launch_t *l);

#endif
