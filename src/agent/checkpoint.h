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
/* Write the final checkpoints now (END, exec, the script_end report
 * point): current, and peak when the highest live bytes were not
 * checkpointed yet; max_stack_id: stack ids handed out so far
 * (tl_ckpt_set_max_stack). freeze: the current set written now is the
 * last (a Python script's end point, script_end: the report's end point
 * reads it, not the set at exit, after the interpreter's teardown freed
 * what the script held). Waits for a checkpoint in progress. Returns
 * records that could not be written. */
uint64_t tl_ckpt_flush(uint64_t now, uint64_t max_stack_id, bool freeze);
/* Device storages (kinds 17-19: PyTorch's CUDA blocks, libcudart's
 * segments, pinned host memory), aggregate mode: instead of ALLOC/FREE
 * records, per-(site, device) totals, each device's exact peaks, and live
 * entries in the live table (key: ptr with the kind in bits 56-63, as a
 * PyTorch block may start where its segment does) that every current
 * checkpoint writes as DLIVE records. Each device (the first
 * TL_CKPT_DEVICES) has a peak set of its own, written at the first free
 * after a new peak of its storage bytes (the live set just before that
 * free) or at the final flush: exact, and written once per new peak that
 * is followed by a free. A spin lock serializes these (device events are
 * few: cudaMalloc's callers cache, PyTorch's history comes in batches).
 * tl_ckpt_dev_alloc: true = not recorded (no room in the live table, or
 * not initialized): counted as dropped by the caller. tl_ckpt_dev_free:
 * true = not found (the storage was not live; nothing written). */
#define TL_CKPT_DEV_TAG_SHIFT 56
bool tl_ckpt_dev_alloc(uint64_t kind, uint64_t ptr, uint64_t size, uint64_t device,
                       uint64_t stack_id, uint64_t now);
bool tl_ckpt_dev_free(uint64_t kind, uint64_t ptr, uint64_t now);
/* Stack ids handed out so far (set by the agent before each checkpoint). */
void tl_ckpt_set_max_stack(uint64_t id);

#endif /* TL_AGENT_CHECKPOINT_H */
