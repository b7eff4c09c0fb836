/* cmd_check.c - `tensorleak check`: the CI gate.
 *
 * Runs a command under the agent, recording what its limits measure
 * (tl_check_needs_every_block: every allocation, TENSORLEAK_MODE=all with
 * the leak scan, or every storage, the default mode), or takes an existing
 * trace (--trace), and checks it against leak limits (src/report/check.h). Everything that can be
 * wrong with the command line, the suppression files or the baseline is found before the command
 * runs (exit 2, or the baseline's trace error). Exit: the command's own failure passes through;
 * else 23 (or --error-exitcode) when a limit is exceeded; else 0.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/cmd/check.h"
#include "report/cmd/check_run.h"
#include "report/cmd/report.h"
#include "report/analyze/lineage.h"
#include "tools/args.h"
#include "tools/cli.h"
#include "tools/launch.h"
#include "tools/outfile.h"
#include "tools/say.h"
#include "tools/size.h"

static const char help[] =
    "usage: tensorleak check [LIMITS] [OPTIONS] -- CMD [ARGS...]\n"
    "       tensorleak check --trace=TRACE [--region=NAME] [LIMITS] [OPTIONS]\n"
    "\n"
    "Run CMD under the agent and fail when its memory exceeds the limits; or check a\n"
    "trace already recorded (it may still be growing). CMD's every allocation is\n"
    "recorded with its stack when a limit measures plain heap blocks (--max-leak,\n"
    "--max-peak, --max-growth, a baseline); the storage limits alone record every\n"
    "storage, at run's cost. The end point is the end of a Python main script, else\n"
    "process exit; with --region=NAME, the last iteration of that region.\n"
    "\n"
    "limits (SIZE: 0, 512KiB, 1.5GB; without any limit, --max-leak=0):\n"
    "  --max-leak=SIZE           bytes lost at the end point, after suppressions (the\n"
    "                            agent's leak scan: definitely and indirectly lost)\n"
    "  --max-leak-storage=SIZE   the same, tensor storages only\n"
    "  --max-pinned=SIZE         storage bytes only views keep alive, at the end point\n"
    "  --max-peak=SIZE           peak live bytes\n"
    "  --max-growth=SIZE         bytes per iteration a site grows by over a repeated region\n"
    "  --max-problem-storage=SIZE\n"
    "                            bytes of the storages the end point flags as problems\n"
    "                            (held only by autograd, a reference cycle, a cache or a\n"
    "                            traceback; pinned bytes of views; duplicate copies):\n"
    "                            tensors a Python object still refers to, which\n"
    "                            --max-leak counts as still reachable\n"
    "  --baseline=BASE.tlt --max-growth-vs-baseline=SIZE|PCT\n"
    "                            leak (after suppressions) or peak grew more than that\n"
    "options:\n"
    "  --device=DEVICE           limits count only DEVICE's storages (cpu, cuda:0, ...;\n"
    "                            a plain heap block is on cpu), --max-peak at that\n"
    "                            device's own peak; default every device\n"
    "  --suppressions=FILE       LeakSanitizer-format rules (leak:PATTERN); repeatable\n"
    "  --no-default-suppressions do not hide the built-in one-time allocations\n"
    "  --format=text|json|junit  the verdict's format (default text)\n"
    "  --output=FILE             write the verdict to FILE (default standard output)\n"
    "  --html=FILE               when a limit is exceeded, also write the HTML report of\n"
    "                            the trace to FILE (a CI artifact; docs/report-html.md)\n"
    "  --error-exitcode=N        exit status when a limit is exceeded (default 23)\n"
    "  --top=N                   sites shown per failed limit (default 5; 0 = all)\n"
    "  --leak-kinds=LIST         what --max-leak counts: definite,indirect,possible,\n"
    "                            reachable or all (default definite,indirect)\n"
    "  --problem-kinds=LIST      what --max-problem-storage counts: pinned_by_view,\n"
    "                            duplicate_copy, held_by_autograd, held_by_cycle,\n"
    "                            held_by_cache, held_by_traceback or all (default all)\n"
    "  --trace-output=PATTERN    keep CMD's traces there (%p the pid, %h the host name,\n"
    "                            in the file name only; %% a '%'); by default they go\n"
    "                            to a directory tensorleak-<pid>/ removed after a\n"
    "                            passing check and kept (and named) when a limit fails\n"
    "  --main-process-only       check only the main process (CMD's own, the image it\n"
    "                            exec'd last); by default every process of the run is\n"
    "                            checked (forked workers too) and named when it fails\n"
    "  --record-all              record every allocation whatever the limits (a trace\n"
    "                            to study with --trace-output); --compress: compress\n"
    "                            the traces kept (tensorleak compress --help)\n"
    "  --wait=SECONDS            after CMD ends, wait at most this long for the run's\n"
    "                            other processes (a forkserver, a daemon) to end, so\n"
    "                            each is checked at its end (default 10; 0 = none)\n"
    "  --trace=TRACE             check this trace instead of running a command\n"
    "  --region=NAME             check the last iteration of region NAME\n"
    "  --quiet                   no progress line on stderr while traces are read\n"
    "                            (drawn only when stderr is a terminal)\n"
    "  --help                    print this help\n"
    "\n"
    "exit status: CMD's own when it fails (128+N for signal N); 23 (or N) when a limit\n"
    "is exceeded; 0 when all are kept; 2 usage error (before CMD runs); 3-5 a trace\n"
    "cannot be read; 6 the output cannot be written; 126/127 CMD cannot run.\n";

/* "definite,possible" -> a mask of 1u << TL_LEAK_*; true = not a list of kinds. */
static bool parse_leak_kinds(const char *v, unsigned *mask)
{
    static const char *const names[] = {"reachable", "definite", "indirect", "possible"};
    *mask = 0;
    if (!v || !*v) return true;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        bool known = false;
        if (n == 3 && !strncmp(p, "all", 3)) {
            *mask |= 15u;
            known = true;
        }
        for (unsigned k = 0; k < 4 && !known; k++)
            if (strlen(names[k]) == n && !strncmp(p, names[k], n)) {
                *mask |= 1u << k;
                known = true;
            }
        if (!known) return true;
        p += n;
        if (*p == ',' && !*++p) return true;
    }
    return false;
}

