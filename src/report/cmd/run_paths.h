/* run_paths.h - what run_paths.c tells report_run.c of a run's traces
 * beyond tl_report_run_paths (report.h). */
#ifndef TL_REPORT_CMD_RUN_PATHS_H
#define TL_REPORT_CMD_RUN_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/status.h"

/* One trace of a run as tl_run_say_mixed sees it. host: borrowed. */
typedef struct tl_run_member {
    uint64_t session; /* the header's TENSORLEAK_SESSION, 0 none */
    const char *host; /* OPTIONS host, "" unknown */
    bool read;        /* it was read (whole or not); one that was not is passed */
} tl_run_member_t;

/* Traces of several runs (sessions) on one host, reported as one run (two
 * `run`s given one --output directory): one line in msgs. The runs of a
 * multi-node job (a `run` per node, --output=DIR/t.%h.%p.tlt) differ in
 * host too: nothing is said of them. */
void tl_run_say_mixed(const tl_run_member_t *m, size_t n, tl_msgs_t *msgs);

#endif
