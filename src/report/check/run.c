/* run.c - the gate over a run's processes (check.h: tl_check_run).
 *
 * Each trace is evaluated and rendered into memory on its own, then freed,
 * so a run of many workers holds one analysis at a time (o->jobs at a
 * time with o->jobs: run_jobs.c). The main process is taken last: its JSON
 * carries the others' verdicts and the run's result (in text and JUnit it
 * may have been evaluated beside them: main_guessed).
 */
#include "report/check/verdict.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/size_text.h"
#include "report/render/escape.h"

typedef struct verdict {
    char *text;
    size_t len;
    tl_check_result_t r;
    tl_status_t rc;
} verdict_t;

/* Evaluate p's trace into v (its rendered verdict in v->text). */
static void eval_one(const tl_check_proc_t *p, const tl_check_opts_t *o,
                     const tl_check_proc_ctx_t *ctx, verdict_t *v, tl_msgs_t *msgs)
{
    v->rc = tl_check_eval_proc(p, o, ctx, &v->text, &v->len, &v->r, msgs);
}

/* Adds what each rule hid in the process just checked (tl_supp_rule_t's
 * bytes and blocks) to sb: per rule, bytes, blocks, processes. */
static void supp_add(const tl_supp_t *s, uint64_t *sb)
{
    for (size_t i = 0; i < s->nrules; i++) {
        sb[3 * i] += s->rules[i].bytes;
        sb[3 * i + 1] += s->rules[i].blocks;
        sb[3 * i + 2] += s->rules[i].blocks != 0;
    }
}

/* The run's suppressions, once: "suppressed over the 3 processes: ...". */
static void supp_say(const tl_supp_t *s, const uint64_t *sb, size_t nprocs, FILE *out)
{
    char b[32];
    uint64_t bytes = 0, blocks = 0;
    size_t used = 0;
    for (size_t i = 0; i < s->nrules; i++) {
        bytes += sb[3 * i];
        blocks += sb[3 * i + 1];
        used += sb[3 * i + 1] != 0;
    }
    if (!blocks) return;
    fprintf(out, "suppressed over the %zu processes: %s in %" PRIu64 " block%s by %zu rule%s\n",
            nprocs, tl_size_text(bytes, b, sizeof b), blocks, blocks == 1 ? "" : "s", used,
            used == 1 ? "" : "s");
    for (size_t i = 0; i < s->nrules; i++) {
        const tl_supp_rule_t *r = &s->rules[i];
        if (!sb[3 * i + 1]) continue;
        fprintf(out, "  %s in %" PRIu64 " block%s of %" PRIu64 " process%s: leak:",
                tl_size_text(sb[3 * i], b, sizeof b), sb[3 * i + 1], sb[3 * i + 1] == 1 ? "" : "s",
                sb[3 * i + 2], sb[3 * i + 2] == 1 ? "" : "es");
        tl_esc_puts(out, r->pattern);
        if (r->line) {
            fputs(" (", out);
            tl_esc_puts(out, r->source);
            fprintf(out, ":%u)\n", r->line);
        } else {
            fprintf(out, " (default: %s)\n", r->why ? r->why : "built in");
        }
    }
}

/* A run's verdicts while they are gathered: one per process, the other
 * processes' JSON for the main one's, the suppressions' sums. */
typedef struct gather {
    verdict_t *v;
    const char **json;
    size_t *json_len, nothers;
    bool once;    /* text of several processes: the suppressions said once, at the end */
    uint64_t *sb; /* with once: per rule, bytes, blocks, processes (supp_add) */
    unsigned execd;
    unsigned no_region;    /* --region: processes that closed no iteration of it */
    tl_check_forked_t *fk; /* with o->jobs: the evaluations forked ahead (run_jobs.c) */
} gather_t;

/* The main process's context, as far as the others' verdicts in g tell
 * (what was left out, whether one failed, their JSON). */
