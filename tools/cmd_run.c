/* cmd_run.c - `tensorleak run`: run a command under the agent, report on it.
 *
 * Passes the command's exit status through (death by signal N as 128+N) and
 * prints the report of its main process (see launch.h).
 */
#include "config.h"
#include "tools/cli.h"
#include "report/cmd/report.h"
#include "tools/launch.h"
#include "tools/outfile.h"
#include "tools/say.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Is exe (the main trace's program) the file argv0 names, found as execvp
 * finds it (through PATH when argv0 has no '/'), symbolic links resolved? */
static bool names_exe(const char *argv0, const char *exe)
{
    char want[PATH_MAX], got[PATH_MAX], cand[PATH_MAX];
    if (!realpath(exe, want)) return false;
    if (strchr(argv0, '/')) return realpath(argv0, got) && !strcmp(got, want);
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        int k = snprintf(cand, sizeof cand, "%.*s%s%s", (int)n, p, n ? "/" : "", argv0);
        if (k > 0 && (size_t)k < sizeof cand && access(cand, X_OK) == 0)
            return realpath(cand, got) && !strcmp(got, want);
        p += n + (p[n] == ':');
    }
    return false;
}

static const char run_usage[] =
    "usage: tensorleak run [--output=PATTERN] [--report=FILE] [--format=FORMAT] [--top=N]\n"
    "                      [--frames=user|all] [--no-default-suppressions]\n"
    "                      [--keep-helpers] [--compress] [--quiet] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD with the tensorleak agent preloaded and prints the report of the run:\n"
    "its main process (the last image CMD's own process exec'd: python3 behind a\n"
    "shim) and, when it had others (DataLoader and pool workers, torchrun's ranks),\n"
    "a table of them all, every process's problems and each one of interest's\n"
    "report. One line on stderr says how many other processes were traced and where.\n"
    "\n"
    "  -o, --output=PATTERN  trace path; %p is the pid, %h the host name, both in the\n"
    "                        file name (default: a new directory tensorleak-<pid>/\n"
    "                        per run, tensorleak.%p.tlt in it)\n"
    "  -k, --keep-helpers    keep the traces of helper processes that recorded\n"
    "                        nothing (removed by default: a shim's env, bash, ...)\n"
    "  --compress            compress the run's traces when CMD has ended (zstd, chunk\n"
    "                        by chunk: tensorleak compress --help)\n"
    "  --quiet               no progress line on stderr while the traces are read\n"
    "                        after CMD exits (drawn only when stderr is a terminal)\n"
    "  -r, --report=FILE     write the report to FILE instead of stdout (where the\n"
    "                        command's own output goes)\n"
    "  -f, --format=FORMAT   report format: text (default), json, html, folded,\n"
    "                        folded-peak, folded-end (tensorleak report --help); a\n"
    "                        --report FILE ending in .html gets html by default\n"
    "  -n, --top=N           sites per list in the report (default 10, 0 = all)\n"
    "      --frames=user|all text: the program's frames with library frames folded\n"
    "                        (default), or every frame (tensorleak report --help)\n"
    "      --no-default-suppressions\n"
    "                        text: list the one-time allocations among the leaks too\n"
    "  -h, --help            this text\n"
    "\n"
    "Exit status: CMD's own (128+N if a signal N ended it), 127 if CMD was not\n"
    "found, 126 if it could not be executed, 2 on a usage error, 6 if the trace\n"
    "directory or the report file cannot be written (checked before CMD runs).\n";

/* Parses a --top value: a decimal in [0, 1000000]. Returns false if bad. */
static bool parse_top(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 1000000) return false;
    *out = (unsigned)v;
    return true;
}

/* What `run` was asked. */
typedef struct run_args {
    const char *pattern; /* --output; NULL: a directory per run (launch.h) */
    bool keep_helpers, quiet, compress;
    tl_report_opts_t opts;
    const char *report_path; /* --report, or NULL: stdout */
    char **cmd;
} run_args_t;

/* Parse argv into a; 0, or an exit status (help printed, or a usage error
 * said). */
/* Whether a flag's value v is empty: then the line "run: what" is said
 * (before CMD runs: a usage error). */
static bool empty(const char *v, const char *what)
{
    if (*v) return false;
    tl_say("run: %s", what);
    return true;
}

