/* verdict_json.c - the verdict of `tensorleak check` as JSON
 * ("tensorleak-check/1", docs/report-schema.md). The text verdict is
 * verdict_text.c's, JUnit XML verdict_junit.c's.
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

static const char *const kind_keys[4] = {"reachable", "definite", "indirect", "possible"};

static void frames_json(tl_chk_t *c, tl_json_t *j, uint32_t site)
{
    tl_json_key(j, "stack_id");
    tl_json_u64(j, site < c->a.trace.nsites ? c->a.trace.sites[site].stack_id : 0);
    tl_json_key(j, "stack");
    tl_render_json_frames(&c->a.ctx, j, site, TL_JFRAMES_EMPTY_UNKNOWN);
}

static void held_json(tl_json_t *j, const uint64_t held[4])
{
    static const char *const names[] = {"unknown", "tensor", "view", "autograd"};
    tl_json_key(j, "held_by");
    tl_json_obj_begin(j);
    for (int h = 1; h < 4; h++) {
        tl_json_key(j, names[h]);
        tl_json_u64(j, held[h]);
    }
    tl_json_obj_end(j);
}

/* {"definite": {"bytes": N, "counted": true}, ...} */
static void kinds_json(tl_json_t *j, const uint64_t bytes[4], unsigned counted)
{
    tl_json_obj_begin(j);
    for (unsigned kind = 1; kind < 5; kind++) {
        tl_json_key(j, kind_keys[kind & 3]);
        tl_json_obj_begin(j);
        tl_json_key(j, "bytes");
        tl_json_u64(j, bytes[kind & 3]);
        tl_json_key(j, "counted");
        tl_json_bool(j, (counted & (1u << (kind & 3))) != 0);
        tl_json_obj_end(j);
    }
    tl_json_obj_end(j);
}

/* leak: a leak limit's group (its bytes by leak kind, with a leak scan). */
static void group_json(tl_chk_t *c, tl_json_t *j, const tl_chk_group_t *g, bool leak)
{
    tl_json_obj_begin(j);
    tl_json_key(j, "where");
    tl_json_str(j, g->where[0] ? g->where : NULL);
    tl_json_key(j, "bytes");
    tl_json_u64(j, g->bytes);
    tl_json_key(j, "storage_bytes");
    tl_json_u64(j, g->storage_bytes);
    tl_json_key(j, "blocks");
    tl_json_u64(j, g->blocks);
    tl_json_key(j, "sites");
    tl_json_u64(j, g->nsites);
    tl_json_key(j, "repeats");
    if (g->repeats)
        tl_json_u64(j, g->repeats);
    else
        tl_json_null(j);
    tl_json_key(j, "bytes_per_repeat");
    if (g->repeats)
        tl_json_u64(j, g->per_repeat);
    else
        tl_json_null(j);
    held_json(j, g->held);
    if (leak) tl_render_json_leak_kinds(j, c->leak_scan ? g->kind_bytes : NULL, NULL);
    frames_json(c, j, g->site);
    tl_json_obj_end(j);
}

/* --max-problem-storage's "problem_kinds" (the kinds counted) and
 * "problems": [{kind, where, view, bytes, storages, storage, fix, stack}]. */
