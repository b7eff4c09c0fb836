/* run.c - the gate over a run's processes (check.h: tl_check_run).
 *
 * Each trace is evaluated and rendered into memory on its own, then freed,
 * so a run of many workers holds one analysis at a time. The main process
 * comes last: its JSON carries the others' verdicts and the run's result.
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
    tl_check_opts_t po = *o;
    po.proc = ctx;
    FILE *mem = open_memstream(&v->text, &v->len);
    if (!mem) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        v->rc = TL_STATUS_NOMEM;
        return;
    }
    v->rc = tl_check_eval(p->path, &po, mem, &v->r, msgs);
    if (fclose(mem) != 0 && !v->rc) {
        tl_msgs_add(msgs, "%s: out of memory", p->path);
        v->rc = TL_STATUS_NOMEM;
    }
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

tl_status_t tl_check_run(tl_check_proc_t *p, size_t n, unsigned unchecked, const tl_check_opts_t *o,
                         FILE *out, bool *failed, tl_msgs_t *msgs)
{
    *failed = false;
    verdict_t *v = calloc(n ? n : 1, sizeof *v);
    const char **json = calloc(n ? n : 1, sizeof *json);
    size_t *json_len = calloc(n ? n : 1, sizeof *json_len);
    if (!v || !json || !json_len) {
        free(v);
        free(json);
        free(json_len);
        tl_msgs_add(msgs, "out of memory");
        return TL_STATUS_NOMEM;
    }
    /* Several processes in text: the suppressions of them all, said once
     * at the end (per rule: bytes, blocks, processes). */
    size_t nrules = o->supp ? o->supp->nrules : 0;
    bool once = n > 1 && o->format == TL_CHECK_TEXT && nrules;
    uint64_t *sb = once ? calloc(3 * nrules, sizeof *sb) : NULL;
    if (once && !sb) once = false;
    /* The others first: the main process's JSON carries their verdicts. */
    unsigned nfailed = 0, tests = 0, failures = 0, errors = 0, nexceeded = 0, execd = 0;
    tl_check_proc_ctx_t ctx[2] = {
        {.role = "child", .name_process = true, .main_pid = n ? p[0].pid : 0, .supp_once = once}};
    size_t nothers = 0;
    for (size_t i = 1; i < n; i++) {
        ctx[0].role = p[i].role;
        eval_one(&p[i], o, &ctx[0], &v[i], msgs);
        if (once && !v[i].r.execd) supp_add(o->supp, sb);
        if (v[i].r.execd) {
            execd++;
            continue;
        }
        if (v[i].text && !v[i].rc) {
            json[nothers] = v[i].text;
            json_len[nothers++] = v[i].len;
        }
    }
    size_t nchecked = n - execd;
    ctx[1] = (tl_check_proc_ctx_t){.role = "main",
                                   .name_process = nchecked > 1,
                                   .main_pid = n ? p[0].pid : 0,
                                   .supp_once = once && nchecked > 1,
                                   .others_json = json,
                                   .others_json_len = json_len,
                                   .nothers = o->format == TL_CHECK_JSON ? nothers : 0,
                                   .helpers_unchecked = unchecked,
                                   .execd_unchecked = execd};
    for (size_t i = 1; i < n; i++)
        ctx[1].others_failed |= v[i].rc || v[i].r.nfailed || v[i].r.incomplete;
    if (n) eval_one(&p[0], o, &ctx[1], &v[0], msgs);
    if (once && n) supp_add(o->supp, sb);
    for (size_t i = 0; i < n; i++) {
        p[i].passed = !v[i].rc && !v[i].r.nfailed && !v[i].r.incomplete;
        nfailed += !p[i].passed;
        nexceeded += v[i].r.nfailed > 0;
        tests += v[i].r.nchecked + v[i].r.incomplete;
        failures += v[i].r.nfailed;
        errors += v[i].r.incomplete;
    }
    if (o->format == TL_CHECK_JSON) {
        if (v[0].text) fwrite(v[0].text, 1, v[0].len, out);
    } else {
        bool several = nchecked > 1, junit = o->format == TL_CHECK_JUNIT;
        if (several && junit)
            fprintf(out,
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    "<testsuites name=\"tensorleak\" tests=\"%u\" failures=\"%u\" errors=\"%u\">\n",
                    tests, failures, errors);
        else if (several && nfailed)
            fprintf(out, "tensorleak check: FAILED: %u of %zu processes %s\n", nfailed, nchecked,
                    nexceeded == nfailed
                        ? "exceeded a limit"
                        : "cannot pass (a limit exceeded or a trace not read whole)");
        else if (several)
            fprintf(out, "tensorleak check: passed: %zu processes checked\n", nchecked);
        for (size_t i = 0; i < n; i++)
            if (v[i].text) fwrite(v[i].text, 1, v[i].len, out);
        if (once && nchecked > 1) supp_say(o->supp, sb, nchecked, out);
        if (unchecked && !junit)
            fprintf(out,
                    "not checked: %u helper process%s with nothing of interest (a system tool, "
                    "such as a shell or a compiler, or another program that made no storage and "
                    "no block of 64 KiB or more)\n",
                    unchecked, unchecked == 1 ? "" : "es");
        if (execd && !junit)
            fprintf(out,
                    "not checked: %u forked process%s that exec'd an untraced program (exec gave "
                    "its memory back)\n",
                    execd, execd == 1 ? "" : "es");
        if (several && junit) fputs("</testsuites>\n", out);
    }
    tl_status_t rc = TL_STATUS_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = v[i].rc;
    *failed = nfailed > 0;
    for (size_t i = 0; i < n; i++)
        free(v[i].text);
    free(sb);
    free(v);
    free(json);
    free(json_len);
    return rc;
}
