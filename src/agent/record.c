/* record.c - the agent's recording path (record.h): thread binding, stacks
 * with Python frames merged, the byte sampler's choice, the live table and
 * the records of allocations, frees and lineage calls.
 *
 * Runs inside someone else's program, in the hooks: no stdio, no getenv,
 * no lock per event. Everything here runs with the reentrancy guard raised.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/record.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "agent/blocks.h"
#include "agent/deadstacks.h"
#include "agent/checkpoint.h"
#include "agent/cudart_static.h"
#include "agent/clock.h"
#include "agent/record_scan.h"
#include "agent/modules.h"
#include "agent/pyframes.h"
#include "agent/stack.h"
#include "agent/stackdelta.h"

int tl_record_mode;
unsigned tl_record_stack_depth = TL_CONFIG_DEPTH_DEFAULT;
atomic_bool tl_record_cxx_full;
_Atomic uint64_t tl_record_new_full_sizes;

tl_writer_t tl_record_w;
static tl_stack_table_t stacks;
static const tl_config_t *cfg;
static pthread_key_t thread_key;
static bool thread_key_ok;
/* Whether this trace's OPTIONS named the process's CPython. */
static bool python_noted;

/* What a written record counts for, besides its being written. */
enum { AS_OTHER = 0, AS_ALLOC = 1, AS_FREE = 2 };

/* The one place a record's outcome is counted: failed = dropped; else an
 * ALLOC counts (a storage too), a FREE counts, a REALLOC counts as both. */
static void tally(bool failed, unsigned as, uint64_t kind)
{
    tl_counters_t *s = tl_tsd.slot;
    if (failed) {
        tl_counters_add(&s->dropped, 1);
        return;
    }
    if (as & AS_ALLOC) {
        tl_counters_add(&s->allocs, 1);
        if (tl_kind_is_storage(kind)) tl_counters_add(&s->storages, 1);
    }
    if (as & AS_FREE) tl_counters_add(&s->frees, 1);
}

static bool dropped_if(bool failed)
{
    tally(failed, AS_OTHER, 0);
    return failed;
}

void tl_record_thread_begin(void)
{
    if (tl_tsd.cur.gen == tl_record_w.gen && tl_tsd.slot) return;
    tl_wcursor_reset(&tl_tsd.cur, &tl_record_w, (uint32_t)gettid());
    tl_tsd.slot = tl_counters_take();
    tl_tsd.clk.left = 0;
    if (!tl_blocks_tag) tl_blocks_tag_take();
    /* Round 1 of the key's destructor (thread_end); see there. */
    if (thread_key_ok) pthread_setspecific(thread_key, (void *)(uintptr_t)1);
    tl_deadstacks_thread_begin();
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    dropped_if(tl_writer_thread(&tl_record_w, &tl_tsd.cur, tl_clock_now(), tl_tsd.cur.tid, name,
                                strlen(name)));
}

/* A thread ends (its key destructors run): its counter slot and chunk room
 * go to the next new thread (many short threads cost neither a 32 KiB chunk
 * nor a slot each). Re-armed up to glibc's PTHREAD_DESTRUCTOR_ITERATIONS so
 * it runs after later keys' destructors; what the thread does after that
 * (rare) goes to the shared last slot and a chunk taken again. */
static void thread_end(void *round)
{
    uintptr_t r = (uintptr_t)round;
    if (r < PTHREAD_DESTRUCTOR_ITERATIONS) {
        pthread_setspecific(thread_key, (void *)(r + 1));
        return;
    }
    TL_GUARD_SCOPE;
    tl_deadstacks_thread_end();
    tl_counters_t *s = tl_tsd.slot;
    if (!s || tl_tsd.cur.gen != tl_record_w.gen) return;
    tl_wcursor_park(&tl_record_w, &tl_tsd.cur);
    tl_tsd.slot = TL_COUNTERS_SHARED;
    tl_counters_give(s);
    tl_blocks_tag_give();
}

bool tl_record_init(const tl_config_t *c)
{
    cfg = c;
    tl_record_mode = (int)c->mode;
    tl_record_stack_depth = c->stack_depth;
    if (tl_stack_table_init(&stacks, 16)) return true;
    thread_key_ok = pthread_key_create(&thread_key, thread_end) == 0;
    return false;
}

