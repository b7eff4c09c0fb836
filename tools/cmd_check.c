/* cmd_check.c - `tensorleak check`: the CI gate, as a few steps over the
 * check module (src/report/check/check.h); its options are
 * tools/check_args.c's.
 *
 * Runs a command under the agent, recording what its limits measure
 * (tl_check_needs_every_block: every allocation, TENSORLEAK_MODE=all with
 * the leak scan, or every storage, the default mode), or takes an existing
 * trace (--trace), and checks it against leak limits. Everything that can
 * be wrong with the command line, the suppression files or the baseline is
 * found before the command runs (exit 2, or the baseline's trace error).
 * Exit: the command's own failure passes through; else 23 (or
 * --error-exitcode) when a limit is exceeded; else 0.
 */
#include "config.h"

#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/check/check.h"
#include "report/cmd/report.h"
#include "tools/check_args.h"
#include "tools/cli.h"
#include "tools/launch.h"
#include "tools/outfile.h"
#include "tools/project.h"
#include "tools/say.h"
#include "tools/settle.h"

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
    char pids[TL_SETTLE_PIDS_LEN];
    tl_settle_pids(pids, l->running_pids, l->still_running);
    tl_say("%u process%s of the run still running %u s after it ended (pid %s): checked at "
           "%s last recorded event, %s leaks not judged",
           l->still_running, l->still_running == 1 ? "" : "es", wait_s, pids,
           l->still_running == 1 ? "its" : "their", l->still_running == 1 ? "its" : "their");
}

/* One line: how many other processes --main-process-only left out. */
static void say_main_only(unsigned skipped)
{
    if (skipped)
        tl_say("%u other process%s traced, not checked (--main-process-only)", skipped,
               skipped == 1 ? "" : "es");
}