/* "held_by_autograd,pinned_by_view" -> a mask of 1u << TL_PROBLEM_*;
 * true = not a list of problem kinds. */
static bool parse_problem_kinds(const char *v, unsigned *mask)
{
    *mask = 0;
    if (!v || !*v) return true;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        int k = tl_problem_kind_of_name(p, n);
        if (n == 3 && !strncmp(p, "all", 3))
            *mask |= TL_CHECK_PROBLEM_KINDS_ALL;
        else if (k < 0)
            return true;
        else
            *mask |= 1u << k;
        p += n;
        if (*p == ',' && !*++p) return true;
    }
    return false;
}

static int usage_error(const char *what, const char *why)
{
    tl_say("%s: %s (try tensorleak check --help)", what, why); /* what may be a path */
    return TL_EXIT_USAGE;
}

static const struct {
    const char *flag;
    unsigned limit;
    const char *env; /* the pytest plugin's name for it, or NULL */
} limit_flags[] = {
    {"--max-leak-storage", TL_LIMIT_LEAK_STORAGE, "max_leak_storage"},
    {"--max-leak", TL_LIMIT_LEAK, "max_leak"},
    {"--max-pinned", TL_LIMIT_PINNED, "max_pinned"},
    {"--max-peak", TL_LIMIT_PEAK, "max_peak"},
    {"--max-growth-vs-baseline", TL_LIMIT_BASELINE, NULL},
    {"--max-growth", TL_LIMIT_GROWTH, "max_growth"},
    {"--max-problem-storage", TL_LIMIT_PROBLEM, NULL},
};