void tl_record_reset(void)
{
    tl_counters_reset();
    tl_tsd.slot = NULL;
    tl_tsd.cur.gen = 0;
    tl_stack_table_reset(&stacks);
    tl_live_reset(atomic_load(&tl_record_scan_on)); /* the parent's blocks: roots (live.h) */
    tl_blocks_tags_reset();
}

void tl_record_module(void *arg, const tl_module_info_t *m)
{
    (void)arg;
    dropped_if(tl_writer_module(&tl_record_w, &tl_tsd.cur, tl_clock_now(), m->base, m->start,
                                m->size, m->path, m->path_len, m->build_id, m->build_id_len));
    if (m->cudart_static) tl_record_cudart_static_note(m->path, m->path_len);
}

void tl_record_cudart_static_note(const char *who, size_t len)
{
    char t[TL_CUDART_STATIC_NOTE_MAX];
    tl_record_lineage(TL_REC_NOTE, (const uint64_t[1]){0}, t,
                      tl_cudart_static_note_text(who, len, t));
}

/* A Python frame seen for the first time: its PYFRAME record goes into this
 * thread's chunk before the STACK record that uses it. Paths and names are
 * cut at TL_PYFRAME_STR_MAX bytes so the record always fits a chunk. */
#define TL_PYFRAME_STR_MAX 1024
static void emit_pyframe(void *ctx, uint64_t id, uint64_t line, const char *file, size_t file_len,
                         const char *function, size_t function_len)
{
    (void)ctx;
    if (file_len > TL_PYFRAME_STR_MAX) file_len = TL_PYFRAME_STR_MAX;
    if (function_len > TL_PYFRAME_STR_MAX) function_len = TL_PYFRAME_STR_MAX;
    dropped_if(tl_writer_pyframe(&tl_record_w, &tl_tsd.cur, tl_clock_now(), id, line, file,
                                 file_len, function, function_len));
}

void tl_record_options(size_t n, const char **keys, const char **values)
{
    n += tl_pyframes_options(cfg->no_python_frames, keys + n, values + n);
    python_noted = tl_pyframes_cpython() != NULL;
    dropped_if(tl_writer_options(&tl_record_w, &tl_tsd.cur, tl_clock_now(), n, keys, values));
}

/* A libpython dlopen'ed after start (embedding) is found at the next module
 * rescan, one thread at a time; a CPython found then gets its own OPTIONS. */
static void pyframes_retry(void)
{
    static atomic_flag busy = ATOMIC_FLAG_INIT;
    if (cfg->no_python_frames || tl_pyframes_enabled() || atomic_flag_test_and_set(&busy)) return;
    tl_pyframes_init();
    if (!python_noted && tl_pyframes_cpython()) {
        const char *keys[3], *values[3];
        tl_record_options(0, keys, values);
    }
    atomic_flag_clear(&busy);
}

/* Intern (and write, the first time) frames[0..n) with the thread's Python
 * frames merged in at the interpreter's eval loop (pyframes.h); its id. */
static uint64_t record_frames(const uint64_t *frames, size_t n)
{
    /* The capture mapped this thread's buffers (or frames is empty). */
    tl_stack_buf_t *b = tl_stack_tbuf;
    uint64_t *merged = b ? b->merged : NULL;
    /* A native stack the unwind cache answered (or just took). */
    tl_ucache_entry_t *e = tl_stack_cache_entry_of(frames);
    uint64_t gen = atomic_load_explicit(&tl_stack_gen, memory_order_relaxed);
    /* Its chain seen before under the same Python frames: the merged
     * stack's id, without merging and hashing it again (a C++ new under
     * torch: a training step's few hundred stacks, every step). */
    uint64_t mkey = 0, id;
    if (e && merged) {
        uint64_t pk = tl_pyframes_key();
        mkey = pk ? tl_stack_merged_key(e, pk) : 0;
        if (mkey && !tl_stack_merged_get(b, mkey, gen, &id)) return id;
    }
    size_t nm =
        merged ? tl_pyframes_merge(frames, n, merged, TL_REC_MAX_FRAMES, emit_pyframe, NULL) : 0;
    /* Python frames only asked for and none (a C thread): the native stack. */
    if (nm == 0 && !frames && merged) return tl_record_stack(); /* frames non-NULL there */
    bool native_only = nm == 0;
    if (!native_only) {
        frames = merged;
        n = nm;
        e = NULL;
    }
    /* A native stack from the cache keeps its id in the entry. */
    if (e && e->gen == gen) return e->stack_id;
    bool is_new;
    id = tl_stack_intern(&stacks, frames, n, &is_new);
    if (e) tl_stack_cache_set_id(e, id, gen);
    if (is_new) {
        for (size_t i = 0; i < n; i++) {
            if (!(frames[i] & TL_FRAME_PY_TAG) && !tl_modules_contains(frames[i])) {
                tl_modules_scan(false, true, tl_record_module, NULL);
                if (native_only) pyframes_retry();
                break;
            }
        }
        dropped_if(tl_stack_delta_write(&tl_record_w, &tl_tsd.cur, tl_clock_now(), id, frames, n,
                                        !cfg->no_stack_delta));
    }
    if (mkey) tl_stack_merged_put(b, mkey, id, gen);
    return id;
}

