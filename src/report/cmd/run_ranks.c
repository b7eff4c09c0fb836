/* run_ranks.c - a run's ranks side by side (run_ranks.h). */
#include "report/cmd/run_ranks.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/lineage.h"
#include "report/analyze/size_text.h"
#include "report/analyze/steps.h"
#include "report/render/escape.h"

#define TL_RANK_FLAGS 5 /* lines flagged per rank in the text */

static int by_where(const void *x, const void *y)
{
    return strcmp(((const tl_rank_line_t *)x)->where, ((const tl_rank_line_t *)y)->where);
}

static int by_bytes(const void *x, const void *y)
{
    const tl_rank_line_t *a = x, *b = y;
    if (a->live_bytes != b->live_bytes) return a->live_bytes > b->live_bytes ? -1 : 1;
    if (a->made != b->made) return a->made > b->made ? -1 : 1;
    return strcmp(a->where, b->where);
}

/* r's lines: every storage site's and every live storage site's line,
 * merged by text, the biggest TL_RANK_LINES kept. true = out of memory. */
static bool lines_of(const tl_analysis_t *a, tl_rank_row_t *r)
{
    const tl_model_t *m = &a->model;
    size_t n = m->nstorage_sites + m->nleaks, k = 0;
    tl_rank_line_t *v = calloc(n ? n : 1, sizeof *v);
    if (!v) return true;
    for (size_t i = 0; i < m->nstorage_sites; i++, k++) {
        tl_lineage_where(&a->trace, a->sym, m->storage_sites[i].site, v[k].where,
                         sizeof v[k].where);
        v[k].made = m->storage_sites[i].blocks;
    }
    for (size_t i = 0; i < m->nleaks; i++) {
        if (!m->leaks[i].storage) continue;
        tl_lineage_where(&a->trace, a->sym, m->leaks[i].site, v[k].where, sizeof v[k].where);
        v[k].live_storages = m->leaks[i].blocks;
        v[k++].live_bytes = m->leaks[i].bytes;
    }
    qsort(v, k, sizeof *v, by_where);
    size_t w = 0;
    for (size_t i = 0; i < k; i++) {
        if (w && !strcmp(v[w - 1].where, v[i].where)) {
            v[w - 1].made += v[i].made;
            v[w - 1].live_storages += v[i].live_storages;
            v[w - 1].live_bytes += v[i].live_bytes;
        } else {
            v[w++] = v[i];
        }
    }
    qsort(v, w, sizeof *v, by_bytes);
    r->lines = v;
    r->nlines = w < TL_RANK_LINES ? w : TL_RANK_LINES;
    return false;
}

/* r's growth per step (run_ranks.h). true = out of memory. */
static bool growth_of(const tl_analysis_t *a, tl_rank_row_t *r)
{
    const tl_model_t *m = &a->model;
    uint32_t *sites = malloc((m->nleaks ? m->nleaks : 1) * sizeof *sites);
    uint64_t *bytes = malloc((m->nleaks ? m->nleaks : 1) * sizeof *bytes);
    uint64_t *steps = calloc(m->nleaks ? m->nleaks : 1, sizeof *steps);
    bool oom = !sites || !bytes || !steps;
    size_t n = 0;
    for (size_t i = 0; !oom && i < m->nleaks; i++) {
        if (!m->leaks[i].storage || m->leaks[i].blocks < 2) continue;
        sites[n] = m->leaks[i].site;
        bytes[n++] = m->leaks[i].bytes;
    }
    if (!oom && n && m->end.ts) oom = tl_steps_count(&a->trace, sites, n, 0, m->end.ts, steps);
    for (size_t i = 0; !oom && i < n; i++) {
        if (steps[i] < 2) continue;
        r->growth += bytes[i] / steps[i];
        if (steps[i] > r->steps) r->steps = steps[i];
    }
    free(sites);
    free(bytes);
    free(steps);
    return oom;
}

bool tl_rank_measure(const tl_analysis_t *a, int64_t rank, tl_rank_row_t *r)
{
    const tl_model_t *m = &a->model;
    *r = (tl_rank_row_t){.rank = rank,
                         .pid = a->trace.pid,
                         .peak = m->peak_bytes,
                         .live_bytes = m->live_bytes,
                         .storages = m->live_storage_blocks,
                         .storage_bytes = m->live_storage_bytes};
    if (lines_of(a, r) || growth_of(a, r)) {
        tl_rank_row_free(r);
        r->growth = r->steps = 0;
        return true;
    }
    return false;
}

void tl_rank_row_free(tl_rank_row_t *r)
{
    free(r->lines);
    r->lines = NULL;
    r->nlines = 0;
}

