/* text_end.c - the end point in the text report: "Problems" and "Storages
 * live at end" (render.h, tl_render_text_end).
 *
 * Storages alike for the person reading (one allocation line, one op, one
 * holder, one kind of problem) print as one paragraph: how many, the bytes
 * of each and in all, their ids in ranges, the fix once. A group of one
 * prints as the storage itself does. The JSON report keeps every storage.
 * Out of memory: the ungrouped form (one group per storage).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/lineage.h"
#include "report/render/escape.h"
#include "report/render/render.h"

#define WHERE_MAX   256
#define IDS_SHOWN   8 /* id ranges listed before "and N more" */
#define PATHS_SHOWN 1

/* One storage or problem with the key it is grouped by. */
typedef struct item {
    const tl_end_storage_t *s;
    const tl_problem_t *p; /* NULL in the storage list */
    char where[WHERE_MAX];
    uint64_t bytes; /* the problem's bytes, else the storage's */
    size_t order;   /* index in the end point's list */
} item_t;

/* A run of alike items: items[first, first + count) after sorting; ids:
 * their storage ids, ascending (NULL when out of memory). */
typedef struct group {
    size_t first, count;
    uint64_t total, min, max, pinned;
    uint64_t *ids;
} group_t;

/* How s is held, in the words of its problem (a kept exception's traceback,
 * a cache) when its holder's path runs through one, and of the object that
 * holds it (an ndarray is no tensor, nor is an UntypedStorage). */
