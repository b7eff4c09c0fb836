/* compress.c - a raw trace rewritten as a compressed one (see compress.h).
 *
 * The raw trace is read through a mapping of the extent in use (open.c's
 * tl_trace_extent: a live trace's zero tail is never touched), one slot at
 * a time, its pages given back behind the walk, so memory stays a slot and
 * a frame whatever the trace's size. Unused slots are left out; a slot with
 * a bad header is kept whole, so the reader says the same of both files.
 */
#include "report/cmd/compress.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/trace_format.h"
#include "report/read/reader.h"
#include "report/read/zchunk.h"
#include "report/read/zmodel.h"

/* Where the compressed trace goes: a file (fd >= 0) or a growing buffer. */
typedef struct zout {
    int fd;
    uint8_t *buf;
    size_t len, cap;
    uint64_t bytes, chunks;
    uint8_t *frame; /* a compressed chunk being made */
    size_t frame_cap;
    ZSTD_CCtx *cc;
    uint8_t *model; /* a slot's block model (zmodel.h), tl_zmodel_cap(chunk_bytes) */
    tl_zmodel_t zm;
} zout_t;

/* true on failure (errno set). */
static bool put(zout_t *o, const void *p, size_t n)
{
    o->bytes += n;
    if (o->fd >= 0) {
        for (const uint8_t *q = p; n;) {
            ssize_t w = write(o->fd, q, n);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return true;
            q += w, n -= (size_t)w;
        }
        return false;
    }
    if (o->len + n > o->cap) {
        size_t nc = o->cap ? o->cap : 65536;
        while (nc < o->len + n)
            nc *= 2;
        uint8_t *b = realloc(o->buf, nc);
        if (!b) return true;
        o->buf = b, o->cap = nc;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return false;
}

/* One compressed chunk of the n bytes of slot number slot: its block model
 * when it has one, else its bytes. */
static bool put_chunk(zout_t *o, const uint8_t *p, size_t n, uint64_t slot)
{
    uint8_t *f = o->frame;
    size_t mn = tl_zmodel_encode(&o->zm, p, n, o->model);
    size_t z =
        ZSTD_compress2(o->cc, f + TL_ZCHUNK_HEADER_BYTES, o->frame_cap - TL_ZCHUNK_HEADER_BYTES,
                       mn ? o->model : p, mn ? mn : n);
    if (ZSTD_isError(z)) {
        errno = ENOMEM;
        return true;
    }
    tl_store_le32(f + TL_ZCHK_MAGIC, mn ? TL_ZCHUNK_MAGIC_MODEL : TL_ZCHUNK_MAGIC);
    tl_store_le32(f + TL_ZCHK_ZBYTES, (uint32_t)z);
    tl_store_le32(f + TL_ZCHK_RAW, (uint32_t)n);
    tl_store_le32(f + TL_ZCHK_SLOT, (uint32_t)slot);
    o->chunks++;
    return put(o, f, TL_ZCHUNK_HEADER_BYTES + z);
}

/* The bytes of the slot at c (avail at hand) the compressed trace keeps:
 * 0 for an unused slot, its header and records for a good one, all of a
 * bad one. *cut: the file ends inside what the slot holds. */
static size_t slot_keep(const uint8_t *c, uint64_t avail, uint32_t chunk_bytes, bool *cut)
{
    uint64_t n = avail < chunk_bytes ? avail : chunk_bytes;
    *cut = false;
    if (n < TL_CHUNK_HEADER_BYTES) {
        for (uint64_t i = 0; i < n; i++)
            if (c[i]) *cut = true;
        return 0;
    }
    tl_chunk_t ck;
    switch (tl_chunk_parse(c, n, chunk_bytes, &ck)) {
    case TL_CHUNK_UNUSED:
        return 0;
    case TL_CHUNK_OK:
        *cut = ck.cut;
        return TL_CHUNK_HEADER_BYTES + ck.len;
    default:
        return (size_t)n;
    }
}

static void release(const uint8_t *p, size_t n, bool mapped)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)p & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
    if (mapped && hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* The slots of the raw trace in [raw, raw + n) with header h, compressed. A
 * trace cut short gets a last compressed chunk of no bytes (zchunk.c reads
 * it as the cut). */
static bool put_slots(zout_t *o, const uint8_t *raw, size_t n, const tl_trace_hdr_t *h, bool mapped)
{
    uint64_t slot = 0, cb = h->chunk_bytes;
    bool cut = false;
    for (uint64_t off = h->header_bytes; off < n && !cut; off += cb, slot++) {
        if (h->chunk_count && slot >= h->chunk_count) break;
        size_t keep = slot_keep(raw + off, n - off, h->chunk_bytes, &cut);
        if (keep && put_chunk(o, raw + off, keep, slot)) return true;
        release(raw + off, n - off < cb ? n - off : cb, mapped);
    }
    if (h->chunk_count && slot < h->chunk_count) cut = true;
    return cut && put_chunk(o, raw, 0, slot);
}

/* Compress [raw, raw + n) into o; its header's chunk_count is patched by
 * the caller from o->chunks at offset TL_HDR_CHUNK_COUNT. */
static tl_status_t compress_into(zout_t *o, const uint8_t *raw, size_t n, bool mapped, int level,
                                 const char *name, tl_msgs_t *msgs, int *already)
{
    tl_trace_hdr_t h;
    const char *why;
    tl_status_t rc = tl_reader_parse_header(raw, n, &h, &why);
    if (rc) {
        tl_msgs_add(msgs, "%s: %s", name, why);
        return rc;
    }
    *already = h.compressed;
    if (h.compressed) return TL_STATUS_OK;
    if (n < h.header_bytes) {
        tl_msgs_add(msgs, "%s: the trace ends inside its header", name);
        return TL_STATUS_BAD_TRACE;
    }
    o->frame_cap = TL_ZCHUNK_HEADER_BYTES + tl_zchunk_bound(h.chunk_bytes);
    o->frame = malloc(o->frame_cap > h.header_bytes ? o->frame_cap : h.header_bytes);
    o->model = malloc(tl_zmodel_cap(h.chunk_bytes));
    o->cc = ZSTD_createCCtx();
    if (!o->frame || !o->model || !o->cc ||
        ZSTD_isError(ZSTD_CCtx_setParameter(o->cc, ZSTD_c_compressionLevel,
                                            level ? level : TL_ZLEVEL_DEFAULT)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(o->cc, ZSTD_c_checksumFlag, 1))) {
        tl_msgs_add(msgs, "%s: out of memory", name);
        return TL_STATUS_NOMEM;
    }
    memcpy(o->frame, raw, h.header_bytes);
    memcpy(o->frame + TL_HDR_MAGIC, TL_TRACE_ZMAGIC, TL_TRACE_MAGIC_BYTES);
    tl_store_le64(o->frame + TL_HDR_CHUNK_COUNT, 0);
    if (put(o, o->frame, h.header_bytes) || put_slots(o, raw, n, &h, mapped)) {
        tl_msgs_add(msgs, "%s: cannot write the compressed trace: %s", name, strerror(errno));
        return errno == ENOMEM ? TL_STATUS_NOMEM : TL_STATUS_OUTPUT;
    }
    return TL_STATUS_OK;
}

static void zout_free(zout_t *o)
{
    free(o->frame);
    free(o->model);
    tl_zmodel_free(&o->zm);
    ZSTD_freeCCtx(o->cc);
}

tl_status_t tl_trace_compress_mem(const uint8_t *raw, size_t n, int level, uint8_t **out,
                                  size_t *outn, tl_msgs_t *msgs)
{
    zout_t o = {.fd = -1};
    int already;
    tl_status_t rc = compress_into(&o, raw, n, false, level, "trace", msgs, &already);
    zout_free(&o);
    if (!rc && already && put(&o, raw, n)) rc = TL_STATUS_NOMEM; /* a copy */
    if (!rc && !already) tl_store_le64(o.buf + TL_HDR_CHUNK_COUNT, o.chunks);
    if (rc) {
        free(o.buf);
        o.buf = NULL, o.len = 0;
    }
    *out = o.buf;
    *outn = o.len;
    return rc;
}

/* The temporary name beside path: DIR/.NAME.zXXXXXX; false when too long. */
static bool temp_name(const char *path, char *tmp, size_t cap)
{
    char d[PATH_MAX], b[PATH_MAX];
    if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d) return false;
    if (snprintf(b, sizeof b, "%s", path) >= (int)sizeof b) return false;
    int n = snprintf(tmp, cap, "%s/.%s.zXXXXXX", dirname(d), basename(b));
    return n > 0 && (size_t)n < cap;
}

