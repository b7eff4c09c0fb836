/* cli.h - subcommands of the tensorleak CLI (tools/tensorleak.c dispatches).
 *
 * Each takes the argument vector starting at the subcommand's name and returns
 * the process exit status (tools/exit_codes.h, or the traced command's own).
 */
#ifndef TL_CLI_H
#define TL_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/exit_codes.h"

int tl_cmd_report(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_check(int argc, char **argv);
int tl_cmd_diff(int argc, char **argv);
int tl_cmd_compress(int argc, char **argv);

/* Compress the traces paths[0, n) in place (a directory: its *.tlt files),
 * zstd level 1-19 or 0 for the default; a line per trace on stderr unless
 * quiet. Returns 0 or the first failure's exit status (cmd_compress.c). */
int tl_compress_traces(const char *const *paths, size_t n, int level, bool quiet);

struct tl_launch;
/* Compress every trace of a run still on disk (tools/launch.h), but its
 * quiet helpers' when skip_quiet (they are about to go); a trace that
 * cannot be compressed stays raw, with its line on stderr. */
void tl_compress_launch(const struct tl_launch *l, bool skip_quiet);

#endif