/* How long check waits by default, after the command, for the run's other
 * traced processes to end (multiprocessing's forkserver and resource tracker
 * exit after the main process), in seconds: each is judged at its real end,
 * with its leak scan, not while it still runs. */
#define CHECK_WAIT_S 10

typedef struct args {
    tl_check_opts_t o;
    const char *supp_files[64];
    size_t nsupp;
    bool no_defaults;
    bool main_only;       /* --main-process-only */
    bool record_all;      /* --record-all: `all` mode whatever the limits */
    bool quiet, compress; /* --quiet: no progress line; --compress: the traces kept */
    unsigned wait_s;      /* --wait */
    const char *output, *trace, *baseline, *pattern;
    const char *html; /* --html=FILE, or NULL */
    int error_code;
    char **cmd;
} args_t;

/* Parse argv; 0, or an exit status (help printed, or a usage error said). */
static int parse(int argc, char **argv, args_t *a)
{
    a->o.top = 5;
    a->error_code = TL_EXIT_LIMITS;
    a->wait_s = CHECK_WAIT_S;
    a->pattern = NULL; /* a directory of the run's own (tl_launch_t), removed after a pass */
    int i;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        bool m = false;
        if (!strcmp(arg, "--")) {
            i++;
            break;
        }
        if (arg[0] != '-') break; /* CMD */
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            return tl_outfile_stdout_text(help) ? TL_EXIT_OUTPUT : -1;
        }
        size_t k;
        for (k = 0; k < sizeof limit_flags / sizeof limit_flags[0]; k++)
            if ((v = tl_opt_value(argc, argv, &i, limit_flags[k].flag, &m)), m) break;
        if (m) {
            unsigned lim = limit_flags[k].limit;
            a->o.set[lim] = true;
            bool ok = lim == TL_LIMIT_BASELINE
                          ? tl_parse_size_or_percent(v, &a->o.limit[lim], &a->o.baseline_percent,
                                                     &a->o.baseline_is_percent)
                          : tl_parse_size(v, &a->o.limit[lim]);
            if (!ok)
                return usage_error(limit_flags[k].flag,
                                   lim == TL_LIMIT_BASELINE
                                       ? "expected a size (0, 512KiB, 1.5GB) or a percentage (10%)"
                                       : "expected a size (0, 512KiB, 1.5GB)");
        } else if ((v = tl_opt_value(argc, argv, &i, "--device", &m)), m) {
            unsigned d = 0;
            char *end = NULL;
            if (v && !strcmp(v, "cpu"))
                d = 1;
            else if (v && !strncmp(v, "cuda:", 5) && v[5] >= '0' && v[5] <= '9') {
                unsigned long n = strtoul(v + 5, &end, 10);
                if (!*end && n < 255) d = (unsigned)n + 2;
            }
            if (!d) return usage_error("--device", "expected cpu or cuda:N");
            a->o.device = d;
        } else if ((v = tl_opt_value(argc, argv, &i, "--suppressions", &m)), m) {
            if (!v || !*v) return usage_error("--suppressions", "expected a file name");
            if (a->nsupp == sizeof a->supp_files / sizeof a->supp_files[0])
                return usage_error("--suppressions", "too many files (64 at most)");
            a->supp_files[a->nsupp++] = v;
        } else if (!strcmp(arg, "--no-default-suppressions")) {
            a->no_defaults = true;
        } else if (!strcmp(arg, "--main-process-only")) {
            a->main_only = true;
        } else if (!strcmp(arg, "--compress")) {
            a->compress = true;
        } else if (!strcmp(arg, "--record-all")) {
            a->record_all = true;
        } else if (!strcmp(arg, "--quiet")) {
            a->quiet = true;
        } else if ((v = tl_opt_value(argc, argv, &i, "--format", &m)), m) {
            if (v && !strcmp(v, "text"))
                a->o.format = TL_CHECK_TEXT;
            else if (v && !strcmp(v, "json"))
                a->o.format = TL_CHECK_JSON;
            else if (v && !strcmp(v, "junit"))
                a->o.format = TL_CHECK_JUNIT;
            else
                return usage_error("--format", "expected text, json or junit");
        } else if ((v = tl_opt_value(argc, argv, &i, "--output", &m)), m) {
            if (!v || !*v) return usage_error("--output", "expected a file name");
            a->output = v;
        } else if ((v = tl_opt_value(argc, argv, &i, "--error-exitcode", &m)), m) {
            unsigned long n;
            if (!tl_parse_uint(v, 255, &n) || n == 0)
                return usage_error("--error-exitcode", "expected a number from 1 to 255");
            a->error_code = (int)n;
        } else if ((v = tl_opt_value(argc, argv, &i, "--wait", &m)), m) {
            unsigned long n;
            if (!tl_parse_uint(v, 86400, &n))
                return usage_error("--wait", "expected a number of seconds (0 = no wait)");
            a->wait_s = (unsigned)n;
        } else if ((v = tl_opt_value(argc, argv, &i, "--top", &m)), m) {
            unsigned long n;
            if (!tl_parse_uint(v, 1000000, &n))
                return usage_error("--top", "expected a number of sites (0 = all)");
            a->o.top = (unsigned)n;
        } else if ((v = tl_opt_value(argc, argv, &i, "--html", &m)), m) {
            if (!v || !*v) return usage_error("--html", "expected a file name");
            a->html = v;
        } else if ((v = tl_opt_value(argc, argv, &i, "--leak-kinds", &m)), m) {
            if (parse_leak_kinds(v, &a->o.leak_kinds))
                return usage_error("--leak-kinds",
                                   "expected definite, indirect, possible, reachable or all, "
                                   "separated by commas");
        } else if ((v = tl_opt_value(argc, argv, &i, "--problem-kinds", &m)), m) {
            if (parse_problem_kinds(v, &a->o.problem_kinds))
                return usage_error("--problem-kinds",
                                   "expected pinned_by_view, duplicate_copy, held_by_autograd, "
                                   "held_by_cycle, held_by_cache, held_by_traceback or all, "
                                   "separated by commas");
        } else if ((v = tl_opt_value(argc, argv, &i, "--trace-output", &m)), m) {
            if (!v || !*v) return usage_error("--trace-output", "expected a path pattern");
            if (tl_launch_pattern_bad(v, "--trace-output")) return TL_EXIT_USAGE;
            a->pattern = v;
        } else if ((v = tl_opt_value(argc, argv, &i, "--trace", &m)), m) {
            if (!v || !*v) return usage_error("--trace", "expected a trace file");
            a->trace = v;
        } else if ((v = tl_opt_value(argc, argv, &i, "--region", &m)), m) {
            if (!v || !*v) return usage_error("--region", "expected a region name");
            a->o.region = v;
        } else if ((v = tl_opt_value(argc, argv, &i, "--baseline", &m)), m) {
            if (!v || !*v) return usage_error("--baseline", "expected a trace file");
            a->baseline = v;
        } else {
            return usage_error(arg, "unknown option");
        }
    }
    a->cmd = i < argc ? argv + i : NULL;
    if (a->trace && a->cmd) return usage_error(a->cmd[0], "--trace takes no command");
    if (a->trace && a->main_only)
        return usage_error("--main-process-only", "--trace checks one trace already");
    if (a->trace && a->record_all)
        return usage_error("--record-all", "--trace checks a trace already recorded");
    if (!a->trace && !a->cmd) return usage_error("check", "no command given (check -- CMD ...)");
    if (a->o.set[TL_LIMIT_BASELINE] != (a->baseline != NULL))
        return usage_error(a->baseline ? "--baseline" : "--max-growth-vs-baseline",
                           "--baseline and --max-growth-vs-baseline go together");
    bool any = false;
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++)
        any |= a->o.set[k];
    if (!any) a->o.set[TL_LIMIT_LEAK] = true; /* LSan's rule: any leak fails */
    return 0;
}

