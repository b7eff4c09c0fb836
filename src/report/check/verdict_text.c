/* verdict_text.c - the verdict of `tensorleak check` as text (the JSON
 * and JUnit forms: verdict_json.c; the model's words: verdict.c).
 *
 * The text names each limit with its measured value, then for each failed
 * one the top sites (the program's Python line first; a C extension's own
 * frames before it), what holds their memory where a report point said,
 * and, where the trace shows a loop (analyze/steps.h), how often a site
 * repeated (bytes per step); then growth and what the suppressions hid.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/check/verdict.h"
#include "report/read/aggregate.h"
#include "report/render/escape.h"
#include "report/render/json.h"
#include "report/analyze/frames.h"
#include "report/analyze/lineage.h"
#include "report/analyze/role.h"

#define STACK_PY_FRAMES     4
#define STACK_NATIVE_FRAMES 2

/* Leading allocator frames (the agent, libc, operator new) are not shown. */
/* The innermost frames to skip: malloc's, operator new's and c10's
 * (libc10, libc10_cuda: PyTorch's storage allocators, whose stripped frames
 * in Debian's build name no function). */
static bool allocator_frame(const tl_frame_t *f)
{
    return tl_allocator_module(f->module, TL_ALLOC_NATIVE | TL_ALLOC_CXX) ||
           (f->module && !strncmp(tl_path_base(f->module), "libc10", 6));
}

/* The verdict's first words: "tensorleak check", or the process when the
 * verdict is one of a run's several. */
static void verdict_head(const tl_chk_t *c, FILE *out)
{
    char b[400];
    if (c->o->proc && c->o->proc->name_process)
        tl_esc_puts(out, tl_chk_process_words(c, b, sizeof b));
    else
        fputs("tensorleak check", out);
}

static const char *scope_word(const tl_chk_t *c)
{
    return c->region ? "the end of the region's last iteration" : "the end point";
}

/* valgrind's words for tl_leak_kind_t */
static const char *const kind_names[4] = {"still reachable", "definitely lost", "indirectly lost",
                                          "possibly lost"};

/* "definitely lost or indirectly lost": the kinds of mask; "live" for all */
static const char *kinds_words(unsigned mask)
{
    static char buf[96];
    if ((mask & 15u) == 15u) return "live"; /* every kind: every live block */
    buf[0] = 0;
    for (unsigned kind = 1; kind < 5; kind++) {
        unsigned k = kind & 3; /* the lost ones first, reachable last */
        if (!(mask & (1u << k))) continue;
        if (buf[0]) strcat(buf, " or ");
        strcat(buf, kind_names[k]);
    }
    return buf;
}

/* What --max-leak counts where the leak kinds do not apply, plainly. */
static const char *leak_counted(const tl_chk_t *c)
{
    if (c->region)
        return "every block the iteration allocated and did not free; leak kinds apply at the "
               "process's end only";
    return "every live block; the trace has no leak scan, so no leak kinds";
}

/* A region's blocks (storages) that replace the iteration before's, not
 * counted (regions.h, tl_region_t.last_replaced): " (not counted: ...)". */
static void replaced_text(const tl_chk_t *c, bool storages, FILE *out)
{
    const tl_region_leak_t *r = c->region ? &c->region->last_replaced : NULL;
    uint64_t bytes = r ? (storages ? r->storage_bytes : r->bytes) : 0;
    uint64_t n = r ? (storages ? r->storage_blocks : r->blocks) : 0;
    char b[32];
    if (n)
        fprintf(out, " (not counted: %s in %" PRIu64 " %s%s replacing the iteration before's)",
                tl_size_text(bytes, b, sizeof b), n, storages ? "storage" : "block",
                n == 1 ? "" : "s");
    else if (bytes) /* a block grown by replacing it: the bytes it had before */
        fprintf(out, " (not counted: %s of %s grown from the iteration before's)",
                tl_size_text(bytes, b, sizeof b), storages ? "storages" : "blocks");
}

