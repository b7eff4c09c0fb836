/* agent.c - the agent's lifecycle and event recording: init from the
 * environment, per-thread counters, END record, fork and exec handling.
 *
 * Runs inside someone else's program: no stdio, getenv only in init, messages
 * through write(2). Everything here runs with the reentrancy guard raised.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/agent.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent/api.h"
#include "agent/checkpoint.h"
#include "agent/clock.h"
#include "agent/config.h"
#include "agent/endsig.h"
#include "agent/live.h"
#include "agent/modules.h"
#include "agent/pyframes.h"
#include "agent/stack.h"
#include "common/trace_format.h"

__thread tl_tsd_t tl_tsd __attribute__((tls_model("initial-exec")));
atomic_int tl_agent_state;

tl_counters_t tl_agent_slots[TL_SLOTS];
#define slots tl_agent_slots
int tl_agent_mode;
unsigned tl_agent_stack_depth = TL_CONFIG_DEPTH_DEFAULT;
atomic_bool tl_agent_cxx_full;
static atomic_uint nslots;

static tl_writer_t writer;
static tl_stack_table_t stacks;
static tl_config_t cfg;
static uint64_t self_pid, self_ppid;
static uint32_t exec_seq;
static atomic_int exit_status = -1;
static char cwd[4096];
static char exe[4096];
static char trace_file[TL_CONFIG_PATH_MAX]; /* the open trace's path, for the API */
static char cmdline[16384];
static const char *argv_v[TL_REC_MAX_ARGV];
static size_t argc_v;
static char exec_env[96]; /* in environ via putenv: rewritten in place after fork */
static char depth_str[8];
static char sample_str[24], big_str[24];
static _Atomic(void *) real_exit, real_sigaction; /* real_fn() */

