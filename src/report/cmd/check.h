/* check.h - the CI verdict: evaluate a trace against leak limits.
 *
 * tl_check_file reads a trace (possibly still being written), replays it,
 * applies the suppressions and measures each limit over the scope: the end
 * point (a Python main script's end, else process exit) or, with a region
 * name, the last closed iteration of that region. Then it renders the
 * verdict as text, JSON ("tensorleak-check/1", docs/report-schema.md) or
 * JUnit XML. Not thread-safe (libdw sessions, stdio).
 */
#ifndef TL_REPORT_CHECK_H
#define TL_REPORT_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/trace_format.h"
#include "report/analyze/suppress.h"
#include "report/render/check_verdict.h"
#include "report/status.h"

/* One trace's verdict in numbers (tl_check_eval). */
typedef struct tl_check_result {
    unsigned nchecked, nfailed;
    bool incomplete; /* could not be read whole: cannot pass */
    bool execd;      /* a run's process other than the main one that ended by exec
                        (its program not traced): not checked, no verdict written */
} tl_check_result_t;

/* Evaluate the trace at path and write the verdict to out. Returns 0 with
 * *failed set, or a TL_STATUS_* code after one line "PATH: why" added to
 * msgs (trace unreadable, no such region: BAD_INPUT, out of memory). A truncated or
 * damaged trace is evaluated as far as it can be read, its verdict says it
 * is incomplete (never "passed"), one warning line (msgs) says what was read, and
 * the return is TL_STATUS_INCOMPLETE, as for one that changed while it was
 * read (still being written), except with a region: its closed iteration
 * was read whole. A trace without an END record (the program was killed, or
 * is still running) is complete: it is checked at its last recorded event,
 * with a note. */
tl_status_t tl_check_file(const char *path, const tl_check_opts_t *o, FILE *out, bool *failed,
                          tl_msgs_t *msgs);

/* tl_check_file with the counts of limits checked and exceeded in *r. */
tl_status_t tl_check_eval(const char *path, const tl_check_opts_t *o, FILE *out,
                          tl_check_result_t *r, tl_msgs_t *msgs);

/* Read a baseline trace: its leak and peak at its end point, measured as
 * --max-leak and --max-peak measure them under o (o->supp, o->leak_kinds,
 * o->device). Returns 0 or a TL_STATUS_* code after one line added to msgs;
 * TL_STATUS_INCOMPLETE for a baseline that could not be read whole (a
 * comparison with part of it means nothing). */
tl_status_t tl_check_baseline(const char *path, const tl_check_opts_t *o, tl_check_base_t *b,
                              tl_msgs_t *msgs);

#endif