static void measured_text(tl_chk_t *c, unsigned k, FILE *out)
{
    char b[32], b2[32];
    const tl_chk_limit_t *l = &c->lim[k];
    const char *v = tl_size_text(l->measured, b, sizeof b);
    switch (k) {
    case TL_LIMIT_LEAK:
        if (c->leak_scan) {
            fprintf(out, "%s %s at %s", v, kinds_words(c->leak_kinds_counted), scope_word(c));
            bool first = true;
            for (unsigned kind = 0; kind < 4; kind++) {
                if ((c->leak_kinds_counted & (1u << kind)) || !c->leak_kind_bytes[kind]) continue;
                fprintf(out, "%s%s %s", first ? " (not counted: " : ", ",
                        tl_size_text(c->leak_kind_bytes[kind], b2, sizeof b2), kind_names[kind]);
                first = false;
            }
            if (!first) fputc(')', out);
        } else {
            fprintf(out, "%s live at %s (%s)", v, scope_word(c), leak_counted(c));
            replaced_text(c, false, out);
        }
        break;
    case TL_LIMIT_LEAK_STORAGE:
        fprintf(out, "%s of storages live at %s", v, scope_word(c));
        replaced_text(c, true, out);
        break;
    case TL_LIMIT_PINNED:
        fprintf(out, "%s pinned by views at %s", v, scope_word(c));
        break;
    case TL_LIMIT_PEAK:
        fprintf(out, c->region ? "peak %s allocated in the region live at once" : "peak %s", v);
        if (c->o->device && !c->region) /* that device's own high-water mark */
            fprintf(out, " on %s", tl_render_device(c->o->device - 1, b2, sizeof b2));
        break;
    case TL_LIMIT_GROWTH:
        fprintf(out, "%s per iteration", v);
        if (c->ngrowth) {
            fputs(" (region '", out);
            tl_esc_puts(out, c->a.model.regions.regions[c->growth[0].region].name);
            fputs("')", out);
        }
        break;
    case TL_LIMIT_PROBLEM:
        fprintf(out, "%s in problem storages at %s", v, scope_word(c));
        if (c->problem_kinds_counted != TL_CHECK_PROBLEM_KINDS_ALL) {
            fputs(" (kinds:", out);
            for (unsigned kind = 0; kind < 6; kind++)
                if (c->problem_kinds_counted & (1u << kind))
                    fprintf(out, " %s", tl_problem_kind_name(kind));
            fputc(')', out);
        }
        break;
    case TL_LIMIT_BASELINE:
        fprintf(out, "leak %s%s, peak %s%s vs the baseline", c->base_leak_delta < 0 ? "-" : "+",
                tl_size_text(
                    (uint64_t)(c->base_leak_delta < 0 ? -c->base_leak_delta : c->base_leak_delta),
                    b, sizeof b),
                c->base_peak_delta < 0 ? "-" : "+",
                tl_size_text(
                    (uint64_t)(c->base_peak_delta < 0 ? -c->base_peak_delta : c->base_peak_delta),
                    b2, sizeof b2));
        break;
    }
}

void tl_chk_limit_text(tl_chk_t *c, unsigned k, FILE *out)
{
    char b[32];
    const tl_chk_limit_t *l = &c->lim[k];
    fprintf(out, "%s: ", tl_check_limit_name(k));
    measured_text(c, k, out);
    if (k == TL_LIMIT_BASELINE && c->o->baseline_is_percent)
        fprintf(out, ", limit +%g%%", c->o->baseline_percent);
    else
        fprintf(out, ", limit %s", tl_size_text(l->limit, b, sizeof b));
}

/* "      at FUNC (FILE:LINE) [module]" */
static void frame_text(const tl_frame_t *f, bool python, FILE *out)
{
    fputs("      at ", out);
    const char *paren = python || !f->function ? NULL : strchr(f->function, '(');
    while (paren && !strncmp(paren, "(anonymous namespace)", 21))
        paren = strchr(paren + 21, '(');
    if (paren &&
        paren > f->function) /* a C++ name without its parameter list (the JSON has it whole) */
        tl_esc_write(out, f->function, (size_t)(paren - f->function), false);
    else if (f->function)
        tl_esc_puts(out, f->function);
    else
        fprintf(out, python ? "<python frame>" : "0x%" PRIx64, f->address);
    if (f->file) {
        fputs(" (", out);
        tl_esc_puts(out, f->file);
        fprintf(out, ":%u)", f->line);
    }
    if (!python && f->module) {
        fputs(" [", out);
        tl_esc_puts(out, tl_path_base(f->module));
        fputc(']', out);
    }
    fputc('\n', out);
}

/* The interpreter's own code (python3.11, libpython3.11.so): the glue
 * between a Python line and the C function it calls. */
static bool interpreter_module(const char *path)
{
    const char *b = tl_path_base(path);
    return !strncmp(b, "python", 6) || !strncmp(b, "libpython", 9);
}

/* A stack with Python frames: the innermost native frames before the first
 * of them (a C extension's or a library's own code), after the allocator
 * and up to the interpreter, then the program's own Python frames (the
 * innermost Python frames when none is the program's), a few of each.
 * Without Python frames: the native frames as the report shows them. */
