/* flame.h - a site's stack as flame-graph frames, shared by the folded and
 * HTML renderers.
 *
 * Outermost first. Folded away: the allocator's own innermost frames
 * (tl_allocator_module, TL_ALLOC_NATIVE), the C runtime's start frames, and, in a site
 * with Python frames, CPython's own native frames and everything outside the
 * outermost Python frame, so Python lines and the native frames of the
 * libraries they call form one stack. Runs of frames with the same label
 * (unnamed frames of one module) become one. Not thread-safe (symbolizer).
 */
#ifndef TL_REPORT_FLAME_H
#define TL_REPORT_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/render/render.h"

typedef struct tl_flame_frame {
    uint64_t raw; /* the recorded frame value */
    bool python;
    tl_frame_t f; /* strings owned by the trace or the symbolizer */
} tl_flame_frame_t;

/* The flame frames of site into out, which has room for the site's recorded
 * frame count (tl_trace_site_frames); returns how many (0: no stack). */
size_t tl_flame_site_frames(const tl_report_ctx_t *c, uint32_t site, tl_flame_frame_t *out);

/* A frame's label: "function (file:line)", "function", "?? (module)";
 * ';' and control characters replaced (folded input is line- and
 * ';'-separated). buf of n bytes; returns buf. */
const char *tl_flame_label(const tl_flame_frame_t *f, char *buf, size_t n);

#endif
