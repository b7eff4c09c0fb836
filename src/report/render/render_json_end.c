/* render_json_end.c - the JSON report's "end" (the end point's storages,
 * their views, lineage and holders) and "problems" (render.h). */
#include <stdlib.h>

#include "report/analyze/lineage.h"
#include "report/render/json.h"
#include "report/render/render.h"

static const char *held_name(unsigned held)
{
    static const char *const names[] = {"unknown", "tensor", "view", "autograd", "cycle"};
    return held < sizeof names / sizeof names[0] ? names[held] : "unknown";
}

static void view(const tl_report_ctx_t *c, tl_json_t *j, const tl_end_view_t *v)
{
    tl_json_obj_begin(j);
    tl_json_key(j, "offset");
    tl_json_u64(j, v->offset);
    tl_json_key(j, "extent");
    tl_json_u64(j, v->extent);
    tl_json_key(j, "bytes");
    tl_json_u64(j, v->bytes);
    tl_json_key(j, "op");
    tl_json_str(j, v->op);
    tl_json_key(j, "api");
    tl_json_bool(j, v->api);
    tl_json_key(j, "stack");
    tl_render_json_frames(c, j, v->site, TL_JFRAMES_ADDRESS);
    tl_json_obj_end(j);
}

static void end_storage(const tl_report_ctx_t *c, tl_json_t *j, const tl_end_storage_t *s)
{
    const tl_trace_t *t = c->trace;
    tl_json_obj_begin(j);
    tl_json_key(j, "id");
    tl_json_u64(j, s->s.id);
    tl_json_key(j, "bytes");
    tl_json_u64(j, s->s.bytes);
    tl_json_key(j, "kind");
    tl_json_str(j, tl_render_storage_kind(s->s.kind));
    char dev[16];
    tl_json_key(j, "device");
    tl_json_str(j, tl_render_device(s->s.device, dev, sizeof dev));
    tl_json_key(j, "time_ns");
    tl_json_u64(j, tl_render_rel_ns(t, s->s.ts));
    tl_render_json_stack(c, j, s->s.site);
    tl_json_key(j, "origin");
    tl_json_str(j, s->origin);
    tl_json_key(j, "source");
    if (s->s.source)
        tl_json_u64(j, s->s.source);
    else
        tl_json_null(j);
    tl_json_key(j, "source_stack");
    tl_render_json_frames(c, j, s->s.source ? s->s.source_site : TL_NO_SITE, TL_JFRAMES_ADDRESS);
    tl_json_key(j, "views");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < s->nviews; i++)
        view(c, j, &s->views[i]);
    tl_json_arr_end(j);
    tl_json_key(j, "pinned_bytes");
    tl_json_u64(j, s->pinned_bytes);
    tl_json_key(j, "duplicates");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < s->ndups; i++)
        tl_json_u64(j, s->dups[i]);
    tl_json_arr_end(j);
    tl_json_key(j, "held_by");
    tl_json_str(j, held_name(s->held_by));
    tl_json_key(j, "held_by_recorded");
    tl_json_bool(j, s->held_recorded);
    tl_json_key(j, "held_cause");
    tl_json_str(j, tl_render_cause_name(s->cause));
    tl_json_key(j, "held_path");
    tl_json_str(j, s->held_path);
    tl_json_key(j, "tags");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < s->ntags; i++)
        tl_json_str(j, s->tags[i]);
    tl_json_arr_end(j);
    if (c->run) tl_render_json_made_by(c, j, s); /* a run report's */
    tl_json_obj_end(j);
}

/* "end": {point, time_ns, mark_id, storage_count, storage_bytes, storages[]}
 * and "problems": [{kind, bytes, storage, message}] (full lists: ids in one
 * refer to the other, so --top does not cut them). */
void tl_render_json_endpoint(const tl_report_ctx_t *c, tl_json_t *j)
{
    const tl_endpoint_t *e = &c->model->end;
    uint64_t total = 0;
    for (size_t i = 0; i < e->nstorages; i++)
        total += e->storages[i].s.bytes;
    tl_json_key(j, "end");
    tl_json_obj_begin(j);
    tl_json_key(j, "point");
    tl_json_str(j, e->point);
    tl_json_key(j, "time_ns");
    tl_json_u64(j, tl_render_rel_ns(c->trace, e->ts));
    tl_json_key(j, "mark_id");
    if (e->script_end)
        tl_json_u64(j, e->mark_id);
    else
        tl_json_null(j);
    tl_json_key(j, "storage_count");
    tl_json_u64(j, e->nstorages);
    tl_json_key(j, "storage_bytes");
    tl_json_u64(j, total);
    tl_json_key(j, "storages");
    tl_json_arr_begin(j);
    for (size_t i = 0; i < e->nstorages; i++)
        end_storage(c, j, &e->storages[i]);
    tl_json_arr_end(j);
    tl_json_obj_end(j);

    tl_json_key(j, "problems");
    tl_json_arr_begin(j);
    if (c->run && !c->run->entry) { /* a run's report: every process's problems */
        for (size_t i = 0; i < c->run->nproblems; i++)
            tl_json_raw(j, c->run->problems[i], c->run->problem_len[i]);
        tl_json_arr_end(j);
        return;
    }
    /* out of memory: the problems without their holder path and fix */
    const tl_end_storage_t **by_id = e->nproblems ? tl_endpoint_by_id(e) : NULL;
    for (size_t i = 0; i < e->nproblems; i++)
        tl_render_json_problem_obj(c, j, by_id, i, false);
    free(by_id);
    tl_json_arr_end(j);
}
