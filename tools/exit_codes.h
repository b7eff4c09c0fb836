/* exit_codes.h - the exit statuses of the tensorleak CLI (README lists them).
 *
 * `run` and `check` pass the traced command's own status through (death by
 * signal N as 128+N, like a shell); these are the statuses of tensorleak itself.
 */
#ifndef TL_EXIT_CODES_H
#define TL_EXIT_CODES_H

enum {
    TL_EXIT_OK = 0,
    TL_EXIT_FAILURE = 1,       /* internal error (out of memory, a bug) */
    TL_EXIT_USAGE = 2,         /* unknown flag, bad value, missing argument */
    TL_EXIT_NO_TRACE = 3,      /* the trace cannot be opened or read (missing, permission) */
    TL_EXIT_BAD_TRACE = 4,     /* not a tensorleak trace, unsupported version, corrupt header */
    TL_EXIT_TRUNCATED = 5,     /* trace cut short or damaged: the readable part was reported */
    TL_EXIT_OUTPUT = 6,        /* the output path cannot be written */
    TL_EXIT_LIMITS = 23,       /* `check`: a limit was exceeded (LeakSanitizer's convention) */
    TL_EXIT_CANNOT_EXEC = 126, /* the command exists but cannot be executed (as sh does) */
    TL_EXIT_NOT_FOUND = 127,   /* the command was not found (as sh does) */
};

#endif