static int parse(int argc, char **argv, run_args_t *a)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"top", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {"report", required_argument, NULL, 'r'},
        {"keep-helpers", no_argument, NULL, 'k'},
        {"frames", required_argument, NULL, 'F'},
        {"no-default-suppressions", no_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'Q'},
        {"compress", no_argument, NULL, 'Z'},
        {NULL, 0, NULL, 0},
    };
    *a = (run_args_t){.opts = {.format = TL_FORMAT_TEXT, .top = 10}};
    bool format_given = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+o:f:n:r:kh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (empty(optarg, "--output needs a path") ||
                tl_launch_pattern_bad(optarg, "run: --output"))
                return TL_EXIT_USAGE;
            a->pattern = optarg;
            break;
        case 'f':
            if (!tl_format_parse(optarg, &a->opts.format)) {
                tl_say("run: unknown format '%s' (text, json, html, folded, folded-peak or "
                       "folded-end)",
                       optarg);
                return TL_EXIT_USAGE;
            }
            format_given = true;
            break;
        case 'n':
            if (!parse_top(optarg, &a->opts.top)) {
                tl_say("run: bad --top '%s' (a number 0-1000000)", optarg);
                return TL_EXIT_USAGE;
            }
            break;
        case 'r':
            if (empty(optarg, "--report needs a file name")) return TL_EXIT_USAGE;
            a->report_path = optarg;
            break;
        case 'k':
            a->keep_helpers = true;
            break;
        case 'F':
            if (!tl_frames_parse(optarg, &a->opts.all_frames)) {
                tl_say("run: bad --frames '%s' (user or all)", optarg);
                return TL_EXIT_USAGE;
            }
            break;
        case 'S':
            a->opts.no_default_supp = true;
            break;
        case 'Q':
            a->quiet = true;
            break;
        case 'Z':
            a->compress = true;
            break;
        case 'h':
            return tl_outfile_stdout_text(run_usage) ? TL_EXIT_OUTPUT : -1;
        default:
            tl_say("run: unknown option '%s' (try tensorleak run --help)", argv[optind - 1]);
            return TL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        tl_say("run: no command given (tensorleak run -- CMD ...)");
        return TL_EXIT_USAGE;
    }
    a->cmd = argv + optind;
    size_t rl = a->report_path ? strlen(a->report_path) : 0;
    if (!format_given && rl > 5 && !strcmp(a->report_path + rl - 5, ".html"))
        a->opts.format = TL_FORMAT_HTML; /* --report=FILE.html */
    return 0;
}

/* The report of the run l to out: the main trace, then every other one
 * still there but the images that exec'd (launch.h), helpers with nothing
 * of interest left out when kept. Its lines said; the CLI's exit code. */
static int report(const run_args_t *a, const tl_launch_t *l, FILE *out)
{
    const char **paths = calloc(l->ntraces + 1, sizeof *paths);
    size_t npaths = 0;
    if (a->compress) tl_compress_launch(l, false); /* every trace still there, before the reads */
    if (paths) {
        paths[npaths++] = l->main_trace;
        for (size_t i = 0; i < l->ntraces; i++)
            if (!l->traces[i].main && !l->traces[i].execd && !l->traces[i].quiet)
                paths[npaths++] = l->traces[i].path;
    }
    /* the command as given, as check says it (issue 29), unless the main
     * process is another program its process exec'd (python3 behind a shim):
     * then main_exe, read from the trace */
    const char *cmd = a->cmd[0];
    tl_say("trace of %s (pid %d) written to %s",
           !l->main_exe[0] || names_exe(cmd, l->main_exe) ? cmd : l->main_exe, (int)l->pid,
           l->main_trace);
    tl_launch_say_others(l); /* after the main trace's line */
    tl_msgs_t msgs = {0};
    int rc = tl_cli_exit(paths ? tl_report_run(paths, npaths, &a->opts, out, &msgs)
                               : tl_report_file(l->main_trace, &a->opts, out, &msgs));
    tl_say_msgs(&msgs);
    free(paths);
    return rc;
}

int tl_cmd_run(int argc, char **argv)
{
    run_args_t a;
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    FILE *out = stdout;
    tl_outfile_t of;
    if (a.report_path) {
        if (tl_outfile_open(&of, a.report_path)) return TL_EXIT_OUTPUT;
        out = of.f;
    }
    tl_say_progress(a.quiet); /* only the reads after CMD exits draw it */
    tl_launch_t l = {.pattern = a.pattern,
                     .keep_helpers = a.keep_helpers,
                     .start_wait_ms = TL_LAUNCH_START_WAIT_MS};
    int code;
    if (!tl_launch_run(&l, a.cmd, NULL, &code)) {
        if (a.report_path) tl_outfile_close(&of, false);
        return code;
    }
    if (!l.main_trace[0]) {
        tl_launch_say_others(&l);
        tl_launch_free(&l);
        if (a.report_path) tl_outfile_close(&of, false);
        return l.status;
    }
    rc = report(&a, &l, out);
    tl_launch_free(&l);
    bool keep = rc == TL_EXIT_OK || rc == TL_EXIT_TRUNCATED;
    /* a reader of stdout that left early (| head -1) is no failure: CMD's status */
    bool left = !a.report_path && tl_outfile_reader_left(STDOUT_FILENO);
    if (a.report_path ? tl_outfile_close(&of, keep) && keep : fflush(stdout) != 0) {
        if (!a.report_path) tl_say("cannot write the report to stdout: %s", strerror(errno));
        if (l.status == 0 && !left) return TL_EXIT_OUTPUT;
    }
    if (rc == TL_EXIT_OUTPUT && left) rc = TL_EXIT_OK; /* said by the report */
    if (rc != TL_EXIT_OK && rc != TL_EXIT_TRUNCATED && l.status == 0) return rc;
    return l.status;
}
