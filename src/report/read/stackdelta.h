/* stackdelta.h - the frames of a STACK_DELTA record's stack (version 6,
 * docs/trace-format.md "Stack deltas"): its base's frames edited, the base
 * found by id, itself maybe a delta. At the load, in file order, through
 * the last stack decoded (a thread's delta is mostly on the stack just
 * before it); a delta whose base was not the last (the base in another
 * chunk) is resolved through its chain at the end of the load. A chain
 * that breaks (a base missing or cut, a base id not below the id, more
 * frames kept than the base has, over TL_REC_MAX_FRAMES in all, deeper
 * than TL_STACK_CHAIN_MAX) gives an unknown stack, as a missing STACK.
 * Not thread-safe: one thread per trace.
 */
#ifndef TL_REPORT_READ_STACKDELTA_H
#define TL_REPORT_READ_STACKDELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/trace_format.h"
#include "report/read/reader.h"

/* The most STACK_DELTA records in a chain a reader follows, at the load
 * as later (the agent writes at most 8, src/agent/stackdelta.h). */
#define TL_STACK_CHAIN_MAX 64

/* The last stack the load decoded (id 0: none); the caller's, ~8 KiB. */
typedef struct tl_stack_memo {
    uint64_t id;
    size_t n;
    size_t depth; /* STACK_DELTA records in its chain (0: a STACK) */
    uint64_t frames[TL_REC_MAX_FRAMES];
} tl_stack_memo_t;

/* Site s was just defined by rec (STACK or STACK_DELTA, with its frames):
 * set s->nframes and s->frames_key, or, for a delta not on memo's stack,
 * mark s pending (t->nstack_pending). memo follows. */
void tl_stack_take(tl_trace_t *t, tl_site_t *s, const tl_record_t *rec, tl_stack_memo_t *memo);

/* The end of the load, once the sites' rec point at their records
 * (tl_zstack_fix): resolve each pending site, or leave it undefined. */
void tl_stack_fix(tl_trace_t *t);

/* Site s's frames into out (TL_REC_MAX_FRAMES entries) and *n, through
 * its chain of records. false: unknown (see above). */
bool tl_stack_resolve(const tl_trace_t *t, const tl_site_t *s, uint64_t *out, size_t *n);

#endif /* TL_REPORT_READ_STACKDELTA_H */
