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

#endif