static void problems_json(tl_chk_t *c, tl_json_t *j)
{
    tl_json_key(j, "problem_kinds");
    tl_json_arr_begin(j);
    for (unsigned kind = 0; kind < 6; kind++)
        if (c->problem_kinds_counted & (1u << kind)) tl_json_str(j, tl_problem_kind_name(kind));
    tl_json_arr_end(j);
    tl_json_key(j, "problems");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < tl_chk_shown(c, c->nproblems); i++) {
        const tl_chk_problem_t *p = &c->problems[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "kind");
        tl_json_str(j, tl_problem_kind_name(p->kind));
        tl_json_key(j, "where");
        tl_json_str(j, p->where[0] ? p->where : NULL);
        tl_json_key(j, "view");
        tl_json_str(j, p->view_where[0] ? p->view_where : NULL);
        tl_json_key(j, "bytes");
        tl_json_u64(j, p->bytes);
        tl_json_key(j, "storages");
        tl_json_u64(j, p->storages);
        tl_json_key(j, "storage");
        tl_json_u64(j, p->first_id);
        tl_json_key(j, "held_path");
        tl_json_str(j, p->held_path);
        tl_json_key(j, "fix");
        tl_json_str(j, p->fix);
        frames_json(c, j, p->site);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

/* "process": {pid, ppid, exe, argv, role, program}; role null for a lone
 * trace. */
static void process_json(const tl_chk_t *c, tl_json_t *j)
{
    const tl_trace_t *t = &c->a.trace;
    char b[400];
    tl_json_key(j, "process");
    tl_json_obj_begin(j);
    tl_render_json_process_id(t, j);
    tl_json_key(j, "role");
    tl_json_str(j, c->o->proc ? c->o->proc->role : NULL);
    tl_json_key(j, "program");
    tl_json_str(j, tl_chk_program_words(c, b, sizeof b));
    tl_json_obj_end(j);
}

/* The main process's verdict in a run: the other processes' beside it. */
static void run_json(const tl_chk_t *c, tl_json_t *j)
{
    const tl_check_proc_ctx_t *p = c->o->proc;
    if (!p || strcmp(p->role, "main")) return;
    tl_json_key(j, "processes");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < p->nothers; i++)
        tl_json_raw(j, p->others_json[i], p->others_json_len[i]);
    tl_json_arr_end(j);
    tl_json_key(j, "helpers_unchecked");
    tl_json_u64(j, p->helpers_unchecked);
    tl_json_key(j, "execd_unchecked");
    tl_json_u64(j, p->execd_unchecked);
    tl_json_key(j, "unread_traces");
    tl_json_u64(j, c->o->unread_traces);
    /* the command's own process left out (check.h), or null */
    tl_json_key(j, "main_unchecked");
    if (c->o->main_unchecked_pid) {
        tl_json_obj_begin(j);
        tl_json_key(j, "pid");
        tl_json_u64(j, c->o->main_unchecked_pid);
        tl_json_key(j, "exe");
        tl_json_str(j, c->o->main_unchecked_exe);
        tl_json_key(j, "why");
        tl_json_str(j, c->o->main_execd ? "exec" : "launcher");
        tl_json_obj_end(j);
    } else {
        tl_json_null(j);
    }
}

/* The verdict's head: the trace, the process, passed, complete, the
 * scope (point, region). */
static void head_json(tl_chk_t *c, tl_json_t *j)
{
    tl_json_key(j, "schema");
    tl_json_str(j, "tensorleak-check/1");
    tl_json_key(j, "trace");
    tl_json_str(j, c->path);
    /* false: removed after the pass (check -- CMD); null: a run's other
     * process that passed, whose trace goes as the run's verdict says */
    tl_json_key(j, "trace_kept");
    if (c->o->traces_removed_on_pass && tl_chk_passed(c) && tl_chk_other_process(c))
        tl_json_null(j);
    else
        tl_json_bool(j, !(c->o->traces_removed_on_pass && tl_chk_passed(c)));
    process_json(c, j);
    tl_json_key(j, "passed"); /* in a run, the main process's verdict is the run's */
    tl_json_bool(j, tl_chk_passed(c));
    tl_json_key(j, "complete");
    tl_json_bool(j, !c->incomplete && !tl_chk_run_unread(c));
    tl_json_key(j, "finished");
    tl_json_bool(j, c->a.trace.has_end);
    tl_json_key(j, "killed"); /* its leak limits not judged (verdict.h) */
    tl_json_bool(j, c->killed);
    tl_json_key(j, "running"); /* the same, still running past --wait */
    tl_json_bool(j, c->running);
    tl_json_key(j, "exact");
    tl_json_bool(j, tl_chk_exact(c));
    tl_json_key(j, "point");
    tl_json_str(j, c->region || c->no_region ? "region" : c->a.model.end.point);
    tl_json_key(j, "region"); /* iteration 0: a run's process that closed none, not judged */
    if (c->region || c->no_region) {
        tl_json_obj_begin(j);
        tl_json_key(j, "name");
        tl_json_str(j, c->o->region);
        tl_json_key(j, "iteration");
        tl_json_u64(j, c->region ? c->region->iterations : 0);
        tl_json_obj_end(j);
    } else {
        tl_json_null(j);
    }
}

/* One limit checked: {name, limit_bytes, limit_percent, measured_bytes,
 * [leak_kinds, counted], [problem_kinds, problems], passed, sites}. */
