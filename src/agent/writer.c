/* writer.c - the crash-safe trace writer (see writer.h).
 *
 * Rules: no malloc, no stdio; records go straight into MAP_SHARED pages.
 * The mutex is taken only to hand out, park or retire a chunk, to grow the
 * file (opened by path for that moment only) or to end it. A record that
 * does not fit the current chunk is re-encoded into a fresh one.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/vm.h"
#include "common/notes.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the writer publishes le32 fields with native stores"
#endif

static atomic_uint_fast64_t gen_counter;

static uint64_t extent_bytes(const tl_writer_t *w)
{
    return (uint64_t)TL_WRITER_EXTENT_CHUNKS * w->chunk_bytes;
}

/* 0, or -EFBIG when a file of end bytes would pass the program's
 * RLIMIT_FSIZE: growing past it raises SIGXFSZ (fallocate and ftruncate
 * both), whose default action kills the program. */
static int fsize_check(uint64_t end)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && end > rl.rlim_cur)
        return -EFBIG;
    return 0;
}

/* The trace file, opened again by path: a descriptor or -errno (-ESTALE:
 * the path now names another file). The caller closes it at once. */
static int reopen(const tl_writer_t *w)
{
    if (!w->path[0]) return -EBADF;
    int fd = open(w->path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_dev != w->dev || (uint64_t)st.st_ino != w->ino) {
        close(fd);
        return -ESTALE;
    }
    return fd;
}

/* Give the file of fd the bytes [off, off+len): fallocate (so that a full
 * disk is an error here, not a SIGBUS later), else ftruncate. SIGXFSZ is
 * blocked on this thread meanwhile and one it raised is taken back, so
 * that not even a limit lowered after fsize_check reaches the program
 * (one that was pending before stays). Returns 0 or -errno. */
