/* status.h - what the report library's calls return, and the lines they
 * have for the user.
 *
 * The library never prints and knows nothing of the CLI's exit statuses:
 * a call returns a tl_status_t and, where it has something to say (an
 * error's reason, a warning about a damaged trace), appends lines to a
 * tl_msgs_t the caller passed; the caller (tools/: the CLI) prints them
 * and maps the status to its exit code (tools/exit_codes.h). Lines are
 * plain text, not escaped (they may quote paths and names), without the
 * "tensorleak: " prefix and without a newline. Not thread-safe.
 */
#ifndef TL_REPORT_STATUS_H
#define TL_REPORT_STATUS_H

#include <stddef.h>

typedef enum tl_status {
    TL_STATUS_OK = 0,
    TL_STATUS_NOMEM,      /* out of memory (or an internal error) */
    TL_STATUS_NO_TRACE,   /* the trace cannot be opened or read (missing, permission) */
    TL_STATUS_BAD_TRACE,  /* not a tensorleak trace, unsupported version, corrupt header */
    TL_STATUS_INCOMPLETE, /* cut short or damaged: the readable part was used */
    TL_STATUS_OUTPUT,     /* the output stream could not be written */
    TL_STATUS_BAD_INPUT   /* the caller's input is wrong: a suppression rule, a region name */
} tl_status_t;

/* The lines one or more calls had for the user, in order. Start it zeroed
 * ({0}); tl_msgs_free releases the lines. */
#define TL_MSGS_MAX 8
typedef struct tl_msgs {
    size_t n;                /* lines in line[0, n) */
    size_t lost;             /* lines that did not fit, or found no memory */
    char *line[TL_MSGS_MAX]; /* malloc'd, NUL-terminated */
} tl_msgs_t;

/* Append one printf-formatted line to m (NULL: the line is dropped). */
void tl_msgs_add(tl_msgs_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Free the lines of m and zero it. */
void tl_msgs_free(tl_msgs_t *m);

#endif