static uint64_t now_ns(int clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mono(void)
{
    return tl_clock_now();
}

/* Decimal v into buf (at least 21 bytes). */
static void fmt_dec(char *buf, uint64_t v)
{
    char tmp[24];
    size_t nd = 0;
    do
        tmp[nd++] = (char)('0' + v % 10);
    while (v /= 10);
    for (size_t i = 0; i < nd; i++)
        buf[i] = tmp[nd - 1 - i];
    buf[nd] = '\0';
}

/* Write to stderr without stdio or allocation, in one writev: a few words
 * of stack (this may run on a small thread stack, after fork). */
static void say(const char *a, const char *b, const char *c)
{
    const char *parts[] = {"tensorleak: ", a, b, c, "\n"};
    struct iovec iov[5];
    for (size_t i = 0; i < 5; i++) {
        iov[i].iov_base = (void *)(parts[i] ? parts[i] : "");
        iov[i].iov_len = parts[i] ? strlen(parts[i]) : 0;
    }
    if (writev(2, iov, 5) < 0) {
        /* nothing else to do */
    }
}

static void add(_Atomic uint64_t *c, uint64_t v)
{
    if (tl_tsd.slot == &slots[TL_SLOTS - 1])
        atomic_fetch_add_explicit(c, v, memory_order_relaxed);
    else
        tl_ctr_add(c, v);
}

static void bump(_Atomic uint64_t *c)
{
    add(c, 1);
}

/* Counter slots of ended threads, for the next new ones (a spin lock: taken
 * once per thread start and end; the fork child starts with none free). */
static unsigned free_slot[TL_SLOTS];
static unsigned nfree_slots;
static atomic_flag free_slot_lock = ATOMIC_FLAG_INIT;
static pthread_key_t thread_key;
static bool thread_key_ok;

static void free_slots_lock(void)
{
    while (atomic_flag_test_and_set_explicit(&free_slot_lock, memory_order_acquire))
        __builtin_ia32_pause();
}

static void free_slots_unlock(void)
{
    atomic_flag_clear_explicit(&free_slot_lock, memory_order_release);
}

/* Slots in use: the first n handed out, and the shared last one, which an
 * ended thread uses (thread_end) before that many threads ever existed. */
static unsigned slots_in_use(void)
{
    unsigned n = atomic_load(&nslots);
    return n < TL_SLOTS - 1 ? n : TL_SLOTS - 1;
}

static tl_counters_t *slot_take(void)
{
    free_slots_lock();
    unsigned i = nfree_slots ? free_slot[--nfree_slots] : TL_SLOTS;
    free_slots_unlock();
    if (i == TL_SLOTS) i = atomic_fetch_add_explicit(&nslots, 1, memory_order_relaxed);
    return &slots[i < TL_SLOTS ? i : TL_SLOTS - 1];
}

/* Bind this thread to the current trace: cursor, counter slot, THREAD record. */
static void thread_begin(void)
{
    if (tl_tsd.cur.gen == writer.gen && tl_tsd.slot) return;
    tl_wcursor_reset(&tl_tsd.cur, &writer, (uint32_t)gettid());
    tl_tsd.slot = slot_take();
    /* Round 1 of the key's destructor (thread_end); see there. */
    if (thread_key_ok) pthread_setspecific(thread_key, (void *)(uintptr_t)1);
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    if (tl_writer_thread(&writer, &tl_tsd.cur, mono(), tl_tsd.cur.tid, name, strlen(name)))
        bump(&tl_tsd.slot->dropped);
}

/* A thread ends (its pthread key destructors run): its counter slot and
 * the room left in its chunk go to the next new thread, so that many short
 * threads cost neither a 32 KiB chunk nor a slot each. The destructor
 * re-arms itself up to the last of glibc's PTHREAD_DESTRUCTOR_ITERATIONS
 * rounds so that it runs after the destructors of keys created later. What
 * the thread does after that (rare) is counted in the shared last slot and
 * written to a chunk taken again. */
static void thread_end(void *round)
{
    uintptr_t r = (uintptr_t)round;
    if (r < PTHREAD_DESTRUCTOR_ITERATIONS) {
        pthread_setspecific(thread_key, (void *)(r + 1));
        return;
    }
    TL_GUARD_SCOPE;
    tl_counters_t *s = tl_tsd.slot;
    if (!s || tl_tsd.cur.gen != writer.gen) return;
    tl_wcursor_park(&writer, &tl_tsd.cur);
    tl_tsd.slot = &slots[TL_SLOTS - 1];
    if (s == &slots[TL_SLOTS - 1]) return;
    free_slots_lock();
    free_slot[nfree_slots++] = (unsigned)(s - slots);
    free_slots_unlock();
}

static void emit_module(void *arg, const tl_module_info_t *m)
{
    (void)arg;
    if (tl_writer_module(&writer, &tl_tsd.cur, mono(), m->base, m->start, m->size, m->path,
                         m->path_len, m->build_id, m->build_id_len))
        bump(&tl_tsd.slot->dropped);
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
    if (tl_writer_pyframe(&writer, &tl_tsd.cur, mono(), id, line, file, file_len, function,
                          function_len))
        bump(&tl_tsd.slot->dropped);
}

/* The OPTIONS pairs that describe the process's CPython (docs/trace-format.md):
 * python_frames on/off/unsupported, python (its version) and python_build
 * (why a 3.10-3.13 is not read). Fills keys/values, returns the count (1
 * when the process has no CPython). */
static size_t python_options(const char **keys, const char **values)
{
    const tl_pyframes_cpython_t *py = tl_pyframes_cpython();
    keys[0] = "python_frames";
    values[0] = tl_pyframes_enabled()                           ? "on"
                : py && !py->supported && !cfg.no_python_frames ? "unsupported"
                                                                : "off";
    if (!py) return 1;
    keys[1] = "python";
    values[1] = py->version;
    if (!py->build) return 2;
    keys[2] = "python_build";
    values[2] = py->build;
    return 3;
}

/* Whether this trace's OPTIONS named the process's CPython. */
static bool python_noted;

/* A libpython dlopen'ed after start (an embedding program) is found at the
 * next module rescan; one thread at a time tries. A CPython found then gets
 * an OPTIONS record of its own. */
static void pyframes_retry(void)
{
    static atomic_flag busy = ATOMIC_FLAG_INIT;
    if (cfg.no_python_frames || tl_pyframes_enabled() || atomic_flag_test_and_set(&busy)) return;
    tl_pyframes_init();
    if (!python_noted && tl_pyframes_cpython()) {
        const char *keys[3], *values[3];
        size_t n = python_options(keys, values);
        python_noted = true;
        if (tl_writer_options(&writer, &tl_tsd.cur, mono(), n, keys, values))
            bump(&tl_tsd.slot->dropped);
    }
    atomic_flag_clear(&busy);
}

/* Capture, intern and (first time) write the caller's stack, with the
 * thread's Python frames merged in at the interpreter's eval loop (pyframes.h).
 * Returns its id. */
static uint64_t record_frames(const uint64_t *frames, size_t n)
{
    /* The capture mapped this thread's buffers (or frames is empty). */
    uint64_t *merged = tl_stack_tbuf ? tl_stack_tbuf->merged : NULL;
    size_t nm =
        merged ? tl_pyframes_merge(frames, n, merged, TL_REC_MAX_FRAMES, emit_pyframe, NULL) : 0;
    bool native_only = nm == 0;
    if (!native_only) {
        frames = merged;
        n = nm;
    }
    bool is_new;
    uint64_t id = tl_stack_intern(&stacks, frames, n, &is_new);
    if (!is_new) return id;
    for (size_t i = 0; i < n; i++) {
        if (!(frames[i] & TL_FRAME_PY_TAG) && !tl_modules_contains(frames[i])) {
            tl_modules_scan(false, true, emit_module, NULL);
            if (native_only) pyframes_retry();
            break;
        }
    }
    if (tl_writer_stack(&writer, &tl_tsd.cur, mono(), id, frames, n)) bump(&tl_tsd.slot->dropped);
    return id;
}

static uint64_t record_stack(void)
{
    const uint64_t *frames;
    size_t n = tl_stack_capture(&frames, cfg.stack_depth);
    return record_frames(frames, n);
}

/* Outside `all` mode: is this block to be recorded? Counts plain blocks by
 * size class (unless the hooks' fast path did) and runs the thread's byte
 * sampler; *weight = the bytes the record stands for (size / P(sampled)
 * for a sampled block, else size). */
static bool select_block(uint64_t kind, size_t size, uint64_t *weight)
{
    *weight = size;
    if (tl_kind_is_storage(kind)) {
        if (kind == TL_KIND_STORAGE_C10)
            atomic_store_explicit(&tl_agent_cxx_full, true, memory_order_relaxed);
        return true;
    }
    bool hit = tl_tsd.sample_hit;
    tl_tsd.sample_hit = false;
    if (!tl_tsd.sample_ready) {
        tl_tsd.rng = ((uint64_t)tl_tsd.cur.tid << 32) ^ __builtin_ia32_rdtsc() ^ (uintptr_t)&tl_tsd;
        tl_tsd.sample_left = tl_sample_next(&tl_tsd.rng, cfg.sample_bytes);
        tl_tsd.sample_ready = true;
    }
    if (!hit) {
        unsigned c = tl_size_class(size);
        add(&tl_tsd.slot->cls_count[c], 1);
        add(&tl_tsd.slot->cls_bytes[c], size);
        if (kind == TL_KIND_NEW_FULL) return true; /* recorded, not sampled: weight = size */
        if (size >= TL_CONFIG_BIG_MIN)
            return true; /* always recorded, not sampled: weight = size */
        tl_tsd.sample_left -= (int64_t)size;
        if (tl_tsd.sample_left > 0) return false;
    }
    /* Memoryless: the overshoot is dropped and a fresh interval drawn. */
    tl_tsd.sample_left = tl_sample_next(&tl_tsd.rng, cfg.sample_bytes);
    *weight = tl_sample_weight(size, cfg.sample_bytes);
    return true;
}

/* Outside `all` mode: record a selected block (its stack, then the ALLOC
 * record or, in aggregate mode, the site totals). Plain blocks (and every
 * block in aggregate mode) enter the live table so that their free is
 * recorded; a default-mode storage's free is recorded by its own hook. */
static void record_selected(uint64_t kind, const void *ptr, size_t size, uint64_t weight)
{
    uint64_t id = record_stack();
    uint64_t now = tl_clock_now();
    tl_live_entry_t e = {.ptr = (uintptr_t)ptr,
                         .size = size,
                         .weight = weight,
                         .stack_id = id,
                         .ts = now,
                         .kind = (uint32_t)kind};
    bool aggregate = tl_agent_mode == TL_MODE_AGGREGATE;
    if ((aggregate || !tl_kind_is_storage(kind)) && tl_live_insert(&e)) {
        bump(&tl_tsd.slot->dropped); /* table full: neither the block nor its free */
        return;
    }
    if (aggregate) {
        tl_ckpt_set_max_stack(id);
        tl_ckpt_on_alloc(&e, now);
        bump(&tl_tsd.slot->allocs);
        if (tl_kind_is_storage(kind)) bump(&tl_tsd.slot->storages);
        tl_ckpt_tick(now);
        return;
    }
    if (tl_writer_alloc(&writer, &tl_tsd.cur, now, kind, (uintptr_t)ptr, size, id)) {
        bump(&tl_tsd.slot->dropped);
    } else {
        bump(&tl_tsd.slot->allocs);
        if (tl_kind_is_storage(kind)) bump(&tl_tsd.slot->storages);
    }
}

void tl_agent_on_alloc(uint64_t kind, const void *ptr, size_t size)
{
    int saved = errno;
    thread_begin();
    if (tl_agent_mode != TL_MODE_ALL) {
        uint64_t weight;
        if (tl_tsd.force_full) {
            tl_tsd.force_full = false;
            if (size < TL_CONFIG_BIG_MIN && kind == TL_KIND_MALLOC) kind = TL_KIND_NEW_FULL;
        }
        if (select_block(kind, size, &weight)) record_selected(kind, ptr, size, weight);
        errno = saved;
        return;
    }
    uint64_t id = record_stack();
    /* The time is taken after the block exists (see writer.h). */
    if (tl_writer_alloc(&writer, &tl_tsd.cur, mono(), kind, (uintptr_t)ptr, size, id)) {
        bump(&tl_tsd.slot->dropped);
    } else {
        bump(&tl_tsd.slot->allocs);
        if (tl_kind_is_storage(kind)) bump(&tl_tsd.slot->storages);
    }
    errno = saved;
}

void tl_agent_on_alloc_stack(uint64_t kind, const void *ptr, size_t size, const uint64_t *frames,
                             size_t n)
{
    thread_begin();
    uint64_t id = record_frames(frames, n);
    if (tl_writer_alloc(&writer, &tl_tsd.cur, mono(), kind, (uintptr_t)ptr, size, id)) {
        bump(&tl_tsd.slot->dropped);
    } else {
        bump(&tl_tsd.slot->allocs);
        if (tl_kind_is_storage(kind)) bump(&tl_tsd.slot->storages);
    }
}

static void write_free(uint64_t kind, const void *ptr)
{
    /* Called before the block is released, so no reuse precedes it in time. */
    if (tl_writer_free(&writer, &tl_tsd.cur, mono(), kind, (uintptr_t)ptr))
        bump(&tl_tsd.slot->dropped);
    else
        bump(&tl_tsd.slot->frees);
}

void tl_agent_on_free(uint64_t kind, const void *ptr)
{
    int saved = errno;
    thread_begin();
    if (tl_agent_mode == TL_MODE_ALL) {
        write_free(kind, ptr);
        errno = saved;
        return;
    }
    bump(&tl_tsd.slot->frees_all);
    tl_live_entry_t e;
    bool recorded = tl_live_remove((uintptr_t)ptr, &e);
    if (tl_agent_mode == TL_MODE_AGGREGATE) {
        if (recorded) {
            tl_ckpt_on_free(&e);
            bump(&tl_tsd.slot->frees);
            tl_ckpt_tick(tl_clock_now());
        }
    } else if (recorded || tl_kind_is_storage(kind)) {
        write_free(kind, ptr);
    }
    errno = saved;
}

void tl_agent_on_realloc(const void *old_ptr, const void *new_ptr, size_t size)
{
    int saved = errno;
    thread_begin();
    if (tl_agent_mode != TL_MODE_ALL) {
        bump(&tl_tsd.slot->frees_all);
        tl_live_entry_t old;
        bool old_rec = tl_live_maybe(old_ptr) && tl_live_remove((uintptr_t)old_ptr, &old);
        uint64_t weight;
        bool new_rec = select_block(TL_KIND_MALLOC, size, &weight);
        if (tl_agent_mode == TL_MODE_AGGREGATE || !old_rec || !new_rec) {
            if (old_rec && tl_agent_mode == TL_MODE_AGGREGATE) {
                tl_ckpt_on_free(&old);
                bump(&tl_tsd.slot->frees);
            } else if (old_rec) {
                write_free(TL_KIND_FREE, old_ptr);
            }
            if (new_rec) record_selected(TL_KIND_MALLOC, new_ptr, size, weight);
            errno = saved;
            return;
        }
        /* Both recorded: one REALLOC, and the new block enters the table. */
        uint64_t id = record_stack();
        uint64_t now = tl_clock_now();
        tl_live_entry_t e = {.ptr = (uintptr_t)new_ptr,
                             .size = size,
                             .weight = weight,
                             .stack_id = id,
                             .ts = now,
                             .kind = TL_KIND_MALLOC};
        if (tl_live_insert(&e)) {
            write_free(TL_KIND_FREE, old_ptr);
            bump(&tl_tsd.slot->dropped);
        } else if (tl_writer_realloc(&writer, &tl_tsd.cur, now, (uintptr_t)old_ptr,
                                     (uintptr_t)new_ptr, size, id)) {
            bump(&tl_tsd.slot->dropped);
        } else {
            bump(&tl_tsd.slot->allocs);
            bump(&tl_tsd.slot->frees);
        }
        errno = saved;
        return;
    }
    uint64_t id = record_stack();
    /* Called while both blocks exist: after the new one, before freeing the old. */
    if (tl_writer_realloc(&writer, &tl_tsd.cur, mono(), (uintptr_t)old_ptr, (uintptr_t)new_ptr,
                          size, id)) {
        bump(&tl_tsd.slot->dropped);
    } else {
        bump(&tl_tsd.slot->allocs);
        bump(&tl_tsd.slot->frees);
    }
    errno = saved;
}

void tl_agent_counts(uint64_t *count, uint64_t *bytes, uint64_t *frees)
{
    memset(count, 0, TL_REC_COUNT_CLASSES * sizeof *count);
    memset(bytes, 0, TL_REC_COUNT_CLASSES * sizeof *bytes);
    *frees = 0;
    unsigned n = slots_in_use();
    for (unsigned i = 0; i <= n; i++) {
        if (i == n) i = TL_SLOTS - 1;
        for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
            count[c] += atomic_load_explicit(&slots[i].cls_count[c], memory_order_relaxed);
            bytes[c] += atomic_load_explicit(&slots[i].cls_bytes[c], memory_order_relaxed);
        }
        *frees += atomic_load_explicit(&slots[i].frees_all, memory_order_relaxed);
    }
}