static const char *held_phrase(const tl_end_storage_t *s)
{
    switch (s->held_by) {
    case TL_HELD_TENSOR:
        switch (s->cause) {
        case TL_CAUSE_TRACEBACK:
            return "held by a kept exception's traceback";
        case TL_CAUSE_CACHE:
            return "held by a cache";
        case TL_CAUSE_CLOSURE:
            return "held by a function's closure or default";
        case TL_CAUSE_OPTIMIZER:
            return "held by optimizer state";
        case TL_CAUSE_THREAD:
            return "held by a live thread";
        case TL_CAUSE_CLASS:
            return "held by a class attribute";
        default:
            break;
        }
        /* _shm.add_open_segments: a multiprocessing.shared_memory mapping */
        if (s->held_path && !strncmp(s->held_path, "SharedMemory ", 13))
            return "held by its SharedMemory object";
        if (tl_held_by_array(s)) return "held by an array";
        if (tl_held_by_storage_object(s)) return "held by a storage object";
        return "held by a tensor";
    case TL_HELD_VIEW:
        return "held only by views";
    case TL_HELD_AUTOGRAD:
        return "held only by autograd";
    case TL_HELD_CYCLE:
        return "held only by a reference cycle";
    default:
        return "holder unknown";
    }
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int cmp_str(const char *a, const char *b)
{
    return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

static const char *fix_hint(const item_t *x);

/* The grouping key: problem kind and fix, where, op, holder, storage kind,
 * device. */
static int cmp_key(const item_t *x, const item_t *y)
{
    const tl_end_storage_t *a = x->s, *b = y->s;
    int r;
    if (x->p && x->p->kind != y->p->kind) return x->p->kind < y->p->kind ? -1 : 1;
    if (x->p && (r = cmp_str(fix_hint(x), fix_hint(y)))) return r;
    if ((r = strcmp(x->where, y->where)) || (r = cmp_str(a->origin, b->origin))) return r;
    if (a->held_by != b->held_by) return a->held_by < b->held_by ? -1 : 1;
    if (a->cause != b->cause) return a->cause < b->cause ? -1 : 1;
    if (a->s.kind != b->s.kind) return a->s.kind < b->s.kind ? -1 : 1;
    return (int)a->s.device - (int)b->s.device;
}

/* Items without a where (no stack) are alike to none. */
static bool alike(const item_t *x, const item_t *y)
{
    return x->where[0] && !cmp_key(x, y);
}

static int cmp_item(const void *pa, const void *pb)
{
    const item_t *x = pa, *y = pb;
    int r = cmp_key(x, y);
    return r ? r : x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_group(const void *pa, const void *pb)
{
    const group_t *a = pa, *b = pb;
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    return a->first < b->first ? -1 : a->first > b->first; /* first: sorted by order within */
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return a < b ? -1 : a > b;
}

/* Sort items[0, n) by key and fill groups[] (n entries) with the runs of
 * alike items, the largest total first (ties: the earlier in the end
 * point's order). Returns the number of groups. */
static size_t group_items(item_t *items, size_t n, group_t *groups)
{
    qsort(items, n, sizeof *items, cmp_item);
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ng || !alike(&items[groups[ng - 1].first], &items[i]))
            groups[ng++] = (group_t){.first = i, .min = UINT64_MAX};
        group_t *g = &groups[ng - 1];
        g->count++;
        g->total += items[i].bytes;
        g->pinned += items[i].s->pinned_bytes;
        if (items[i].s->s.bytes < g->min) g->min = items[i].s->s.bytes;
        if (items[i].s->s.bytes > g->max) g->max = items[i].s->s.bytes;
    }
    for (size_t k = 0; k < ng; k++) {
        group_t *g = &groups[k];
        g->ids = malloc(g->count * sizeof *g->ids);
        for (size_t i = 0; g->ids && i < g->count; i++)
            g->ids[i] = items[g->first + i].s->s.id;
        if (g->ids) qsort(g->ids, g->count, sizeof *g->ids, cmp_u64);
    }
    qsort(groups, ng, sizeof *groups, cmp_group);
    return ng;
}

static void free_groups(group_t *groups, size_t ng)
{
    for (size_t i = 0; groups && i < ng; i++)
        free(groups[i].ids);
    free(groups);
}

/* "#28, #35, #40-#43 and 5 more": the group's storage ids in ranges. */
static void print_ids(const group_t *g, FILE *out)
{
    const uint64_t *ids = g->ids;
    size_t k = ids ? g->count : 0, ranges = 0, i = 0;
    for (; i < k && ranges < IDS_SHOWN; ranges++) {
        size_t j = i;
        while (j + 1 < k && ids[j + 1] == ids[j] + 1)
            j++;
        fprintf(out, "%s#%" PRIu64, ranges ? ", " : "", ids[i]);
        if (j > i) fprintf(out, "%s#%" PRIu64, j == i + 1 ? ", " : "-", ids[j]);
        i = j + 1;
    }
    if (i < k) fprintf(out, " and %zu more", k - i);
}

/* Whether storage id is a member of group g. */
static bool member(const group_t *g, uint64_t id)
{
    return g->ids && bsearch(&id, g->ids, g->count, sizeof id, cmp_u64);
}

/* "3 c10 storages of 32.0 MiB allocated by relu at train.py:19" */
static void print_members(const item_t *lead, const group_t *g, FILE *out)
{
    char b1[32], b2[32];
    const tl_end_storage_t *s = lead->s;
    bool shared = tl_storage_is_shared(s);
    fprintf(out, "%zu %s storages", g->count,
            shared ? "shared-memory" : tl_render_storage_kind(s->s.kind));
    if (s->s.device != TL_DEVICE_CPU)
        fprintf(out, " on %s", tl_render_device(s->s.device, b1, sizeof b1));
    if (g->min == g->max)
        fprintf(out, " of %s", tl_size_text(g->min, b1, sizeof b1));
    else
        fprintf(out, " of %s to %s", tl_size_text(g->min, b1, sizeof b1),
                tl_size_text(g->max, b2, sizeof b2));
    if (shared) {
        fputs(" " TL_SHARED_WORDS, out);
        return;
    }
    if (s->origin) {
        fputs(" allocated by ", out);
        tl_esc_puts(out, s->origin);
    }
    if (lead->where[0]) {
        fputc(' ', out);
        tl_esc_puts(out, lead->where);
    }
}

/* The usual fix of x's problem kind (lineage.h). */
static const char *fix_hint(const item_t *x)
{
    return tl_problem_fix(x->p, x->s->s.kind, x->s->held_path);
}

/* What the group's problem is, after its members: ", held only by autograd:
 * 96.0 MiB". */
static const char *problem_phrase(unsigned kind)
{
    switch (kind) {
    case TL_PROBLEM_PINNED:
        return "kept alive only by views; pinned";
    case TL_PROBLEM_DUPLICATE:
        return "copies of live storages; duplicated";
    case TL_PROBLEM_AUTOGRAD:
        return "held only by autograd";
    case TL_PROBLEM_CYCLE:
        return "held only by a reference cycle";
    case TL_PROBLEM_CACHE:
        return "held by a cache";
    case TL_PROBLEM_TRACEBACK:
        return "held by a kept exception's traceback";
    default:
        return "in all";
    }
}

/* The "      held: PATH" line's start. A path that is already a sentence
 * about its holder ("held only by a reference cycle (...)", _paths.py)
 * goes without the label, so the line does not say "held" twice. */
static void put_held_path(const char *path, FILE *out)
{
    fputs(strncmp(path, "held ", 5) ? "      held: " : "      ", out);
    tl_esc_puts(out, path);
}

/* "      held: PATH (and 2 other paths)": the first member's holder path. */
static void print_held(const item_t *items, const group_t *g, FILE *out)
{
    const char *path = NULL;
    size_t more = 0;
    for (size_t i = g->first; i < g->first + g->count; i++) {
        if (!items[i].s->held_path) continue;
        if (!path)
            path = items[i].s->held_path;
        else if (strcmp(path, items[i].s->held_path))
            more++;
    }
    if (!path) return;
    put_held_path(path, out);
    if (more) fprintf(out, " (and %zu other path%s)", more, more == 1 ? "" : "s");
    fputc('\n', out);
}

/* "      views: 4 (64 B in all), slice at train.py:22": the views keeping a
 * group's storages alive, named by the first one's op and line ("the
 * first" when they differ). */
static void print_views(const tl_report_ctx_t *c, const item_t *items, const group_t *g, FILE *out)
{
    char b[32], w[WHERE_MAX], w0[WHERE_MAX] = "";
    const tl_end_view_t *first = NULL;
    size_t n = 0;
    uint64_t bytes = 0;
    bool same = true;
    for (size_t i = g->first; i < g->first + g->count; i++)
        for (size_t k = 0; k < items[i].s->nviews; k++) {
            const tl_end_view_t *v = &items[i].s->views[k];
            const char *where = v->site == TL_NO_SITE
                                    ? ""
                                    : tl_lineage_where(c->trace, c->sym, v->site, w, sizeof w);
            if (!first) {
                first = v;
                snprintf(w0, sizeof w0, "%s", where);
            } else {
                same &= same_str(first->op, v->op) && !strcmp(w0, where);
            }
            n++;
            bytes += v->bytes;
        }
    if (!n) return;
    fprintf(out, "      views: %zu (%s in all)", n, tl_size_text(bytes, b, sizeof b));
    if (first->op || w0[0]) fputs(same ? ", " : ", the first ", out);
    if (first->op) tl_esc_puts(out, first->op);
    if (w0[0]) {
        fputs(first->op ? " " : "made ", out);
        tl_esc_puts(out, w0);
    }
    fputc('\n', out);
}

static void print_problem_group(const tl_report_ctx_t *c, const item_t *items, const group_t *g,
                                FILE *out)
{
    char b[32];
    const item_t *lead = &items[g->first];
    const tl_problem_t *p = lead->p;
    const char *fix = fix_hint(lead);
    fprintf(out, "  [%s] ", tl_problem_kind_name(p->kind));
    if (g->count == 1) {
        tl_esc_puts(out, p->message);
        fputc('\n', out);
        if (fix && !strstr(p->message, " Fix: ")) {
            fputs("      fix: ", out);
            tl_esc_puts(out, fix);
            fputc('\n', out);
        }
        return;
    }
    print_members(lead, g, out);
    fprintf(out, ", %s: %s (", problem_phrase(p->kind), tl_size_text(g->total, b, sizeof b));
    print_ids(g, out);
    fputs(")\n", out);
    if (p->kind == TL_PROBLEM_PINNED) print_views(c, items, g, out);
    if (p->kind >= TL_PROBLEM_CYCLE || p->kind == TL_PROBLEM_AUTOGRAD) print_held(items, g, out);
    if (fix) {
        fputs("      fix: ", out);
        tl_esc_puts(out, fix);
        fputc('\n', out);
    }
}

/* The items of the end point: its problems (problems true) or its storages,
 * with their where; NULL when out of memory or none. */
static item_t *make_items(const tl_report_ctx_t *c, bool problems, size_t *n)
{
    const tl_endpoint_t *e = &c->model->end;
    size_t want = problems ? e->nproblems : e->nstorages;
    *n = 0;
    item_t *items = want ? malloc(want * sizeof *items) : NULL;
    const tl_end_storage_t **by_id = problems && items ? tl_endpoint_by_id(e) : NULL;
    if (!items || (problems && !by_id)) {
        free(items);
        return NULL;
    }
    for (size_t i = 0; i < want; i++) {
        item_t *it = &items[*n];
        it->p = problems ? &e->problems[i] : NULL;
        it->s = problems ? tl_endpoint_storage_of(by_id, e->nstorages, it->p->storage)
                         : &e->storages[i];
        if (!it->s) continue; /* a problem names a storage of the end point */
        tl_lineage_where(c->trace, c->sym, it->s->s.site, it->where, sizeof it->where);
        it->bytes = problems ? it->p->bytes : it->s->s.bytes;
        it->order = i;
        (*n)++;
    }
    free(by_id);
    return items;
}

static void print_problems(const tl_report_ctx_t *c, FILE *out)
{
    const tl_endpoint_t *e = &c->model->end;
    size_t n;
    item_t *items = make_items(c, true, &n);
    group_t *groups = items ? malloc(n * sizeof *groups) : NULL;
    size_t ng = groups ? group_items(items, n, groups) : 0;
    fprintf(out, "\nProblems: %zu", e->nproblems);
    if (groups && ng < n) fprintf(out, " in %zu group%s", ng, ng == 1 ? "" : "s");
    fputc('\n', out);
    if (!e->nproblems) fputs("  (none)\n", out);
    for (size_t i = 0; i < ng; i++)
        print_problem_group(c, items, &groups[i], out);
    for (size_t i = 0; !groups && i < e->nproblems; i++) { /* out of memory: one each */
        fprintf(out, "  [%s] ", tl_problem_kind_name(e->problems[i].kind));
        tl_esc_puts(out, e->problems[i].message);
        fputc('\n', out);
    }
    free_groups(groups, ng);
    free(items);
}

void tl_report_made_text(const tl_report_made_t *m, FILE *out)
{
    fprintf(out, "pid %" PRIu64 " (", m->pid);
    tl_esc_puts(out, m->role);
    fputc(')', out);
    if (m->where[0]) fputc(' ', out);
    tl_esc_puts(out, m->where);
    if (m->samples[0]) fputs(" from samples made ", out);
    tl_esc_puts(out, m->samples);
}

/* A run report's "made by" line of a shared-memory storage another
 * process of the run made (tl_report_made_of). */
static void print_made_by(const tl_report_ctx_t *c, const tl_end_storage_t *s, FILE *out)
{
    const tl_report_made_t *m = c->run ? tl_report_made_of(c->run, s, c->trace->pid) : NULL;
    if (!m) return;
    fputs("      made by ", out);
    tl_report_made_text(m, out);
    fputc('\n', out);
}

/* One live storage's own lines: id, size, kind, op, holder, where; then its
 * source, views, duplicates, tags and maker. */
static void print_storage(const tl_report_ctx_t *c, const tl_end_storage_t *s, FILE *out)
{
    const tl_trace_t *t = c->trace;
    char b1[32], b2[32], w[WHERE_MAX], ew[TL_ESC_SIZE(WHERE_MAX)];
    bool shared = tl_storage_is_shared(s);
    fprintf(out, "  #%" PRIu64 " %s %s storage", s->s.id, tl_size_text(s->s.bytes, b1, sizeof b1),
            shared ? "shared-memory" : tl_render_storage_kind(s->s.kind));
    if (s->s.device != TL_DEVICE_CPU)
        fprintf(out, " on %s", tl_render_device(s->s.device, b2, sizeof b2));
    if (s->origin && !shared) {
        fputs(" allocated by ", out);
        tl_esc_puts(out, s->origin);
    }
    const char *where =
        shared ? TL_SHARED_WORDS
               : tl_esc(tl_lineage_where(t, c->sym, s->s.site, w, sizeof w), ew, sizeof ew);
    if (where[0]) fprintf(out, " %s", where);
    fprintf(out, ", %s", held_phrase(s));
    if (s->pinned_bytes) fprintf(out, ", %s pinned", tl_size_text(s->pinned_bytes, b1, sizeof b1));
    fputc('\n', out);
    if (s->held_path) {
        put_held_path(s->held_path, out);
        fputc('\n', out);
    }
    if (s->s.source) {
        fprintf(out, "      source: storage #%" PRIu64, s->s.source);
        where = tl_esc(tl_lineage_where(t, c->sym, s->s.source_site, w, sizeof w), ew, sizeof ew);
        if (where[0]) fprintf(out, " allocated %s", where);
        fputc('\n', out);
    }
    for (size_t k = 0; k < s->nviews; k++) {
        const tl_end_view_t *v = &s->views[k];
        fprintf(out, "      view: %s at offset %" PRIu64 ", extent %s",
                tl_size_text(v->bytes, b1, sizeof b1), v->offset,
                tl_size_text(v->extent, b2, sizeof b2));
        if (v->op) {
            fputs(", ", out);
            tl_esc_puts(out, v->op);
        }
        where = v->site == TL_NO_SITE
                    ? ""
                    : tl_esc(tl_lineage_where(t, c->sym, v->site, w, sizeof w), ew, sizeof ew);
        if (where[0]) fprintf(out, " %s", where);
        fputs(v->api ? " (API)\n" : "\n", out);
    }
    if (s->ndups) {
        fputs("      identical contents:", out);
        for (size_t k = 0; k < s->ndups; k++)
            fprintf(out, "%s #%" PRIu64, k ? "," : "", s->dups[k]);
        fputc('\n', out);
    }
    if (s->ntags) {
        fputs("      tags:", out);
        for (size_t k = 0; k < s->ntags; k++) {
            fputs(k ? ", " : " ", out);
            tl_esc_puts(out, s->tags[k]);
        }
        fputc('\n', out);
    }
    print_made_by(c, s, out);
}

/* A group of storages: one line, then the holder path, copies and views
 * counted, duplicates outside the group named. */
static void print_storage_group(const tl_report_ctx_t *c, const item_t *items, const group_t *g,
                                FILE *out)
{
    char b[32];
    const item_t *lead = &items[g->first];
    fputs("  ", out);
    print_members(lead, g, out);
    fprintf(out, ", %s: %s", held_phrase(lead->s), tl_size_text(g->total, b, sizeof b));
    if (g->pinned) fprintf(out, ", %s pinned", tl_size_text(g->pinned, b, sizeof b));
    fputs(" (", out);
    print_ids(g, out);
    fputs(")\n", out);
    print_held(items, g, out);
    print_views(c, items, g, out);
    size_t dups_in = 0, dups_out = 0, copies = 0;
    for (size_t i = g->first; i < g->first + g->count; i++) {
        const tl_end_storage_t *s = items[i].s;
        copies += s->s.source != 0;
        for (size_t k = 0; k < s->ndups; k++) {
            if (member(g, s->dups[k]))
                dups_in++;
            else
                dups_out++;
        }
    }
    if (copies) fprintf(out, "      %zu of them copies of other storages\n", copies);
    if (dups_in && !dups_out) fputs("      identical contents: each other\n", out);
    if (!dups_out) return;
    fputs("      identical contents:", out);
    uint64_t named[IDS_SHOWN];
    size_t k = 0;
    for (size_t i = g->first; i < g->first + g->count && k < IDS_SHOWN; i++) {
        const tl_end_storage_t *s = items[i].s;
        for (size_t d = 0; d < s->ndups && k < IDS_SHOWN; d++) {
            bool seen = member(g, s->dups[d]);
            for (size_t j = 0; j < k && !seen; j++)
                seen = named[j] == s->dups[d];
            if (seen) continue;
            fprintf(out, "%s #%" PRIu64, k ? "," : "", s->dups[d]);
            named[k++] = s->dups[d];
        }
    }
    fputs(dups_in ? " (and each other)\n" : "\n", out);
}

static void print_end_storages(const tl_report_ctx_t *c, FILE *out)
{
    const tl_endpoint_t *e = &c->model->end;
    size_t n;
    item_t *items = make_items(c, false, &n);
    group_t *groups = items ? malloc(n * sizeof *groups) : NULL;
    size_t ng = groups ? group_items(items, n, groups) : e->nstorages;
    size_t shown = tl_render_shown(c, ng);
    fprintf(out, "\nStorages live at end: %zu", e->nstorages);
    if (ng < e->nstorages) fprintf(out, " in %zu group%s", ng, ng == 1 ? "" : "s");
    if (shown < ng) fprintf(out, ", top %zu shown", shown);
    fputs(e->nstorages ? "\n" : "\n  (none)\n", out);
    for (size_t i = 0; i < shown; i++) {
        if (!groups)
            print_storage(c, &e->storages[i], out);
        else if (groups[i].count == 1)
            print_storage(c, items[groups[i].first].s, out);
        else
            print_storage_group(c, items, &groups[i], out);
    }
    free_groups(groups, ng);
    free(items);
}

void tl_render_text_end(const tl_report_ctx_t *c, FILE *out)
{
    print_problems(c, out);
    print_end_storages(c, out);
}
