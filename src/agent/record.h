/* record.h - the agent's recording path: which blocks are recorded (the
 * byte sampler, the live table), their stacks, and the records the hooks
 * and the lineage API write into the calling thread's chunk.
 *
 * Rules: every tl_record_* runs with the caller's reentrancy guard raised
 * (TL_GUARD_SCOPE) and never fails the caller's allocation; a record that
 * cannot be written is counted as dropped. No stdio, no getenv. The
 * lifecycle (agent.c) calls tl_record_init once and owns the switch.
 */
#ifndef TL_AGENT_RECORD_H
#define TL_AGENT_RECORD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/blocks.h"
#include "agent/config.h"
#include "agent/counters.h"
#include "agent/live.h"
#include "agent/modules.h"
#include "agent/record_scan.h"
#include "agent/tsd.h"
#include "agent/writer.h"
#include "common/trace_format.h"

/* TENSORLEAK_MODE (tl_mode_t) and TENSORLEAK_STACK_DEPTH, fixed at init. */
extern int tl_record_mode;
extern unsigned tl_record_stack_depth;

/* Set once the first PyTorch storage was recorded outside `all` mode: from
 * then on C++ operator new blocks (of tl_record_new_full_sizes) are
 * recorded in full (TL_KIND_NEW_FULL). */
extern atomic_bool tl_record_cxx_full;

/* Outside `all` mode, the request sizes (bytes) of the C++ news recorded in
 * full once tl_record_cxx_full is set: lo .. lo + span, packed as
 * lo | span << 32; 0 = every size. Set by the API's view_object
 * (include/tensorleak.h) to the size class of the object a view is named
 * by (under torch a TensorImpl: not an autograd node's, a vector's, ~1 in 7
 * of a training step's news); the others are then sampled as any block. */
extern _Atomic uint64_t tl_record_new_full_sizes;
static inline bool tl_record_new_in_full(size_t size)
{
    uint64_t r = atomic_load_explicit(&tl_record_new_full_sizes, memory_order_relaxed);
    return r == 0 || size - (size_t)(r & UINT32_MAX) <= (size_t)(r >> 32);
}

/* Whether a storage of kind starts the recording of C++ news in full
 * (tl_record_cxx_full): a PyTorch one; numpy's too (torch.from_numpy's may
 * be the first TensorImpl) once the Python package named a TensorImpl's
 * size class (tl_record_new_full_sizes, api.c view_object, at `import
 * torch`). Before that, a numpy array made ahead of `import torch` had every
 * C++ new of the import recorded in full: 890k blocks, 140k events dropped,
 * a storage missing from the report. view_object starts it then if a numpy
 * storage was recorded before. */
static inline bool tl_record_storage_opens_cxx(uint64_t kind)
{
    return kind == TL_KIND_STORAGE_C10 ||
           (kind == TL_KIND_STORAGE_NUMPY &&
            atomic_load_explicit(&tl_record_new_full_sizes, memory_order_relaxed) != 0);
}

/* Outside `all` mode, the hooks' fast path for a plain allocation of size
 * bytes (guard not raised, recording): counts it and draws it against the
 * thread's sampling countdown. True: nothing more to do (not recorded).
 * False: call tl_record_alloc, which records it (sampled here, big, or
 * a thread's first call). No lock, no atomic read-modify-write. */
static inline bool tl_record_alloc_unrecorded(size_t size)
{
    tl_counters_t *s = tl_tsd.slot;
    if (tl_record_mode == TL_MODE_ALL || !s || s == TL_COUNTERS_SHARED || !tl_tsd.sample_ready ||
        size >= TL_CONFIG_BIG_MIN)
        return false;
    unsigned c = tl_size_class(size);
    tl_ctr_add(&s->cls_count[c], 1);
    tl_ctr_add(&s->cls_bytes[c], size);
    if ((tl_tsd.sample_left -= (int64_t)size) > 0) return true;
    tl_tsd.sample_hit = true;
    return false;
}

/* Outside `all` mode, the fast path of a free of p (non-NULL): true when p
 * is certainly not a recorded block (nothing to write). */
