/* writer.h - the trace file writer: a MAP_SHARED file of per-thread chunks.
 *
 * Each thread writes records into its own chunk (tl_wcursor_t, kept in the
 * caller's thread-local state) and publishes the chunk's `used` with a release
 * store after every record, so a kill -9 loses nothing already written. Only
 * taking a new chunk (once per ~32 KiB of records) takes the writer's mutex.
 * No stdio, no malloc: safe inside malloc hooks (with the reentrancy guard up).
 * Functions returning bool return true on failure (the record was dropped).
 */
#ifndef TL_AGENT_WRITER_H
#define TL_AGENT_WRITER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/wcursor.h"
#include "common/block.h"
#include "common/trace_format.h"

#define TL_WRITER_EXTENT_CHUNKS 128u   /* chunks per mapped extent (4 MiB) */
#define TL_WRITER_MAX_EXTENTS   32768u /* 128 GiB of trace at most */
#define TL_WRITER_PATH_MAX      4096u  /* the trace's path, as opened */
#define TL_WRITER_POOL          64u    /* chunks of ended threads kept for new ones */
#define TL_WRITER_POOL_MIN      2048u  /* a chunk with less room left is not kept */

/* Header fields written at open. */
typedef struct tl_writer_hdr {
    uint64_t pid, ppid;
    uint64_t start_realtime_ns, start_mono_ns;
    uint64_t session;
    uint32_t exec_seq;
} tl_writer_hdr_t;

/* A partly filled chunk an ended thread left for the next thread. */
typedef struct tl_writer_parked {
    uint8_t *chunk;
    uint32_t used;   /* record bytes in it */
    uint32_t extent; /* index of its extent */
} tl_writer_parked_t;

/* The writer owns no file descriptor between calls: the program may close,
 * dup2 onto or reuse any number (daemons, closefrom). Growing and ending the
 * file reopen path (O_NOFOLLOW|O_CLOEXEC), check that it is still the file
 * created (dev, ino) and close it again; a file that was removed or replaced
 * stops the recording with a note, nothing is written anywhere else. */
typedef struct tl_writer {
    pthread_mutex_t lock; /* guards chunk hand-out, growth, pool, closing */
    char path[TL_WRITER_PATH_MAX];
    uint64_t dev, ino; /* of the file created; 0/0 when none */
    uint32_t chunk_bytes;
    uint64_t gen;        /* unique per tl_writer_create; cursors compare it */
    uint8_t *header;     /* TL_TRACE_HEADER_BYTES, MAP_SHARED */
    uint64_t next_chunk; /* chunks handed out (lock) */
    uint64_t nextents;   /* extents mapped so far, unmapped ones included (lock) */
    atomic_int closed;   /* 0 open; TL_WRITER_FINISHED or TL_WRITER_EXEC refuse new chunks */
    unsigned npool;      /* parked chunks (lock) */
    tl_writer_parked_t pool[TL_WRITER_POOL];
    /* Chunks of each extent that no thread writes any more (lock); an
     * extent whose chunks are all retired is unmapped (NULL), so written
     * trace pages stop counting as the program's resident memory. */
    uint8_t retired[TL_WRITER_MAX_EXTENTS];
    uint8_t *extent[TL_WRITER_MAX_EXTENTS];
} tl_writer_t;

/* TL_WRITER_FULL: the file could not grow (disk full, quota, mapping
 * limit); new chunks are refused at once, without retrying per event. */
enum { TL_WRITER_OPEN = 0, TL_WRITER_FINISHED = 1, TL_WRITER_EXEC = 2, TL_WRITER_FULL = 3 };

/* Room for one packed block record (common/block.h) in c's current chunk:
 * it has one, with at least TL_BLOCK_MAX bytes left. */
static inline bool tl_writer_block_room(const tl_writer_t *w, const tl_wcursor_t *c)
{
    return c->chunk && w->chunk_bytes - TL_CHUNK_HEADER_BYTES - c->used >= TL_BLOCK_MAX;
}

/* Whether tl_writer_block_append may write into c at once: c is bound to
 * w's generation, has room, and its thread has not ended (an ended
 * thread's chunk is parked after each record: tl_writer_alloc does it). */
static inline bool tl_writer_block_ready(const tl_writer_t *w, const tl_wcursor_t *c)
{
    return c->gen == w->gen && !c->ended && tl_writer_block_room(w, c);
}

/* Append a plain block's packed record at ts (CLOCK_MONOTONIC ns) to c's
 * chunk and publish it (the release store of the chunk's used): kind 0-2
 * an ALLOC of size bytes at stack_id, TL_KIND_FREE a FREE (size and
 * stack_id unused). The pointer is written as a delta of the run's
 * previous one, which becomes ptr. Needs tl_writer_block_room; never
 * fails, takes no lock, calls nothing, touches no errno: the `all`-mode
 * hooks' fast path (record.h) and tl_writer_alloc / _free. c is the
 * calling thread's own. */
static inline __attribute__((always_inline)) void
tl_writer_block_append(tl_wcursor_t *c, uint64_t ts, unsigned kind, uint64_t ptr, uint64_t size,
                       uint64_t stack_id)
{
    uint8_t *data = c->chunk + TL_CHUNK_HEADER_BYTES;
    uint8_t *end = tl_block_put(data + c->used, ts >= c->last_ts ? ts - c->last_ts : 0, kind,
                                ptr - ~c->prev_ptr_not, size, stack_id);
    c->used = (uint32_t)(end - data);
    __atomic_store_n((uint32_t *)(c->chunk + TL_CHK_USED), c->used, __ATOMIC_RELEASE);
    if (ts > c->last_ts) c->last_ts = ts;
    c->prev_ptr_not = ~ptr;
}

