/* common.c - the helpers every renderer shares (render.h): times,
 * list lengths, a stack frame resolved (native through the symbolizer,
 * Python from the trace's PYFRAME records), storage kind names.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/render/render.h"

uint64_t tl_render_rel_ns(const tl_trace_t *t, uint64_t ts)
{
    return ts > t->hdr.start_mono ? ts - t->hdr.start_mono : 0;
}

size_t tl_render_shown(const tl_report_ctx_t *c, size_t n)
{
    unsigned top = c->opts->top;
    return top == 0 || top >= n ? n : top;
}

static bool render_frame(const tl_report_ctx_t *c, uint64_t raw, bool want_line, tl_frame_t *f)
{
    if (!(raw & TL_FRAME_PY_TAG)) {
        if (want_line)
            tl_sym_lookup(c->sym, raw, true, f);
        else
            tl_sym_lookup_name(c->sym, raw, true, f);
        return false;
    }
    *f = (tl_frame_t){0};
    const tl_pyframe_t *pf = tl_trace_pyframe(c->trace, raw);
    if (pf) {
        f->function = pf->function;
        f->file = pf->file;
        f->line = pf->line <= UINT32_MAX ? (unsigned)pf->line : 0;
    }
    return true;
}

bool tl_render_frame(const tl_report_ctx_t *c, uint64_t raw, tl_frame_t *f)
{
    return render_frame(c, raw, true, f);
}

bool tl_render_frame_name(const tl_report_ctx_t *c, uint64_t raw, tl_frame_t *f)
{
    return render_frame(c, raw, false, f);
}

const char *tl_render_cause_name(unsigned cause)
{
    static const char *const names[] = {"none",    "cycle",     "cache",  "traceback",
                                        "closure", "optimizer", "thread", "class"};
    return cause < sizeof names / sizeof names[0] ? names[cause] : "none";
}

const char *tl_render_storage_kind(unsigned kind)
{
    static const char *const names[] = {"c10",  "numpy",        "registered",
                                        "cuda", "cuda_segment", "pinned"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

const char *tl_render_device(unsigned device, char *buf, size_t n)
{
    if (device == TL_DEVICE_CPU)
        snprintf(buf, n, "cpu");
    else
        snprintf(buf, n, "cuda:%u", device - 1);
    return buf;
}

const char *tl_render_site_device(const tl_report_ctx_t *c, uint32_t site, char *buf, size_t n)
{
    const tl_model_t *m = c->model;
    if (!m->site_device || site >= c->trace->nsites || !m->site_device[site]) return NULL;
    return tl_render_device(m->site_device[site] - 1u, buf, n);
}
