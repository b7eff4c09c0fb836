/* stackdelta.h - a thread's new stack written as an edit of the last stack
 * the same thread wrote (TL_REC_STACK_DELTA), when that record is smaller
 * than the full STACK: in `import torch` consecutive new stacks of a thread
 * differ in ~7 of ~61 frames (issue 26). The base lives in the thread's
 * capture buffers (stack.h, tl_stack_last_t): no malloc, no lock.
 */
#ifndef TL_AGENT_STACKDELTA_H
#define TL_AGENT_STACKDELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/stack.h"
#include "agent/writer.h"

/* A STACK_DELTA is written only on a base at most this many deltas away
 * from a full STACK, so that a reader resolves any stack by decoding at
 * most TL_STACK_DELTA_MAX_DEPTH + 1 records (sites.c decodes a site's
 * frames lazily, through its chain); a full STACK each 9 new stacks of a
 * thread costs ~30 B a stack in `import torch` (BENCHMARKS.md). */
#define TL_STACK_DELTA_MAX_DEPTH 8u

/* Should stack id, f[0, n), be written as a STACK_DELTA of last (valid for
 * stack generation gen)? true with *head and *tail set (frames kept from
 * the start and from the end of last; f[*head, n - *tail) are new) when
 * last is of gen, its id below id, its depth below the bound and the delta
 * record is smaller than the full one. Pure. */
bool tl_stack_delta_plan(const tl_stack_last_t *last, uint64_t gen, uint64_t id, const uint64_t *f,
                         size_t n, size_t *head, size_t *tail);

/* After stack id, f[0, n), was written (delta: as a STACK_DELTA of last):
 * it becomes last, gen its generation. */
void tl_stack_delta_keep(tl_stack_last_t *last, uint64_t gen, uint64_t id, const uint64_t *f,
                         size_t n, bool delta);

/* Write stack id's record to c: a STACK_DELTA of this thread's last
 * written stack when delta is on and tl_stack_delta_plan says so, else a
 * full STACK. The thread's last stack follows what was written; a dropped
 * record leaves it. Call with the reentrancy guard raised (it may map the
 * thread's capture buffers). true = dropped. */
bool tl_stack_delta_write(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                          const uint64_t *f, size_t n, bool delta);

#endif /* TL_AGENT_STACKDELTA_H */
