/* args.h - the option parsing the CLI's subcommands share (report, check,
 * diff): one spelling of "--name=value" / "--name value" and of a bounded
 * decimal number.
 */
#ifndef TL_ARGS_H
#define TL_ARGS_H

#include <stdbool.h>

/* The value of argv[*i] when it is "--name=value" or "--name value" (then
 * *i advances past the value): *matched says whether argv[*i] is the
 * option; NULL when it is not, or when "--name" is the last argument. */
const char *tl_opt_value(int argc, char **argv, int *i, const char *name, bool *matched);

/* A decimal number of at most max (digits only, no sign or space) into
 * *out; false, *out untouched, when s is NULL, empty, not one, or larger. */
bool tl_parse_uint(const char *s, unsigned long max, unsigned long *out);

#endif
