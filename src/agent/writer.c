/* writer.c - the crash-safe trace writer (see writer.h).
 *
 * Rules: no malloc, no stdio; records go straight into MAP_SHARED pages.
 * The mutex is taken only to hand out a chunk or to end the file. A record
 * that does not fit the current chunk is re-encoded into a fresh one.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the writer publishes le32 fields with native stores"
#endif

static atomic_uint_fast64_t gen_counter;

static uint64_t extent_bytes(const tl_writer_t *w)
{
    return (uint64_t)TL_WRITER_EXTENT_CHUNKS * w->chunk_bytes;
}

/* Grow the file by one extent and map it. Called with the lock held.
 * fallocate first, so a full disk is an error here and not a SIGBUS later. */
static bool grow(tl_writer_t *w)
{
    if (w->nextents >= TL_WRITER_MAX_EXTENTS || w->fd < 0) return true;
    off_t off = (off_t)(TL_TRACE_HEADER_BYTES + w->nextents * extent_bytes(w));
    off_t len = (off_t)extent_bytes(w);
    if (fallocate(w->fd, 0, off, len) != 0) {
        if (errno != EOPNOTSUPP && errno != ENOSYS) return true;
        if (ftruncate(w->fd, off + len) != 0) return true;
    }
    void *m = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, off);
    if (m == MAP_FAILED) return true;
    w->extent[w->nextents++] = m;
    return false;
}

int tl_writer_create(tl_writer_t *w, const char *path, const tl_writer_hdr_t *hdr)
{
    pthread_mutex_init(&w->lock, NULL);
    w->fd = -1;
    w->chunk_bytes = TL_TRACE_CHUNK_BYTES;
    w->next_chunk = 0;
    w->nextents = 0;
    w->header = NULL;
    atomic_store(&w->closed, TL_WRITER_OPEN);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return -errno;
    w->fd = fd;
    int err = 0;
    if (fallocate(fd, 0, 0, TL_TRACE_HEADER_BYTES) != 0 &&
        ftruncate(fd, TL_TRACE_HEADER_BYTES) != 0)
        err = -errno;
    void *m = MAP_FAILED;
    if (!err) {
        m = mmap(NULL, TL_TRACE_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) err = -errno;
    }
    if (!err && grow(w)) err = errno ? -errno : -ENOSPC;
    if (err) {
        if (m != MAP_FAILED) munmap(m, TL_TRACE_HEADER_BYTES);
        tl_writer_release(w);
        unlink(path);
        return err;
    }
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
    c->last_ts = 0;
    c->gen = w->gen;
}

uint8_t *tl_writer_chunk_raw(tl_writer_t *w)
{
    if (atomic_load_explicit(&w->closed, memory_order_acquire) != TL_WRITER_OPEN) return NULL;
    pthread_mutex_lock(&w->lock);
    if (atomic_load_explicit(&w->closed, memory_order_relaxed) != TL_WRITER_OPEN) {
        pthread_mutex_unlock(&w->lock);
        return NULL;
    }
    /* The last mapped chunk stays in reserve for the END (tl_writer_take_reserve). */
    if (w->next_chunk + 1 >= w->nextents * TL_WRITER_EXTENT_CHUNKS && grow(w)) {
        /* Once is enough: retrying a failing fallocate on every event made a
         * program on a full disk crawl. Everything after this is dropped. */
        int err = errno;
        atomic_store_explicit(&w->closed, TL_WRITER_FULL, memory_order_release);
        pthread_mutex_unlock(&w->lock);
        static const char msg[] = "tensorleak: the trace cannot grow (";
        static const char tail[] = "); recording stopped, later events are counted as dropped\n";
        const char *why = strerror(err);
        if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0 ||
            write(STDERR_FILENO, why, strlen(why)) < 0 ||
            write(STDERR_FILENO, tail, sizeof tail - 1) < 0)
            return NULL;
        return NULL;
    }
    uint64_t idx = w->next_chunk++;
    uint8_t *ch =
        w->extent[idx / TL_WRITER_EXTENT_CHUNKS] + (idx % TL_WRITER_EXTENT_CHUNKS) * w->chunk_bytes;
    pthread_mutex_unlock(&w->lock);
    return ch;
}

static void stamp_chunk(tl_wcursor_t *c, uint8_t *ch, uint64_t ts);

