/* pipeline.h - the one way the report library reads a trace:
 * open -> read -> model -> symbolize -> analyze -> notes (docs/internals.md).
 *
 * report, check and diff (cmd/) each run it once per trace and hand the
 * result to a renderer (render/): renderers take a tl_analysis_t's ctx, never
 * a file. Silent: failures come back as a TL_STATUS_* code and a one-line
 * reason for the caller to print. Not thread-safe (libdw, the symbolizer).
 */
#ifndef TL_REPORT_PIPELINE_H
#define TL_REPORT_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "report/analyze/model.h"
#include "report/analyze/suppress.h"
#include "report/analyze/symbolize.h"
#include "report/read/reader.h"
#include "report/render/render.h"

typedef struct tl_analysis_opts {
    const tl_report_opts_t *render; /* the renderer's options (ctx.opts); NULL: defaults */
    tl_supp_t *supp; /* suppressions to bind to the trace's sites before the analyses; or NULL */
    bool timeline;   /* the model's timeline (the HTML report needs it; tl_model_opts_t) */
    unsigned peak_device; /* the model's peak sites at this device's peak (model.h); 0 = all */
} tl_analysis_opts_t;

/* A trace analysed: its tables (the events stay in the file, streamed by
 * the model), the model, a symbolizer over its modules, the notes, and the
 * renderers' view of all of them in ctx. Owns everything; tl_analysis_free. */
typedef struct tl_analysis {
    tl_trace_t trace;
    tl_model_t model;
    tl_symbolizer_t *sym;
    tl_report_ctx_t ctx;
    char note_buf[TL_REPORT_MAX_NOTES][256];
} tl_analysis_t;

/* Run the pipeline on the trace at path into *a (zeroed first). Returns 0
 * (the trace may still be incomplete: tl_report_incomplete), or the reader's
 * TL_STATUS_NO_TRACE / TL_STATUS_BAD_TRACE, or TL_STATUS_NOMEM (out of memory);
 * then why[] holds the reason, and *a is empty (tl_analysis_free is safe).
 * a is large (the notes): allocate it. path must outlive a. */
tl_status_t tl_analysis_run(tl_analysis_t *a, const char *path, const tl_analysis_opts_t *o,
                            char *why, size_t whylen);

void tl_analysis_free(tl_analysis_t *a);

#endif