static tl_check_proc_ctx_t main_ctx(const tl_check_proc_t *p, size_t n, unsigned unchecked,
                                    const tl_check_opts_t *o, const gather_t *g)
{
    size_t nchecked = n - g->execd;
    tl_check_proc_ctx_t ctx = {.role = "main",
                               .name_process =
                                   nchecked > 1 || o->unread_traces || o->main_unchecked_pid,
                               .main_pid = p[0].pid,
                               .supp_once = g->once && nchecked > 1,
                               .others_json = g->json,
                               .others_json_len = g->json_len,
                               .nothers = o->format == TL_CHECK_JSON ? g->nothers : 0,
                               .helpers_unchecked = unchecked,
                               .execd_unchecked = g->execd};
    for (size_t i = 1; i < n; i++)
        ctx.others_failed |= g->v[i].rc || g->v[i].r.nfailed || g->v[i].r.incomplete;
    return ctx;
}

/* Whether the main process's verdict evaluated beside the others (with
 * main_ctx before any of them was known) is the one main_ctx gives now:
 * in text and JUnit, where their JSON is not part of it, when no other
 * process was left out for its exec (naming the processes depends on how
 * many were checked), and when whether another one failed does not show
 * (only a passing verdict that removes the run's traces says so). */
static bool main_guessed(const tl_check_opts_t *o, const tl_check_proc_ctx_t *now)
{
    return o->format != TL_CHECK_JSON && now->execd_unchecked == 0 &&
           !(o->traces_removed_on_pass && now->others_failed);
}

/* Every process but the main one, first: the main process's JSON carries
 * their verdicts. With o->jobs, several at a time (run_jobs.c), the main
 * one among them where its verdict cannot depend on theirs (main_guessed);
 * each result is then taken in order, as if evaluated here. */
static void eval_others(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                        gather_t *g, tl_msgs_t *msgs)
{
    tl_check_proc_ctx_t ctx = {
        .role = "child", .name_process = true, .main_pid = p[0].pid, .supp_once = g->once};
    tl_check_proc_ctx_t mc = main_ctx(p, n, unchecked, o, g);
    bool with_main = o->format != TL_CHECK_JSON;
    if (n - 1 + with_main > 1 && o->jobs > 1) /* two or more side by side */
        g->fk = tl_check_fork_evals(p, n, o, &ctx, with_main ? &mc : NULL);
    tl_check_forked_t *fk = g->fk;
    for (size_t i = 1; i < n; i++) {
        ctx.role = p[i].role;
        if (!fk || tl_check_forked_take(fk, i, o->supp, &g->v[i].text, &g->v[i].len, &g->v[i].r,
                                        &g->v[i].rc, msgs))
            eval_one(&p[i], o, &ctx, &g->v[i], msgs); /* not forked, or its result was lost */
        if (g->once && !g->v[i].r.execd) supp_add(o->supp, g->sb);
        if (g->v[i].r.execd) {
            g->execd++;
            continue;
        }
        if (g->v[i].text && !g->v[i].rc) {
            g->json[g->nothers] = g->v[i].text;
            g->json_len[g->nothers++] = g->v[i].len;
        }
    }
}

/* The main process last, told of the others (their JSON, whether one failed,
 * what was left out). */
static void eval_main(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                      gather_t *g, tl_msgs_t *msgs)
{
    tl_check_proc_ctx_t ctx = main_ctx(p, n, unchecked, o, g);
    if (!g->fk || !main_guessed(o, &ctx) ||
        tl_check_forked_take(g->fk, 0, o->supp, &g->v[0].text, &g->v[0].len, &g->v[0].r,
                             &g->v[0].rc, msgs))
        eval_one(&p[0], o, &ctx, &g->v[0], msgs);
    if (g->once) supp_add(o->supp, g->sb);
}