/* "max_leak=0,max_pinned=1048576": the limits the pytest plugin applies to
 * each test body when check runs pytest. */
static void plugin_limits(const tl_check_opts_t *o, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof limit_flags / sizeof limit_flags[0]; k++) {
        unsigned lim = limit_flags[k].limit;
        if (!limit_flags[k].env || !o->set[lim] || lim == TL_LIMIT_GROWTH) continue;
        int w = snprintf(buf + len, n - len, "%s%s=%llu", len ? "," : "", limit_flags[k].env,
                         (unsigned long long)o->limit[lim]);
        if (w < 0 || (size_t)w >= n - len) break;
        len += (size_t)w;
    }
}

/* The suppression options, one per line, for the pytest plugin's own
 * `check --trace` calls (TENSORLEAK_CHECK_ARGS); paths made absolute. */
static void plugin_args(const args_t *a, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i <= a->nsupp; i++) {
        char abs[PATH_MAX];
        int w;
        if (i == a->nsupp)
            w = a->no_defaults ? snprintf(buf + len, n - len, "--no-default-suppressions\n") : 0;
        else
            w = snprintf(buf + len, n - len, "--suppressions=%s\n",
                         realpath(a->supp_files[i], abs) ? abs : a->supp_files[i]);
        if (w < 0 || (size_t)w >= n - len) break;
        len += (size_t)w;
    }
}