static int by_rank(const void *x, const void *y)
{
    const tl_rank_row_t *a = x, *b = y;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

void tl_ranks_sort(tl_rank_row_t *rows, size_t n)
{
    qsort(rows, n, sizeof *rows, by_rank);
}

static const tl_rank_line_t *line_of(const tl_rank_row_t *r, const char *where)
{
    for (size_t i = 0; i < r->nlines; i++)
        if (!strcmp(r->lines[i].where, where)) return &r->lines[i];
    return NULL;
}

/* Whether rows[i] keeps what the others free at its line l: every other
 * rank made storages at that line and keeps fewer of them, with at most
 * half l's bytes. */
static bool keeps(const tl_rank_row_t *rows, size_t n, size_t i, const tl_rank_line_t *l)
{
    if (n < 2 || !l->live_storages) return false;
    for (size_t j = 0; j < n; j++) {
        if (j == i) continue;
        const tl_rank_line_t *o = line_of(&rows[j], l->where);
        if (!o || !o->made || o->live_storages >= l->live_storages ||
            o->live_bytes > l->live_bytes / 2)
            return false;
    }
    return true;
}

static void flag_text(const tl_rank_row_t *rows, size_t n, size_t i, const tl_rank_line_t *l,
                      FILE *out)
{
    char b[32];
    fprintf(out,
            "  rank %" PRId64 " keeps what the other ranks free: %" PRIu64 " storage%s (%s) made ",
            rows[i].rank, l->live_storages, l->live_storages == 1 ? "" : "s",
            tl_size_text(l->live_bytes, b, sizeof b));
    tl_esc_puts(out, l->where);
    for (size_t j = 0; j < n; j++) {
        if (j == i) continue;
        const tl_rank_line_t *o = line_of(&rows[j], l->where);
        fprintf(out, "; rank %" PRId64 " keeps %" PRIu64 " (%s) of the %" PRIu64 " it made there",
                rows[j].rank, o->live_storages, tl_size_text(o->live_bytes, b, sizeof b), o->made);
    }
    fputc('\n', out);
}

void tl_ranks_text(const tl_rank_row_t *rows, size_t n, FILE *out)
{
    if (n < 2) return;
    char b1[32], b2[32], b3[32], st[48], gr[64];
    fprintf(out, "\nRanks: %zu side by side\n", n);
    fprintf(out, "  %-6s %-8s %10s %12s %16s  %s\n", "rank", "pid", "peak", "live at end",
            "storages at end", "growth per step");
    for (size_t i = 0; i < n; i++) {
        const tl_rank_row_t *r = &rows[i];
        snprintf(st, sizeof st, "%" PRIu64 " (%s)", r->storages,
                 tl_size_text(r->storage_bytes, b3, sizeof b3));
        if (r->steps)
            snprintf(gr, sizeof gr, "%s over %" PRIu64 " steps",
                     tl_size_text(r->growth, b3, sizeof b3), r->steps);
        else
            snprintf(gr, sizeof gr, "none");
        fprintf(out, "  %-6" PRId64 " %-8" PRIu64 " %10s %12s %16s  %s\n", r->rank, r->pid,
                tl_size_text(r->peak, b1, sizeof b1), tl_size_text(r->live_bytes, b2, sizeof b2),
                st, gr);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0, shown = 0; k < rows[i].nlines && shown < TL_RANK_FLAGS; k++)
            if (keeps(rows, n, i, &rows[i].lines[k])) {
                flag_text(rows, n, i, &rows[i].lines[k], out);
                shown++;
            }
}

static void keep_json(const tl_rank_row_t *rows, size_t n, size_t i, const tl_rank_line_t *l,
                      tl_json_t *j)
{
    tl_json_obj_begin(j);
    tl_json_key(j, "where");
    tl_json_str(j, l->where);
    tl_json_key(j, "storages");
    tl_json_u64(j, l->live_storages);
    tl_json_key(j, "bytes");
    tl_json_u64(j, l->live_bytes);
    tl_json_key(j, "made");
    tl_json_u64(j, l->made);
    tl_json_key(j, "others");
    tl_json_arr_begin(j);
    for (size_t k = 0; k < n; k++) {
        if (k == i) continue;
        const tl_rank_line_t *o = line_of(&rows[k], l->where);
        tl_json_obj_begin(j);
        tl_json_key(j, "rank");
        tl_json_i64(j, rows[k].rank);
        tl_json_key(j, "storages");
        tl_json_u64(j, o->live_storages);
        tl_json_key(j, "bytes");
        tl_json_u64(j, o->live_bytes);
        tl_json_key(j, "made");
        tl_json_u64(j, o->made);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
    tl_json_obj_end(j);
}

void tl_ranks_json(const tl_rank_row_t *rows, size_t n, tl_json_t *j)
{
    tl_json_arr_begin(j);
    for (size_t i = 0; i < n; i++) {
        const tl_rank_row_t *r = &rows[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "rank");
        tl_json_i64(j, r->rank);
        tl_json_key(j, "pid");
        tl_json_u64(j, r->pid);
        tl_json_key(j, "peak_bytes");
        tl_json_u64(j, r->peak);
        tl_json_key(j, "live_bytes");
        tl_json_u64(j, r->live_bytes);
        tl_json_key(j, "storages");
        tl_json_u64(j, r->storages);
        tl_json_key(j, "storage_bytes");
        tl_json_u64(j, r->storage_bytes);
        tl_json_key(j, "growth_per_step");
        tl_json_u64(j, r->growth);
        tl_json_key(j, "steps");
        tl_json_u64(j, r->steps);
        tl_json_key(j, "keeps");
        tl_json_arr_begin(j);
        for (size_t k = 0; k < r->nlines; k++)
            if (keeps(rows, n, i, &r->lines[k])) keep_json(rows, n, i, &r->lines[k], j);
        tl_json_arr_end(j);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}