static inline bool tl_record_free_unrecorded(const void *p)
{
    tl_counters_t *s = tl_tsd.slot;
    if (tl_record_mode == TL_MODE_ALL || !s || s == TL_COUNTERS_SHARED || tl_live_maybe(p))
        return false;
    tl_ctr_add(&s->frees_all, 1);
    return true;
}

/* Restarts the calling thread's byte sampler (outside `all` mode) from
 * seed: a fresh xorshift state and interval. The sampler is memoryless
 * (intervals are exponential), so a restart keeps every block's chance of
 * being sampled; a region's begin restarts it from its name (api.c) so the
 * region's blocks are sampled alike in every run and every iteration.
 * Needs tl_record_init; this thread's state only. */
void tl_record_sample_restart(uint64_t seed);

/* The trace's writer (record.c; created and ended by the lifecycle). */
extern tl_writer_t tl_record_w;

/* `all` mode's fast path (hooks.h, guard raised) for a plain block's
 * packed record: an ALLOC of kind 0-2 with its stack's id known, or a FREE
 * (kind TL_KIND_FREE, size and stack_id 0); foreign as for
 * tl_record_alloc_stack. Writes and counts it in place when the thread is
 * bound to the trace with its own counter slot, its chunk has room and no
 * leak scan runs; else false: nothing was done, take the full path
 * (tl_record_alloc_stack, tl_record_free_block). Touches no errno. */
static inline __attribute__((always_inline)) bool
tl_record_packed_fast(unsigned kind, uintptr_t ptr, uint64_t size, uint64_t stack_id, bool foreign)
{
    tl_counters_t *s = tl_tsd.slot;
    if (__builtin_expect(!tl_writer_block_ready(&tl_record_w, &tl_tsd.cur) || !s ||
                             s == TL_COUNTERS_SHARED ||
                             atomic_load_explicit(&tl_record_scan_on, memory_order_relaxed),
                         0))
        return false;
    uint64_t ts = tl_clock_event(&tl_tsd.clk, foreign); /* after the block exists (writer.h) */
    tl_writer_block_append(&tl_tsd.cur, ts, kind, ptr, size, stack_id);
    tl_ctr_add(kind == TL_KIND_FREE ? &s->frees : &s->allocs, 1);
    return true;
}

/* Start recording with cfg (kept: it must outlive the process's tracing):
 * the stack table, the thread-end key. true = failure (mmap). */
bool tl_record_init(const tl_config_t *cfg);
/* A fork child: forget the parent's threads, stacks and counters before
 * its own trace is opened. Single-threaded. */
void tl_record_reset(void);
/* &tl_record_w, for the lifecycle (agent.c) and the API. */
static inline tl_writer_t *tl_record_writer(void)
{
    return &tl_record_w;
}
/* Bind the calling thread to the current trace (cursor, counter slot,
 * THREAD record); cheap when it is bound already. */
void tl_record_thread_begin(void);
/* Callback for tl_modules_scan: one MODULE record. */
void tl_record_module(void *arg, const tl_module_info_t *m);
/* The OPTIONS record: keys/values[0..n) and then the process's CPython
 * pairs (docs/trace-format.md), for which both arrays hold 3 more slots. */
void tl_record_options(size_t n, const char **keys, const char **values);
/* The END record (reason TL_END_*, status), after the last checkpoint
 * (aggregate mode) and the exact per-class COUNT records. */
void tl_record_end(uint64_t reason, int status);

/* The leak scan (record_scan.h) of an `all`-mode run with
 * TENSORLEAK_LEAK_SCAN=1, once tl_record_scan_init turned it on: classify
 * the live blocks and write LEAKKIND and LEAKSCAN, once (at the script_end
 * mark, else at exit; later calls do nothing). Guard held. */
void tl_record_leak_scan(void);

/* Events. kind is a tl_kind_t; ptr non-NULL; size as requested. They keep
 * the caller's errno. */
void tl_record_alloc(uint64_t kind, const void *ptr, size_t size);
/* A block that every mode records, whatever the sampler says, with the
 * stack its hook captured itself (tl_stack_capture_inline, so that the
 * unwind cache can answer a repeated one): frames[0..n) innermost first,
 * skip ranges already dropped; Python frames are merged in here. Kinds: a
 * CPU storage (TL_KIND_STORAGE_C10), and outside `all` mode a C++ operator
 * new once tl_record_cxx_full is set (of a size tl_record_new_in_full
 * takes), recorded in full and never sampled (TL_KIND_NEW_FULL, or
 * TL_KIND_MALLOC from TL_CONFIG_BIG_MIN bytes).
 * Keeps errno. */