void tl_agent_count_dropped(uint64_t n)
{
    if (tl_tsd.slot) add(&tl_tsd.slot->dropped, n);
}

/* The exact per-class counters as COUNT records (not in `all` mode, where
 * every allocation has its record). */
static void write_counts(void)
{
    uint64_t cnt[TL_REC_COUNT_CLASSES], bytes[TL_REC_COUNT_CLASSES], frees;
    tl_agent_counts(cnt, bytes, &frees);
    for (unsigned c = 0; c < TL_REC_COUNT_CLASSES; c++) {
        if (!cnt[c]) continue;
        uint64_t v[3] = {c, cnt[c], bytes[c]};
        if (tl_writer_lineage(&writer, &tl_tsd.cur, mono(), TL_REC_COUNT, v, NULL, 0))
            bump(&tl_tsd.slot->dropped);
    }
    uint64_t v[3] = {TL_REC_COUNT_FREES, frees, 0};
    if (tl_writer_lineage(&writer, &tl_tsd.cur, mono(), TL_REC_COUNT, v, NULL, 0))
        bump(&tl_tsd.slot->dropped);
}

static void read_cmdline(void)
{
    argc_v = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    size_t n = 0;
    ssize_t r;
    while (n < sizeof cmdline - 1 && (r = read(fd, cmdline + n, sizeof cmdline - 1 - n)) > 0)
        n += (size_t)r;
    close(fd);
    cmdline[n] = '\0';
    for (size_t i = 0; i < n && argc_v < TL_REC_MAX_ARGV;) {
        argv_v[argc_v++] = cmdline + i;
        i += strlen(cmdline + i) + 1;
    }
}

