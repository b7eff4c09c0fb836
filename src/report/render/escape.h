/* escape.h - make untrusted strings safe to print on a terminal.
 *
 * A trace is untrusted input, and so are the names in it (argv, file,
 * function, module, region, tag and op names) and the file names of a
 * shared directory: printed raw, an ESC or a C1 CSI in them can retitle,
 * clear or reprogram the user's terminal, and a newline can forge a line of
 * a verdict. Every text output goes through these: each control character
 * (C0, DEL, the C1 range U+0080-U+009F) and each byte that is not part of
 * valid UTF-8 becomes the four characters \xNN (lowercase hex); everything
 * else, other UTF-8 characters included, passes unchanged. JSON has its own
 * escaping (json.c) and does not use these.
 */
#ifndef TL_REPORT_ESCAPE_H
#define TL_REPORT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Write s[0, n) to out escaped; with keep_newlines a '\n' passes as a line
 * end (for a whole rendered text, whose fields were escaped already). */
void tl_esc_write(FILE *out, const char *s, size_t n, bool keep_newlines);

/* tl_esc_write of the NUL-terminated s (NULL: nothing), newlines escaped:
 * one field of a line. */
void tl_esc_puts(FILE *out, const char *s);

/* Room for the escaped copy of a string of n bytes (each byte at most 4). */
#define TL_ESC_SIZE(n) (4 * (n) + 1)

/* An escaped copy of the NUL-terminated s (NULL: "") in buf[0, n), cut at a
 * whole character or escape when it does not fit; returns buf. n >= 1. */
const char *tl_esc(const char *s, char *buf, size_t n);

#endif
