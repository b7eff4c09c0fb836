/* pipeline.c - tl_analysis_run: open, read, model, symbolize, analyze,
 * notes (see pipeline.h). The one sequence every command runs; the notes it
 * gathers are shown by every renderer.
 */
#include "report/pipeline.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/analyze/lineage.h"

static void note(tl_analysis_t *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(tl_analysis_t *a, const char *fmt, ...)
{
    tl_report_ctx_t *c = &a->ctx;
    if (c->nnotes >= TL_REPORT_MAX_NOTES) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->note_buf[c->nnotes], sizeof a->note_buf[0], fmt, ap);
    va_end(ap);
    c->notes[c->nnotes] = a->note_buf[c->nnotes];
    c->nnotes++;
}

/* The NOTE records of the trace (a provider's words: "lineage for 3 tensors
 * skipped: ..."), each with the name of its report point when it has one. */
static void provider_notes(tl_analysis_t *a)
{
    const tl_trace_t *t = &a->trace;
    for (size_t i = 0; i < t->nlineage; i++) {
        const tl_lineage_t *l = &t->lineage[i];
        if (l->type != TL_REC_NOTE) continue;
        const char *mark = NULL;
        for (size_t j = 0; l->a[0] && j < t->nlineage && !mark; j++)
            if (t->lineage[j].type == TL_REC_MARK && t->lineage[j].a[0] == l->a[0])
                mark = t->lineage[j].str;
        if (mark)
            note(a, "at %s: %s", mark, l->str);
        else
            note(a, "%s", l->str);
    }
}

/* What the reader of a report must know to trust its numbers. */
static void make_notes(tl_analysis_t *a)
{
    const tl_trace_t *t = &a->trace;
    const tl_model_t *m = &a->model;
    if (t->running)
        note(a, "no END record yet: the process was still running when its trace was read (a "
                "child that outlived the command); \"live at end\" is the state at the last "
                "recorded event");
    else if (!t->has_end)
        note(a,
             "no END record: the process was killed or crashed before tensorleak finished the "
             "trace; \"live at end\" is the state at the last recorded event, and dropped events "
             "are unknown");
    else if (t->end_reason == TL_END_EXEC)
        note(a, "the process called exec(): this trace covers the image before it");
    else if (t->end_reason == TL_END_SIGNAL)
        note(a,
             "signal %" PRId64 " ended the process: tensorleak's handler finished the trace "
             "and re-raised it; no Python code ran there, so holders and views are unknown",
             t->end_exit_status);
    if (t->truncated)
        note(a, "trace truncated: the file ends before the data its headers announce; the "
                "readable part is reported");
    else if (t->live)
        note(a, "trace still being written: it changed while it was read; the chunks in use "
                "when it was opened are reported");
    if (t->bad_chunks || t->bad_records)
        note(a,
             "trace damaged: %" PRIu64 " corrupt chunk%s and %" PRIu64
             " undecodable record%s skipped (with the rest of their chunk)",
             t->bad_chunks, t->bad_chunks == 1 ? "" : "s", t->bad_records,
             t->bad_records == 1 ? "" : "s");
    if (t->has_end && t->end_dropped)
        note(a,
             "%" PRIu64 " event%s dropped by the agent: counts, peak and leaks may be "
             "incomplete",
             t->end_dropped, t->end_dropped == 1 ? " was" : "s were");
    if (t->python_unsupported)
        note(a,
             "Python frames: CPython %s%s%s%s is not supported (%s3.10-3.13 are): native frames "
             "only",
             t->python[0] ? t->python : "(version unknown)", t->python_build[0] ? " (" : "",
             t->python_build, t->python_build[0] ? ")" : "",
             t->python_build[0] ? "the default builds of " : "");
    if (m->unknown_frees)
        note(a, "%" PRIu64 " free%s of pointers not allocated in the trace ignored",
             m->unknown_frees, m->unknown_frees == 1 ? "" : "s");
    if (m->regions.unmatched_ends || m->regions.unclosed)
        note(a,
             "regions: %" PRIu64
             " end%s without an open region of that name in the thread, %" PRIu64
             " region%s never ended (not counted)",
             m->regions.unmatched_ends, m->regions.unmatched_ends == 1 ? "" : "s",
             m->regions.unclosed, m->regions.unclosed == 1 ? "" : "s");
    provider_notes(a);
    if (m->replaced_blocks)
        note(a,
             "%" PRIu64 " allocation%s returned an address that was still live; the older "
             "block was dropped",
             m->replaced_blocks, m->replaced_blocks == 1 ? "" : "s");
}

tl_status_t tl_analysis_run(tl_analysis_t *a, const char *path, const tl_analysis_opts_t *o,
                            char *why, size_t whylen)
{
    static const tl_report_opts_t defaults = {.format = TL_FORMAT_TEXT, .top = 10};
    memset(a, 0, sizeof *a);
    tl_status_t rc = tl_trace_read(path, &a->trace, why, whylen); /* open, read */
    if (rc) return rc;
    tl_model_opts_t mo = {.timeline = o && o->timeline, .peak_device = o ? o->peak_device : 0};
    a->sym = tl_sym_new(a->trace.modules, a->trace.nmodules);
    if (!a->sym || tl_model_build_with(&a->trace, &a->model, &mo) ||
        (o && o->supp &&
         tl_supp_bind(o->supp, &a->trace, a->sym, a->model.leaks, a->model.nleaks)) ||
        tl_lineage_analyse(&a->model.end, &a->trace, a->sym)) {
        tl_analysis_free(a);
        snprintf(why, whylen, "out of memory");
        return TL_STATUS_NOMEM;
    }
    a->ctx = (tl_report_ctx_t){.path = path,
                               .trace = &a->trace,
                               .model = &a->model,
                               .sym = a->sym,
                               .supp = o ? o->supp : NULL,
                               .opts = o && o->render ? o->render : &defaults};
    make_notes(a);
    return 0;
}

void tl_analysis_free(tl_analysis_t *a)
{
    tl_sym_free(a->sym);
    tl_model_free(&a->model);
    tl_trace_free(&a->trace);
    a->sym = NULL;
    a->ctx = (tl_report_ctx_t){0};
}