/* Open this process's trace and write its first records. true = failure. */
static bool trace_open(void)
{
    /* Static: only init and a fork child (one thread each) open a trace,
     * and the child may run on a thread's small stack. */
    static char path[TL_CONFIG_PATH_MAX];
    int err = -EEXIST;
    for (unsigned uniq = 0; uniq < 10000 && err == -EEXIST; uniq++) {
        if (tl_config_expand(cfg.output, cwd[0] ? cwd : NULL, self_pid, uniq, path, sizeof path)) {
            err = -ENAMETOOLONG;
            break;
        }
        tl_writer_hdr_t hdr = {.pid = self_pid,
                               .ppid = self_ppid,
                               .start_realtime_ns = now_ns(CLOCK_REALTIME),
                               .start_mono_ns = mono(),
                               .session = cfg.session,
                               .exec_seq = exec_seq};
        err = tl_writer_create(&writer, path, &hdr);
    }
    if (err) {
        /* strerrordesc_np: a static English string, no locale, no allocation. */
        const char *why = strerrordesc_np(-err);
        char msg[256] = ": ";
        strncat(msg, why ? why : "unknown error", sizeof msg - 3);
        say("cannot create trace ", path, msg);
        return true;
    }
    memcpy(trace_file, path, sizeof trace_file);
    thread_begin();
    if (tl_writer_process(&writer, &tl_tsd.cur, mono(), self_pid, self_ppid, exec_seq, exe,
                          strlen(exe), argc_v, argv_v))
        bump(&tl_tsd.slot->dropped);
    const char *keys[10] = {"mode",  "stack_depth",  "output",       "allocator",
                            "clock", "sample_bytes", "big_min_bytes"};
    const char *values[10] = {
        tl_config_mode_name(cfg.mode),      depth_str,  cfg.output, "jemalloc",
        tl_clock.tsc ? "tsc" : "monotonic", sample_str, big_str};
    size_t nopts = 7 + python_options(keys + 7, values + 7);
    python_noted = tl_pyframes_cpython() != NULL;
    if (tl_writer_options(&writer, &tl_tsd.cur, mono(), nopts, keys, values))
        bump(&tl_tsd.slot->dropped);
    tl_modules_scan(true, false, emit_module, NULL);
    if (cfg.mode == TL_MODE_AGGREGATE &&
        tl_ckpt_init(&writer, (uint64_t)cfg.checkpoint_ms * 1000000u))
        say("cannot map the aggregate site table: ", "allocations are not recorded", "");
    return false;
}

