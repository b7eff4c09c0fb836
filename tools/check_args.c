/* check_args.c - the options of `tensorleak check` (check_args.h): its
 * help, the limits and options parsed into the check module's
 * tl_check_opts_t (src/report/check/check.h), and what the pytest plugin
 * is told of them. Says usage errors on stderr (tools/say.h).
 */
#include "config.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/args.h"
#include "tools/check_args.h"
#include "tools/exit_codes.h"
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
    "                            exec'd last; when CMD is a system tool such as bash,\n"
    "                            make or timeout, the first program it ran); by default\n"
    "                            every process of the run is checked (forked workers\n"
    "                            too) and named when it fails\n"
    "  --record-all              record every allocation whatever the limits (a trace\n"
    "                            to study with --trace-output); --compress: compress\n"
    "                            the traces kept (tensorleak compress --help)\n"
    "  --wait=SECONDS            after CMD ends, wait at most this long for the run's\n"
    "                            other processes (a forkserver, a daemon) to end, so\n"
    "                            each is checked at its end (default 10; 0 = none)\n"
    "  --jobs=N                  check up to N of the run's processes at a time, each\n"
    "                            in a process of its own (default: the CPUs it may\n"
    "                            use, at most 4; memory: N analyses at a time)\n"
    "  --trace=TRACE|DIR         check this trace instead of running a command; a\n"
    "                            run's directory: each of its processes, as CMD's\n"
    "  --region=NAME             check the last iteration of region NAME\n"
    "  --quiet                   no progress line on stderr while traces are read\n"
    "                            (drawn only when stderr is a terminal)\n"
    "  --help                    print this help\n"
    "\n"
    "exit status: CMD's own when it fails (128+N for signal N); 23 (or N) when a limit\n"
    "is exceeded; 0 when all are kept; 2 usage error (before CMD runs); 3-5 a trace\n"
    "cannot be read; 6 the output cannot be written; 126/127 CMD cannot run.\n";

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

/* The helpers of parse below take the option at argv[*i] into a when it is
 * one of theirs: NOT_MINE when it is not, else 0 or an exit status (the
 * usage error said). */
#define NOT_MINE (-2)

/* --max-leak=SIZE and the other limits (limit_flags). */
static int opt_limit(int argc, char **argv, int *i, tl_check_args_t *a)
{
    const char *v = NULL;
    bool m = false;
    size_t k;
    for (k = 0; k < sizeof limit_flags / sizeof limit_flags[0]; k++)
        if ((v = tl_opt_value(argc, argv, i, limit_flags[k].flag, &m)), m) break;
    if (!m) return NOT_MINE;
    unsigned lim = limit_flags[k].limit;
    a->o.set[lim] = true;
    bool ok = lim == TL_LIMIT_BASELINE
                  ? tl_parse_size_or_percent(v, &a->o.limit[lim], &a->o.baseline_percent,
                                             &a->o.baseline_is_percent)
                  : tl_parse_size(v, &a->o.limit[lim]);
    if (ok) return 0;
    return usage_error(limit_flags[k].flag,
                       lim == TL_LIMIT_BASELINE
                           ? "expected a size (0, 512KiB, 1.5GB) or a percentage (10%)"
                           : "expected a size (0, 512KiB, 1.5GB)");
}

/* The options without a value. */
static int opt_flag(const char *arg, tl_check_args_t *a)
{
    if (!strcmp(arg, "--no-default-suppressions"))
        a->no_defaults = true;
    else if (!strcmp(arg, "--main-process-only"))
        a->main_only = true;
    else if (!strcmp(arg, "--record-all"))
        a->record_all = true;
    else if (!strcmp(arg, "--quiet"))
        a->quiet = true;
    else if (!strcmp(arg, "--compress"))
        a->compress = true;
    else
        return NOT_MINE;
    return 0;
}

