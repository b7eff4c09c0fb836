/* options.h - what a caller asks of the renderers: the format and how many
 * sites a list shows. Plain values, no state.
 */
#ifndef TL_REPORT_RENDER_OPTIONS_H
#define TL_REPORT_RENDER_OPTIONS_H

#include <stdbool.h>

/* FOLDED: peak and end stacks, "peak;" / "end;" leading each line; the
 * _PEAK / _END forms one of them without the root frame (render_folded.c). */
typedef enum tl_format {
    TL_FORMAT_TEXT,
    TL_FORMAT_JSON,
    TL_FORMAT_HTML,
    TL_FORMAT_FOLDED,
    TL_FORMAT_FOLDED_PEAK,
    TL_FORMAT_FOLDED_END
} tl_format_t;

typedef struct tl_report_opts {
    tl_format_t format;
    unsigned top; /* sites per list, default 10; 0 = all */
    /* all_frames: text: every frame of a site (--frames=all), not the
     * program's own with the library frames folded into one line; JSON:
     * the stacks of sites a default suppression matches too.
     * no_default_supp: the leaks section without the built-in suppressions
     * (--no-default-suppressions; suppress.h), which hide one-time
     * allocations (CPython's imports, the loader) as check does. */
    bool all_frames;
    bool no_default_supp;
    /* The output's name for a write error's message (borrowed); NULL:
     * "stdout". */
    const char *output_name;
} tl_report_opts_t;

#endif
