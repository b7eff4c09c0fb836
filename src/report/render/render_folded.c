/* render_folded.c - folded stacks: "frame;frame;frame bytes" per line,
 * outermost frame first, the input of flamegraph.pl and speedscope.
 *
 * TL_FORMAT_FOLDED writes the blocks live at the peak under a root frame
 * "peak" and those live at the end point under "end"; _PEAK and _END write
 * one of them without the root. Identical stacks (sites that fold to the
 * same frames) are summed into one line; lines sorted.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/render/flame.h"

typedef struct line {
    char *stack;
    uint64_t bytes;
} line_t;

static int cmp_line(const void *pa, const void *pb)
{
    return strcmp(((const line_t *)pa)->stack, ((const line_t *)pb)->stack);
}

/* The folded stack of site under root (NULL: none), malloc'd; NULL when out
 * of memory. */
static char *fold(const tl_report_ctx_t *c, const char *root, uint32_t site, tl_flame_frame_t *fr)
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    if (!m) return NULL;
    size_t n = tl_flame_site_frames(c, site, fr);
    if (root) fprintf(m, "%s;", root);
    if (n == 0) fputs("[no stack recorded]", m);
    for (size_t i = 0; i < n; i++) {
        char buf[512];
        fprintf(m, "%s%s", i ? ";" : "", tl_flame_label(&fr[i], buf, sizeof buf));
    }
    if (fclose(m) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* Append the lines of sites[0, n) to *lines; true when out of memory. */
static bool add_sites(const tl_report_ctx_t *c, const char *root, const tl_site_stat_t *sites,
                      size_t n, line_t *lines, size_t *nlines, tl_flame_frame_t *fr)
{
    for (size_t i = 0; i < n; i++) {
        char *s = fold(c, root, sites[i].site, fr);
        if (!s) return true;
        lines[(*nlines)++] = (line_t){s, sites[i].bytes};
    }
    return false;
}

bool tl_render_folded(const tl_report_ctx_t *c, FILE *out)
{
    const tl_model_t *m = c->model;
    tl_format_t fmt = c->opts->format;
    bool peak = fmt != TL_FORMAT_FOLDED_END, end = fmt != TL_FORMAT_FOLDED_PEAK;
    bool rooted = fmt == TL_FORMAT_FOLDED;
    size_t maxf = 1, nl = 0;
    for (size_t i = 0; i < c->trace->nsites; i++)
        if (c->trace->sites[i].nframes > maxf) maxf = c->trace->sites[i].nframes;
    line_t *lines = malloc((m->npeak_sites + m->nleaks + 1) * sizeof *lines);
    tl_flame_frame_t *fr = malloc(maxf * sizeof *fr);
    bool oom = !lines || !fr ||
               (peak && add_sites(c, rooted ? "peak" : NULL, m->peak_sites, m->npeak_sites, lines,
                                  &nl, fr)) ||
               (end && add_sites(c, rooted ? "end" : NULL, m->leaks, m->nleaks, lines, &nl, fr));
    if (!oom) { /* a partial profile would be silently wrong: then nothing */
        qsort(lines, nl, sizeof *lines, cmp_line);
        for (size_t i = 0; i < nl;) {
            uint64_t bytes = 0;
            size_t j = i;
            for (; j < nl && !strcmp(lines[j].stack, lines[i].stack); j++)
                bytes += lines[j].bytes;
            if (bytes) fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, bytes);
            i = j;
        }
    }
    for (size_t i = 0; lines && i < nl; i++)
        free(lines[i].stack);
    free(lines);
    free(fr);
    return oom;
}