/* The HTML report of a failed gate's trace to of, opened before the
 * command ran and closed here; true when it could not be written (the line
 * said). */
static bool write_html(const char *trace, tl_outfile_t *of)
{
    tl_report_opts_t o = {.format = TL_FORMAT_HTML, .top = 10};
    tl_msgs_t msgs = {0};
    int rc = tl_cli_exit(tl_report_file(trace, &o, of->f, &msgs));
    tl_say_msgs(&msgs);
    bool done = rc == TL_EXIT_OK || rc == TL_EXIT_TRUNCATED;
    return tl_outfile_close(of, done) || !done;
}

/* One line: the processes of the run that were still running at the bound. */
static void say_still_running(const tl_launch_t *l, unsigned wait_s)
{
    char pids[128] = "";
    size_t k = 0, shown = l->still_running < TL_LAUNCH_RUNNING_PIDS ? l->still_running
                                                                    : TL_LAUNCH_RUNNING_PIDS;
    for (size_t i = 0; i < shown && k < sizeof pids; i++)
        k += (size_t)snprintf(pids + k, sizeof pids - k, "%s%" PRIu64, i ? ", " : "",
                              l->running_pids[i]);
    tl_say("%u process%s of the run still running %u s after it ended (pid %s%s): checked at "
           "%s last recorded event, without a leak scan",
           l->still_running, l->still_running == 1 ? "" : "es", wait_s, pids,
           l->still_running > shown ? ", ..." : "", l->still_running == 1 ? "its" : "their");
}

/* The processes of a run to check (check_run.h): the main one first, then
 * every other trace but the images that exec'd (exec gives their memory
 * back; the image they became is checked) and the helpers with nothing of
 * interest (launch.h), counted in *unchecked: a shell's or a coreutil's
 * blocks are theirs, not the program's (bash leaves definitely lost blocks
 * at every exit). With main_only, the main one alone. NULL when out of
 * memory (said). */
static tl_check_proc_t *run_procs(const tl_launch_t *l, bool main_only, size_t *n,
                                  unsigned *unchecked)
{
    tl_check_proc_t *p = calloc(l->ntraces + 1, sizeof *p);
    if (!p) {
        tl_say("out of memory");
        return NULL;
    }
    p[0] = (tl_check_proc_t){.path = l->main_trace, .role = "main", .pid = (uint64_t)l->pid};
    *n = 1;
    *unchecked = 0;
    unsigned skipped = 0;
    for (size_t i = 0; i < l->ntraces; i++) {
        const tl_launch_trace_t *t = &l->traces[i];
        if (t->main || t->execd) continue;
        if (main_only) {
            skipped++;
            continue;
        }
        if (t->quiet) {
            ++*unchecked;
            continue;
        }
        p[(*n)++] = (tl_check_proc_t){
            .path = t->path, .role = t->helper ? "helper" : "child", .pid = t->pid};
    }
    if (skipped)
        tl_say("%u other process%s traced, not checked (--main-process-only)", skipped,
               skipped == 1 ? "" : "es");
    return p;
}

