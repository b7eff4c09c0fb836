/* cmd_report.c - `tensorleak report`: render the report of a recorded trace.
 *
 * Parses the command line, opens the output, and hands the rest to
 * tl_report_file (src/report/report.h). Every error is one stderr line
 * "tensorleak: <what>: <why>" and a TL_EXIT_* status (tools/exit_codes.h).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/cmd/report.h"
#include "tools/args.h"
#include "tools/say.h"
#include "tools/cli.h"
#include "tools/outfile.h"

static const char help[] =
    "usage: tensorleak report [--format=FORMAT] [--top=N] [--frames=user|all]\n"
    "                         [--no-default-suppressions] [--output=FILE] [--quiet]\n"
    "                         TRACE|DIR...\n"
    "\n"
    "Render the report of a trace written by `tensorleak run`: peak, leaks (blocks live\n"
    "at the end point: the end of a Python main script, else process exit), the storages\n"
    "live there with their origin, source, views and holders, the problems found\n"
    "(storages pinned by views, duplicate copies, storages held only by autograd), and\n"
    "storages by allocation site. The text groups alike problems and storages (one\n"
    "line, op and holder) into one paragraph and sites by the program's line.\n"
    "A directory (a run's: its *.tlt files) or several traces give the report of the\n"
    "run: a table of its processes (pid, parent, role: main, rank N, DataLoader or\n"
    "pool worker, ...), every process's problems, each process of interest's report\n"
    "(text, json; html and folded show the main process's).\n"
    "\n"
    "  --format=FORMAT     text for people (default); json per docs/report-schema.md;\n"
    "                      html: one self-contained page (problems, timeline, flame\n"
    "                      graphs, lineage graph; docs/report-html.md); folded:\n"
    "                      flamegraph.pl/speedscope stacks of the peak and the end\n"
    "                      (folded-peak, folded-end: one of them)\n"
    "  --top=N             entries per list (default 10; 0 = all)\n"
    "  --frames=user|all   text: the program's own frames of each site, the library\n"
    "                      frames (CPython, torch, libc, the agent) folded into one\n"
    "                      \"... N frames in LIB, LIB\" line (user, the default), or\n"
    "                      every frame (all); json: all also gives the stacks of the\n"
    "                      sites a built-in suppression matches (null by default)\n"
    "  --no-default-suppressions\n"
    "                      text: list every leak; by default the one-time allocations\n"
    "                      that check's built-in suppressions hide (CPython's imports,\n"
    "                      the loader) are left out of the leaks and counted in one line\n"
    "  --output=FILE       write the report to FILE instead of standard output (mode\n"
    "                      0600; FILE is replaced only once a report is written; a\n"
    "                      symbolic link is refused)\n"
    "  --quiet             no progress line on stderr (drawn only when stderr is a\n"
    "                      terminal, while a trace is read: phase, bytes, rate, ETA)\n"
    "  --help              print this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3 trace cannot be read, 4 not a trace or corrupt header,\n"
    "5 trace truncated or damaged (the readable part was reported), 6 output not writable\n"
    "or a symbolic link\n";

static int usage_error(const char *what, const char *why)
{
    tl_say("%s: %s (try tensorleak report --help)", what, why); /* what may be a path */
    return TL_EXIT_USAGE;
}

int tl_cmd_report(int argc, char **argv)
{
    tl_report_opts_t opts = {.format = TL_FORMAT_TEXT, .top = 10};
    const char *output = NULL;
    /* The operands, moved to argv[1, 1 + ntraces) as they are met (never
     * past the option being read). */
    const char **traces = (const char **)argv + 1;
    size_t ntraces = 0;
    bool only_operands = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool m;
        if (only_operands || a[0] != '-' || !strcmp(a, "-")) {
            traces[ntraces++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_operands = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            return tl_outfile_stdout_text(help);
        } else if ((v = tl_opt_value(argc, argv, &i, "--format", &m)), m) {
            if (!tl_format_parse(v, &opts.format))
                return usage_error("--format",
                                   "expected text, json, html, folded, folded-peak or folded-end");
        } else if ((v = tl_opt_value(argc, argv, &i, "--top", &m)), m) {
            unsigned long n;
            if (!tl_parse_uint(v, UINT_MAX, &n))
                return usage_error("--top", "expected a number of sites (0 = all)");
            opts.top = (unsigned)n;
        } else if ((v = tl_opt_value(argc, argv, &i, "--frames", &m)), m) {
            if (!tl_frames_parse(v, &opts.all_frames))
                return usage_error("--frames", "expected user or all");
        } else if (!strcmp(a, "--no-default-suppressions")) {
            opts.no_default_supp = true;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else if ((v = tl_opt_value(argc, argv, &i, "--output", &m)), m) {
            if (!v || !*v) return usage_error("--output", "expected a file name");
            output = opts.output_name = v;
        } else {
            return usage_error(a, "unknown option");
        }
    }
    if (!ntraces) return usage_error("report", "missing TRACE");
    tl_say_progress(quiet);
    /* One file: its report. A directory, or several files: the run's. */
    struct stat st;
    bool one = ntraces == 1 && !(stat(traces[0], &st) == 0 && S_ISDIR(st.st_mode));
    tl_msgs_t msgs = {0};
    char **paths = NULL;
    size_t npaths = 0;
    if (!one) {
        int prc = tl_cli_exit(tl_report_run_paths(traces, ntraces, &paths, &npaths, &msgs));
        if (prc) {
            tl_say_msgs(&msgs);
            return prc;
        }
    }
    FILE *out = stdout;
    tl_outfile_t of;
    if (output) {
        if (tl_outfile_open(&of, output)) {
            tl_report_run_paths_free(paths, npaths);
            return TL_EXIT_OUTPUT;
        }
        out = of.f;
    }
    int rc =
        tl_cli_exit(one ? tl_report_file(traces[0], &opts, out, &msgs)
                        : tl_report_run((const char *const *)paths, npaths, &opts, out, &msgs));
    tl_say_msgs(&msgs);
    tl_report_run_paths_free(paths, npaths);
    if (output) {
        /* No report (the trace unreadable): an existing file stays as it was. */
        bool keep = rc == TL_EXIT_OK || rc == TL_EXIT_TRUNCATED;
        if (tl_outfile_close(&of, keep) && keep) rc = TL_EXIT_OUTPUT;
    }
    return rc;
}
