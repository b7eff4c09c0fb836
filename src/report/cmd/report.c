/* report.c - tl_report_file: read, replay, note, render (see report.h).
 *
 * The only place that talks to the user about a trace: one error line or one
 * truncation warning on stderr, in the CLI's "tensorleak: PATH: why" form.
 */
#include "report/cmd/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/render/escape.h"
#include "report/analyze/lineage.h"
#include "report/render/render.h"

typedef struct notes {
    char buf[TL_REPORT_MAX_NOTES][256];
} notes_t;

static void note(tl_report_ctx_t *c, notes_t *nb, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void note(tl_report_ctx_t *c, notes_t *nb, const char *fmt, ...)
{
    if (c->nnotes >= TL_REPORT_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(nb->buf[c->nnotes], sizeof nb->buf[0], fmt, ap);
    va_end(ap);
    c->notes[c->nnotes] = nb->buf[c->nnotes];
    c->nnotes++;
}

/* The NOTE records of the trace (a provider's words: "lineage for 3 tensors
 * skipped: ..."), each with the name of its report point when it has one. */
static void provider_notes(tl_report_ctx_t *c, notes_t *nb)
{
    const tl_trace_t *t = c->trace;
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->type != TL_REC_NOTE) continue;
        const char *mark = NULL;
        for (size_t j = 0; l->a[0] && j < t->nlineage && !mark; j++)
            if (t->lineage[j].type == TL_REC_MARK && t->lineage[j].a[0] == l->a[0])
                mark = t->lineage[j].str;
        if (mark)
            note(c, nb, "at %s: %s", mark, l->str);
        else
            note(c, nb, "%s", l->str);
    }
}

static void make_notes(tl_report_ctx_t *c, notes_t *nb)
{
    const tl_trace_t *t = c->trace;
    const tl_model_t *m = c->model;
    if (!t->has_end)
        note(c, nb,
             "no END record: the process was killed or crashed before tensorleak finished the "
             "trace; \"live at end\" is the state at the last recorded event, and dropped events "
             "are unknown");
    else if (t->end_reason == TL_END_EXEC)
        note(c, nb, "the process called exec(): this trace covers the image before it");
    else if (t->end_reason == TL_END_SIGNAL)
        note(c, nb,
             "signal %" PRId64 " ended the process: tensorleak's handler finished the trace "
             "and re-raised it; no Python code ran there, so holders and views are unknown",
             t->end_exit_status);
    if (t->truncated)
        note(c, nb,
             "trace truncated: the file ends before the data its headers announce; the "
             "readable part is reported");
    if (t->bad_chunks || t->bad_records)
        note(c, nb,
             "trace damaged: %" PRIu64 " corrupt chunk%s and %" PRIu64
             " undecodable record%s skipped (with the rest of their chunk)",
             t->bad_chunks, t->bad_chunks == 1 ? "" : "s", t->bad_records,
             t->bad_records == 1 ? "" : "s");
    if (t->has_end && t->end_dropped)
        note(c, nb,
             "%" PRIu64 " event%s dropped by the agent: counts, peak and leaks may be "
             "incomplete",
             t->end_dropped, t->end_dropped == 1 ? " was" : "s were");
    if (t->python_unsupported)
        note(c, nb,
             "Python frames: CPython %s%s%s%s is not supported (%s3.10-3.13 are): native frames "
             "only",
             t->python[0] ? t->python : "(version unknown)", t->python_build[0] ? " (" : "",
             t->python_build, t->python_build[0] ? ")" : "",
             t->python_build[0] ? "the default builds of " : "");
    if (m->unknown_frees)
        note(c, nb, "%" PRIu64 " free%s of pointers not allocated in the trace ignored",
             m->unknown_frees, m->unknown_frees == 1 ? "" : "s");
    if (m->regions.unmatched_ends || m->regions.unclosed)
        note(c, nb,
             "regions: %" PRIu64
             " end%s without an open region of that name in the thread, %" PRIu64
             " region%s never ended (not counted)",
             m->regions.unmatched_ends, m->regions.unmatched_ends == 1 ? "" : "s",
             m->regions.unclosed, m->regions.unclosed == 1 ? "" : "s");
    provider_notes(c, nb);
    if (m->replaced_blocks)
        note(c, nb,
             "%" PRIu64 " allocation%s returned an address that was still live; the older "
             "block was dropped",
             m->replaced_blocks, m->replaced_blocks == 1 ? "" : "s");
}

