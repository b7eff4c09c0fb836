/* report.c - tl_report_file: the pipeline, then a renderer (see report.h).
 *
 * Says nothing itself: one error line or one truncation warning ("PATH:
 * why") goes to the caller's tl_msgs_t, for the CLI to print.
 */
#include "report/cmd/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/render/escape.h"
#include "report/pipeline.h"
#include "report/render/render.h"

bool tl_report_incomplete(tl_msgs_t *msgs, const char *path, const tl_trace_t *t,
                          const char *consequence)
{
    if (tl_trace_whole(t)) return false;
    char skipped[160] = "";
    if (t->bad_chunks || t->bad_records)
        snprintf(skipped, sizeof skipped,
                 ", skipped %" PRIu64 " corrupt chunk%s and %" PRIu64 " undecodable record%s",
                 t->bad_chunks, t->bad_chunks == 1 ? "" : "s", t->bad_records,
                 t->bad_records == 1 ? "" : "s");
    tl_msgs_add(msgs, "%s: warning: trace %s: read %" PRIu64 " chunk%s with %zu event%s%s%s; %s",
                path, tl_trace_incomplete_word(t), t->chunks_read, t->chunks_read == 1 ? "" : "s",
                t->nevents, t->nevents == 1 ? "" : "s", skipped,
                t->truncated ? " before the file ended"
                : t->live    ? " in use when it was opened"
                             : "",
                consequence);
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

bool tl_format_parse(const char *name, tl_format_t *out)
{
    static const struct {
        const char *name;
        tl_format_t f;
    } formats[] = {{"text", TL_FORMAT_TEXT},
                   {"json", TL_FORMAT_JSON},
                   {"html", TL_FORMAT_HTML},
                   {"folded", TL_FORMAT_FOLDED},
                   {"folded-peak", TL_FORMAT_FOLDED_PEAK},
                   {"folded-end", TL_FORMAT_FOLDED_END}};
    for (size_t i = 0; name && i < sizeof formats / sizeof formats[0]; i++)
        if (!strcmp(name, formats[i].name)) {
            *out = formats[i].f;
            return true;
        }
    return false;
}

bool tl_frames_parse(const char *name, bool *all)
{
    if (!name || (strcmp(name, "user") && strcmp(name, "all"))) return false;
    *all = !strcmp(name, "all");
    return true;
}

tl_status_t tl_report_file(const char *path, const tl_report_opts_t *opts, FILE *out,
                           tl_msgs_t *msgs)
{
    static const tl_report_opts_t defaults = {.format = TL_FORMAT_TEXT, .top = 10};
    if (!opts) opts = &defaults;
    char why[256];
    tl_analysis_t *a = malloc(sizeof *a);
    if (!a) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        return TL_STATUS_NOMEM;
    }
    /* The text report's leaks leave out what check's default suppressions
     * hide (one-time allocations); JSON keeps every site and marks those
     * ("suppressed"), the HTML page hides them behind a toggle; the folded
     * stacks are every site's, so they load none. */
    tl_supp_t supp = {0};
    bool use_supp = !opts->no_default_supp && opts->format < TL_FORMAT_FOLDED;
    if (use_supp && tl_supp_add_defaults(&supp)) {
        tl_supp_free(&supp);
        free(a);
        tl_msgs_add(msgs, "%s: out of memory", path);
        return TL_STATUS_NOMEM;
    }
    tl_analysis_opts_t ao = {.render = opts,
                             .supp = use_supp ? &supp : NULL,
                             .timeline = opts->format == TL_FORMAT_HTML};
    tl_status_t rc = tl_analysis_run(a, path, &ao, why, sizeof why);
    if (rc) {
        tl_msgs_add(msgs, "%s: %s", path, why);
        tl_supp_free(&supp);
        free(a);
        return rc;
    }
    bool oom = false;
    if (opts->format == TL_FORMAT_JSON)
        tl_render_json(&a->ctx, out);
    else if (opts->format == TL_FORMAT_HTML)
        oom = tl_render_html(&a->ctx, out); /* strings escaped as JSON in the page */
    else if (opts->format >= TL_FORMAT_FOLDED)
        oom = tl_render_folded(&a->ctx, out); /* control characters replaced in labels */
    else
        oom = tl_render_text_escaped(text_report, &a->ctx, out);
    if (oom) {
        tl_msgs_add(msgs, "%s: out of memory", path);
        rc = TL_STATUS_NOMEM;
    }
    if (!rc && (fflush(out) != 0 || ferror(out))) {
        tl_msgs_add(msgs, "%s: cannot write the report of %s: %s",
                    opts->output_name ? opts->output_name : "stdout", path,
                    strerror(errno ? errno : EIO));
        rc = TL_STATUS_OUTPUT;
    } else if (!rc &&
               tl_report_incomplete(msgs, path, &a->trace, "the readable part was reported")) {
        rc = TL_STATUS_INCOMPLETE;
    }
    tl_analysis_free(a);
    tl_supp_free(&supp);
    free(a);
    return rc;
}
