/* report.h - the report library's entry points for the tensorleak CLI.
 *
 * tl_report_file reads a trace, replays it, symbolizes the sites it shows and
 * renders text, JSON (docs/report-schema.md), HTML or folded stacks
 * (docs/report-html.md), safe on any input file (tl_trace_peek, which
 * `tensorleak run` uses to choose the main process's trace: read/reader.h). Not thread-safe (libdw
 * sessions, stdio).
 */
#ifndef TL_REPORT_H
#define TL_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report/render/options.h"
#include "report/status.h"

/* The format a --format value names (text, json, html, folded, folded-peak,
 * folded-end); false when it names none. */
bool tl_format_parse(const char *name, tl_format_t *out);

/* The text report's frames a --frames value names: "user" (the program's
 * own, library frames folded; *all = false) or "all"; false when neither. */
bool tl_frames_parse(const char *name, bool *all);

/* Read the trace at path, analyse it and render to out. Returns a TL_STATUS_*
 * code; on any error adds exactly one line "PATH: why" to msgs. A
 * truncated/damaged trace renders the readable part, adds one warning line,
 * and returns TL_STATUS_INCOMPLETE. Prints nothing. */
tl_status_t tl_report_file(const char *path, const tl_report_opts_t *opts, FILE *out,
                           tl_msgs_t *msgs);

/* The report of a run of several processes, paths[0, n) (the main process's
 * trace first): text and JSON cover them all (docs/report-schema.md, "A
 * run's processes"): the process table (pid, parent, role by
 * analyze/role.h, peak, live at end, storages at end, problems, end,
 * program), every process's problems naming it, and the report of each
 * process of interest (the main one, ranks, any with problems, storages or
 * 1 MiB live at end); JSON: the main process's report with "problems" (all
 * processes', each with pid, rank, role) and "processes" (each process's
 * report, pid, ppid, rank, role, host and argv at its top). HTML and folded
 * show the main process's, as does n = 1 (tl_report_file's report). One
 * trace analysed at a time. Returns the first failure's TL_STATUS_* (its
 * line in msgs; the other processes still reported). */
tl_status_t tl_report_run(const char *const *paths, size_t n, const tl_report_opts_t *opts,
                          FILE *out, tl_msgs_t *msgs);

/* The traces args[0, nargs) name, a directory standing for its *.tlt files,
 * as tl_report_run takes them: the images that exec'd left out (a later
 * image of their pid is there), the main process first (the earliest whose
 * parent is not among them), the others by start time. *paths (n of them)
 * is freed with tl_report_run_paths_free. A file that is not a trace is a
 * failure (its line in msgs) given by name, and skipped (with its line) in
 * a directory; a directory without a trace is a failure. */
tl_status_t tl_report_run_paths(const char *const *args, size_t nargs, char ***paths, size_t *n,
                                tl_msgs_t *msgs);
void tl_report_run_paths_free(char **paths, size_t n);

#endif
