/* render_json.c - the JSON report, schema "tensorleak-report/1".
 *
 * docs/report-schema.md is the contract; change both together. Unknown values
 * are null, never omitted, so consumers can index without guards.
 */
#include <stdlib.h>

#include "report/read/aggregate.h"
#include "report/render/json.h"
#include "report/analyze/frames.h"
#include "report/analyze/lineage.h"
#include "report/analyze/role.h"
#include "report/render/render.h"
#include "report/render/site_group.h"

/* "devices": the storages of each device seen (docs/report-schema.md). */
static void devices(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_model_t *m = c->model;
    const tl_trace_t *t = c->trace;
    char name[16];
    tl_json_key(j, "devices");
    tl_json_arr_begin(j);
    for (unsigned d = 0; d < TL_MODEL_DEVICES; d++) {
        const tl_device_stat_t *s = &m->devices[d];
        if (!s->seen) continue;
        tl_json_obj_begin(j);
        tl_json_key(j, "device");
        tl_json_str(j, tl_render_device(d, name, sizeof name));
        const struct {
            const char *key;
            uint64_t v;
        } f[] = {
            {"peak_storage_bytes", s->peak_storage_bytes},
            {"peak_storage_time_ns",
             s->peak_storage_bytes ? tl_render_rel_ns(t, s->peak_storage_ts) : 0},
            {"leaked_storage_bytes", s->live_storage_bytes},
            {"leaked_storages", s->live_storages},
            {"reserved_bytes", s->reserved_bytes},
            {"reserved_segments", s->reserved_segments},
            {"peak_reserved_bytes", s->peak_reserved_bytes},
        };
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
            tl_json_key(j, f[i].key);
            tl_json_u64(j, f[i].v);
        }
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

void tl_render_json_leak_kinds(tl_json_t *j, const uint64_t bytes[4], const uint64_t *blocks)
{
    static const char *const keys[4] = {"reachable", "definite", "indirect", "possible"};
    static const unsigned worst_first[4] = {TL_LEAK_DEFINITE, TL_LEAK_INDIRECT, TL_LEAK_POSSIBLE,
                                            TL_LEAK_REACHABLE};
    const char *worst = NULL;
    if (!bytes) { /* no leak scan: no kinds known */
        tl_json_key(j, "leak_kind");
        tl_json_null(j);
        tl_json_key(j, "leak_kinds");
        tl_json_null(j);
        return;
    }
    for (unsigned i = 0; i < 4 && !worst; i++)
        if (bytes[worst_first[i]] || (blocks && blocks[worst_first[i]]))
            worst = keys[worst_first[i]];
    tl_json_key(j, "leak_kind");
    tl_json_str(j, worst);
    tl_json_key(j, "leak_kinds");
    tl_json_obj_begin(j);
    for (unsigned i = 0; i < 4; i++) {
        if (!bytes[worst_first[i]] && !(blocks && blocks[worst_first[i]]))
            continue; /* the kinds present only: a site has one, mostly */
        tl_json_key(j, keys[worst_first[i]]);
        tl_json_obj_begin(j);
        tl_json_key(j, "bytes");
        tl_json_u64(j, bytes[worst_first[i]]);
        if (blocks) {
            tl_json_key(j, "blocks");
            tl_json_u64(j, blocks[worst_first[i]]);
        }
        tl_json_obj_end(j);
    }
    tl_json_obj_end(j);
}

/* leaks[] and peak.sites[]: {bytes, blocks, storage, stack_id, stack}; with
 * supp, "suppressed": the pattern of the default suppression that matches
 * the site (the text report hides those; JSON keeps them), and its "stack"
 * null unless --frames=all: a torch import leaves some 300000 such sites of
 * 60 frames each, 7.8 GB of JSON at --top=0;
 * with kinds (the end point's leaks), "leak_kind" and "leak_kinds": null
 * both in a trace without the agent's leak scan. */
static void live_sites(const tl_report_ctx_t *c, tl_json_t *j, const tl_site_stat_t *s, size_t n,
                       tl_supp_t *supp, bool kinds)
{
    tl_json_arr_begin(j);
    size_t shown = tl_render_shown(c, n);
    for (size_t i = 0; i < shown; i++) {
        tl_json_obj_begin(j);
        int rule = supp ? tl_supp_site(supp, s[i].site) : -1;
        if (rule >= 0) {
            tl_json_key(j, "suppressed");
            tl_json_str(j, supp->rules[rule].pattern);
        }
        tl_json_key(j, "bytes");
        tl_json_u64(j, s[i].bytes);
        tl_json_key(j, "blocks");
        tl_json_u64(j, s[i].blocks);
        tl_json_key(j, "storage");
        tl_json_bool(j, s[i].storage);
        if (kinds)
            tl_render_json_leak_kinds(j, c->trace->has_leak_scan ? s[i].kind_bytes : NULL,
                                      s[i].kind_blocks);
        char dev[16];
        const char *d = s[i].storage ? tl_render_site_device(c, s[i].site, dev, sizeof dev) : NULL;
        if (d) {
            tl_json_key(j, "device");
            tl_json_str(j, d);
        }
        if (rule >= 0 && !c->opts->all_frames) {
            tl_json_key(j, "stack_id");
            tl_json_u64(j, c->trace->sites[s[i].site].stack_id);
            tl_json_key(j, "stack");
            tl_json_null(j);
        } else {
            tl_render_json_stack(c, j, s[i].site);
        }
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

/* prefix + "bytes", "blocks", "storage_bytes", "storage_blocks". */
static void leak_fields(tl_json_t *j, const char *prefix, const tl_region_leak_t *l)
{
    char key[64];
    const struct {
        const char *name;
        uint64_t v;
    } f[] = {{"bytes", l->bytes},
             {"blocks", l->blocks},
             {"storage_bytes", l->storage_bytes},
             {"storage_blocks", l->storage_blocks}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(key, sizeof key, "%s%s", prefix, f[i].name);
        tl_json_key(j, key);
        tl_json_u64(j, f[i].v);
    }
}

/* "regions": per name, the last iteration's leak (and its sites) and the
 * sum over iterations; "growth": sites growing in every iteration. */
static void regions(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_regions_t *rg = &c->model->regions;
    tl_json_key(j, "regions");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < rg->nregions; i++) {
        const tl_region_t *r = &rg->regions[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "name");
        tl_json_str(j, r->name);
        tl_json_key(j, "iterations");
        tl_json_u64(j, r->iterations);
        leak_fields(j, "leaked_", &r->last);
        tl_json_key(j, "peak_bytes");
        tl_json_u64(j, r->last_peak_bytes);
        leak_fields(j, "total_leaked_", &r->total);
        leak_fields(j, "replaced_", &r->last_replaced);
        tl_json_key(j, "sites");
        live_sites(c, j, r->sites, r->nsites, NULL, false);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
    tl_json_key(j, "growth");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < tl_render_shown(c, rg->ngrowth); i++) {
        const tl_growth_t *g = &rg->growth[i];
        tl_json_obj_begin(j);
        tl_json_key(j, "region");
        tl_json_str(j, rg->regions[g->region].name);
        tl_json_key(j, "bytes_per_iteration");
        tl_json_u64(j, g->bytes_per_iteration);
        tl_json_key(j, "iterations");
        tl_json_u64(j, g->iterations);
        tl_json_key(j, "first_bytes");
        tl_json_u64(j, g->first_bytes);
        tl_json_key(j, "last_bytes");
        tl_json_u64(j, g->last_bytes);
        tl_render_json_stack(c, j, g->site);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
}

void tl_render_json_process_id(const tl_trace_t *t, tl_json_t *j)
{
    tl_json_key(j, "pid");
    tl_json_u64(j, t->pid);
    tl_json_key(j, "ppid");
    tl_json_u64(j, t->ppid);
    tl_json_key(j, "exe");
    tl_json_str(j, t->exe && t->exe[0] ? t->exe : NULL);
    tl_json_key(j, "argv");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < t->argc; i++)
        tl_json_str(j, t->argv[i]);
    tl_json_arr_end(j);
}

/* "rank" (null: none), "role" (null: a report of one trace), "host"
 * (null: not recorded). */
static void process_place(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_trace_t *t = c->trace;
    tl_json_key(j, "rank");
    if (t->rank >= 0)
        tl_json_i64(j, t->rank);
    else
        tl_json_null(j);
    tl_json_key(j, "role");
    tl_json_str(j, c->run ? c->run->role : NULL);
    tl_json_key(j, "host");
    tl_json_str(j, t->host[0] ? t->host : NULL);
}

static void process(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_trace_t *t = c->trace;
    tl_json_key(j, "process");
    tl_json_obj_begin(j);
    tl_render_json_process_id(t, j);
    process_place(c, j);
    tl_json_key(j, "exit_status");
    if (t->has_end && t->end_reason == TL_END_SIGNAL && t->end_exit_status >= 0)
        tl_json_i64(j, 128 + t->end_exit_status); /* the shell's convention, as `run` exits */
    else if (t->has_end && t->end_exit_status >= 0)
        tl_json_i64(j, t->end_exit_status);
    else
        tl_json_null(j);
    tl_json_key(j, "end_reason");
    if (!t->has_end)
        tl_json_null(j);
    else
        tl_json_str(j, t->end_reason == TL_END_EXEC     ? "exec"
                       : t->end_reason == TL_END_EXIT   ? "exit"
                       : t->end_reason == TL_END_SIGNAL ? "signal"
                                                        : "unknown");
    tl_json_key(j, "running");
    tl_json_bool(j, t->running); /* never with an END */
    char end[40];
    tl_role_end(t, end, sizeof end);
    tl_json_key(j, "end");
    tl_json_str(j, end);
    tl_json_obj_end(j);
}

static void trace(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_trace_t *t = c->trace;
    tl_json_key(j, "trace");
    tl_json_obj_begin(j);
    tl_json_key(j, "path");
    tl_json_str(j, c->path);
    tl_json_key(j, "version");
    tl_json_u64(j, t->hdr.version);
    tl_json_key(j, "truncated");
    tl_json_bool(j, t->truncated);
    tl_json_key(j, "damaged");
    tl_json_bool(j, t->bad_chunks || t->bad_records);
    tl_json_key(j, "bad_chunks");
    tl_json_u64(j, t->bad_chunks);
    tl_json_key(j, "bad_records");
    tl_json_u64(j, t->bad_records);
    tl_json_key(j, "clean_end");
    tl_json_bool(j, t->clean_end);
    tl_json_key(j, "has_end");
    tl_json_bool(j, t->has_end);
    tl_json_key(j, "exec_seq");
    tl_json_u64(j, t->exec_seq);
    tl_json_key(j, "session");
    tl_json_u64(j, t->hdr.session);
    tl_json_key(j, "start_realtime_ns");
    tl_json_u64(j, t->hdr.start_realtime);
    tl_json_key(j, "events");
    tl_json_u64(j, t->nevents);
    tl_json_key(j, "modules");
    tl_json_u64(j, t->nmodules);
    tl_json_obj_end(j);
}

static void summary(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_trace_t *t = c->trace;
    const tl_model_t *m = c->model;
    tl_json_key(j, "summary");
    tl_json_obj_begin(j);
    const struct {
        const char *key;
        uint64_t v;
    } f[] = {
        {"allocations", m->allocations},
        {"frees", m->frees},
        {"storages", m->storages},
        {"peak_bytes", m->peak_bytes},
        {"peak_time_ns", m->peak_bytes ? tl_render_rel_ns(t, m->peak_ts) : 0},
        {"peak_storage_bytes", m->peak_storage_bytes},
        {"peak_storage_time_ns",
         m->peak_storage_bytes ? tl_render_rel_ns(t, m->peak_storage_ts) : 0},
        {"leaked_bytes", m->live_bytes},
        {"leaked_blocks", m->live_blocks},
        {"leaked_storage_bytes", m->live_storage_bytes},
        {"leaked_storage_blocks", m->live_storage_blocks},
        {"leak_sites", m->nleaks},
        {"storage_sites", m->nstorage_sites},
        {"unknown_frees", m->unknown_frees},
        {"replaced_blocks", m->replaced_blocks},
        {"dropped_events", t->has_end ? t->end_dropped : 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        tl_json_key(j, f[i].key);
        tl_json_u64(j, f[i].v);
    }
    tl_render_mode_json(t, j); /* mode, sampled, exact counters */
    tl_json_key(j, "dropped_events_known");
    tl_json_bool(j, t->has_end);
    tl_json_obj_end(j);
}

/* "leaks_suppressed": {bytes, blocks, sites}, what the text report's leaks
 * hide, over every site. */
static void leaks_suppressed(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_model_t *m = c->model;
    uint64_t bytes = 0, blocks = 0, sites = 0;
    for (size_t i = 0; i < m->nleaks; i++)
        if (tl_supp_site(c->supp, m->leaks[i].site) >= 0) {
            bytes += m->leaks[i].bytes;
            blocks += m->leaks[i].blocks;
            sites++;
        }
    tl_json_key(j, "leaks_suppressed");
    tl_json_obj_begin(j);
    tl_json_key(j, "bytes");
    tl_json_u64(j, bytes);
    tl_json_key(j, "blocks");
    tl_json_u64(j, blocks);
    tl_json_key(j, "sites");
    tl_json_u64(j, sites);
    tl_json_obj_end(j);
}

/* "peak": {time_ns, bytes, blocks, site_count, sites[]}. */
static void peak(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_model_t *m = c->model;
    tl_json_key(j, "peak");
    tl_json_obj_begin(j);
    tl_json_key(j, "time_ns");
    tl_json_u64(j, m->peak_bytes ? tl_render_rel_ns(c->trace, m->peak_ts) : 0);
    tl_json_key(j, "bytes");
    tl_json_u64(j, m->peak_bytes);
    tl_json_key(j, "blocks");
    tl_json_u64(j, m->peak_blocks);
    tl_json_key(j, "site_count");
    tl_json_u64(j, m->npeak_sites);
    tl_json_key(j, "sites");
    live_sites(c, j, m->peak_sites, m->npeak_sites, c->supp, false);
    tl_json_obj_end(j);
}

/* "storage_sites": grouped by line as the text groups them (alone when out
 * of memory). */
static void storage_sites(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_model_t *m = c->model;
    tl_site_list_t l;
    bool alone = tl_site_list_build(c, m->storage_sites, m->nstorage_sites, NULL, &l);
    tl_json_key(j, "storage_sites");
    tl_json_arr_begin(j);
    size_t shown = tl_render_shown(c, alone ? m->nstorage_sites : l.ng);
    for (size_t i = 0; i < shown; i++) {
        const tl_site_stat_t *s = &m->storage_sites[alone ? i : l.g[i].lead];
        tl_json_obj_begin(j);
        tl_json_key(j, "bytes");
        tl_json_u64(j, alone ? s->bytes : l.g[i].bytes);
        tl_json_key(j, "count");
        tl_json_u64(j, alone ? s->blocks : l.g[i].blocks);
        tl_json_key(j, "sites");
        tl_json_u64(j, alone ? 1 : l.g[i].nsites);
        tl_render_json_stack(c, j, s->site);
        tl_json_obj_end(j);
    }
    tl_json_arr_end(j);
    tl_site_list_free(&l);
}

void tl_render_json(const tl_report_ctx_t *c, FILE *out)
{
    const tl_trace_t *t = c->trace;
    const tl_model_t *m = c->model;
    tl_json_t jw, *j = &jw;
    tl_json_init(j, out, true);
    tl_json_obj_begin(j);
    tl_json_key(j, "schema");
    tl_json_str(j, "tensorleak-report/1");
    if (c->run && c->run->entry) { /* a processes[] entry: who, at its top */
        tl_render_json_process_id(t, j);
        process_place(c, j);
    }
    process(c, j);
    trace(c, j);
    summary(c, j);
    devices(c, j);

    tl_json_key(j, "leaks");
    live_sites(c, j, m->leaks, m->nleaks, c->supp, true);
    if (c->supp) leaks_suppressed(c, j);
    regions(c, j);

    tl_render_json_endpoint(c, j);

    peak(c, j);
    storage_sites(c, j);
    tl_json_key(j, "notes");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < c->nnotes; i++)
        tl_json_str(j, c->notes[i]);
    tl_json_arr_end(j);
    if (c->run && !c->run->entry) { /* the main process's: the run's */
        tl_json_key(j, "processes");
        tl_json_arr_begin(j);
        for (size_t i = 0; i < c->run->nentries; i++)
            tl_json_raw(j, c->run->entries[i], c->run->entry_len[i]);
        tl_json_arr_end(j);
        tl_json_key(j, "ranks");
        if (c->run->ranks)
            tl_json_raw(j, c->run->ranks, c->run->ranks_len);
        else
            tl_json_null(j);
    }
    tl_json_obj_end(j);
    tl_json_finish(j);
}
