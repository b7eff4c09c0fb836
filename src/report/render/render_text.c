/* render_text.c - the human-readable report.
 *
 * One header line, one summary line, the end point line, the notes, the
 * problems and the storages live at end (grouped: text_end.c), then "Peak
 * consumers", "Leaks (live at end)" and "Storages by site": sites grouped by
 * the program's line (tl_lineage_where), each group followed by the frames
 * of its largest site (text_frames.c). The leaks leave out what the
 * suppressions hide (ctx.supp) and say so in one line. The first screen
 * answers what holds the memory, where, and how to fix it.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/analyze/frames.h"
#include "report/render/escape.h"
#include "report/analyze/lineage.h"
#include "report/read/aggregate.h"
#include "report/render/render.h"
#include "report/render/site_group.h"

#define WHERE_MAX 512

/* How the text report names an end point (tl_endpoint_t.point). */
static const char *end_point_text(const char *point)
{
    if (!strcmp(point, "script_end"))
        return "script_end (the main script finished, before interpreter teardown)";
    if (!strcmp(point, "os_exit")) return "os_exit (the process called os._exit, as a worker does)";
    if (!strcmp(point, "signal")) return "signal (a fatal signal ended the process)";
    if (!strcmp(point, "last_event"))
        return "last_event (no END record: the process was killed, still runs, or its trace "
               "was cut)";
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
                tl_size_text(s->peak_storage_bytes, b1, sizeof b1));
        print_time(out, s->peak_storage_bytes ? tl_render_rel_ns(c->trace, s->peak_storage_ts) : 0);
        fprintf(out, ", %s live at end in %" PRIu64,
                tl_size_text(s->live_storage_bytes, b2, sizeof b2), s->live_storages);
        if (s->peak_reserved_bytes)
            fprintf(out, "; reserved (cudaMalloc segments) %s at end in %" PRIu64 ", peak %s",
                    tl_size_text(s->reserved_bytes, b3, sizeof b3), s->reserved_segments,
                    tl_size_text(s->peak_reserved_bytes, b4, sizeof b4));
        fputc('\n', out);
    }
}

/* "  hidden: 62.5 MiB in 326855 blocks of one-time allocations (CPython
 * import machinery, dlopen); --no-default-suppressions shows them" */
static void print_hidden(const tl_report_ctx_t *c, const tl_site_list_t *l, FILE *out)
{
    char b[32];
    if (!l->hidden_blocks && !l->hidden_bytes) return;
    fprintf(out, "  hidden: %s in %" PRIu64 " block%s of one-time allocations (",
            tl_size_text(l->hidden_bytes, b, sizeof b), l->hidden_blocks,
            l->hidden_blocks == 1 ? "" : "s");
    struct {
        const char *why;
        size_t len;
    } said[64];
    size_t nsaid = 0;
    for (size_t r = 0; r < c->supp->nrules && r < 64; r++) {
        if (!(l->hidden_rules & (1ull << r))) continue;
        const tl_supp_rule_t *rule = &c->supp->rules[r];
        const char *why = rule->why ? rule->why : rule->pattern;
        size_t len = strcspn(why, "("); /* the short form, before a parenthesis */
        while (len > 1 && why[len - 1] == ' ')
            len--;
        bool dup = false;
        for (size_t k = 0; k < nsaid && !dup; k++)
            dup = said[k].len == len && !strncmp(said[k].why, why, len);
        if (dup) continue;
        said[nsaid].why = why;
        said[nsaid++].len = len;
        fputs(nsaid > 1 ? ", " : "", out);
        tl_esc_write(out, why, len, false);
    }
    fputs("); --no-default-suppressions shows them\n", out);
}

