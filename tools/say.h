/* say.h - the CLI's lines on stderr, and its exit status for a report
 * library status.
 *
 * Every error and warning of tensorleak is one line "tensorleak: <what>\n",
 * escaped (escape.h) since it echoes paths and names. The report library
 * prints nothing: it hands its lines back in a tl_msgs_t (report/status.h),
 * which tl_say_msgs prints here.
 */
#ifndef TL_CLI_SAY_H
#define TL_CLI_SAY_H

#include <stdbool.h>

#include "report/status.h"

/* One line "tensorleak: <formatted>\n" on stderr, the formatted part
 * escaped (newlines included). */
void tl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* tl_say each line of *m in order (and how many were lost, if any), then
 * free them (tl_msgs_free). */
void tl_say_msgs(tl_msgs_t *m);

/* Turn on the progress line of long reads (report/progress.h) on stderr,
 * when stderr is a terminal and not quiet (--quiet). Call once, before the
 * report library reads a trace. */
void tl_say_progress(bool quiet);

/* The exit status (tools/exit_codes.h) for a library status: OK 0, NOMEM 1,
 * BAD_INPUT 2 (usage), NO_TRACE 3, BAD_TRACE 4, INCOMPLETE 5, OUTPUT 6. */
int tl_cli_exit(tl_status_t s);

#endif