static int extend(int fd, off_t off, off_t len)
{
    sigset_t xfsz, old, before;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    bool masked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    bool was_pending = !masked || sigpending(&before) != 0 || sigismember(&before, SIGXFSZ);
    int err = 0;
    if (fallocate(fd, 0, off, len) != 0) {
        err = -errno;
        if (err == -EOPNOTSUPP || err == -ENOSYS) err = ftruncate(fd, off + len) == 0 ? 0 : -errno;
    }
    if (err == -EFBIG && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

/* Grow the file of fd by one extent and map it, with the lock held; fallocate
 * first (a full disk is an error here, not a SIGBUS later). 0 or -errno. */
static int grow_fd(tl_writer_t *w, int fd)
{
    if (w->nextents >= TL_WRITER_MAX_EXTENTS) return -EFBIG;
    off_t off = (off_t)(TL_TRACE_HEADER_BYTES + w->nextents * extent_bytes(w));
    off_t len = (off_t)extent_bytes(w);
    int err = fsize_check((uint64_t)(off + len));
    void *m = NULL;
    if (!err) err = extend(fd, off, len);
    if (!err) err = tl_vm_map(&m, NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    if (err) return err;
    w->extent[w->nextents] = m;
    w->retired[w->nextents] = 0;
    w->nextents++;
    return 0;
}

static int grow(tl_writer_t *w)
{
    int fd = reopen(w);
    if (fd < 0) return fd;
    int err = grow_fd(w, fd);
    close(fd);
    return err;
}

int tl_writer_create(tl_writer_t *w, const char *path, const tl_writer_hdr_t *hdr)
{
    pthread_mutex_init(&w->lock, NULL);
    w->path[0] = '\0';
    w->dev = w->ino = 0;
    w->chunk_bytes = TL_TRACE_CHUNK_BYTES;
    w->next_chunk = 0;
    w->nextents = 0;
    w->npool = 0;
    w->header = NULL;
    atomic_store(&w->closed, TL_WRITER_OPEN);
    size_t plen = strlen(path);
    if (plen >= sizeof w->path) return -ENAMETOOLONG;
    /* Checked before the file exists: not even the header may raise SIGXFSZ. */
    int err = fsize_check(TL_TRACE_HEADER_BYTES + extent_bytes(w));
    if (err) return err;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    struct stat st;
    if (fstat(fd, &st) != 0) err = -errno;
    if (!err) err = extend(fd, 0, TL_TRACE_HEADER_BYTES);
    void *m = NULL;
    if (!err)
        err = tl_vm_map(&m, NULL, TL_TRACE_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!err) err = grow_fd(w, fd);
    close(fd);
    if (err) {
        if (m) tl_vm_unmap(m, TL_TRACE_HEADER_BYTES);
        tl_writer_release(w);
        unlink(path);
        return err;
    }
    memcpy(w->path, path, plen + 1);
    w->dev = (uint64_t)st.st_dev;
    w->ino = (uint64_t)st.st_ino;
    w->header = m;
    uint8_t *h = w->header;
    memcpy(h + TL_HDR_MAGIC, TL_TRACE_MAGIC, TL_TRACE_MAGIC_BYTES);
    tl_store_le32(h + TL_HDR_VERSION, TL_TRACE_VERSION);
    tl_store_le32(h + TL_HDR_HEADER_BYTES, TL_TRACE_HEADER_BYTES);
    tl_store_le32(h + TL_HDR_CHUNK_BYTES, w->chunk_bytes);
    tl_store_le32(h + TL_HDR_FLAGS, 0);
    tl_store_le64(h + TL_HDR_PID, hdr->pid);
    tl_store_le64(h + TL_HDR_PPID, hdr->ppid);
    tl_store_le64(h + TL_HDR_START_REALTIME, hdr->start_realtime_ns);
    tl_store_le64(h + TL_HDR_START_MONO, hdr->start_mono_ns);
    tl_store_le64(h + TL_HDR_SESSION, hdr->session);
    tl_store_le64(h + TL_HDR_CHUNK_COUNT, 0);
    tl_store_le32(h + TL_HDR_EXEC_SEQ, hdr->exec_seq);
    w->gen = atomic_fetch_add(&gen_counter, 1) + 1;
    return 0;
}

void tl_wcursor_reset(tl_wcursor_t *c, const tl_writer_t *w, uint32_t tid)
{
    c->chunk = NULL;
    c->used = 0;
    c->seq = 0;
    c->tid = tid;
    c->extent = 0;
    c->ended = 0;
    c->last_ts = 0;
    c->prev_ptr_not = TL_WCURSOR_NO_PTR;
    c->gen = w->gen;
}

/* One line: the trace stops growing, and why: to the CLI under a session (the
 * header's), so that the program's stderr stays its own; else on stderr. */
static void say_full(const tl_writer_t *w, int err)
{
    static const char tail[] = "); recording stopped, later events are counted as dropped";
    /* strerrordesc_np: a static English string, no locale, no allocation. */
    const char *why = err == -ESTALE || err == -ENOENT ? "the trace file was removed or replaced"
                      : err == -EFBIG ? "the file size limit (ulimit -f) is reached"
                                      : strerrordesc_np(-err);
    if (!why) why = "unknown error";
    char note[256];
    tl_notes_say(tl_load_le64(w->header + TL_HDR_SESSION), tl_load_le64(w->header + TL_HDR_PID),
                 note, sizeof note, "the trace cannot grow (", why, tail);
}

/* The next chunk of the file, with the lock held; NULL when closed or the
 * file cannot grow (then the writer turns TL_WRITER_FULL; *err says why,
 * once). *ext: the chunk's extent. */
static uint8_t *hand_out(tl_writer_t *w, uint32_t *ext, int *err)
{
    if (atomic_load_explicit(&w->closed, memory_order_relaxed) != TL_WRITER_OPEN) return NULL;
    /* The last mapped chunk stays in reserve for the END (tl_writer_take_reserve). */
    if (w->next_chunk + 1 >= w->nextents * TL_WRITER_EXTENT_CHUNKS && (*err = grow(w)) != 0) {
        /* Once is enough: retrying a failing fallocate on every event made a
         * program on a full disk crawl. Everything after this is dropped. */
        atomic_store_explicit(&w->closed, TL_WRITER_FULL, memory_order_release);
        return NULL;
    }
    uint64_t idx = w->next_chunk++;
    *ext = (uint32_t)(idx / TL_WRITER_EXTENT_CHUNKS);
    return w->extent[*ext] + (idx % TL_WRITER_EXTENT_CHUNKS) * w->chunk_bytes;
}

uint8_t *tl_writer_chunk_raw(tl_writer_t *w)
{
    if (atomic_load_explicit(&w->closed, memory_order_acquire) != TL_WRITER_OPEN) return NULL;
    uint32_t ext;
    int err = 0;
    pthread_mutex_lock(&w->lock);
    uint8_t *ch = hand_out(w, &ext, &err);
    pthread_mutex_unlock(&w->lock);
    if (err) say_full(w, err);
    return ch;
}

/* A chunk no thread writes any more, with the lock held. Its pages leave
 * the process (MADV_DONTNEED keeps a shared file mapping's data in the
 * file: nothing is lost, and a kill -9 after this still finds it); the
 * whole extent is unmapped once all its chunks are retired. */
static void retire_locked(tl_writer_t *w, uint8_t *ch, uint32_t ext)
{
    if (ext >= w->nextents || !w->extent[ext]) return;
    tl_vm_advise(ch, w->chunk_bytes, MADV_DONTNEED);
    if (++w->retired[ext] == TL_WRITER_EXTENT_CHUNKS) {
        tl_vm_unmap(w->extent[ext], (size_t)extent_bytes(w));
        w->extent[ext] = NULL;
    }
}

static void stamp_chunk(tl_wcursor_t *c, uint8_t *ch, uint32_t ext, uint64_t ts);

bool tl_writer_take_reserve(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts)
{
    if (atomic_load_explicit(&w->closed, memory_order_acquire) != TL_WRITER_FULL) return true;
    pthread_mutex_lock(&w->lock);
    uint8_t *ch = NULL;
    uint32_t ext = 0;
    /* The reserve was never handed out, so its extent is still mapped. */
    if (atomic_load_explicit(&w->closed, memory_order_relaxed) == TL_WRITER_FULL &&
        w->next_chunk < w->nextents * TL_WRITER_EXTENT_CHUNKS) {
        uint64_t idx = w->next_chunk++;
        ext = (uint32_t)(idx / TL_WRITER_EXTENT_CHUNKS);
        if (w->extent[ext]) ch = w->extent[ext] + (idx % TL_WRITER_EXTENT_CHUNKS) * w->chunk_bytes;
    }
    if (ch && c->chunk) retire_locked(w, c->chunk, c->extent);
    pthread_mutex_unlock(&w->lock);
    if (!ch) return true;
    stamp_chunk(c, ch, ext, ts);
    return false;
}

void tl_wcursor_park(tl_writer_t *w, tl_wcursor_t *c)
{
    if (c->gen != w->gen) return;
    c->ended = 1;
    if (!c->chunk) return;
    pthread_mutex_lock(&w->lock);
    uint32_t room = w->chunk_bytes - TL_CHUNK_HEADER_BYTES - c->used;
    if (atomic_load_explicit(&w->closed, memory_order_relaxed) == TL_WRITER_OPEN &&
        room >= TL_WRITER_POOL_MIN && w->npool < TL_WRITER_POOL)
        w->pool[w->npool++] = (tl_writer_parked_t){c->chunk, c->used, c->extent};
    else
        retire_locked(w, c->chunk, c->extent);
    pthread_mutex_unlock(&w->lock);
    c->chunk = NULL;
    c->used = 0;
}

/* Move c to another chunk and retire the one it leaves. reuse: a parked
 * chunk may be taken (only for a thread's first record after it had none:
 * a record that did not fit gets a fresh chunk, where it always fits).
 * true = failure (closed, disk full, no mapping); c keeps its chunk then. */
static bool take_chunk(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, bool reuse)
{
    if (atomic_load_explicit(&w->closed, memory_order_acquire) != TL_WRITER_OPEN) return true;
    int err = 0;
    pthread_mutex_lock(&w->lock);
    uint32_t ext;
    uint8_t *ch = NULL;
    tl_writer_parked_t p = {0};
    if (reuse && w->npool &&
        atomic_load_explicit(&w->closed, memory_order_relaxed) == TL_WRITER_OPEN)
        p = w->pool[--w->npool];
    else
        ch = hand_out(w, &ext, &err);
    if ((ch || p.chunk) && c->chunk) retire_locked(w, c->chunk, c->extent);
    pthread_mutex_unlock(&w->lock);
    if (err) say_full(w, err);
    if (p.chunk) {
        /* Records from here on are this thread's (TL_REC_OWNER), timed from ts. */
        tl_wbuf_t b = {.p = p.chunk + TL_CHUNK_HEADER_BYTES + p.used,
                       .end = p.chunk + w->chunk_bytes};
        uint64_t v[3] = {c->tid, c->seq, ts};
        tl_rec_put_lineage(&b, TL_REC_OWNER, 0, v, NULL, 0);
        c->chunk = p.chunk;
        c->extent = p.extent;
        c->used = p.used;
        if (b.overflow) /* cannot be: a parked chunk has TL_WRITER_POOL_MIN bytes left */
            return take_chunk(w, c, ts, false);
        c->seq++;
        c->used = (uint32_t)(b.p - (p.chunk + TL_CHUNK_HEADER_BYTES));
        __atomic_store_n((uint32_t *)(p.chunk + TL_CHK_USED), c->used, __ATOMIC_RELEASE);
        c->last_ts = ts;
        c->prev_ptr_not = TL_WCURSOR_NO_PTR;
        return false;
    }
    if (!ch) return true;
    stamp_chunk(c, ch, ext, ts);
    return false;
}

/* Make ch (in extent ext) c's current chunk: header fields, then the magic (release). */
static void stamp_chunk(tl_wcursor_t *c, uint8_t *ch, uint32_t ext, uint64_t ts)
{
    tl_store_le32(ch + TL_CHK_TID, c->tid);
    tl_store_le32(ch + TL_CHK_USED, 0);
    tl_store_le32(ch + TL_CHK_SEQ, c->seq++);
    tl_store_le64(ch + TL_CHK_BASE_TS, ts);
    __atomic_store_n((uint32_t *)(ch + TL_CHK_MAGIC), TL_CHUNK_MAGIC, __ATOMIC_RELEASE);
    c->chunk = ch;
    c->extent = ext;
    c->used = 0;
    c->last_ts = ts;
    c->prev_ptr_not = TL_WCURSOR_NO_PTR;
}

/* The base_ts of c's next chunk for a record at ts: not before c's last record
 * (an ALLOC, timed at the hook's entry, comes after its later-timed STACK). */
static uint64_t next_ts(const tl_wcursor_t *c, uint64_t ts)
{
    return c->chunk && ts < c->last_ts ? c->last_ts : ts;
}

static bool reserve(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, bool fresh, tl_wbuf_t *b,
                    uint64_t *delta)
{
    if ((fresh || !c->chunk) && take_chunk(w, c, next_ts(c, ts), !c->chunk)) return true;
    b->p = c->chunk + TL_CHUNK_HEADER_BYTES + c->used;
    b->end = c->chunk + w->chunk_bytes;
    b->overflow = false;
    *delta = ts >= c->last_ts ? ts - c->last_ts : 0;
    return false;
}

static bool commit(tl_wcursor_t *c, const tl_wbuf_t *b, uint64_t ts)
{
    if (b->overflow) return true;
    c->used = (uint32_t)(b->p - (c->chunk + TL_CHUNK_HEADER_BYTES));
    __atomic_store_n((uint32_t *)(c->chunk + TL_CHK_USED), c->used, __ATOMIC_RELEASE);
    if (ts > c->last_ts) c->last_ts = ts;
    return false;
}

/* Encode with PUT (which sees tl_b_ and tl_d_) into the current chunk; when
 * it does not fit, once more into a fresh chunk. Sets failed. */
#define EMIT(w, c, ts, failed, PUT)                                                                \
    do {                                                                                           \
        tl_wbuf_t tl_b_;                                                                           \
        uint64_t tl_d_;                                                                            \
        (failed) = true;                                                                           \
        for (int tl_try_ = 0; tl_try_ < 2 && (failed); tl_try_++) {                                \
            if (reserve((w), (c), (ts), tl_try_ > 0, &tl_b_, &tl_d_)) break;                       \
            PUT;                                                                                   \
            (failed) = commit((c), &tl_b_, (ts));                                                  \
        }                                                                                          \
        if ((c)->ended) tl_wcursor_park((w), (c));                                                 \
    } while (0)

/* A plain block's ALLOC or FREE, packed (tl_writer_block_append): in
 * place when there is room, else once more in a fresh chunk, as EMIT. */
static bool put_packed(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                       uint64_t size, uint64_t stack_id)
{
    bool failed = true;
    for (int attempt = 0; attempt < 2 && failed; attempt++) {
        if ((attempt > 0 || !c->chunk) && take_chunk(w, c, next_ts(c, ts), !c->chunk)) break;
        if (!tl_writer_block_room(w, c)) continue;
        tl_writer_block_append(c, ts, (unsigned)kind, ptr, size, stack_id);
        failed = false;
    }
    if (c->ended) tl_wcursor_park(w, c);
    return failed;
}

bool tl_writer_alloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                     uint64_t size, uint64_t stack_id)
{
    if (kind <= TL_KIND_MEMALIGN) return put_packed(w, c, ts, kind, ptr, size, stack_id);
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_alloc(&tl_b_, tl_d_, kind, ptr, size, stack_id));
    return failed;
}

bool tl_writer_free(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr)
{
    if (kind == TL_KIND_FREE) return put_packed(w, c, ts, kind, ptr, 0, 0);
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_free(&tl_b_, tl_d_, kind, ptr));
    return failed;
}

