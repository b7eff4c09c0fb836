/* diff.h - compare two traces site by site (`tensorleak diff`).
 *
 * A site is matched across the traces by its symbolized frames (function,
 * source file, line and module base name; a frame without a function by its
 * module and offset in it; Python frames by function, file and line), never
 * by address or stack id, which differ from run to run. For each site: its
 * bytes live at the all-bytes peak and at the end point in each trace.
 * Sites are listed largest absolute change first. Not thread-safe.
 */
#ifndef TL_REPORT_DIFF_H
#define TL_REPORT_DIFF_H

#include <stdio.h>

#include "report/cmd/report.h"

/* Read both traces and write the comparison (text, or JSON
 * "tensorleak-diff/1") to out; opts->top sites at most (0 = all). Returns a
 * TL_STATUS_* code; an error adds one line "PATH: why" to msgs, and each
 * truncated or damaged trace a warning (then TL_STATUS_INCOMPLETE). */
tl_status_t tl_diff_files(const char *base, const char *next, const tl_report_opts_t *opts,
                          FILE *out, tl_msgs_t *msgs);

#endif
