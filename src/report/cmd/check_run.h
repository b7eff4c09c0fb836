/* check_run.h - the CI gate over every process of a run (check -- CMD).
 *
 * Each process's trace is checked against the same limits (check.h); the
 * run fails when any process fails. The verdict names each process by pid,
 * role and argv when there are several. Which processes are given is the
 * caller's choice (tools/cmd_check.c: the main one, its forked copies, and
 * other programs that made storages or big blocks; helpers with nothing of
 * interest, such as a shell, are only counted). Not thread-safe (check.h).
 */
#ifndef TL_REPORT_CHECK_RUN_H
#define TL_REPORT_CHECK_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/cmd/check.h"

/* One process of the run. */
typedef struct tl_check_proc {
    const char *path; /* its trace */
    const char *role; /* "main", "child" (a fork of the main program), "helper" */
    uint64_t pid;     /* its pid, 0 unknown */
    bool passed;      /* out: it kept every limit and was read whole */
} tl_check_proc_t;

/* Check every process of p[0, n) (the main one first, n >= 1) against o and
 * write the run's verdict to out in o->format; unchecked: the helpers left
 * out, said in it. Returns 0 with *failed set when every trace was read
 * whole; else the first process's TL_STATUS_* code (its line added to
 * msgs), the others still checked and shown. */
tl_status_t tl_check_run(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                         FILE *out, bool *failed, tl_msgs_t *msgs);

#endif
