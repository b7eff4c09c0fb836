/* render_folded.c - folded stacks: "frame;frame;frame bytes" per line,
 * outermost frame first, the input of flamegraph.pl and speedscope.
 *
 * TL_FORMAT_FOLDED writes the blocks live at the peak under a root frame
 * "peak" and those live at the end point under "end"; _PEAK and _END write
 * one of them without the root. The stacks are those of flame.c's tree,
 * which the HTML page draws: sites that fold to the same frames are one
 * line (their bytes summed); lines sorted.
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

/* The folded stack of node i of t (with its root's label when rooted),
 * malloc'd; NULL when out of memory. */
static char *fold(const tl_flame_tree_t *t, size_t i, bool rooted)
{
    char *s = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&s, &len);
    if (!m) return NULL;
    size_t depth = t->nodes[i].depth, *path = malloc((depth + 1) * sizeof *path);
    if (path) {
        for (size_t d = depth + 1, at = i; d-- > 0; at = t->nodes[at].parent)
            path[d] = at;
        for (size_t d = rooted ? 0 : 1; d <= depth; d++)
            fprintf(m, "%s%s", d > (rooted ? 0u : 1u) ? ";" : "", tl_flame_node_label(t, path[d]));
    }
    free(path);
    if (fclose(m) != 0 || !path) {
        free(s);
        return NULL;
    }
    return s;
}

/* Append the lines of the flame tree of sites[0, n) to *lines (grown as
 * needed); true when out of memory. */
static bool add_sites(const tl_report_ctx_t *c, const char *root, const tl_site_stat_t *sites,
                      size_t n, line_t **lines, size_t *nlines)
{
    tl_flame_tree_t t;
    if (tl_flame_tree_build(c, root ? root : "", sites, n, &t)) return true;
    bool oom = false;
    line_t *p = realloc(*lines, (*nlines + t.nnodes) * sizeof *p);
    if (!p)
        oom = true;
    else
        *lines = p;
    for (size_t i = 1; !oom && i < t.nnodes; i++) {
        if (!t.nodes[i].self_bytes) continue;
        char *s = fold(&t, i, root != NULL);
        if (!s)
            oom = true;
        else
            (*lines)[(*nlines)++] = (line_t){s, t.nodes[i].self_bytes};
    }
    tl_flame_tree_free(&t);
    return oom;
}

bool tl_render_folded(const tl_report_ctx_t *c, FILE *out)
{
    const tl_model_t *m = c->model;
    tl_format_t fmt = c->opts->format;
    bool peak = fmt != TL_FORMAT_FOLDED_END, end = fmt != TL_FORMAT_FOLDED_PEAK;
    bool rooted = fmt == TL_FORMAT_FOLDED;
    size_t nl = 0;
    line_t *lines = NULL;
    bool oom = (peak &&
                add_sites(c, rooted ? "peak" : NULL, m->peak_sites, m->npeak_sites, &lines, &nl)) ||
               (end && add_sites(c, rooted ? "end" : NULL, m->leaks, m->nleaks, &lines, &nl));
    if (!oom) { /* a partial profile would be silently wrong: then nothing */
        qsort(lines, nl, sizeof *lines, cmp_line);
        for (size_t i = 0; i < nl; i++)
            fprintf(out, "%s %" PRIu64 "\n", lines[i].stack, lines[i].bytes);
    }
    for (size_t i = 0; lines && i < nl; i++)
        free(lines[i].stack);
    free(lines);
    return oom;
}
