/* render_json_frames.c - a site's frames and stack as JSON (render.h), the
 * one writer every JSON document uses: the report, check's verdict, the
 * HTML page's data. */
#include "report/analyze/frames.h"
#include "report/render/json.h"
#include "report/render/render.h"

static void frame(tl_json_t *j, const tl_frame_t *f, bool python, unsigned opts)
{
    tl_json_obj_begin(j);
    tl_json_key(j, "kind");
    tl_json_str(j, python ? "python" : "native");
    tl_json_key(j, "function");
    tl_json_str(j, f->function);
    tl_json_key(j, "file");
    tl_json_str(j, f->file);
    tl_json_key(j, "line");
    f->line ? tl_json_u64(j, f->line) : tl_json_null(j);
    tl_json_key(j, "module");
    tl_json_str(j,
                f->module && (opts & TL_JFRAMES_MODULE_BASE) ? tl_path_base(f->module) : f->module);
    if (opts & TL_JFRAMES_ADDRESS) {
        tl_json_key(j, "address");
        if (python)
            tl_json_null(j);
        else
            tl_json_u64(j, f->address);
    }
    tl_json_obj_end(j);
}

void tl_render_json_frames(const tl_report_ctx_t *c, tl_json_t *j, uint32_t site, unsigned opts)
{
    if (site == TL_NO_SITE || site >= c->trace->nsites) {
        if (opts & TL_JFRAMES_EMPTY_UNKNOWN) {
            tl_json_arr_begin(j);
            tl_json_arr_end(j);
        } else {
            tl_json_null(j);
        }
        return;
    }
    tl_json_arr_begin(j);
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    for (size_t i = 0; i < n; i++) {
        tl_frame_t f;
        bool python = tl_render_frame(c, frames[i], &f);
        frame(j, &f, python, opts);
    }
    tl_json_arr_end(j);
}

void tl_render_json_stack(const tl_report_ctx_t *c, tl_json_t *j, uint32_t site)
{
    tl_json_key(j, "stack_id");
    tl_json_u64(j, c->trace->sites[site].stack_id);
    tl_json_key(j, "stack");
    tl_render_json_frames(c, j, site, TL_JFRAMES_ADDRESS);
}
