/* cmd_diff.c - `tensorleak diff`: compare two traces site by site.
 *
 * Parses the command line and hands the rest to tl_diff_files
 * (src/report/diff.h). Errors: one stderr line and a TL_EXIT_* status.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "report/cmd/diff.h"
#include "tools/args.h"
#include "tools/say.h"
#include "tools/cli.h"
#include "tools/outfile.h"

static const char help[] =
    "usage: tensorleak diff [--format=text|json] [--top=N] [--no-default-suppressions]\n"
    "                       [--quiet] BASE.tlt NEW.tlt\n"
    "\n"
    "Compare two runs: for each allocation site, the change of its bytes live at the\n"
    "peak and at the end point, largest absolute change first. Sites are matched by\n"
    "their symbolized frames (function, file, line, module), not by address, and by\n"
    "device: when either trace has GPU storages, each device's storages are compared\n"
    "too, and one line's storages on two devices are two sites. The sites check's\n"
    "default suppressions hide (one-time allocations: import machinery, the loader)\n"
    "are counted in one line, not compared site by site. The peak is the storages'\n"
    "(recorded in full), and a plain site's change within the sampler's noise is\n"
    "counted, not listed: two runs of one program compare equal.\n"
    "\n"
    "  --format=text|json  text for people (default); json: schema tensorleak-diff/1\n"
    "  --top=N             sites shown (default 10; 0 = all)\n"
    "  --no-default-suppressions\n"
    "                      compare the one-time allocations site by site too\n"
    "  --quiet             no progress line on stderr (drawn only when stderr is a\n"
    "                      terminal, while a trace is read: phase, bytes, rate, ETA)\n"
    "  --help              print this help\n"
    "\n"
    "exit status: 0 ok, 2 usage, 3-5 a trace cannot be read, 6 output not writable\n";

static int usage_error(const char *what, const char *why)
{
    tl_say("%s: %s (try tensorleak diff --help)", what, why); /* what may be a path */
    return TL_EXIT_USAGE;
}

int tl_cmd_diff(int argc, char **argv)
{
    tl_report_opts_t opts = {.format = TL_FORMAT_TEXT, .top = 10};
    const char *files[2] = {NULL, NULL};
    size_t nfiles = 0;
    bool operands = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (operands || a[0] != '-' || !strcmp(a, "-")) {
            if (nfiles == 2) return usage_error(a, "only two traces are compared");
            files[nfiles++] = a;
        } else if (!strcmp(a, "--")) {
            operands = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            return tl_outfile_stdout_text(help);
        } else if (!strncmp(a, "--format=", 9) || !strcmp(a, "--format")) {
            const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : "";
            if (!strcmp(v, "text"))
                opts.format = TL_FORMAT_TEXT;
            else if (!strcmp(v, "json"))
                opts.format = TL_FORMAT_JSON;
            else
                return usage_error("--format", "expected text or json");
        } else if (!strncmp(a, "--top=", 6) || !strcmp(a, "--top")) {
            const char *v = a[5] == '=' ? a + 6 : i + 1 < argc ? argv[++i] : "";
            unsigned long n;
            if (!tl_parse_uint(v, 1000000, &n))
                return usage_error("--top", "expected a number of sites (0 = all)");
            opts.top = (unsigned)n;
        } else if (!strcmp(a, "--no-default-suppressions")) {
            opts.no_default_supp = true;
        } else if (!strcmp(a, "--quiet")) {
            quiet = true;
        } else {
            return usage_error(a, "unknown option");
        }
    }
    if (nfiles != 2) return usage_error("diff", "expected BASE.tlt and NEW.tlt");
    tl_say_progress(quiet);
    tl_msgs_t msgs = {0};
    int rc = tl_cli_exit(tl_diff_files(files[0], files[1], &opts, stdout, &msgs));
    tl_say_msgs(&msgs);
    return rc;
}