static void prefork(void)
{
    tl_tsd.guard++;
    tl_modules_prefork();
    tl_writer_prefork(&writer);
}

static void postfork_parent(void)
{
    tl_writer_postfork(&writer);
    tl_modules_postfork();
    tl_tsd.guard--;
}

/* The child of fork: drop the parent's trace (without touching it) and start
 * this pid's own, self-contained one. Only this thread exists here. */
static void postfork_child(void)
{
    tl_modules_fork_child(); /* first: everything below may scan or unwind */
    tl_writer_postfork(&writer);
    tl_modules_postfork();
    if (atomic_load(&tl_agent_state) == TL_AGENT_ON) {
        tl_writer_release(&writer);
        self_ppid = self_pid;
        self_pid = (uint64_t)getpid();
        exec_seq = 0;
        tl_config_exec_seq_env(exec_env, sizeof exec_env, self_pid, 1);
        memset(slots, 0, sizeof slots);
        atomic_store(&nslots, 0);
        nfree_slots = 0;
        atomic_flag_clear(&free_slot_lock);
        tl_tsd.slot = NULL;
        tl_tsd.cur.gen = 0;
        atomic_store(&exit_status, -1);
        tl_stack_table_reset(&stacks);
        tl_live_reset();
        tl_pyframes_reset();
        tl_api_reset();
        tl_modules_reset();
        if (trace_open()) atomic_store(&tl_agent_state, TL_AGENT_DONE);
    } else if (atomic_load(&tl_agent_state) != TL_AGENT_OFF) {
        /* Forked while finishing: the child is untraced; never write the parent's file. */
        tl_writer_release(&writer);
        atomic_store(&tl_agent_state, TL_AGENT_DONE);
    }
    tl_tsd.guard--;
}