/* Create PATH (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600), map the header and
 * the first extent, write the header, close the descriptor. Returns 0 or a
 * negative errno (-EEXIST lets the caller pick another name; -EFBIG: the
 * program's RLIMIT_FSIZE is too small, checked before any write so that no
 * SIGXFSZ reaches the program). w must be zeroed or released. */
int tl_writer_create(tl_writer_t *w, const char *path, const tl_writer_hdr_t *hdr);

/* Hand out one chunk (zeroed file space, not yet stamped) for the caller to
 * fill and stamp itself (aggregate checkpoints; such a chunk stays mapped
 * for the life of the writer). NULL when closed or full. */
uint8_t *tl_writer_chunk_raw(tl_writer_t *w);

/* After the file could not grow (TL_WRITER_FULL): make the chunk kept in
 * reserve c's current chunk, once, so the END record (and the counters
 * before it) still fit. true = no reserve (not full, or already taken). */
bool tl_writer_take_reserve(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts);

/* Bind c to w's current generation, as a fresh thread with kernel id tid. */
void tl_wcursor_reset(tl_wcursor_t *c, const tl_writer_t *w, uint32_t tid);

/* The thread of c ends: leave its chunk to the next thread that needs one
 * (TL_REC_OWNER marks where its records start) or, nearly full, retire it.
 * c keeps its seq; a later record of the same thread (a destructor that
 * runs after ours) takes a parked chunk again and parks it right after. */
void tl_wcursor_park(tl_writer_t *w, tl_wcursor_t *c);

/* Typed record writers; ts is CLOCK_MONOTONIC ns. true = dropped. */
bool tl_writer_alloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                     uint64_t size, uint64_t stack_id);
bool tl_writer_free(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr);
/* ALLOC / FREE of a device kind (trace_format.h, tl_kind_has_device). */
bool tl_writer_dalloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                      uint64_t size, uint64_t stack_id, uint64_t device, uint64_t stream);
bool tl_writer_dfree(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                     uint64_t device);
/* Records from now on are timed from ts, earlier than c's last record: an
 * OWNER record (same tid) starts a run of its own time base, which readers
 * merge by time like any chunk. For events learnt after the fact (PyTorch's
 * allocator history, read at a report point), written in time order after
 * this. Does nothing when ts is not earlier (or c has no chunk yet). */
bool tl_writer_rewind(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts);
bool tl_writer_realloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t old_ptr,
                       uint64_t new_ptr, uint64_t size, uint64_t stack_id);
/* STACK_DELTA of stack id on base_id, an earlier stack of c's thread
 * (tl_rec_put_stack_delta: fresh are its n_new frames between head and
 * tail); base_id 0: a STACK of fresh[0, n_new) (head, tail unused). */
bool tl_writer_stack_delta(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                           uint64_t base_id, size_t head, size_t tail, const uint64_t *fresh,
                           size_t n_new);
/* STACK of stack id, frames[0, nframes). */
static inline bool tl_writer_stack(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                                   const uint64_t *frames, size_t nframes)
{
    return tl_writer_stack_delta(w, c, ts, id, 0, 0, 0, frames, nframes);
}
bool tl_writer_module(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t base, uint64_t start,
                      uint64_t size, const char *path, size_t path_len, const uint8_t *build_id,
                      size_t build_id_len);
bool tl_writer_thread(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t tid, const char *name,
                      size_t name_len);
bool tl_writer_process(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t pid, uint64_t ppid,
                       uint64_t exec_seq, const char *exe, size_t exe_len, size_t argc,
                       const char *const *argv);
bool tl_writer_options(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, size_t count,
                       const char *const *keys, const char *const *values);
bool tl_writer_end(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t reason,
                   int64_t exit_status, uint64_t allocs, uint64_t frees, uint64_t storages,
                   uint64_t dropped);
bool tl_writer_pyframe(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id, uint64_t line,
                       const char *file, size_t file_len, const char *function,
                       size_t function_len);
bool tl_writer_mark(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id, const char *name,
                    size_t name_len);
/* A lineage-family record (tl_rec_lineage_shape gives how many ints). */
bool tl_writer_lineage(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, tl_rec_type_t type,
                       const uint64_t *ints, const char *str, size_t str_len);

/* Mark the file cleanly ended: refuse new chunks (closed = how), store
 * chunk_count and TL_HDR_F_CLEAN_END (and TL_HDR_F_EXEC_END when how is
 * TL_WRITER_EXEC). With truncate, cut the file to the
 * chunks in use (when it is still the file created; mappings stay, so
 * threads still holding a chunk keep writing into the file harmlessly). */
void tl_writer_mark_end(tl_writer_t *w, int how, bool truncate);

/* Undo tl_writer_mark_end(w, TL_WRITER_EXEC, false) after a failed exec. */
void tl_writer_unmark_end(tl_writer_t *w);

/* Unmap everything without touching the file (fork child dropping its
 * parent's trace). Leaves w with no file. Single-threaded. */
void tl_writer_release(tl_writer_t *w);

/* Fork: hold / drop the writer lock around fork(). */
void tl_writer_prefork(tl_writer_t *w);
void tl_writer_postfork(tl_writer_t *w);

#endif /* TL_AGENT_WRITER_H */