static void print_stack(tl_chk_t *c, uint32_t site, FILE *out)
{
    size_t n, py = 0, k = 0, folded = 0;
    const uint64_t *frames = tl_trace_site_frames(&c->a.trace, site, &n);
    while (py < n && !(frames[py] & TL_FRAME_PY_TAG))
        py++;
    if (py == n) {
        tl_render_text_frames(&c->a.ctx, site, out);
        return;
    }
    tl_frame_t f;
    bool lead = true, glue = false;
    for (size_t i = 0; i < py && !glue; i++) {
        tl_render_frame(&c->a.ctx, frames[i], &f);
        if (lead && allocator_frame(&f)) continue;
        lead = false;
        if ((glue = interpreter_module(f.module))) break;
        if (k++ < STACK_NATIVE_FRAMES)
            frame_text(&f, false, out);
        else
            folded++;
    }
    if (folded) fprintf(out, "      ... %zu native frame%s\n", folded, folded == 1 ? "" : "s");
    bool own = false;
    for (size_t i = py; i < n && !own; i++) {
        const tl_pyframe_t *pf = tl_trace_pyframe(&c->a.trace, frames[i]);
        own = pf && !tl_lineage_library_file(pf->file);
    }
    k = 0;
    for (size_t i = py; i < n && k < STACK_PY_FRAMES; i++) {
        const tl_pyframe_t *pf = tl_trace_pyframe(&c->a.trace, frames[i]);
        if (!pf || (own && tl_lineage_library_file(pf->file))) continue;
        tl_render_frame(&c->a.ctx, frames[i], &f);
        frame_text(&f, true, out);
        k++;
    }
}

/* A group's line; at_peak: a --max-peak group (its blocks were live at the
 * peak, not at the end). Repetitions only where a loop was seen (repeats). */
static void group_text(tl_chk_t *c, const tl_chk_group_t *g, bool storage_only, bool at_peak,
                       FILE *out)
{
    char b[32], h[512];
    uint64_t bytes = storage_only ? g->storage_bytes : g->bytes;
    fprintf(out, "  %s in %" PRIu64 " block%s ", tl_size_text(bytes, b, sizeof b), g->blocks,
            g->blocks == 1 ? "" : "s");
    tl_esc_puts(out, g->where[0] ? g->where : "(no stack)");
    if (g->nsites > 1) fprintf(out, " (%zu sites)", g->nsites);
    if (g->repeats)
        fprintf(out, ": %" PRIu64 " repetitions %s, %s per repetition (per step of a loop)",
                g->repeats, at_peak ? "live at the peak" : "still live",
                tl_size_text(g->per_repeat, b, sizeof b));
    if (tl_chk_holders(g, h, sizeof h)[0]) fprintf(out, "; %s", h);
    for (unsigned kind = 1, first = 1; c->leak_scan && !storage_only && kind < 5; kind++)
        if (g->kind_bytes[kind & 3]) {
            fprintf(out, "%s%s %s", first ? "; " : ", ", kind_names[kind & 3],
                    tl_size_text(g->kind_bytes[kind & 3], b, sizeof b));
            first = 0;
        }
    fputc('\n', out);
    print_stack(c, g->site, out);
}

static void site_holders(tl_chk_t *c, uint32_t site, char *buf, size_t n)
{
    tl_chk_group_t g = {.site = site};
    for (size_t i = 0; c->end && i < c->end->nstorages; i++) {
        const tl_end_storage_t *s = &c->end->storages[i];
        if (s->s.site == site && s->held_by <= TL_HELD_AUTOGRAD) tl_chk_group_hold(&g, s);
    }
    tl_chk_holders(&g, buf, n);
}

static void growth_text(tl_chk_t *c, FILE *out)
{
    char b[32], w[TL_CHK_WHERE_MAX], h[512];
    size_t k = tl_chk_shown(c, c->ngrowth);
    fprintf(out, "growth: %zu site%s growing in every iteration of a repeated region\n", c->ngrowth,
            c->ngrowth == 1 ? "" : "s");
    for (size_t i = 0; i < k; i++) {
        const tl_growth_t *g = &c->growth[i];
        fprintf(out, "  +%s per iteration over %" PRIu64 " iterations of region '",
                tl_size_text(g->bytes_per_iteration, b, sizeof b), g->iterations);
        tl_esc_puts(out, c->a.model.regions.regions[g->region].name);
        fputs("' ", out);
        tl_esc_puts(out, tl_chk_where(c, g->site, w));
        site_holders(c, g->site, h, sizeof h);
        if (h[0]) fprintf(out, "; %s", h);
        fputc('\n', out);
        print_stack(c, g->site, out);
    }
}