static void finish(int status);
static void finish_signal(int sig);
static bool on_exit_registered;

/* Registered in our constructor, i.e. before __libc_start_main registers
 * _dl_fini: exit handlers run last-in first-out, so this runs after every
 * destructor (ours included) and C++ static destructor, with the status of
 * exit() or of main's return, which no hook sees. It ends the trace. */
static void on_exit_status(int status, void *arg)
{
    (void)arg;
    TL_GUARD_SCOPE;
    atomic_store(&exit_status, status);
    finish(status);
}

/* Registered by the constructor with at_quick_exit, so it runs after the
 * program's own handlers: quick_exit then ends with glibc's internal _exit,
 * which no hook sees. The status is the one the quick_exit hook kept. */
static void on_quick_exit(void)
{
    TL_GUARD_SCOPE;
    finish(atomic_load(&exit_status));
}

/* CPython reads PYTHONPATH when it initialises, after our constructor: put
 * the tensorleak package directory first there, so its sitecustomize starts
 * the Python side with no change to the program. The directory is
 * TENSORLEAK_PYTHON_DIR (the CLI sets it in the build tree), else
 * <directory of libtensorleak.so>/python (the installed layout), if it
 * exists. Nothing is changed when it is already on the path. */
static void python_path(void)
{
    char dir[TL_CONFIG_PATH_MAX];
    if (cfg.python_dir[0]) {
        strcpy(dir, cfg.python_dir);
    } else {
        Dl_info info;
        if (!dladdr((void *)&tl_agent_init, &info) || !info.dli_fname) return;
        const char *slash = strrchr(info.dli_fname, '/');
        size_t n = slash ? (size_t)(slash - info.dli_fname) : 0;
        static const char sub[] = "/python";
        if (n + sizeof sub > sizeof dir) return;
        memcpy(dir, info.dli_fname, n);
        memcpy(dir + n, sub, sizeof sub);
        if (!slash) /* loaded by a bare name: no directory to go by */
            return;
    }
    if (access(dir, R_OK | X_OK) != 0) return;
    tl_pyframes_hide_dir(dir);
    const char *old = getenv("PYTHONPATH");
    size_t dl = strlen(dir);
    for (const char *p = old; p && *p;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        if (len == dl && memcmp(p, dir, dl) == 0) return;
        p += len + (colon ? 1 : 0);
    }
    if (!old || !*old) {
        setenv("PYTHONPATH", dir, 1);
        return;
    }
    static char buf[2 * TL_CONFIG_PATH_MAX + 2];
    size_t ol = strlen(old);
    if (dl + 1 + ol + 1 > sizeof buf) return;
    memcpy(buf, dir, dl);
    buf[dl] = ':';
    memcpy(buf + dl + 1, old, ol + 1);
    setenv("PYTHONPATH", buf, 1);
}

/* A secure-execution process (setuid, setgid, capabilities) runs on behalf
 * of a user who does not own it: TENSORLEAK_* of that user's environment
 * must not choose where a privileged process writes, or whether it records
 * at all. Only TL_CONFIG_ADMIN_PATH does, when root owns it and no one
 * else can write it. */
static void secure_config(void)
{
    static char text[TL_CONFIG_ADMIN_MAX + 1];
    char *admin = NULL;
    int fd = open(TL_CONFIG_ADMIN_PATH, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0 &&
        !(st.st_mode & (S_IWGRP | S_IWOTH))) {
        ssize_t n = read(fd, text, TL_CONFIG_ADMIN_MAX);
        if (n >= 0) {
            text[n] = '\0';
            admin = text;
        }
    }
    if (fd >= 0) close(fd);
    tl_config_parse_secure(&cfg, admin, self_pid);
}

