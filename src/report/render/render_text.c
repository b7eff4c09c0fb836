/* render_text.c - the human-readable report.
 *
 * One header line, one summary line, the end point line, the notes, the
 * problems (one paragraph each), then "Storages live at end", "Peak
 * consumers", "Leaks (live at end)" and "Storages by site", each site
 * followed by its innermost interesting frames (allocator and agent frames
 * skipped).
 */
#include <inttypes.h>
#include <string.h>

#include "report/analyze/frames.h"
#include "report/render/escape.h"
#include "report/analyze/lineage.h"
#include "report/read/aggregate.h"
#include "report/render/render.h"

#define TEXT_MAX_FRAMES    8
#define TEXT_MAX_PY_FRAMES 4

/* Frames of the allocator machinery, skipped while they lead a stack. */
static bool boring(const tl_frame_t *f)
{
    return tl_allocator_module(f->module, TL_ALLOC_NATIVE);
}

/* How the text report names an end point (tl_endpoint_t.point). */
static const char *end_point_text(const char *point)
{
    if (!strcmp(point, "script_end"))
        return "script_end (the main script finished, before interpreter teardown)";
    if (!strcmp(point, "os_exit")) return "os_exit (the process called os._exit, as a worker does)";
    if (!strcmp(point, "signal")) return "signal (a fatal signal ended the process)";
    return "process exit (end of the trace)";
}

static void print_time(FILE *out, uint64_t ns)
{
    if (ns >= 1000000000ull)
        fprintf(out, "%.2f s", (double)ns / 1e9);
    else
        fprintf(out, "%.1f ms", (double)ns / 1e6);
}

/* One line per device when any storage was not on the CPU. */
static void print_devices(const tl_report_ctx_t *c, FILE *out)
{
    const tl_model_t *m = c->model;
    bool other = false;
    for (unsigned d = 1; d < TL_MODEL_DEVICES; d++)
        other |= m->devices[d].seen;
    if (!other && !m->devices[TL_DEVICE_CPU].peak_reserved_bytes) return;
    char name[16], b1[32], b2[32], b3[32], b4[32];
    for (unsigned d = 0; d < TL_MODEL_DEVICES; d++) {
        const tl_device_stat_t *s = &m->devices[d];
        if (!s->seen) continue;
        fprintf(out, "tensorleak: %s: storages peak %s at ", tl_render_device(d, name, sizeof name),
                tl_render_bytes(s->peak_storage_bytes, b1, sizeof b1));
        print_time(out, s->peak_storage_bytes ? tl_render_rel_ns(c->trace, s->peak_storage_ts) : 0);
        fprintf(out, ", %s live at end in %" PRIu64,
                tl_render_bytes(s->live_storage_bytes, b2, sizeof b2), s->live_storages);
        if (s->peak_reserved_bytes)
            fprintf(out, "; reserved (cudaMalloc segments) %s at end in %" PRIu64 ", peak %s",
                    tl_render_bytes(s->reserved_bytes, b3, sizeof b3), s->reserved_segments,
                    tl_render_bytes(s->peak_reserved_bytes, b4, sizeof b4));
        fputc('\n', out);
    }
}

static void print_frame(const tl_frame_t *f, bool python, FILE *out)
{
    fputs("      at ", out);
    if (f->function)
        tl_esc_puts(out, f->function);
    else if (python)
        fputs("<python frame>", out);
    else
        fprintf(out, "0x%" PRIx64, f->address);
    if (f->file) {
        fputs(" (", out);
        tl_esc_puts(out, f->file);
        fprintf(out, ":%u)", f->line);
    }
    if (f->module) {
        fputs(" [", out);
        tl_esc_puts(out, tl_path_base(f->module));
        fputc(']', out);
    }
    fputc('\n', out);
}

/* The innermost TEXT_MAX_FRAMES frames after leading allocator frames, then
 * the first few Python frames further out (the script lines behind a native
 * allocation deep in a library). */
void tl_render_text_frames(const tl_report_ctx_t *c, uint32_t site, FILE *out)
{
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    if (n == 0) {
        fputs("      (no stack recorded)\n", out);
        return;
    }
    size_t first = 0;
    tl_frame_t f;
    while (first < n) {
        if (tl_render_frame(c, frames[first], &f) || !boring(&f)) break;
        first++;
    }
    if (first == n) first = 0; /* nothing but allocator frames: show them */
    size_t i = first, shown = 0, skipped = 0, py_more = 0;
    for (; i < n && shown < TEXT_MAX_FRAMES; i++, shown++) {
        bool python = tl_render_frame(c, frames[i], &f);
        print_frame(&f, python, out);
    }
    for (; i < n; i++) {
        bool python = tl_render_frame(c, frames[i], &f);
        if (!python || py_more >= TEXT_MAX_PY_FRAMES) {
            skipped++;
            continue;
        }
        if (skipped) fprintf(out, "      ... %zu frame%s\n", skipped, skipped == 1 ? "" : "s");
        skipped = 0;
        print_frame(&f, true, out);
        py_more++;
    }
    if (skipped) fprintf(out, "      ... %zu more frame%s\n", skipped, skipped == 1 ? "" : "s");
}

