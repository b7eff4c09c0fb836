/* open.c - the pipeline's first stage: open a trace file without ever
 * blocking, refuse anything but a regular file, and map it for the reader
 * (see reader.h). The mapping lives as long as the tl_trace_t.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    size_t size = (size_t)fsize;
    if (size == 0) {
        close(fd);
        snprintf(why, whylen, "not a tensorleak trace (empty file)");
        return TL_STATUS_BAD_TRACE;
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    int err = errno;
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(why, whylen, "%s", strerror(err));
        return TL_STATUS_NO_TRACE;
    }
    return tl_reader_load(map, size, true, t, why, whylen);
}