void tl_agent_init(void)
{
    TL_GUARD_SCOPE;
    static atomic_flag once = ATOMIC_FLAG_INIT;
    if (atomic_load(&tl_agent_state) != TL_AGENT_OFF || writer.gen ||
        atomic_flag_test_and_set(&once))
        return;
    self_pid = (uint64_t)getpid();
    self_ppid = (uint64_t)getppid();
    extern char **environ;
    if (getauxval(AT_SECURE))
        secure_config();
    else
        tl_config_parse(&cfg, (const char *const *)environ, self_pid);
    if (cfg.disable) return;
    if (cfg.depth_invalid) say("TENSORLEAK_STACK_DEPTH is not a number; using ", "64", "");
    if (cfg.fingerprint_min_invalid)
        say("TENSORLEAK_FINGERPRINT_MIN is not a size; using ", "1MiB", "");
    exec_seq = cfg.exec_seq;
    fmt_dec(depth_str, cfg.stack_depth);
    tl_agent_stack_depth = cfg.stack_depth;
    fmt_dec(sample_str, cfg.sample_bytes);
    fmt_dec(big_str, TL_CONFIG_BIG_MIN);
    tl_agent_mode = (int)cfg.mode;
    if (cfg.mode_invalid)
        say("TENSORLEAK_MODE is not default, all or aggregate; using ", "default", "");
    if (cfg.sample_bytes_invalid)
        say("TENSORLEAK_SAMPLE_BYTES is not a size; using ", "512KiB", "");
    tl_clock_init(false);
    if (cfg.mode != TL_MODE_ALL && tl_live_init()) {
        say("cannot map the live block table; using mode ", "all", "");
        cfg.mode = TL_MODE_ALL;
        tl_agent_mode = TL_MODE_ALL;
    }

    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    read_cmdline();
    tl_modules_set_paths(exe, cwd);

    /* Every exec path (execvp, posix_spawn, Python's os.exec*) inherits this;
     * the next image counts only when it is still our pid. */
    if (tl_config_exec_seq_env(exec_env, sizeof exec_env, self_pid, (uint64_t)exec_seq + 1) == 0)
        putenv(exec_env);

    if (tl_stack_table_init(&stacks, 16)) {
        say("cannot map the stack table", "", "");
        return;
    }
    uintptr_t lo, hi;
    if (!tl_modules_range_of((uintptr_t)&tl_agent_init, &lo, &hi)) tl_stack_skip_add(lo, hi);
    if (!tl_modules_range_of((uintptr_t)&tl_stack_capture, &lo, &hi)) tl_stack_skip_add(lo, hi);
    void *unw = dlsym(RTLD_DEFAULT, "_ULx86_64_step");
    if (unw && !tl_modules_range_of((uintptr_t)unw, &lo, &hi)) tl_stack_skip_add(lo, hi);
    tl_stack_unwind_init();
    atomic_store(&real_exit, dlsym(RTLD_NEXT, "exit"));
    const tl_pyframes_cpython_t *py = tl_pyframes_cpython();
    if ((!cfg.no_python_frames && tl_pyframes_init()) || (py && py->supported) ||
        dlsym(RTLD_DEFAULT, "Py_Version"))
        python_path();

    thread_key_ok = pthread_key_create(&thread_key, thread_end) == 0;
    if (trace_open()) return;
    pthread_atfork(prefork, postfork_parent, postfork_child);
    on_exit_registered = on_exit(on_exit_status, NULL) == 0;
    at_quick_exit(on_quick_exit);
    tl_endsig_init(tl_agent_real_sigaction(), finish_signal);
    atomic_store(&tl_agent_state, TL_AGENT_ON);
}

static void write_end(uint64_t reason, int status)
{
    /* A full disk: the END and the counters go into the chunk kept for them. */
    tl_writer_take_reserve(&writer, &tl_tsd.cur, mono());
    if (cfg.mode == TL_MODE_AGGREGATE) {
        tl_ckpt_set_max_stack(atomic_load(&stacks.next_id));
        tl_ckpt_flush(mono());
    }
    if (cfg.mode != TL_MODE_ALL) write_counts();
    uint64_t a = 0, f = 0, s = 0, d = 0;
    unsigned n = slots_in_use();
    for (unsigned i = 0; i <= n; i++) {
        if (i == n) i = TL_SLOTS - 1;
        a += atomic_load_explicit(&slots[i].allocs, memory_order_relaxed);
        f += atomic_load_explicit(&slots[i].frees, memory_order_relaxed);
        s += atomic_load_explicit(&slots[i].storages, memory_order_relaxed);
        d += atomic_load_explicit(&slots[i].dropped, memory_order_relaxed);
    }
    tl_writer_end(&writer, &tl_tsd.cur, mono(), reason, status, a, f, s, d);
}

