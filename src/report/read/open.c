/* open.c - the pipeline's first stage: open a trace file without ever
 * blocking, refuse anything but a regular file, find with pread how much of
 * it is in use, and map only that for the reader (see reader.h). The mapping
 * lives as long as the tl_trace_t.
 *
 * A trace may still be written while it is read: its writer hands out chunks
 * from a zero tail and, at exit, cuts the file to the chunks it handed out
 * (src/agent/writer.c). A page of a mapping past the file's end faults
 * (SIGBUS), so nothing here touches the tail through a mapping: the slots in
 * use are found with pread, and the agent never cuts below them.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "report/read/reader.h"
#include "report/read/stream.h"
#include "report/status.h"

int tl_open_regular(const char *path, uint64_t *size, const char **why)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = S_ISDIR(st.st_mode)    ? strerror(EISDIR)
               : S_ISFIFO(st.st_mode) ? "not a regular file (a FIFO)"
               : S_ISCHR(st.st_mode)  ? "not a regular file (a character device)"
               : S_ISBLK(st.st_mode)  ? "not a regular file (a block device)"
               : S_ISSOCK(st.st_mode) ? "not a regular file (a socket)"
                                      : "not a regular file";
        close(fd);
        return -1;
    }
    if (size) *size = (uint64_t)st.st_size;
    return fd;
}

ssize_t tl_read_at(int fd, uint8_t *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* The last slot in [0, nslots) whose header bytes are not all zero, scanned
 * from the end (a live trace's zero tail is at most an extent of 128 slots);
 * its offset and `used` in *e. false when there is none. */
static bool last_slot(int fd, const tl_trace_hdr_t *h, uint64_t nslots, tl_extent_t *e)
{
    for (uint64_t i = nslots; i-- > 0;) {
        uint8_t c[TL_CHUNK_HEADER_BYTES] = {0};
        uint64_t off = h->header_bytes + i * h->chunk_bytes;
        if (tl_read_at(fd, c, sizeof c, off) < 0) return false;
        uint8_t any = 0;
        for (size_t k = 0; k < sizeof c; k++)
            any |= c[k];
        if (!any) continue; /* never used, or past a cut made since the fstat */
        e->last = off;
        e->last_used = tl_load_le32(c + TL_CHK_USED);
        e->bytes = off + h->chunk_bytes < e->size ? off + h->chunk_bytes : e->size;
        return true;
    }
    return false;
}

void tl_trace_extent(int fd, uint64_t size, tl_extent_t *e)
{
    *e = (tl_extent_t){.size = size, .bytes = size};
    uint8_t hbuf[TL_HDR_RESERVED];
    ssize_t got = tl_read_at(fd, hbuf, sizeof hbuf, 0);
    tl_trace_hdr_t h;
    const char *why;
    if (got < 0 || tl_reader_parse_header(hbuf, (size_t)got, &h, &why)) {
        /* not a trace: the header check reads no further than these bytes */
        e->bytes = size < sizeof hbuf ? size : sizeof hbuf;
        return;
    }
    e->ended = (h.flags & TL_HDR_F_CLEAN_END) != 0 || h.compressed; /* never written again */
    if (size <= h.header_bytes || h.compressed) return;
    uint64_t nslots = (size - h.header_bytes + h.chunk_bytes - 1) / h.chunk_bytes;
    if (e->ended && h.chunk_count) { /* the agent finished it: the header says how far */
        if (h.chunk_count < nslots) e->bytes = h.header_bytes + h.chunk_count * h.chunk_bytes;
        return;
    }
    if (!last_slot(fd, &h, nslots, e)) e->bytes = h.header_bytes;
}

bool tl_trace_moved(int fd, const tl_extent_t *then)
{
    if (then->ended) return false;
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    tl_extent_t now;
    tl_trace_extent(fd, (uint64_t)st.st_size, &now);
    return now.ended || now.size != then->size || now.last != then->last ||
           now.last_used != then->last_used;
}

/* Does /proc/PID/maps map the file of device dev and inode ino? -1 when
 * the maps cannot be read (another user's process), else 0 or 1. */
static int maps_file(uint64_t pid, dev_t dev, ino_t ino)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%llu/maps", (unsigned long long)pid);
    FILE *f = fopen(path, "re");
    if (!f) return errno == ENOENT || errno == ESRCH ? 0 : -1;
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned maj, min;
        unsigned long long inode;
        if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &inode) == 3)
            found = inode == (unsigned long long)ino && makedev(maj, min) == dev;
    }
    fclose(f);
    return found;
}

/* tl_trace_in_use; guess: when the writer's maps cannot be read, whether
 * its pid exists (else false). */
static bool in_use(int fd, bool guess)
{
    uint8_t hbuf[TL_HDR_RESERVED];
    ssize_t got = tl_read_at(fd, hbuf, sizeof hbuf, 0);
    tl_trace_hdr_t h;
    const char *why;
    struct stat st;
    if (got < 0 || tl_reader_parse_header(hbuf, (size_t)got, &h, &why) || fstat(fd, &st) != 0)
        return false;
    if ((h.flags & TL_HDR_F_CLEAN_END) || h.compressed || !h.pid || h.pid > INT32_MAX) return false;
    int m = maps_file(h.pid, st.st_dev, st.st_ino);
    if (m >= 0) return m == 1;
    return guess && (kill((pid_t)h.pid, 0) == 0 || errno == EPERM); /* alive: in use */
}

bool tl_trace_in_use(int fd)
{
    return in_use(fd, true);
}

tl_status_t tl_trace_read(const char *path, tl_trace_t *t, char *why, size_t whylen)
{
    memset(t, 0, sizeof *t);
    const char *reason;
    uint64_t fsize;
    int fd = tl_open_regular(path, &fsize, &reason);
    if (fd < 0) {
        snprintf(why, whylen, "%s", reason);
        return TL_STATUS_NO_TRACE;
    }
    if (fsize > SIZE_MAX) {
        snprintf(why, whylen, "%s", strerror(EFBIG));
        close(fd);
        return TL_STATUS_NO_TRACE;
    }
    if (fsize == 0) {
        close(fd);
        snprintf(why, whylen, "not a tensorleak trace (empty file)");
        return TL_STATUS_BAD_TRACE;
    }
    tl_extent_t ext;
    tl_trace_extent(fd, fsize, &ext);
    size_t size = (size_t)ext.bytes;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return TL_STATUS_NO_TRACE;
    }
    tl_status_t rc = tl_reader_load(map, size, true, t, why, whylen);
    /* after the load: a writer that went on (or ended) meanwhile shows */
    if (!rc) t->live = tl_trace_moved(fd, &ext);
    if (!rc && !t->has_end) t->running = in_use(fd, false);
    close(fd);
    return rc;
}

bool tl_trace_whole(const tl_trace_t *t)
{
    return !t->truncated && !t->live && !t->bad_chunks && !t->bad_records;
}

const char *tl_trace_incomplete_word(const tl_trace_t *t)
{
    return t->truncated ? "truncated" : t->live ? "still being written" : "damaged";
}