static void limit_json(tl_chk_t *c, tl_json_t *j, unsigned k)
{
    const tl_chk_limit_t *l = &c->lim[k];
    tl_json_obj_begin(j);
    tl_json_key(j, "name");
    tl_json_str(j, tl_check_limit_name(k));
    tl_json_key(j, "limit_bytes");
    if (k == TL_LIMIT_BASELINE && c->o->baseline_is_percent)
        tl_json_null(j);
    else
        tl_json_u64(j, l->limit);
    tl_json_key(j, "limit_percent");
    if (k == TL_LIMIT_BASELINE && c->o->baseline_is_percent)
        tl_json_double(j, c->o->baseline_percent);
    else
        tl_json_null(j);
    tl_json_key(j, "measured_bytes");
    tl_json_u64(j, l->measured);
    if (k == TL_LIMIT_LEAK) {
        tl_json_key(j, "leak_kinds"); /* null: no leak scan (not all mode), or a region */
        if (c->leak_scan)
            kinds_json(j, c->leak_kind_bytes, c->leak_kinds_counted);
        else
            tl_json_null(j);
        tl_json_key(j, "counted"); /* what measured_bytes is of */
        tl_json_str(j, c->leak_scan ? "leak_kinds" : c->region ? "region_live" : "live");
    }
    if (k == TL_LIMIT_PROBLEM) problems_json(c, j);
    tl_json_key(j, "passed");
    tl_json_bool(j, !l->failed);
    tl_json_key(j, "sites");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < tl_chk_shown(c, l->ngroups); i++)
        group_json(c, j, &l->groups[i], k == TL_LIMIT_LEAK || k == TL_LIMIT_LEAK_STORAGE);
    tl_json_arr_end(j);
    tl_json_obj_end(j);
}

/* "growth": [{region, where, bytes_per_iteration, iterations, stack}]. */
static void growth_json(tl_chk_t *c, tl_json_t *j)
{
    char w[TL_CHK_WHERE_MAX];
    tl_json_key(j, "growth");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < tl_chk_shown(c, c->ngrowth); i++) {
        const tl_growth_t *g = &c->growth[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "region");
        tl_json_str(j, c->a.model.regions.regions[g->region].name);
        tl_json_key(j, "where");
        tl_json_str(j, tl_chk_where(c, g->site, w));
        tl_json_key(j, "bytes_per_iteration");
        tl_json_u64(j, g->bytes_per_iteration);
        tl_json_key(j, "iterations");
        tl_json_u64(j, g->iterations);
        frames_json(c, j, g->site);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

/* What the suppressions hid, in all and per rule. */
static void supp_json(const tl_chk_t *c, tl_json_t *j)
{
    tl_json_key(j, "suppressed_bytes");
    tl_json_u64(j, c->supp_bytes);
    tl_json_key(j, "suppressed_blocks");
    tl_json_u64(j, c->supp_blocks);
    tl_json_key(j, "suppressions");
    tl_json_arr_begin(j);
    for (size_t i = 0; c->o->supp && i < c->o->supp->nrules; i++) {
        const tl_supp_rule_t *r = &c->o->supp->rules[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "pattern");
        tl_json_str(j, r->pattern);
        tl_json_key(j, "source");
        tl_json_str(j, r->source);
        tl_json_key(j, "line");
        if (r->line)
            tl_json_u64(j, r->line);
        else
            tl_json_null(j);
        tl_json_key(j, "bytes");
        tl_json_u64(j, r->bytes);
        tl_json_key(j, "blocks");
        tl_json_u64(j, r->blocks);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

/* "baseline": its totals and this run's change, or null. */
static void baseline_json(const tl_chk_t *c, tl_json_t *j)
{
    tl_json_key(j, "baseline");
    if (!c->o->base) {
        tl_json_null(j);
        return;
    }
    tl_json_obj_begin(j);
    tl_json_key(j, "path");
    tl_json_str(j, c->o->base->path);
    tl_json_key(j, "leaked_bytes");
    tl_json_u64(j, c->o->base->leaked_bytes);
    tl_json_key(j, "peak_bytes");
    tl_json_u64(j, c->o->base->peak_bytes);
    tl_json_key(j, "leaked_bytes_change");
    tl_json_i64(j, c->base_leak_delta);
    tl_json_key(j, "peak_bytes_change");
    tl_json_i64(j, c->base_peak_delta);
    tl_json_obj_end(j);
}

void tl_chk_render_json(tl_chk_t *c, FILE *out)
{
    tl_json_t jw, *j = &jw;
    tl_json_init(j, out, true);
    tl_json_obj_begin(j);
    head_json(c, j);
    tl_json_key(j, "limits");
    tl_json_arr_begin(j);
    for (unsigned k = 0; k < TL_LIMIT_COUNT; k++)
        if (c->lim[k].checked) limit_json(c, j, k);
    tl_json_arr_end(j);
    growth_json(c, j);
    supp_json(c, j);
    baseline_json(c, j);
    run_json(c, j);
    tl_json_obj_end(j);
    tl_json_finish(j);
}
