/* cli.h - subcommands of the tensorleak CLI (tools/tensorleak.c dispatches).
 *
 * Each takes the argument vector starting at the subcommand's name and returns
 * the process exit status (tools/exit_codes.h, or the traced command's own).
 */
#ifndef TL_CLI_H
#define TL_CLI_H

#include "tools/exit_codes.h"

int tl_cmd_report(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_check(int argc, char **argv);
int tl_cmd_diff(int argc, char **argv);

#endif