static void print_sites(const tl_report_ctx_t *c, const char *title, const tl_site_stat_t *s,
                        size_t n, bool storage_list, FILE *out)
{
    char b[32];
    size_t shown = tl_render_shown(c, n);
    fprintf(out, "\n%s: %zu site%s", title, n, n == 1 ? "" : "s");
    if (shown < n) fprintf(out, ", top %zu shown", shown);
    fputs(n ? "\n" : "\n  (none)\n", out);
    for (size_t i = 0; i < shown; i++) {
        /* The program's own line first: below it, the frames start deep in
         * the libraries, where the user's line may be cut off. */
        char w[512], ew[TL_ESC_SIZE(512)];
        const char *where =
            tl_esc(tl_lineage_where(c->trace, c->sym, s[i].site, w, sizeof w), ew, sizeof ew);
        if (storage_list)
            fprintf(out, "  %s in %" PRIu64 " storage allocation%s%s%s\n",
                    tl_render_bytes(s[i].bytes, b, sizeof b), s[i].blocks,
                    s[i].blocks == 1 ? "" : "s", where[0] ? " " : "", where);
        else
            fprintf(out, "  %s in %" PRIu64 " block%s%s%s%s\n",
                    tl_render_bytes(s[i].bytes, b, sizeof b), s[i].blocks,
                    s[i].blocks == 1 ? "" : "s", s[i].storage ? " [storage]" : "",
                    where[0] ? " " : "", where);
        tl_render_text_frames(c, s[i].site, out);
    }
}