/* Write the compressed trace of the mapped raw trace to a temporary file
 * beside path and rename it over path (unless the raw trace moved: fd
 * and ext say). */
static tl_status_t compress_file(const char *path, int fd, const tl_extent_t *ext,
                                 const uint8_t *raw, int level, tl_zstats_t *st, tl_msgs_t *msgs)
{
    char tmp[PATH_MAX];
    zout_t o = {.fd = -1};
    if (!temp_name(path, tmp, sizeof tmp) || (o.fd = mkstemp(tmp)) < 0) {
        tl_msgs_add(msgs, "%s: cannot write beside it: %s", path, strerror(errno));
        return TL_STATUS_OUTPUT;
    }
    struct stat rs; /* the trace keeps its permissions (mkstemp makes 0600) */
    if (fstat(fd, &rs) == 0) (void)fchmod(o.fd, rs.st_mode & 07777);
    tl_status_t rc = compress_into(&o, raw, ext->bytes, true, level, path, msgs, &st->already);
    uint8_t cnt[8];
    tl_store_le64(cnt, o.chunks);
    if (!rc && !st->already &&
        (pwrite(o.fd, cnt, sizeof cnt, TL_HDR_CHUNK_COUNT) != (ssize_t)sizeof cnt)) {
        tl_msgs_add(msgs, "%s: cannot write the compressed trace: %s", path, strerror(errno));
        rc = TL_STATUS_OUTPUT;
    }
    if (close(o.fd) != 0 && !rc) {
        tl_msgs_add(msgs, "%s: cannot write the compressed trace: %s", path, strerror(errno));
        rc = TL_STATUS_OUTPUT;
    }
    if (!rc && !st->already && tl_trace_moved(fd, ext)) {
        tl_msgs_add(msgs, "%s: still being written; left uncompressed", path);
        rc = TL_STATUS_INCOMPLETE;
    }
    if (!rc && !st->already && rename(tmp, path) != 0) {
        tl_msgs_add(msgs, "%s: cannot replace it: %s", path, strerror(errno));
        rc = TL_STATUS_OUTPUT;
    }
    if (rc || st->already) unlink(tmp);
    st->raw_bytes = ext->bytes;
    st->z_bytes = st->already ? ext->bytes : o.bytes;
    st->chunks = o.chunks;
    zout_free(&o);
    return rc;
}

