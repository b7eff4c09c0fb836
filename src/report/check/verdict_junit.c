/* verdict_junit.c - the verdict of `tensorleak check` as JUnit XML: one
 * testsuite "tensorleak" with one testcase per limit checked, whose
 * failure carries the text verdict (verdict_text.c); in a run, one
 * testsuite per process inside the <testsuites> run.c writes.
 */
#include "report/check/verdict.h"

#include <stdlib.h>
#include <string.h>

#include "report/render/escape.h"

/* XML text: control characters (not allowed in XML 1.0, even as character
 * references) and bytes that are not UTF-8 as \xNN text (escape.h), then the
 * markup characters as entities. */
static void xml_escape(const char *s, size_t n, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    tl_esc_write(mem, s, n, true);
    if (fclose(mem) != 0) return;
    for (size_t i = 0; i < len; i++) {
        switch (text[i]) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(text[i], out);
        }
    }
    free(text);
}

/* What a callback renders, XML-escaped into out. */
typedef struct xml_arg {
    tl_chk_t *c;
    unsigned k;
} xml_arg_t;

static void xml_render(void (*render)(const xml_arg_t *, FILE *), const xml_arg_t *a, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return;
    render(a, mem);
    if (fclose(mem) == 0) xml_escape(text, len, out);
    free(text);
}

static void xml_verdict(const xml_arg_t *a, FILE *out)
{
    tl_chk_render_text(a->c, out);
}

static void xml_limit(const xml_arg_t *a, FILE *out)
{
    tl_chk_limit_text(a->c, a->k, out);
}

static void xml_incomplete(const xml_arg_t *a, FILE *out)
{
    tl_chk_incomplete_text(a->c, out);
}

void tl_chk_render_junit(tl_chk_t *c, FILE *out)
{
    bool named = c->o->proc && c->o->proc->name_process; /* in a <testsuites> (run.c) */
    char b[400];
    if (!named) fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
    fputs("<testsuite name=\"tensorleak", out);
    if (named) {
        fputs(" ", out);
        const char *w = tl_chk_process_words(c, b, sizeof b);
        xml_escape(w, strlen(w), out);
    }
    fprintf(out, "\" tests=\"%u\" failures=\"%u\" errors=\"%u\"%s>\n",
            c->nchecked + c->incomplete + c->no_region, c->nfailed, (unsigned)c->incomplete,
            c->no_region ? " skipped=\"1\"" : "");
    xml_arg_t a = {c, 0};
    if (c->no_region) { /* a run's process that did not run --region: skipped, as JUnit says */
        fputs("  <testcase classname=\"tensorleak\" name=\"region\">\n"
              "    <skipped message=\"closed no iteration of region '",
              out);
        xml_escape(c->o->region, strlen(c->o->region), out);
        fputs("'\"/>\n  </testcase>\n", out);
    }
    if (c->incomplete) { /* a testcase that errs, so that no CI reads the suite as passed */
        fputs("  <testcase classname=\"tensorleak\" name=\"trace\">\n"
              "    <error type=\"tensorleak.trace\" message=\"",
              out);
        xml_render(xml_incomplete, &a, out);
        fputs("\"/>\n  </testcase>\n", out);
    }
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++) {
        const tl_chk_limit_t *l = &c->lim[k];
        if (!l->checked) continue;
        fprintf(out, "  <testcase classname=\"tensorleak\" name=\"%s\"", tl_check_limit_name(k));
        if (!l->failed) {
            fputs("/>\n", out);
            continue;
        }
        a.k = k;
        fputs(">\n    <failure type=\"tensorleak.limit\" message=\"", out);
        xml_render(xml_limit, &a, out);
        fputs("\">", out);
        xml_render(xml_verdict, &a, out);
        fputs("</failure>\n  </testcase>\n", out);
    }
    fputs("</testsuite>\n", out);
}

void tl_chk_junit_unchecked(const char *text, size_t n, bool suite, FILE *out)
{
    if (!n) return;
    if (suite)
        fputs("<testsuite name=\"tensorleak not checked\" tests=\"0\" failures=\"0\" "
              "errors=\"0\">\n",
              out);
    fputs("  <system-out>", out);
    xml_escape(text, n, out);
    fputs("</system-out>\n", out);
    if (suite) fputs("</testsuite>\n", out);
}