bool tl_report_incomplete(const char *path, const tl_trace_t *t, const char *consequence)
{
    if (!t->truncated && !t->bad_chunks && !t->bad_records) return false;
    char skipped[160] = "";
    if (t->bad_chunks || t->bad_records)
        snprintf(skipped, sizeof skipped,
                 ", skipped %" PRIu64 " corrupt chunk%s and %" PRIu64 " undecodable record%s",
                 t->bad_chunks, t->bad_chunks == 1 ? "" : "s", t->bad_records,
                 t->bad_records == 1 ? "" : "s");
    tl_say("%s: warning: trace %s: read %" PRIu64 " chunk%s with %zu event%s%s%s; %s", path,
           t->truncated ? "truncated" : "damaged", t->chunks_read, t->chunks_read == 1 ? "" : "s",
           t->nevents, t->nevents == 1 ? "" : "s", skipped,
           t->truncated ? " before the file ended" : "", consequence);
    return true;
}

bool tl_render_text_escaped(void (*render)(const void *, FILE *), const void *arg, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return true;
    render(arg, mem);
    bool oom = fclose(mem) != 0;
    if (!oom) tl_esc_write(out, text, len, true);
    free(text);
    return oom;
}

static void text_report(const void *c, FILE *out)
{
    tl_render_text(c, out);
}

int tl_report_file(const char *path, const tl_report_opts_t *opts, FILE *out)
{
    static const tl_report_opts_t defaults = {TL_FORMAT_TEXT, 10};
    if (!opts) opts = &defaults;
    tl_trace_t t;
    char why[256];
    int rc = tl_trace_read(path, &t, why, sizeof why);
    if (rc) {
        tl_say("%s: %s", path, why);
        return rc;
    }
    tl_model_t m;
    if (tl_model_build(&t, &m)) {
        tl_trace_free(&t);
        tl_say("%s: out of memory", path);
        return TL_EXIT_FAILURE;
    }
    tl_report_ctx_t c = {.path = path, .trace = &t, .model = &m, .opts = opts};
    c.sym = tl_sym_new(t.modules, t.nmodules);
    notes_t *nb = malloc(sizeof *nb);
    if (!c.sym || !nb || tl_lineage_analyse(&m.end, &t, c.sym)) {
        free(nb);
        tl_sym_free(c.sym);
        tl_model_free(&m);
        tl_trace_free(&t);
        tl_say("%s: out of memory", path);
        return TL_EXIT_FAILURE;
    }
    make_notes(&c, nb);
    rc = TL_EXIT_OK;
    if (opts->format == TL_FORMAT_JSON) {
        tl_render_json(&c, out);
    } else if (tl_render_text_escaped(text_report, &c, out)) {
        tl_say("%s: out of memory", path);
        rc = TL_EXIT_FAILURE;
    }
    if (!rc && (fflush(out) != 0 || ferror(out))) {
        tl_say("%s: cannot write the report: %s", path, strerror(errno ? errno : EIO));
        rc = TL_EXIT_OUTPUT;
    } else if (!rc && tl_report_incomplete(path, &t, "the readable part was reported")) {
        rc = TL_EXIT_TRUNCATED;
    }
    free(nb);
    tl_sym_free(c.sym);
    tl_model_free(&m);
    tl_trace_free(&t);
    return rc;
}