uint64_t tl_record_stack(void)
{
    const uint64_t *frames;
    size_t n = tl_stack_capture(&frames, cfg->stack_depth);
    return record_frames(frames, n);
}

void tl_record_sample_restart(uint64_t seed)
{
    tl_tsd.rng = seed ? seed : 1;
    tl_tsd.sample_left = tl_sample_next(&tl_tsd.rng, cfg->sample_bytes);
    tl_tsd.sample_ready = true;
}

/* Outside `all` mode: is this block to be recorded? Counts plain blocks by
 * size class (unless the hooks' fast path did), runs the byte sampler;
 * *weight = the bytes the record stands for (size / P(sampled), or size). */
static bool is_selected(uint64_t kind, size_t size, uint64_t *weight)
{
    *weight = size;
    if (tl_kind_is_storage(kind)) {
        if (tl_record_storage_opens_cxx(kind)) /* record.h: after `import torch` for numpy's */
            atomic_store_explicit(&tl_record_cxx_full, true, memory_order_relaxed);
        return true;
    }
    bool hit = tl_tsd.sample_hit;
    tl_tsd.sample_hit = false;
    if (!tl_tsd.sample_ready)
        tl_record_sample_restart(((uint64_t)tl_tsd.cur.tid << 32) ^ __builtin_ia32_rdtsc() ^
                                 (uintptr_t)&tl_tsd);
    if (!hit) {
        unsigned c = tl_size_class(size);
        tl_counters_add(&tl_tsd.slot->cls_count[c], 1);
        tl_counters_add(&tl_tsd.slot->cls_bytes[c], size);
        if (kind == TL_KIND_NEW_FULL) return true; /* recorded, not sampled: weight = size */
        if (size >= TL_CONFIG_BIG_MIN)
            return true; /* always recorded, not sampled: weight = size */
        tl_tsd.sample_left -= (int64_t)size;
        if (tl_tsd.sample_left > 0) return false;
    }
    /* Memoryless: the overshoot is dropped and a fresh interval drawn. */
    tl_tsd.sample_left = tl_sample_next(&tl_tsd.rng, cfg->sample_bytes);
    *weight = tl_sample_weight(size, cfg->sample_bytes);
    return true;
}

/* Outside `all` mode: a selected block's entry e enters the live table.
 * true = the table is full around it (not entered). */
static bool enter_live(tl_live_entry_t *e, uint64_t kind, const void *ptr, size_t size,
                       uint64_t weight, uint64_t id, uint64_t now)
{
    *e = (tl_live_entry_t){.ptr = (uintptr_t)ptr,
                           .size = size,
                           .weight = weight,
                           .stack_id = id,
                           .ts = now,
                           .kind = (uint32_t)kind};
    return tl_live_insert(e);
}

/* The stack of a block is_selected chose: numpy's buffers' Python frames
 * only (their native ones are numpy's; BENCHMARKS.md W8), else a capture. */
static uint64_t selected_stack(uint64_t kind)
{
    return kind == TL_KIND_STORAGE_NUMPY ? tl_record_py_stack() : tl_record_stack();
}

/* Outside `all` mode: record a selected block (the ALLOC record with stack
 * id, or in aggregate mode the site totals). Every block enters the live
 * table: a plain one so that its free is recorded, a storage so that a
 * report point can ask whether it is still live (tl_live_storages_query).
 * A plain block the full table has no room for is not recorded at all; a
 * storage is, and is marked untracked. */
