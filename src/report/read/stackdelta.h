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
    size_t depth;  /* STACK_DELTA records in its chain (0: a STACK) */
    uint32_t site; /* its site */
    uint64_t frames[TL_REC_MAX_FRAMES];
} tl_stack_memo_t;

/* Stacks tl_stack_resolve resolved (a trace's, t->stack_cache), so that a
 * chain stops at the first one it holds: a pass over the sites resolves
 * each in one or two steps. Direct-mapped by site index; a stack of more
 * than TL_STACK_CACHE_FRAMES frames is not kept. 1 MiB. */
#define TL_STACK_CACHE        1024
#define TL_STACK_CACHE_FRAMES 128
typedef struct tl_stack_cache {
    uint32_t site1[TL_STACK_CACHE]; /* site index + 1; 0 = empty */
    uint16_t n[TL_STACK_CACHE];
    uint8_t depth[TL_STACK_CACHE]; /* its chain's STACK_DELTA records */
    uint64_t frames[TL_STACK_CACHE][TL_STACK_CACHE_FRAMES];
} tl_stack_cache_t;

/* Site s was just defined by rec (STACK or STACK_DELTA, with its frames):
 * set s->nframes and s->frames_key (a delta: s->base), or, for a delta not
 * on memo's stack, mark s pending (t->nstack_pending). memo follows. */
void tl_stack_take(tl_trace_t *t, tl_site_t *s, const tl_record_t *rec, tl_stack_memo_t *memo);

/* The end of the load, once the sites' rec point at their records
 * (tl_zstack_fix): each pending site's base, then its frames, or leave it
 * undefined. */
void tl_stack_fix(tl_trace_t *t);

/* Site s's frames into out (TL_REC_MAX_FRAMES entries) and *n, through
 * its chain of records down to a STACK or a stack in t->stack_cache
 * (which it fills: not thread-safe). false: unknown (see above). About
 * 14 KiB of stack. */
bool tl_stack_resolve(const tl_trace_t *t, const tl_site_t *s, uint64_t *out, size_t *n);

#endif /* TL_REPORT_READ_STACKDELTA_H */
