/* outfile.c - write-then-rename output files (see outfile.h). */
#include "config.h"
#include "tools/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/say.h"
#include "tools/exit_codes.h"

static int cannot(const char *path, const char *why)
{
    tl_say("%s: cannot write: %s", path, why);
    return TL_EXIT_OUTPUT;
}

/* The descriptor named by /dev/stdout, /dev/stderr, /dev/fd/N or
 * /proc/self/fd/N, or -1. */
static int named_fd(const char *path)
{
    if (!strcmp(path, "/dev/stdout")) return STDOUT_FILENO;
    if (!strcmp(path, "/dev/stderr")) return STDERR_FILENO;
    const char *n = !strncmp(path, "/dev/fd/", 8)          ? path + 8
                    : !strncmp(path, "/proc/self/fd/", 14) ? path + 14
                                                           : NULL;
    if (!n || !*n) return -1;
    char *end;
    long fd = strtol(n, &end, 10);
    return *end || fd < 0 || fd > INT_MAX ? -1 : (int)fd;
}

int tl_outfile_open(tl_outfile_t *o, const char *path)
{
    o->f = NULL;
    o->path = path;
    o->tmp[0] = '\0';
    int fd = named_fd(path);
    if (fd >= 0) {
        int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup_fd < 0 || !(o->f = fdopen(dup_fd, "w"))) {
            int err = errno;
            if (dup_fd >= 0) close(dup_fd);
            return cannot(path, strerror(err));
        }
        return 0;
    }
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return cannot(path, "a symbolic link (not followed; remove it or name its target)");
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) return cannot(path, strerror(EISDIR));
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* O_NOFOLLOW: a link swapped in since the lstat is refused too. */
        fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
            int err = errno;
            if (fd >= 0) close(fd);
            return cannot(path, strerror(err));
        }
        return 0;
    }
    /* A new file beside the name: rename(2) needs the same file system. */
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    int n =
        snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.XXXXXX", dirlen, path, slash ? slash + 1 : path);
    if (n < 0 || (size_t)n >= sizeof o->tmp) {
        o->tmp[0] = '\0';
        return cannot(path, strerror(ENAMETOOLONG));
    }
    fd = mkostemp(o->tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
    if (fd < 0) {
        int err = errno;
        o->tmp[0] = '\0';
        /* /proc/version: the name is there, its directory takes no new file
         * (ENOENT read "No such file or directory" of a file that exists) */
        if (err == ENOENT && lstat(path, &st) == 0)
            return cannot(path, "its directory takes no new file (the report is written to a "
                                "new file there, then renamed)");
        return cannot(path, strerror(err));
    }
    if (fchmod(fd, 0600) != 0 || !(o->f = fdopen(fd, "w"))) {
        int err = errno;
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return cannot(path, strerror(err));
    }
    return 0;
}

int tl_outfile_close(tl_outfile_t *o, bool keep)
{
    if (!o->f) return 0;
    int err = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) err = errno ? errno : EIO;
    if (!err && o->tmp[0] && keep && fsync(fileno(o->f)) != 0) err = errno;
    if (fclose(o->f) != 0 && !err) err = errno ? errno : EIO;
    o->f = NULL;
    if (o->tmp[0]) {
        if (!err && keep && rename(o->tmp, o->path) != 0) err = errno;
        if (err || !keep) unlink(o->tmp);
        o->tmp[0] = '\0';
    }
    return err && keep ? cannot(o->path, strerror(err)) : 0;
}

int tl_outfile_stdout_text(const char *text)
{
    errno = 0;
    if (fputs(text, stdout) < 0 || fflush(stdout) != 0 || ferror(stdout))
        return cannot("stdout", strerror(errno ? errno : EIO));
    return 0;
}

bool tl_outfile_dir_takes_files(const char *dir)
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.tensorleak-probe.%d", dir, (int)getpid()) >=
        (int)sizeof probe) {
        errno = ENAMETOOLONG;
        return false;
    }
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    close(fd);
    unlink(probe);
    return true;
}

bool tl_outfile_reader_left(int fd)
{
    struct pollfd p = {.fd = fd, .events = 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}