/* The lines about what the run did not check, into f. */
static void say_unchecked(const tl_check_opts_t *o, const gather_t *g, unsigned unchecked, FILE *f)
{
    const char *exe = o->main_unchecked_exe ? o->main_unchecked_exe : "?";
    if (o->main_unchecked_pid)
        fprintf(f, "not checked: process %" PRIu64 ", the command's own (%s): %s\n",
                o->main_unchecked_pid, strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe,
                o->main_execd ? "it exec'd a program that left no trace (a static or setuid "
                                "program, or one given TENSORLEAK_DISABLE=1); exec gave its "
                                "memory back"
                              : "a system tool that ran the programs checked; its blocks are "
                                "the tool's, not the program's");
    if (unchecked)
        fprintf(f,
                "not checked: %u helper process%s with nothing of interest (a system tool, "
                "such as a shell or a compiler, or another program that made no storage and "
                "no block of 64 KiB or more)\n",
                unchecked, unchecked == 1 ? "" : "es");
    if (g->execd)
        fprintf(f,
                "not checked: %u forked process%s that exec'd an untraced program (exec gave "
                "its memory back)\n",
                g->execd, g->execd == 1 ? "" : "es");
    if (g->no_region) {
        fprintf(f, "not judged: %u process%s that closed no iteration of region '", g->no_region,
                g->no_region == 1 ? "" : "es");
        tl_esc_puts(f, o->region);
        fputs("'\n", f);
    }
}

/* --region: how many of the run's processes, read whole, closed no
 * iteration of it (g->no_region), and whether that is all of them: a
 * trace that could not be read whole may have closed one (its verdict,
 * INCOMPLETE or unreadable, is the run's). */
static bool region_absent(const tl_check_opts_t *o, size_t n, gather_t *g)
{
    size_t ran = 0;
    for (size_t i = 0; o->region && i < n; i++) {
        const verdict_t *v = &g->v[i];
        bool whole = !v->rc && !v->r.incomplete;
        g->no_region += whole && v->r.no_region;
        ran += !v->r.execd && !(whole && v->r.no_region);
    }
    return o->region && !ran && g->no_region;
}

/* The run's verdict in text or JUnit: a head when there are several
 * processes, each process's verdict, then what was said once or left out
 * (JUnit: in a <system-out>, a last suite's of a <testsuites>, else the
 * lone suite's). */
static void run_text(const tl_check_proc_t *p, size_t n, unsigned unchecked,
                     const tl_check_opts_t *o, const gather_t *g, FILE *out)
{
    unsigned nfailed = 0, tests = 0, failures = 0, errors = 0, nexceeded = 0;
    for (size_t i = 0; i < n; i++) {
        nfailed += !p[i].passed;
        nexceeded += g->v[i].r.nfailed > 0;
        tests += g->v[i].r.nchecked + g->v[i].r.incomplete + g->v[i].r.no_region;
        failures += g->v[i].r.nfailed;
        errors += g->v[i].r.incomplete;
    }
    size_t nchecked = n - g->execd;
    unsigned unread = o->unread_traces;
    bool several = nchecked > 1 || unread || o->main_unchecked_pid,
         junit = o->format == TL_CHECK_JUNIT;
    char *nc = NULL; /* JUnit: what was not checked, for a <system-out> */
    size_t nclen = 0;
    FILE *mem = junit ? open_memstream(&nc, &nclen) : NULL;
    if (mem) say_unchecked(o, g, unchecked, mem);
    if (mem && fclose(mem) != 0) nclen = 0;
    const char *es = nchecked == 1 ? "" : "es";
    const char *s = unread == 1 ? "" : "s";
    if (several && junit)
        fprintf(out,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<testsuites name=\"tensorleak\" tests=\"%u\" failures=\"%u\" errors=\"%u\">\n",
                tests + unread, failures, errors + unread);
    else if (unread)
        fprintf(out,
                "tensorleak check: INCOMPLETE: %u file%s of the run could not be read as "
                "trace%s, so it cannot pass; %zu process%s checked, %u failed\n",
                unread, s, s, nchecked, es, nfailed);
    else if (several && nfailed)
        fprintf(out, "tensorleak check: FAILED: %u of %zu process%s %s\n", nfailed, nchecked, es,
                nexceeded == nfailed ? "exceeded a limit"
                                     : "cannot pass (a limit exceeded or a trace not read whole)");
    else if (several)
        fprintf(out, "tensorleak check: passed: %zu process%s checked\n", nchecked, es);
    for (size_t i = 0; i < n; i++) {
        if (!g->v[i].text) continue;
        /* a lone JUnit suite holds the lines in its <system-out> */
        size_t len = g->v[i].len, tag = strlen("</testsuite>\n");
        bool inner = junit && !several && nclen && len >= tag &&
                     !memcmp(g->v[i].text + len - tag, "</testsuite>\n", tag);
        fwrite(g->v[i].text, 1, inner ? len - tag : len, out);
        if (!inner) continue;
        tl_chk_junit_unchecked(nc, nclen, false, out);
        fputs("</testsuite>\n", out);
    }
    if (g->once && nchecked > 1) supp_say(o->supp, g->sb, nchecked, out);
    if (!junit) say_unchecked(o, g, unchecked, out);
    if (junit && several) tl_chk_junit_unchecked(nc, nclen, true, out);
    free(nc);
    if (unread && junit) /* an error, so that no CI reads the run as passed */
        fprintf(out,
                "<testsuite name=\"tensorleak unread traces\" tests=\"%u\" failures=\"0\" "
                "errors=\"%u\">\n  <testcase classname=\"tensorleak\" name=\"trace\">\n"
                "    <error type=\"tensorleak.trace\" message=\"%u file%s of the run could not "
                "be read as trace%s\"/>\n  </testcase>\n</testsuite>\n",
                unread, unread, unread, s, s);
    if (several && junit) fputs("</testsuites>\n", out);
}