bool tl_writer_dalloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                      uint64_t size, uint64_t stack_id, uint64_t device, uint64_t stream)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_dalloc(&tl_b_, tl_d_, kind, ptr, size, stack_id, device, stream));
    return failed;
}

bool tl_writer_dfree(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                     uint64_t device)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_dfree(&tl_b_, tl_d_, kind, ptr, device));
    return failed;
}

bool tl_writer_rewind(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts)
{
    /* Without a chunk, the next record's new chunk is timed from ts itself. */
    if (!c->chunk || ts >= c->last_ts) return false;
    bool failed;
    uint64_t v[3] = {c->tid, c->seq ? c->seq - 1 : 0, ts};
    EMIT(w, c, ts, failed, tl_rec_put_lineage(&tl_b_, TL_REC_OWNER, 0, v, NULL, 0));
    if (!failed) {
        c->last_ts = ts;
        c->prev_ptr_not = TL_WCURSOR_NO_PTR; /* the OWNER record starts a run (tl_rec_state_t) */
    }
    return failed;
}

bool tl_writer_realloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t old_ptr,
                       uint64_t new_ptr, uint64_t size, uint64_t stack_id)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_realloc(&tl_b_, tl_d_, old_ptr, new_ptr, size, stack_id));
    return failed;
}

