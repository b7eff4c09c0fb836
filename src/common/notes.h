/* notes.h - the agent's lines to the CLI that runs it.
 *
 * Under `tensorleak run` or `check` (a session: TENSORLEAK_SESSION), the
 * agent of each process sends the lines it would print on stderr ("cannot
 * create trace PATH: Permission denied" in a child that dropped its
 * privileges, a bad TENSORLEAK_* value) to the CLI instead, which says each
 * once in the run's summary: the program's stderr stays its own (issue 28
 * item 10). One datagram per line, "PID\0A\0B\0C" (the line is A B C,
 * already escaped), at most TL_NOTES_MAX bytes, to the abstract Unix socket
 * of tl_notes_addr: abstract names have no file, so a process that cannot
 * write the trace directory, or runs as another user, still reaches it.
 * Where no CLI listens (the agent preloaded by hand, another network
 * namespace) the send fails and the agent prints on stderr as before; where
 * one listens but its queue stays full, the note is dropped.
 */
#ifndef TL_COMMON_NOTES_H
#define TL_COMMON_NOTES_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TL_NOTES_MAX 4096

/* The socket address of session's notes, "\0tensorleak-notes-" and the
 * session in 16 hex digits, into *a; returns its length for bind/sendto.
 * No allocation, no locale: the agent calls it in a fork child. */
static inline socklen_t tl_notes_addr(uint64_t session, struct sockaddr_un *a)
{
    static const char prefix[] = "tensorleak-notes-";
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, prefix, sizeof prefix - 1);
    char *h = a->sun_path + sizeof prefix;
    for (int i = 0; i < 16; i++)
        h[i] = "0123456789abcdef"[(session >> (60 - 4 * i)) & 15];
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof prefix + 16);
}

/* Packs the note "PID\0A\0B\0C" of the line A B C (NULL parts are empty,
 * already escaped) into msg (cap bytes, cut to fit); returns its length.
 * No allocation: the agent calls it in a fork child. */
static inline size_t tl_notes_pack(char *msg, size_t cap, uint64_t pid, const char *a,
                                   const char *b, const char *c)
{
    char digits[24];
    size_t nd = 0, k = 0;
    for (uint64_t v = pid; v || !nd; v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    while (nd && k < cap)
        msg[k++] = digits[--nd];
    const char *parts[] = {a, b, c};
    for (size_t i = 0; i < 3; i++) {
        size_t n = parts[i] ? strlen(parts[i]) : 0;
        if (k + 1 + n > cap) n = k + 1 < cap ? cap - k - 1 : 0;
        if (k < cap) msg[k++] = '\0';
        memcpy(msg + k, parts[i] ? parts[i] : "", n);
        k += n;
    }
    return k;
}

/* How many times, 1 ms apart, a note is tried again while the CLI's
 * queue is full (a datagram socket queues net.unix.max_dgram_qlen of
 * them: 10 without systemd's 512, and the CLI reads them as they come). */
#define TL_NOTES_RETRIES 20

/* Sends the note msg (len bytes) to session's socket. Returns 0 when it
 * was sent; 1 when no CLI listens (nothing bound there, or no socket: the
 * caller prints it itself); 2 when a CLI listens but its queue stayed full
 * (dropped: the program's stderr is not the place for it). errno is put
 * back. No allocation: the agent calls it in a fork child. */
static inline int tl_notes_send(uint64_t session, const void *msg, size_t len)
{
    int saved = errno, rc = 1;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct sockaddr_un addr;
        socklen_t alen = tl_notes_addr(session, &addr);
        for (int tries = 0; tries <= TL_NOTES_RETRIES; tries++) {
            if (sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&addr, alen) ==
                (ssize_t)len) {
                rc = 0;
                break;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) break;
            rc = 2;
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        close(fd);
    }
    errno = saved;
    return rc;
}

/* The agent's line A B C (NULL parts empty, already escaped) of process
 * pid: to session's CLI (tl_notes_send; dropped when its queue stayed
 * full), else, with no session or no CLI listening, on stderr as
 * "tensorleak: A B C" in one writev. buf (cap bytes) holds the packed
 * note. No stdio, no allocation: the agent calls it in a fork child. */
static inline void tl_notes_say(uint64_t session, uint64_t pid, char *buf, size_t cap,
                                const char *a, const char *b, const char *c)
{
    if (session && tl_notes_send(session, buf, tl_notes_pack(buf, cap, pid, a, b, c)) != 1) return;
    const char *parts[] = {"tensorleak: ", a, b, c, "\n"};
    struct iovec iov[5];
    for (size_t i = 0; i < 5; i++) {
        iov[i].iov_base = (void *)(parts[i] ? parts[i] : "");
        iov[i].iov_len = parts[i] ? strlen(parts[i]) : 0;
    }
    int saved = errno;
    if (writev(2, iov, 5) < 0) {
        /* nothing else to do */
    }
    errno = saved;
}

#endif