bool tl_writer_take_reserve(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts)
{
    if (atomic_load_explicit(&w->closed, memory_order_acquire) != TL_WRITER_FULL) return true;
    pthread_mutex_lock(&w->lock);
    uint8_t *ch = NULL;
    if (atomic_load_explicit(&w->closed, memory_order_relaxed) == TL_WRITER_FULL &&
        w->next_chunk < w->nextents * TL_WRITER_EXTENT_CHUNKS) {
        uint64_t idx = w->next_chunk++;
        ch = w->extent[idx / TL_WRITER_EXTENT_CHUNKS] +
             (idx % TL_WRITER_EXTENT_CHUNKS) * w->chunk_bytes;
    }
    pthread_mutex_unlock(&w->lock);
    if (!ch) return true;
    stamp_chunk(c, ch, ts);
    return false;
}

/* Take a fresh chunk for c. true = failure (closed, disk full, no mapping). */
static bool take_chunk(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts)
{
    uint8_t *ch = tl_writer_chunk_raw(w);
    if (!ch) return true;
    stamp_chunk(c, ch, ts);
    return false;
}

/* Make ch c's current chunk: header fields, then the magic (release). */
static void stamp_chunk(tl_wcursor_t *c, uint8_t *ch, uint64_t ts)
{
    tl_store_le32(ch + TL_CHK_TID, c->tid);
    tl_store_le32(ch + TL_CHK_USED, 0);
    tl_store_le32(ch + TL_CHK_SEQ, c->seq++);
    tl_store_le64(ch + TL_CHK_BASE_TS, ts);
    __atomic_store_n((uint32_t *)(ch + TL_CHK_MAGIC), TL_CHUNK_MAGIC, __ATOMIC_RELEASE);
    c->chunk = ch;
    c->used = 0;
    c->last_ts = ts;
}

static bool reserve(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, bool fresh, tl_wbuf_t *b,
                    uint64_t *delta)
{
    if ((fresh || !c->chunk) && take_chunk(w, c, ts)) return true;
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
    } while (0)

bool tl_writer_alloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr,
                     uint64_t size, uint64_t stack_id)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_alloc(&tl_b_, tl_d_, kind, ptr, size, stack_id));
    return failed;
}

bool tl_writer_free(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t kind, uint64_t ptr)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_free(&tl_b_, tl_d_, kind, ptr));
    return failed;
}

bool tl_writer_realloc(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t old_ptr,
                       uint64_t new_ptr, uint64_t size, uint64_t stack_id)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_realloc(&tl_b_, tl_d_, old_ptr, new_ptr, size, stack_id));
    return failed;
}

bool tl_writer_stack(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t id,
                     const uint64_t *frames, size_t nframes)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_stack(&tl_b_, tl_d_, id, frames, nframes));
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

bool tl_writer_thread(tl_writer_t *w, tl_wcursor_t *c, uint64_t ts, uint64_t tid, const char *name,
                      size_t name_len)
{
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_thread(&tl_b_, tl_d_, tid, name, name_len));
    return failed;
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
    bool failed;
    EMIT(w, c, ts, failed, tl_rec_put_mark(&tl_b_, tl_d_, id, name, name_len));
    return failed;
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
        __atomic_store_n((uint32_t *)(w->header + TL_HDR_FLAGS), flags, __ATOMIC_RELEASE);
        if (truncate && w->fd >= 0) {
            /* Chunks past n were never handed out and are never touched. */
            if (ftruncate(w->fd, (off_t)(TL_TRACE_HEADER_BYTES + n * w->chunk_bytes)) != 0) {
                /* keep the zero tail; chunk_count says where the data ends */
            }
            close(w->fd);
            w->fd = -1;
        }
    }
    pthread_mutex_unlock(&w->lock);
}

void tl_writer_unmark_end(tl_writer_t *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->header) {
        uint32_t flags = tl_load_le32(w->header + TL_HDR_FLAGS) & ~TL_HDR_F_CLEAN_END;
        __atomic_store_n((uint32_t *)(w->header + TL_HDR_FLAGS), flags, __ATOMIC_RELEASE);
        tl_store_le64(w->header + TL_HDR_CHUNK_COUNT, 0);
    }
    atomic_store_explicit(&w->closed, TL_WRITER_OPEN, memory_order_release);
    pthread_mutex_unlock(&w->lock);
}

void tl_writer_release(tl_writer_t *w)
{
    for (uint64_t i = 0; i < w->nextents; i++) {
        munmap(w->extent[i], (size_t)extent_bytes(w));
        w->extent[i] = NULL;
    }
    w->nextents = 0;
    if (w->header) munmap(w->header, TL_TRACE_HEADER_BYTES);
    w->header = NULL;
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
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