/* Traces by start (CLOCK_MONOTONIC at the agent's start), then pid. */
static int by_start(const void *x, const void *y)
{
    const tl_launch_trace_t *a = *(const tl_launch_trace_t *const *)x,
                            *b = *(const tl_launch_trace_t *const *)y;
    if (a->start_mono != b->start_mono) return a->start_mono < b->start_mono ? -1 : 1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* The processes of a run to check (tl_check_run): the main one first, then
 * every other trace by start but the images that exec'd (exec gives their memory
 * back; the image they became is checked) and the helpers with nothing of
 * interest (launch.h), counted in *unchecked: a shell's or a coreutil's
 * blocks are theirs, not the program's (bash leaves definitely lost blocks
 * at every exit). A launcher main process (launch.h: bash running a
 * script, make, timeout) is left out, said in o (set_main_unchecked), and
 * the first other process by start is the main one; so is one whose last
 * image exec'd an untraced program (l->main_execd). An exec launcher's
 * programs (launch.h) are kept like a launcher's. With main_only, the
 * main one alone (a launcher's first program). NULL when out of memory
 * (said). */
static tl_check_proc_t *run_procs(const tl_launch_t *l, bool main_only, size_t *n,
                                  unsigned *unchecked)
{
    tl_check_proc_t *p = calloc(l->ntraces + 1, sizeof *p);
    if (!p) {
        tl_say("out of memory");
        return NULL;
    }
    bool launcher = l->launcher;
    *n = 0;
    if (!launcher && !l->main_execd)
        p[(*n)++] =
            (tl_check_proc_t){.path = l->main_trace, .role = "main", .pid = (uint64_t)l->pid};
    *unchecked = 0;
    unsigned skipped = 0;
    /* the others by start, as check --trace=DIR and report order them */
    const tl_launch_trace_t **by = calloc(l->ntraces + 1, sizeof *by);
    if (!by) {
        free(p);
        tl_say("out of memory");
        return NULL;
    }
    for (size_t i = 0; i < l->ntraces; i++)
        by[i] = &l->traces[i];
    qsort(by, l->ntraces, sizeof *by, by_start);
    for (size_t i = 0; i < l->ntraces; i++) {
        const tl_launch_trace_t *t = by[i];
        if (t->main || t->execd) continue;
        if (main_only && (*n || t->quiet)) {
            skipped++;
            continue;
        }
        if (t->quiet) {
            ++*unchecked;
            continue;
        }
        const char *role = !*n ? "main" : t->helper && !launcher && !t->script ? "helper" : "child";
        p[(*n)++] = (tl_check_proc_t){.path = t->path, .role = role, .pid = t->pid};
    }
    free(by);
    say_main_only(skipped);
    return p;
}

/* The main process left out of the processes checked (a launcher, or with
 * execd one whose last image exec'd an untraced program): its pid and its
 * program, for the verdict to say (check.h). */
static void set_main_unchecked(tl_check_opts_t *o, uint64_t pid, const char *exe, bool execd)
{
    o->main_unchecked_pid = pid;
    o->main_unchecked_exe = exe;
    o->main_execd = execd;
}

/* The traces of helpers with nothing of interest go, as `run` removes
 * them (launch.h). */
static void remove_quiet_helpers(const tl_launch_t *l)
{
    for (size_t i = 0; i < l->ntraces; i++)
        if (l->traces[i].quiet) unlink(l->traces[i].path);
}

/* One gate: its options and what it holds between its steps. */
typedef struct gate {
    tl_check_args_t a;
    tl_supp_t supp;
    tl_check_base_t base;
    FILE *out;              /* the verdict's stream: stdout or of.f */
    tl_outfile_t of, hf;    /* --output, --html (open while a.output, a.html) */
    tl_launch_t l;          /* check -- CMD's run */
    const char *trace;      /* the trace checked (--html's, after a failure) */
    tl_check_proc_t *procs; /* check -- CMD, --trace=DIR: the processes checked, else NULL */
    size_t nprocs;
    char **paths; /* --trace=DIR: its traces (tl_report_run_paths) */
    size_t npaths;
    unsigned unchecked; /* helpers left out */
    int status;         /* the command's own exit status */
} gate_t;

/* Everything that can be wrong before the command runs: the suppression
 * files, the baseline, the output files. 0, or an exit status (said), g's
 * resources then released. */
static int prepare(gate_t *g)
{
    char why[512];
    int rc;
    for (size_t i = 0; i < g->a.nsupp; i++) {
        rc = tl_cli_exit(tl_supp_load_file(&g->supp, g->a.supp_files[i], why, sizeof why));
        if (rc) {
            tl_say("%s", why); /* it quotes the file's line */
            goto fail;
        }
    }
    if (!g->a.no_defaults && tl_supp_add_defaults(&g->supp)) {
        tl_say("out of memory");
        rc = TL_EXIT_FAILURE;
        goto fail;
    }
    g->a.o.supp = &g->supp;
    if (g->a.baseline) {
        tl_msgs_t msgs = {0};
        rc = tl_cli_exit(tl_check_baseline(g->a.baseline, &g->a.o, &g->base, &msgs));
        tl_say_msgs(&msgs);
        if (rc) goto fail;
        g->a.o.base = &g->base;
    }
    g->out = stdout;
    rc = TL_EXIT_OUTPUT;
    if (g->a.output) {
        if (tl_outfile_open(&g->of, g->a.output)) goto fail;
        g->out = g->of.f;
    }
    /* --html: a bad name is said before the command runs, like --output's;
     * the page is renamed into place only when a limit failed. */
    if (g->a.html && tl_outfile_open(&g->hf, g->a.html)) {
        if (g->a.output) tl_outfile_close(&g->of, false);
        goto fail;
    }
    return 0;
fail:
    tl_supp_free(&g->supp);
    return rc;
}

/* Whether a trace of g->paths[1, npaths) is not a system tool's
 * (tl_project_tool): a program a launcher main process ran (launch.h). */
static bool dir_program(const gate_t *g)
{
    static tl_trace_info_t info; /* 12 KiB */
    for (size_t i = 1; i < g->npaths; i++)
        if (tl_trace_peek(g->paths[i], &info) != TL_STATUS_OK || !tl_project_tool(&info))
            return true;
    return false;
}

/* A pid's images in a run's directory: the first start, and whether its
 * first image (the lowest exec_seq) is a system tool. */
typedef struct pid_start {
    uint64_t pid, start, seq;
    bool tool;
} pid_start_t;

/* Whether dir holds an earlier image of the main process (*m, of its
 * session) that is a system tool: with m a program, the run's command was
 * an exec launcher (launch.h: a script that ran programs, then exec'd one;
 * check -- CMD keeps that image's trace for this, and the images of its
 * forks that exec'd). Each pid's first start there into *starts (*n;
 * freed by the caller): a script's program whose pid started before the
 * main image is the script's. */
static bool dir_images(const char *dir, const tl_trace_info_t *m, pid_start_t **starts, size_t *n)
{
    static tl_trace_info_t info; /* 12 KiB */
    char path[PATH_MAX];
    bool found = false;
    size_t cap = 0;
    *starts = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return false;
    while (tl_settle_next_trace(d, dir, m->session, path, &info)) {
        found |= info.pid == m->pid && info.exec_seq < m->exec_seq && tl_project_tool(&info);
        size_t k = 0;
        while (k < *n && (*starts)[k].pid != info.pid)
            k++;
        if (k < *n) {
            pid_start_t *o = &(*starts)[k];
            if (info.start_mono < o->start) o->start = info.start_mono;
            if (info.exec_seq < o->seq) {
                o->seq = info.exec_seq;
                o->tool = tl_project_tool(&info);
            }
            continue;
        }
        pid_start_t *g =
            k == cap ? realloc(*starts, (cap = cap ? 2 * cap : 16) * sizeof *g) : *starts;
        if (!g) break; /* out of memory: the images' own starts stand */
        *starts = g;
        g[(*n)++] = (pid_start_t){info.pid, info.start_mono, info.exec_seq, tl_project_tool(&info)};
    }
    closedir(d);
    return found;
}

/* tl_project_before_exec of info, its pid's first image from dir_images
 * (else its own), m the main image. */
static bool before_exec(const pid_start_t *s, size_t n, const tl_trace_info_t *info,
                        const tl_trace_info_t *m)
{
    uint64_t start = info->start_mono;
    bool tool = false;
    for (size_t i = 0; i < n; i++)
        if (s[i].pid == info->pid) {
            start = s[i].start;
            tool = s[i].tool;
        }
    return tl_project_before_exec(start, tool, info->ppid, m->pid, m->start_mono);
}

/* check --trace=DIR: the traces of a run's directory (kept by a check
 * that failed, or written by run) as check -- CMD checks them: the main
 * process first (tl_report_run_paths: the earliest whose parent is not
 * there; the images that exec'd left out), each other one, by start, a
 * child (the same program) or a helper, helpers with nothing of interest
 * left out (counted in g->unchecked; under a launcher main process, left
 * out and said, the system tools; so too those an exec launcher's script
 * ran, launch.h), all but the main one left out with
 * --main-process-only; traces of several runs (sessions) are said. Its
 * *.tlt files that are not traces are said and counted in a.o.unread_traces: the
 * gate cannot pass. 0 (--trace names a file:
 * nothing to do), or an exit status (said). */
static int dir_procs(gate_t *g)
{
    struct stat st;
    if (stat(g->a.trace, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    tl_msgs_t msgs = {0};
    const char *args[] = {g->a.trace};
    int rc = tl_cli_exit(tl_report_run_paths(args, 1, &g->paths, &g->npaths, &msgs));
    g->a.o.unread_traces = (unsigned)(msgs.n + msgs.lost);
    tl_say_msgs(&msgs);
    if (rc) return rc;
    static tl_trace_info_t main_info, info; /* 12 KiB each */
    g->procs = calloc(g->npaths, sizeof *g->procs);
    uint64_t *sessions = calloc(g->npaths, sizeof *sessions); /* each once */
    if (!g->procs || !sessions) {
        free(sessions);
        tl_say("out of memory");
        return TL_EXIT_FAILURE;
    }
    if (tl_trace_peek(g->paths[0], &main_info) != TL_STATUS_OK)
        memset(&main_info, 0, sizeof main_info);
    bool launcher = tl_project_tool(&main_info) && dir_program(g);
    pid_start_t *starts = NULL;
    size_t nstarts = 0;
    bool exec_launcher = !launcher && main_info.exe[0] && main_info.exec_seq > 0 &&
                         !tl_project_tool(&main_info) &&
                         dir_images(g->a.trace, &main_info, &starts, &nstarts);
    if (launcher || main_info.exec_end)
        set_main_unchecked(&g->a.o, main_info.pid, main_info.exe, main_info.exec_end);
    else
        g->procs[g->nprocs++] =
            (tl_check_proc_t){.path = g->paths[0], .role = "main", .pid = main_info.pid};
    size_t runs = 1;
    unsigned skipped = 0; /* --main-process-only */
    sessions[0] = main_info.session;
    for (size_t i = 1; i < g->npaths; i++) {
        if (tl_trace_peek(g->paths[i], &info) != TL_STATUS_OK) memset(&info, 0, sizeof info);
        size_t k = 0;
        while (k < runs && sessions[k] != info.session)
            k++;
        if (k == runs) sessions[runs++] = info.session;
        /* the main program unknown (its trace cut): every other one a child */
        bool helper = main_info.exe[0] && strcmp(info.exe, main_info.exe);
        if (g->a.main_only && (g->nprocs || !launcher || tl_project_tool(&info))) {
            skipped++; /* as run_procs: a launcher's first program is the main one */
            continue;
        }
        /* a program the script ran before it exec'd the main one */
        bool script = exec_launcher && before_exec(starts, nstarts, &info, &main_info);
        if (launcher || script
                ? tl_project_tool(&info)
                : helper && !tl_project_own(&info, &main_info) && tl_project_quiet(g->paths[i])) {
            g->unchecked++;
            continue;
        }
        const char *role = !g->nprocs                       ? "main"
                           : helper && !launcher && !script ? "helper"
                                                            : "child";
        g->procs[g->nprocs++] =
            (tl_check_proc_t){.path = g->paths[i], .role = role, .pid = info.pid};
    }
    free(sessions);
    free(starts);
    if (runs > 1)
        tl_say("note: the traces of %zu runs (their sessions differ) are checked as one run", runs);
    say_main_only(skipped);
    if (!g->nprocs) { /* its main image exec'd an untraced program, nothing else */
        tl_say("%s: its main process (pid %" PRIu64 ") exec'd a program that left no trace: "
               "nothing of it to check",
               g->a.trace, main_info.pid);
        return TL_EXIT_NO_TRACE;
    }
    g->trace = g->procs[0].path;
    return 0;
}

/* check -- CMD: run it, recording what the limits need, and list the
 * processes to check. false, or true with *rc the exit status when there
 * is nothing to check (the command could not run, left no trace; said). */
static bool run_command(gate_t *g, int *rc)
{
    char limits[512], self[PATH_MAX], code[16], extra[8192], plug[1024];
    tl_check_args_plugin_limits(&g->a.o, limits, sizeof limits);
    tl_check_args_plugin_args(&g->a, extra, sizeof extra);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(code, sizeof code, "%d", g->a.error_code);
    const char *plugins = getenv("PYTEST_PLUGINS");
    snprintf(plug, sizeof plug, "%s%stensorleak.pytest_plugin", plugins ? plugins : "",
             plugins && *plugins ? "," : "");
    /* what the limits need (tl_check_needs_every_block): every block, with
     * the leak scan's kinds at exit; else every storage */
    bool every = g->a.record_all || tl_check_needs_every_block(&g->a.o);
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
    tl_launch_t *l = &g->l;
    if (!tl_launch_run(l, g->a.cmd, env, rc)) return true;
    g->status = l->status;
    if (!l->main_trace[0]) {
        *rc = g->status ? g->status : TL_EXIT_NO_TRACE;
        return true;
    }
    g->trace = l->main_trace;
    if (l->still_running) say_still_running(l, g->a.wait_s);
    g->a.o.traces_removed_on_pass = l->run_dir[0] != '\0';
    if (!l->run_dir[0]) /* --trace-output: they stay where it says */
        tl_say("trace of %s (pid %d) written to %s", g->a.cmd[0], (int)l->pid, g->trace);
    if (!(g->procs = run_procs(l, g->a.main_only, &g->nprocs, &g->unchecked))) {
        *rc = TL_EXIT_FAILURE;
        return true;
    }
    if (l->launcher || l->main_execd)
        set_main_unchecked(&g->a.o, (uint64_t)l->pid, l->main_exe, l->main_execd);
    if (!g->nprocs) { /* main_execd, and nothing else to check */
        tl_say("%s (pid %d) exec'd a program that left no trace (a static or setuid program, or "
               "one given TENSORLEAK_DISABLE=1): nothing of it to check",
               g->a.cmd[0], (int)l->pid);
        *rc = g->status ? g->status : TL_EXIT_NO_TRACE;
        return true;
    }
    return false;
}

/* Check the trace or the run's processes, write the verdict (and --html's
 * page when a limit failed); *failed: a limit was exceeded. The exit status
 * of the check itself: 0, a trace's, or TL_EXIT_OUTPUT. */
static int judge(gate_t *g, bool *failed)
{
    int rc;
    *failed = false;
    fflush(stdout);
    tl_msgs_t msgs = {0};
    if (g->procs) {
        rc = tl_cli_exit(
            tl_check_run(g->procs, g->nprocs, g->unchecked, &g->a.o, g->out, failed, &msgs));
        for (size_t i = 0; *failed && i < g->nprocs; i++)
            if (!g->procs[i].passed) { /* --html: the first process that failed */
                g->trace = g->procs[i].path;
                break;
            }
    } else {
        rc = tl_cli_exit(tl_check_file(g->trace, &g->a.o, g->out, failed, &msgs));
    }
    tl_say_msgs(&msgs);
    bool verdict = rc == TL_EXIT_OK || rc == TL_EXIT_TRUNCATED;
    if (g->a.output) {
        if (tl_outfile_close(&g->of, verdict) && !rc) rc = TL_EXIT_OUTPUT;
        g->a.output = NULL; /* closed */
    } else if (fflush(g->out) != 0 || ferror(g->out)) {
        /* a reader that left early (| head -1) is no failure: the verdict's status */
        bool left = tl_outfile_reader_left(fileno(g->out));
        tl_say("stdout: cannot write the verdict%s", left ? ": its reader left (Broken pipe)" : "");
        if (!rc && !left) rc = TL_EXIT_OUTPUT;
    }
    if (!rc && *failed && g->a.html) {
        if (write_html(g->trace, &g->hf)) rc = TL_EXIT_OUTPUT;
        g->a.html = NULL; /* closed */
    }
    return rc;
}

/* The run's own directory: removed after a passing check (nothing left
 * behind), else kept and named. */
static void settle_run_dir(gate_t *g, int rc, bool failed)
{
    tl_launch_t *l = &g->l;
    if (l->run_dir[0] && !rc && !failed) {
        tl_launch_remove_run_dir(l);
    } else if (l->run_dir[0]) {
        size_t others = 0; /* the run's other traces still there */
        for (size_t k = 0; k < l->ntraces; k++)
            others += !l->traces[k].main && !l->traces[k].quiet;
        char more[64] = "";
        if (others)
            snprintf(more, sizeof more, "; %zu other trace%s of the run beside it", others,
                     others == 1 ? "" : "s");
        tl_say("trace of %s (pid %d) written to %s (kept: %s%s)", g->a.cmd[0], (int)l->pid,
               l->main_trace, rc ? "it could not be checked" : "a limit was exceeded", more);
    }
    if (g->a.compress && (!l->run_dir[0] || rc || failed)) tl_compress_launch(l, true);
    l->run_dir[0] = '\0'; /* decided */
}

/* What is still open or held, whatever happened. */
static void finish(gate_t *g)
{
    if (g->a.output) tl_outfile_close(&g->of, false); /* no verdict: the file is left alone */
    if (g->a.html) tl_outfile_close(&g->hf, false);   /* no failed gate: nothing written */
    tl_supp_free(&g->supp);
    free(g->procs);
    tl_report_run_paths_free(g->paths, g->npaths);
    remove_quiet_helpers(&g->l);
    if (g->l.run_dir[0] && tl_launch_remove_run_dir(&g->l) && access(g->l.run_dir, F_OK) == 0)
        /* no main trace: what else is there stays */
        tl_say("the run's traces are in %s", g->l.run_dir);
    tl_launch_free(&g->l);
}

int tl_cmd_check(int argc, char **argv)
{
    gate_t g;
    memset(&g, 0, sizeof g);
    int rc = tl_check_args_parse(argc, argv, &g.a);
    if (rc) return rc < 0 ? TL_EXIT_OK : rc;
    tl_say_progress(g.a.quiet);
    if ((rc = prepare(&g))) return rc;
    g.trace = g.a.trace;
    if (g.a.trace && (rc = dir_procs(&g))) {
        finish(&g);
        return rc;
    }
    /* helpers' traces stay until checked: a helper that leaks fails the run */
    g.l = (tl_launch_t){.pattern = g.a.pattern,
                        .quiet = true,
                        .keep_helpers = true,
                        .wait_ms = g.a.main_only ? 0 : g.a.wait_s * 1000u,
                        .start_wait_ms = g.a.main_only ? 0 : TL_LAUNCH_START_WAIT_MS};
    if (!g.a.cmd || !run_command(&g, &rc)) {
        bool failed;
        rc = judge(&g, &failed);
        settle_run_dir(&g, rc, failed);
        if (g.status)
            rc = g.status; /* the command's own failure first */
        else if (!rc && failed)
            rc = g.a.error_code;
        unsigned unread = g.a.o.unread_traces;
        if (unread && (!rc || rc == g.a.error_code)) {
            tl_say("%u file%s of %s could not be read as trace%s: the gate cannot pass", unread,
                   unread == 1 ? "" : "s", g.a.trace, unread == 1 ? "" : "s");
            if (!rc) rc = TL_EXIT_BAD_TRACE;
        }
    }
    finish(&g);
    return rc;
}
