/* checkpoint.h - aggregate mode: per-site totals and live sets, written as
 * checkpoints into fixed regions of the trace instead of one record per
 * event, so the trace stops growing with the run's length.
 *
 * Each set (TL_CKPT_CURRENT, TL_CKPT_PEAK) has two regions of chunks that
 * checkpoints alternate between: a checkpoint is CKPT_BEGIN, COUNT, SITE
 * and LIVE records, CKPT_END, and a crash while one region is rewritten
 * leaves the other one complete. Site totals and the live byte count are
 * atomics updated only for recorded blocks (storages, big, sampled); a
 * checkpoint is written by whichever thread finds one due, under a try-lock
 * (never waited for on the event path). Call everything with the
 * reentrancy guard raised.
 */
#ifndef TL_AGENT_CHECKPOINT_H
#define TL_AGENT_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/live.h"
#include "agent/writer.h"

#define TL_CKPT_MAX_SITES  (1u << 20) /* stack ids with totals; later ids are dropped */
#define TL_CKPT_MAX_CHUNKS 4096u      /* chunks per region (128 MiB) */

/* Start (or, in a fork child, restart) for writer w; period_ns between
 * current checkpoints. true = failure (mmap). */
bool tl_ckpt_init(tl_writer_t *w, uint64_t period_ns);
/* A recorded block appeared / went away (sizes: e->weight, the estimate). */
void tl_ckpt_on_alloc(const tl_live_entry_t *e, uint64_t now);
void tl_ckpt_on_free(const tl_live_entry_t *e);
/* Write a current checkpoint when one is due (cheap when not). */
void tl_ckpt_tick(uint64_t now);
/* Write the final checkpoints now (END, exec, report points): current, and
 * peak when the highest live bytes were not checkpointed yet. Waits for a
 * checkpoint in progress. Returns records that could not be written. */
uint64_t tl_ckpt_flush(uint64_t now);
/* Stack ids handed out so far (set by the agent before each checkpoint). */
void tl_ckpt_set_max_stack(uint64_t id);

#endif /* TL_AGENT_CHECKPOINT_H */
