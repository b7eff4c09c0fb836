/* mode.c - the recording mode in the report (see render.h): the summary's
 * JSON fields and the text report's one-line note. The mode itself is read
 * by read/aggregate.c.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/read/aggregate.h"
#include "report/render/json.h"
#include "report/render/render.h"

void tl_render_mode_json(const tl_trace_t *t, tl_json_t *j)
{
    const tl_agg_t *a = t->agg;
    tl_json_key(j, "mode");
    tl_json_str(j, tl_agg_mode_name(a));
    tl_json_key(j, "sampled");
    tl_json_bool(j, tl_agg_sampled(a));
    if (tl_agg_sampled(a)) {
        tl_json_key(j, "sample_bytes");
        tl_json_u64(j, a->sample_bytes);
        tl_json_key(j, "note");
        tl_json_str(j, "numbers for non-storage allocations are estimates");
    }
    if (a && a->has_counts) {
        uint64_t n, b;
        tl_agg_exact(a, &n, &b);
        tl_json_key(j, "allocations_exact");
        tl_json_u64(j, n);
        tl_json_key(j, "allocated_bytes_exact");
        tl_json_u64(j, b);
        tl_json_key(j, "frees_exact");
        tl_json_u64(j, a->frees);
    }
}

const char *tl_render_mode_note(const tl_trace_t *t, char *buf, size_t len)
{
    const tl_agg_t *a = t->agg;
    if (!tl_agg_sampled(a)) return "";
    uint64_t n, b;
    tl_agg_exact(a, &n, &b);
    if (!a->has_counts) /* the END's COUNT records never came: killed or crashed */
        snprintf(buf, len,
                 "tensorleak: mode %s: blocks under %" PRIu64 " B sampled every ~%" PRIu64
                 " B; numbers for non-storage allocations are estimates (exact counts "
                 "unknown: the trace has no END)\n",
                 tl_agg_mode_name(a), a->big_min, a->sample_bytes);
    else
        snprintf(buf, len,
                 "tensorleak: mode %s: blocks under %" PRIu64 " B sampled every ~%" PRIu64
                 " B; numbers for non-storage allocations are estimates (exact: %" PRIu64
                 " plain allocations, %" PRIu64 " B, %" PRIu64 " frees)\n",
                 tl_agg_mode_name(a), a->big_min, a->sample_bytes, n, b, a->frees);
    return buf;
}