/* The traces of helpers with nothing of interest go, as `run` removes
 * them (launch.h). */
static void remove_quiet_helpers(const tl_launch_t *l)
{
    for (size_t i = 0; i < l->ntraces; i++)
        if (l->traces[i].quiet) unlink(l->traces[i].path);
}

int tl_cmd_check(int argc, char **argv)
{
    args_t a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    tl_say_progress(a.quiet);

    tl_supp_t supp = {0};
    char why[512];
    for (size_t i = 0; i < a.nsupp; i++) {
        rc = tl_cli_exit(tl_supp_load_file(&supp, a.supp_files[i], why, sizeof why));
        if (rc) {
            tl_say("%s", why); /* it quotes the file's line */
            tl_supp_free(&supp);
            return rc;
        }
    }
    if (!a.no_defaults && tl_supp_add_defaults(&supp)) {
        tl_say("out of memory");
        tl_supp_free(&supp);
        return TL_EXIT_FAILURE;
    }
    a.o.supp = &supp;
    tl_check_base_t base;
    if (a.baseline) {
        tl_msgs_t msgs = {0};
        rc = tl_cli_exit(tl_check_baseline(a.baseline, &a.o, &base, &msgs));
        tl_say_msgs(&msgs);
        if (rc) {
            tl_supp_free(&supp);
            return rc;
        }
        a.o.base = &base;
    }
    FILE *out = stdout;
    tl_outfile_t of;
    if (a.output) {
        if (tl_outfile_open(&of, a.output)) {
            tl_supp_free(&supp);
            return TL_EXIT_OUTPUT;
        }
        out = of.f;
    }
    /* --html: a bad name is said before the command runs, like --output's;
     * the page is renamed into place only when a limit failed. */
    tl_outfile_t hf;
    if (a.html && tl_outfile_open(&hf, a.html)) {
        if (a.output) tl_outfile_close(&of, false);
        tl_supp_free(&supp);
        return TL_EXIT_OUTPUT;
    }

    int status = 0;
    const char *trace = a.trace;
    /* helpers' traces stay until checked: a helper that leaks fails the run */
    tl_launch_t l = {.pattern = a.pattern,
                     .quiet = true,
                     .keep_helpers = true,
                     .wait_ms = a.main_only ? 0 : a.wait_s * 1000u};
    tl_check_proc_t *procs = NULL;
    size_t nprocs = 0;
    unsigned unchecked = 0;
    if (a.cmd) {
        char limits[512], self[PATH_MAX], code[16], extra[8192];
        plugin_limits(&a.o, limits, sizeof limits);
        plugin_args(&a, extra, sizeof extra);
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        self[n > 0 ? n : 0] = '\0';
        snprintf(code, sizeof code, "%d", a.error_code);
        const char *plugins = getenv("PYTEST_PLUGINS");
        char plug[1024];
        snprintf(plug, sizeof plug, "%s%stensorleak.pytest_plugin", plugins ? plugins : "",
                 plugins && *plugins ? "," : "");
        /* what the limits need (tl_check_needs_every_block): every block, with
         * the leak scan's kinds at exit; else every storage */
        bool every = a.record_all || tl_check_needs_every_block(&a.o);
        const char *env[] = {"TENSORLEAK_MODE",
                             every ? "all" : "default",
                             "TENSORLEAK_LEAK_SCAN",
                             every ? "1" : "0",
                             "PYTEST_PLUGINS",
                             plug,
                             "TENSORLEAK_CHECK_LIMITS",
                             limits,
                             "TENSORLEAK_ERROR_EXITCODE",
                             code,
                             "TENSORLEAK_CHECK_ARGS",
                             extra,
                             "TENSORLEAK_CLI",
                             self,
                             NULL};
        if (!self[0]) env[12] = NULL; /* no CLI path: the plugin searches PATH */
        int code_out;
        if (!tl_launch_run(&l, a.cmd, env, &code_out)) {
            rc = code_out;
            goto done;
        }
        status = l.status;
        if (!l.main_trace[0]) {
            rc = status ? status : TL_EXIT_NO_TRACE;
            goto done;
        }
        trace = l.main_trace;
        if (l.still_running) say_still_running(&l, a.wait_s);
        a.o.traces_removed_on_pass = l.run_dir[0] != '\0';
        if (!l.run_dir[0]) /* --trace-output: they stay where it says */
            tl_say("trace of %s (pid %d) written to %s", a.cmd[0], (int)l.pid, trace);
        if (!(procs = run_procs(&l, a.main_only, &nprocs, &unchecked))) {
            rc = TL_EXIT_FAILURE;
            goto done;
        }
    }
    bool failed = false;
    fflush(stdout);
    tl_msgs_t msgs = {0};
    if (procs) {
        rc = tl_cli_exit(tl_check_run(procs, nprocs, unchecked, &a.o, out, &failed, &msgs));
        for (size_t i = 0; failed && i < nprocs; i++)
            if (!procs[i].passed) { /* --html: the first process that failed */
                trace = procs[i].path;
                break;
            }
    } else {
        rc = tl_cli_exit(tl_check_file(trace, &a.o, out, &failed, &msgs));
    }
    tl_say_msgs(&msgs);
    bool verdict = rc == TL_EXIT_OK || rc == TL_EXIT_TRUNCATED;
    if (a.output) {
        if (tl_outfile_close(&of, verdict) && !rc) rc = TL_EXIT_OUTPUT;
        a.output = NULL; /* closed */
    } else if (fflush(out) != 0 || ferror(out)) {
        tl_say("stdout: cannot write the verdict");
        if (!rc) rc = TL_EXIT_OUTPUT;
    }
    if (!rc && failed && a.html) {
        if (write_html(trace, &hf)) rc = TL_EXIT_OUTPUT;
        a.html = NULL; /* closed */
    }
    if (l.run_dir[0] && !rc && !failed) {
        tl_launch_remove_run_dir(&l); /* a passing check leaves nothing behind */
    } else if (l.run_dir[0]) {
        size_t others = 0; /* the run's other traces still there */
        for (size_t k = 0; k < l.ntraces; k++)
            others += !l.traces[k].main && !l.traces[k].quiet;
        char more[64] = "";
        if (others)
            snprintf(more, sizeof more, "; %zu other trace%s of the run beside it", others,
                     others == 1 ? "" : "s");
        tl_say("trace of %s (pid %d) written to %s (kept: %s%s)", a.cmd[0], (int)l.pid,
               l.main_trace, rc ? "it could not be checked" : "a limit was exceeded", more);
    }
    if (a.compress && (!l.run_dir[0] || rc || failed)) tl_compress_launch(&l, true);
    l.run_dir[0] = '\0'; /* decided */
    if (status)
        rc = status; /* the command's own failure first */
    else if (!rc && failed)
        rc = a.error_code;
done:
    if (a.output) tl_outfile_close(&of, false); /* no verdict: the file is left alone */
    if (a.html) tl_outfile_close(&hf, false);   /* no failed gate: nothing written */
    tl_supp_free(&supp);
    free(procs);
    remove_quiet_helpers(&l);
    if (l.run_dir[0] && tl_launch_remove_run_dir(&l) && access(l.run_dir, F_OK) == 0)
        /* no main trace: what else is there stays */
        tl_say("the run's traces are in %s", l.run_dir);
    tl_launch_free(&l);
    return rc;
}