static const char *held_phrase(unsigned held)
{
    switch (held) {
    case TL_HELD_TENSOR:
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

static void print_problems(const tl_report_ctx_t *c, FILE *out)
{
    const tl_endpoint_t *e = &c->model->end;
    fprintf(out, "\nProblems: %zu\n", e->nproblems);
    if (!e->nproblems) fputs("  (none)\n", out);
    for (size_t i = 0; i < e->nproblems; i++) {
        fprintf(out, "  [%s] ", tl_problem_kind_name(e->problems[i].kind));
        tl_esc_puts(out, e->problems[i].message);
        fputc('\n', out);
    }
}

/* One entry per live storage: id, size, kind, op, holder, where; then its
 * source, views, duplicates and tags. */
static void print_end_storages(const tl_report_ctx_t *c, FILE *out)
{
    const tl_endpoint_t *e = &c->model->end;
    const tl_trace_t *t = c->trace;
    char b1[32], b2[32], w[256], ew[TL_ESC_SIZE(256)];
    size_t shown = tl_render_shown(c, e->nstorages);
    fprintf(out, "\nStorages live at end: %zu", e->nstorages);
    if (shown < e->nstorages) fprintf(out, ", top %zu shown", shown);
    fputs(e->nstorages ? "\n" : "\n  (none)\n", out);
    for (size_t i = 0; i < shown; i++) {
        const tl_end_storage_t *s = &e->storages[i];
        fprintf(out, "  #%" PRIu64 " %s %s storage", s->s.id,
                tl_render_bytes(s->s.bytes, b1, sizeof b1), tl_render_storage_kind(s->s.kind));
        if (s->s.device != TL_DEVICE_CPU)
            fprintf(out, " on %s", tl_render_device(s->s.device, b2, sizeof b2));
        if (s->origin) {
            fputs(" allocated by ", out);
            tl_esc_puts(out, s->origin);
        }
        const char *where =
            tl_esc(tl_lineage_where(t, c->sym, s->s.site, w, sizeof w), ew, sizeof ew);
        if (where[0]) fprintf(out, " %s", where);
        fprintf(out, ", %s", held_phrase(s->held_by));
        if (s->pinned_bytes)
            fprintf(out, ", %s pinned", tl_render_bytes(s->pinned_bytes, b1, sizeof b1));
        fputc('\n', out);
        if (s->held_path) fprintf(out, "      held: %s\n", s->held_path);
        if (s->s.source) {
            fprintf(out, "      source: storage #%" PRIu64, s->s.source);
            where =
                tl_esc(tl_lineage_where(t, c->sym, s->s.source_site, w, sizeof w), ew, sizeof ew);
            if (where[0]) fprintf(out, " allocated %s", where);
            fputc('\n', out);
        }
        for (size_t k = 0; k < s->nviews; k++) {
            const tl_end_view_t *v = &s->views[k];
            fprintf(out, "      view: %s at offset %" PRIu64 ", extent %s",
                    tl_render_bytes(v->bytes, b1, sizeof b1), v->offset,
                    tl_render_bytes(v->extent, b2, sizeof b2));
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
    }
}

/* Per region: iterations, the last one's leak and its top sites; then the
 * sites that grow in every iteration of a repeated region. */
static void print_regions(const tl_report_ctx_t *c, FILE *out)
{
    const tl_regions_t *rg = &c->model->regions;
    char b1[32], b2[32], b3[32];
    if (!rg->nregions) return;
    fprintf(out, "\nRegions: %zu\n", rg->nregions);
    for (size_t i = 0; i < rg->nregions; i++) {
        const tl_region_t *r = &rg->regions[i];
        fputs("  ", out);
        tl_esc_puts(out, r->name);
        fprintf(out,
                ": %" PRIu64 " iteration%s; the last leaked %s in %" PRIu64
                " block%s (storages %s); all iterations %s\n",
                r->iterations, r->iterations == 1 ? "" : "s",
                tl_render_bytes(r->last.bytes, b1, sizeof b1), r->last.blocks,
                r->last.blocks == 1 ? "" : "s",
                tl_render_bytes(r->last.storage_bytes, b2, sizeof b2),
                tl_render_bytes(r->total.bytes, b3, sizeof b3));
        size_t shown = tl_render_shown(c, r->nsites);
        for (size_t k = 0; k < shown && k < 3; k++) {
            fprintf(out, "    %s in %" PRIu64 " block%s%s\n",
                    tl_render_bytes(r->sites[k].bytes, b1, sizeof b1), r->sites[k].blocks,
                    r->sites[k].blocks == 1 ? "" : "s", r->sites[k].storage ? " [storage]" : "");
            tl_render_text_frames(c, r->sites[k].site, out);
        }
    }
    size_t shown = tl_render_shown(c, rg->ngrowth);
    fprintf(out, "\nGrowth (sites whose live bytes grow in every iteration after the first): %zu\n",
            rg->ngrowth);
    if (!rg->ngrowth) fputs("  (none)\n", out);
    for (size_t i = 0; i < shown; i++) {
        const tl_growth_t *g = &rg->growth[i];
        fprintf(out, "  +%s per iteration over %" PRIu64 " iterations of ",
                tl_render_bytes(g->bytes_per_iteration, b1, sizeof b1), g->iterations);
        tl_esc_puts(out, rg->regions[g->region].name);
        fprintf(out, " (%s -> %s)\n", tl_render_bytes(g->first_bytes, b2, sizeof b2),
                tl_render_bytes(g->last_bytes, b3, sizeof b3));
        tl_render_text_frames(c, g->site, out);
    }
}

void tl_render_text(const tl_report_ctx_t *c, FILE *out)
{
    const tl_trace_t *t = c->trace;
    const tl_model_t *m = c->model;
    char b1[32], b2[32], b3[32], b4[32];

    fprintf(out, "tensorleak: pid %" PRIu64 " (ppid %" PRIu64 "):", t->pid, t->ppid);
    for (size_t i = 0; i < t->argc; i++) {
        fputc(' ', out);
        tl_esc_puts(out, t->argv[i]);
    }
    if (t->argc == 0) {
        fputc(' ', out);
        tl_esc_puts(out, t->exe[0] ? t->exe : "(command unknown)");
    }
    fputc('\n', out);

    fprintf(out, "tensorleak: peak %s (storages %s) at ",
            tl_render_bytes(m->peak_bytes, b1, sizeof b1),
            tl_render_bytes(m->peak_storage_bytes, b2, sizeof b2));
    print_time(out, m->peak_bytes ? tl_render_rel_ns(t, m->peak_ts) : 0);
    fprintf(out,
            "; %s live at end in %" PRIu64 " block%s (storages %s in %" PRIu64 "); %" PRIu64
            " allocations, %" PRIu64 " frees, %" PRIu64 " storages; ",
            tl_render_bytes(m->live_bytes, b3, sizeof b3), m->live_blocks,
            m->live_blocks == 1 ? "" : "s", tl_render_bytes(m->live_storage_bytes, b4, sizeof b4),
            m->live_storage_blocks, m->allocations, m->frees, m->storages);
    if (t->has_end)
        fprintf(out, "%" PRIu64 " dropped\n", t->end_dropped);
    else
        fputs("dropped unknown\n", out);
    char agg_note[512];
    fputs(tl_agg_text_note(t, agg_note, sizeof agg_note), out);
    print_devices(c, out);
    const tl_endpoint_t *e = &c->model->end;
    uint64_t end_bytes = 0;
    for (size_t i = 0; i < e->nstorages; i++)
        end_bytes += e->storages[i].s.bytes;
    fprintf(out, "tensorleak: end point: %s at ", end_point_text(e->point));
    print_time(out, tl_render_rel_ns(t, e->ts));
    fprintf(out, "; %zu storage%s, %s live there\n", e->nstorages, e->nstorages == 1 ? "" : "s",
            tl_render_bytes(end_bytes, b1, sizeof b1));
    for (size_t i = 0; i < c->nnotes; i++)
        fprintf(out, "note: %s\n", c->notes[i]);

    print_problems(c, out);
    print_end_storages(c, out);
    print_sites(c, "Peak consumers", m->peak_sites, m->npeak_sites, false, out);
    print_sites(c, "Leaks (live at end)", m->leaks, m->nleaks, false, out);
    print_sites(c, "Storages by site", m->storage_sites, m->nstorage_sites, true, out);
    print_regions(c, out);
}
