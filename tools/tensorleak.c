/* tensorleak.c - the tensorleak command: dispatches to the subcommands.
 *
 * Usage errors print one line to stderr and exit TL_EXIT_USAGE (2).
 */
#include "config.h"
#include "tools/say.h"
#include "tools/cli.h"
#include "tools/outfile.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: tensorleak <command> [options] [--] ...\n"
    "\n"
    "commands:\n"
    "  run [--output=PATTERN] [--report=FILE] [--format=FORMAT] [--top=N] [--] CMD [ARGS...]\n"
    "        run CMD with the agent preloaded, then print the report of its main process\n"
    "  report [--format=FORMAT] [--top=N] [--output=FILE] TRACE\n"
    "        render the report of a recorded trace (FORMAT: text, json, html, folded,\n"
    "        folded-peak or folded-end)\n"
    "  check [LIMITS] [--suppressions=FILE]... [--format=text|json|junit] -- CMD [ARGS...]\n"
    "  check --trace=TRACE [--region=NAME] [LIMITS]\n"
    "        CI gate: fail (exit 23) when CMD's memory exceeds the limits\n"
    "  diff [--format=text|json] [--top=N] BASE.tlt NEW.tlt\n"
    "        per-site change of peak and live-at-end bytes between two runs\n"
    "  compress [--level=N] TRACE|DIR...\n"
    "        compress traces in place (zstd, chunk by chunk; every command reads them)\n"
    "\n"
    "tensorleak <command> --help describes a command. tensorleak --version prints the version.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return TL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        return tl_outfile_stdout_text(usage);
    }
    if (!strcmp(cmd, "--version")) {
        return tl_outfile_stdout_text("tensorleak " PACKAGE_VERSION "\n");
    }
    if (!strcmp(cmd, "run")) return tl_cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return tl_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return tl_cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff")) return tl_cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "compress")) return tl_cmd_compress(argc - 1, argv + 1);
    tl_say("unknown command '%s' (try tensorleak --help)", cmd);
    return TL_EXIT_USAGE;
}