static void pinned_text(tl_chk_t *c, FILE *out)
{
    for (size_t i = 0; c->end && i < c->end->nproblems; i++) {
        const tl_problem_t *p = &c->end->problems[i];
        if (p->kind != TL_PROBLEM_PINNED) continue;
        fputs("  ", out);
        tl_esc_puts(out, p->message);
        fputc('\n', out);
    }
}

/* "  [held_by_autograd] 4.02 MiB in 12 storages at train.py:19 (storage #7 the
 * first)", the fix, the first storage's stack. */
static void problems_text(tl_chk_t *c, FILE *out)
{
    char b[32];
    size_t n = tl_chk_shown(c, c->nproblems);
    fprintf(out, "%s: top %zu of %zu problem%s\n", tl_check_limit_name(TL_LIMIT_PROBLEM), n,
            c->nproblems, c->nproblems == 1 ? "" : "s");
    for (size_t i = 0; i < n; i++) {
        const tl_chk_problem_t *p = &c->problems[i];
        fprintf(out, "  [%s] %s%s in %" PRIu64 " storage%s ", tl_problem_kind_name(p->kind),
                tl_size_text(p->bytes, b, sizeof b), p->kind == TL_PROBLEM_PINNED ? " pinned" : "",
                p->storages, p->storages == 1 ? "" : "s");
        tl_esc_puts(out, p->where[0] ? p->where : "(no stack)");
        fprintf(out, " (storage #%" PRIu64 "%s)", p->first_id, p->storages > 1 ? " the first" : "");
        if (p->view_where[0]) {
            fputs("; kept by a view: ", out);
            tl_esc_puts(out, p->view_where);
        }
        fputc('\n', out);
        if (p->held_path && *p->held_path) {
            fputs(strncmp(p->held_path, "held ", 5) ? "      held: " : "      ", out);
            tl_esc_puts(out, p->held_path);
            fputc('\n', out);
        }
        if (p->fix) {
            fputs("      fix: ", out);
            tl_esc_puts(out, p->fix);
            fputc('\n', out);
        }
        print_stack(c, p->site, out);
    }
}

static void supp_text(tl_chk_t *c, FILE *out)
{
    const tl_supp_t *sp = c->o->proc && c->o->proc->supp_once ? NULL : c->o->supp;
    char b[32];
    if (!sp || !c->supp_blocks) return;
    size_t used = 0;
    for (size_t i = 0; i < sp->nrules; i++)
        used += sp->rules[i].blocks != 0;
    fprintf(out, "suppressed: %s in %" PRIu64 " block%s by %zu rule%s\n",
            tl_size_text(c->supp_bytes, b, sizeof b), c->supp_blocks,
            c->supp_blocks == 1 ? "" : "s", used, used == 1 ? "" : "s");
    for (size_t i = 0; i < sp->nrules; i++) {
        const tl_supp_rule_t *r = &sp->rules[i];
        if (!r->blocks) continue;
        fprintf(out, "  %s in %" PRIu64 " block%s: leak:%s", tl_size_text(r->bytes, b, sizeof b),
                r->blocks, r->blocks == 1 ? "" : "s", r->pattern);
        if (r->line)
            fprintf(out, " (%s:%u)\n", r->source, r->line);
        else
            fprintf(out, " (default: %s)\n", r->why ? r->why : "built in");
    }
}

void tl_chk_render_text_arg(const void *c, FILE *out)
{
    tl_chk_render_text((tl_chk_t *)c, out);
}

/* "truncated: read 3 chunks with 120 events", "12 events dropped while
 * recording" */
void tl_chk_incomplete_text(const tl_chk_t *c, FILE *out)
{
    const tl_trace_t *t = &c->a.trace;
    if (tl_trace_whole(t)) { /* incomplete for the events dropped alone (eval.c) */
        fprintf(out, "%" PRIu64 " event%s dropped while recording", t->end_dropped,
                t->end_dropped == 1 ? "" : "s");
        return;
    }
    fprintf(out, "trace %s: read %" PRIu64 " chunk%s with %zu event%s", tl_trace_incomplete_word(t),
            t->chunks_read, t->chunks_read == 1 ? "" : "s", t->nevents, t->nevents == 1 ? "" : "s");
    if (t->bad_chunks || t->bad_records)
        fprintf(out, ", skipped %" PRIu64 " corrupt chunk%s and %" PRIu64 " undecodable record%s",
                t->bad_chunks, t->bad_chunks == 1 ? "" : "s", t->bad_records,
                t->bad_records == 1 ? "" : "s");
}

