/* flame.c - flame-graph frames of a site (see flame.h). */
#include "report/render/flame.h"

#include <string.h>

#include "report/analyze/frames.h"

/* CPython's own code: the python3.X executable or libpython3.X. */
static bool interpreter_frame(const tl_frame_t *f)
{
    return tl_frame_interpreter_module(f->module);
}

static bool start_frame(const tl_frame_t *f)
{
    return tl_frame_start_function(f->function);
}

static bool same_label(const tl_flame_frame_t *a, const tl_flame_frame_t *b)
{
    char la[512], lb[512];
    return !strcmp(tl_flame_label(a, la, sizeof la), tl_flame_label(b, lb, sizeof lb));
}

size_t tl_flame_site_frames(const tl_report_ctx_t *c, uint32_t site, tl_flame_frame_t *out)
{
    if (site >= c->trace->nsites) return 0;
    size_t n;
    const uint64_t *frames = tl_trace_site_frames(c->trace, site, &n);
    if (n == 0) return 0;
    /* Innermost first as recorded: resolve, skip the allocator's lead. */
    size_t first = 0, outer_py = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        tl_frame_t f;
        if (tl_render_frame(c, frames[i], &f)) outer_py = i;
    }
    for (; first < n; first++) {
        tl_frame_t f;
        if (tl_render_frame(c, frames[first], &f) ||
            !tl_allocator_module(f.module, TL_ALLOC_NATIVE))
            break;
    }
    if (first == n) first = 0; /* nothing but allocator frames: keep them */
    size_t last = outer_py != SIZE_MAX ? outer_py : n - 1, k = 0;
    for (size_t i = last + 1; i-- > first;) {
        tl_flame_frame_t ff = {.raw = frames[i]};
        ff.python = tl_render_frame(c, frames[i], &ff.f);
        if (!ff.python &&
            (start_frame(&ff.f) || (outer_py != SIZE_MAX && interpreter_frame(&ff.f))))
            continue;
        if (k > 0 && same_label(&out[k - 1], &ff)) continue;
        out[k++] = ff;
    }
    return k;
}

const char *tl_flame_label(const tl_flame_frame_t *fr, char *buf, size_t n)
{
    const tl_frame_t *f = &fr->f;
    if (f->function && f->file)
        snprintf(buf, n, "%s (%s:%u)", f->function, fr->python ? f->file : tl_path_base(f->file),
                 f->line);
    else if (f->function)
        snprintf(buf, n, "%s", f->function);
    else if (fr->python)
        snprintf(buf, n, "<python frame>");
    else
        snprintf(buf, n, "?? (%s)", f->module ? tl_path_base(f->module) : "no module");
    for (char *p = buf; *p; p++)
        if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f) *p = *p == ';' ? ',' : '?';
    return buf;
}