bool tl_writer_stack_delta(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                           uint64_t base_id, size_t head, size_t tail, const uint64_t *fresh,
                           size_t n_new)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_stack_delta(&tl_b_, tl_d_, id, base_id, head, tail, fresh, n_new));
    return failed;
}

bool tl_writer_module(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t base, uint64_t start,
                      uint64_t size, const char *path, size_t path_len, const uint8_t *build_id,
                      size_t build_id_len)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_module(&tl_b_, tl_d_, base, start, size, path, path_len, build_id,
                           build_id_len));
    return failed;
}

/* THREAD and MARK records: an id and a name. */
static bool named(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, tl_rec_type_t type, uint64_t id,
                  const char *name, size_t name_len)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_named(&tl_b_, type, tl_d_, id, name, name_len));
    return failed;
}

bool tl_writer_thread(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t tid, const char *name,
                      size_t name_len)
{
    return named(w, c, ts, TL_REC_THREAD, tid, name, name_len);
}

bool tl_writer_process(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t pid, uint64_t ppid,
                       uint64_t exec_seq, const char *exe, size_t exe_len, size_t argc,
                       const char *const *argv)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_process(&tl_b_, tl_d_, pid, ppid, exec_seq, exe, exe_len, argc, argv));
    return failed;
}

bool tl_writer_options(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, size_t count,
                       const char *const *keys, const char *const *values)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_options(&tl_b_, tl_d_, count, keys, values));
    return failed;
}

