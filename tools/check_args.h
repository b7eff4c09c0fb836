/* check_args.h - the command line of `tensorleak check` (check_args.c),
 * parsed for tools/cmd_check.c, which runs the gate. Not thread-safe
 * (getenv, stderr). */
#ifndef TL_CHECK_ARGS_H
#define TL_CHECK_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "report/check/check.h"

/* How long check waits by default, after the command, for the run's other
 * traced processes to end (multiprocessing's forkserver and resource tracker
 * exit after the main process), in seconds: each is judged at its real end,
 * with its leak scan, not while it still runs. */
#define TL_CHECK_WAIT_S 10

/* The most processes of a run checked at a time by default (--jobs): each
 * holds an analysis of its trace (a few hundred MB for a torch script's
 * `all` trace). */
#define TL_CHECK_JOBS_MAX 4

/* What check was asked (tl_check_args_parse). */
typedef struct tl_check_args {
    tl_check_opts_t o;
    const char *supp_files[64];
    size_t nsupp;
    bool no_defaults;
    bool main_only;                        /* --main-process-only */
    bool record_all;                       /* --record-all: `all` mode whatever the limits */
    bool quiet;                            /* --quiet: no progress line */
    bool compress;                         /* --compress: the traces kept, compressed */
    unsigned wait_s;                       /* --wait, seconds (TL_CHECK_WAIT_S) */
    const char *output, *trace, *baseline; /* --output, --trace, --baseline, or NULL */
    const char *pattern;                   /* --trace-output, or NULL */
    const char *html;                      /* --html=FILE, or NULL */
    int error_code;                        /* --error-exitcode */
    char **cmd; /* CMD and its arguments (NULL-terminated, in argv), or NULL */
} tl_check_args_t;

/* Parse argv (argv[0] "check") into a, zeroed by the caller: 0, -1 (the
 * help printed), or an exit status (a usage error said, or the help could
 * not be written). a's strings point into argv. */
int tl_check_args_parse(int argc, char **argv, tl_check_args_t *a);

/* "max_leak_storage=0,max_pinned=1048576": the limits the pytest plugin
 * applies to each test body when check runs pytest, in buf of n (cut short
 * when it does not fit); never --max-leak nor --max-growth, which apply at
 * the end point alone (docs/ci.md, "pytest"). */
void tl_check_args_plugin_limits(const tl_check_opts_t *o, char *buf, size_t n);

/* The suppression options, one per line, for the pytest plugin's own
 * `check --trace` calls (TENSORLEAK_CHECK_ARGS), paths made absolute, in
 * buf of n (cut short when it does not fit). */
void tl_check_args_plugin_args(const tl_check_args_t *a, char *buf, size_t n);

#endif