void tl_chk_render_text(tl_chk_t *c, FILE *out)
{
    verdict_head(c, out);
    if (c->incomplete) {
        fputs(": INCOMPLETE: ", out);
        tl_chk_incomplete_text(c, out);
        fprintf(out, "; %u of %u limit%s exceeded in %s, which cannot pass\n", c->nfailed,
                c->nchecked, c->nchecked == 1 ? "" : "s",
                tl_trace_whole(&c->a.trace) ? "what was recorded" : "the readable part");
    } else if (c->nfailed)
        fprintf(out, ": FAILED: %u of %u limit%s exceeded\n", c->nfailed, c->nchecked,
                c->nchecked == 1 ? "" : "s");
    else
        fprintf(out, ": passed: %u limit%s checked\n", c->nchecked, c->nchecked == 1 ? "" : "s");
    if (c->region || c->no_region) { /* no_region: an incomplete trace's */
        fputs("  scope: region '", out);
        tl_esc_puts(out, c->o->region);
        fprintf(out, "', iteration %" PRIu64 " of ", c->region ? c->region->iterations : 0);
    } else {
        fprintf(out, "  scope: end point %s of ", c->a.model.end.point);
    }
    tl_esc_puts(out, c->path);
    if (c->o->traces_removed_on_pass && tl_chk_passed(c))
        fputs(tl_chk_other_process(c) ? " (removed if the whole run passes; --trace-output=PATTERN "
                                        "keeps the traces)"
                                      : " (removed: the check passed; --trace-output=PATTERN keeps "
                                        "the traces)",
              out);
    fputc('\n', out);
    if (c->killed)
        fputs("  note: killed (no END record, its process gone): its memory went back with it, "
              "so its leaks are not judged (valgrind and LeakSanitizer report none for a killed "
              "process either); its other limits are checked at its last recorded event\n",
              out);
    else if (c->running)
        fputs("  note: still running (no END record yet, past --wait): its end point has not "
              "come, so its leaks are not judged (a longer --wait judges them, or "
              "--trace-output=PATTERN and check --trace once it ended); its other limits are "
              "checked at its last recorded event\n",
              out);
    else if (!c->a.trace.has_end && !c->region) /* a closed region is complete without END */
        fputs("  note: no END record: the program was killed or is still running; it is checked "
              "at its last recorded event\n",
              out);
    const tl_trace_t *t = &c->a.trace;
    if (t->python_unsupported || (t->python_frames_off && t->python[0]))
        fprintf(out,
                "  note: no Python frames (CPython %s: %s): sites are named by native frames, "
                "and CPython's start-up rules (^Py_BytesMain$, ^Py_Main$) hide nothing\n",
                t->python[0] ? t->python : "(version unknown)",
                t->python_unsupported ? "not supported, 3.10-3.13 are" : "turned off");
    if (!tl_chk_exact(c))
        fprintf(out,
                "  note: the trace was recorded in %s mode: small blocks were sampled or only "
                "counted, so leaks may be missed (tensorleak check -- CMD records every "
                "allocation)\n",
                c->a.trace.agg->mode == TL_TMODE_AGGREGATE ? "aggregate" : "default");
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++) {
        if (!c->lim[k].checked) continue;
        fputs(c->lim[k].failed ? "  FAIL " : "  ok   ", out);
        tl_chk_limit_text(c, k, out);
        fputc('\n', out);
    }
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++) {
        const tl_chk_limit_t *l = &c->lim[k];
        if (!l->failed) continue;
        if (k == TL_LIMIT_LEAK || k == TL_LIMIT_LEAK_STORAGE || k == TL_LIMIT_PEAK) {
            size_t n = tl_chk_shown(c, l->ngroups);
            fprintf(out, "%s: top %zu of %zu site%s\n", tl_check_limit_name(k), n, l->ngroups,
                    l->ngroups == 1 ? "" : "s");
            for (size_t i = 0; i < n; i++)
                group_text(c, &l->groups[i], k == TL_LIMIT_LEAK_STORAGE, k == TL_LIMIT_PEAK, out);
        } else if (k == TL_LIMIT_PINNED) {
            fprintf(out, "%s: storages pinned by views\n", tl_check_limit_name(k));
            pinned_text(c, out);
        } else if (k == TL_LIMIT_PROBLEM) {
            problems_text(c, out);
        }
    }
    if (c->ngrowth) growth_text(c, out);
    supp_text(c, out);
}
