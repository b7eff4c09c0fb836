/* render_json_problem.c - a problem of the end point as JSON (render.h):
 * the items of problems[], and of a run report's merged problems[]. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "report/analyze/lineage.h"
#include "report/render/json.h"
#include "report/render/render.h"

void tl_render_json_problem_obj(const tl_report_ctx_t *c, tl_json_t *j,
                                const tl_end_storage_t **by_id, size_t i, bool process)
{
    const tl_endpoint_t *e = &c->model->end;
    const tl_problem_t *p = &e->problems[i];
    const tl_end_storage_t *s = tl_endpoint_storage_of(by_id, e->nstorages, p->storage);
    tl_json_obj_begin(j);
    if (process) {
        tl_json_key(j, "pid");
        tl_json_u64(j, c->trace->pid);
        tl_json_key(j, "rank");
        if (c->trace->rank >= 0)
            tl_json_i64(j, c->trace->rank);
        else
            tl_json_null(j);
        tl_json_key(j, "role");
        tl_json_str(j, c->run ? c->run->role : NULL);
    }
    tl_json_key(j, "kind");
    tl_json_str(j, tl_problem_kind_name(p->kind));
    tl_json_key(j, "bytes");
    tl_json_u64(j, p->bytes);
    tl_json_key(j, "storage");
    tl_json_u64(j, p->storage);
    tl_json_key(j, "message");
    tl_json_str(j, p->message);
    tl_json_key(j, "held_path");
    tl_json_str(j, s ? s->held_path : NULL);
    tl_json_key(j, "fix");
    tl_json_str(j, s ? tl_problem_fix(p, s->s.kind, s->held_path) : NULL);
    if (process) tl_render_json_made_by(c, j, s);
    tl_json_obj_end(j);
}

void tl_render_json_made_by(const tl_report_ctx_t *c, tl_json_t *j, const tl_end_storage_t *s)
{
    const tl_report_made_t *m = s ? tl_report_made_of(c->run, s, c->trace->pid) : NULL;
    tl_json_key(j, "made_by");
    if (!m) {
        tl_json_null(j);
        return;
    }
    tl_json_obj_begin(j);
    tl_json_key(j, "pid");
    tl_json_u64(j, m->pid);
    tl_json_key(j, "role");
    tl_json_str(j, m->role);
    tl_json_key(j, "where");
    tl_json_str(j, m->where);
    tl_json_key(j, "samples");
    tl_json_str(j, m->samples[0] ? m->samples : NULL);
    tl_json_obj_end(j);
}

void tl_render_json_problem(const tl_report_ctx_t *c, size_t i, FILE *out)
{
    const tl_endpoint_t *e = &c->model->end;
    if (i >= e->nproblems) return;
    tl_json_t jw;
    tl_json_init(&jw, out, true);
    const tl_end_storage_t **by_id = tl_endpoint_by_id(e);
    tl_render_json_problem_obj(c, &jw, by_id, i, true);
    free(by_id);
    tl_json_finish(&jw);
}

bool tl_report_made_key(const char *tag, char *key, size_t n)
{
    const char *ino = tag && !strncmp(tag, "shm ", 4) ? strstr(tag, " inode ") : NULL;
    if (!ino) return false;
    snprintf(key, n, "%s", ino + 1); /* "inode N": tmpfs numbers its files in turn */
    return true;
}

const tl_report_made_t *tl_report_made_of(const tl_report_run_t *run, const tl_end_storage_t *s,
                                          uint64_t pid)
{
    char key[160];
    for (size_t t = 0; run && t < s->ntags; t++) {
        if (!tl_report_made_key(s->tags[t], key, sizeof key)) continue;
        for (size_t i = run->nmade; i-- > 0;) /* the latest made: an inode may be reused */
            if (!strcmp(run->made[i].key, key))
                return run->made[i].pid == pid ? NULL : &run->made[i];
    }
    return NULL;
}