static void gather_free(gather_t *g, size_t n)
{
    for (size_t i = 0; g->v && i < n; i++)
        free(g->v[i].text);
    free(g->sb);
    tl_check_forked_free(g->fk);
    free(g->v);
    free(g->json);
    free(g->json_len);
}

tl_status_t tl_check_run(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                         FILE *out, bool *failed, tl_msgs_t *msgs)
{
    *failed = false;
    gather_t g = {.v = calloc(n ? n : 1, sizeof *g.v),
                  .json = calloc(n ? n : 1, sizeof *g.json),
                  .json_len = calloc(n ? n : 1, sizeof *g.json_len)};
    if (!g.v || !g.json || !g.json_len) {
        gather_free(&g, 0);
        tl_msgs_add(msgs, "out of memory");
        return TL_STATUS_NOMEM;
    }
    if (!n) { /* nothing to check */
        if (o->format != TL_CHECK_JSON) run_text(p, 0, unchecked, o, &g, out);
        gather_free(&g, 0);
        return TL_STATUS_OK;
    }
    /* Several processes in text: the suppressions of them all, said once
     * at the end (per rule: bytes, blocks, processes). */
    size_t nrules = o->supp ? o->supp->nrules : 0;
    g.once = n > 1 && o->format == TL_CHECK_TEXT && nrules;
    g.sb = g.once ? calloc(3 * nrules, sizeof *g.sb) : NULL;
    if (g.once && !g.sb) g.once = false;
    eval_others(p, n, unchecked, o, &g, msgs);
    eval_main(p, n, unchecked, o, &g, msgs);
    if (region_absent(o, n, &g)) { /* nothing judged: the region's name is wrong */
        if (n == 1)
            tl_msgs_add(msgs, "%s: no closed iteration of region '%s'", p[0].path, o->region);
        else
            tl_msgs_add(msgs,
                        "no closed iteration of region '%s' in any of the run's %zu processes",
                        o->region, n - g.execd);
        gather_free(&g, n);
        return TL_STATUS_BAD_INPUT;
    }
    unsigned nfailed = 0;
    for (size_t i = 0; i < n; i++) {
        p[i].passed = !g.v[i].rc && !g.v[i].r.nfailed && !g.v[i].r.incomplete;
        nfailed += !p[i].passed;
    }
    if (o->format == TL_CHECK_JSON) {
        if (g.v[0].text) fwrite(g.v[0].text, 1, g.v[0].len, out);
    } else {
        run_text(p, n, unchecked, o, &g, out);
    }
    tl_status_t rc = TL_STATUS_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = g.v[i].rc;
    *failed = nfailed > 0;
    gather_free(&g, n);
    return rc;
}