static void finish(int status)
{
    int expected = TL_AGENT_ON;
    if (!atomic_compare_exchange_strong(&tl_agent_state, &expected, TL_AGENT_FINISHING)) return;
    if ((uint64_t)getpid() != self_pid) {
        atomic_store(&tl_agent_state, TL_AGENT_ON); /* a vfork child: not our trace */
        return;
    }
    thread_begin();
    tl_modules_scan(false, false, emit_module, NULL);
    write_end(TL_END_EXIT, status);
    tl_writer_mark_end(&writer, TL_WRITER_FINISHED, true);
    atomic_store(&tl_agent_state, TL_AGENT_DONE);
}

/* A fatal SIGTERM (endsig.h; signal context): END with reason signal and
 * the signal's number. Skipped when the signal interrupted the agent itself
 * (this thread's records or counters may be half-written). No module scan:
 * it takes the loader's lock, which the interrupted code may hold. */
static void finish_signal(int sig)
{
    if (tl_tsd.guard) return;
    TL_GUARD_SCOPE;
    int expected = TL_AGENT_ON;
    if (!atomic_compare_exchange_strong(&tl_agent_state, &expected, TL_AGENT_FINISHING)) return;
    if ((uint64_t)getpid() != self_pid) {
        atomic_store(&tl_agent_state, TL_AGENT_ON);
        return;
    }
    thread_begin();
    write_end(TL_END_SIGNAL, sig);
    tl_writer_mark_end(&writer, TL_WRITER_FINISHED, true);
    atomic_store(&tl_agent_state, TL_AGENT_DONE);
}

void tl_agent_fini(void)
{
    /* With the exit handler in place, the trace ends there (later, with the
     * status); a destructor without exit (impossible for a preload) ends it here. */
    if (on_exit_registered) return;
    TL_GUARD_SCOPE;
    finish(atomic_load(&exit_status));
}

void tl_agent_set_exit_status(int status)
{
    atomic_store(&exit_status, status);
}

void tl_agent_finish_now(int status)
{
    TL_GUARD_SCOPE;
    atomic_store(&exit_status, status);
    finish(status);
}

bool tl_agent_exec_begin(void)
{
    TL_GUARD_SCOPE;
    if (!tl_agent_recording() || (uint64_t)getpid() != self_pid) return false;
    thread_begin();
    write_end(TL_END_EXEC, -1);
    tl_writer_mark_end(&writer, TL_WRITER_EXEC, false);
    return true;
}

void tl_agent_exec_failed(void)
{
    TL_GUARD_SCOPE;
    tl_writer_unmark_end(&writer);
}

const char *tl_agent_exec_env(void)
{
    return exec_env[0] && (uint64_t)getpid() == self_pid ? exec_env : NULL;
}

/* libc's definition of name, looked up once (dlsym may allocate: guarded). */
static void *real_fn(_Atomic(void *) *slot, const char *name)
{
    void *f = atomic_load(slot);
    if (!f) {
        TL_GUARD_SCOPE;
        f = dlsym(RTLD_NEXT, name);
        atomic_store(slot, f);
    }
    return f;
}

tl_agent_sigaction_fn tl_agent_real_sigaction(void)
{
    return (tl_agent_sigaction_fn)real_fn(&real_sigaction, "sigaction");
}

tl_exit_fn tl_agent_real_exit(void)
{
    return (tl_exit_fn)real_fn(&real_exit, "exit");
}

/* --- lineage API support (api.c); callers hold the guard --- */

bool tl_agent_api_begin(void)
{
    if (!tl_agent_recording()) return false;
    thread_begin();
    return true;
}

uint64_t tl_agent_api_stack(void)
{
    return record_stack();
}

void tl_agent_api_record(tl_rec_type_t type, const uint64_t *ints, const char *str, size_t len)
{
    if (tl_writer_lineage(&writer, &tl_tsd.cur, mono(), type, ints, str, len))
        bump(&tl_tsd.slot->dropped);
}

bool tl_agent_api_mark(uint64_t id, const char *name, size_t len)
{
    if (tl_writer_mark(&writer, &tl_tsd.cur, mono(), id, name, len)) {
        bump(&tl_tsd.slot->dropped);
        return true;
    }
    return false;
}

uint64_t tl_agent_fingerprint_min(void)
{
    return cfg.fingerprint_min;
}

bool tl_agent_disabled(void)
{
    return cfg.disable;
}

const char *tl_agent_trace_path(void)
{
    return tl_agent_recording() && trace_file[0] ? trace_file : NULL;
}