bool tl_writer_end(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t reason,
                   int64_t exit_status, uint64_t allocs, uint64_t frees, uint64_t storages,
                   uint64_t dropped)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_end(&tl_b_, tl_d_, reason, exit_status, allocs, frees, storages, dropped));
    return failed;
}

bool tl_writer_pyframe(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id, uint64_t line,
                       const char *file, size_t file_len, const char *function, size_t function_len)
{
    bool failed;
    EMIT(w, c, ts, failed,
         tl_rec_put_pyframe(&tl_b_, tl_d_, id, line, file, file_len, function, function_len));
    return failed;
}

bool tl_writer_mark(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id, const char *name,
                    size_t name_len)
{
    return named(w, c, ts, TL_REC_MARK, id, name, name_len);
}

bool tl_writer_lineage(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, tl_rec_type_t type,
                       const uint64_t *ints, const char *str, size_t str_len)
{
    unsigned nints;
    bool has_str, failed;
    if (!tl_rec_lineage_shape(type, &nints, &has_str))
        return true; /* a caller bug: do not waste a fresh chunk on it */
    EMIT(w, c, ts, failed, tl_rec_put_lineage(&tl_b_, type, tl_d_, ints, str, str_len));
    return failed;
}

void tl_writer_mark_end(tl_writer_t *w, int how, bool truncate)
{
    pthread_mutex_lock(&w->lock);
    atomic_store_explicit(&w->closed, how, memory_order_release);
    if (w->header) {
        uint64_t n = w->next_chunk;
        tl_store_le64(w->header + TL_HDR_CHUNK_COUNT, n);
        uint32_t flags = tl_load_le32(w->header + TL_HDR_FLAGS) | TL_HDR_F_CLEAN_END;
        if (how == TL_WRITER_EXEC) flags |= TL_HDR_F_EXEC_END;
        __atomic_store_n((uint32_t *)(w->header + TL_HDR_FLAGS), flags, __ATOMIC_RELEASE);
        int fd = truncate ? reopen(w) : -1;
        if (fd >= 0) {
            /* Chunks past n were never handed out and are never touched. A
             * failure keeps the zero tail; chunk_count says where the data ends. */
            if (ftruncate(fd, (off_t)(TL_TRACE_HEADER_BYTES + n * w->chunk_bytes)) != 0) {
            }
            close(fd);
        }
    }
    pthread_mutex_unlock(&w->lock);
}