static void record_selected(uint64_t kind, const void *ptr, size_t size, uint64_t weight,
                            uint64_t id)
{
    uint64_t now = kind == TL_KIND_STORAGE_NUMPY ? tl_record_py_time() : tl_clock_now();
    tl_live_entry_t e;
    bool aggregate = tl_record_mode == TL_MODE_AGGREGATE, storage = tl_kind_is_storage(kind);
    if (enter_live(&e, kind, ptr, size, weight, id, now)) {
        if (aggregate || !storage) {
            dropped_if(true);
            return;
        }
        tl_live_storage_missed();
    }
    if (aggregate) {
        tl_ckpt_set_max_stack(id);
        tl_ckpt_on_alloc(&e, now);
        tally(false, AS_ALLOC, kind);
        tl_ckpt_tick(now);
        return;
    }
    tally(tl_writer_alloc(&tl_record_w, &tl_tsd.cur, now, kind, (uintptr_t)ptr, size, id), AS_ALLOC,
          kind);
}

static void emit_leak_kind(void *ctx, uint64_t ptr, unsigned kind)
{
    (void)ctx;
    uint64_t v[2] = {ptr, kind};
    tl_record_lineage(TL_REC_LEAKKIND, v, NULL, 0);
}

void tl_record_leak_scan(void)
{
    uint64_t v[6];
    if (!tl_record_scan_classify(emit_leak_kind, v)) tl_record_lineage(TL_REC_LEAKSCAN, v, NULL, 0);
}

/* `all` mode: the ALLOC record of a block whose stack has id id. */
static void record_all(uint64_t kind, const void *ptr, size_t size, uint64_t id)
{
    /* The time is taken after the block exists (see writer.h). */
    tally(
        tl_writer_alloc(&tl_record_w, &tl_tsd.cur, tl_clock_now(), kind, (uintptr_t)ptr, size, id),
        AS_ALLOC, kind);
    tl_record_scan_track(ptr, size);
}

void tl_record_alloc(uint64_t kind, const void *ptr, size_t size)
{
    int saved = errno;
    tl_record_thread_begin();
    if (tl_record_mode != TL_MODE_ALL) {
        uint64_t weight;
        if (is_selected(kind, size, &weight))
            record_selected(kind, ptr, size, weight, selected_stack(kind));
    } else {
        record_all(kind, ptr, size, tl_record_stack());
    }
    errno = saved;
}

void tl_record_alloc_captured(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                              size_t n)
{
    int saved = errno;
    tl_record_thread_begin();
    uint64_t weight;
    if (tl_record_mode == TL_MODE_ALL)
        record_all(kind, ptr, size, record_frames(frames, n));
    else if (is_selected(kind, size, &weight))
        record_selected(kind, ptr, size, weight, record_frames(frames, n));
    errno = saved;
}

void tl_record_alloc_stack(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                           size_t n, bool foreign)
{
    tl_record_thread_begin();
    uint64_t id = record_frames(frames, n);
    tally(tl_writer_alloc(&tl_record_w, &tl_tsd.cur, tl_clock_event(&tl_tsd.clk, foreign), kind,
                          (uintptr_t)ptr, size, id),
          AS_ALLOC, kind);
    if (tl_record_mode == TL_MODE_ALL) tl_record_scan_track(ptr, size);
}

static void device_record(bool is_free, uint64_t kind, uint64_t device, uint64_t stream,
                          uint64_t ptr, uint64_t size, uint64_t stack_id, uint64_t ts)
{
    if (tl_record_mode == TL_MODE_AGGREGATE) { /* totals and live sets (checkpoint.h) */
        if (!is_free)
            tally(tl_ckpt_dev_alloc(kind, ptr, size, device, stack_id, ts), AS_ALLOC, kind);
        else if (!tl_ckpt_dev_free(kind, ptr, ts))
            tally(false, AS_FREE, kind);
        tl_ckpt_tick(tl_clock_now());
        return;
    }
    if (is_free)
        tally(tl_writer_dfree(&tl_record_w, &tl_tsd.cur, ts, kind, ptr, device), AS_FREE, kind);
    else
        tally(tl_writer_dalloc(&tl_record_w, &tl_tsd.cur, ts, kind, ptr, size, stack_id, device,
                               stream),
              AS_ALLOC, kind);
}

uint64_t tl_record_py_stack(void)
{
    /* The merge needs the thread's capture buffers, mapped by a full capture. */
    return tl_stack_tbuf ? record_frames(NULL, 0) : tl_record_stack();
}

void tl_record_dalloc(uint64_t kind, const void *ptr, size_t size, uint64_t device, uint64_t stream)
{
    int saved = errno;
    tl_record_thread_begin();
    uint64_t id = tl_record_stack();
    device_record(false, kind, device, stream, (uintptr_t)ptr, size, id, tl_clock_now());
    errno = saved;
}