tl_status_t tl_trace_compress(const char *path, int level, tl_zstats_t *st, tl_msgs_t *msgs)
{
    *st = (tl_zstats_t){0};
    const char *why;
    uint64_t size;
    struct stat ls; /* the rename would replace the link, not the trace it names */
    if (lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode)) {
        tl_msgs_add(msgs, "%s: a symbolic link (compress the trace it names)", path);
        return TL_STATUS_NO_TRACE;
    }
    int fd = tl_open_regular(path, &size, &why);
    if (fd < 0) {
        tl_msgs_add(msgs, "%s: %s", path, why);
        return TL_STATUS_NO_TRACE;
    }
    if (tl_trace_in_use(fd)) { /* its process still writes it, maybe idle now */
        tl_msgs_add(msgs, "%s: still being written; left uncompressed", path);
        close(fd);
        return TL_STATUS_INCOMPLETE;
    }
    tl_extent_t ext;
    tl_trace_extent(fd, size, &ext);
    if (ext.bytes == 0 || ext.bytes > SIZE_MAX) {
        tl_msgs_add(msgs, "%s: %s", path,
                    ext.bytes ? strerror(EFBIG) : "not a tensorleak trace (empty file)");
        close(fd);
        return ext.bytes ? TL_STATUS_NO_TRACE : TL_STATUS_BAD_TRACE;
    }
    void *map = mmap(NULL, (size_t)ext.bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        tl_msgs_add(msgs, "%s: %s", path, strerror(errno));
        close(fd);
        return TL_STATUS_NO_TRACE;
    }
    madvise(map, (size_t)ext.bytes, MADV_SEQUENTIAL);
    tl_status_t rc = compress_file(path, fd, &ext, map, level, st, msgs);
    munmap(map, (size_t)ext.bytes);
    close(fd);
    return rc;
}