void tl_writer_unmark_end(tl_writer_t *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->header) {
        uint32_t flags = tl_load_le32(w->header + TL_HDR_FLAGS) & ~TL_HDR_F_ENDS;
        __atomic_store_n((uint32_t *)(w->header + TL_HDR_FLAGS), flags, __ATOMIC_RELEASE);
        tl_store_le64(w->header + TL_HDR_CHUNK_COUNT, 0);
    }
    atomic_store_explicit(&w->closed, TL_WRITER_OPEN, memory_order_release);
    pthread_mutex_unlock(&w->lock);
}

void tl_writer_release(tl_writer_t *w)
{
    for (uint64_t i = 0; i < w->nextents; i++) {
        if (w->extent[i]) tl_vm_unmap(w->extent[i], (size_t)extent_bytes(w));
        w->extent[i] = NULL;
    }
    w->nextents = 0;
    w->npool = 0;
    if (w->header) tl_vm_unmap(w->header, TL_TRACE_HEADER_BYTES);
    w->header = NULL;
    w->path[0] = '\0';
    w->dev = w->ino = 0;
    w->next_chunk = 0;
    w->gen = 0;
    atomic_store(&w->closed, TL_WRITER_FINISHED);
    pthread_mutex_init(&w->lock, NULL);
}

void tl_writer_prefork(tl_writer_t *w)
{
    pthread_mutex_lock(&w->lock);
}

void tl_writer_postfork(tl_writer_t *w)
{
    pthread_mutex_unlock(&w->lock);
}