void tl_record_dfree(uint64_t kind, const void *ptr, uint64_t device)
{
    int saved = errno;
    tl_record_thread_begin();
    device_record(true, kind, device, 0, (uintptr_t)ptr, 0, 0, tl_clock_now());
    errno = saved;
}

static void write_free(uint64_t kind, const void *ptr, uint64_t ts)
{
    /* Called before the block is released, so no reuse precedes it in time. */
    tally(tl_writer_free(&tl_record_w, &tl_tsd.cur, ts, kind, (uintptr_t)ptr), AS_FREE, kind);
}

/* Outside `all` mode: a block of the live table (its entry e) goes away. */
static void forget_live(uint64_t kind, const void *ptr, const tl_live_entry_t *e)
{
    if (tl_record_mode == TL_MODE_AGGREGATE) {
        tl_ckpt_on_free(e);
        tally(false, AS_FREE, kind);
    } else {
        write_free(kind, ptr, tl_clock_now());
    }
}

void tl_record_free_block(uint64_t kind, const void *ptr, bool foreign)
{
    int saved = errno;
    tl_record_thread_begin();
    if (tl_record_mode == TL_MODE_ALL) {
        tl_record_scan_untrack(ptr);
        write_free(kind, ptr, tl_clock_event(&tl_tsd.clk, foreign));
        errno = saved;
        return;
    }
    tl_counters_add(&tl_tsd.slot->frees_all, 1);
    tl_live_entry_t e;
    bool aggregate = tl_record_mode == TL_MODE_AGGREGATE;
    bool in_table = !tl_live_remove((uintptr_t)ptr, &e); /* storages too: the table counts them */
    if (!aggregate && tl_kind_is_storage(kind)) {
        /* a default-mode storage: recorded even when the table had no room */
        write_free(kind, ptr, kind == TL_KIND_STORAGE_NUMPY ? tl_record_py_time() : tl_clock_now());
    } else if (in_table) {
        forget_live(kind, ptr, &e);
        if (aggregate) tl_ckpt_tick(tl_clock_now());
    }
    errno = saved;
}

/* Outside `all` mode. A REALLOC record only when both blocks are recorded
 * in the default mode; else the old block's free and the new block's
 * allocation are recorded as what each of them is. */
static void realloc_selected(const void *old_ptr, const void *new_ptr, size_t size)
{
    tl_counters_add(&tl_tsd.slot->frees_all, 1);
    tl_live_entry_t old;
    bool old_rec = tl_live_maybe(old_ptr) && !tl_live_remove((uintptr_t)old_ptr, &old);
    uint64_t weight;
    bool new_rec = is_selected(TL_KIND_MALLOC, size, &weight);
    if (tl_record_mode == TL_MODE_AGGREGATE || !old_rec || !new_rec) {
        if (old_rec) forget_live(TL_KIND_FREE, old_ptr, &old);
        if (new_rec) record_selected(TL_KIND_MALLOC, new_ptr, size, weight, tl_record_stack());
        return;
    }
    uint64_t id = tl_record_stack();
    uint64_t now = tl_clock_now();
    tl_live_entry_t e;
    if (enter_live(&e, TL_KIND_MALLOC, new_ptr, size, weight, id, now)) {
        write_free(TL_KIND_FREE, old_ptr, tl_clock_now());
        return;
    }
    tally(tl_writer_realloc(&tl_record_w, &tl_tsd.cur, now, (uintptr_t)old_ptr, (uintptr_t)new_ptr,
                            size, id),
          AS_ALLOC | AS_FREE, TL_KIND_MALLOC);
}

void tl_record_realloc(const void *old_ptr, const void *new_ptr, size_t size)
{
    int saved = errno;
    tl_record_thread_begin();
    if (tl_record_mode != TL_MODE_ALL) {
        realloc_selected(old_ptr, new_ptr, size);
    } else {
        uint64_t id = tl_record_stack();
        /* Called while both blocks exist: after the new one, before freeing the old. */
        tally(tl_writer_realloc(&tl_record_w, &tl_tsd.cur, tl_clock_now(), (uintptr_t)old_ptr,
                                (uintptr_t)new_ptr, size, id),
              AS_ALLOC | AS_FREE, TL_KIND_MALLOC);
        tl_record_scan_untrack(old_ptr);
        tl_record_scan_track(new_ptr, size);
    }
    errno = saved;
}