/* --device, --error-exitcode, --wait, --top. */
static int opt_number(int argc, char **argv, int *i, tl_check_args_t *a)
{
    const char *v;
    bool m = false;
    unsigned long n;
    if ((v = tl_opt_value(argc, argv, i, "--device", &m)), m) {
        unsigned d = 0;
        char *end = NULL;
        if (v && !strcmp(v, "cpu"))
            d = 1;
        else if (v && !strncmp(v, "cuda:", 5) && v[5] >= '0' && v[5] <= '9') {
            unsigned long k = strtoul(v + 5, &end, 10);
            if (!*end && k < 255) d = (unsigned)k + 2;
        }
        if (!d) return usage_error("--device", "expected cpu or cuda:N");
        a->o.device = d;
    } else if ((v = tl_opt_value(argc, argv, i, "--error-exitcode", &m)), m) {
        if (!tl_parse_uint(v, 255, &n) || n == 0)
            return usage_error("--error-exitcode", "expected a number from 1 to 255");
        a->error_code = (int)n;
    } else if ((v = tl_opt_value(argc, argv, i, "--wait", &m)), m) {
        if (!tl_parse_uint(v, 86400, &n))
            return usage_error("--wait", "expected a number of seconds (0 = no wait)");
        a->wait_s = (unsigned)n;
    } else if ((v = tl_opt_value(argc, argv, i, "--jobs", &m)), m) {
        if (!tl_parse_uint(v, 1024, &n) || n == 0)
            return usage_error("--jobs", "expected a number of processes from 1 to 1024");
        a->o.jobs = (unsigned)n;
    } else if ((v = tl_opt_value(argc, argv, i, "--top", &m)), m) {
        if (!tl_parse_uint(v, 1000000, &n))
            return usage_error("--top", "expected a number of sites (0 = all)");
        a->o.top = (unsigned)n;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* What the verdict says and where: --format, --output, --html,
 * --leak-kinds, --problem-kinds. */
static int opt_verdict(int argc, char **argv, int *i, tl_check_args_t *a)
{
    const char *v;
    bool m = false;
    if ((v = tl_opt_value(argc, argv, i, "--format", &m)), m) {
        if (v && !strcmp(v, "text"))
            a->o.format = TL_CHECK_TEXT;
        else if (v && !strcmp(v, "json"))
            a->o.format = TL_CHECK_JSON;
        else if (v && !strcmp(v, "junit"))
            a->o.format = TL_CHECK_JUNIT;
        else
            return usage_error("--format", "expected text, json or junit");
    } else if ((v = tl_opt_value(argc, argv, i, "--output", &m)), m) {
        if (!v || !*v) return usage_error("--output", "expected a file name");
        a->output = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--html", &m)), m) {
        if (!v || !*v) return usage_error("--html", "expected a file name");
        a->html = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--leak-kinds", &m)), m) {
        if (tl_check_leak_kinds_parse(v, &a->o.leak_kinds))
            return usage_error("--leak-kinds",
                               "expected definite, indirect, possible, reachable or all, "
                               "separated by commas");
    } else if ((v = tl_opt_value(argc, argv, i, "--problem-kinds", &m)), m) {
        if (tl_check_problem_kinds_parse(v, &a->o.problem_kinds))
            return usage_error("--problem-kinds",
                               "expected pinned_by_view, duplicate_copy, held_by_autograd, "
                               "held_by_cycle, held_by_cache, held_by_traceback or all, "
                               "separated by commas");
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* The files and names check reads or writes: --suppressions,
 * --trace-output, --trace, --region, --baseline. */
static int opt_source(int argc, char **argv, int *i, tl_check_args_t *a)
{
    const char *v;
    bool m = false;
    if ((v = tl_opt_value(argc, argv, i, "--suppressions", &m)), m) {
        if (!v || !*v) return usage_error("--suppressions", "expected a file name");
        if (a->nsupp == sizeof a->supp_files / sizeof a->supp_files[0])
            return usage_error("--suppressions", "too many files (64 at most)");
        a->supp_files[a->nsupp++] = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--trace-output", &m)), m) {
        if (!v || !*v) return usage_error("--trace-output", "expected a path pattern");
        if (tl_launch_pattern_bad(v, "--trace-output")) return TL_EXIT_USAGE;
        a->pattern = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--trace", &m)), m) {
        if (!v || !*v) return usage_error("--trace", "expected a trace file or a run's directory");
        a->trace = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--region", &m)), m) {
        if (!v || !*v) return usage_error("--region", "expected a region name");
        a->o.region = v;
    } else if ((v = tl_opt_value(argc, argv, i, "--baseline", &m)), m) {
        if (!v || !*v) return usage_error("--baseline", "expected a trace file");
        a->baseline = v;
    } else {
        return NOT_MINE;
    }
    return 0;
}

/* The options that go together or exclude each other, once all are read;
 * no limit at all means --max-leak=0. 0 or an exit status (said). */
static int parse_agree(tl_check_args_t *a)
{
    if (a->trace && a->cmd) return usage_error(a->cmd[0], "--trace takes no command");
    struct stat st;
    if (a->trace && a->main_only && !(stat(a->trace, &st) == 0 && S_ISDIR(st.st_mode)))
        return usage_error("--main-process-only", "--trace=TRACE checks one trace already");
    if (a->trace && a->record_all)
        return usage_error("--record-all", "--trace checks a trace already recorded");
    if (a->trace && a->compress)
        return usage_error("--compress", "--trace checks a trace already recorded "
                                         "(tensorleak compress TRACE compresses it)");
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

/* --jobs by default: the CPUs this process may run on (its affinity: a
 * container's share), at most TL_CHECK_JOBS_MAX. */
static unsigned default_jobs(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n < 1 ? 1 : n > TL_CHECK_JOBS_MAX ? TL_CHECK_JOBS_MAX : (unsigned)n;
}

int tl_check_args_parse(int argc, char **argv, tl_check_args_t *a)
{
    a->o.top = 5;
    a->o.jobs = default_jobs();
    a->error_code = TL_EXIT_LIMITS;
    a->wait_s = TL_CHECK_WAIT_S;
    a->pattern = NULL; /* a directory of the run's own (tl_launch_t), removed after a pass */
    int i;
    for (i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--")) {
            i++;
            break;
        }
        if (arg[0] != '-') break; /* CMD */
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
            return tl_outfile_stdout_text(help) ? TL_EXIT_OUTPUT : -1;
        int rc = opt_limit(argc, argv, &i, a);
        if (rc == NOT_MINE) rc = opt_flag(arg, a);
        if (rc == NOT_MINE) rc = opt_number(argc, argv, &i, a);
        if (rc == NOT_MINE) rc = opt_verdict(argc, argv, &i, a);
        if (rc == NOT_MINE) rc = opt_source(argc, argv, &i, a);
        if (rc == NOT_MINE) return usage_error(arg, "unknown option");
        if (rc) return rc;
    }
    a->cmd = i < argc ? argv + i : NULL;
    return parse_agree(a);
}

void tl_check_args_plugin_limits(const tl_check_opts_t *o, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < sizeof limit_flags / sizeof limit_flags[0]; k++) {
        unsigned lim = limit_flags[k].limit;
        /* --max-leak applies at the end point alone, with the leak scan's kinds
         * (definitely and indirectly lost): a test body's live growth counted
         * what each first use leaves (caches, torch's op handles and registries,
         * thread_locals) and clean suites failed; their leaks are named by the
         * test's line there. The marker and --tensorleak-max-leak still apply it. */
        if (!limit_flags[k].env || !o->set[lim] || lim == TL_LIMIT_GROWTH || lim == TL_LIMIT_LEAK)
            continue;
        int w = snprintf(buf + len, n - len, "%s%s=%llu", len ? "," : "", limit_flags[k].env,
                         (unsigned long long)o->limit[lim]);
        if (w < 0 || (size_t)w >= n - len) break;
        len += (size_t)w;
    }
}

void tl_check_args_plugin_args(const tl_check_args_t *a, char *buf, size_t n)
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