static void print_sites(const tl_report_ctx_t *c, const char *title, const tl_site_stat_t *s,
                        size_t n, bool storage_list, tl_supp_t *supp, FILE *out)
{
    char b[32];
    tl_site_list_t l;
    bool ungrouped = tl_site_list_build(c, s, n, supp, &l);
    size_t ng = ungrouped ? n : l.ng, nsites = ungrouped ? n : l.n;
    size_t shown = tl_render_shown(c, ng);
    fprintf(out, "\n%s: %zu site%s", title, nsites, nsites == 1 ? "" : "s");
    if (ng < nsites) fprintf(out, " at %zu line%s", ng, ng == 1 ? "" : "s");
    if (shown < ng) fprintf(out, ", top %zu shown", shown);
    fputs(ng ? "\n" : "\n  (none)\n", out);
    if (!ungrouped) print_hidden(c, &l, out);
    for (size_t i = 0; i < shown; i++) {
        tl_site_group_t one;
        const tl_site_group_t *g = &one;
        char w[WHERE_MAX];
        if (ungrouped)
            one = (tl_site_group_t){.lead = i,
                                    .nsites = 1,
                                    .bytes = s[i].bytes,
                                    .blocks = s[i].blocks,
                                    .storage = s[i].storage,
                                    .where =
                                        tl_lineage_where(c->trace, c->sym, s[i].site, w, sizeof w)};
        else
            g = &l.g[i];
        /* The program's own line first: below it, the frames start deep in
         * the libraries, where the user's line may be cut off. */
        if (storage_list)
            fprintf(out, "  %s in %" PRIu64 " storage allocation%s",
                    tl_size_text(g->bytes, b, sizeof b), g->blocks, g->blocks == 1 ? "" : "s");
        else
            fprintf(out, "  %s in %" PRIu64 " block%s%s", tl_size_text(g->bytes, b, sizeof b),
                    g->blocks, g->blocks == 1 ? "" : "s", g->storage ? " [storage]" : "");
        if (g->where[0]) {
            fputc(' ', out);
            tl_esc_puts(out, g->where);
        }
        if (g->nsites > 1) fprintf(out, " (%zu sites)", g->nsites);
        fputc('\n', out);
        tl_render_text_frames(c, s[g->lead].site, out);
    }
    tl_site_list_free(&l);
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
                " block%s (storages %s); all iterations %s",
                r->iterations, r->iterations == 1 ? "" : "s",
                tl_size_text(r->last.bytes, b1, sizeof b1), r->last.blocks,
                r->last.blocks == 1 ? "" : "s", tl_size_text(r->last.storage_bytes, b2, sizeof b2),
                tl_size_text(r->total.bytes, b3, sizeof b3));
        if (r->last_replaced.bytes || r->last_replaced.blocks)
            fprintf(out,
                    "; not counted: %s in %" PRIu64 " block%s replacing the iteration before's",
                    tl_size_text(r->last_replaced.bytes, b1, sizeof b1), r->last_replaced.blocks,
                    r->last_replaced.blocks == 1 ? "" : "s");
        fputc('\n', out);
        size_t shown = tl_render_shown(c, r->nsites);
        for (size_t k = 0; k < shown && k < 3; k++) {
            fprintf(out, "    %s in %" PRIu64 " block%s%s\n",
                    tl_size_text(r->sites[k].bytes, b1, sizeof b1), r->sites[k].blocks,
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
                tl_size_text(g->bytes_per_iteration, b1, sizeof b1), g->iterations);
        tl_esc_puts(out, rg->regions[g->region].name);
        fprintf(out, " (%s -> %s)\n", tl_size_text(g->first_bytes, b2, sizeof b2),
                tl_size_text(g->last_bytes, b3, sizeof b3));
        tl_render_text_frames(c, g->site, out);
    }
}

void tl_render_text(const tl_report_ctx_t *report, FILE *out)
{
    size_t folded = 0;
    tl_report_ctx_t own = *report;
    own.folded = &folded;
    const tl_report_ctx_t *c = &own;
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
            tl_size_text(m->peak_bytes, b1, sizeof b1),
            tl_size_text(m->peak_storage_bytes, b2, sizeof b2));
    print_time(out, m->peak_bytes ? tl_render_rel_ns(t, m->peak_ts) : 0);
    fprintf(out,
            "; %s live at end in %" PRIu64 " block%s (storages %s in %" PRIu64 "); %" PRIu64
            " allocations, %" PRIu64 " frees, %" PRIu64 " storages; ",
            tl_size_text(m->live_bytes, b3, sizeof b3), m->live_blocks,
            m->live_blocks == 1 ? "" : "s", tl_size_text(m->live_storage_bytes, b4, sizeof b4),
            m->live_storage_blocks, m->allocations, m->frees, m->storages);
    if (t->has_end)
        fprintf(out, "%" PRIu64 " dropped\n", t->end_dropped);
    else
        fputs("dropped unknown\n", out);
    char agg_note[512];
    fputs(tl_render_mode_note(t, agg_note, sizeof agg_note), out);
    print_devices(c, out);
    const tl_endpoint_t *e = &c->model->end;
    uint64_t end_bytes = 0;
    for (size_t i = 0; i < e->nstorages; i++)
        end_bytes += e->storages[i].s.bytes;
    fprintf(out, "tensorleak: end point: %s at ", end_point_text(e->point));
    print_time(out, tl_render_rel_ns(t, e->ts));
    fprintf(out, "; %zu storage%s, %s live there\n", e->nstorages, e->nstorages == 1 ? "" : "s",
            tl_size_text(end_bytes, b1, sizeof b1));
    for (size_t i = 0; i < c->nnotes; i++)
        fprintf(out, "note: %s\n", c->notes[i]);

    tl_render_text_end(c, out);
    print_sites(c, "Peak consumers", m->peak_sites, m->npeak_sites, false, c->supp, out);
    print_sites(c, "Leaks (live at end)", m->leaks, m->nleaks, false, c->supp, out);
    print_sites(c, "Storages by site", m->storage_sites, m->nstorage_sites, true, NULL, out);
    print_regions(c, out);
    if (folded)
        fputs("\nLibrary frames are folded into \"... N frames in\" lines; --frames=all shows "
              "every frame.\n",
              out);
}