/* The exact per-class counters as COUNT records (not in `all` mode). */
static void write_counts(void)
{
    uint64_t cnt[TL_REC_COUNT_CLASSES], bytes[TL_REC_COUNT_CLASSES], frees;
    tl_counters_classes(cnt, bytes, &frees);
    for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
        if (!cnt[c]) continue;
        uint64_t v[3] = {c, cnt[c], bytes[c]};
        dropped_if(
            tl_writer_lineage(&tl_record_w, &tl_tsd.cur, tl_clock_now(), TL_REC_COUNT, v, NULL, 0));
    }
    uint64_t v[3] = {TL_REC_COUNT_FREES, frees, 0};
    dropped_if(
        tl_writer_lineage(&tl_record_w, &tl_tsd.cur, tl_clock_now(), TL_REC_COUNT, v, NULL, 0));
}

void tl_record_end(uint64_t reason, int status)
{
    /* A full disk: the END and the counters go into the chunk kept for them. */
    tl_writer_take_reserve(&tl_record_w, &tl_tsd.cur, tl_clock_now());
    if (cfg->mode == TL_MODE_AGGREGATE)
        tl_ckpt_flush(tl_clock_now(), atomic_load(&stacks.next_id), false);
    if (cfg->mode != TL_MODE_ALL) write_counts();
    uint64_t a, f, s, d;
    tl_counters_totals(&a, &f, &s, &d);
    tl_writer_end(&tl_record_w, &tl_tsd.cur, tl_clock_now(), reason, status, a, f, s, d);
}

/* --- lineage API support (api.c); callers hold the guard --- */

bool tl_record_api_begin(void)
{
    if (!tl_agent_recording()) return true;
    tl_record_thread_begin();
    return false;
}

void tl_record_lineage(tl_rec_type_t type, const uint64_t *ints, const char *str, size_t len)
{
    dropped_if(tl_writer_lineage(&tl_record_w, &tl_tsd.cur, tl_clock_now(), type, ints, str, len));
}

bool tl_record_mark(uint64_t id, const char *name, size_t len)
{
    /* A Python script's end point: its leak kinds and aggregate mode's live set are
     * taken there, before the interpreter's finalization drops (or frees) what it held. */
    if (len == 10 && !memcmp(name, "script_end", 10)) {
        tl_record_leak_scan();
        if (cfg->mode == TL_MODE_AGGREGATE)
            tl_ckpt_flush(tl_clock_now(), atomic_load(&stacks.next_id), true);
    }
    return dropped_if(tl_writer_mark(&tl_record_w, &tl_tsd.cur, tl_clock_now(), id, name, len));
}

uint64_t tl_record_api_frame(const char *file, size_t file_len, const char *function,
                             size_t function_len, uint64_t line)
{
    static _Atomic uint64_t next_frame = UINT64_C(1) << 32;
    uint64_t id = atomic_fetch_add_explicit(&next_frame, 1, memory_order_relaxed);
    if (file_len > TL_PYFRAME_STR_MAX) file_len = TL_PYFRAME_STR_MAX;
    if (function_len > TL_PYFRAME_STR_MAX) function_len = TL_PYFRAME_STR_MAX;
    bool failed = tl_writer_pyframe(&tl_record_w, &tl_tsd.cur, tl_clock_now(), id, line, file,
                                    file_len, function, function_len);
    dropped_if(failed);
    return failed ? 0 : TL_FRAME_PY_TAG | id;
}

uint64_t tl_record_stack_of(const uint64_t *frames, size_t n)
{
    if (n > TL_REC_MAX_FRAMES) n = TL_REC_MAX_FRAMES;
    bool is_new;
    uint64_t id = tl_stack_intern(&stacks, frames, n, &is_new);
    if (is_new)
        dropped_if(tl_stack_delta_write(&tl_record_w, &tl_tsd.cur, tl_clock_now(), id, frames, n,
                                        !cfg->no_stack_delta));
    return id;
}

void tl_record_api_device(bool is_free, uint64_t kind, uint64_t device, uint64_t stream,
                          uint64_t ptr, uint64_t size, uint64_t stack_id, uint64_t ts_ns)
{
    uint64_t now = tl_clock_now();
    if (!ts_ns || ts_ns > now) ts_ns = now;
    if (tl_writer_rewind(&tl_record_w, &tl_tsd.cur, ts_ns)) {
        dropped_if(true);
        return;
    }
    device_record(is_free, kind, device, stream, ptr, size, stack_id, ts_ns);
}
