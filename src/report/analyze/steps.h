/* steps.h - were a site's live blocks allocated in distinct steps of a loop?
 *
 * A verdict may say "per step of a loop" only when the trace shows a loop.
 * The criterion (docs/report-schema.md, "check"): two blocks of one stack
 * (the exact stack id: one pyframe id stands for one instruction of one
 * code object, so every frame was at the same instruction both times) were
 * allocated in distinct steps when, in the same thread between the two
 * allocations, the trace has
 *   - an allocation whose Python frames do not end with that stack's
 *     Python frames (instruction for instruction): some frame of the stack
 *     ran another instruction or returned, and the same instructions ran
 *     again: the line was re-entered; or
 *   - a REGION_BEGIN or REGION_END (a region re-entered).
 * One native call that allocates several blocks (a static cache built on
 * the first call, a buffer grown during setup, `import torch`) shows
 * neither, and counts as one step. A loop whose body makes no other
 * recorded allocation outside the call (a one-statement loop in the
 * default mode) is not seen either: the verdict then counts blocks
 * plainly, which is never wrong.
 */
#ifndef TL_REPORT_STEPS_H
#define TL_REPORT_STEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/read/reader.h"

/* For each of the n sites[] (tl_trace_t site indexes), steps[i]: the number
 * of distinct steps (thread, step) among its blocks allocated at or after
 * from_ts and still live after the events up to until_ts (inclusive), when
 * some thread shows at least two of them; 0 when no loop was seen. One
 * pass over t's events. Returns true when out of memory (steps then all 0). */
bool tl_steps_count(const tl_trace_t *t, const uint32_t *sites, size_t n, uint64_t from_ts,
                    uint64_t until_ts, uint64_t *steps);

/* One question of tl_steps_count_many: tl_steps_count's sites, n, until_ts
 * and steps (n entries, written). */
typedef struct tl_steps_query {
    const uint32_t *sites;
    size_t n;
    uint64_t until_ts;
    uint64_t *steps;
} tl_steps_query_t;

/* tl_steps_count for nq questions with one from_ts, in one pass over t's
 * events (each answered as tl_steps_count would: a candidate of another
 * question changes no other's steps). check asks three (--max-leak's,
 * --max-leak-storage's and --max-peak's groups): one pass each was most of
 * check's time beyond report's on a big trace. Returns true when out of
 * memory (every steps then 0). */
bool tl_steps_count_many(const tl_trace_t *t, uint64_t from_ts, tl_steps_query_t *q, size_t nq);

#endif
