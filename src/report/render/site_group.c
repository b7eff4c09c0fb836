/* site_group.c - a site list grouped by the program's line (site_group.h).
 *
 * Each site's "where" (tl_lineage_where) is computed once; sites sorted by
 * it make runs of one line, each run a group; groups largest first.
 */
#include "report/render/site_group.h"

#include <stdlib.h>
#include <string.h>

#include "report/analyze/lineage.h"

#define WHERE_MAX 512

/* qsort's context: the list being grouped (renderers run one at a time). */
static const tl_site_stat_t *cmp_list;

static int cmp_entry(const void *pa, const void *pb)
{
    const tl_site_entry_t *a = pa, *b = pb;
    int r = strcmp(a->where, b->where);
    if (r) return r;
    bool sa = cmp_list[a->index].storage, sb = cmp_list[b->index].storage;
    if (sa != sb) return sa ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int cmp_site_group(const void *pa, const void *pb)
{
    const tl_site_group_t *a = pa, *b = pb;
    if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
    return a->lead < b->lead ? -1 : a->lead > b->lead;
}

void tl_site_list_free(tl_site_list_t *l)
{
    for (size_t i = 0; l->e && i < l->n; i++)
        free(l->e[i].where);
    free(l->e);
    free(l->g);
}

/* Group s[0, n) into l; suppressed sites (supp) left out and counted.
 * true when out of memory (l then groups each site alone, unsuppressed). */
bool tl_site_list_build(const tl_report_ctx_t *c, const tl_site_stat_t *s, size_t n,
                        tl_supp_t *supp, tl_site_list_t *l)
{
    *l = (tl_site_list_t){.s = s};
    l->e = malloc((n ? n : 1) * sizeof *l->e);
    l->g = malloc((n ? n : 1) * sizeof *l->g);
    if (!l->e || !l->g) goto oom;
    for (size_t i = 0; i < n; i++) {
        int rule = supp ? tl_supp_site(supp, s[i].site) : -1;
        if (rule >= 0) {
            l->hidden_bytes += s[i].bytes;
            l->hidden_blocks += s[i].blocks;
            if (rule < 64) l->hidden_rules |= 1ull << rule;
            continue;
        }
        char w[WHERE_MAX];
        char *where = strdup(tl_lineage_where(c->trace, c->sym, s[i].site, w, sizeof w));
        if (!where) goto oom;
        l->e[l->n++] = (tl_site_entry_t){.index = i, .where = where};
    }
    cmp_list = s;
    qsort(l->e, l->n, sizeof *l->e, cmp_entry);
    for (size_t i = 0; i < l->n; i++) {
        const tl_site_entry_t *e = &l->e[i];
        const tl_site_stat_t *st = &s[e->index];
        tl_site_group_t *g = l->ng ? &l->g[l->ng - 1] : NULL;
        if (!g || strncmp(e->where, "at ", 3) || strcmp(g->where, e->where) ||
            g->storage != st->storage) {
            g = &l->g[l->ng++];
            *g = (tl_site_group_t){.lead = e->index, .storage = st->storage, .where = e->where};
        }
        if (e->index < g->lead) g->lead = e->index;
        g->nsites++;
        g->bytes += st->bytes;
        g->blocks += st->blocks;
    }
    qsort(l->g, l->ng, sizeof *l->g, cmp_site_group);
    return false;
oom:
    tl_site_list_free(l);
    *l = (tl_site_list_t){.s = s};
    return true;
}