void tl_record_alloc_captured(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                              size_t n);
/* `all` mode, with the stack the hook captured itself (tl_stack_capture_inline):
 * frames[0..n) innermost first, skip ranges already dropped. foreign:
 * tl_blocks_foreign right after the block was marked live (false lets the
 * record take this thread's recent time, record.c event_time). */
void tl_record_alloc_stack(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                           size_t n, bool foreign);
/* foreign: as for tl_record_alloc_stack, tl_blocks_foreign right after the
 * block was checked and marked freed; true when unknown. */
void tl_record_free_block(uint64_t kind, const void *ptr, bool foreign);
static inline void tl_record_free(uint64_t kind, const void *ptr)
{
    tl_record_free_block(kind, ptr, true);
}
/* A storage of a device kind (trace_format.h, tl_kind_has_device) made or
 * released by libcudart: an ALLOC / FREE record with the caller's stack in
 * every mode, `aggregate` too (device storages are not aggregated: their
 * events make the per-device peaks and live sets exact). device as
 * TL_DEVICE_*; stream the CUDA stream (0: none). */
void tl_record_dalloc(uint64_t kind, const void *ptr, size_t size, uint64_t device,
                      uint64_t stream);
void tl_record_dfree(uint64_t kind, const void *ptr, uint64_t device);
void tl_record_realloc(const void *old_ptr, const void *new_ptr, size_t size);

/* Lineage API support (api.c). tl_record_api_begin binds the thread; true =
 * failure (not recording): call the others only after it returned false. */
bool tl_record_api_begin(void);
/* Id of the caller's stack (Python frames merged), written if new. */
uint64_t tl_record_stack(void);
/* The same with the thread's Python frames only (no native unwind, unless
 * it is the thread's first capture or it has no Python frames: then the
 * native stack), for a record that needs the line. */
uint64_t tl_record_py_stack(void);
/* The time of a numpy buffer's or ndarray object's record (ns,
 * CLOCK_MONOTONIC, fenced). */
static inline uint64_t tl_record_py_time(void)
{
    /* Fresh, not all mode's reused time (clock.h): the default mode's c10
     * storages take a fresh one, so a reused time could put a numpy buffer
     * before the tensor made after it (case 16's copy lineage failed so). */
    return tl_clock_now();
}
/* One lineage-family record into this thread's chunk (dropped: counted). */
void tl_record_lineage(tl_rec_type_t type, const uint64_t *ints, const char *str, size_t len);

/* Write the NOTE that who[0..len) (a library's path, or "the executable")
 * links the CUDA runtime statically (cudart_static.h's text). Any thread;
 * no allocation. */
void tl_record_cudart_static_note(const char *who, size_t len);
/* A MARK record. true = dropped. */
bool tl_record_mark(uint64_t id, const char *name, size_t len);
/* A Python-style frame (file, function, line) defined by the caller rather
 * than seen in the interpreter (PyTorch's allocator history): its PYFRAME
 * record is written and the frame value (TL_FRAME_PY_TAG | id) returned;
 * ids are from 2^32 up, apart from the interpreter's. 0 = dropped. */
uint64_t tl_record_api_frame(const char *file, size_t file_len, const char *function,
                             size_t function_len, uint64_t line);
/* Id of the stack frames[0..n) (innermost first), written if new. */
uint64_t tl_record_stack_of(const uint64_t *frames, size_t n);
/* A device-kind ALLOC (is_free false) or FREE at ts_ns (CLOCK_MONOTONIC; 0 =
 * now). An event earlier than the thread's last record rewinds its time
 * base first (tl_writer_rewind), so a history read after the fact lands at
 * its own place in the timeline: give one batch in time order. */
void tl_record_api_device(bool is_free, uint64_t kind, uint64_t device, uint64_t stream,
                          uint64_t ptr, uint64_t size, uint64_t stack_id, uint64_t ts_ns);

#endif /* TL_AGENT_RECORD_H */
