/* outfile.h - the files the CLI writes reports and verdicts to.
 *
 * `report --output`, `run --report` and `check --output` name a file that
 * may already exist, may sit in a shared directory, and must not be lost
 * when the report fails. So the output is written to a new temporary file
 * in the same directory (mode 0600, like the trace it describes, which
 * holds the program's argv) and renamed over the name only when the report
 * is complete: a failed report leaves an existing file as it was. A name
 * that is a symbolic link is refused (a link planted in /tmp must neither
 * be followed nor silently replaced), except /dev/stdout, /dev/stderr and
 * /dev/fd/N, which write to the descriptor itself. An existing FIFO,
 * terminal or other non-regular file (/dev/null) is written in place:
 * there is nothing to replace.
 */
#ifndef TL_OUTFILE_H
#define TL_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct tl_outfile {
    FILE *f;                /* where to write */
    const char *path;       /* the name asked for */
    char tmp[PATH_MAX + 8]; /* the temporary to rename, "" when written in place */
} tl_outfile_t;

/* Open path for output (see above). Returns 0, or TL_EXIT_OUTPUT after one
 * line "tensorleak: PATH: cannot write: why" on stderr. Done before a
 * command runs, so an unwritable output is said first. */
int tl_outfile_open(tl_outfile_t *o, const char *path);

/* Finish: keep is true when the output is complete. Flushes, syncs and
 * renames the temporary over the name (keep), or removes it (!keep, the
 * name untouched). Returns 0, or TL_EXIT_OUTPUT after one line on stderr
 * when the output could not be written whole (the name then untouched). */
int tl_outfile_close(tl_outfile_t *o, bool keep);

/* text (help, version) on stdout, flushed: 0, or TL_EXIT_OUTPUT after one
 * line "tensorleak: stdout: cannot write: why" (a full disk, a closed
 * descriptor), so that a help piped into a full file does not pass. */
int tl_outfile_stdout_text(const char *text);

/* Whether fd is a pipe or socket whose reader has left (poll's POLLERR on
 * the write end: `| head -1` after its line): a failed write there is the
 * reader's choice, no failure of the report. No effect on fd. */
bool tl_outfile_reader_left(int fd);

/* Whether a file can be made in the directory dir: one is made and removed
 * at once (root's access(2) says yes to /proc and to a read-only mount).
 * false with errno set (ENOENT, EACCES, EROFS, ...). */
bool tl_outfile_dir_takes_files(const char *dir);

#endif
