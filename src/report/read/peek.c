/* peek.c - tl_trace_peek: the header and first PROCESS record of a trace.
 *
 * Used by `tensorleak run` on every trace of a session, so it reads with
 * pread one chunk at a time and stops at the first PROCESS record. Silent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/trace_chunk.h"
#include "report/read/reader.h"
#include "report/read/zchunk.h"

#define PEEK_MAX_CHUNKS 64

static void copy_run(char *dst, tl_bytes_t b)
{
    size_t n = b.n < TL_TRACE_INFO_STR - 1 ? b.n : TL_TRACE_INFO_STR - 1;
    if (n) memcpy(dst, b.p, n);
    dst[n] = '\0'; /* an embedded NUL cuts it shorter, harmlessly */
}

/* The OPTIONS record's "cwd" into info. */
static void take_cwd(const tl_record_t *rec, tl_trace_info_t *info)
{
    for (uint64_t i = 0; i < rec->u.options.count; i++)
        if (rec->u.options.key[i].n == 3 && !memcmp(rec->u.options.key[i].p, "cwd", 3))
            copy_run(info->cwd, rec->u.options.value[i]);
}

/* Look for a PROCESS record in one chunk's n bytes (of chunk_bytes when
 * whole), and the OPTIONS record after it in the chunk (the agent writes
 * them one after the other); true when found. */
static bool scan_chunk(const uint8_t *c, size_t n, uint32_t chunk_bytes, tl_trace_info_t *info,
                       tl_record_t *rec, uint64_t *frames)
{
    tl_chunk_t ck; /* the reader's validation (common/trace_chunk.h) */
    if (tl_chunk_parse(c, n, chunk_bytes, &ck) != TL_CHUNK_OK) return false;
    tl_rec_state_t st = {0};
    for (size_t off = 0; off < ck.len;) {
        long r = tl_rec_decode(ck.data + off, ck.len - off, rec, frames, &st);
        if (r <= 0) return info->has_process;
        off += (size_t)r;
        if (rec->type == TL_REC_OPTIONS && info->has_process) {
            take_cwd(rec, info);
            return true;
        }
        if (rec->type == TL_REC_PROCESS) {
            info->has_process = true;
            info->pid = rec->u.process.pid;
            info->ppid = rec->u.process.ppid;
            copy_run(info->exe, rec->u.process.exe);
            if (rec->u.process.argc > 0) copy_run(info->argv0, rec->u.process.argv[0]);
        }
    }
    return info->has_process;
}

/* The first chunks of a compressed trace (zchunk.h), inflated into chunk
 * (chunk_bytes) one after the other, until a PROCESS record. */
static void peek_z(int fd, const tl_trace_hdr_t *h, uint8_t *chunk, tl_trace_info_t *info,
                   tl_record_t *rec, uint64_t *frames)
{
    void *dctx = tl_zchunk_dctx_new();
    uint8_t *z = malloc(tl_zchunk_bound(h->chunk_bytes));
    uint64_t off = h->header_bytes;
    for (uint64_t ci = 0; dctx && z && ci < PEEK_MAX_CHUNKS; ci++) {
        uint8_t zh_bytes[TL_ZCHUNK_HEADER_BYTES];
        tl_zhead_t zh;
        if (tl_read_at(fd, zh_bytes, sizeof zh_bytes, off) != (ssize_t)sizeof zh_bytes ||
            !tl_zchunk_head(zh_bytes, h->chunk_bytes, &zh) ||
            tl_read_at(fd, z, zh.zbytes, off + sizeof zh_bytes) != (ssize_t)zh.zbytes ||
            tl_zchunk_inflate(dctx, z, &zh, chunk))
            break;
        off += sizeof zh_bytes + zh.zbytes;
        if (scan_chunk(chunk, zh.raw, h->chunk_bytes, info, rec, frames)) break;
    }
    free(z);
    tl_zchunk_dctx_free(dctx);
}

tl_status_t tl_trace_peek(const char *path, tl_trace_info_t *info)
{
    memset(info, 0, sizeof *info);
    const char *why;
    int fd =
        tl_open_regular(path, NULL, &why); /* a FIFO in the trace directory must not hang run */
    if (fd < 0) return TL_STATUS_NO_TRACE;
    tl_status_t rc = TL_STATUS_NO_TRACE;
    uint8_t hbuf[TL_HDR_RESERVED];
    uint8_t *chunk = NULL;
    uint64_t *frames = NULL;
    tl_record_t *rec = NULL;
    ssize_t got = tl_read_at(fd, hbuf, sizeof hbuf, 0);
    if (got < 0) goto out;
    tl_trace_hdr_t h;
    rc = tl_reader_parse_header(hbuf, (size_t)got, &h, &why);
    if (rc) goto out;
    info->pid = h.pid;
    info->ppid = h.ppid;
    info->session = h.session;
    info->exec_seq = h.exec_seq;
    info->start_mono = h.start_mono;
    info->start_realtime = h.start_realtime;
    info->clean_end = (h.flags & TL_HDR_F_CLEAN_END) != 0;
    info->exec_end = info->clean_end && (h.flags & TL_HDR_F_EXEC_END);
    info->chunk_count = h.chunk_count;

    chunk = malloc(h.chunk_bytes);
    frames = malloc(TL_REC_MAX_FRAMES * sizeof *frames);
    rec = malloc(sizeof *rec);
    if (!chunk || !frames || !rec) goto out; /* header facts are in; exe/argv0 stay "" */
    if (h.compressed) {
        peek_z(fd, &h, chunk, info, rec, frames);
        goto out;
    }
    for (uint64_t ci = 0; ci < PEEK_MAX_CHUNKS; ci++) {
        if (h.chunk_count && ci >= h.chunk_count) break;
        got = tl_read_at(fd, chunk, h.chunk_bytes, h.header_bytes + ci * h.chunk_bytes);
        if (got <= 0) break;
        if (scan_chunk(chunk, (size_t)got, h.chunk_bytes, info, rec, frames)) break;
    }
out:
    free(chunk);
    free(frames);
    free(rec);
    close(fd);
    return rc;
}
